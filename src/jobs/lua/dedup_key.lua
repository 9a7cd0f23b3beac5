-- dedup_key.lua - a deduplication id's key de:<id> (BullMQ's
-- queue.getDeduplicationJobId and queue.removeDeduplicationKey).
--   ARGV[1] "get" or "remove", ARGV[2] the deduplication id
-- get: the holder's job id, or false; remove: 1 deleted, 0 none.
local dkey = B .. 'de:' .. ARGV[2]
if ARGV[1] == 'get' then return rcall('GET', dkey) end
return rcall('DEL', dkey)
