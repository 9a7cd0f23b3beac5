-- pause.lua - pause or resume a queue (BullMQ 6: a meta flag; jobs stay
-- in 'wait').
--   ARGV[1] '1' pause | '0' resume
-- Returns 0.
if ARGV[1] == '1' then
    rcall('HSET', K.meta, 'paused', 1)
    rcall('DEL', K.marker)
    emit('paused')
    return 0
end
rcall('HDEL', K.meta, 'paused')
-- A BullMQ 5 'paused' list left behind goes back to 'wait'.
local left = rcall('LRANGE', K.paused, 0, -1)
for i = 1, #left, 7000 do
    rcall('RPUSH', K.wait, unpack(left, i, math.min(i + 6999, #left)))
end
rcall('DEL', K.paused)
if rcall('LLEN', K.wait) + rcall('ZCARD', K.prioritized) > 0 then
    wake_workers()
else
    update_delay_marker()
end
emit('resumed')
return 0
