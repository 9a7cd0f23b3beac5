-- dedup_key.lua - a deduplication id's key de:<id> (BullMQ's
-- queue.getDeduplicationJobId and queue.removeDeduplicationKey).
--   ARGV[1] "get" or "remove", ARGV[2] the deduplication id
-- get: the holder's job id, or false; remove: 1 deleted, 0 none. A key
-- without expiry whose job is gone is stale (an add takes it over, as
-- BullMQ's stale key recovery does): none holds the id, and a remove
-- deletes it and says 0.
local dkey = B .. 'de:' .. ARGV[2]
local holder = rcall('GET', dkey)
local stale = holder and rcall('PTTL', dkey) == -1 and rcall('EXISTS', B .. holder) == 0
if ARGV[1] == 'get' then return not stale and holder end
local n = rcall('DEL', dkey)
return stale and 0 or n
