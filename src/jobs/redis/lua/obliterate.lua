-- obliterate.lua - one call of an obliterate (BullMQ's queue.obliterate()):
-- remove at most ARGV[1] jobs and job schedulers of a paused queue, state by
-- state in BullMQ's order (active, delayed, the schedulers, completed, wait,
-- paused, prioritized, failed) and then the flow parents waiting for
-- children, which BullMQ's leaves behind. Each job goes as a drain removes
-- one (lib_flow.lua's drop_job_hard: its keys and lock, its deduplication
-- key, its parent's dependency; shallow: a parent in this queue left
-- without children stays for the waiting-children pass, so a chain of
-- parents costs each call at most its limit). A call that finds nothing left
-- deletes the queue's own keys, so nothing of the queue is left but
-- deduplication keys whose job was gone already (as BullMQ's).
--   ARGV[1] most jobs and schedulers this call removes (> 0)
--   ARGV[2] "1": active jobs go too (force), else their presence refuses
-- Returns {removed (jobs), more, left}: more 1 when the call stopped at its limit,
-- 0 when the queue is gone; left the jobs and schedulers there were when
-- it began. Or {-1}: not paused (resumed meanwhile); {-2}: active jobs and
-- no force.
local budget, force = tonumber(ARGV[1]), ARGV[2] == '1'
if rcall('HEXISTS', K.meta, 'paused') ~= 1 then return {-1} end
if not force and rcall('LLEN', K.active) > 0 then return {-2} end
local WCHILDREN, REPEAT = B .. 'waiting-children', B .. 'repeat'
local lists = {active = true, wait = true, paused = true}
local order = {K.active, K.delayed, REPEAT, K.completed, K.wait, K.paused, K.prioritized, K.failed,
               WCHILDREN}
local left = 0
for i = 1, #order do
    local key = order[i]
    left = left + (lists[string.sub(key, #B + 1)] and rcall('LLEN', key) or rcall('ZCARD', key))
end
local removed = 0
for i = 1, #order do
    if budget <= 0 then return {removed, 1, left} end
    local key = order[i]
    if lists[string.sub(key, #B + 1)] then -- oldest first: the right end
        local ids = rcall('LRANGE', key, -budget, -1)
        if #ids > 0 then
            rcall('LTRIM', key, 0, -#ids - 1)
            for k = #ids, 1, -1 do removed = removed + drop_job_hard(ids[k], true) end
        end
        budget = budget - #ids
    else
        local ids = rcall('ZRANGE', key, 0, budget - 1)
        if #ids > 0 then
            rcall('ZREM', key, unpack(ids))
            for k = 1, #ids do
                if key == REPEAT then
                    rcall('DEL', REPEAT .. ':' .. ids[k])
                else
                    removed = removed + drop_job_hard(ids[k], true)
                end
            end
        end
        budget = budget - #ids
    end
end
if budget <= 0 then return {removed, 1, left} end
rcall('DEL', K.events, K.stalled, K.id, K.pc, K.marker, K.meta, K.limiter, B .. 'delay',
      B .. 'stalled-check', B .. 'metrics:completed', B .. 'metrics:completed:data',
      B .. 'metrics:failed', B .. 'metrics:failed:data', B .. 'lanes:cancel')
return {removed, 0, left}
