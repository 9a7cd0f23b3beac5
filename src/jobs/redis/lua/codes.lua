-- codes.lua - the return codes the scripts and the C side share, the ONE
-- source of both: scripts/embed-lua.sh puts this file first in every
-- script body (before lib.lua) and turns each `NAME = value, -- meaning`
-- line below into LN__RC_NAME of the generated redis_codes.h. -1, -2, -3,
-- -6 and -8 are BullMQ's own (its ErrorCode enum), so they mean the same to
-- BullMQ's scripts; -5 is lanes' meaning.
local RC = {
    JOB_NOT_EXIST = -1, -- no such job
    LOCK_NOT_EXIST = -2, -- the job's lock is missing (it lapsed)
    JOB_NOT_IN_STATE = -3, -- the job is not in the state the move needs
    LOCKED = -5, -- remove: a worker holds the job's lock
    LOCK_MISMATCH = -6, -- another lock token holds the job
    SCHEDULED = -8, -- remove, cancel: a job scheduler's pending iteration (BullMQ's -8)
    SCHEDULER_ID_TAKEN = -10, -- schedule: the next iteration's job id exists (BullMQ's -10)
    TREE_TOO_BIG = -100, -- remove tree: more entries than its cap (lanes' own)
    PARENT_TAKEN = -7, -- add: the job is the child of another parent (BullMQ's -7)
    FAILED_CHILDREN = -9, -- wait_children: a fail-parent child failed (BullMQ's -9)
    PARENT_MISSING = -12, -- add: no such parent job (BullMQ's -5, which is LOCKED here)
    CHILD_RUNNING = -13, -- add: an existing job given a parent is running (locked)
    SELF_PARENT = -14, -- add: an existing job given itself as its parent
    PENDING_DEPS = -15, -- step: children refuse a completion; the job stays held
    PARENT_CYCLE = -16, -- add: an existing job given one of its descendants as its parent
}
