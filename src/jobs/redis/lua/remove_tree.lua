-- remove_tree.lua - remove a job and its subtree of children in every
-- queue (BullMQ removeJob with removeChildren), all or nothing
-- (docs/internals/flows.md "Removing a tree").
--   ARGV[1] id
--   ARGV[2] most entries the subtree may have
--   ARGV[3] '1': only the job's unprocessed children and theirs, the job
--           kept (BullMQ's removeUnprocessedChildren)
-- A first pass only reads: it walks the subtree (a parent's :processed,
-- :failed, :unsuccessful and :dependencies, as BullMQ's removeJobChildren
-- takes them), counting each entry before it reads a set, so it never
-- reads more than the cap, and refuses a held job. The second pass removes
-- in BullMQ's order and with its writes (a parent of the subtree released
-- to wait when its last pending child goes, then removed from there).
-- With ARGV[3] '1' a job's children are only its :dependencies that are
-- not in their queue's failed set, at every level (BullMQ's
-- ignoreProcessed), and the job itself is neither checked for a lock nor
-- removed; a locked child is skipped with its subtree (it stays the
-- parent's dependency: BullMQ's ignoreLocked); a parent left without
-- dependencies goes to wait as above.
-- Returns {0, removed}, {RC.JOB_NOT_EXIST}, {RC.SCHEDULED} (the job is a
-- scheduler's current iteration), {RC.LOCKED, key} (a worker holds that
-- job; never with ARGV[3] '1') or {RC.TREE_TOO_BIG}.
local id, cap, pending_only = ARGV[1], tonumber(ARGV[2]), ARGV[3] == '1'
local root = B .. id
if rcall('EXISTS', root) == 0 then return {RC.JOB_NOT_EXIST} end
if not pending_only and is_current_iteration(id, root) then return {RC.SCHEDULED} end

-- The store's prefix ("<prefix>:", queue names have no ':'), so a key of
-- it splits into queue and id even when the id has ':'; a key of another
-- prefix splits at its last ':', as BullMQ does.
local PFX = string.match(B, '^(.*:)[^:]*:$')
local function split(key)
    if string.sub(key, 1, #PFX) == PFX then
        local q = string.match(key, '^([^:]*):', #PFX + 1)
        if q then return PFX .. q .. ':', string.sub(key, #PFX + #q + 2) end
    end
    local jid = string.match(key, '.*:(.*)') or key
    return string.sub(key, 1, #key - #jid), jid
end

-- The unprocessed children of jkey: its dependencies not failed (each
-- counted before the failed check); nil when they are more than room.
local function pending_children(jkey, room)
    if rcall('SCARD', jkey .. ':dependencies') > room then return nil end
    local out = {}
    for _, k in ipairs(rcall('SMEMBERS', jkey .. ':dependencies')) do
        local qb, jid = split(k)
        if not rcall('ZSCORE', qb .. 'failed', jid) then out[#out + 1] = k end
    end
    return out
end

-- The children key jkey records, in BullMQ's order; nil when they are
-- more than room.
local function children(jkey, room)
    if pending_only then return pending_children(jkey, room) end
    local n = rcall('HLEN', jkey .. ':processed') + rcall('HLEN', jkey .. ':failed')
        + rcall('ZCARD', jkey .. ':unsuccessful') + rcall('SCARD', jkey .. ':dependencies')
    if n > room then return nil end
    local out = {}
    if n == 0 then return out end
    for _, k in ipairs(rcall('HKEYS', jkey .. ':processed')) do out[#out + 1] = k end
    for _, k in ipairs(rcall('HKEYS', jkey .. ':failed')) do out[#out + 1] = k end
    for _, k in ipairs(rcall('ZRANGE', jkey .. ':unsuccessful', 0, -1)) do out[#out + 1] = k end
    for _, k in ipairs(rcall('SMEMBERS', jkey .. ':dependencies')) do out[#out + 1] = k end
    return out
end

-- Pass 1: the subtree's keys (each once), no job of it locked; with
-- pending_only a locked child is kept with its subtree (BullMQ's
-- ignoreLocked): marked done, so pass 2 neither removes nor enters it.
local seen, order, used, done = {[root] = true}, {root}, 1, {}
local i = 1
while i <= #order do
    local k = order[i]
    local held = (i > 1 or not pending_only) and rcall('EXISTS', k .. ':lock') == 1
    if held and not pending_only then return {RC.LOCKED, k} end
    if held then
        done[k] = true
    else
        local kids = children(k, cap - used)
        if not kids then return {RC.TREE_TOO_BIG} end
        used = used + #kids
        for _, c in ipairs(kids) do
            if not seen[c] then
                seen[c] = true
                order[#order + 1] = c
            end
        end
    end
    i = i + 1
end

-- XADD to queue base qb's events, its cap read or set (BullMQ's
-- getOrSetMaxEvents).
local function emit_in(qb, name, ...)
    local cap_ev = rcall('HGET', qb .. 'meta', 'opts.maxLenEvents')
    if not cap_ev then
        cap_ev = '10000'
        rcall('HSET', qb .. 'meta', 'opts.maxLenEvents', cap_ev)
    end
    rcall('XADD', qb .. 'events', 'MAXLEN', '~', cap_ev, '*', 'event', name, ...)
end

-- BullMQ's removeJobFromAnyState: the first state holding the job.
local function leave_state(qb, jid)
    for _, s in ipairs({'completed', 'waiting-children', 'delayed', 'failed', 'prioritized'}) do
        if rcall('ZREM', qb .. s, jid) == 1 then return s end
    end
    for _, s in ipairs({'wait', 'paused', 'active'}) do
        if rcall('LREM', qb .. s, 1, jid) == 1 then return s end
    end
    return 'unknown'
end

-- Child jkey of parent (pqb, pid) in the subtree goes: BullMQ's
-- removeParentDependencyKey with the parent given, which releases the
-- parent to wait when its last pending child goes.
local function leave_parent(jkey, pqb, pid)
    local deps = pqb .. pid .. ':dependencies'
    if rcall('SREM', deps, jkey) == 0 or rcall('SCARD', deps) > 0 then return end
    if rcall('ZREM', pqb .. 'waiting-children', pid) == 0 then return end
    rcall('RPUSH', pqb .. 'wait', pid)
    if not flow_paused_or_maxed(pqb) then rcall('ZADD', pqb .. 'marker', 0, '0') end
    emit_in(pqb, 'waiting', 'jobId', pid, 'prev', 'waiting-children')
end

-- Pass 2: BullMQ's removeJobWithChildren, depth first. The root leaves
-- its own parent as ln_jobs_remove does (lib_flow.lua).
local removed = 0
local drop
-- The children of jkey (job jid of queue base qb) that pass 1 took, each
-- with its subtree.
local function drop_children(jkey, qb, jid)
    for _, c in ipairs(children(jkey, cap)) do
        if seen[c] and not done[c] then
            local cqb, cid = split(c)
            drop(cqb, cid, qb, jid)
        end
    end
end
function drop(qb, jid, pqb, pid)
    local jkey = qb .. jid
    done[jkey] = true
    if pending_only and jkey == root then
        drop_children(jkey, qb, jid)
        return
    end
    if pqb then
        leave_parent(jkey, pqb, pid)
    else
        local f = rcall('HMGET', jkey, 'parentKey', 'parent')
        if f[1] or f[2] then flow_child_removed(jkey, f[1], f[2]) end
    end
    drop_children(jkey, qb, jid)
    local prev = leave_state(qb, jid)
    local deid = rcall('HGET', jkey, 'deid')
    if deid and rcall('GET', qb .. 'de:' .. deid) == jid then
        rcall('DEL', qb .. 'de:' .. deid, qb .. 'dn:' .. deid)
    end
    if rcall('DEL', jkey, jkey .. ':logs', jkey .. ':dependencies', jkey .. ':processed',
             jkey .. ':failed', jkey .. ':unsuccessful') > 0 then
        emit_in(qb, 'removed', 'jobId', jid, 'prev', prev)
        removed = removed + 1
    end
end
drop(B, id, nil, nil)
return {0, removed}
