-- detach.lua - BullMQ's job.removeChildDependency(): job ARGV[1] stops
-- being a pending dependency of its parent, which is released when it has
-- no other one left (lib_flow.lua's flow_child_removed, as a removal of
-- the child releases it), and loses its parentKey and parent fields. A
-- job whose parent no longer waits for it (none, or it already completed
-- or failed as a child) is left as it is.
-- Returns 1 (detached), 0 (no pending dependency), RC.JOB_NOT_EXIST, or
-- RC.PARENT_MISSING (the parent's hash is gone; BullMQ's -5 there).
local jkey = B .. ARGV[1]
if rcall('EXISTS', jkey) == 0 then return RC.JOB_NOT_EXIST end
local f = rcall('HMGET', jkey, 'parentKey', 'parent')
if not f[1] and not f[2] then return 0 end
local _, pid, qk = flow_parent_of(f[1], f[2])
if not qk then return 0 end
local pkey = qk .. ':' .. pid
if rcall('EXISTS', pkey) == 0 then return RC.PARENT_MISSING end
if rcall('SISMEMBER', pkey .. ':dependencies', jkey) == 0 then return 0 end
flow_child_removed(jkey, f[1], f[2])
rcall('HDEL', jkey, 'parentKey', 'parent')
return 1
