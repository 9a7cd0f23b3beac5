-- drain.lua - remove every waiting, prioritized and delayed job (BullMQ
-- queue.drain(true)); active and finished jobs stay.
-- Returns the number removed.
local n = 0
local function drop(ids)
    for _, id in ipairs(ids) do delete_job_keys(id) end
    n = n + #ids
end
drop(rcall('LRANGE', K.wait, 0, -1))
drop(rcall('LRANGE', K.paused, 0, -1))
drop(rcall('ZRANGE', K.prioritized, 0, -1))
drop(rcall('ZRANGE', K.delayed, 0, -1))
rcall('DEL', K.wait, K.paused, K.prioritized, K.delayed, K.pc)
rcall('ZREM', K.marker, '1')
return n
