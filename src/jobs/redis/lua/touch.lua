-- touch.lua - record progress or a log line of an active job, only while
-- the caller still holds its lock (BullMQ updateProgress / addLog).
--   ARGV[1] id   ARGV[2] lock token
--   ARGV[3] "progress" (ARGV[4] = JSON) | "log" (ARGV[4] = line)
-- Returns 0, or an RC of check_lock.
local id = ARGV[1]
local rc = check_lock(id, ARGV[2])
if rc < 0 then return rc end
local jkey = B .. id
if ARGV[3] == 'progress' then
    rcall('HSET', jkey, 'progress', ARGV[4])
    emit('progress', 'jobId', id, 'data', ARGV[4])
else
    -- opts.kl (BullMQ's keepLogs): the newest kl lines stay; 0 or none
    -- keeps every line, as a Node worker's job.log does.
    local n = rcall('RPUSH', jkey .. ':logs', ARGV[4])
    local kl = tonumber(job_opts(jkey).kl)
    if kl and kl > 0 and n > kl then rcall('LTRIM', jkey .. ':logs', -kl, -1) end
end
return 0
