-- add.lua - add one or more jobs, all or nothing (BullMQ addStandardJob,
-- addDelayedJob and addPrioritizedJob; the front has validated everything).
--   ARGV[1] number of jobs n, then n groups of 20:
--     custom id ("" = next value of the id counter), name, data (JSON),
--     delay ms, priority, attempts, backoff type ("", "fixed",
--     "exponential", a custom name), backoff ms ("<ms>[:<jitter>]"),
--     lifo ("1"/"0"), remove-on-complete mode
--     and value, remove-on-fail mode and value (LN_KEEP_*: 0 all, 1 none,
--     2 newest count, 3 age in ms), traceparent, tracestate ("" = none),
--     timeout ms ("0" = none; stored as opts.lanesTimeout, which BullMQ
--     keeps and ignores), deduplication id ("" = none), its TTL ms (0 =
--     simple mode), extend ("1"/"0"), replace ("1"/"0")
--   then, only when a job has a parent, the parent section: the prefix,
--     then per job its parent's queue ("" = none), id and failure option
--     bits (lib_flow.lua's flow_add_check, flow_child_opts, ...)
-- Returns {id, existed, id, existed, ...}: a custom id that exists already
-- is left alone (existed = 1) and a 'duplicated' event written; so is a
-- job deduplicated by the job holding its deduplication id (existed = 1,
-- that job's id, a 'deduplicated' event). {RC, i} refuses the add for job
-- i before anything is written (its parent is missing, or its existing
-- custom id has another parent or runs).
local NFIELDS = 20

-- BullMQ's setDeduplicationKey.
local function set_de(dkey, id, ttl)
    if ttl > 0 then rcall('SET', dkey, id, 'PX', ttl) else rcall('SET', dkey, id) end
end

-- BullMQ's recoverStaleDeduplicationKey: a key without expiry whose job is
-- gone is stale; 'id' takes it over.
local function recover_stale(dkey, cur, id, ttl)
    if cur and rcall('PTTL', dkey) == -1 and rcall('EXISTS', B .. cur) == 0 then
        rcall('DEL', dkey)
        set_de(dkey, id, ttl)
        return true
    end
    return false
end

local function emit_dedup(owner, deid, other)
    emit('deduplicated', 'jobId', owner, 'deduplicationId', deid, 'deduplicatedJobId', other)
end

-- BullMQ 6.7's deduplicateJob (without keepLastIfActive and reschedule):
-- the id of the job that holds deid, which makes this add a no-op, or nil
-- when job 'id' is to be added (and now holds deid).
local function deduplicate(deid, ttl, extend, replace, id)
    local dkey = B .. 'de:' .. deid
    if replace then
        local cur = rcall('GET', dkey)
        if not cur then
            set_de(dkey, id, ttl)
            return nil
        end
        if rcall('ZREM', K.delayed, cur) > 0 then -- still pending: replaced
            delete_job_keys(cur)
            emit('removed', 'jobId', cur, 'prev', 'delayed')
            emit_dedup(id, deid, cur)
            if not extend and ttl > 0 then
                rcall('SET', dkey, id, 'KEEPTTL')
            else
                set_de(dkey, id, ttl)
            end
            return nil
        end
        if recover_stale(dkey, cur, id, ttl) then return nil end
        return cur
    end
    if ttl > 0 and extend then
        local cur = rcall('GET', dkey)
        if not cur then
            set_de(dkey, id, ttl)
            return nil
        end
        if recover_stale(dkey, cur, id, ttl) then return nil end
        set_de(dkey, cur, ttl)
        emit_dedup(cur, deid, id)
        return cur
    end
    local set
    if ttl > 0 then set = rcall('SET', dkey, id, 'PX', ttl, 'NX') else set = rcall('SET', dkey, id, 'NX') end
    if set then return nil end
    local cur = rcall('GET', dkey)
    if recover_stale(dkey, cur, id, ttl) then return nil end
    emit_dedup(cur, deid, id)
    return cur
end

-- LN_KEEP_* -> BullMQ's removeOnComplete/removeOnFail (nil = keep all).
local function keep_opt(mode, value)
    if mode == '1' then return true end
    if mode == '2' then return tonumber(value) end
    if mode == '3' then return {age = tonumber(value) / 1000} end
    return nil
end

local out = {}
local PS = 2 + tonumber(ARGV[1]) * NFIELDS -- the parent section, if any
local parents
if #ARGV > PS then
    local rc, at = cold().flow_add_check(PS, tonumber(ARGV[1]), NFIELDS)
    if rc then return {rc, at} end
    parents = true
end
for i = 1, tonumber(ARGV[1]) do
    local a = 1 + (i - 1) * NFIELDS
    local custom, name, data = ARGV[a + 1], ARGV[a + 2], ARGV[a + 3]
    local delay, priority = tonumber(ARGV[a + 4]), tonumber(ARGV[a + 5])
    local lifo = ARGV[a + 9] == '1'
    local counter = rcall('INCR', K.id)
    local id = custom ~= '' and custom or tostring(counter)
    local jkey = B .. id
    local deid, dttl = ARGV[a + 17], tonumber(ARGV[a + 18])
    local holder
    local pa = parents and ARGV[PS + 3 * i - 2] ~= '' and PS + 3 * i - 2
    if custom ~= '' and rcall('EXISTS', jkey) == 1 then
        if pa then cold().flow_attach_existing(PS, pa, jkey, id) end
        emit('duplicated', 'jobId', id)
        holder = id
    elseif deid ~= '' then
        holder = deduplicate(deid, dttl, ARGV[a + 19] == '1', ARGV[a + 20] == '1', id)
    end
    if holder then
        out[#out + 1] = holder
        out[#out + 1] = 1
    else
        -- opts in BullMQ's stored form: public names, short keys.
        local opts = {attempts = tonumber(ARGV[a + 6])}
        if delay > 0 then opts.delay = delay end
        if priority > 0 then opts.priority = priority end
        if lifo then opts.lifo = true end
        if custom ~= '' then opts.jobId = custom end
        if ARGV[a + 7] ~= '' then
            opts.backoff = backoff_opt(ARGV[a + 7], ARGV[a + 8])
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
        if deid ~= '' then
            opts.de = {id = deid}
            if dttl > 0 then opts.de.ttl = dttl end
            if ARGV[a + 19] == '1' then opts.de.extend = true end
            if ARGV[a + 20] == '1' then opts.de.replace = true end
        end
        if pa then cold().flow_child_opts(PS, pa, opts) end
        rcall('HSET', jkey, 'name', name, 'data', data, 'opts', cjson.encode(opts),
              'timestamp', int_str(NOW), 'delay', delay, 'priority', priority)
        if deid ~= '' then rcall('HSET', jkey, 'deid', deid) end
        if pa then cold().flow_attach_new(PS, pa, jkey) end
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
