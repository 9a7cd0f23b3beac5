-- recover.lua - stalled jobs: every active job whose lock has lapsed (its
-- worker died or froze past its lease) gets stalledCounter + 1 and goes
-- back to the front of its line, or fails once it stalled more than
-- max_stalled times, unless it is repeatable: as BullMQ's stalled check, a
-- job scheduler's iteration (rjk naming a scheduler that still exists: its
-- repeat:<rjk> hash, or rjk in the repeat ZSET for a legacy repeatable
-- job) is requeued however often it stalled, and whoever takes it next
-- makes the next iteration if it is still the current one
-- (docs/internals/schedules.md). Events as BullMQ's stalled check writes
-- them. BullMQ's own check (mark in 'stalled', sweep one interval later)
-- may run beside this one on the same queue: LREM decides who moves a job.
--   ARGV[1] max_stalled   ARGV[2] failedReason for jobs that fail
-- Returns {requeued, failed}.
local max_stalled, reason = tonumber(ARGV[1]), ARGV[2]
local requeued, failed = 0, 0
local hold = paused_or_maxed()
local RKEY = B .. 'repeat'

-- BullMQ's isRepeatableJob of the stalled check.
local function repeatable(jkey)
    local rjk = rcall('HGET', jkey, 'rjk')
    if not rjk then return false end
    return rcall('EXISTS', RKEY .. ':' .. rjk) == 1 or rcall('ZSCORE', RKEY, rjk) ~= false
end

for _, id in ipairs(rcall('LRANGE', K.active, 0, -1)) do
    local jkey = B .. id
    if string.sub(id, 1, 2) ~= '0:' and rcall('EXISTS', jkey .. ':lock') == 0
            and rcall('LREM', K.active, 1, id) > 0 then
        rcall('SREM', K.stalled, id)
        local stc = rcall('HINCRBY', jkey, 'stc', 1)
        emit('stalled', 'jobId', id)
        if stc > max_stalled and not repeatable(jkey) then
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
return {requeued, failed}
