-- promote_some.lua - one step of BullMQ's queue.promoteJobs(): the first
-- ARGV[1] (1..1000) delayed jobs by due time, due or not, to prioritized
-- or the back of wait by their priority, delay 0, event "waiting" with
-- prev "delayed" (promote_ids, as the workers' own promotion), then the
-- delay marker for what is left. Returns how many moved.
local ids = rcall('ZRANGE', K.delayed, 0, tonumber(ARGV[1]) - 1)
if #ids == 0 then return 0 end
promote_ids(ids)
update_delay_marker()
return #ids
