-- flow.lua - add a flow, all or nothing, as BullMQ's FlowProducer stores
-- one (addParentJob for nodes with children, the add scripts with parent
-- arguments for children; docs/internals/flows.md). Nodes come in
-- pre-order, parents before their children; each may be in another queue
-- (of this script's hash slot on a Cluster: the C side checked).
--   ARGV[1] number of nodes n (1..LN_FLOW_NODES_MAX; 1 only with a parent), then n groups of 20:
--     queue base ("<prefix>:<queue>:"), parent (1-based node index, 0 =
--     root), number of children, failure options (bits: 1 fpof, 2 cpof,
--     4 idof, 8 rdof), custom id ("" = the queue's id counter), name, data,
--     delay ms, priority, attempts, backoff type ("", "fixed",
--     "exponential", a custom name), backoff ms ("<ms>[:<jitter>]"),
--     lifo ("1"/"0"), remove-on-complete mode
--     and value, remove-on-fail mode and value (as add.lua), traceparent,
--     tracestate, timeout ms
--   then, when the root has a parent (BullMQ's opts.parent on the root):
--     its queue base, its id, the root's failure options (bits as above)
-- Returns {0, id, id, ...} (one id per node), {1, i} when node i's custom
-- id exists, or {2, 1} when the root's parent does not exist (nothing
-- written).
local NF = 20
local n = tonumber(ARGV[1])

local function arg(i, k) return ARGV[1 + (i - 1) * NF + k] end
local rp_base, rp_id, rp_flags = ARGV[2 + n * NF], ARGV[3 + n * NF], tonumber(ARGV[4 + n * NF])
if rp_base and rcall('EXISTS', rp_base .. rp_id) == 0 then return {2, 1} end

-- Refuse before any write: custom ids that exist or repeat.
local seen = {}
for i = 1, n do
    local custom = arg(i, 5)
    if custom ~= '' then
        local key = arg(i, 1) .. custom
        if seen[key] or rcall('EXISTS', key) == 1 then return {1, i} end
        seen[key] = true
    end
end

-- BullMQ's stored opts of node i (public names, short keys), with its
-- parent {id, queue} and failure options.
local function node_opts(i, custom, pid, pqk, flags)
    local delay, priority = tonumber(arg(i, 8)), tonumber(arg(i, 9))
    local opts = {attempts = tonumber(arg(i, 10))}
    if delay > 0 then opts.delay = delay end
    if priority > 0 then opts.priority = priority end
    if arg(i, 13) == '1' then opts.lifo = true end
    if custom ~= '' then opts.jobId = custom end
    if arg(i, 11) ~= '' then opts.backoff = backoff_opt(arg(i, 11), arg(i, 12)) end
    opts.removeOnComplete = keep_opt(arg(i, 14), arg(i, 15))
    opts.removeOnFail = keep_opt(arg(i, 16), arg(i, 17))
    if arg(i, 18) ~= '' then
        local carrier = {traceparent = arg(i, 18)}
        if arg(i, 19) ~= '' then carrier.tracestate = arg(i, 19) end
        opts.tm = cjson.encode(carrier)
    end
    local timeout = tonumber(arg(i, 20))
    if timeout > 0 then opts.lanesTimeout = timeout end
    if pid then
        opts.parent = {id = pid, queue = pqk}
        if flags % 2 == 1 then opts.fpof = true end
        if math.floor(flags / 2) % 2 == 1 then opts.cpof = true end
        if math.floor(flags / 4) % 2 == 1 then opts.idof = true end
        if math.floor(flags / 8) % 2 == 1 then opts.rdof = true end
    end
    return opts
end

-- A ready or delayed node of queue base qb, as add.lua enqueues (the
-- script's own queue through lib.lua, others directly).
local function enqueue(qb, id, delay, priority, lifo)
    if qb == B then
        if delay > 0 then return add_delayed(id, NOW + delay) end
        push_ready(id, priority, lifo)
        if not paused_or_maxed() then wake_workers() end
        return emit('waiting', 'jobId', id)
    end
    if delay > 0 then
        local due = NOW + delay
        rcall('ZADD', qb .. 'delayed', int_str(due * 4096), id)
        flow_emit(qb, 'delayed', 'jobId', id, 'delay', int_str(due))
        local first = rcall('ZRANGE', qb .. 'delayed', 0, 0, 'WITHSCORES')
        if first[2] then rcall('ZADD', qb .. 'marker', tonumber(first[2]) / 4096, '1') end
        return
    end
    if priority > 0 then
        local c = rcall('INCR', qb .. 'pc') % TWO32
        rcall('ZADD', qb .. 'prioritized', int_str(priority * TWO32 + (lifo and -c or c)), id)
    else
        rcall(lifo and 'RPUSH' or 'LPUSH', qb .. 'wait', id)
    end
    if not flow_paused_or_maxed(qb) then rcall('ZADD', qb .. 'marker', 0, '0') end
    flow_emit(qb, 'waiting', 'jobId', id)
end

local ids, keys = {}, {}
for i = 1, n do
    local qb, parent, nchildren = arg(i, 1), tonumber(arg(i, 2)), tonumber(arg(i, 3))
    if rcall('HEXISTS', qb .. 'meta', 'opts.maxLenEvents') == 0 then
        rcall('HSET', qb .. 'meta', 'opts.maxLenEvents', '10000')
    end
    local custom = arg(i, 5)
    local counter = rcall('INCR', qb .. 'id')
    local id = custom ~= '' and custom or tostring(counter)
    local jkey = qb .. id
    ids[i], keys[i] = id, jkey
    local pid, pqk, pkey
    local flags = tonumber(arg(i, 4))
    if parent > 0 then
        pid, pkey = ids[parent], keys[parent]
        pqk = string.sub(arg(parent, 1), 1, -2)
    elseif rp_base then -- the root of a flow with a parent: as add.lua's child
        pid, pkey, pqk, flags = rp_id, rp_base .. rp_id, string.sub(rp_base, 1, -2), rp_flags
    end
    local delay, priority = tonumber(arg(i, 8)), tonumber(arg(i, 9))
    rcall('HSET', jkey, 'name', arg(i, 6), 'data', arg(i, 7),
          'opts', cjson.encode(node_opts(i, custom, pid, pqk, flags)),
          'timestamp', int_str(NOW), 'delay', delay, 'priority', priority)
    if pid then
        local p = {id = pid, queueKey = pqk}
        if flags % 2 == 1 then p.fpof = true end
        if math.floor(flags / 2) % 2 == 1 then p.cpof = true end
        if math.floor(flags / 4) % 2 == 1 then p.idof = true end
        if math.floor(flags / 8) % 2 == 1 then p.rdof = true end
        rcall('HSET', jkey, 'parentKey', pkey, 'parent', cjson.encode(p))
        rcall('SADD', pkey .. ':dependencies', jkey)
    end
    flow_emit(qb, 'added', 'jobId', id, 'name', arg(i, 6))
    if nchildren > 0 then
        rcall('ZADD', qb .. 'waiting-children', NOW_S, id)
        flow_emit(qb, 'waiting-children', 'jobId', id)
    else
        enqueue(qb, id, delay, priority, arg(i, 13) == '1')
    end
end
local out = {0}
for i = 1, n do out[i + 1] = ids[i] end
return out
