-- wait_children.lua - an active job that has pending dependencies goes to
-- waiting-children, its lock released and no attempt used (BullMQ's
-- moveToWaitingChildren, as job.moveToWaitingChildren(token) calls it).
--   ARGV[1] id   ARGV[2] lock token
--   ARGV[3] a child's full key, or absent: then only that child pending
--           counts (BullMQ's opts.child)
-- Returns 0 (moved), 1 (no pending dependency: nothing changed),
-- RC.FAILED_CHILDREN (a fail-parent child failed), or an RC of
-- leave_active / RC.JOB_NOT_EXIST.
local id = ARGV[1]
local jkey = B .. id
if rcall('EXISTS', jkey) == 0 then return RC.JOB_NOT_EXIST end
if rcall('ZCARD', jkey .. ':unsuccessful') ~= 0 then return RC.FAILED_CHILDREN end
if ARGV[3] and ARGV[3] ~= '' then
    if rcall('SISMEMBER', jkey .. ':dependencies', ARGV[3]) == 0 then return 1 end
elseif rcall('SCARD', jkey .. ':dependencies') == 0 then
    return 1
end
local rc = leave_active(id, ARGV[2])
if rc < 0 then return rc end
rcall('ZADD', B .. 'waiting-children', NOW_S, id)
emit('waiting-children', 'jobId', id, 'prev', 'active')
return 0
