-- lib.lua - helpers shared by every lanes Redis script.
--
-- scripts/embed-lua.sh prepends the definitions of this file a script uses
-- (after codes.lua, the return codes RC) to it, so each script stays one
-- self-contained EVALSHA body; a helper a script calls as cold().NAME is
-- defined only when that call first runs (every closure made costs Redis on
-- every call: docs/internals/redis-speed.md). Keep each definition at column
-- 0 as `local ...` or `NAME = function`; embed-lua.sh cuts the file there. Layout: BullMQ 6.7, as described in
-- docs/internals/redis-layout.md. KEYS[1] is the queue base "<prefix>:<queue>:"
-- and every key a script touches is built from it, so all of a queue's
-- keys share the slot of a {hash tag} placed in the prefix or queue name.
-- Times are milliseconds since the epoch from the server's clock (TIME),
-- so workers with skewed clocks agree; BullMQ's Node side uses its own
-- clock for the same fields. Numbers written to Redis go through int_str
-- so they are stored as plain integer text.

local rcall = redis.call
local B = KEYS[1]
local K = {
    wait = B .. 'wait', active = B .. 'active', paused = B .. 'paused',
    delayed = B .. 'delayed', prioritized = B .. 'prioritized',
    completed = B .. 'completed', failed = B .. 'failed',
    stalled = B .. 'stalled', id = B .. 'id', pc = B .. 'pc', meta = B .. 'meta',
    events = B .. 'events', marker = B .. 'marker', limiter = B .. 'limiter',
}
local TWO32 = 4294967296
local T = rcall('TIME')
local NOW = T[1] * 1000 + math.floor(T[2] / 1000) -- (strings: Lua 5.1 converts them)

-- A flow child's finish, set by lib_flow.lua (embedded after this file).
local flow_on_finish

local function int_str(x)
    return string.format('%.0f', x)
end
-- (NOW < 1e14, so Lua's own %.14g writes every digit: cheaper than int_str)
local NOW_S = NOW .. ''

-- The events cap, written to meta the first time a queue is touched.
local max_events_cache
local function max_events()
    if not max_events_cache then
        max_events_cache = rcall('HGET', K.meta, 'opts.maxLenEvents')
        if not max_events_cache then
            max_events_cache = '10000'
            rcall('HSET', K.meta, 'opts.maxLenEvents', max_events_cache)
        end
    end
    return max_events_cache
end

-- XADD one event with BullMQ's field layout: event=<name>, then pairs.
local function emit(name, ...)
    rcall('XADD', K.events, 'MAXLEN', '~', max_events(), '*', 'event', name, ...)
end

-- BullMQ's "paused or maxed": meta.paused exists, or a global concurrency
-- is set and reached.
local function paused_or_maxed()
    local m = rcall('HMGET', K.meta, 'paused', 'concurrency')
    if m[1] then return true end
    if m[2] and rcall('LLEN', K.active) >= tonumber(m[2]) then return true end
    return false
end

local function wake_workers()
    rcall('ZADD', K.marker, 0, '0')
end

-- After jobs finished: if a global concurrency is set and no longer
-- reached while jobs are ready, wake a worker. Adds and takes skip the
-- marker while the queue is maxed, so without this a worker whose free
-- slots sleep on the marker (a C worker of higher concurrency than the
-- limit) would wait out its block timeout. BullMQ's finishing Node worker
-- fetches its next job in moveToFinished, and that take writes the marker.
local function wake_if_slot_freed()
    local m = rcall('HMGET', K.meta, 'paused', 'concurrency')
    if m[1] or not m[2] then return end
    if rcall('LLEN', K.active) >= (tonumber(m[2]) or 0) then return end
    if rcall('LLEN', K.wait) > 0 or rcall('ZCARD', K.prioritized) > 0 then
        wake_workers()
    end
end

-- Marker "1" carries the due time of the earliest delayed job.
local function update_delay_marker()
    local first = rcall('ZRANGE', K.delayed, 0, 0, 'WITHSCORES')
    if first[2] then
        rcall('ZADD', K.marker, tonumber(first[2]) / 4096, '1')
    end
end

-- delayed score: due*4096 + seq, seq keeping FIFO order within one ms.
local function delayed_score(due)
    local lo = due * 4096
    local last = rcall('ZREVRANGEBYSCORE', K.delayed, int_str(lo + 4095),
                       int_str(lo), 'WITHSCORES', 'LIMIT', 0, 1)
    if last[2] then
        return math.min(tonumber(last[2]) + 1, lo + 4095)
    end
    return lo
end

local function add_delayed(id, due)
    rcall('ZADD', K.delayed, int_str(delayed_score(due)), id)
    emit('delayed', 'jobId', id, 'delay', int_str(due))
    update_delay_marker()
end

-- Make a job ready: prioritized (priority > 0) or wait. 'front' (LIFO)
-- RPUSHes (served next), otherwise LPUSH (served last). BullMQ ignores LIFO
-- for prioritized jobs; lanes serves them newest first within their
-- priority with scores just below priority * 2^32 (BullMQ's own jobs of
-- that priority sit at or above it, and ZPOPMIN takes the lowest score).
local function push_ready(id, priority, front)
    if priority > 0 then
        local n = rcall('INCR', K.pc) % TWO32
        local score = front and priority * TWO32 - n or priority * TWO32 + n
        rcall('ZADD', K.prioritized, int_str(score), id)
    elseif front then
        rcall('RPUSH', K.wait, id)
    else
        rcall('LPUSH', K.wait, id)
    end
end

-- Back to the front of its line: first in wait, or first of its priority.
local function push_front(id, priority)
    if priority > 0 then
        rcall('ZADD', K.prioritized, int_str(priority * TWO32), id)
    else
        rcall('RPUSH', K.wait, id)
    end
end

local function job_priority(jkey)
    return tonumber(rcall('HGET', jkey, 'priority') or '0') or 0
end

local function decode_opts(raw)
    if raw then
        local ok, t = pcall(cjson.decode, raw)
        if ok and type(t) == 'table' then return t end
    end
    return {}
end

-- Is job id (hash jkey) the current iteration of its job scheduler
-- ("repeat:<id>:<ms>", <ms> its score in the repeat ZSET), BullMQ's
-- isJobSchedulerJob? Its take makes the next iteration, so a remove (or
-- cancel) of it would end the schedule.
local function is_current_iteration(id, jkey)
    local rjk = rcall('HGET', jkey, 'rjk')
    if not rjk then return false end
    local ms = rcall('ZSCORE', B .. 'repeat', rjk)
    return ms ~= false and id == 'repeat:' .. rjk .. ':' .. int_str(tonumber(ms))
end

local function job_opts(jkey)
    return decode_opts(rcall('HGET', jkey, 'opts'))
end

-- Move the delayed jobs ids (due now) to wait/prioritized.
local function promote_ids(ids)
    for _, id in ipairs(ids) do
        local jkey = B .. id
        rcall('ZREM', K.delayed, id)
        push_ready(id, job_priority(jkey), false)
        rcall('HSET', jkey, 'delay', 0)
        emit('waiting', 'jobId', id, 'prev', 'delayed')
    end
    if not paused_or_maxed() then wake_workers() end
end

local function delete_job_keys(id)
    local jkey = B .. id
    rcall('DEL', jkey, jkey .. ':logs', jkey .. ':lock', jkey .. ':dependencies',
          jkey .. ':processed', jkey .. ':failed', jkey .. ':unsuccessful')
end

-- The lease check of every move out of 'active', BullMQ's codes (RC):
-- 0 'token' holds the lock, JOB_NOT_EXIST, LOCK_NOT_EXIST (lapsed), or
-- LOCK_MISMATCH (another token holds it). Token "0" means "no lock", as in BullMQ.
local function check_lock(id, token)
    if token ~= '0' then
        local cur = rcall('GET', B .. id .. ':lock')
        if cur == token then return 0 end -- a locked job is never removed
        if rcall('EXISTS', B .. id) == 0 then return RC.JOB_NOT_EXIST end
        return cur and RC.LOCK_MISMATCH or RC.LOCK_NOT_EXIST
    end
    if rcall('EXISTS', B .. id) == 0 then return RC.JOB_NOT_EXIST end
    return 0
end

-- Check and release the lock, then take the job out of 'active'
-- (RC.JOB_NOT_IN_STATE if it was not there). On 0 the caller owns the job's next move. With a batch,
-- the lock's DEL and the SREM wait for the batch's flush (step.lua: a
-- batch is {locks, stalled, completed, failed, trims}, flushed once).
local function leave_active(id, token, batch)
    local rc = check_lock(id, token)
    if rc < 0 then return rc end
    if rcall('LREM', K.active, -1, id) == 0 then return RC.JOB_NOT_IN_STATE end
    if batch then
        batch.locks[#batch.locks + 1] = B .. id .. ':lock'
        batch.stalled[#batch.stalled + 1] = id
    else
        rcall('DEL', B .. id .. ':lock')
        rcall('SREM', K.stalled, id)
    end
    return 0
end

-- LN_KEEP_* -> BullMQ's removeOnComplete/removeOnFail (nil: not set, the
-- finishing worker's applies; false: kept whatever the worker's).
local function keep_opt(mode, value)
    if mode == '1' then return true end
    if mode == '4' then return false end
    if mode == '2' then return tonumber(value) end
    if mode == '3' then return {age = tonumber(value) / 1000} end
    return nil
end

-- removeOnComplete/removeOnFail -> count (-1 keeps all), age (s; -1 =
-- none), limit. An age of 0 is BullMQ's too: it keeps no finished job,
-- not even the one finishing now (its score is NOW, at the cut-off).
local function keep_spec(v)
    if v == true then return 0, -1, 0 end
    if type(v) == 'number' then return v, -1, 0 end
    if type(v) == 'table' then
        return tonumber(v.count) or -1, tonumber(v.age) or -1, tonumber(v.limit) or 1000
    end
    return -1, -1, 0
end

-- Remove the finished jobs of 'set' as old as age s or older (score <=
-- NOW - age: "keep those younger than age"), then all but the newest count.
-- A count of 2^32 or more (jobs.h allows any) trims none: no sorted set
-- holds that many, and Redis would refuse it as an index (a Lua number
-- past 1e17 reaches it written with an exponent).
local function trim_finished(set, count, age, limit)
    -- A failed job may still be a flow parent's pending child: its trim
    -- releases the parent (lib_flow.lua's trim_job); a completed one is no
    -- parent's pending child.
    local drop = set == 'failed' and cold().trim_job or delete_job_keys
    if age >= 0 then
        local old = rcall('ZRANGEBYSCORE', K[set], 0, int_str(NOW - age * 1000),
                          'LIMIT', 0, limit)
        for _, id in ipairs(old) do drop(id) end
        if #old > 0 then rcall('ZREM', K[set], unpack(old)) end
    end
    if count > 0 and count < 4294967296 then
        local extra = rcall('ZREVRANGE', K[set], count, -1)
        for _, id in ipairs(extra) do drop(id) end
        if #extra > 0 then rcall('ZREMRANGEBYRANK', K[set], 0, -(count + 1)) end
    end
end

-- Append one entry to the stacktrace JSON array, newest last, capped at
-- opts.stackTraceLimit. An empty array is written as "[]" (cjson would
-- write "{}"). An array cjson cannot read (JSON.stringify's "\ud83d"
-- escape of a lone surrogate, as in an error message cut inside an emoji)
-- gets the entry appended as text, the older entries kept as written (and
-- not trimmed to the limit: a failure adds one entry, attempts bound them).
local function push_stacktrace(jkey, opts, entry)
    local st = {}
    local raw = rcall('HGET', jkey, 'stacktrace')
    local lim = tonumber(opts.stackTraceLimit)
    if raw then
        local ok, t = pcall(cjson.decode, raw)
        if ok and type(t) == 'table' then
            st = t
        elseif lim ~= 0 and string.match(raw, '^%[.*%]$') then
            local sep = string.match(raw, '^%[%s*%]$') and '' or ','
            rcall('HSET', jkey, 'stacktrace', string.sub(raw, 1, -2) .. sep .. cjson.encode(entry) .. ']')
            return
        end
    end
    st[#st + 1] = entry
    if lim then
        while #st > lim do table.remove(st, 1) end
    end
    rcall('HSET', jkey, 'stacktrace', #st == 0 and '[]' or cjson.encode(st))
end

-- BullMQ's setDeduplicationKey: <base>de:<deid> names job id, for ttl ms
-- (0 = no expiry; keepLastIfActive never gives one).
local function set_de(dkey, id, ttl, keep)
    if ttl > 0 and not keep then rcall('SET', dkey, id, 'PX', ttl) else rcall('SET', dkey, id) end
end

-- BullMQ's requeueDeduplicatedJob: the next job a keepLastIfActive add
-- stored in <base>dn:<deid> while the holder was active (name, data,
-- opts, the id 'jid' it was given, and a parent and scheduler it may
-- name) becomes a job now, holding the deduplication id. Only a
-- finalization that found the key calls it (docs/internals/dedup-next.md).
local function dedup_requeue(deid)
    local nkey = B .. 'dn:' .. deid
    local f = rcall('HMGET', nkey, 'name', 'data', 'opts', 'pk', 'pd', 'pdk', 'rjk', 'jid')
    local counter = rcall('INCR', K.id) -- monotonic, used or not
    local id = f[8] or int_str(counter)
    local opts = decode_opts(f[3])
    local de = type(opts.de) == 'table' and opts.de or {}
    set_de(B .. 'de:' .. deid, id, tonumber(de.ttl) or 0, de.keepLastIfActive)
    local jkey = B .. id
    local delay, priority = tonumber(opts.delay) or 0, tonumber(opts.priority) or 0
    local name = f[1] or ''
    rcall('HSET', jkey, 'name', name, 'data', f[2] or '{}', 'opts', cjson.encode(opts),
          'timestamp', NOW_S, 'delay', delay, 'priority', priority)
    if f[4] then rcall('HSET', jkey, 'parentKey', f[4], 'parent', f[5] or 'null') end
    if f[7] then rcall('HSET', jkey, 'rjk', f[7]) end
    if de.id then rcall('HSET', jkey, 'deid', tostring(de.id)) end
    emit('added', 'jobId', id, 'name', name)
    if delay > 0 then
        add_delayed(id, NOW + delay)
    else
        push_ready(id, priority, opts.lifo == true)
        if not paused_or_maxed() then wake_workers() end
        emit('waiting', 'jobId', id)
    end
    if f[6] then rcall('SADD', f[6], jkey) end
    rcall('DEL', nkey)
end

-- A deduplication holder's finalization (completed, or failed for good),
-- BullMQ's removeDeduplicationKeyIfNeededOnFinalization then, when a next
-- job is stored, requeueDeduplicatedJob: 2 commands (PTTL, EXISTS), a GET
-- for a key without expiry, and the requeue only when there is one.
local function dedup_finalize(id, deid)
    local dkey = B .. 'de:' .. deid
    local pttl = rcall('PTTL', dkey)
    if pttl == 0 or (pttl == -1 and rcall('GET', dkey) == id) then rcall('DEL', dkey) end
    if rcall('EXISTS', B .. 'dn:' .. deid) == 1 then cold().dedup_requeue(deid) end
end

-- The finishing worker's retention for jobs whose own option is not set
-- (BullMQ's worker removeOnComplete / removeOnFail): keep_spec tables by
-- target, set by step.lua from its arguments; empty (keep all) elsewhere.
local worker_keep = {}

-- What completing a job needs from its hash, read when it was taken (a
-- worker holds the lock meanwhile, so it cannot change) and handed back by
-- the worker: 1 + 2 * attemptsMade + 2^21 * (removeOnComplete count + 2),
-- count -2 when the job has none (the C side puts the worker's there), or
-- 0 when the job needs the full path (a dedup id, an age-based
-- removeOnComplete, out-of-range numbers).
local HINT_ATM = 2097152 -- 2^21
local function finish_hint(opts, h)
    if h.deid or opts.parent then return 0 end -- (a flow child: lib_flow.lua)
    local count, age = -2, -1
    if opts.removeOnComplete ~= nil then count, age = keep_spec(opts.removeOnComplete) end
    local atm = math.floor(tonumber(h.atm or h.attemptsMade) or 0)
    if age >= 0 or count ~= math.floor(count) or count < -2 or count >= 1073741822
            or atm < 0 or atm >= 1048576 then
        return 0
    end
    return 1 + 2 * atm + HINT_ATM * (count + 2)
end

-- Move a job that has left 'active' to completed or failed ('target'),
-- BullMQ's moveToFinished steps 4-12. 'value' is the returnvalue JSON or
-- the failedReason text. With a batch, the ZADD and the trim wait for
-- the flush (step.lua). (A planned completion goes inline in step.lua.)
local function finish_job(id, target, value, batch)
    local jkey = B .. id
    local f = rcall('HMGET', jkey, 'opts', 'deid', 'atm', 'attemptsMade', 'parentKey', 'parent')
    local deid = f[2]
    local opts = decode_opts(f[1])
    local atm = (tonumber(f[3] or f[4]) or 0) + 1
    if deid then dedup_finalize(id, deid) end
    local keep
    if target == 'completed' then keep = opts.removeOnComplete else keep = opts.removeOnFail end
    if keep == nil then keep = worker_keep[target] end
    local count, age, limit = keep_spec(keep)
    if f[5] or f[6] then flow_on_finish(jkey, f[5], f[6], target, value) end
    if count == 0 then
        -- Removed as it finishes: a parent still waiting for it (a failed
        -- child its options did not take out) waits no more, as BullMQ's
        -- moveToFinished releases it (removeParentDependencyKey).
        if f[5] or f[6] then cold().flow_child_removed(jkey, f[5], f[6]) end
        delete_job_keys(id)
    else
        if target == 'completed' then
            rcall('HSET', jkey, 'atm', atm, 'returnvalue', value, 'finishedOn', NOW_S)
        else
            rcall('HSET', jkey, 'atm', atm, 'failedReason', value, 'finishedOn', NOW_S)
            push_stacktrace(jkey, opts, value)
            rcall('HDEL', jkey, 'defa')
        end
        if batch then
            local list = batch[target]
            list[#list + 1] = id
            if count > 0 or age >= 0 then
                batch.trims[target .. ':' .. count .. ':' .. age .. ':' .. limit] =
                    {target, count, age, limit}
            end
        else
            rcall('ZADD', K[target], NOW_S, id)
            trim_finished(target, count, age, limit)
        end
    end
    if target == 'completed' then
        emit('completed', 'jobId', id, 'returnvalue', value, 'prev', 'active')
    else
        emit('failed', 'jobId', id, 'failedReason', value, 'prev', 'active')
        if atm >= (tonumber(opts.attempts) or 0) then
            emit('retries-exhausted', 'jobId', id, 'attemptsMade', atm)
        end
    end
end

-- A failed attempt that will run again (BullMQ moveToDelayed for a backoff
-- delay > 0, retryJob without one), for a job that has left 'active'.
local function retry_job(id, reason, delay)
    local jkey = B .. id
    local opts = job_opts(jkey)
    rcall('HSET', jkey, 'failedReason', reason)
    push_stacktrace(jkey, opts, reason)
    rcall('HINCRBY', jkey, 'atm', 1)
    if delay > 0 then
        rcall('HSET', jkey, 'delay', delay)
        add_delayed(id, NOW + delay)
    else
        push_ready(id, job_priority(jkey), opts.lifo == true)
        if not paused_or_maxed() then wake_workers() end
        emit('waiting', 'jobId', id, 'prev', 'active')
    end
end

-- Back to delayed until 'at' (ms since the epoch; a past time is due now)
-- without using an attempt, for a job that has left 'active': BullMQ's
-- job.moveToDelayed (moveToDelayed with skipAttempt): 'atm' unchanged
-- ('ats' already counted the run), 'delay' = the ms from now, the delayed
-- score, a 'delayed' event and the delay marker.
local function finish_delayed(id, at)
    local delay = math.max(0, math.floor(at) - NOW)
    rcall('HSET', B .. id, 'delay', delay)
    add_delayed(id, NOW + delay)
end

-- The trace context BullMQ's telemetry stores in opts.tm: a JSON text of
-- the propagation carrier, {"traceparent":..., "tracestate":...}.
local function trace_of(opts)
    if type(opts.tm) == 'string' then
        local ok, c = pcall(cjson.decode, opts.tm)
        if ok and type(c) == 'table' then
            local tp, ts = c.traceparent, c.tracestate
            return type(tp) == 'string' and tp or false, type(ts) == 'string' and ts or false
        end
    end
    return false, false
end

local function field_map(flat)
    local h = {}
    for i = 1, #flat, 2 do h[flat[i]] = flat[i + 1] end
    return h
end

local function num(v)
    return math.floor(tonumber(v) or 0)
end

-- opts.backoff -> type (0 fixed, 1 exponential), delay ms, the jitter
-- (> 0, as a text: a Lua number reaches C as an integer) and the type's
-- name when neither fixed nor exponential; false for a jitter or name
-- there is not (jobs.h "Backoff").
local function backoff_of(opts)
    local b = opts.backoff
    if type(b) == 'number' then return 0, num(b), false, false end
    if type(b) ~= 'table' then return 0, 0, false, false end
    local j = b.jitter
    j = type(j) == 'number' and j > 0 and tostring(j) or false
    local t = b.type
    if type(t) ~= 'string' or t == 'fixed' or t == 'exponential' then t = false end
    return b.type == 'exponential' and 1 or 0, num(b.delay), j, t
end

-- opts.backoff from an add's two arguments (add.lua, flow.lua): the type
-- and "<delay ms>" or "<delay ms>:<jitter>" (BullMQ's backoff.jitter,
-- given only when > 0).
local function backoff_opt(btype, spec)
    local d, j = string.match(spec, '^([^:]*):(.*)$')
    local b = {type = btype, delay = tonumber(d or spec)}
    if j then b.jitter = tonumber(j) end
    return b
end

-- A job as the C side reads it, one flat array (redis.c, V_* indexes):
-- id, state, name, data, returnvalue, failedReason, progress, traceparent,
-- tracestate, priority, lifo, attempts, failed runs, attemptsStarted,
-- stalledCounter, backoff type (0 fixed, 1 exponential), backoff ms,
-- timestamp, run at, processedOn, finishedOn, backoff jitter and custom
-- type (backoff_of). false = nothing stored.
local function job_view(id, state, h)
    local opts = decode_opts(h.opts)
    local tp, ts = trace_of(opts)
    local btype, bdelay, bjitter, bname = backoff_of(opts)
    -- run_at: the due time while delayed, else when the job was first
    -- due (timestamp + opts.delay). The hash's 'delay' cannot tell: every
    -- promotion (BullMQ's too) sets it to 0, and a Node retry's backoff
    -- leaves no due time once promoted; opts.delay nobody changes.
    local created = num(h.timestamp)
    local run_at = created + math.max(0, num(opts.delay))
    if state == 'delayed' then
        local score = rcall('ZSCORE', K.delayed, id)
        if score then run_at = math.floor(tonumber(score) / 4096) end
    end
    -- BullMQ's attemptsMade counts the successful run too; lanes counts
    -- failed runs only.
    local failed_runs = num(h.atm or h.attemptsMade)
    if state == 'completed' then failed_runs = math.max(0, failed_runs - 1) end
    return {id, state, h.name or '', h.data or '{}', h.returnvalue or false,
            h.failedReason or false, h.progress or false, tp, ts,
            num(h.priority), opts.lifo == true and 1 or 0,
            math.max(1, num(opts.attempts)), failed_runs,
            num(h.ats), num(h.stc), btype, bdelay, created, run_at,
            num(h.processedOn), num(h.finishedOn), bjitter, bname}
end

-- A job just taken, as a worker reads it (redis_view.c, T_* indexes): id,
-- name, data, traceparent, tracestate, attemptsStarted, failed runs,
-- attempts, backoff type, backoff ms, finish hint, timeout ms
-- (opts.lanesTimeout, lanes' own key: BullMQ keeps it), backoff jitter
-- and custom type (backoff_of). Half a job_view: the
-- step returns one per job it takes.
local function taken_view(id, h)
    local opts = decode_opts(h.opts)
    local tp, ts = trace_of(opts)
    local btype, bdelay, bjitter, bname = backoff_of(opts)
    return {id, h.name or '', h.data or '{}', tp, ts, num(h.ats), num(h.atm or h.attemptsMade),
            math.max(1, num(opts.attempts)), btype, bdelay, finish_hint(opts, h),
            num(opts.lanesTimeout), bjitter, bname}
end

-- Move the next ready job to 'active': wait first (from its right end),
-- then prioritized. Returns its id, or nil.
local function pop_ready()
    local id = rcall('RPOPLPUSH', K.wait, K.active)
    if id and string.sub(id, 1, 2) == '0:' then
        rcall('LREM', K.active, 1, id) -- a BullMQ 4 marker entry
        id = rcall('RPOPLPUSH', K.wait, K.active)
    end
    if id then return id end
    local p = rcall('ZPOPMIN', K.prioritized)
    if not p[1] then
        rcall('DEL', K.pc)
        return nil
    end
    rcall('LPUSH', K.active, p[1])
    return p[1]
end

-- Rate limits (docs/internals/ratelimit.md). The limiter key counts the
-- jobs taken in the current window; the first take of a window gives it
-- the window's PX. The 9007199254740991 of BullMQ's queue.rateLimit fills
-- it for any max.
local LIMITER_FULL = '9007199254740991'

-- Set by requeue_limited: the ms the queue stays limited after a
-- "rate limited" outcome of this call; takes stop.
local limit_held = nil

-- The limit a take applies, BullMQ's rule: the global max (meta.max) if
-- set, else the worker's (lim_max, 0 = none); the worker's duration if it
-- has a limit, else the global one. nil when neither sets a max.
local function take_limit(m_max, m_dur, lim_max, lim_dur)
    local max_jobs = tonumber(m_max)
    if not max_jobs and lim_max > 0 then max_jobs = lim_max end
    if not max_jobs then return nil end
    local dur = lim_max > 0 and lim_dur or tonumber(m_dur) or 1000
    return max_jobs, math.floor(math.abs(dur))
end

-- A "rate limited" outcome (BullMQ's rateLimit(ms) + RateLimitError,
-- moveJobFromActiveToWait) for a job that has left 'active': the limiter
-- full for ms (0: left as it is), the job back at the front of its line
-- without using an attempt, and the call's takes stop for the limiter's
-- PTTL.
local function requeue_limited(id, ms)
    if ms > 0 then rcall('SET', K.limiter, LIMITER_FULL, 'PX', int_str(ms)) end
    push_front(id, job_priority(B .. id))
    if not paused_or_maxed() then wake_workers() end
    emit('waiting', 'jobId', id, 'prev', 'active')
    local ttl = rcall('PTTL', K.limiter)
    if ttl > 0 then limit_held = math.max(limit_held or 0, ttl) end
end

-- BullMQ's moveToActive for up to #tokens jobs: honour pause, global
-- concurrency and the rate limit (take_limit: global, or the worker's
-- lim_max per lim_dur ms), then take each job under the next token for
-- lock_ms. A job carrying a deferred failure ('defa', set by BullMQ's
-- stalled check) is failed here, as a Node worker would, without using a
-- token or counting against the limit. Returns the views of the jobs taken
-- and, when the rate limit stopped it, the ms until it lifts (else 0).
-- no_active true: no 'active' event (the worker's no_active_event).
local function take_jobs(tokens, lock_ms, worker, lim_max, lim_dur, no_active)
    if limit_held then return {}, limit_held end
    local m = rcall('HMGET', K.meta, 'paused', 'concurrency', 'max', 'duration')
    local paused, concurrency = m[1], tonumber(m[2])
    local max_jobs, duration = take_limit(m[3], m[4], lim_max or 0, tonumber(lim_dur) or 0)
    local taken, limited = {}, 0
    while #taken < #tokens do
        if max_jobs and (tonumber(rcall('GET', K.limiter)) or 0) >= max_jobs then
            local ttl = rcall('PTTL', K.limiter)
            if ttl > 0 then
                limited = ttl
                break
            end
            rcall('DEL', K.limiter)
        end
        if paused or (concurrency and rcall('LLEN', K.active) >= concurrency) then break end
        local id = pop_ready()
        if not id then break end
        local jkey = B .. id
        local f = rcall('HMGET', jkey, 'name', 'data', 'opts', 'ats', 'atm', 'attemptsMade',
                        'defa', 'deid')
        local h = {name = f[1], data = f[2], opts = f[3], ats = f[4], atm = f[5],
                   attemptsMade = f[6], defa = f[7], deid = f[8]}
        if max_jobs and not h.defa and rcall('INCR', K.limiter) == 1 then
            rcall('PEXPIRE', K.limiter, duration)
        end
        if not no_active then emit('active', 'jobId', id, 'prev', 'waiting') end
        h.processedOn, h.ats = NOW_S, (tonumber(h.ats) or 0) + 1
        if worker ~= '' then
            h.pb = worker
            rcall('HSET', jkey, 'processedOn', h.processedOn, 'ats', h.ats, 'pb', worker)
        else
            rcall('HSET', jkey, 'processedOn', h.processedOn, 'ats', h.ats)
        end
        if h.defa then
            rcall('LREM', K.active, -1, id)
            finish_job(id, 'failed', h.defa)
        else
            local token = tokens[#taken + 1]
            if token ~= '0' then rcall('SET', jkey .. ':lock', token, 'PX', lock_ms) end
            taken[#taken + 1] = taken_view(id, h)
        end
    end
    -- Took all it asked for: there may be more, the next idle worker (C or
    -- Node) looks too. Fewer means nothing is left to take right now
    -- (empty, paused, at the global concurrency or rate limit).
    if #taken > 0 and #taken == #tokens then wake_workers() end
    return taken, limited
end

-- BullMQ's per-minute metrics (jobs.h "Metrics", docs/internals/metrics.md):
-- count n jobs finished now into the hash <base>metrics:<kind> (count,
-- prevTS, prevCount) and its list <...>:data, newest first, keeping max
-- points: the steps of ln_job_metrics_record (metrics.c), which counting
-- a step's n outcomes at once gives exactly as n counts in a row would.
-- Bounded: at most max (<= 80640) points pushed, in LPUSHes of 7000.
local function collect_metrics(kind, n, max, now)
    local key = B .. 'metrics:' .. kind
    local count = rcall('HINCRBY', key, 'count', n) - n
    local prev = tonumber(rcall('HGET', key, 'prevTS'))
    if not prev then
        rcall('HSET', key, 'prevTS', int_str(now), 'prevCount', '0')
        return
    end
    local p = math.min(math.floor(now / 60000) - math.floor(prev / 60000), max)
    if p <= 0 then return end
    local points = {int_str(count - (tonumber(rcall('HGET', key, 'prevCount')) or 0))}
    for i = 2, p do points[i] = '0' end
    local data = key .. ':data'
    for c = 1, p, 7000 do
        rcall('LPUSH', data, unpack(points, c, math.min(c + 6999, p)))
    end
    rcall('LTRIM', data, 0, max - 1)
    rcall('HSET', key, 'prevCount', int_str(count), 'prevTS', int_str(now))
end

-- A worker step's metrics: its recorded (done code 0) completions ("c")
-- and final failures ("f"), the kind of outcome i being
-- ARGV[first + (i - 1) * width + 3].
local function collect_step_metrics(done_rc, first, width, max)
    local c, f = 0, 0
    for i = 1, #done_rc do
        if done_rc[i] == 0 then
            local kind = ARGV[first + (i - 1) * width + 3]
            if kind == 'c' then c = c + 1 elseif kind == 'f' then f = f + 1 end
        end
    end
    if c > 0 then collect_metrics('completed', c, max, NOW) end
    if f > 0 then collect_metrics('failed', f, max, NOW) end
end
