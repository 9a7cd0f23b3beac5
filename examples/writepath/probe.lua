-- probe.lua - wrk script for the unloaded response-boundary probe: the
-- requests of load.lua, each with a sampled traceparent, one at a time
-- with a pause between them so neither the service nor the worker has a
-- backlog (the original benchmark's "single request, no load" traces,
-- docs/experiments.md#e3).
--
--   wrk -t1 -c1 -d2s -s probe.lua http://127.0.0.1:PORT

local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
dofile(here .. "load.lua")
traced = true

local pause_ms = 50

function delay()
   return pause_ms
end
