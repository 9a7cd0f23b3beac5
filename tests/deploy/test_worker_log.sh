#!/bin/sh
# test_worker_log.sh - the lines of `lanes worker` say what happened
# (docs/cli.md, "lanes worker"):
#   - text lines start with the time, RFC 3339 UTC with milliseconds
#   - every --log-format json line names the queue
#   - --verbose: a failure to be retried says "retry N/M in D ms" (the
#     job's exponential backoff: 200 ms, then 400 ms), the last one "for
#     good"; exit 76 is "for good" at once
#   - a job cut short by a graceful stop (SIGTERM, --grace 0) is
#     "released", not "canceled"
#
#   test_worker_log.sh LANES
set -u
lanes=${1:?usage: test_worker_log.sh LANES}
tmp=$(mktemp -d)
wpid=
trap '[ -n "$wpid" ] && kill "$wpid" 2>/dev/null; rm -rf "$tmp"' EXIT
fail=0
no() { echo "FAIL: $*"; fail=1; }
url="sqlite:$tmp/q.db"

"$lanes" jobs "$url" add q retried '{}' --create --attempts 3 \
  --backoff exponential:200 >/dev/null || no "add"
"$lanes" jobs "$url" add q unrec '{}' --attempts 3 >/dev/null || no "add"
"$lanes" worker "$url" q --verbose --exit-when-empty --poll 20 --exec /bin/sh -c \
  '[ "$LANES_JOB_NAME" = unrec ] && exit 76; exit 1' 2>"$tmp/text.err"
grep -Eq '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z lanes worker: started: ' \
  "$tmp/text.err" || no "a text line starts with its time"
n=$(grep -c 'lanes worker: ' "$tmp/text.err")
m=$(grep -Ec '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[^ ]*Z lanes worker: ' "$tmp/text.err")
[ "$n" -eq "$m" ] || no "every text line has its time ($m of $n)"
grep -q 'job 1 (retried, attempt 1) failed in [0-9]* ms, retry 1/2 in 200 ms: exit status 1' \
  "$tmp/text.err" || no "the first failure says retry 1/2 in 200 ms"
grep -q 'job 1 (retried, attempt 2) failed in [0-9]* ms, retry 2/2 in 400 ms: exit status 1' \
  "$tmp/text.err" || no "the second failure says retry 2/2 in 400 ms"
grep -q 'job 1 (retried, attempt 3) failed in [0-9]* ms, for good: exit status 1' \
  "$tmp/text.err" || no "the third failure is for good"
grep -q 'job 2 (unrec, attempt 1) failed in [0-9]* ms, for good: exit status 76' \
  "$tmp/text.err" || no "exit 76 is for good at once"
[ "$fail" -eq 0 ] || cat "$tmp/text.err"

# JSON: the queue on every line, the retry as fields.
"$lanes" jobs "$url" add q again '{}' --attempts 2 --backoff fixed:50 >/dev/null || no "add"
"$lanes" worker "$url" q --verbose --exit-when-empty --poll 20 --log-format json \
  --exec /bin/false 2>"$tmp/json.err"
python3 - "$tmp/json.err" <<'PY' || fail=1
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
bad = [l for l in lines if l.get("queue") != "q"]
if not lines or bad:
    print("FAIL: every JSON line names the queue:", bad or "no lines")
    sys.exit(1)
runs = [l for l in lines if l.get("outcome") == "failed"]
want = [(1, False, 1, 1, 50), (2, True, None, None, None)]
got = [(l.get("attempt"), l.get("for_good"), l.get("retry"), l.get("retries"),
        l.get("retry_in_ms")) for l in runs]
if got != want:
    print("FAIL: the JSON run lines:", got, "want", want)
    sys.exit(1)
PY

# A graceful stop: the running job is handed back, said as released.
"$lanes" jobs "$url" add q slow '{}' >/dev/null || no "add"
"$lanes" worker "$url" q --verbose --poll 20 --grace 0 --exec /bin/sh -c \
  'echo up > "$0"; sleep 30' "$tmp/up" 2>"$tmp/stop.err" &
wpid=$!
i=0
while [ ! -f "$tmp/up" ] && [ "$i" -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
[ -f "$tmp/up" ] || no "the slow job started"
kill -TERM "$wpid"
wait "$wpid" || no "the worker stops on SIGTERM with exit 0"
wpid=
grep -q 'job 4 (slow, attempt 1) released (the worker is stopping) in ' "$tmp/stop.err" ||
  no "a job cut short at a graceful stop is released"
grep -q 'canceled' "$tmp/stop.err" && no "a job cut short at a graceful stop is not canceled"
grep -q '1 released' "$tmp/stop.err" || no "the stop line counts the job released"
[ "$fail" -eq 0 ] || cat "$tmp/stop.err"
[ "$fail" -eq 0 ] && echo ok
exit "$fail"
