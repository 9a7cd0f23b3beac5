-- drain.lua - remove every waiting, prioritized and delayed job (BullMQ
-- queue.drain(true)); active and finished jobs stay, and so does the
-- pending iteration of each job scheduler ("repeat:<id>:<ms>", <ms> its
-- score in the repeat ZSET), as in BullMQ: a scheduler makes its next
-- iteration only when one is taken, so removing it would end the schedule.
-- Each job goes as BullMQ's removeJob takes it (lib_flow.lua's
-- drop_job_hard: its deduplication key, its parent's dependency).
-- Returns the number removed.
local keep = {}
local rep = rcall('ZRANGE', B .. 'repeat', 0, -1, 'WITHSCORES')
for i = 1, #rep, 2 do keep['repeat:' .. rep[i] .. ':' .. int_str(tonumber(rep[i + 1]))] = true end
local n = 0
local function drop(ids)
    local kept = {}
    for _, id in ipairs(ids) do
        if keep[id] then
            kept[#kept + 1] = id
        else
            drop_job_hard(id)
            n = n + 1
        end
    end
    return kept
end
for _, list in ipairs({K.wait, K.paused}) do
    local kept = drop(rcall('LRANGE', list, 0, -1))
    rcall('DEL', list)
    for _, id in ipairs(kept) do rcall('RPUSH', list, id) end
end
for _, set in ipairs({K.prioritized, K.delayed}) do
    local all = rcall('ZRANGE', set, 0, -1, 'WITHSCORES')
    local ids, score = {}, {}
    for i = 1, #all, 2 do
        ids[#ids + 1] = all[i]
        score[all[i]] = all[i + 1]
    end
    local kept = drop(ids)
    rcall('DEL', set)
    for _, id in ipairs(kept) do rcall('ZADD', set, score[id], id) end
end
if rcall('EXISTS', K.prioritized) == 0 then rcall('DEL', K.pc) end
rcall('ZREM', K.marker, '1')
update_delay_marker()
return n
