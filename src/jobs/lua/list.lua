-- list.lua - a page of the jobs in one state, in the order they run
-- (waiting, prioritized, paused), become due (delayed), started (active),
-- or newest finished first (completed, failed).
--   ARGV[1] state   ARGV[2] offset   ARGV[3] limit
-- Returns one job view (job_view) per job.
local state, off, lim = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local paused = rcall('HEXISTS', K.meta, 'paused') == 1

-- Lists are served from the right: page from the tail, then reverse.
local function from_tail(key, o, l)
    if l <= 0 then return {} end
    local ids = rcall('LRANGE', key, -(o + l), -(o + 1))
    local out = {}
    for i = #ids, 1, -1 do out[#out + 1] = ids[i] end
    return out
end

local ids = {}
if state == 'waiting' then
    if not paused then ids = from_tail(K.wait, off, lim) end
elseif state == 'prioritized' then
    if not paused then ids = rcall('ZRANGE', K.prioritized, off, off + lim - 1) end
elseif state == 'paused' then
    if paused then
        local nwait = rcall('LLEN', K.wait)
        ids = from_tail(K.wait, off, lim)
        local skip = math.max(0, off - nwait)
        local more = lim - #ids
        if more > 0 then
            for _, id in ipairs(rcall('ZRANGE', K.prioritized, skip, skip + more - 1)) do
                ids[#ids + 1] = id
            end
        end
    end
elseif state == 'delayed' then
    ids = rcall('ZRANGE', K.delayed, off, off + lim - 1)
elseif state == 'waiting-children' then
    ids = rcall('ZRANGE', B .. 'waiting-children', off, off + lim - 1)
elseif state == 'active' then
    ids = from_tail(K.active, off, lim)
elseif state == 'completed' or state == 'failed' then
    ids = rcall('ZREVRANGE', K[state], off, off + lim - 1)
end
local out = {}
for _, id in ipairs(ids) do
    local flat = rcall('HGETALL', B .. id)
    if #flat > 0 then out[#out + 1] = job_view(id, state, field_map(flat)) end
end
return out
