-- sched.lua - job schedulers in BullMQ 6.7's layout: the ZSET
-- <base>repeat (member = scheduler id, score = time of its current
-- iteration) and the hash <base>repeat:<id> (name, tz, limit, pattern,
-- startDate, endDate, every, offset, opts, data, ic); an iteration is an
-- ordinary job "repeat:<id>:<ms>" with field rjk = id and opts repeat /
-- repeatJobKey / prevMillis, as BullMQ's Node side writes them. Every op
-- touches O(1) keys (list: its page). ARGV[1] names the op:
--   upsert ID NEXT NAME DATA EVERY PATTERN TZ START END LIMIT TOPTS
--       (BullMQ's addJobScheduler: NEXT is the C side's time for a
--       pattern; EVERY "0" = pattern; START/END "0", LIMIT "" = none;
--       TOPTS the template opts JSON) -> {job id, delay} or an RC
--   peek ID PRODUCER -> {} unless PRODUCER is the current iteration of
--       scheduler ID, else {now, pattern, tz, startDate, endDate, limit,
--       count, prevMillis, every} from the producer's opts.repeat ("" and
--       -1 for none), for the C side to compute a pattern's next time
--   next ID NEXT PRODUCER (BullMQ's updateJobScheduler) -> id or false
--   remove ID -> 0, or 1 when there is no such scheduler
--   get ID -> {} or {score, hash fields flat}
--   list OFFSET LIMIT -> {id, score, {hash fields flat}, ...}
local op = ARGV[1]
local RKEY = B .. 'repeat'

local function iter_id(sid, ms)
    return 'repeat:' .. sid .. ':' .. int_str(ms)
end

-- BullMQ's every arithmetic (getJobSchedulerEveryNextMillis, in lanes'
-- words: docs/internals/schedules.md): returns the time and the offset.
local function every_next(prev, every, now, offset, start)
    offset = tonumber(offset) or 0
    local nxt
    if not prev then
        if start and tonumber(start) then
            nxt = math.max(tonumber(start), now)
        elseif offset > 0 then
            nxt = math.floor(now / every) * every + offset
            if nxt <= now then nxt = nxt + every end
        else
            nxt = now
        end
    else
        nxt = prev + every
        if nxt < now then
            local slot = math.floor(now / every) * every + offset
            nxt = slot <= now and slot + every or slot
        end
    end
    if offset == 0 then offset = nxt - math.floor(nxt / every) * every end
    return math.floor(nxt), math.floor(offset)
end

-- Store iteration job id (BullMQ's storeAndEnqueueJob via
-- addJobFromScheduler): delayed until 'at', or ready when due.
local function store_iteration(id, sid, name, data, opts, at)
    local delay = math.max(0, at - NOW)
    opts.delay, opts.jobId = delay, id
    local priority = tonumber(opts.priority) or 0
    local jkey = B .. id
    rcall('HSET', jkey, 'name', name, 'data', data, 'opts', cjson.encode(opts),
          'timestamp', NOW_S, 'delay', int_str(delay), 'priority', int_str(priority), 'rjk', sid)
    emit('added', 'jobId', id, 'name', name)
    if delay > 0 then
        add_delayed(id, at)
    else
        push_ready(id, priority, opts.lifo == true)
        if not paused_or_maxed() then wake_workers() end
        emit('waiting', 'jobId', id)
    end
    return delay
end

-- The pending iteration id removed if it has not started (BullMQ's
-- removeJobFromScheduler): true when it was.
local function remove_pending(id)
    local prev
    if rcall('ZREM', K.delayed, id) > 0 then
        prev = 'delayed'
    elseif rcall('ZREM', K.prioritized, id) > 0 or rcall('LREM', K.wait, 1, id) > 0
            or rcall('LREM', K.paused, 1, id) > 0 then
        prev = 'waiting'
    else
        return false
    end
    delete_job_keys(id)
    emit('removed', 'jobId', id, 'prev', prev)
    return true
end

local function upsert()
    local sid, name, data = ARGV[2], ARGV[4], ARGV[5]
    local every = tonumber(ARGV[6])
    if every == 0 then every = nil end
    local pattern, tz, start, stop, limit, topts = ARGV[7], ARGV[8], ARGV[9], ARGV[10],
                                                   ARGV[11], ARGV[12]
    local skey = RKEY .. ':' .. sid
    local nxt, offset = tonumber(ARGV[3]), nil
    local prev = tonumber(rcall('ZSCORE', RKEY, sid))
    local changed = false
    if every then
        local millis = prev
        if prev and tonumber(rcall('HGET', skey, 'every')) ~= every then
            millis, changed = nil, true
        end
        nxt, offset = every_next(millis, every, NOW, 0, start ~= '0' and start or nil)
    end
    local removed = prev and rcall('EXISTS', B .. iter_id(sid, prev)) == 1
                    and remove_pending(iter_id(sid, prev))
    if removed then
        if every and not changed then nxt = prev end
        offset = nil -- the stored offset stays
    end
    local id = iter_id(sid, nxt)
    if rcall('EXISTS', B .. id) == 1 then
        if not every then return RC.SCHEDULER_ID_TAKEN end
        local n = 0
        repeat
            nxt, n = nxt + every, n + 1
            id = iter_id(sid, nxt)
        until rcall('EXISTS', B .. id) == 0 or n >= 32
        if rcall('EXISTS', B .. id) == 1 then return RC.SCHEDULER_ID_TAKEN end
    end
    -- storeJobScheduler: the hash rewritten, ic and offset kept.
    local f = rcall('HMGET', skey, 'ic', 'offset')
    local h = {'name', name}
    local function put(k, v) h[#h + 1] = k; h[#h + 1] = v end
    if tz ~= '' then put('tz', tz) end
    if limit ~= '' then put('limit', limit) end
    if pattern ~= '' then put('pattern', pattern) end
    if start ~= '0' then put('startDate', start) end
    if stop ~= '0' then put('endDate', stop) end
    if every then put('every', int_str(every)) end
    if offset or f[2] then put('offset', offset and int_str(offset) or f[2]) end
    if topts ~= '{}' then put('opts', topts) end
    if data ~= '{}' then put('data', data) end
    put('ic', f[1] or '1')
    rcall('DEL', skey)
    rcall('HSET', skey, unpack(h))
    rcall('ZADD', RKEY, int_str(nxt), sid)
    rcall('INCR', K.id)
    -- The iteration's opts: the template's, then what BullMQ's
    -- getNextJobOpts adds (repeat without 'immediately', count 1).
    local opts = decode_opts(topts)
    local rep = {count = 1}
    if every then rep.every = every else rep.pattern = pattern end
    if tz ~= '' then rep.tz = tz end
    if limit ~= '' then rep.limit = tonumber(limit) end
    if start ~= '0' then rep.startDate = tonumber(start) end
    if stop ~= '0' then rep.endDate = tonumber(stop) end
    opts['repeat'] = rep
    -- (BullMQ's JavaScript knows the time of a pattern's iteration only)
    opts.timestamp, opts.repeatJobKey = NOW, sid
    if not every then opts.prevMillis = nxt end
    local delay = store_iteration(id, sid, name, data, opts, nxt)
    return {id, delay}
end

-- Is producer the current iteration of scheduler sid (BullMQ's
-- producerId check)? Its opts when it is.
local function current(sid, producer)
    local prev = rcall('ZSCORE', RKEY, sid)
    if not prev or producer ~= iter_id(sid, tonumber(prev)) then return nil end
    if not rcall('HGET', RKEY .. ':' .. sid, 'ic') then return nil end -- a legacy repeat key
    return tonumber(prev), job_opts(B .. producer)
end

local function peek()
    local _, opts = current(ARGV[2], ARGV[3])
    if not opts then return {} end
    local r = type(opts['repeat']) == 'table' and opts['repeat'] or {}
    local function s(v) return v ~= nil and tostring(v) or '' end
    local function n(v) return int_str(tonumber(v) or -1) end
    return {NOW_S, s(r.pattern), s(r.tz), n(r.startDate), n(r.endDate), n(r.limit), n(r.count),
            n(opts.prevMillis), n(r.every)}
end

local function next_iteration()
    local sid, producer = ARGV[2], ARGV[4]
    local prev, opts = current(sid, producer)
    if not prev then return false end
    local skey = RKEY .. ':' .. sid
    local a = rcall('HMGET', skey, 'name', 'data', 'every', 'startDate', 'offset')
    local rep = type(opts['repeat']) == 'table' and opts['repeat'] or {}
    local every = tonumber(a[3]) or tonumber(rep.every)
    local nxt = tonumber(ARGV[3])
    if every then
        nxt = every_next(prev, every, NOW, a[5] or rep.offset or 0, a[4])
    end
    local id = iter_id(sid, nxt)
    if rcall('EXISTS', B .. id) == 1 then
        emit('duplicated', 'jobId', id)
        return false
    end
    rcall('ZADD', RKEY, int_str(nxt), sid)
    rcall('HINCRBY', skey, 'ic', 1)
    rcall('INCR', K.id)
    -- BullMQ's getNextJobOpts on the producer's opts.
    rep.count = (tonumber(rep.count) or 0) + 1
    if not (every and rep.offset) then rep.offset = nil end
    opts['repeat'] = rep
    opts.timestamp, opts.repeatJobKey = NOW, sid
    if every then opts.prevMillis = nil else opts.prevMillis = nxt end
    store_iteration(id, sid, a[1] or '', a[2] or '{}', opts, nxt)
    return id
end

local function remove()
    local sid = ARGV[2]
    local millis = rcall('ZSCORE', RKEY, sid)
    if millis then
        local id = iter_id(sid, tonumber(millis))
        if rcall('ZREM', K.delayed, id) == 1 then
            delete_job_keys(id)
            emit('removed', 'jobId', id, 'prev', 'delayed')
        end
    end
    if rcall('ZREM', RKEY, sid) == 1 then
        rcall('DEL', RKEY .. ':' .. sid)
        return 0
    end
    return 1
end

local function get()
    local score = rcall('ZSCORE', RKEY, ARGV[2])
    if not score then return {} end
    return {score, rcall('HGETALL', RKEY .. ':' .. ARGV[2])}
end

local function list()
    local off, lim = tonumber(ARGV[2]), tonumber(ARGV[3])
    local z = rcall('ZRANGE', RKEY, off, off + lim - 1, 'WITHSCORES')
    local out = {}
    for i = 1, #z, 2 do
        out[#out + 1] = z[i]
        out[#out + 1] = z[i + 1]
        out[#out + 1] = rcall('HGETALL', RKEY .. ':' .. z[i])
    end
    return out
end

if op == 'upsert' then return upsert() end
if op == 'peek' then return peek() end
if op == 'next' then return next_iteration() end
if op == 'remove' then return remove() end
if op == 'get' then return get() end
if op == 'list' then return list() end
return redis.error_reply('sched.lua: unknown op')
