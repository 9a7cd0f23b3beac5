-- promote.lua - make a delayed job runnable now (BullMQ's job.promote()):
-- to prioritized or the back of wait, delay 0, event "waiting".
--   ARGV[1] id
-- Returns 0, or RC.JOB_NOT_EXIST, or RC.JOB_NOT_IN_STATE (not delayed).
local id = ARGV[1]
local jkey = B .. id
if rcall('EXISTS', jkey) == 0 then return RC.JOB_NOT_EXIST end
if rcall('ZREM', K.delayed, id) == 0 then return RC.JOB_NOT_IN_STATE end
push_ready(id, job_priority(jkey), false)
rcall('HSET', jkey, 'delay', 0)
emit('waiting', 'jobId', id, 'prev', 'delayed')
update_delay_marker()
if not paused_or_maxed() then wake_workers() end
return 0
