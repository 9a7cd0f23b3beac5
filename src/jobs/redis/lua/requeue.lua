-- requeue.lua - retry finished jobs by hand (BullMQ's job.retry(state)
-- with resetAttemptsMade, and queue.retryJobs({state, timestamp})): each
-- goes back to wait (or prioritized) with a fresh attempt budget.
--   ARGV[1] id, or "" for the jobs of ARGV[3] that finished first
--   ARGV[2] most jobs moved by this call (when ARGV[1] is "")
--   ARGV[3] 'failed' | 'completed': the state the jobs are in
--   ARGV[4] (when ARGV[1] is "") only jobs finished at or before this ms;
--           "" = now (the reply gives the bound used, for the next calls)
-- BullMQ clears finishedOn, processedOn and failedReason (failed) or
-- returnvalue (completed); 'defa', a deferred failure BullMQ's stalled
-- check left, goes with the failure. A flow child whose result or failure
-- its parent recorded becomes its dependency again, as BullMQ's
-- moveChildBackToParentDependencies does, so the parent waits for it and
-- gets its new result; the parent itself stays where it is.
-- Returns {moved, bound}, or RC.JOB_NOT_EXIST, or RC.JOB_NOT_IN_STATE
-- (the job is not in ARGV[3]).
local id, limit, state = ARGV[1], tonumber(ARGV[2]), ARGV[3]
local set, failed = K[state], state == 'failed'
local bound = ARGV[4] ~= '' and ARGV[4] or NOW_S
local ids
if id ~= '' then
    if rcall('EXISTS', B .. id) == 0 then return RC.JOB_NOT_EXIST end
    if not rcall('ZSCORE', set, id) then return RC.JOB_NOT_IN_STATE end
    ids = {id}
else
    ids = rcall('ZRANGEBYSCORE', set, '-inf', bound, 'LIMIT', 0, limit)
end
for _, jid in ipairs(ids) do
    local jkey = B .. jid
    rcall('ZREM', set, jid)
    if failed then
        rcall('HDEL', jkey, 'finishedOn', 'processedOn', 'failedReason', 'defa')
    else
        rcall('HDEL', jkey, 'finishedOn', 'processedOn', 'returnvalue')
    end
    rcall('HSET', jkey, 'atm', 0)
    local pkey = rcall('HGET', jkey, 'parentKey')
    if pkey and rcall('EXISTS', pkey) == 1 then
        local back
        if failed then
            back = rcall('ZREM', pkey .. ':unsuccessful', jkey) == 1 or
                       rcall('HDEL', pkey .. ':failed', jkey) == 1
        else
            back = rcall('HDEL', pkey .. ':processed', jkey) == 1
        end
        if back then rcall('SADD', pkey .. ':dependencies', jkey) end
    end
    push_ready(jid, job_priority(jkey), job_opts(jkey).lifo == true)
    emit('waiting', 'jobId', jid, 'prev', state)
end
if #ids > 0 and not paused_or_maxed() then wake_workers() end
return {#ids, bound}
