-- release.lua - give active jobs back unfinished, each to the front of its
-- line, when a worker stops (BullMQ moveJobFromActiveToWait); the run does
-- not count as started.
--   ARGV: pairs of id, lock token
-- Returns one code per job: 0, or an RC of leave_active.
local out = {}
local moved = false
for i = 1, #ARGV, 2 do
    local id = ARGV[i]
    local rc = leave_active(id, ARGV[i + 1])
    if rc == 0 then
        local jkey = B .. id
        rcall('HINCRBY', jkey, 'ats', -1)
        push_front(id, job_priority(jkey))
        emit('waiting', 'jobId', id, 'prev', 'active')
        moved = true
    end
    out[#out + 1] = rc
end
if moved and not paused_or_maxed() then wake_workers() end
return out
