-- counts.lua - jobs per state, one consistent snapshot.
-- Returns {waiting, delayed, prioritized, active, completed, failed,
-- paused, waiting-children}; while the queue is paused its waiting and prioritized jobs are
-- counted as paused.
local waiting, prio = rcall('LLEN', K.wait), rcall('ZCARD', K.prioritized)
local paused = 0
if rcall('HEXISTS', K.meta, 'paused') == 1 then
    paused, waiting, prio = waiting + prio, 0, 0
end
return {waiting, rcall('ZCARD', K.delayed), prio, rcall('LLEN', K.active),
        rcall('ZCARD', K.completed), rcall('ZCARD', K.failed), paused,
        rcall('ZCARD', B .. 'waiting-children')}
