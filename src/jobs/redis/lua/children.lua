-- children.lua - a job's flow relations, read atomically: its parent and
-- its children as its parent records them (BullMQ's getChildrenValues,
-- getFailedChildrenValues, getDependencies).
--   ARGV[1] id   ARGV[2] most entries per kind (max)
-- Returns {} when there is no such job, else {parentKey or false, parent
-- field or false, {key, value, ...} processed, {key, reason, ...} failed,
-- {key, ...} unsuccessful, {key, ...} pending}. A kind holding more than
-- max gives max of them (HRANDFIELD / SRANDMEMBER: bounded work).
local jkey, max = B .. ARGV[1], tonumber(ARGV[2])
if rcall('EXISTS', jkey) == 0 then return {} end
local function hash(key)
    if rcall('HLEN', key) > max then return rcall('HRANDFIELD', key, max, 'WITHVALUES') end
    return rcall('HGETALL', key)
end
local pending = jkey .. ':dependencies'
local f = rcall('HMGET', jkey, 'parentKey', 'parent')
return {f[1] or false, f[2] or false, hash(jkey .. ':processed'), hash(jkey .. ':failed'),
        rcall('ZRANGE', jkey .. ':unsuccessful', 0, max - 1),
        rcall('SCARD', pending) > max and rcall('SRANDMEMBER', pending, max)
            or rcall('SMEMBERS', pending)}
