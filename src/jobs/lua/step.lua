-- step.lua - one worker round trip, atomically: record finished runs,
-- renew leases, promote due delayed jobs, take new jobs. Every move out of
-- 'active' checks the lock token in this same script.
--   ARGV[1] lease ms   ARGV[2] worker name ("" = none, else stored as 'pb')
--   ARGV[3] ndone   ARGV[4] nrenew   ARGV[5] want, then
--   ndone groups of 6: id, token, kind ("c" complete, "r" retry, "f" fail,
--                      "d" delay), returnvalue JSON or failedReason,
--                      retry delay ms (for "d": the due time in ms),
--                      the finish hint the take returned (0 = none)
--   nrenew pairs: id, token
--   want fresh lock tokens, one per job to take
-- Returns {done codes, renew codes, next due, taken view, taken view, ...}:
-- a done code is 0 or an RC of leave_active; a renew code
-- 1 renewed, 0 lost; next due = ms until the earliest delayed job is due
-- (0 now, -1 none) or until the rate limit lifts.
local lease, worker = ARGV[1], ARGV[2]
local ndone, nrenew, want = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local a = 5

local done_rc, batch = {}, new_batch()
local nfinished = 0 -- outcomes recorded (the lease still held)
for i = 1, ndone do
    local id, token, kind, value = ARGV[a + 1], ARGV[a + 2], ARGV[a + 3], ARGV[a + 4]
    local rc = leave_active(id, token, batch)
    if rc == 0 then
        nfinished = nfinished + 1
        if kind == 'c' then
            finish_job(id, 'completed', value, batch, tonumber(ARGV[a + 6]))
        elseif kind == 'f' then
            finish_job(id, 'failed', value, batch)
        elseif kind == 'd' then
            finish_delayed(id, tonumber(ARGV[a + 5]))
        else
            retry_job(id, value, tonumber(ARGV[a + 5]))
        end
    end
    done_rc[i] = rc
    a = a + 6
end
flush_batch(batch) -- (every XADD caps the stream itself: MAXLEN ~)

-- BullMQ's extendLocks: renewed only while the lock still holds our token.
local renew_rc = {}
for i = 1, nrenew do
    local id, token = ARGV[a + 1], ARGV[a + 2]
    local lkey = B .. id .. ':lock'
    if rcall('GET', lkey) == token then
        rcall('SET', lkey, token, 'PX', lease)
        rcall('SREM', K.stalled, id)
        renew_rc[i] = 1
    else
        renew_rc[i] = 0
    end
    a = a + 2
end

local out = {done_rc, renew_rc, -1}
if want > 0 then
    promote_due()
    local tokens = {}
    for i = 1, want do tokens[i] = ARGV[a + i] end
    local taken, limited = take_jobs(tokens, lease, worker)
    for _, job in ipairs(taken) do out[#out + 1] = job end
    if #taken < want then out[3] = limited > 0 and limited or next_due_in() end
end
-- Only recorded outcomes write anything: a refused one (the job is gone,
-- e.g. its queue obliterated) must not recreate 'events' and 'meta'.
if nfinished > 0 then
    if #out == 3 then emit_drained_if_idle() end
    wake_if_slot_freed()
end
return out
