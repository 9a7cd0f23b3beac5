-- step.lua - one worker round trip, atomically: record finished runs,
-- renew leases, promote due delayed jobs, take new jobs. Every move out of
-- 'active' checks the lock token in this same script.
--   ARGV[1] lease ms   ARGV[2] worker name ("" = none, else stored as 'pb')
--   ARGV[3] ndone   ARGV[4] nrenew   ARGV[5] want
--   ARGV[6] the worker's rate limit max (0 none)   ARGV[7] its duration ms
--   ARGV[8] "1" to write the 'active' event of each taken job, "0" not, then
--   ndone groups of 7: id, token, kind ("c" complete, "r" retry, "f" fail,
--                      "d" delay, "l" rate limited), returnvalue JSON or
--                      failedReason, retry delay ms (for "d": the due
--                      time in ms; for "l": the ms to limit the queue),
--                      then for a completion the C side could plan (see
--                      redis_step.c) the new 'atm' and the removeOnComplete
--                      count ("-1" keeps all), else "" and "" (the full path)
--   nrenew pairs: id, token
--   want fresh lock tokens, one per job to take
--   last: metrics max points ("0" = off; lib.lua's collect_step_metrics)
-- Returns {done codes, renew codes, next due, taken, taken, ...}: a done
-- code is 0 or an RC of leave_active; a renew code 1 renewed, 0 lost;
-- next due = ms until the earliest delayed job is due (0 now, -1 none) or
-- {ms until the rate limit lifts} (lib.lua's take_jobs, requeue_limited);
-- a taken job is {id, name, data, opts (raw
-- JSON or false), ats (after this take), atm or attemptsMade (raw or
-- false), 1 if it has a deduplication id else 0} (redis_step.c parses
-- opts, so no cjson runs here per job); name and opts are true when equal
-- to the previous taken job's.
--
-- Per job, the common case costs 7 Redis calls: HMGET, XADD active, HSET,
-- SET lock at take; LREM, HSET, XADD completed at finish. Per call, not per
-- job: the locks' MGET, RPOP n + LPUSH of the taken ids, DEL of the locks,
-- SREM stalled, ZADD completed, the drained check, one XTRIM of the events
-- (the per-job XADDs go without MAXLEN). What each piece costs Redis:
-- docs/internals/redis-speed.md.
local lease, worker = ARGV[1], ARGV[2]
local ndone, nrenew, want = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local lim_max, lim_dur = tonumber(ARGV[6]), tonumber(ARGV[7])
local active_event = ARGV[8] == '1'
local DONE_ARGS, FIRST = 7, 8

-- The lock key and current token of every job the finishes below check,
-- one MGET (in chunks) for all: lock_keys[i], locks[i] (token or false).
-- Token "0" (no lock) reads nothing.
local function read_done_locks(first)
    local keys, at, lock_keys = {}, {}, {}
    for i = 1, ndone do
        local a = first + (i - 1) * DONE_ARGS
        lock_keys[i] = B .. ARGV[a + 1] .. ':lock'
        if ARGV[a + 2] ~= '0' then
            keys[#keys + 1] = lock_keys[i]
            at[#keys] = i
        end
    end
    local cur = {}
    for c = 1, #keys, 500 do
        local part = rcall('MGET', unpack(keys, c, math.min(c + 499, #keys)))
        for k = 1, #part do cur[at[c + k - 1]] = part[k] end
    end
    return lock_keys, cur
end

-- The per-job events of the fast paths: XADD without MAXLEN (3 arguments
-- fewer for Redis to parse and the trim check skipped per entry); the end
-- of the script caps the stream once, as BullMQ's own XTRIM does.
local job_events = 0
local function job_event(name, id, key, value, prev)
    rcall('XADD', K.events, '*', 'event', name, 'jobId', id, key, value, 'prev', prev)
    job_events = job_events + 1
end

-- A completion planned at take (atm and keep passed as strings): the fast
-- half of lib.lua's finish_job for a job with no deduplication id and a
-- count-only removeOnComplete. It has left 'active' already.
local function complete_planned(id, value, atm, keep, batch)
    if keep == '0' then
        delete_job_keys(id)
    else
        rcall('HSET', B .. id, 'atm', atm, 'returnvalue', value, 'finishedOn', NOW_S)
        batch.completed[#batch.completed + 1] = id
        if keep ~= '-1' then -- (age -1: none, as finish_job's keys spell it)
            batch.trims['completed:' .. keep .. ':-1:0'] = {'completed', tonumber(keep), -1, 0}
        end
    end
    job_event('completed', id, 'returnvalue', value, 'active')
end

-- Record every finished run; returns the done codes, the next ARGV index
-- and how many outcomes were recorded (the lease still held).
local function record_done(first, batch)
    local lock_keys, locks = read_done_locks(first)
    local refused = flow_refusals(first, ndone, DONE_ARGS) -- flow parents (lib_flow.lua)
    local done_rc, nfinished = {}, 0
    for i = 1, ndone do
        local a = first + (i - 1) * DONE_ARGS
        local id, token, kind, value = ARGV[a + 1], ARGV[a + 2], ARGV[a + 3], ARGV[a + 4]
        if refused[i] then kind, value = refused[i][1], refused[i][2] end
        local rc
        if kind == 'p' then -- children pending: nothing changes (lib_flow.lua)
            rc = RC.PENDING_DEPS
        elseif token ~= '0' and locks[i] == token then -- ours: no EXISTS needed
            if rcall('LREM', K.active, '-1', id) == 0 then -- (a string: no number formatting)
                rc = RC.JOB_NOT_IN_STATE
            else
                rc = 0
                batch.locks[#batch.locks + 1] = lock_keys[i]
                batch.stalled[#batch.stalled + 1] = id
            end
        else
            rc = cold().leave_active(id, token, batch)
        end
        if rc == 0 then
            nfinished = nfinished + 1
            local atm = ARGV[a + 6]
            if kind == 'c' and atm ~= '' then
                complete_planned(id, value, atm, ARGV[a + 7], batch)
            elseif kind == 'c' then
                cold().finish_job(id, 'completed', value, batch)
            elseif kind == 'f' then
                cold().finish_job(id, 'failed', value, batch)
            elseif kind == 'd' then
                cold().finish_delayed(id, tonumber(ARGV[a + 5]))
            elseif kind == 'l' then
                cold().requeue_limited(id, tonumber(ARGV[a + 5]))
            else
                cold().retry_job(id, value, tonumber(ARGV[a + 5]))
            end
        end
        done_rc[i] = rc
    end
    return done_rc, first + ndone * DONE_ARGS, nfinished
end

-- BullMQ's extendLocks: renewed only while the lock still holds our token.
local function renew_leases(first)
    local renew_rc = {}
    for i = 1, nrenew do
        local a = first + (i - 1) * 2
        local id, token = ARGV[a + 1], ARGV[a + 2]
        local lkey = B .. id .. ':lock'
        if rcall('GET', lkey) == token then
            rcall('SET', lkey, token, 'PX', lease)
            rcall('SREM', K.stalled, id)
            renew_rc[i] = 1
        else
            renew_rc[i] = 0
        end
    end
    return renew_rc, first + nrenew * 2
end

-- Up to n ready ids moved to 'active' at once, as n of lib.lua's pop_ready
-- would: wait from its right end first (RPOP n, then one LPUSH of them all:
-- the same order in 'active' as n RPOPLPUSHes), then prioritized (ZPOPMIN
-- n). BullMQ 4 marker entries ("0:...") are dropped. Returns the ids,
-- whether both were exhausted (fewer left than asked) and how many entries
-- were popped (markers too).
local function pop_ready_batch(n)
    local ids, got = {}, rcall('RPOP', K.wait, tostring(n)) or {}
    for _, id in ipairs(got) do
        local c1, c2 = string.byte(id, 1, 2) -- ("0:" = 48, 58; no substring made)
        if c1 ~= 48 or c2 ~= 58 then ids[#ids + 1] = id end
    end
    local popped, exhausted = #got, false
    if #got < n then
        local p = rcall('ZPOPMIN', K.prioritized, tostring(n - #got))
        for i = 1, #p, 2 do ids[#ids + 1] = p[i] end
        popped = popped + #p / 2
        if popped < n then
            rcall('DEL', K.pc)
            exhausted = true
        end
    end
    if #ids > 0 then rcall('LPUSH', K.active, unpack(ids)) end
    return ids, exhausted, popped
end

-- Take one popped job (BullMQ's moveToActive for it) under token; a job
-- carrying a deferred failure ('defa', set by BullMQ's stalled check) is
-- failed instead, as a Node worker would. Returns its taken row, or nil.
-- A name or opts equal to the previous row's goes back as true (jobs added
-- together share them), so the reply carries and the C side parses it once.
local prev_name, prev_opts
local function take_popped(id, token)
    local jkey = B .. id
    local f = rcall('HMGET', jkey, 'name', 'data', 'opts', 'ats', 'atm', 'attemptsMade',
                    'defa', 'deid')
    if active_event then
        rcall('XADD', K.events, '*', 'event', 'active', 'jobId', id, 'prev', 'waiting')
        job_events = job_events + 1
    end
    local n = tonumber(f[4])
    local ats = n and int_str(n + 1) or '1'
    if worker ~= '' then
        rcall('HSET', jkey, 'processedOn', NOW_S, 'ats', ats, 'pb', worker)
    else
        rcall('HSET', jkey, 'processedOn', NOW_S, 'ats', ats)
    end
    if f[7] then
        rcall('LREM', K.active, '-1', id)
        cold().finish_job(id, 'failed', f[7])
        return nil
    end
    if token ~= '0' then rcall('SET', jkey .. ':lock', token, 'PX', lease) end
    local name, opts = f[1] or '', f[3] or false
    local row = {id, name == prev_name or name, f[2] or '{}', opts == prev_opts or opts, ats,
                 f[5] or f[6] or false, f[8] and 1 or 0}
    prev_name, prev_opts = name, opts
    return row
end

-- Take up to #tokens jobs. A queue with a rate limit or a global
-- concurrency takes lib.lua's take_jobs (job by job, its checks between
-- jobs); the plain case pops in batches. Returns the taken rows and, when
-- the rate limit stopped it, the ms until it lifts (else 0).
local no_concurrency = false -- meta read by take_batch: no global concurrency
local function take_batch(tokens)
    local m = rcall('HMGET', K.meta, 'paused', 'concurrency', 'max')
    no_concurrency = not m[2]
    if m[2] or m[3] or lim_max > 0 or limit_held then
        return cold().take_jobs(tokens, lease, worker, lim_max, lim_dur, not active_event)
    end
    if m[1] then return {}, 0 end
    local taken, exhausted, popped = {}, false, 0
    -- Again only after 'defa' jobs or BullMQ 4 markers, and at most 1,000 of
    -- them per call (the rest wait for the next steps), so a call's work
    -- stays bounded. Every round pops at least one entry unless exhausted.
    while #taken < #tokens and not exhausted and popped - #taken < 1000 do
        local ids, n
        ids, exhausted, n = pop_ready_batch(#tokens - #taken)
        popped = popped + n
        for _, id in ipairs(ids) do
            local row = take_popped(id, tokens[#taken + 1])
            if row then taken[#taken + 1] = row end
        end
    end
    -- As take_jobs: took all it asked for, so there may be more; the next
    -- idle worker (C or Node) looks too.
    if #taken > 0 and #taken == #tokens then wake_workers() end
    return taken, 0
end

local batch = new_batch()
local done_rc, a, nfinished = record_done(FIRST, batch)
local metrics_max = tonumber(ARGV[#ARGV])
if metrics_max > 0 then cold().collect_step_metrics(done_rc, FIRST, DONE_ARGS, metrics_max) end
flush_batch(batch) -- (every XADD caps the stream itself: MAXLEN ~)
local renew_rc
renew_rc, a = renew_leases(a)

local out = {done_rc, renew_rc, -1}
if want > 0 then
    promote_due()
    local tokens = {}
    for i = 1, want do tokens[i] = ARGV[a + i] end
    local taken, limited = take_batch(tokens)
    for _, job in ipairs(taken) do out[#out + 1] = job end
    if #taken < want then out[3] = limited > 0 and {limited} or next_due_in() end
end
if limit_held then out[3] = {limit_held} end
-- Only recorded outcomes write anything: a refused one (the job is gone,
-- e.g. its queue obliterated) must not recreate 'events' and 'meta'.
if nfinished > 0 then
    if #out == 3 then emit_drained_if_idle() end
    if not no_concurrency then wake_if_slot_freed() end -- (it would read meta again)
end
if job_events > 0 then rcall('XTRIM', K.events, 'MAXLEN', '~', max_events()) end
return out
