-- drain.lua - one chunk of a drain (BullMQ queue.drain(true)): remove the
-- waiting, prioritized and delayed jobs; active and finished jobs stay, and
-- so does the pending iteration of each job scheduler ("repeat:<id>:<ms>",
-- <ms> its score in the repeat ZSET), as in BullMQ: a scheduler makes its
-- next iteration only when one is taken, so removing it would end the
-- schedule. Each job goes as BullMQ's removeJob takes it (lib_flow.lua's
-- drop_job_hard: its deduplication key, its parent's dependency).
--   ARGV[1] 'wait' | 'paused' | 'prioritized' | 'delayed': the key worked on
--   ARGV[2] most jobs this call looks at
--   ARGV[3] ARGV[4] sorted sets: the last spared member and its score that
--           an earlier call returned ('' '' on the first call)
-- A list is taken from its right end (the oldest jobs), and the spared ids
-- of each window go to its left end in their order, where the windows of
-- this drain come last. A sorted set is walked from its highest score down,
-- each window starting after the last spared member (or, if that one left
-- meanwhile, after its score), so no call looks at a spared job twice.
-- The call for 'delayed' (the last key) also ends pc, the marker and the
-- delay marker as the whole drain leaves them.
-- Returns {removed, looked at, size of the key before this call, the last
-- spared member, its score}.
local what, limit = ARGV[1], tonumber(ARGV[2])
local key = K[what]

local function spared(id)
    local sid, ms = string.match(id, '^repeat:(.*):(%d+)$')
    if not sid then return false end
    local score = rcall('ZSCORE', B .. 'repeat', sid)
    return score and int_str(tonumber(score)) == ms
end

local n, anchor, anchor_score = 0, ARGV[3], ARGV[4]
local size, looked
if what == 'wait' or what == 'paused' then
    size = rcall('LLEN', key)
    local ids = limit > 0 and size > 0 and rcall('LRANGE', key, -limit, -1) or {}
    looked = #ids
    if looked > 0 then rcall('LTRIM', key, 0, -looked - 1) end
    local kept = {}
    for i = looked, 1, -1 do -- LPUSH a b c leaves c b a: push the window's last first
        local id = ids[i]
        if spared(id) then
            kept[#kept + 1] = id
        else
            drop_job_hard(id)
            n = n + 1
        end
    end
    if #kept > 0 then rcall('LPUSH', key, unpack(kept)) end
else
    size = rcall('ZCARD', key)
    local start = 0
    if anchor ~= '' then
        local rank = rcall('ZREVRANK', key, anchor)
        start = rank and rank + 1 or rcall('ZCOUNT', key, '(' .. anchor_score, '+inf')
    end
    local all = limit > 0 and rcall('ZREVRANGE', key, start, start + limit - 1, 'WITHSCORES') or {}
    looked = #all / 2
    for i = 1, #all, 2 do
        local id = all[i]
        if spared(id) then
            anchor, anchor_score = id, all[i + 1]
        else
            rcall('ZREM', key, id)
            drop_job_hard(id)
            n = n + 1
        end
    end
end
if what == 'delayed' then
    if rcall('EXISTS', K.prioritized) == 0 then rcall('DEL', K.pc) end
    rcall('ZREM', K.marker, '1')
    update_delay_marker()
end
return {n, looked, size, anchor, anchor_score}
