-- drain.lua - remove every waiting, prioritized and delayed job (BullMQ
-- queue.drain(true)) but the current iteration of a job scheduler, which
-- BullMQ's drain spares too (without it the schedule would make no more);
-- active and finished jobs stay. Each job goes as remove.lua removes one:
-- the deduplication id it holds is freed, and a flow parent it was the
-- last pending child of is released (after the lists are cut, so a
-- parent of this queue released to 'wait' stays there).
-- Returns the number removed.
local spared = {}
local sched = rcall('ZRANGE', B .. 'repeat', 0, -1, 'WITHSCORES')
for i = 1, #sched, 2 do
    spared['repeat:' .. sched[i] .. ':' .. int_str(tonumber(sched[i + 1]))] = true
end
local gone = {}
-- The list's ids that go; the list keeps the spared ones, in order.
local function cut_list(key)
    local kept = {}
    for _, id in ipairs(rcall('LRANGE', key, 0, -1)) do
        if spared[id] then kept[#kept + 1] = id else gone[#gone + 1] = id end
    end
    rcall('DEL', key)
    for _, id in ipairs(kept) do rcall('RPUSH', key, id) end
end
local function cut_zset(key)
    local kept = {}
    for _, id in ipairs(rcall('ZRANGE', key, 0, -1)) do
        if spared[id] then kept[#kept + 1] = {rcall('ZSCORE', key, id), id}
        else gone[#gone + 1] = id end
    end
    rcall('DEL', key)
    for _, e in ipairs(kept) do rcall('ZADD', key, e[1], e[2]) end
end
cut_list(K.wait)
cut_list(K.paused)
cut_zset(K.prioritized)
cut_zset(K.delayed)
if rcall('ZCARD', K.prioritized) == 0 then rcall('DEL', K.pc) end
rcall('ZREM', K.marker, '1')
update_delay_marker()
for _, id in ipairs(gone) do
    local jkey = B .. id
    local f = rcall('HMGET', jkey, 'deid', 'parentKey', 'parent')
    if f[2] or f[3] then flow_child_removed(jkey, f[2], f[3]) end
    if f[1] and rcall('GET', B .. 'de:' .. f[1]) == id then rcall('DEL', B .. 'de:' .. f[1]) end
    delete_job_keys(id)
end
return #gone
