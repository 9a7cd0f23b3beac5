#!/bin/sh
# test_pg_interop.sh CASE LANES - lanes' PostgreSQL store against stock
# BullMQ 6.7.0's own PostgreSQL backend (tests/interop/pg_bullmq.mjs,
# pinned by tests/interop/package-lock.json), both directions. LANES is the
# `lanes` CLI (build/cli/lanes): the C side is `lanes jobs` and `lanes worker
# --exec`. tests/postgres.cmake lists the cases (ctest test_pg_interop/<case>).
#
#   node_to_c          BullMQ adds (plain, short delay, prioritized, custom
#                      id, LIFO) -> `lanes worker` runs them all, in BullMQ's
#                      order; BullMQ reads each completed with lanes' result
#   c_to_node          `lanes jobs add` (plain, delayed, priority, custom id)
#                      -> a BullMQ Worker; `lanes jobs get` reads Node's results
#   retries_both_ways  attempts 3 + fixed backoff and a job that always fails,
#                      run on each side; the other sees attemptsMade and the
#                      failed reason
#   events             a BullMQ QueueEvents hears `completed` for a job a lanes
#                      worker finished; `lanes jobs events --follow` hears a
#                      Node worker's completion
#   stalled            a Node worker killed (-9) mid-job: a lanes worker
#                      recovers the job and completes it
#   events_notify      lanes sends BullMQ's wake-ups: NOTIFY bullmq_jobs
#                      (payload the queue) for a `lanes jobs add`, NOTIFY
#                      bullmq_events when a lanes worker's completion writes
#                      an event row (a Node QueueEvents waits on it and
#                      else only hears on its slow fallback poll)
#   stalled_c_to_node  the reverse: a lanes worker killed (-9) mid-job, a
#                      BullMQ Worker recovers the job and completes it
#
# Every wait polls with a bound. Exit 77 (skipped) without LANES_TEST_PG_URL.
set -u
what=$1
cli=$2
here=$(cd "$(dirname "$0")" && pwd)
interop=$here/../interop

[ -n "${LANES_TEST_PG_URL:-}" ] || { echo "skipped [postgres]: LANES_TEST_PG_URL not set"; exit 77; }
command -v node >/dev/null 2>&1 || { echo "FAIL: node not installed" >&2; exit 1; }
[ -d "$interop/node_modules/bullmq" ] ||
    { echo "FAIL: run 'npm ci' in tests/interop (scripts/install-deps.sh does)" >&2; exit 1; }

url=$LANES_TEST_PG_URL
tmp=$(mktemp -d "${TMPDIR:-/tmp}/lanes-pginterop.XXXXXX")
q="pgi$$$what" # this run's queue, so runs never meet
pids=""

cleanup() {
    for p in $pids; do kill "$p" 2>/dev/null; done
    for p in $pids; do wait "$p" 2>/dev/null; done
    node "$interop/pg_bullmq.mjs" clean "$q" >/dev/null 2>&1
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

fail() {
    echo "FAIL ($what): $*" >&2
    exit 1
}

js() { node "$interop/pg_bullmq.mjs" "$@"; }
lj() { "$cli" jobs "$url" "$@"; }

# FIELD of the JSON object in FILE (node reads it; no parser of our own).
field() { # FILE FIELD
    node -e 'const o = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
             const v = o[process.argv[2]];
             console.log(typeof v === "string" ? v : JSON.stringify(v));' "$1" "$2"
}

# Until FILE has a line matching the extended regex RE, every 50 ms up to
# TRIES times; else fail with WHAT and FILE's text.
wait_re() { # FILE RE TRIES WHAT
    i=0
    until grep -Eq "$2" "$1" 2>/dev/null; do
        i=$((i + 1))
        [ $i -le "$3" ] || fail "$4: $(cat "$1" 2>/dev/null)"
        sleep 0.05
    done
}

# BullMQ's view of job ID must contain each of the given JSON fragments.
node_sees() { # ID FRAGMENT...
    id=$1
    shift
    js job "$q" "$id" >"$tmp/job.json" || fail "BullMQ cannot read job $id"
    for frag in "$@"; do
        grep -qF "$frag" "$tmp/job.json" || fail "BullMQ sees job $id as $(cat "$tmp/job.json"), wanted $frag"
    done
}

# lanes' view (`lanes jobs get --json`) of job ID: FIELD must be VALUE.
c_sees() { # ID FIELD VALUE
    lj get "$q" "$1" --json >"$tmp/cjob.json" || fail "lanes cannot get job $1"
    got=$(field "$tmp/cjob.json" "$2")
    [ "$got" = "$3" ] || fail "lanes sees job $1's $2 as $got, wanted $3: $(cat "$tmp/cjob.json")"
}

# A lanes worker in the background on the queue: each run appends its job id
# to $tmp/order; "flaky" fails (stderr "c flaky attempt N") on attempts 1 and
# 2, "doomed" always; others return {"c":NAME}.
c_worker_start() { # [worker options...]
    LANES_ORDER="$tmp/order" "$cli" worker "$url" "$q" "$@" --exec sh -c '
        echo "$LANES_JOB_ID" >>"$LANES_ORDER"
        cat >/dev/null
        case $LANES_JOB_NAME in
        flaky) [ "$LANES_JOB_ATTEMPT" -le 2 ] && { printf "c flaky attempt %s" "$LANES_JOB_ATTEMPT" >&2; exit 1; } ;;
        doomed) printf "c doomed" >&2; exit 1 ;;
        esac
        printf "{\"c\":\"%s\"}" "$LANES_JOB_NAME"' >"$tmp/cworker.out" 2>"$tmp/cworker.err" &
    cw_pid=$!
    pids="$pids $cw_pid"
}

c_worker_stop() {
    kill -TERM "$cw_pid"
    wait "$cw_pid" || fail "lanes worker: $(cat "$tmp/cworker.err")"
}

ids_of() { field "$1" ids | tr -d '[]"' | tr ',' ' '; }

case_node_to_c() {
    js add "$q" '[{"name":"plain","data":{"n":1}},
                  {"name":"later","data":{"n":2},"opts":{"delay":300}},
                  {"name":"p5","data":{"n":3},"opts":{"priority":5}},
                  {"name":"p1","data":{"n":4},"opts":{"priority":1}},
                  {"name":"custom","data":{"n":5},"opts":{"jobId":"cust-1"}},
                  {"name":"lifo","data":{"n":6},"opts":{"lifo":true}}]' >"$tmp/ids.json" ||
        fail "BullMQ add"
    # shellcheck disable=SC2046
    set -- $(ids_of "$tmp/ids.json")
    [ $# -eq 6 ] || fail "BullMQ added $(cat "$tmp/ids.json")"
    c_worker_start
    js wait "$q" completed 6 30 >/dev/null || fail "lanes worker did not complete all 6"
    c_worker_stop
    n=1
    for name in plain later p5 p1 custom lifo; do
        eval "id=\${$n}"
        node_sees "$id" '"state":"completed"' "\"returnvalue\":{\"c\":\"$name\"}" '"attemptsMade":1'
        n=$((n + 1))
    done
    [ "$5" = cust-1 ] || fail "custom id came back as $5"
    # BullMQ's order: LIFO first, the plain ones in order, then by priority
    # (the delayed job, whose turn depends on timing, left out).
    order=$(grep -vx "$2" "$tmp/order" | tr '\n' ' ')
    [ "$order" = "$6 $1 $5 $4 $3 " ] || fail "run order $order, wanted $6 $1 $5 $4 $3"
    echo "a lanes worker ran BullMQ's jobs in BullMQ's order; BullMQ reads lanes' results"
}

case_c_to_node() {
    id1=$(lj add "$q" plain '{"n":1}') || fail "lanes jobs add"
    id2=$(lj add "$q" later '{"n":2}' --delay 300) || fail "lanes jobs add --delay"
    id3=$(lj add "$q" prio '{"n":3}' --priority 2) || fail "lanes jobs add --priority"
    id4=$(lj add "$q" custom '{"n":4}' --id cust-9) || fail "lanes jobs add --id"
    [ "$id4" = cust-9 ] || fail "custom id came back as $id4"
    js work "$q" 4 "$tmp/order" >/dev/null || fail "BullMQ Worker"
    n=1
    for pair in "$id1:plain" "$id2:later" "$id3:prio" "$id4:custom"; do
        id=${pair%%:*}
        c_sees "$id" state completed
        c_sees "$id" result "{\"data\":{\"n\":$n},\"node\":\"${pair#*:}\"}"
        n=$((n + 1))
    done
    echo "a BullMQ Worker ran jobs lanes added; lanes reads Node's results"
}

case_retries_both_ways() {
    js add "$q" '[{"name":"flaky","data":{},"opts":{"attempts":3,"backoff":{"type":"fixed","delay":100}}},
                  {"name":"doomed","data":{},"opts":{"attempts":2,"backoff":{"type":"fixed","delay":100}}}]' \
        >"$tmp/ids.json" || fail "BullMQ add"
    # shellcheck disable=SC2046
    set -- $(ids_of "$tmp/ids.json")
    c_worker_start
    js wait "$q" completed 1 30 >/dev/null || fail "flaky never completed under lanes"
    js wait "$q" failed 1 30 >/dev/null || fail "doomed never failed under lanes"
    c_worker_stop
    node_sees "$1" '"state":"completed"' '"attemptsMade":3'
    node_sees "$2" '"state":"failed"' '"failedReason":"exit status 1: c doomed"' '"attemptsMade":2'
    echo "BullMQ sees lanes' retries: attemptsMade and the failed reason"
    id1=$(lj add "$q" flaky '{}' --attempts 3 --backoff fixed:100) || fail "lanes jobs add"
    id2=$(lj add "$q" doomed '{}' --attempts 2 --backoff fixed:100) || fail "lanes jobs add"
    js work "$q" 1 "$tmp/order2" >/dev/null || fail "BullMQ Worker"
    js wait "$q" failed 2 30 >/dev/null || fail "doomed never failed under BullMQ"
    # lanes' attempts_made is the runs that failed (jobs.h), BullMQ's
    # attemptsMade the runs finished: 2 and 3 for a job done on its third.
    c_sees "$id1" state completed
    c_sees "$id1" attempts_made 2
    c_sees "$id1" attempts_started 3
    c_sees "$id2" state failed
    c_sees "$id2" failed_reason "node doomed"
    c_sees "$id2" attempts_made 2
    echo "lanes sees BullMQ's retries: attempts made and the failed reason"
}

case_events() {
    node "$interop/pg_bullmq.mjs" events "$q" >"$tmp/nev" 2>"$tmp/nev.err" &
    pids="$pids $!"
    wait_re "$tmp/nev.err" ready 400 "QueueEvents did not start"
    id=$(lj add "$q" ping '{}') || fail "lanes jobs add"
    c_worker_start
    wait_re "$tmp/nev" "\"event\":\"completed\",.*\"jobId\":\"$id\"" 400 "QueueEvents never heard lanes complete $id"
    c_worker_stop
    echo "a BullMQ QueueEvents heard a lanes worker complete a job"
    # From the oldest kept: what follows lands after it, whenever it starts.
    "$cli" jobs "$url" events "$q" --follow --from 0 >"$tmp/cev" 2>"$tmp/cev.err" &
    pids="$pids $!"
    js add "$q" '[{"name":"pong","data":{}}]' >"$tmp/ids.json" || fail "BullMQ add"
    id=$(ids_of "$tmp/ids.json")
    js work "$q" 1 "$tmp/order" >/dev/null || fail "BullMQ Worker"
    wait_re "$tmp/cev" "^[0-9]+ completed $id " 400 "lanes jobs events never heard Node complete $id"
    echo "lanes jobs events --follow heard a BullMQ Worker complete a job"
}

case_events_notify() {
    node "$interop/pg_bullmq.mjs" listen "$q" bullmq_jobs bullmq_events >"$tmp/heard" 2>"$tmp/heard.err" &
    pids="$pids $!"
    wait_re "$tmp/heard.err" ready 400 "LISTEN did not start"
    lj add "$q" ping '{}' >/dev/null || fail "lanes jobs add"
    wait_re "$tmp/heard" '^bullmq_jobs$' 400 "no NOTIFY bullmq_jobs for a lanes add"
    wait_re "$tmp/heard" '^bullmq_events$' 400 "no NOTIFY bullmq_events for a lanes add's event"
    sleep 0.5 # the add's notifications are all in: count from here
    before=$(grep -cx bullmq_events "$tmp/heard")
    c_worker_start
    js wait "$q" completed 1 30 >/dev/null || fail "lanes worker did not complete the job"
    c_worker_stop
    i=0
    until [ "$(grep -cx bullmq_events "$tmp/heard")" -gt "$before" ]; do
        i=$((i + 1))
        [ $i -le 400 ] || fail "no NOTIFY bullmq_events for a lanes worker's events"
        sleep 0.05
    done
    echo "lanes' add and its worker's steps sent BullMQ's NOTIFY bullmq_jobs and bullmq_events"
}

case_stalled() {
    js add "$q" '[{"name":"stuck","data":{"s":1}}]' >"$tmp/ids.json" || fail "BullMQ add"
    id=$(ids_of "$tmp/ids.json")
    node "$interop/pg_bullmq.mjs" work "$q" 1 "$tmp/norder" hang >/dev/null 2>"$tmp/nw.err" &
    npid=$!
    pids="$pids $npid"
    wait_re "$tmp/norder" "^$id\$" 400 "the Node worker never took $id"
    kill -9 "$npid"
    wait "$npid" 2>/dev/null
    c_worker_start --stalled-interval 500 --max-stalled 2
    js wait "$q" completed 1 60 >/dev/null || fail "lanes never recovered the stalled job"
    c_worker_stop
    node_sees "$id" '"state":"completed"' '"returnvalue":{"c":"stuck"}'
    grep -qx "$id" "$tmp/order" || fail "lanes worker did not run $id"
    echo "a lanes worker recovered a job a killed Node worker held and completed it"
}

case_stalled_c_to_node() {
    id=$(lj add "$q" stuck '{"s":2}') || fail "lanes jobs add"
    # The handler notes its pid (the cleanup ends it) and hangs.
    LANES_HANG="$tmp/hang" "$cli" worker "$url" "$q" --lease 1000 --exec sh -c '
        echo "$$" >>"$LANES_HANG.pid"; echo "$LANES_JOB_ID" >>"$LANES_HANG"; exec sleep 60' \
        >/dev/null 2>"$tmp/cworker.err" &
    cpid=$!
    pids="$pids $cpid"
    wait_re "$tmp/hang" "^$id\$" 400 "the lanes worker never took $id"
    kill -9 "$cpid"
    wait "$cpid" 2>/dev/null
    pids="$pids $(cat "$tmp/hang.pid")"
    js work "$q" 1 "$tmp/order" >/dev/null || fail "BullMQ never recovered the stalled job"
    grep -qx "$id" "$tmp/order" || fail "the BullMQ Worker did not run $id"
    c_sees "$id" state completed
    c_sees "$id" result '{"data":{"s":2},"node":"stuck"}'
    echo "a BullMQ Worker recovered a job a killed lanes worker held and completed it"
}

case $what in
    '' | *[!a-z_]*) fn='' ;;
    *) fn=case_$what ;;
esac
if [ -z "$fn" ] || ! command -v "$fn" >/dev/null 2>&1; then
    echo "unknown case $what" >&2
    exit 2
fi
"$fn"
exit 0
