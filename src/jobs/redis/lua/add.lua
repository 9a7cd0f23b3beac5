-- add.lua - add one or more jobs, all or nothing (BullMQ addStandardJob,
-- addDelayedJob and addPrioritizedJob; the front has validated everything).
--   ARGV[1] number of jobs n, then n groups of 22:
--     custom id ("" = next value of the id counter), name, data (JSON),
--     delay ms, priority, attempts, backoff type ("", "fixed",
--     "exponential", a custom name), backoff ms ("<ms>[:<jitter>]"),
--     lifo ("1"/"0"), remove-on-complete mode
--     and value, remove-on-fail mode and value (LN_KEEP_*: 0 all, 1 none,
--     2 newest count, 3 age in ms), traceparent, tracestate ("" = none),
--     timeout ms ("0" = none; stored as opts.lanesTimeout, which BullMQ
--     keeps and ignores), deduplication id ("" = none), its TTL ms (0 =
--     simple mode), extend, replace, keepLastIfActive, reschedule
--     ("1"/"0" each)
--   then, only when a job has a parent, the parent section: the prefix,
--     then per job its parent's queue ("" = none), id and failure option
--     bits (lib_flow.lua's flow_add_check, flow_child_opts, ...)
-- Returns {id, existed, id, existed, ...}: a custom id that exists already
-- is left alone (existed = 1) and a 'duplicated' event written; so is a
-- job deduplicated by the job holding its deduplication id (existed = 1,
-- that job's id, a 'deduplicated' event). {RC, i} refuses the add for job
-- i before anything is written (its parent is missing, or its existing
-- custom id has another parent or runs).
local NFIELDS = 22

local function emit_dedup(owner, deid, other)
    emit('deduplicated', 'jobId', owner, 'deduplicationId', deid, 'deduplicatedJobId', other)
end

-- BullMQ's recoverStaleDeduplicationKey: a key without expiry whose job is
-- gone is stale; the add d takes it over, and a next job stored for the
-- gone holder is dropped.
local function recover_stale(d, dkey, cur)
    if cur and rcall('PTTL', dkey) == -1 and rcall('EXISTS', B .. cur) == 0 then
        rcall('DEL', dkey, B .. 'dn:' .. d.deid)
        set_de(dkey, d.id, d.ttl, d.keep)
        return true
    end
    return false
end

-- BullMQ's storeDeduplicatedNextJob: with keepLastIfActive, an add whose
-- holder cur is active is kept as the next job (<base>dn:<deid>, the
-- latest add wins), made a job when cur finishes (lib.lua's
-- dedup_finalize); the key loses its expiry meanwhile.
local function store_next(d, cur)
    if not d.keep or not rcall('LPOS', K.active, cur) then return false end
    local nkey = B .. 'dn:' .. d.deid
    rcall('DEL', nkey)
    rcall('HSET', nkey, 'name', d.name, 'data', d.data, 'opts', cjson.encode(d.opts), 'jid', d.id)
    rcall('PERSIST', B .. 'de:' .. d.deid)
    emit_dedup(cur, d.deid, d.id)
    return true
end

-- BullMQ 6.7's deduplicateJobWithoutReplace: the holder's id, or nil when
-- d is to be added (and now holds the id).
local function dedup_keep(d, dkey)
    if d.ttl > 0 and d.extend then
        local cur = rcall('GET', dkey)
        if not cur then
            set_de(dkey, d.id, d.ttl, d.keep)
            return nil
        end
        if recover_stale(d, dkey, cur) then return nil end
        if store_next(d, cur) then return cur end
        set_de(dkey, cur, d.ttl, d.keep)
        emit_dedup(cur, d.deid, d.id)
        return cur
    end
    local set
    if d.ttl > 0 and not d.keep then
        set = rcall('SET', dkey, d.id, 'PX', d.ttl, 'NX')
    else
        set = rcall('SET', dkey, d.id, 'NX')
    end
    if set then return nil end
    local cur = rcall('GET', dkey)
    if recover_stale(d, dkey, cur) then return nil end
    if store_next(d, cur) then return cur end
    emit_dedup(cur, d.deid, d.id)
    return cur
end

-- BullMQ 6.7's deduplicateJob for the add d (deid, ttl, extend, replace,
-- keep = keepLastIfActive, resched = reschedule, and the job: id, name,
-- data, opts, delay): the id of the job that holds deid, which makes
-- this add a no-op, or nil when job d.id is to be added.
local function deduplicate(d)
    local dkey = B .. 'de:' .. d.deid
    if not d.replace then
        local cur = dedup_keep(d, dkey)
        if cur and d.resched and rcall('ZSCORE', K.delayed, cur) then -- the holder's new delay
            rcall('HSET', B .. cur, 'delay', d.delay)
            add_delayed(cur, NOW + d.delay)
        end
        return cur
    end
    local cur = rcall('GET', dkey)
    if not cur then
        set_de(dkey, d.id, d.ttl, d.keep)
        return nil
    end
    if rcall('ZREM', K.delayed, cur) > 0 then -- still pending: replaced
        delete_job_keys(cur)
        emit('removed', 'jobId', cur, 'prev', 'delayed')
        emit_dedup(d.id, d.deid, cur)
        rcall('DEL', B .. 'dn:' .. d.deid)
        if not d.keep and not d.extend and d.ttl > 0 then
            rcall('SET', dkey, d.id, 'KEEPTTL')
        else
            set_de(dkey, d.id, d.ttl, d.keep)
        end
        return nil
    end
    if recover_stale(d, dkey, cur) then return nil end
    store_next(d, cur)
    return cur
end

-- The opts of the job at ARGV[a + 1 ..] in BullMQ's stored form: public
-- names, short keys (a parent's are added by flow_child_opts).
local function make_opts(a)
    local delay, priority = tonumber(ARGV[a + 4]), tonumber(ARGV[a + 5])
    local opts = {attempts = tonumber(ARGV[a + 6])}
    if delay > 0 then opts.delay = delay end
    if priority > 0 then opts.priority = priority end
    if ARGV[a + 9] == '1' then opts.lifo = true end
    if ARGV[a + 1] ~= '' then opts.jobId = ARGV[a + 1] end
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
    local deid = ARGV[a + 17]
    if deid ~= '' then
        local dttl = tonumber(ARGV[a + 18])
        opts.de = {id = deid}
        if dttl > 0 then opts.de.ttl = dttl end
        if ARGV[a + 19] == '1' then opts.de.extend = true end
        if ARGV[a + 20] == '1' then opts.de.replace = true end
        if ARGV[a + 21] == '1' then opts.de.keepLastIfActive = true end
        if ARGV[a + 22] == '1' then opts.de.reschedule = true end
    end
    return opts
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
    local deid = ARGV[a + 17]
    local opts = make_opts(a)
    local holder
    local pa = parents and ARGV[PS + 3 * i - 2] ~= '' and PS + 3 * i - 2
    if custom ~= '' and rcall('EXISTS', jkey) == 1 then
        if pa then cold().flow_attach_existing(PS, pa, jkey, id) end
        emit('duplicated', 'jobId', id)
        holder = id
    elseif deid ~= '' then
        holder = deduplicate({deid = deid, ttl = tonumber(ARGV[a + 18]),
                              extend = ARGV[a + 19] == '1', replace = ARGV[a + 20] == '1',
                              keep = ARGV[a + 21] == '1', resched = ARGV[a + 22] == '1',
                              id = id, name = name, data = data, opts = opts, delay = delay})
    end
    if holder then
        out[#out + 1] = holder
        out[#out + 1] = 1
    else
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
