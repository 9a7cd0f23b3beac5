#!/bin/sh
# test_redis_interop.sh CASE PEER [LANES] - lanes' Redis backend against stock
# BullMQ 6.7.0 (tests/interop, pinned by package-lock.json). PEER is
# build/tests/redis_peer (the C side), LANES the `lanes` CLI if built.
#
#   node_to_c  BullMQ Queue.add/addBulk (plain, delayed, prioritized, LIFO,
#              attempts + exponential backoff, custom ids) -> a C ln_worker
#              (and `lanes worker --exec` when the CLI has it). BullMQ's
#              getJobCounts/getJobs and QueueEvents must report exactly what
#              they report for the same jobs run by a BullMQ Worker, and the
#              jobs must run in the same order.
#   c_to_node  the same jobs added with the C API (and `lanes jobs add`) ->
#              a BullMQ Worker: same order, results, retries and events as
#              for jobs BullMQ added itself.
#   mixed      10,000 jobs, a BullMQ Worker and a C worker (concurrency 50
#              each) on one queue: every job completes exactly once.
#   kill9      kill -9 a C worker mid-job: lanes' stalled check (a second C
#              worker) and BullMQ's (a Node Worker) each recover the job.
#   renew      a C worker renews its lock while BullMQ's stalled check runs
#              every 300 ms beside it: the job is not taken away.
#   restart    a redis-server of our own with AOF: SHUTDOWN NOSAVE and a
#              restart while a C worker runs 300 jobs: it reconnects and
#              every job completes.
#   trace      W3C trace context both ways: a BullMQ job's telemetry
#              metadata (opts.tm) reaches a C handler (ln_job_traceparent),
#              and a C job's traceparent is BullMQ's telemetry metadata.
#   wake       a BullMQ Worker and a C worker idle on one empty queue, both
#              blocked on the marker (BullMQ's default drainDelay, 5 s; the
#              C worker's wait is capped at 5 s too): two slow jobs added at
#              once start on both workers well before either wait's timeout
#              (the first worker's take passes the wake-up on).
#   gconc      queue.setGlobalConcurrency(1) and a C worker of concurrency 4
#              (idle on the marker, 5 s waits): 6 jobs of 300 ms run one
#              at a time, back to back (under 2x the ideal 1.8 s; a worker
#              that slept out its wait after each job took ~5 s a job).
#   obliterate queue.obliterate({force: true}) while a C worker holds a job
#              (and after it finished it): no key of the queue is left.
#   runat      a BullMQ job with a delay, promoted and retried (backoff) by
#              a BullMQ Worker: \`lanes jobs get\` reports run_at_ms as
#              created_ms + its delay, as for jobs lanes ran (jobs.h).
#   board      Bull Board (@bull-board/api + express) lists the queue and
#              the jobs C added, with their data, over HTTP on loopback, and
#              a running C worker in its workers panel.
#   json       BullMQ data {x: 1e20, s: "\ud800"} (JSON.parse's grammar, not
#              jansson's) comes back unchanged in the returnvalue of a C
#              ln_worker and of `lanes worker --exec`; an --exec program
#              printing {"total":100000000000000000000,"ok":true} gives
#              job.returnvalue.ok === true.
#   outcomes   `lanes worker --exec` (a C ln_worker) on BullMQ jobs: exit 76
#              (unrecoverable) is failed for Node after one attempt with two
#              left (attemptsMade 1); exit 75 with {"delay_ms": 300} is
#              delayed for Node (attempts unchanged, a "delayed" event),
#              and a Node Worker then runs it.
#   dedup      deduplication both ways: a Node job with deduplication {id}
#              makes `lanes jobs add --dedup` of that id add nothing and print
#              the Node job's id, and the reverse (Node's q.add returns the C
#              job, which Node reads with its deduplicationId); a TTL set by
#              C throttles Node's adds; once a C worker finished the
#              simple-mode job, Node's add with the id adds a new job.
#   flow_node_to_c  FlowProducer trees (a root with three children in another
#              queue, one with a child of its own; roots whose child fails
#              with failParentOnFailure / ignoreDependencyOnFailure) run by C
#              workers: Node's getChildrenValues has every child's result,
#              the root its own, the fail-parent root is failed for its
#              child, the other completed with the failure in
#              getFailedChildrenValues.
#   flow_c_to_node  the same trees added by `lanes jobs flow`, run by Node
#              Workers: the same checks.
#
# Exit 77 (skipped) without LANES_TEST_REDIS_URL, node or the npm packages.
set -u
what=$1
peer=$2
cli=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
interop=$here/interop

[ -n "${LANES_TEST_REDIS_URL:-}" ] || { echo "skipped: LANES_TEST_REDIS_URL not set"; exit 77; }
command -v node >/dev/null 2>&1 || { echo "skipped: node not installed"; exit 77; }
[ -d "$interop/node_modules/bullmq" ] ||
    { echo "skipped: run 'npm ci' in tests/interop (scripts/install-deps.sh does)"; exit 77; }

url=$LANES_TEST_REDIS_URL
tmp=$(mktemp -d "${TMPDIR:-/tmp}/lanes-interop.XXXXXX")
q="it$$$what" # this run's queues: q-..., so parallel runs never meet
pids=""
redis_pid=""

cleanup() {
    for p in $pids; do kill "$p" 2>/dev/null; done
    if [ -n "$redis_pid" ]; then
        kill "$redis_pid" 2>/dev/null
        wait "$redis_pid" 2>/dev/null
    fi
    # Drop this run's keys (redis-cli --scan walks, DEL in batches).
    redis-cli -u "$url" --scan --pattern "bull:$q*" 2>/dev/null |
        xargs -r -n 500 redis-cli -u "$url" del >/dev/null 2>&1
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

fail() {
    echo "FAIL ($what): $*" >&2
    exit 1
}

# Foreground only: a background job must run node itself, so that $! is
# node's pid and the cleanup can stop it.
js() { node "$interop/interop.mjs" "$@"; }

# Record a queue's QueueEvents in the background into $tmp/ev-QUEUE.json.
events_start() {
    node "$interop/interop.mjs" events "$1" >"$tmp/ev-$1.json" 2>"$tmp/ev-$1.err" &
    pids="$pids $!"
    eval "ev_pid_$(echo "$1" | tr -c 'a-zA-Z0-9\n' _)=$!"
    i=0
    until grep -q ready "$tmp/ev-$1.err" 2>/dev/null; do
        i=$((i + 1))
        [ $i -le 200 ] || fail "QueueEvents for $1 did not start"
        sleep 0.05
    done
}

events_stop() {
    eval "p=\$ev_pid_$(echo "$1" | tr -c 'a-zA-Z0-9\n' _)"
    kill -TERM "$p"
    wait "$p" || fail "QueueEvents for $1 failed: $(cat "$tmp/ev-$1.err")"
}

# First run of each job id, in order, without the ids whose timing varies
# (delayed job 5, and the retries).
first_runs() {
    awk '!seen[$0]++' "$1" | grep -vx 5
}

# Both queues ran the scenario: the same summary, events and order
# (third argument "exec": b ran under `lanes worker --exec`).
same_outcome() {
    a=$1 b=$2
    js summarize "$a" >"$tmp/sum-$a.json" || fail "summarize $a"
    js summarize "$b" >"$tmp/sum-$b.json" || fail "summarize $b"
    # `lanes worker --exec` reports a failed program as "exit status N: <stderr>"
    [ "${3:-}" = exec ] && sed -i 's/"failedReason":"exit status 1: /"failedReason":"/g' "$tmp/sum-$b.json"
    js compare "$tmp/sum-$a.json" "$tmp/sum-$b.json" >/dev/null || fail "summaries differ"
    js compare "$tmp/ev-$a.json" "$tmp/ev-$b.json" >/dev/null || fail "events differ"
    first_runs "$tmp/order-$a.log" >"$tmp/first-$a"
    first_runs "$tmp/order-$b.log" >"$tmp/first-$b"
    cmp -s "$tmp/first-$a" "$tmp/first-$b" ||
        fail "run order differs: $(tr '\n' ' ' <"$tmp/first-$a") vs $(tr '\n' ' ' <"$tmp/first-$b")"
}

wait_lines() { # FILE N: until FILE has N lines (10 s)
    i=0
    until [ -f "$1" ] && [ "$(wc -l <"$1")" -ge "$2" ]; do
        i=$((i + 1))
        [ $i -le 200 ] || fail "$1 never reached $2 lines"
        sleep 0.05
    done
}

case $what in
node_to_c)
    events_start "$q-n"
    events_start "$q-c"
    js produce "$q-n" >/dev/null || fail "produce"
    js work "$q-n" 1 "$tmp/order-$q-n.log" >/dev/null || fail "Node worker"
    js produce "$q-c" >/dev/null || fail "produce"
    "$peer" work "$url" "$q-c" --log "$tmp/order-$q-c.log" >"$tmp/peer.json" || fail "C worker"
    events_stop "$q-n"
    events_stop "$q-c"
    same_outcome "$q-n" "$q-c"
    grep -q '"completed":12,"failed":1,' "$tmp/peer.json" || fail "C worker stats $(cat "$tmp/peer.json")"
    echo "BullMQ reports the same for jobs run by a C ln_worker as by a BullMQ Worker"
    [ -n "$cli" ] || exit 0
    events_start "$q-x"
    js produce "$q-x" >/dev/null || fail "produce"
    LANES_ORDER_LOG="$tmp/order-$q-x.log" "$cli" worker "$url" "$q-x" --exit-when-empty \
        --exec sh -c 'echo "$LANES_JOB_ID" >>"$LANES_ORDER_LOG"; exec "$0"' \
        "$interop/handler.sh" >/dev/null || fail "lanes worker --exec"
    events_stop "$q-x"
    same_outcome "$q-n" "$q-x" exec
    echo "... and by \`lanes worker --exec\`"
    ;;
c_to_node)
    events_start "$q-n"
    events_start "$q-c"
    js produce "$q-n" >/dev/null || fail "produce"
    js work "$q-n" 1 "$tmp/order-$q-n.log" >/dev/null || fail "Node worker"
    "$peer" add "$url" "$q-c" >/dev/null || fail "C add"
    js work "$q-c" 1 "$tmp/order-$q-c.log" >/dev/null || fail "Node worker"
    events_stop "$q-n"
    events_stop "$q-c"
    same_outcome "$q-n" "$q-c"
    echo "a BullMQ Worker runs jobs the C API added exactly as jobs BullMQ added"
    [ -n "$cli" ] || exit 0
    events_start "$q-x"
    qx="$q-x"
    add() { "$cli" jobs "$url" add "$qx" "$@" >/dev/null || fail "lanes jobs add $*"; }
    add plain '{"n":1,"s":"héllo"}'
    add plain '[1,2,3]'
    add custom '{"c":1}' --id cust-1
    add custom '{"c":2}' --id cust-1
    add later '{"d":1}' --delay 300
    add prio '{"p":5}' --priority 5
    add prio '{"p":1}' --priority 1
    add lifo '"a string payload"' --lifo
    add flaky '{"f":1}' --attempts 3 --backoff exponential:100
    add doomed '{"x":1}' --attempts 2 --backoff fixed:50
    add gone '{"g":1}' --remove-on-complete all
    add bulk '{"b":1}'
    add bulk '{"b":2}' --id bulk-2
    add bulk '{"b":3}' --priority 3
    js work "$qx" 1 "$tmp/order-$qx.log" >/dev/null || fail "Node worker"
    events_stop "$qx"
    same_outcome "$q-n" "$qx"
    echo "... and jobs \`lanes jobs add\` added"
    ;;
mixed)
    n=10000
    "$peer" bulk "$url" "$q" $n >/dev/null || fail "C bulk add"
    node "$interop/interop.mjs" work "$q" 50 "$tmp/node.log" >/dev/null &
    node_pid=$!
    pids="$pids $node_pid"
    # The C worker starts once Node's runs (Node starts slower: the C worker
    # alone would finish the queue first and the case would mix nothing).
    i=0
    until [ -s "$tmp/node.log" ]; do
        i=$((i + 1))
        [ $i -le 600 ] || fail "the BullMQ Worker ran nothing in 30 s"
        sleep 0.05
    done
    "$peer" work "$url" "$q" --concurrency 50 --log "$tmp/c.log" >/dev/null || fail "C worker"
    wait "$node_pid" || fail "Node worker"
    total=$(cat "$tmp/node.log" "$tmp/c.log" | wc -l)
    dups=$(cat "$tmp/node.log" "$tmp/c.log" | sort | uniq -d | wc -l)
    ran_node=$(wc -l <"$tmp/node.log")
    ran_c=$(wc -l <"$tmp/c.log")
    [ "$dups" -eq 0 ] || fail "$dups jobs ran twice"
    [ "$total" -eq $n ] || fail "$total runs for $n jobs"
    [ "$ran_node" -gt 0 ] && [ "$ran_c" -gt 0 ] || fail "one side ran nothing (node $ran_node, C $ran_c)"
    js counts "$q" | grep -q "\"completed\":$n," || fail "counts: $(js counts "$q")"
    echo "$n jobs, each completed exactly once (BullMQ Worker $ran_node, C worker $ran_c)"
    ;;
kill9)
    for who in c node; do
        qk="$q-$who"
        events_start "$qk"
        "$peer" one "$url" "$qk" sleep '{"k":1}' >/dev/null || fail "add"
        "$peer" work "$url" "$qk" --lease-ms 1000 --sleep-ms 30000 --log "$tmp/k1-$who.log" \
            >/dev/null 2>&1 &
        victim=$!
        wait_lines "$tmp/k1-$who.log" 1
        kill -9 $victim
        wait $victim 2>/dev/null
        if [ $who = c ]; then # lanes' stalled check, in a new C worker
            "$peer" work "$url" "$qk" --lease-ms 1000 --log "$tmp/k2-$who.log" >/dev/null ||
                fail "recovering C worker"
        else # BullMQ's stalled check, in a Node Worker
            js work "$qk" 1 "$tmp/k2-$who.log" '{"stalledInterval":300,"lockDuration":1000}' \
                >/dev/null || fail "recovering Node worker"
        fi
        events_stop "$qk"
        js summarize "$qk" >"$tmp/sum.json" || fail "summarize"
        grep -q '"1":{"state":"completed"' "$tmp/sum.json" || fail "$who: $(cat "$tmp/sum.json")"
        grep -q '"stalledCounter":1' "$tmp/sum.json" || fail "$who: stalledCounter $(cat "$tmp/sum.json")"
        grep -q '"stalled"' "$tmp/ev-$qk.json" || fail "$who: no stalled event $(cat "$tmp/ev-$qk.json")"
        echo "kill -9 mid-job: recovered by the $who stalled check"
    done
    ;;
renew)
    events_start "$q"
    "$peer" one "$url" "$q" sleep '{"r":1}' >/dev/null || fail "add"
    "$peer" work "$url" "$q" --lease-ms 1000 --sleep-ms 3000 --log "$tmp/c.log" >/dev/null 2>&1 &
    worker=$!
    pids="$pids $worker"
    wait_lines "$tmp/c.log" 1
    # BullMQ's stalled check runs every 300 ms beside the 3 s job whose
    # 1 s lock the C worker renews: it must not take the job away.
    js work "$q" 1 "$tmp/node.log" '{"stalledInterval":300,"lockDuration":1000}' >/dev/null ||
        fail "Node worker"
    wait $worker || fail "C worker"
    events_stop "$q"
    js summarize "$q" >"$tmp/sum.json" || fail "summarize"
    grep -q '"attemptsStarted":1,' "$tmp/sum.json" || fail "job ran twice: $(cat "$tmp/sum.json")"
    grep -q '"stalledCounter":0}' "$tmp/sum.json" || fail "stalled: $(cat "$tmp/sum.json")"
    ! grep -q stalled "$tmp/ev-$q.json" || fail "stalled event: $(cat "$tmp/ev-$q.json")"
    [ ! -s "$tmp/node.log" ] || fail "the Node worker ran the job too"
    echo "a C worker's renewed lock holds against BullMQ's stalled check"
    ;;
restart)
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    mkdir "$tmp/redis"
    start_redis() {
        redis-server --port "$port" --bind 127.0.0.1 --dir "$tmp/redis" --save "" \
            --appendonly yes --appendfsync always --daemonize no \
            --loglevel warning >>"$tmp/redis/log" 2>&1 &
        redis_pid=$!
        i=0
        until redis-cli -p "$port" ping 2>/dev/null | grep -q PONG; do
            i=$((i + 1))
            [ $i -le 200 ] || fail "redis-server did not start: $(cat "$tmp/redis/log")"
            sleep 0.05
        done
    }
    start_redis
    url2="redis://127.0.0.1:$port/0"
    n=300
    "$peer" bulk "$url2" "$q" $n sleep >/dev/null || fail "add"
    "$peer" work "$url2" "$q" --concurrency 4 --sleep-ms 10 --lease-ms 5000 \
        --log "$tmp/r.log" >"$tmp/peer.json" 2>"$tmp/peer.err" &
    worker=$!
    pids="$pids $worker"
    wait_lines "$tmp/r.log" 60
    redis-cli -p "$port" shutdown nosave >/dev/null 2>&1
    wait "$redis_pid" 2>/dev/null
    redis_pid=""
    sleep 1
    start_redis
    wait "$worker" || fail "C worker did not survive the restart: $(cat "$tmp/peer.err")"
    LANES_TEST_REDIS_URL=$url2 js counts "$q" >"$tmp/counts.json"
    grep -q "\"completed\":$n," "$tmp/counts.json" || fail "after restart: $(cat "$tmp/counts.json")"
    [ "$(sort -u "$tmp/r.log" | wc -l)" -eq $n ] || fail "not every job ran"
    echo "redis SHUTDOWN NOSAVE + restart mid-run: worker reconnected, $n/$n completed"
    ;;
wake)
    node "$interop/interop.mjs" serve "$q" "$tmp/node.log" 2>"$tmp/node.err" &
    pids="$pids $!"
    "$peer" work "$url" "$q" --forever --concurrency 1 --sleep-ms 500 \
        --log "$tmp/c.log" >/dev/null 2>"$tmp/c.err" &
    pids="$pids $!"
    i=0
    until grep -q ready "$tmp/node.err" 2>/dev/null && grep -q working "$tmp/c.err" 2>/dev/null; do
        i=$((i + 1))
        [ $i -le 400 ] || fail "workers did not start: $(cat "$tmp/node.err" "$tmp/c.err")"
        sleep 0.05
    done
    sleep 1 # both are blocked on the marker now, with waits of 5 s
    t0=$(date +%s%N)
    "$peer" bulk "$url" "$q" 2 sleep >/dev/null || fail "C add"
    i=0 # each must start a job within 2.5 s: half of either wait's timeout
    until [ -s "$tmp/node.log" ] && [ -s "$tmp/c.log" ]; do
        i=$((i + 1))
        [ $i -le 50 ] || fail "not both woken in 2.5 s: node $(cat "$tmp/node.log" 2>/dev/null), C $(cat "$tmp/c.log" 2>/dev/null)"
        sleep 0.05
    done
    echo "both idle workers woke at once: $(( ($(date +%s%N) - t0) / 1000000 )) ms for node $(cat "$tmp/node.log") and C $(cat "$tmp/c.log")"
    ;;
gconc)
    "$peer" work "$url" "$q" --forever --concurrency 4 --sleep-ms 300 \
        --log "$tmp/c.log" >/dev/null 2>"$tmp/c.err" &
    pids="$pids $!"
    i=0
    until grep -q working "$tmp/c.err" 2>/dev/null; do
        i=$((i + 1))
        [ $i -le 200 ] || fail "C worker did not start: $(cat "$tmp/c.err")"
        sleep 0.05
    done
    sleep 0.5 # idle on the marker now
    js global-concurrency "$q" 1 6 >"$tmp/gc.json" || fail "global concurrency run"
    ms=$(sed 's/.*"ms":\([0-9]*\).*/\1/' "$tmp/gc.json")
    grep -q '"maxActive":1}' "$tmp/gc.json" || fail "limit broken: $(cat "$tmp/gc.json")"
    [ "$ms" -lt 3600 ] || fail "6 jobs of 300 ms took $ms ms (ideal 1800)"
    [ "$(sort -u "$tmp/c.log" | wc -l)" -eq 6 ] || fail "the C worker ran $(wc -l <"$tmp/c.log") runs"
    echo "global concurrency 1, C worker of concurrency 4: 6 jobs of 300 ms in $ms ms, one at a time"
    ;;
obliterate)
    # a C worker holding a job (3 s) when the queue is obliterated; the
    # check looks again after the job's end (its outcome is refused).
    "$peer" one "$url" "$q" sleep '{}' >/dev/null || fail "add"
    "$peer" work "$url" "$q" --forever --sleep-ms 3000 \
        --log "$tmp/c.log" >/dev/null 2>"$tmp/c.err" &
    worker=$!
    pids="$pids $worker"
    js obliterate "$q" >/dev/null || fail "obliterate"
    sleep 4 # the job ends, its outcome is refused; renewals and takes go on
    left=$(redis-cli -u "$url" --scan --pattern "bull:$q:*" | sort | tr '\n' ' ')
    [ -z "$left" ] || fail "keys left while the worker runs: $left"
    kill -TERM $worker
    wait $worker || fail "C worker failed: $(cat "$tmp/c.err")"
    left=$(redis-cli -u "$url" --scan --pattern "bull:$q:*" | sort | tr '\n' ' ')
    [ -z "$left" ] || fail "keys left after the worker stopped: $left"
    echo "obliterate while a C worker held a job: nothing of the queue left"
    ;;
runat)
    [ -n "$cli" ] || { echo "skipped: no lanes CLI"; exit 77; }
    js add-one "$q" flaky '{}' '{"delay":200,"attempts":3,"backoff":{"type":"fixed","delay":100}}' \
        >/dev/null || fail "Node add"
    js work "$q" 1 "$tmp/n.log" >/dev/null || fail "Node worker"
    "$cli" jobs "$url" get "$q" 1 --json >"$tmp/get.json" || fail "lanes jobs get"
    python3 - "$tmp/get.json" <<'PY' || fail "run_at_ms: $(cat "$tmp/get.json")"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["state"] == "completed" and j["attempts_made"] == 2, j
assert j["run_at_ms"] - j["created_ms"] == 200, j
PY
    echo "a job BullMQ delayed, promoted and retried: run_at_ms = created_ms + 200"
    ;;
trace)
    tp=00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01
    js trace-produce "$q" $tp >/dev/null || fail "Node add"
    "$peer" trace "$url" "$q" $tp || fail "C add"
    "$peer" work "$url" "$q" >/dev/null 2>&1 || fail "C worker"
    js trace-check "$q" $tp || fail "trace context"
    ;;
board)
    "$peer" add "$url" "$q" >/dev/null || fail "C add"
    js board "$q" 13 || fail "Bull Board"
    "$peer" work "$url" "$q" --forever >/dev/null 2>&1 &
    worker=$!
    pids="$pids $worker"
    i=0
    until js counts "$q" | grep -q '"completed":11,'; do # "gone" leaves no trace
        i=$((i + 1))
        [ $i -le 100 ] || fail "the C worker did not run the jobs"
        sleep 0.1
    done
    js board-workers "$q" || fail "Bull Board workers panel"
    kill -TERM $worker
    wait $worker || fail "C worker did not stop cleanly on SIGTERM"
    ;;
json)
    js json-produce "$q-c" >/dev/null || fail "Node add"
    "$peer" work "$url" "$q-c" >/dev/null 2>&1 || fail "C worker"
    js json-check "$q-c" c || fail "C worker result"
    echo "JSON past jansson's range: unchanged through a C worker"
    [ -n "$cli" ] || exit 0
    js json-produce "$q-x" >/dev/null || fail "Node add"
    "$cli" worker "$url" "$q-x" --exit-when-empty --exec sh -c \
        'if [ "$LANES_JOB_NAME" = big ]; then
             printf "{\"total\":100000000000000000000,\"ok\":true}\n"
         else cat; fi' >/dev/null || fail "lanes worker --exec"
    js json-check "$q-x" exec || fail "--exec result"
    echo "... and through \`lanes worker --exec\`"
    ;;
outcomes)
    [ -n "$cli" ] || { echo "skipped: no lanes CLI"; exit 77; }
    js add-one "$q" unrec '{}' '{"attempts":3}' >/dev/null || fail "Node add"
    js add-one "$q" later '{"l":1}' '{"attempts":1}' >/dev/null || fail "Node add"
    "$cli" worker "$url" "$q" --max-jobs 2 --exec sh -c \
        'case "$LANES_JOB_NAME" in
           unrec) echo "bad input" >&2; exit 76 ;;
           *) echo "{\"delay_ms\": 300}"; exit 75 ;;
         esac' >/dev/null 2>"$tmp/c.err" || fail "lanes worker --exec: $(cat "$tmp/c.err")"
    js job "$q" 1 >"$tmp/j1.json" || fail "Node get 1"
    js job "$q" 2 >"$tmp/j2.json" || fail "Node get 2"
    python3 - "$tmp/j1.json" "$tmp/j2.json" <<'PY' || fail "C outcomes as Node sees them: $(cat "$tmp/j1.json" "$tmp/j2.json")"
import json, sys
u, d = (json.load(open(f)) for f in sys.argv[1:3])
assert u["state"] == "failed" and u["attemptsMade"] == 1 and u["attemptsStarted"] == 1, u
assert u["failedReason"] == "exit status 76 (unrecoverable): bad input", u
assert d["state"] == "delayed" and d["attemptsMade"] == 0 and d["attemptsStarted"] == 1, d
assert 0 < d["delay"] <= 300, d
PY
    redis-cli -u "$url" xrange "bull:$q:events" - + | tr '\n' ' ' |
        grep -q 'event delayed jobId 2 delay' || fail "no delayed event for job 2"
    js work "$q" 1 >/dev/null || fail "Node worker"
    js job "$q" 2 >"$tmp/j2.json" || fail "Node get 2"
    python3 - "$tmp/j2.json" <<'PY' || fail "the delayed job after Node ran it: $(cat "$tmp/j2.json")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["state"] == "completed" and d["attemptsMade"] == 1 and d["attemptsStarted"] == 2, d
assert d["returnvalue"] == {"name": "later", "data": {"l": 1}}, d
PY
    echo "C unrecoverable: failed after 1 attempt for Node; C delay: delayed for Node, then run by it"
    ;;
dedup)
    [ -n "$cli" ] || { echo "skipped: no lanes CLI"; exit 77; }
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
    ;;
waitfor)
    # Node's waitUntilFinished for a job a C worker runs.
    js wait-finished "$q-a" plain '{"n":1}' "$tmp/ready-a" >"$tmp/wf.json" &
    node_pid=$!
    pids="$pids $node_pid"
    wait_lines "$tmp/ready-a" 1
    "$peer" work "$url" "$q-a" >/dev/null 2>&1 || fail "C worker"
    wait $node_pid || fail "waitUntilFinished in Node"
    echo "BullMQ's waitUntilFinished returns the result of a job a C worker ran"
    [ -n "$cli" ] || exit 0
    # lanes jobs wait (ln_jobs_wait) for jobs a Node worker runs.
    id=$(js add-one "$q-b" plain '{"n":2}' | sed 's/.*"id":"\([^"]*\)".*/\1/')
    bad=$(js add-one "$q-b" doomed '{}' | sed 's/.*"id":"\([^"]*\)".*/\1/')
    "$cli" jobs "$url" wait "$q-b" "$id" --timeout 20 >"$tmp/wait-ok.out" &
    w1=$!
    "$cli" jobs "$url" wait "$q-b" "$bad" --timeout 20 2>"$tmp/wait-bad.err" &
    w2=$!
    sleep 0.3
    js work "$q-b" 1 >/dev/null || fail "Node worker"
    wait $w1 || fail "lanes jobs wait for a completed job"
    grep -qx '{"name":"plain","data":{"n":2}}' "$tmp/wait-ok.out" ||
        fail "wait printed $(cat "$tmp/wait-ok.out")"
    rc=0
    wait $w2 || rc=$?
    [ $rc -eq 1 ] || fail "lanes jobs wait for a failed job exited $rc"
    grep -q doomed "$tmp/wait-bad.err" || fail "wait reason $(cat "$tmp/wait-bad.err")"
    rc=0
    "$cli" jobs "$url" wait "$q-b" "$id" --timeout 0 >/dev/null || rc=$?
    [ $rc -eq 0 ] || fail "wait on a finished job exited $rc"
    echo "lanes jobs wait returns the outcome of jobs a Node worker ran"
    # lanes' follower sees the Node worker's events.
    "$cli" jobs "$url" events "$q-b" --from 0 >"$tmp/events.out" || fail "lanes jobs events"
    grep -q "^[0-9-]* completed $id {\"jobId\":\"$id\",\"returnvalue\":" "$tmp/events.out" ||
        fail "no completed event: $(cat "$tmp/events.out")"
    grep -q "^[0-9-]* failed $bad " "$tmp/events.out" || fail "no failed event"
    echo "lanes jobs events shows a Node worker's completed and failed events"
    ;;
flow_node_to_c)
    ids=$(js flow-add "$q") || fail "FlowProducer add"
    ok=$(echo "$ids" | sed 's/.*"ok":"\([^"]*\)".*/\1/')
    bad=$(echo "$ids" | sed 's/.*"bad":"\([^"]*\)".*/\1/')
    ign=$(echo "$ids" | sed 's/.*"ign":"\([^"]*\)".*/\1/')
    "$peer" work "$url" "$q-c" >/dev/null 2>"$tmp/c.err" || fail "C worker (children): $(cat "$tmp/c.err")"
    "$peer" work "$url" "$q-p" >/dev/null 2>"$tmp/p.err" || fail "C worker (roots): $(cat "$tmp/p.err")"
    js flow-check "$q" "$ok" "$bad" "$ign" >/dev/null || fail "the FlowProducer trees did not finish on C workers"
    echo "FlowProducer trees finish on C workers: getChildrenValues has every child, fail-parent fails the root"
    ;;
flow_c_to_node)
    [ -n "$cli" ] || { echo "skipped: no lanes CLI"; exit 77; }
    js flow-json "$q" "$tmp/t1.json" "$tmp/t2.json" "$tmp/t3.json" >/dev/null || fail "flow-json"
    ok=$("$cli" jobs "$url" flow "$tmp/t1.json" | head -1 | cut -d' ' -f2) || fail "lanes jobs flow"
    bad=$("$cli" jobs "$url" flow "$tmp/t2.json" | head -1 | cut -d' ' -f2) || fail "lanes jobs flow"
    ign=$("$cli" jobs "$url" flow "$tmp/t3.json" | head -1 | cut -d' ' -f2) || fail "lanes jobs flow"
    [ -n "$ok" ] && [ -n "$bad" ] && [ -n "$ign" ] || fail "lanes jobs flow printed no ids"
    js work "$q-c" >/dev/null || fail "Node worker (children)"
    js work "$q-p" >/dev/null || fail "Node worker (roots)"
    js flow-check "$q" "$ok" "$bad" "$ign" >/dev/null || fail "the lanes trees did not finish on Node workers"
    echo "lanes flows finish on Node workers: getChildrenValues has every child, fail-parent fails the root"
    ;;
*)
    echo "unknown case $what" >&2
    exit 2
    ;;
esac
exit 0
