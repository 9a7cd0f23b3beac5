-- cancel.lua - cancel one job (ln_jobs_cancel; docs/internals/cancel.md):
-- it ends failed with 'reason' at once, whatever attempts remain.
--  - active: out of 'active' and 'stalled', its lock deleted (so the
--    holder's finish, renewal, progress and log are refused: BullMQ's
--    "Missing lock"), then failed as a finished run (moveToFinished:
--    attemptsMade + 1, stacktrace, removeOnFail, "failed" prev active);
--    and lanes' own key <base>lanes:cancel is given a new value, so the
--    lanes workers' cancel poll looks at the locks of their jobs. The
--    value is the server time in ms, or the last value + 1 if that is not
--    more: never a value a worker saw before, also once the key expired
--    (a day after the last cancel, so an idle queue keeps no lanes key).
--  - waiting, paused, prioritized, delayed: out of its list or set and
--    failed without a run (attemptsMade unchanged, "failed" with that prev).
--   ARGV[1] id   ARGV[2] reason
-- Returns 0, RC.JOB_NOT_EXIST, RC.SCHEDULED (a scheduler's current
-- iteration that has not run: cancelling it would end the schedule, as a
-- remove would), or the name of the state that cannot be canceled
-- ('completed', 'failed', 'waiting-children' (a flow parent), or
-- 'unknown' for any other).
local id, reason = ARGV[1], ARGV[2]
local jkey = B .. id
if rcall('EXISTS', jkey) == 0 then return RC.JOB_NOT_EXIST end

-- Failed without a run: finish_job's steps but the attempt count and the
-- stacktrace, with the state it came from as 'prev' (a flow child's
-- parent learns of it as of any final failure).
local function fail_unrun(prev)
    local f = rcall('HMGET', jkey, 'opts', 'deid', 'parentKey', 'parent')
    local opts = decode_opts(f[1])
    if f[3] or f[4] then flow_on_finish(jkey, f[3], f[4], 'failed', reason) end
    if f[2] then dedup_finalize(id, f[2]) end
    local count, age, limit = keep_spec(opts.removeOnFail)
    if count == 0 then
        delete_job_keys(id)
    else
        rcall('HSET', jkey, 'failedReason', reason, 'finishedOn', NOW_S)
        rcall('ZADD', K.failed, NOW_S, id)
        trim_finished('failed', count, age, limit)
    end
    emit('failed', 'jobId', id, 'failedReason', reason, 'prev', prev)
end

if rcall('LREM', K.active, -1, id) > 0 then
    rcall('DEL', jkey .. ':lock')
    rcall('SREM', K.stalled, id)
    local ckey = B .. 'lanes:cancel'
    local mark = math.max(NOW, (tonumber(rcall('GET', ckey)) or 0) + 1)
    rcall('SET', ckey, int_str(mark), 'PX', 86400000)
    finish_job(id, 'failed', reason)
    wake_if_slot_freed()
    return 0
end
if is_current_iteration(id, jkey) and not rcall('ZSCORE', K.completed, id)
        and not rcall('ZSCORE', K.failed, id) then
    return RC.SCHEDULED
end
if rcall('LREM', K.wait, -1, id) > 0 or rcall('LREM', K.paused, -1, id) > 0 then
    fail_unrun('waiting')
elseif rcall('ZREM', K.prioritized, id) > 0 then
    fail_unrun('prioritized')
elseif rcall('ZREM', K.delayed, id) > 0 then
    fail_unrun('delayed')
    update_delay_marker()
elseif rcall('ZSCORE', K.completed, id) then
    return 'completed'
elseif rcall('ZSCORE', K.failed, id) then
    return 'failed'
elseif rcall('ZSCORE', B .. 'waiting-children', id) then
    return 'waiting-children'
else
    return 'unknown'
end
return 0
