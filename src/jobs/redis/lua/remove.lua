-- remove.lua - remove one job that no worker holds (BullMQ removeJob).
--   ARGV[1] id
-- Returns 0, or RC.JOB_NOT_EXIST, or RC.LOCKED (a worker holds the job),
-- or RC.SCHEDULED: as BullMQ's, it does not remove the job of a scheduler's
-- current iteration (lib.lua's is_current_iteration).
local id = ARGV[1]
local jkey = B .. id
if rcall('EXISTS', jkey) == 0 then return RC.JOB_NOT_EXIST end
if is_current_iteration(id, jkey) then return RC.SCHEDULED end
if rcall('EXISTS', jkey .. ':lock') == 1 then return RC.LOCKED end
local prev = 'unknown'
for _, s in ipairs({'completed', 'failed', 'delayed', 'prioritized'}) do
    if rcall('ZREM', K[s], id) == 1 then prev = s end
end
if rcall('LREM', K.wait, 0, id) > 0 then prev = 'waiting' end
if rcall('ZREM', B .. 'waiting-children', id) == 1 then prev = 'waiting-children' end
if rcall('LREM', K.active, 0, id) > 0 then prev = 'active' end
rcall('LREM', K.paused, 0, id)
rcall('SREM', K.stalled, id)
local f = rcall('HMGET', jkey, 'deid', 'parentKey', 'parent')
local deid = f[1]
if f[2] or f[3] then flow_child_removed(jkey, f[2], f[3]) end
if deid and rcall('GET', B .. 'de:' .. deid) == id then
    rcall('DEL', B .. 'de:' .. deid, B .. 'dn:' .. deid) -- and a stored next job
end
delete_job_keys(id)
emit('removed', 'jobId', id, 'prev', prev)
return 0
