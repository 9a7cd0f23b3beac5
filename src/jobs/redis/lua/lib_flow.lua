-- lib_flow.lua - flows, in BullMQ 6.7's layout (docs/internals/flows.md):
-- what a child's completion or final failure does to its parent. Embedded
-- after lib.lua's definitions, as far as a script uses them (embed-lua.sh);
-- lib.lua's finish_job calls flow_on_finish for a job that has a parent, so
-- other jobs pay nothing here.
--
-- A parent may sit in another queue than the script's (of the same hash
-- slot on a Cluster), so these take the parent's queue key
-- ("<prefix>:<queue>", BullMQ's queueKey) instead of using K.

-- XADD to the events of queue base qb ("<prefix>:<queue>:").
local function flow_emit(qb, name, ...)
    if qb == B then return emit(name, ...) end
    local cap = rcall('HGET', qb .. 'meta', 'opts.maxLenEvents') or '10000'
    rcall('XADD', qb .. 'events', 'MAXLEN', '~', cap, '*', 'event', name, ...)
end

local function flow_paused_or_maxed(qb)
    local m = rcall('HMGET', qb .. 'meta', 'paused', 'concurrency')
    if m[1] then return true end
    return m[2] ~= false and rcall('LLEN', qb .. 'active') >= (tonumber(m[2]) or 0)
end

-- BullMQ's moveParentToWait: delayed by the parent's own delay, else to
-- the front of wait (RPUSH) or into prioritized, with the marker.
local function flow_parent_to_wait(qk, pkey, pid)
    local qb = qk .. ':'
    local a = rcall('HMGET', pkey, 'priority', 'delay')
    local priority, delay = tonumber(a[1]) or 0, tonumber(a[2]) or 0
    if delay > 0 then
        local due = NOW + delay
        rcall('ZADD', qb .. 'delayed', int_str(due * 4096), pid)
        flow_emit(qb, 'delayed', 'jobId', pid, 'delay', int_str(due))
        local first = rcall('ZRANGE', qb .. 'delayed', 0, 0, 'WITHSCORES')
        if first[2] then rcall('ZADD', qb .. 'marker', tonumber(first[2]) / 4096, '1') end
        return
    end
    local held = flow_paused_or_maxed(qb)
    if priority == 0 then
        rcall('RPUSH', qb .. 'wait', pid)
    else
        local n = rcall('INCR', qb .. 'pc') % TWO32
        rcall('ZADD', qb .. 'prioritized', int_str(priority * TWO32 + n), pid)
    end
    if not held then rcall('ZADD', qb .. 'marker', 0, '0') end
    flow_emit(qb, 'waiting', 'jobId', pid, 'prev', 'waiting-children')
end

-- BullMQ's moveParentToWaitIfNeeded: only a parent in waiting-children.
local function flow_release(qk, pkey, pid)
    if rcall('EXISTS', pkey) == 0 then return end
    if rcall('ZREM', qk .. ':waiting-children', pid) == 1 then
        flow_parent_to_wait(qk, pkey, pid)
    end
end

local function flow_release_if_done(qk, pkey, pid)
    if rcall('SCARD', pkey .. ':dependencies') == 0 then flow_release(qk, pkey, pid) end
end

-- The parent of a child: its decoded 'parent' field (nil if bad), its
-- id and queue key (from the field, else split from parentKey).
local function flow_parent_of(pkey, raw)
    local p = {}
    if raw then
        local ok, t = pcall(cjson.decode, raw)
        if ok and type(t) == 'table' then p = t end
    end
    local pid, qk = p.id, p.queueKey
    if (not pid or not qk) and pkey then
        pid = string.match(pkey, '([^:]+)$')
        qk = string.sub(pkey, 1, #pkey - #pid - 1)
    end
    return p, tostring(pid), qk
end

-- BullMQ's handleChildFailureAndMoveParentToWait (fail-parent): a
-- deferred failure that the next worker to take the parent records.
local function flow_fail_parent(qk, pkey, pid, ckey)
    if rcall('EXISTS', pkey) == 0 then return end
    local defa = 'child ' .. ckey .. ' failed'
    local from = qk .. ':waiting-children'
    if not rcall('ZSCORE', from, pid) then
        from = nil
        if rcall('ZSCORE', qk .. ':delayed', pid) then
            from = qk .. ':delayed'
            rcall('HSET', pkey, 'delay', 0)
        end
    end
    if from then
        rcall('ZREM', from, pid)
        rcall('HSET', pkey, 'defa', defa)
        flow_parent_to_wait(qk, pkey, pid)
    elseif not rcall('ZSCORE', qk .. ':failed', pid) then
        rcall('HSET', pkey, 'defa', defa)
    end
end

-- Job jkey (with parentKey pkey and parent field raw) finished: target
-- 'completed' with returnvalue value, or 'failed' for good with reason
-- value. BullMQ's updateParentDepsIfNeeded / moveChildFromDependenciesIfNeeded.
flow_on_finish = function(jkey, pkey, raw, target, value)
    local p, pid, qk = flow_parent_of(pkey, raw)
    if not qk then return end
    pkey = qk .. ':' .. pid
    local deps = pkey .. ':dependencies'
    if target == 'completed' then
        if rcall('SREM', deps, jkey) == 1 then
            rcall('HSET', pkey .. ':processed', jkey, value)
            flow_release_if_done(qk, pkey, pid)
        end
    elseif p.fpof then
        if rcall('SREM', deps, jkey) == 1 then
            rcall('ZADD', pkey .. ':unsuccessful', NOW_S, jkey)
            flow_fail_parent(qk, pkey, pid, jkey)
        end
    elseif p.cpof then
        if rcall('SREM', deps, jkey) == 1 then
            rcall('HSET', pkey .. ':failed', jkey, value)
            flow_release(qk, pkey, pid)
        end
    elseif p.idof or p.rdof then
        if rcall('SREM', deps, jkey) == 1 then
            flow_release_if_done(qk, pkey, pid)
            if p.idof then rcall('HSET', pkey .. ':failed', jkey, value) end
        end
    end
end

-- Child jkey (parentKey pkey, parent field raw) is being removed: no
-- longer a dependency, and a parent left without one is released
-- (BullMQ's removeParentDependencyKey, as removeJob calls it).
local function flow_child_removed(jkey, pkey, raw)
    local _, pid, qk = flow_parent_of(pkey, raw)
    if not qk then return end
    pkey = qk .. ':' .. pid
    if rcall('SREM', pkey .. ':dependencies', jkey) == 1 then flow_release_if_done(qk, pkey, pid) end
end

-- A finished job trimmed by retention (count or age), as BullMQ's trims
-- take it (removeJob, not hard, its deduplication key kept): a flow parent
-- it still held as a pending dependency is released.
local function trim_job(id)
    local jkey = B .. id
    local f = rcall('HMGET', jkey, 'parentKey', 'parent')
    if f[1] or f[2] then flow_child_removed(jkey, f[1], f[2]) end
    delete_job_keys(id)
end

-- step.lua's answer once its EXISTS found children: for the outcomes
-- at[k] (ARGV groups of 'size' from 'first'), which the children refuse:
-- {'f', reason} with a failed fail-parent child (final, BullMQ's
-- UnrecoverableError), {'p'} with pending ones: the job stays active and
-- held, and the worker records the failure BullMQ's worker records for
-- moveToFinished's -4, retried by the job's backoff (jitter, custom
-- strategy), which only the worker can apply.
local function flow_refused(first, size, at)
    local out = {}
    for _, i in ipairs(at) do
        local id = ARGV[first + (i - 1) * size + 1]
        local jkey = B .. id
        if rcall('ZCARD', jkey .. ':unsuccessful') > 0 then
            out[i] = {'f', 'Cannot complete job ' .. id ..
                      ' because it has at least one failed child. moveToFinished'}
        elseif rcall('SCARD', jkey .. ':dependencies') > 0 then
            out[i] = {'p'}
        end
    end
    return out
end

-- A job removed for good by a drain (BullMQ's removeJob with 'hard', as
-- drain and clean call it): its deduplication key goes if it still names
-- the job, and it is no longer a dependency of its parent. A parent left
-- without one goes to wait when it is in another queue, and is removed
-- too (and so on up its own tree) when in this one, as BullMQ's
-- removeParentDependencyKey does; otherwise it would wait for it forever.
-- drop_parent_hard returns such a parent of this queue, taken out of
-- waiting-children, for drop_job_hard to remove next: a chain of parents
-- is walked in a loop, never by recursion, so no depth of flow overflows
-- Lua's stack. With cascade false (obliterate.lua) it stays in
-- waiting-children for its caller's own pass over that set.
local function drop_parent_hard(jkey, pkey, raw, cascade)
    local _, pid, qk = flow_parent_of(pkey, raw)
    if not qk then return nil end
    pkey = qk .. ':' .. pid
    if rcall('SREM', pkey .. ':dependencies', jkey) == 0 then return nil end
    if rcall('SCARD', pkey .. ':dependencies') > 0 then return nil end
    if qk .. ':' ~= B then
        flow_release(qk, pkey, pid)
        return nil
    end
    if cascade and rcall('ZREM', B .. 'waiting-children', pid) == 1 then return pid end
    return nil
end

-- Returns the jobs removed: 1, plus (unless shallow) the parents of this
-- queue that went with it up its chain. shallow: obliterate.lua, which
-- removes those parents in its own pass, within its per-call limit. At
-- most 256 parents go with one job (backend.h's LN__PARENT_CLIMB_MAX, as
-- SQLite's): the one above a longer chain (only hand-made chains are, a
-- flow is at most 64 deep) is released to wait instead, as a parent in
-- another queue is, so one call's work stays bounded.
local function drop_job_hard(id, shallow)
    local n = 0
    while id do
        local jkey = B .. id
        local f = rcall('HMGET', jkey, 'deid', 'parentKey', 'parent')
        local up = nil
        if f[2] or f[3] then up = drop_parent_hard(jkey, f[2], f[3], not shallow) end
        if f[1] and rcall('GET', B .. 'de:' .. f[1]) == id then
            rcall('DEL', B .. 'de:' .. f[1], B .. 'dn:' .. f[1])
        end
        delete_job_keys(id)
        n = n + 1
        if up and n > 256 then -- (the job and 256 parents went)
            flow_parent_to_wait(string.sub(B, 1, -2), B .. up, up)
            up = nil
        end
        id = up
    end
    return n
end

-- Jobs added with a parent that exists (add.lua's parent section from
-- ARGV[ps]: the prefix, then per job at 'pa' the parent's queue, id and
-- failure option bits): BullMQ's add scripts given a parentKey, and its
-- updateExistingJobsParent for a custom id that exists. The parent's
-- queue key, id, key and the bits of entry pa.
local function flow_parent_at(ps, pa)
    local qk = ARGV[ps] .. ':' .. ARGV[pa]
    local pid = ARGV[pa + 1]
    return qk, pid, qk .. ':' .. pid, tonumber(ARGV[pa + 2])
end

-- Whether job key jkey is an ancestor of pkey: its parentKey chain (made:
-- the parents earlier jobs of this add give), at most 1000 steps up
-- (LN_JOBS_REMOVE_TREE_MAX: a chain longer is not followed to its end).
local function flow_is_ancestor(jkey, pkey, made)
    local k = pkey
    for _ = 1, 1000 do
        local up = made[k]
        if up == nil then up = rcall('HGET', k, 'parentKey') end
        if not up then return false end
        if up == jkey then return true end
        k = up
    end
    return false
end

-- Before any write: each parent exists, or is a custom id an earlier job
-- of this add creates (as BullMQ's bulk add, one add after the other;
-- else RC.PARENT_MISSING), and a custom id that exists is not its own
-- parent (else RC.SELF_PARENT) nor its parent's ancestor (else
-- RC.PARENT_CYCLE: the two would wait for each other for good; BullMQ
-- does not check either), not the child of another parent that
-- exists (else RC.PARENT_TAKEN, BullMQ's -7; an earlier job of this add
-- with that id and another parent counts) nor running (else
-- RC.CHILD_RUNNING: the run's completion may be planned at take without
-- the parent, see flow_attach_existing). nil, or the code and the job's
-- index (groups of nf fields, the custom id first). Bounded: a few reads
-- per job, and for an existing custom id given a parent at most 1000
-- more (its parent's chain).
local function flow_add_check(ps, n, nf)
    local made = {} -- job key of an earlier custom id -> its parent key, or false
    for i = 1, n do
        local pa = ps + 3 * i - 2
        local custom = ARGV[2 + (i - 1) * nf]
        local jkey = custom ~= '' and B .. custom
        local pkey = false
        if ARGV[pa] ~= '' then
            pkey = select(3, flow_parent_at(ps, pa))
            if made[pkey] == nil and rcall('EXISTS', pkey) == 0 then
                return RC.PARENT_MISSING, i
            end
            if jkey then
                if pkey == jkey then return RC.SELF_PARENT, i end
                if (made[jkey] ~= nil or rcall('EXISTS', jkey) == 1) -- a new job has no child
                    and flow_is_ancestor(jkey, pkey, made) then
                    return RC.PARENT_CYCLE, i
                end
                local cur = made[jkey]
                if cur == nil then cur = rcall('HGET', jkey, 'parentKey') end
                if cur and cur ~= pkey and (made[cur] ~= nil or rcall('EXISTS', cur) == 1) then
                    return RC.PARENT_TAKEN, i
                end
                if rcall('EXISTS', jkey .. ':lock') == 1 then return RC.CHILD_RUNNING, i end
            end
        end
        -- the first job of an id sets what it is (a later one is a duplicate)
        if jkey and made[jkey] == nil then
            made[jkey] = pkey or (rcall('HGET', jkey, 'parentKey') or false)
        end
    end
    return nil
end

-- The failure options of bits 'flags' set in table t (BullMQ's short keys).
local function flow_flags_into(t, flags)
    if flags % 2 == 1 then t.fpof = true end
    if math.floor(flags / 2) % 2 == 1 then t.cpof = true end
    if math.floor(flags / 4) % 2 == 1 then t.idof = true end
    if math.floor(flags / 8) % 2 == 1 then t.rdof = true end
    return t
end

-- A new child's stored opts: parent {id, queue} and its failure options.
local function flow_child_opts(ps, pa, opts)
    local qk, pid, _, flags = flow_parent_at(ps, pa)
    opts.parent = {id = pid, queue = qk}
    flow_flags_into(opts, flags)
end

-- parentKey and parent on child jkey.
local function flow_link_fields(jkey, qk, pid, pkey, flags)
    rcall('HSET', jkey, 'parentKey', pkey, 'parent',
          cjson.encode(flow_flags_into({id = pid, queueKey = qk}, flags)))
end

-- A new child: linked, and a dependency of its parent.
local function flow_attach_new(ps, pa, jkey)
    local qk, pid, pkey, flags = flow_parent_at(ps, pa)
    flow_link_fields(jkey, qk, pid, pkey, flags)
    rcall('SADD', pkey .. ':dependencies', jkey)
end

-- Job jkey (id, of this queue) exists and is added again with a parent
-- (flow_add_check let it): a completed one gives its result to the parent
-- at once (released if no dependency is left), any other becomes a
-- dependency. Its opts get the parent too, so the fast completion
-- (redis_step.c plans none for a job whose opts has a parent) leaves it
-- to finish_job, which tells the parent.
local function flow_attach_existing(ps, pa, jkey, id)
    local qk, pid, pkey, flags = flow_parent_at(ps, pa)
    if rcall('ZSCORE', K.completed, id) then
        rcall('HSET', pkey .. ':processed', jkey, rcall('HGET', jkey, 'returnvalue') or 'null')
        flow_release_if_done(qk, pkey, pid)
    else
        rcall('SADD', pkey .. ':dependencies', jkey)
    end
    flow_link_fields(jkey, qk, pid, pkey, flags)
    local opts = decode_opts(rcall('HGET', jkey, 'opts'))
    opts.parent = {id = pid, queue = qk}
    rcall('HSET', jkey, 'opts', cjson.encode(flow_flags_into(opts, flags)))
end
