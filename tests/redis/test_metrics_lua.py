#!/usr/bin/env python3
"""test_metrics_lua.py SRC_DIR LIBLANES_JOBS - the per-minute metrics
arithmetic three ways, with a fake clock (docs/internals/metrics.md):

  - lanes' Lua (src/jobs/redis/lua/lib.lua's collect_metrics, what step.lua runs),
    evaluated by Redis with the times given here;
  - stock BullMQ 6.7.0's collectMetrics.lua (tests/interop/node_modules,
    read at test time), called once per job as moveToFinished does;
  - ln_job_metrics_record, the C function the SQLite store uses (through
    ctypes on liblanes-jobs), with the list kept here.

The same sequence of counts at fake times (minute boundaries, empty
minutes, a clock behind prevTS, a gap longer than the points kept, a push
of more than one LPUSH chunk of 7000) must leave the same hash and list.
Redis at $LANES_TEST_REDIS_URL; exit 77 (skipped) without it or without
the npm packages.
"""
import ctypes
import os
import subprocess
import sys

src, lib_path = sys.argv[1], sys.argv[2]
url = os.environ.get("LANES_TEST_REDIS_URL")
bullmq = os.path.join(src, "tests/interop/node_modules/bullmq/dist/esm/commands/includes")
if not url:
    print("skipped [redis]: LANES_TEST_REDIS_URL not set")
    sys.exit(77)
if not os.path.isdir(bullmq):
    print("skipped [node]: no tests/interop/node_modules (npm ci there)")
    sys.exit(77)


def read(path):
    with open(path) as f:
        return f.read()


LUA = os.path.join(src, "src/jobs/redis/lua")
LANES = (read(os.path.join(LUA, "codes.lua")) + read(os.path.join(LUA, "lib.lua")) +
         "\ncollect_metrics('completed', tonumber(ARGV[1]), tonumber(ARGV[2]), "
         "tonumber(ARGV[3]))\nreturn 1\n")
BULL = ("local rcall = redis.call\n" + read(os.path.join(bullmq, "batches.lua")) +
        read(os.path.join(bullmq, "collectMetrics.lua")).replace('--- @include "batches"', "") +
        "\nfor i = 1, tonumber(ARGV[1]) do collectMetrics(KEYS[1] .. 'metrics:completed', "
        "KEYS[1] .. 'metrics:completed:data', ARGV[3], ARGV[2]) end\nreturn 1\n")


def redis(*args):
    r = subprocess.run(["redis-cli", "-u", url, *args], capture_output=True, text=True,
                       timeout=30)
    if r.returncode != 0 or r.stdout.startswith("ERR") or "(error)" in r.stdout:
        raise SystemExit("redis-cli %s: %s %s" % (args[0], r.stdout[:300], r.stderr))
    return r.stdout.split("\n")[:-1]


class Metrics(ctypes.Structure):
    _fields_ = [("count", ctypes.c_uint64), ("prev_ts", ctypes.c_int64),
                ("prev_count", ctypes.c_uint64), ("data", ctypes.c_void_p),
                ("ndata", ctypes.c_size_t), ("npoints", ctypes.c_uint64)]


jobs = ctypes.CDLL(lib_path)
record = jobs.ln_job_metrics_record
record.restype = ctypes.c_uint
record.argtypes = [ctypes.POINTER(Metrics), ctypes.c_uint64, ctypes.c_int64, ctypes.c_uint,
                   ctypes.POINTER(ctypes.c_uint64)]


class CSide:
    def __init__(self):
        self.m = Metrics()
        self.points = []

    def count(self, n, now, mx):
        first = ctypes.c_uint64(0)
        p = record(ctypes.byref(self.m), n, now, mx, ctypes.byref(first))
        self.points = ([0] * (p - 1) + [first.value] if p else []) + self.points
        self.points = self.points[:mx]

    def state(self):
        h = {"count": str(self.m.count)}
        if self.m.prev_ts:
            h.update(prevTS=str(self.m.prev_ts), prevCount=str(self.m.prev_count))
        return h, [str(x) for x in self.points]


def stored(base):
    flat = redis("hgetall", base + "metrics:completed")
    points = redis("lrange", base + "metrics:completed:data", "0", "-1")
    return dict(zip(flat[0::2], flat[1::2])), [p for p in points if p != ""]


T = 29000000 * 60000  # a minute boundary in 2025
MIN = 60000
SCENARIOS = {
    "boundaries": (5, [(3, T + 5000), (2, T + 59999), (1, T + MIN), (3, T + MIN + 30000),
                       (1, T + 4 * MIN + 10), (2, T + 2 * MIN), (1, T + 104 * MIN),
                       (4, T + 104 * MIN + 1), (1, T + 105 * MIN), (7, T + 105 * MIN + 59000),
                       (1, T + 200 * MIN), (1, T + 203 * MIN)]),
    "chunks": (8000, [(2, T), (1, T + 7005 * MIN), (3, T + 7006 * MIN),
                      (1, T + 30000 * MIN)]),
}

prefix = "lmetricslua%d:" % os.getpid()
checks = 0
try:
    for name, (mx, events) in SCENARIOS.items():
        lanes_base, bull_base = prefix + name + ":l:", prefix + name + ":b:"
        c = CSide()
        for i, (n, now) in enumerate(events):
            redis("eval", LANES, "1", lanes_base, str(n), str(mx), str(now))
            redis("eval", BULL, "1", bull_base, str(n), str(now), str(mx))
            c.count(n, now, mx)
            got_l, got_b, got_c = stored(lanes_base), stored(bull_base), c.state()
            what = "%s, step %d (%d jobs at T%+d min)" % (name, i + 1, n, (now - T) // MIN)
            if got_l != got_b:
                raise SystemExit("FAIL %r" % ((what, "lanes", got_l[0], got_l[1][:12], "bullmq",
                                               got_b[0], got_b[1][:12]),))
            if got_c != got_b:
                raise SystemExit("FAIL %r" % ((what, "C", got_c[0], got_c[1][:12], "bullmq",
                                               got_b[0], got_b[1][:12]),))
            checks += 1
        print("ok   %s: %d steps, lanes' Lua, BullMQ's Lua and the C function agree "
              "(%d points at the end)" % (name, len(events), len(got_b[1])))
finally:
    for k in redis("--scan", "--pattern", prefix + "*"):
        redis("del", k)
print("%d passed, 0 failed" % checks)
