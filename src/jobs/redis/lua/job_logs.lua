-- job_logs.lua - a job's log lines from outside its run, in any state:
-- BullMQ's queue.addJobLog(jobId, line, keepLogs) (ARGV[2] 'add') and
-- job.clearLogs(keepLogs) ('clear') on <id>:logs. ARGV[1] id, ARGV[3] keep
-- (0: every line, for a clear none), ARGV[4] the line.
-- Returns the lines the job has after (0 for a clear), or RC.JOB_NOT_EXIST.
local jkey = B .. ARGV[1]
if rcall('EXISTS', jkey) == 0 then return RC.JOB_NOT_EXIST end
local lkey, keep = jkey .. ':logs', tonumber(ARGV[3])
if ARGV[2] == 'add' then
    local n = rcall('RPUSH', lkey, ARGV[4])
    if keep > 0 and n > keep then
        rcall('LTRIM', lkey, -keep, -1)
        n = keep
    end
    return n
end
-- (a keep of 2^32 or more keeps all, as no list is that long: Redis would
-- refuse it as an index, a Lua number past 1e17 written with an exponent)
if keep >= 4294967296 then return 0 end
if keep > 0 then rcall('LTRIM', lkey, -keep, -1) else rcall('DEL', lkey) end
return 0
