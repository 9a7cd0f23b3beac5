-- metrics.lua - a queue's metrics of one kind (jobs.h ln_jobs_metrics,
-- BullMQ's queue.getMetrics; lib.lua's collect_metrics writes them).
--   ARGV[1] "completed" or "failed"   ARGV[2] start   ARGV[3] end (the
--   points by LRANGE's rule)   ARGV[4] most points returned
-- Returns {count, prevTS, prevCount (each false when absent), {points,
-- newest first}, number of points stored}.
local key = B .. 'metrics:' .. ARGV[1]
local m = rcall('HMGET', key, 'count', 'prevTS', 'prevCount')
local data = key .. ':data'
local n = rcall('LLEN', data)
local s, e, cap = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
if s < 0 then s = math.max(0, n + s) end
if e < 0 then e = n + e end
if e - s >= cap then e = s + cap - 1 end
local points = {}
if e >= s then points = rcall('LRANGE', data, s, e) end
return {m[1], m[2], m[3], points, n}
