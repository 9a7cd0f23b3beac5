-- recover.lua - stalled jobs: every active job whose lock has lapsed (its
-- worker died or froze past its lease) gets stalledCounter + 1 and goes
-- back to the front of its line, or fails once it stalled more than
-- max_stalled times. Events as BullMQ's stalled check writes them.
-- BullMQ's own check (mark in 'stalled', sweep one interval later) may run
-- beside this one on the same queue: LREM decides who moves a job.
-- A failed job that was still its scheduler's current iteration had a
-- holder that died before making the next one (a worker makes it in a
-- call after its take): its id is returned for the C side to make it, as
-- a take would (docs/internals/schedules.md). A requeued one needs
-- nothing: its next take makes it.
--   ARGV[1] max_stalled   ARGV[2] failedReason for jobs that fail
-- Returns {requeued, failed, {ids of failed current iterations}}.
local max_stalled, reason = tonumber(ARGV[1]), ARGV[2]
local requeued, failed, orphans = 0, 0, {}
local hold = paused_or_maxed()
for _, id in ipairs(rcall('LRANGE', K.active, 0, -1)) do
    local jkey = B .. id
    if string.sub(id, 1, 2) ~= '0:' and rcall('EXISTS', jkey .. ':lock') == 0
            and rcall('LREM', K.active, 1, id) > 0 then
        rcall('SREM', K.stalled, id)
        local stc = rcall('HINCRBY', jkey, 'stc', 1)
        emit('stalled', 'jobId', id)
        if stc > max_stalled then
            if is_current_iteration(id, jkey) then orphans[#orphans + 1] = id end
            finish_job(id, 'failed', reason)
            failed = failed + 1
        else
            push_front(id, job_priority(jkey))
            if not hold then wake_workers() end
            emit('waiting', 'jobId', id, 'prev', 'active')
            requeued = requeued + 1
        end
    end
end
if requeued + failed > 0 then rcall('XTRIM', K.events, 'MAXLEN', '~', max_events()) end
return {requeued, failed, orphans}
