-- list.lua - a page of the jobs in one state, in the order they run
-- (waiting, prioritized, paused), become due (delayed), started (active),
-- or newest finished first (completed, failed).
--   ARGV[1] state   ARGV[2] offset   ARGV[3] limit
--   ARGV[4], ARGV[5] (optional): the position and id of a cursor's row;
--   the page then starts after that row instead of at the offset.
-- Returns {views, positions}: one job view (job_view) per job, and each
-- row's position for its cursor: its score in a sorted set, its distance
-- from the running end (the tail) of a list, its offset when paused.
local state, off, lim = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local after_pos, after_id = ARGV[4], ARGV[5]
local paused = rcall('HEXISTS', K.meta, 'paused') == 1

-- Lists are served from the right: page from the tail, then reverse.
local function from_tail(key, o, l)
    if l <= 0 then return {} end
    local ids = rcall('LRANGE', key, -(o + l), -(o + 1))
    local out = {}
    for i = #ids, 1, -1 do out[#out + 1] = ids[i] end
    return out
end

-- Where a list page starts: after the cursor's row if it is still where
-- it was (O(page)) or elsewhere near it (LPOS from the tail, bounded to
-- the row's old distance plus 1000, so a row that left a long list does
-- not scan all of it), else at the row's last position.
local function list_start(key)
    if not after_id then return off end
    local p = tonumber(after_pos)
    if rcall('LINDEX', key, -(p + 1)) == after_id then return p + 1 end
    local at = rcall('LPOS', key, after_id, 'RANK', -1, 'MAXLEN', p + 1 + 1000)
    if at then return rcall('LLEN', key) - at end
    return p
end

-- Where a sorted-set page starts: after the cursor's row by rank
-- (O(log n)), else after the rows of a lower score (rev: higher), which
-- repeats rows of the cursor's own score rather than skip any.
local function zset_start(key, rev)
    if not after_id then return off end
    local r = rcall(rev and 'ZREVRANK' or 'ZRANK', key, after_id)
    if r then return r + 1 end
    if rev then return rcall('ZCOUNT', key, '(' .. after_pos, '+inf') end
    return rcall('ZCOUNT', key, '-inf', '(' .. after_pos)
end

local ids, pos = {}, {}
local function list_page(key)
    local start = list_start(key)
    ids = from_tail(key, start, lim)
    for i = 1, #ids do pos[i] = tostring(start + i - 1) end
end
local function zset_page(key, rev)
    local start = zset_start(key, rev)
    local flat = rcall(rev and 'ZREVRANGE' or 'ZRANGE', key, start, start + lim - 1, 'WITHSCORES')
    for i = 1, #flat, 2 do
        ids[#ids + 1] = flat[i]
        pos[#pos + 1] = flat[i + 1]
    end
end

if state == 'waiting' then
    if not paused then list_page(K.wait) end
elseif state == 'prioritized' then
    if not paused then zset_page(K.prioritized, false) end
elseif state == 'paused' then
    if paused then
        if after_id then off = tonumber(after_pos) + 1 end
        local nwait = rcall('LLEN', K.wait)
        ids = from_tail(K.wait, off, lim)
        local skip = math.max(0, off - nwait)
        local more = lim - #ids
        if more > 0 then
            for _, id in ipairs(rcall('ZRANGE', K.prioritized, skip, skip + more - 1)) do
                ids[#ids + 1] = id
            end
        end
        for i = 1, #ids do pos[i] = tostring(off + i - 1) end
    end
elseif state == 'delayed' then
    zset_page(K.delayed, false)
elseif state == 'waiting-children' then
    zset_page(B .. 'waiting-children', false)
elseif state == 'active' then
    list_page(K.active)
elseif state == 'completed' or state == 'failed' then
    zset_page(K[state], true)
end
local out, outpos = {}, {}
for i, id in ipairs(ids) do
    local flat = rcall('HGETALL', B .. id)
    if #flat > 0 then
        out[#out + 1] = job_view(id, state, field_map(flat))
        outpos[#outpos + 1] = pos[i]
    end
end
return {out, outpos}
