-- change_priority.lua - give a job a new priority (BullMQ's
-- job.changePriority): a waiting or prioritized job leaves its line and
-- joins the one of its new priority, at the back, or with lifo at the
-- front (RPUSH: first in wait; lanes' lifo score just below
-- priority * 2^32, as push_ready gives lifo adds, so it comes before the
-- jobs of that priority lanes added lifo too); a job in any other state
-- (delayed, waiting for children, active, completed, failed) only gets
-- the field, which it reads when it is ready again. The sorted sets are
-- looked at first, the wait list last, when the job is in none of them
-- (one LREM over it, as BullMQ's, for a waiting or an active job).
--   ARGV[1] id, ARGV[2] priority (0..2^21-1), ARGV[3] lifo ("1" / "0")
-- Returns 0 or RC.JOB_NOT_EXIST.
local id = ARGV[1]
local jkey = B .. id
local priority = tonumber(ARGV[2])
local lifo = ARGV[3] == '1'
if rcall('EXISTS', jkey) == 0 then return RC.JOB_NOT_EXIST end
local ready = rcall('ZREM', K.prioritized, id) > 0
if not ready then
    for _, s in ipairs({'delayed', 'waiting-children', 'completed', 'failed'}) do
        if rcall('ZSCORE', B .. s, id) then
            rcall('HSET', jkey, 'priority', priority)
            return 0
        end
    end
    ready = rcall('LREM', K.wait, -1, id) > 0
end
if ready then push_ready(id, priority, lifo) end
rcall('HSET', jkey, 'priority', priority)
if ready and not paused_or_maxed() then wake_workers() end
return 0
