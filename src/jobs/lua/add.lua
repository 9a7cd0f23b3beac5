-- add.lua - add one or more jobs, all or nothing (BullMQ addStandardJob,
-- addDelayedJob and addPrioritizedJob; the front has validated everything).
--   ARGV[1] number of jobs n, then n groups of 16:
--     custom id ("" = next value of the id counter), name, data (JSON),
--     delay ms, priority, attempts, backoff type ("", "fixed",
--     "exponential"), backoff ms, lifo ("1"/"0"), remove-on-complete mode
--     and value, remove-on-fail mode and value (LN_KEEP_*: 0 all, 1 none,
--     2 newest count, 3 age in ms), traceparent, tracestate ("" = none),
--     timeout ms ("0" = none; stored as opts.lanesTimeout, which BullMQ
--     keeps and ignores)
-- Returns {id, existed, id, existed, ...}: a custom id that exists already
-- is left alone (existed = 1) and a 'duplicated' event written.
local NFIELDS = 16

-- LN_KEEP_* -> BullMQ's removeOnComplete/removeOnFail (nil = keep all).
local function keep_opt(mode, value)
    if mode == '1' then return true end
    if mode == '2' then return tonumber(value) end
    if mode == '3' then return {age = tonumber(value) / 1000} end
    return nil
end

local out = {}
for i = 1, tonumber(ARGV[1]) do
    local a = 1 + (i - 1) * NFIELDS
    local custom, name, data = ARGV[a + 1], ARGV[a + 2], ARGV[a + 3]
    local delay, priority = tonumber(ARGV[a + 4]), tonumber(ARGV[a + 5])
    local lifo = ARGV[a + 9] == '1'
    local counter = rcall('INCR', K.id)
    local id = custom ~= '' and custom or tostring(counter)
    local jkey = B .. id
    if custom ~= '' and rcall('EXISTS', jkey) == 1 then
        emit('duplicated', 'jobId', id)
        out[#out + 1] = id
        out[#out + 1] = 1
    else
        -- opts in BullMQ's stored form: public names, short keys.
        local opts = {attempts = tonumber(ARGV[a + 6])}
        if delay > 0 then opts.delay = delay end
        if priority > 0 then opts.priority = priority end
        if lifo then opts.lifo = true end
        if custom ~= '' then opts.jobId = custom end
        if ARGV[a + 7] ~= '' then
            opts.backoff = {type = ARGV[a + 7], delay = tonumber(ARGV[a + 8])}
        end
        opts.removeOnComplete = keep_opt(ARGV[a + 10], ARGV[a + 11])
        opts.removeOnFail = keep_opt(ARGV[a + 12], ARGV[a + 13])
        if ARGV[a + 14] ~= '' then
            local carrier = {traceparent = ARGV[a + 14]}
            if ARGV[a + 15] ~= '' then carrier.tracestate = ARGV[a + 15] end
            opts.tm = cjson.encode(carrier)
        end
        local timeout = tonumber(ARGV[a + 16])
        if timeout > 0 then opts.lanesTimeout = timeout end
        rcall('HSET', jkey, 'name', name, 'data', data, 'opts', cjson.encode(opts),
              'timestamp', int_str(NOW), 'delay', delay, 'priority', priority)
        emit('added', 'jobId', id, 'name', name)
        if delay > 0 then
            add_delayed(id, NOW + delay)
        else
            push_ready(id, priority, lifo)
            if not paused_or_maxed() then wake_workers() end
            emit('waiting', 'jobId', id)
        end
        out[#out + 1] = id
        out[#out + 1] = 0
    end
end
return out
