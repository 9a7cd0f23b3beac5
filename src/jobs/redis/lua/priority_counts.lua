-- priority_counts.lua - BullMQ's getCountsPerPriority: for each priority
-- of ARGV (at most 1000), LLEN wait for 0, else ZCOUNT of prioritized over
-- [p * 2^32, (p + 1) * 2^32 - 1], BullMQ's ranges.
local out = {}
for i = 1, #ARGV do
    local p = tonumber(ARGV[i])
    if p == 0 then
        out[i] = rcall('LLEN', K.wait)
    else
        out[i] = rcall('ZCOUNT', K.prioritized, int_str(p * TWO32), int_str((p + 1) * TWO32 - 1))
    end
end
return out
