-- ratelimit.lua - read or change a queue's rate limits and global
-- concurrency: BullMQ's meta fields 'max', 'duration' and 'concurrency'
-- and its 'limiter' counter (docs/internals/ratelimit.md).
--   ARGV[1] 'get'             -> {max, duration, concurrency} (0 = none)
--           'rate' MAX DUR    -> 0 (MAX '0': clear; setGlobalRateLimit)
--           'conc' N          -> 0 (N '0': clear; setGlobalConcurrency)
--           'manual' MS       -> 0 (queue.rateLimit; MS '0': DEL limiter)
--           'ttl' MAX         -> ms (getRateLimitTtl; MAX '0': the global)
local op = ARGV[1]

-- BullMQ's getRateLimitTTL: the limiter's PTTL when it holds max_jobs or
-- more, else 0; a counter already expired (PTTL 0) is deleted.
local function limit_ttl(max_jobs)
    if max_jobs and max_jobs <= (tonumber(rcall('GET', K.limiter)) or 0) then
        local pttl = rcall('PTTL', K.limiter)
        if pttl == 0 then rcall('DEL', K.limiter) end
        if pttl > 0 then return pttl end
    end
    return 0
end

-- A raised or cleared concurrency: a worker blocked on the marker looks
-- at once (BullMQ's own HSET wakes nobody; harmless for Node workers).
local function wake_if_ready()
    if not paused_or_maxed() and (rcall('LLEN', K.wait) > 0 or rcall('ZCARD', K.prioritized) > 0) then
        wake_workers()
    end
end

if op == 'get' then
    local m = rcall('HMGET', K.meta, 'max', 'duration', 'concurrency')
    return {num(m[1]), num(m[2]), num(m[3])}
elseif op == 'rate' then
    if ARGV[2] == '0' then
        rcall('HDEL', K.meta, 'max', 'duration')
    else
        rcall('HSET', K.meta, 'max', ARGV[2], 'duration', ARGV[3])
    end
    return 0
elseif op == 'conc' then
    if ARGV[2] == '0' then
        rcall('HDEL', K.meta, 'concurrency')
    else
        rcall('HSET', K.meta, 'concurrency', ARGV[2])
    end
    wake_if_ready()
    return 0
elseif op == 'manual' then
    if ARGV[2] == '0' then
        rcall('DEL', K.limiter)
    else
        rcall('SET', K.limiter, LIMITER_FULL, 'PX', ARGV[2])
    end
    return 0
end
-- 'ttl'
local max_jobs = tonumber(ARGV[2])
if max_jobs > 0 then return limit_ttl(max_jobs) end
local global = rcall('HGET', K.meta, 'max')
if global then return limit_ttl(tonumber(global)) end
return rcall('PTTL', K.limiter)
