-- step.lua - one worker round trip, atomically: record finished runs,
-- renew leases, promote due delayed jobs, take new jobs. Every move out of
-- 'active' checks the lock token in this same script.
--   ARGV[1] lease ms   ARGV[2] worker name ("" = none, else stored as 'pb')
--   ARGV[3] ndone   ARGV[4] nrenew   ARGV[5] want
--   ARGV[6] the worker's rate limit max (0 none)   ARGV[7] its duration ms
--   ARGV[8] "1" to write the 'active' event of each taken job, "0" not, then
--   ndone groups of 6: id, token, kind ("c" complete, "r" retry, "f" fail,
--                      "d" delay, "l" rate limited), returnvalue JSON or
--                      failedReason, retry delay ms (for "d": the due
--                      time in ms; for "l": the ms to limit the queue;
--                      "0" for "c"), then "" (the full path) or, for a
--                      completion the C side could plan (see
--                      redis_step.c), the new 'atm', its delay slot then
--                      holding the removeOnComplete count ("-1" keeps all)
--   nrenew pairs: id, token
--   want fresh lock tokens, one per job to take
--   then metrics max points ("0" = off; lib.lua's collect_step_metrics)
--   last 4: the worker's retention for jobs without their own (lib.lua's
--           worker_keep): completed count, age ms, failed count, age ms
--           ("-1" = none: all "-1" keeps every job)
-- Returns one flat array, {done codes..., renew codes..., next due,
-- taken...} (ndone, nrenew, 1, then the jobs: no nested table for the
-- codes, see below): a done code is 0 or an RC of leave_active; a renew code 1 renewed, 0 lost; next due = ms
-- until the earliest delayed job is due (0 now, -1 none) or {ms until the
-- rate limit lifts} (lib.lua's take_jobs, requeue_limited). The taken
-- jobs follow either as lib.lua's taken_view tables (the take_jobs path)
-- or, from the batch take, flat: 6 values per job, id, name, data, opts
-- (raw JSON or false), ats (after this take), atm or attemptsMade (raw or
-- false; {that} when the job has a deduplication id). Flat because Redis
-- turns every nested table of a reply into an array by probing it for
-- 'err', 'ok' and four more fields first (about 1.5k instructions a
-- table). redis_step.c parses opts, so no cjson runs here per job; name
-- and opts are true when equal to the previous taken job's.
--
-- Per job, the common case costs 7 Redis calls: HMGET, XADD active, HSET,
-- SET lock at take; LREM, HSET, XADD completed at finish. Per call, not per
-- job: the locks' MGET, the flow keys' EXISTS, RPOP n + LPUSH of the taken ids,
-- DEL of the locks, SREM stalled (after an EXISTS), ZADD completed, the
-- meta HMGET, the promotion's ZRANGEBYSCORE, the marker, one XTRIM of the events
-- (the per-job XADDs go without MAXLEN). What each piece costs Redis:
-- docs/internals/redis-speed.md.
local lease, worker = ARGV[1], ARGV[2]
local ndone, nrenew, want = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local lim_max, lim_dur = tonumber(ARGV[6]), tonumber(ARGV[7])
local active_event = ARGV[8] == '1'
local DONE_ARGS, FIRST = 6, 8
local EVENTS, ACTIVE = K.events, K.active
local ARGV, tonumber = ARGV, tonumber -- (locals, not global lookups, per job)
local job_events = 0 -- the per-job XADDs (without MAXLEN: one XTRIM at the end)
local NARGV = #ARGV
if ARGV[NARGV - 3] ~= '-1' or ARGV[NARGV - 2] ~= '-1' then -- (two compares when none)
    local age = tonumber(ARGV[NARGV - 2])
    worker_keep.completed = {count = tonumber(ARGV[NARGV - 3]), age = age >= 0 and age / 1000 or nil}
end
if ARGV[NARGV - 1] ~= '-1' or ARGV[NARGV] ~= '-1' then
    local age = tonumber(ARGV[NARGV])
    worker_keep.failed = {count = tonumber(ARGV[NARGV - 1]), age = age >= 0 and age / 1000 or nil}
end

-- The body below runs once per call, in blocks rather than functions: a
-- closure made per call costs Redis about 3.5k instructions here (Lua 5.1
-- looks each upvalue up in the list of the open ones, and this chunk has
-- dozens), more than a job's share of most commands
-- (docs/internals/redis-speed.md).
-- The work the finishes share, flushed once after them (lib.lua's
-- leave_active and finish_job add to it): lock keys to delete, ids to drop
-- from 'stalled', ids to add to 'completed'/'failed' (scored NOW) and the
-- trims that must follow. (This block, the flush, the promotion, the next
-- due and the drained check were lib.lua helpers only this script used: as
-- blocks here they cost no closure per call, ~5k instructions in all.)
local batch = {locks = {}, stalled = {}, completed = {}, failed = {}, trims = {}}
local done_rc, nfinished, nfinal, a = {}, 0, 0, FIRST

-- 1. Record every finished run (done_rc[i]: 0 or a leave_active code;
-- nfinished: those recorded, the lease still held). First the keys of
-- every outcome in one pass: each job's hash key and lock key, and for the
-- completions the flow keys whose existence means children (BullMQ's
-- moveToFinished checks every job the same way: a job gains children while
-- active when a child naming it is added). Then one MGET (in chunks) of all
-- the locks (a token "0", no lock, matches none) and one EXISTS of the flow
-- keys; only when that finds some does lib_flow.lua's flow_refused run
-- (cold), giving the failure recorded instead ({[i] = {kind, reason}}).
if ndone > 0 then
    local jkeys, lock_keys, fkeys, nf = {}, {}, {}, 0
    for i = 1, ndone do
        local jkey = B .. ARGV[a + 1]
        jkeys[i], lock_keys[i] = jkey, jkey .. ':lock'
        if ARGV[a + 3] == 'c' then
            fkeys[nf + 1], fkeys[nf + 2] = jkey .. ':dependencies', jkey .. ':unsuccessful'
            nf = nf + 2
        end
        a = a + DONE_ARGS
    end
    local locks
    if ndone <= 500 then
        locks = rcall('MGET', unpack(lock_keys))
    else
        locks = {}
        for c = 1, ndone, 500 do
            local part = rcall('MGET', unpack(lock_keys, c, math.min(c + 499, ndone)))
            for k = 1, #part do locks[c + k - 1] = part[k] end
        end
    end
    local refused = {}
    if nf > 0 and rcall('EXISTS', unpack(fkeys)) > 0 then
        local at = {} -- the completions (rare: some job has children)
        for i = 1, ndone do
            if ARGV[FIRST + (i - 1) * DONE_ARGS + 3] == 'c' then at[#at + 1] = i end
        end
        refused = cold().flow_refused(FIRST, DONE_ARGS, at) -- (lib_flow.lua)
    end
    -- A completion the C side could plan at take (the new atm, and the
    -- removeOnComplete count in the delay slot; see redis_step.c) takes the
    -- fast half of lib.lua's finish_job for a job with no deduplication id
    -- and a count-only removeOnComplete, written here; every other outcome
    -- goes to its cold() helper.
    local blocks, bstalled, bcompleted = batch.locks, batch.stalled, batch.completed
    a = FIRST
    for i = 1, ndone do
        local id, token, kind, value = ARGV[a + 1], ARGV[a + 2], ARGV[a + 3], ARGV[a + 4]
        local r = refused[i]
        if r then kind, value = r[1], r[2] end
        local rc
        if kind == 'p' then -- children pending: nothing changes (lib_flow.lua)
            rc = RC.PENDING_DEPS
        elseif token ~= '0' and locks[i] == token then -- ours: no EXISTS needed
            if rcall('LREM', ACTIVE, '-1', id) == 0 then -- (a string: no number formatting)
                rc = RC.JOB_NOT_IN_STATE
            else
                rc = 0
                blocks[#blocks + 1] = lock_keys[i]
                bstalled[#bstalled + 1] = id
            end
        else
            rc = cold().leave_active(id, token, batch)
        end
        if rc == 0 then
            nfinished = nfinished + 1
            if kind == 'c' or kind == 'f' then nfinal = nfinal + 1 end
            local atm = ARGV[a + 6]
            if kind == 'c' and atm ~= '' then -- planned: it has left 'active' already
                local keep = ARGV[a + 5]
                if keep == '0' then
                    delete_job_keys(id)
                else
                    rcall('HSET', jkeys[i], 'atm', atm, 'returnvalue', value, 'finishedOn', NOW_S)
                    bcompleted[#bcompleted + 1] = id
                    if keep ~= '-1' then -- (age -1: none, as finish_job's keys spell it)
                        batch.trims['completed:' .. keep .. ':-1:0'] =
                            {'completed', tonumber(keep), -1, 0}
                    end
                end
                rcall('XADD', EVENTS, '*', 'event', 'completed', 'jobId', id, 'returnvalue', value,
                      'prev', 'active')
                job_events = job_events + 1
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
        a = a + DONE_ARGS
    end
end
local metrics_max = tonumber(ARGV[NARGV - 4])
if metrics_max > 0 then cold().collect_step_metrics(done_rc, FIRST, DONE_ARGS, metrics_max) end
do -- the flush. 'stalled' exists only while a BullMQ stalled check (a Node
    -- worker's) has marked jobs in it: one EXISTS spares the SREM of every
    -- finished id otherwise. In chunks: unpack stays far below Lua's stack limit.
    local locks, stalled = batch.locks, batch.stalled
    for c = 1, #locks, 500 do
        rcall('DEL', unpack(locks, c, math.min(c + 499, #locks)))
    end
    if #stalled > 0 and rcall('EXISTS', K.stalled) == 1 then
        for c = 1, #stalled, 500 do
            rcall('SREM', K.stalled, unpack(stalled, c, math.min(c + 499, #stalled)))
        end
    end
    for t = 1, 2 do
        local target = t == 1 and 'completed' or 'failed'
        local ids = batch[target]
        for c = 1, #ids, 500 do -- ZADD key NOW_S id NOW_S id ...
            local args, n = {}, 0
            for k = c, math.min(c + 499, #ids) do
                args[n + 1], args[n + 2] = NOW_S, ids[k]
                n = n + 2
            end
            rcall('ZADD', K[target], unpack(args))
        end
    end
    for _, t in pairs(batch.trims) do trim_finished(t[1], t[2], t[3], t[4]) end
end

-- 2. BullMQ's extendLocks: renewed (1) only while the lock still holds our
-- token, else 0.
local out = done_rc -- (the reply: done codes, renew codes, next due, taken)
for i = 1, nrenew do
    local id, token = ARGV[a + 1], ARGV[a + 2]
    local lkey = B .. id .. ':lock'
    if rcall('GET', lkey) == token then
        rcall('SET', lkey, token, 'PX', lease)
        rcall('SREM', K.stalled, id)
        out[ndone + i] = 1
    else
        out[ndone + i] = 0
    end
    a = a + 2
end

-- 3. Take up to want jobs, job k under the token ARGV[a + k]. A queue with
-- a rate limit or a global concurrency takes lib.lua's take_jobs (job by
-- job, its checks between jobs; its rows are taken_view tables); the
-- plain case pops in batches: up to n ready ids move to 'active' at once,
-- as n of lib.lua's pop_ready would: wait from its right end first (RPOP
-- n, then one LPUSH of them all: the same order in 'active' as n
-- RPOPLPUSHes), then prioritized (ZPOPMIN n); BullMQ 4 marker entries
-- ("0:...") are dropped. Each popped job then gets BullMQ's moveToActive:
-- its 6 values go to out (see the top of this file), or, carrying a
-- deferred failure ('defa', set by BullMQ's stalled check), it is failed
-- instead, as a Node worker would, and uses no token. A name or opts
-- equal to the previous job's goes back as true (jobs added together
-- share them), so the reply carries and the C side parses it once.
local DUE = ndone + nrenew + 1
out[DUE] = -1
local no_concurrency = false -- meta read by the take: no global concurrency
if want > 0 then
    -- Every delayed job due now to wait/prioritized (at most 1,000; the
    -- moves are cold(): most calls find none).
    local due = rcall('ZRANGEBYSCORE', K.delayed, 0, int_str((NOW + 1) * 4096 - 1), 'LIMIT', 0,
                      1000)
    if #due > 0 then cold().promote_ids(due) end
    local ntaken, limited = 0, 0
    local m = rcall('HMGET', K.meta, 'paused', 'concurrency', 'max', 'opts.maxLenEvents')
    no_concurrency = not m[2]
    max_events_cache = max_events_cache or m[4] or nil -- (lib.lua: the XTRIM's cap, read here)
    if m[2] or m[3] or lim_max > 0 or limit_held then
        local tokens = {}
        for i = 1, want do tokens[i] = ARGV[a + i] end
        local taken
        taken, limited = cold().take_jobs(tokens, lease, worker, lim_max, lim_dur, not active_event)
        for i = 1, #taken do out[#out + 1] = taken[i] end
        ntaken = #taken
    elseif not m[1] then
        local tok, nout, exhausted, popped, prev_name, prev_opts = a, DUE, false, 0, nil, nil
        -- Again only after 'defa' jobs or BullMQ 4 markers, and at most 1,000
        -- of them per call (the rest wait for the next steps), so a call's
        -- work stays bounded. Every round pops at least one entry unless
        -- exhausted.
        while tok - a < want and not exhausted and popped - (tok - a) < 1000 do
            local n = want - (tok - a)
            local ids = rcall('RPOP', K.wait, tostring(n)) or {}
            local ng = #ids
            for i = 1, ng do
                local c1, c2 = string.byte(ids[i], 1, 2) -- ("0:" = 48, 58; no substring made)
                if c1 == 48 and c2 == 58 then -- (rare: a copy without the markers)
                    local got = ids
                    ids = {}
                    for k = 1, ng do
                        c1, c2 = string.byte(got[k], 1, 2)
                        if c1 ~= 48 or c2 ~= 58 then ids[#ids + 1] = got[k] end
                    end
                    break
                end
            end
            popped = popped + ng
            if ng < n then
                local p = rcall('ZPOPMIN', K.prioritized, tostring(n - ng))
                for i = 1, #p, 2 do ids[#ids + 1] = p[i] end
                if ng + #p / 2 < n then
                    rcall('DEL', K.pc)
                    exhausted = true
                end
                popped = popped + #p / 2
            end
            if #ids > 0 then rcall('LPUSH', ACTIVE, unpack(ids)) end
            for i = 1, #ids do
                local id = ids[i]
                local jkey = B .. id
                local f = rcall('HMGET', jkey, 'name', 'data', 'opts', 'ats', 'atm', 'attemptsMade',
                                'defa', 'deid')
                if active_event then
                    rcall('XADD', EVENTS, '*', 'event', 'active', 'jobId', id, 'prev', 'waiting')
                    job_events = job_events + 1
                end
                local at = tonumber(f[4])
                local ats = at and int_str(at + 1) or '1'
                if worker ~= '' then
                    rcall('HSET', jkey, 'processedOn', NOW_S, 'ats', ats, 'pb', worker)
                else
                    rcall('HSET', jkey, 'processedOn', NOW_S, 'ats', ats)
                end
                if f[7] then
                    rcall('LREM', ACTIVE, '-1', id)
                    cold().finish_job(id, 'failed', f[7])
                else
                    tok = tok + 1
                    local token = ARGV[tok]
                    -- (GET: its reply is the old value, nil, where SET alone
                    -- replies a status that Redis makes a table {ok = 'OK'})
                    if token ~= '0' then
                        rcall('SET', jkey .. ':lock', token, 'PX', lease, 'GET')
                    end
                    local name, opts, atm = f[1] or '', f[3] or false, f[5] or f[6] or false
                    if f[8] then atm = {atm} end
                    out[nout + 1], out[nout + 2] = id, name == prev_name or name
                    out[nout + 3], out[nout + 4] = f[2] or '{}', opts == prev_opts or opts
                    out[nout + 5], out[nout + 6] = ats, atm
                    nout = nout + 6
                    prev_name, prev_opts = name, opts
                end
            end
        end
        ntaken = tok - a
        -- As take_jobs: took all it asked for, so there may be more; the
        -- next idle worker (C or Node) looks too.
        if ntaken > 0 and ntaken == want then wake_workers() end
    end
    if ntaken < want and limited > 0 then
        out[DUE] = {limited}
    elseif ntaken < want then -- ms until the earliest delayed job is due (0 now), or -1
        local first = rcall('ZRANGE', K.delayed, 0, 0, 'WITHSCORES')
        out[DUE] = first[2] and math.max(0, math.floor(tonumber(first[2]) / 4096) - NOW) or -1
    end
end
if limit_held then out[DUE] = {limit_held} end
-- Only recorded outcomes write anything: a refused one (the job is gone,
-- e.g. its queue obliterated) must not recreate 'events' and 'meta'.
-- 'drained' as BullMQ's moveToFinished writes it: only after a completion
-- or a final failure (a run retried or delayed writes none: moveToDelayed
-- and retryJob have no such check), when the step took nothing, is not
-- rate limited, and the queue has nothing waiting, prioritized, active or
-- delayed and is not paused (its fetchNextJob returns the next delayed
-- job's due time, the limit or the pause instead, and then no 'drained').
if nfinished > 0 then
    if nfinal > 0 and #out == DUE and out[DUE] == -1 and rcall('LLEN', K.wait) == 0
            and rcall('LLEN', K.active) == 0 and rcall('ZCARD', K.prioritized) == 0
            and rcall('ZCARD', K.delayed) == 0 and rcall('HEXISTS', K.meta, 'paused') == 0 then
        emit('drained')
    end
    if not no_concurrency then wake_if_slot_freed() end -- (it would read meta again)
end
if job_events > 0 then rcall('XTRIM', K.events, 'MAXLEN', '~', max_events()) end
return out
