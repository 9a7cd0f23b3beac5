-- clean.lua - remove finished jobs (BullMQ queue.clean): those of 'state'
-- that finished more than 'age' ms ago and are not among the newest 'keep'.
--   ARGV[1] 'completed' | 'failed'
--   ARGV[2] age ms (< 0: any age)
--   ARGV[3] keep   ARGV[4] most jobs removed by this call
-- Each job goes as BullMQ's removeJob takes it (lib_flow.lua's
-- drop_job_hard: its deduplication key, its parent's dependency).
-- Returns the number removed (call again while it equals ARGV[4]).
local set, age = K[ARGV[1]], tonumber(ARGV[2])
local cutoff = age < 0 and '+inf' or '(' .. int_str(NOW - age)
local keep, limit = tonumber(ARGV[3]), tonumber(ARGV[4])
local ids = rcall('ZRANGEBYSCORE', set, '-inf', cutoff, 'LIMIT', 0, limit)
local removed = {}
if #ids > 0 then
    local spared = {}
    if keep > 0 then -- scores ascend with age: the newest are the last ranks
        for _, id in ipairs(rcall('ZRANGE', set, -keep, -1)) do spared[id] = true end
    end
    for _, id in ipairs(ids) do
        if not spared[id] then removed[#removed + 1] = id end
    end
end
for _, id in ipairs(removed) do
    rcall('ZREM', set, id)
    drop_job_hard(id)
end
if #removed > 0 then emit('cleaned', 'count', #removed) end
return #removed
