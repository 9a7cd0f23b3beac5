# shellcheck shell=sh
# shellcheck disable=SC2154 # url, q, tmp, peer, cli, ...: set by the driver
# interop/cases/metrics.sh - the interop cases of per-minute metrics.
# Sourced by tests/interop/test_redis_interop.sh, which has the helpers (js, fail,
# events_start, ...) and the variables (url, q, tmp, peer, cli) they use.
# Case X is the function case_X; tests/redis.cmake lists the names.

#   metrics    per-minute metrics both ways: `lanes worker --metrics-points`
#              runs C-added jobs and Node's queue.getMetrics('completed') and
#              ('failed') count them, and after prevTS is moved 3 minutes
#              back, the next C-run job's point is there too (newest first:
#              zeros, then the jobs of prevTS's minute); a Node Worker with
#              metrics {maxDataPoints} runs jobs and `lanes jobs metrics`
#              reads its counts and points.
case_metrics() {
    need_cli
    # A C worker counts; Node's getMetrics reads it.
    for n in plain plain plain plain doomed; do
        "$cli" jobs "$url" add "$q-a" "$n" '{}' >/dev/null || fail "lanes jobs add"
    done
    "$cli" worker "$url" "$q-a" --exit-when-empty --metrics-points 60 \
        --exec sh -c 'test "$LANES_JOB_NAME" != doomed' >/dev/null 2>"$tmp/c.err" ||
        fail "lanes worker: $(cat "$tmp/c.err")"
    js metrics "$q-a" >"$tmp/ma.json" || fail "Node getMetrics"
    python3 - "$tmp/ma.json" <<'PY' || fail "Node's getMetrics after C workers: $(cat "$tmp/ma.json")"
import json, sys
d = json.load(open(sys.argv[1]))
c, f = d["completed"], d["failed"]
if not (c["meta"]["count"] == 4 and f["meta"]["count"] == 1):
    raise SystemExit("check failed: %r" % (d,))
if not (c["meta"]["prevTS"] > 1e12 and f["meta"]["prevTS"] > 1e12):
    raise SystemExit("check failed: %r" % (d,))
if not (sum(c["data"]) == c["meta"]["prevCount"] and c["count"] == len(c["data"]) <= 1):
    raise SystemExit("check failed: %r" % (d,))
PY
    # prevTS 3 minutes back (mid-minute): the next job pushes 4, then zeros.
    back=$(( ($(date +%s) / 60 - 3) * 60000 + 30000 ))
    redis-cli -u "$url" hset "bull:$q-a:metrics:completed" prevTS "$back" prevCount 0 >/dev/null
    redis-cli -u "$url" del "bull:$q-a:metrics:completed:data" >/dev/null
    "$cli" jobs "$url" add "$q-a" plain '{}' >/dev/null || fail "lanes jobs add"
    "$cli" worker "$url" "$q-a" --exit-when-empty --metrics-points 60 --exec true >/dev/null 2>&1 ||
        fail "lanes worker (2)"
    js metrics "$q-a" >"$tmp/ma2.json" || fail "Node getMetrics (2)"
    python3 - "$tmp/ma2.json" <<'PY' || fail "Node's data points after a C worker: $(cat "$tmp/ma2.json")"
import json, sys
c = json.load(open(sys.argv[1]))["completed"]
if not (c["meta"]["count"] == 5 and c["meta"]["prevCount"] == 4):
    raise SystemExit("check failed: %r" % (c,))
if not (c["data"] in ([0, 0, 4], [0, 0, 0, 4]) and c["count"] == len(c["data"])):
    raise SystemExit("check failed: %r" % (c,))
PY
    echo "Node's getMetrics counts the jobs C workers completed and failed, with their minute points"
    # A Node worker counts; lanes reads it.
    for n in plain plain doomed; do js add-one "$q-b" "$n" '{}' >/dev/null || fail "Node add"; done
    js work "$q-b" 1 "" '{"metrics":{"maxDataPoints":60}}' >/dev/null || fail "Node worker"
    "$cli" jobs "$url" metrics "$q-b" --json >"$tmp/mb.json" || fail "lanes jobs metrics"
    python3 - "$tmp/mb.json" <<'PY' || fail "lanes jobs metrics after a Node worker: $(cat "$tmp/mb.json")"
import json, sys
d = json.load(open(sys.argv[1]))
c, f = d["completed"], d["failed"]
if not (c["count"] == 2 and f["count"] == 1 and c["prevTS"] > 1e12):
    raise SystemExit("check failed: %r" % (d,))
if not (sum(c["data"]) == c["prevCount"] and c["points"] == len(c["data"])):
    raise SystemExit("check failed: %r" % (d,))
PY
    back=$(( ($(date +%s) / 60 - 2) * 60000 + 30000 ))
    redis-cli -u "$url" hset "bull:$q-b:metrics:completed" prevTS "$back" prevCount 0 >/dev/null
    redis-cli -u "$url" del "bull:$q-b:metrics:completed:data" >/dev/null
    js add-one "$q-b" plain '{}' >/dev/null || fail "Node add"
    js work "$q-b" 1 "" '{"metrics":{"maxDataPoints":60}}' >/dev/null || fail "Node worker (2)"
    "$cli" jobs "$url" metrics "$q-b" --type completed --json >"$tmp/mb2.json" ||
        fail "lanes jobs metrics (2)"
    python3 - "$tmp/mb2.json" <<'PY' || fail "lanes' points after a Node worker: $(cat "$tmp/mb2.json")"
import json, sys
d = json.load(open(sys.argv[1]))
if not (list(d) == ["completed"]):
    raise SystemExit("check failed: %r" % (d,))
c = d["completed"]
if not (c["count"] == 3 and c["prevCount"] == 2 and c["data"] in ([0, 2], [0, 0, 2])):
    raise SystemExit("check failed: %r" % (c,))
PY
    echo "lanes jobs metrics reads the counts and points of a Node worker with metrics on"
}
