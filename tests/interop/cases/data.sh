# shellcheck shell=sh
# shellcheck disable=SC2154 # url, q, tmp, peer, cli, ...: set by the driver
# interop/cases/data.sh - the interop cases of what a job carries: trace context, JSON,
# deduplication ids and long ids.
# Sourced by tests/interop/test_redis_interop.sh, which has the helpers (js, fail,
# events_start, ...) and the variables (url, q, tmp, peer, cli) they use.
# Case X is the function case_X; tests/redis.cmake lists the names.

#   trace      W3C trace context both ways: a BullMQ job's telemetry
#              metadata (opts.tm) reaches a C handler (ln_job_traceparent),
#              and a C job's traceparent is BullMQ's telemetry metadata.
case_trace() {
    tp=00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01
    js trace-produce "$q" $tp >/dev/null || fail "Node add"
    "$peer" trace "$url" "$q" $tp || fail "C add"
    "$peer" work "$url" "$q" >/dev/null 2>&1 || fail "C worker"
    js trace-check "$q" $tp || fail "trace context"
}

#   json       BullMQ data {x: 1e20, s: "\ud800"} (JSON.parse's grammar, not
#              jansson's) comes back unchanged in the returnvalue of a C
#              ln_worker and of `lanes worker --exec`; an --exec program
#              printing {"total":100000000000000000000,"ok":true} gives
#              job.returnvalue.ok === true.
case_json() {
    js json-produce "$q-c" >/dev/null || fail "Node add"
    "$peer" work "$url" "$q-c" >/dev/null 2>&1 || fail "C worker"
    js json-check "$q-c" c || fail "C worker result"
    echo "JSON past jansson's range: unchanged through a C worker"
    need_cli
    js json-produce "$q-x" >/dev/null || fail "Node add"
    "$cli" worker "$url" "$q-x" --exit-when-empty --exec sh -c \
        'if [ "$LANES_JOB_NAME" = big ]; then
             printf "{\"total\":100000000000000000000,\"ok\":true}\n"
         else cat; fi' >/dev/null || fail "lanes worker --exec"
    js json-check "$q-x" exec || fail "--exec result"
    echo "... and through \`lanes worker --exec\`"
}

#   dedup      deduplication both ways: a Node job with deduplication {id}
#              makes `lanes jobs add --dedup` of that id add nothing and print
#              the Node job's id, and the reverse (Node's q.add returns the C
#              job, which Node reads with its deduplicationId); a TTL set by
#              C throttles Node's adds; once a C worker finished the
#              simple-mode job, Node's add with the id adds a new job.
case_dedup() {
    need_cli
    nid=$(js add-one "$q" n '{"a":1}' '{"deduplication":{"id":"k"}}' | sed 's/.*"id":"\([^"]*\)".*/\1/')
    cid=$("$cli" jobs "$url" add "$q" n '{"a":2}' --dedup k) || fail "lanes jobs add --dedup"
    [ "$cid" = "$nid" ] || fail "C add of Node's dedup id gave $cid, not $nid"
    redis-cli -u "$url" xrange "bull:$q:events" - + | tr '\n' ' ' |
        grep -q "event deduplicated jobId $nid deduplicationId k" || fail "no deduplicated event"
    cid=$("$cli" jobs "$url" add "$q" n '{"b":1}' --dedup c1) || fail "lanes jobs add --dedup c1"
    nid=$(js add-one "$q" n '{"b":2}' '{"deduplication":{"id":"c1"}}' | sed 's/.*"id":"\([^"]*\)".*/\1/')
    [ "$cid" = "$nid" ] || fail "Node add of C's dedup id gave $nid, not $cid"
    js job "$q" "$cid" | grep -q '"deduplicationId":"c1"' || fail "Node does not see C's deduplicationId"
    tid=$("$cli" jobs "$url" add "$q" n '{}' --dedup t1:60000) || fail "lanes jobs add --dedup t1:60000"
    nid=$(js add-one "$q" n '{}' '{"deduplication":{"id":"t1","ttl":60000}}' | sed 's/.*"id":"\([^"]*\)".*/\1/')
    [ "$tid" = "$nid" ] || fail "Node add inside C's TTL gave $nid, not $tid"
    [ "$(js counts "$q" | sed 's/.*"waiting":\([0-9]*\).*/\1/')" = 3 ] || fail "counts: $(js counts "$q")"
    "$cli" worker "$url" "$q" --exit-when-empty --exec true >/dev/null 2>"$tmp/c.err" ||
        fail "lanes worker: $(cat "$tmp/c.err")"
    redis-cli -u "$url" exists "bull:$q:de:k" | grep -qx 0 || fail "de:k left after the C worker finished its job"
    new=$(js add-one "$q" n '{}' '{"deduplication":{"id":"k"}}' | sed 's/.*"id":"\([^"]*\)".*/\1/')
    [ "$new" != "$cid" ] && [ "$new" != "1" ] || fail "Node add after the finish was deduplicated ($new)"
    echo "dedup: Node->C and C->Node deduplicated, C TTL honoured by Node, id freed by a C worker's finish"
}

#   longid     job ids longer than 127 bytes both ways: a Node job with a
#              200-byte id runs on a C worker (the handler sees the whole
#              id) and Node reads it completed with its return value; `lanes
#              jobs get/retry/logs/remove/list` take 200- and 300-byte ids;
#              `lanes jobs add --id` of a 300-byte id runs on a Node worker;
#              a Node id of 70,000 bytes (past lanes' own bound) still runs
#              on a C worker and is read.
case_longid() {
    need_cli
    lid=L-$(printf '%0198d' 0 | tr 0 x) # 200 bytes
    bad=L-$(printf '%0298d' 0 | tr 0 y) # 300 bytes
    js add-one "$q-a" plain '{"n":1}' "{\"jobId\":\"$lid\"}" >"$tmp/add.json" || fail "Node add"
    grep -q "\"id\":\"$lid\"" "$tmp/add.json" || fail "Node add gave $(cat "$tmp/add.json")"
    js add-one "$q-a" doomed '{}' "{\"jobId\":\"$bad\"}" >/dev/null || fail "Node add (doomed)"
    # bounded: a worker that cannot hand the job over holds it till it stalls
    timeout 20 "$peer" work "$url" "$q-a" --log "$tmp/c.log" >/dev/null 2>"$tmp/c.err" ||
        fail "C worker: $(cat "$tmp/c.err")"
    grep -qx "$lid" "$tmp/c.log" || fail "the C handler did not see the whole id: $(cat "$tmp/c.log")"
    js job "$q-a" "$lid" >"$tmp/j.json" || fail "Node get"
    python3 - "$tmp/j.json" "$lid" <<'PY' || fail "Node reads the C outcome: $(cat "$tmp/j.json")"
import json, sys
j = json.load(open(sys.argv[1]))
if not (j["id"] == sys.argv[2] and j["state"] == "completed"):
    raise SystemExit("check failed: %r" % (j,))
if not (j["returnvalue"] == {"name": "plain", "data": {"n": 1}}):
    raise SystemExit("check failed: %r" % (j,))
PY
    echo "a Node job with a 200-byte id ran on a C worker; Node reads its return value"
    "$cli" jobs "$url" get "$q-a" "$lid" --json >"$tmp/get.json" 2>"$tmp/get.err" ||
        fail "lanes jobs get: $(cat "$tmp/get.err")"
    python3 - "$tmp/get.json" "$lid" <<'PY' || fail "lanes jobs get: $(cat "$tmp/get.json")"
import json, sys
j = json.load(open(sys.argv[1]))
if not (j["id"] == sys.argv[2] and j["state"] == "completed"):
    raise SystemExit("check failed: %r" % (j,))
PY
    "$cli" jobs "$url" get "$q-a" "$bad" | grep -q failed || fail "lanes jobs get (failed)"
    "$cli" jobs "$url" logs "$q-a" "$bad" >/dev/null || fail "lanes jobs logs"
    "$cli" jobs "$url" retry "$q-a" "$bad" >/dev/null || fail "lanes jobs retry"
    js job "$q-a" "$bad" | grep -q '"state":"waiting"' || fail "retried job not waiting for Node"
    "$cli" jobs "$url" list "$q-a" waiting | grep -q "^$bad " || fail "lanes jobs list"
    "$cli" jobs "$url" remove "$q-a" "$bad" >/dev/null || fail "lanes jobs remove"
    js job "$q-a" "$bad" | grep -qx null || fail "removed job still there for Node"
    echo "lanes jobs get/logs/retry/list/remove administer 200- and 300-byte ids"
    cid=L-$(printf '%0298d' 0 | tr 0 z) # 300 bytes
    got=$("$cli" jobs "$url" add "$q-b" plain '{"b":1}' --id "$cid") || fail "lanes jobs add --id"
    [ "$got" = "$cid" ] || fail "lanes jobs add --id printed $got"
    js work "$q-b" 1 >/dev/null || fail "Node worker"
    js job "$q-b" "$cid" >"$tmp/j.json" || fail "Node get"
    python3 - "$tmp/j.json" "$cid" <<'PY' || fail "Node ran the C job: $(cat "$tmp/j.json")"
import json, sys
j = json.load(open(sys.argv[1]))
if not (j["id"] == sys.argv[2] and j["state"] == "completed"
        and j["returnvalue"] == {"name": "plain", "data": {"b": 1}}):
    raise SystemExit(repr(j))
PY
    "$cli" jobs "$url" get "$q-b" "$cid" | grep -q completed || fail "lanes jobs get after Node"
    echo "lanes jobs add --id of a 300-byte id ran on a Node worker"
    huge=L-$(printf '%069998d' 0 | tr 0 h) # 70,000 bytes: past what lanes adds
    js add-one "$q-c" plain '{}' "{\"jobId\":\"$huge\"}" >/dev/null || fail "Node add (huge id)"
    timeout 20 "$peer" work "$url" "$q-c" --log "$tmp/h.log" >/dev/null 2>"$tmp/c.err" ||
        fail "C worker (huge id): $(cat "$tmp/c.err")"
    grep -qxF "$huge" "$tmp/h.log" || fail "the C handler did not see the whole 70,000-byte id"
    "$cli" jobs "$url" get "$q-c" "$huge" | grep -q completed || fail "lanes jobs get (huge id)"
    echo "a Node job with a 70,000-byte id ran on a C worker and lanes jobs get reads it"
}

#   stacktrace a job whose first run a Node Worker failed with a message
#              ending in a lone surrogate (stored as JSON.stringify's
#              "\ud83d" escape, which Redis's cjson cannot read) fails for
#              good on a C worker: its stacktrace keeps the Node entry as
#              written and adds the C one.
case_stacktrace() {
    id=$(js half-fail "$q" | sed 's/.*"id":"\([^"]*\)".*/\1/') || fail "half-fail"
    sleep 0.4 # its backoff
    "$peer" work "$url" "$q" >/dev/null 2>"$tmp/c.err" || fail "C worker: $(cat "$tmp/c.err")"
    js half-check "$q" "$id" >/dev/null || fail "half-check"
    echo "the Node run's stacktrace entry survived the C run's failure"
}

#   halfid     Node jobs whose custom ids end in half an emoji (BullMQ stores
#              their opts with the bytes ED A0 BD, not UTF-8, which jansson
#              refuses) keep their options on a C worker: 3 attempts, and
#              removeOnComplete.
case_halfid() {
    js half-ids "$q" >/dev/null || fail "half-ids"
    "$peer" work "$url" "$q" >/dev/null 2>"$tmp/c.err" || fail "C worker: $(cat "$tmp/c.err")"
    js half-ids-check "$q" >/dev/null || fail "half-ids-check"
    echo "a C worker kept the options of jobs whose ids are not UTF-8"
}
