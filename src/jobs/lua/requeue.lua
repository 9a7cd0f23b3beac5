-- requeue.lua - retry failed jobs by hand (BullMQ job.retry('failed') with
-- resetAttemptsMade, and queue.retryJobs): each goes back to wait (or
-- prioritized) with a fresh attempt budget.
--   ARGV[1] id, or "" for the oldest failed jobs
--   ARGV[2] most jobs moved by this call (when ARGV[1] is "")
-- A flow child whose failure its parent recorded (ignored or continued)
-- becomes its dependency again, as BullMQ's moveChildBackToParentDependencies
-- does, so the parent waits for it and gets its result.
-- Returns the number moved, or RC.JOB_NOT_EXIST, or RC.NOT_FAILED.
local id, limit = ARGV[1], tonumber(ARGV[2])
local ids
if id ~= '' then
    if rcall('EXISTS', B .. id) == 0 then return RC.JOB_NOT_EXIST end
    if not rcall('ZSCORE', K.failed, id) then return RC.NOT_FAILED end
    ids = {id}
else
    ids = rcall('ZRANGE', K.failed, 0, limit - 1)
end
for _, jid in ipairs(ids) do
    local jkey = B .. jid
    rcall('ZREM', K.failed, jid)
    rcall('HDEL', jkey, 'finishedOn', 'processedOn', 'failedReason', 'defa')
    rcall('HSET', jkey, 'atm', 0)
    local pkey = rcall('HGET', jkey, 'parentKey')
    if pkey and rcall('EXISTS', pkey) == 1 and (rcall('ZREM', pkey .. ':unsuccessful', jkey) == 1
            or rcall('HDEL', pkey .. ':failed', jkey) == 1) then
        rcall('SADD', pkey .. ':dependencies', jkey)
    end
    push_ready(jid, job_priority(jkey), job_opts(jkey).lifo == true)
    emit('waiting', 'jobId', jid, 'prev', 'failed')
end
if #ids > 0 and not paused_or_maxed() then wake_workers() end
return #ids
