-- get.lua - one job and its state, read atomically.
--   ARGV[1] id
-- Returns {} when there is no such job, else the job's view (job_view).
-- State: waiting, delayed, prioritized, active, completed, failed, paused
-- (waiting or prioritized in a paused queue), waiting-children (a flow
-- parent), or unknown.
local id = ARGV[1]
local flat = rcall('HGETALL', B .. id)
if #flat == 0 then return {} end
local state = 'unknown'
if rcall('ZSCORE', K.completed, id) then state = 'completed'
elseif rcall('ZSCORE', K.failed, id) then state = 'failed'
elseif rcall('ZSCORE', K.delayed, id) then state = 'delayed'
elseif rcall('ZSCORE', K.prioritized, id) then state = 'prioritized'
elseif rcall('LPOS', K.active, id) then state = 'active'
elseif rcall('LPOS', K.wait, id) then state = 'waiting'
elseif rcall('ZSCORE', B .. 'waiting-children', id) then state = 'waiting-children'
end
if (state == 'waiting' or state == 'prioritized')
        and rcall('HEXISTS', K.meta, 'paused') == 1 then
    state = 'paused'
end
return job_view(id, state, field_map(flat))
