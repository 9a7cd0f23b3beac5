-- cancel_poll.lua - which of a lanes worker's jobs are no longer its own
-- (canceled by cancel.lua, or the lock lost), looked at only when the
-- queue's cancel mark <base>lanes:cancel changed since the last look, so
-- a poll with no cancel is one GET (docs/internals/cancel.md).
--   ARGV[1] the mark the last poll saw ("-1": none yet), then pairs of
--   id, lock token
-- Returns {mark} when it did not change, else {mark, gone...}: one
-- 1 (its lock is not that token any more) or 0 per job.
local mark = rcall('GET', B .. 'lanes:cancel') or '0'
if mark == ARGV[1] then return {mark} end
local out = {mark}
for i = 2, #ARGV, 2 do
    out[#out + 1] = rcall('GET', B .. ARGV[i] .. ':lock') == ARGV[i + 1] and 0 or 1
end
return out
