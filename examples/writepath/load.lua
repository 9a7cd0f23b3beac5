-- load.lua - wrk script for the write path (experiment E3,
-- docs/experiments.md#e3): every request is a POST /comment on one of the
-- 10 hot posts by a random user (as the original benchmark's k6 script
-- comment.js does: HOT_POSTS=10).
--
--   wrk -t2 -c50 -d30s -s load.lua http://127.0.0.1:PORT
--
-- With the argument "traced" (wrk ... -- traced) every request carries a
-- sampled W3C traceparent, so the service records each one; probe.lua uses
-- that. At the end it prints one line "WRK_JSON {...}": request count, duration,
-- every kind of error, and latency mean/stdev/min/max/p50/p90/p95/p99 in
-- microseconds, for the bench to parse.

local hot_posts = 10
local users = 1000
traced = false -- global: probe.lua sets it
local counter = 0
-- thread_id: a global that setup() gives each thread (1, 2, ...)

local threads = {}

function setup(thread)
   thread:set("thread_id", #threads + 1)
   table.insert(threads, thread)
end

local function hex(n)
   local t = {}
   for i = 1, n do
      t[i] = string.format("%x", math.random(0, 15))
   end
   -- an all-zero id is invalid; make the last digit non-zero
   t[n] = string.format("%x", math.random(1, 15))
   return table.concat(t)
end

function init(args)
   for _, a in ipairs(args) do
      if a == "traced" then traced = true end
   end
   math.randomseed(os.time() * 1000 + (thread_id or 0))
end

function request()
   counter = counter + 1
   local post = math.random(1, hot_posts)
   local user = math.random(1, users)
   local body = string.format('{"post_id":%d,"user_id":%d,"body":"comment %d-%d"}',
                              post, user, thread_id or 0, counter)
   local headers = { ["Content-Type"] = "application/json" }
   if traced then
      headers["traceparent"] = "00-" .. hex(32) .. "-" .. hex(16) .. "-01"
   end
   return wrk.format("POST", "/comment", headers, body)
end

function done(summary, latency, requests)
   local e = summary.errors
   io.write(string.format(
      'WRK_JSON {"requests":%d,"duration_us":%d,"bytes":%d,' ..
      '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},' ..
      '"latency_us":{"mean":%.1f,"stdev":%.1f,"min":%d,"max":%d,' ..
      '"p50":%d,"p90":%d,"p95":%d,"p99":%d}}\n',
      summary.requests, summary.duration, summary.bytes,
      e.connect, e.read, e.write, e.status, e.timeout,
      latency.mean, latency.stdev, latency.min, latency.max,
      latency:percentile(50), latency:percentile(90),
      latency:percentile(95), latency:percentile(99)))
end
