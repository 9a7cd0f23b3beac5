-- update_data.lua - replace a job's data (BullMQ's job.updateData), in
-- any state. ARGV[1] id, ARGV[2] the JSON text, stored as it is.
-- Returns 0 or RC.JOB_NOT_EXIST.
local jkey = B .. ARGV[1]
if rcall('EXISTS', jkey) == 0 then return RC.JOB_NOT_EXIST end
rcall('HSET', jkey, 'data', ARGV[2])
return 0
