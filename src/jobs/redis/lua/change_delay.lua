-- change_delay.lua - a delayed job due ARGV[2] ms from now (BullMQ's
-- job.changeDelay): its delayed score, the hash's delay, the event
-- "delayed" with the due time, and marker "1" (the earliest due time).
--   ARGV[1] id, ARGV[2] delay (ms, >= 0)
-- Returns 0, RC.JOB_NOT_EXIST or RC.JOB_NOT_IN_STATE (not delayed).
local id = ARGV[1]
local jkey = B .. id
local delay = tonumber(ARGV[2])
if rcall('EXISTS', jkey) == 0 then return RC.JOB_NOT_EXIST end
if rcall('ZREM', K.delayed, id) == 0 then return RC.JOB_NOT_IN_STATE end
rcall('HSET', jkey, 'delay', int_str(delay))
add_delayed(id, NOW + delay)
return 0
