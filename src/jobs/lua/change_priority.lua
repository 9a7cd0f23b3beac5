-- change_priority.lua - give a job a new priority (BullMQ's
-- job.changePriority): a waiting or prioritized job leaves its line and
-- joins the one of its new priority, at the back, or with lifo at the
-- front (RPUSH: first in wait; lanes' lifo score just below
-- priority * 2^32, as push_ready gives lifo adds, so it comes before the
-- jobs of that priority lanes added lifo too); a delayed job, or a flow
-- parent waiting for its children, only gets the field. The wait list is
-- looked at last, when the job is in none of the sets (one LREM over it,
-- as BullMQ's).
--   ARGV[1] id, ARGV[2] priority (0..2^21-1), ARGV[3] lifo ("1" / "0")
-- Returns 0, RC.JOB_NOT_EXIST, or the state that refuses the change.
local id = ARGV[1]
local jkey = B .. id
local priority = tonumber(ARGV[2])
local lifo = ARGV[3] == '1'
if rcall('EXISTS', jkey) == 0 then return RC.JOB_NOT_EXIST end
local ready = rcall('ZREM', K.prioritized, id) > 0
if not ready then
    -- delayed or waiting for children: the field, read when it is ready
    if rcall('ZSCORE', K.delayed, id) or rcall('ZSCORE', B .. 'waiting-children', id) then
        rcall('HSET', jkey, 'priority', priority)
        return 0
    end
    for _, s in ipairs({'completed', 'failed'}) do
        if rcall('ZSCORE', B .. s, id) then return s end
    end
    ready = rcall('LREM', K.wait, -1, id) > 0
end
if not ready then return 'active' end
push_ready(id, priority, lifo)
rcall('HSET', jkey, 'priority', priority)
if not paused_or_maxed() then wake_workers() end
return 0
