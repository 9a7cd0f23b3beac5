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
#   workers    connected workers both ways: a running `lanes worker` (and a
#              C ln_worker) is listed by Node's queue.getWorkers() under
#              BullMQ's name format and gone once it stopped; two idle
#              BullMQ Workers (named 'nodew' and unnamed) are listed by
#              `lanes jobs workers --json` as kind bullmq, gone after close.
#   metrics    per-minute metrics both ways: `lanes worker --metrics-points`
#              runs C-added jobs and Node's queue.getMetrics('completed') and
#              ('failed') count them, and after prevTS is moved 3 minutes
#              back, the next C-run job's point is there too (newest first:
#              zeros, then the jobs of prevTS's minute); a Node Worker with
#              metrics {maxDataPoints} runs jobs and `lanes jobs metrics`
#              reads its counts and points.
#   longid     job ids longer than 127 bytes both ways: a Node job with a
#              200-byte id runs on a C worker (the handler sees the whole
#              id) and Node reads it completed with its return value; `lanes
#              jobs get/retry/logs/remove/list` take 200- and 300-byte ids;
#              `lanes jobs add --id` of a 300-byte id runs on a Node worker;
#              a Node id of 70,000 bytes (past lanes' own bound) still runs
#              on a C worker and is read.
#   cancel     `lanes jobs cancel` of a Node job that `lanes worker --exec`
#              runs: Node's QueueEvents sees it failed "canceled" (one
#              attempt of 3 made, no retry) and the C worker ends; of a
#              job a Node Worker runs: the same, BullMQ refuses the
#              processor's late outcome (an 'error') and the Node worker
#              goes on with the next job.
#   sched_node_to_c    a Node upsertJobScheduler (every 200 ms) run by C
#              workers only: >= 8 iterations in 2.2 s (each made when a C
#              worker took the one before), BullMQ's fields on each, and
#              still producing after (a second C run adds more).
#   sched_c_to_node    schedules made by `lanes jobs schedule` (--every 200,
#              and --cron with seconds in Asia/Kolkata) advanced by a Node
#              Worker only, likewise.
#   sched_cron_node_to_c    a Node pattern with seconds ('* * * * * *' in
#              Europe/Berlin) run by a C worker: an iteration a second,
#              on whole seconds.
#   sched_mixed    a Node scheduler (every 100 ms) with a Node Worker and
#              a C worker on its queue at once: each advances the iterations
#              it takes, both take some, and none is made or run twice.
#   ratelimit  a C worker (`lanes worker --rate-limit 3/300`) and a Node
#              Worker with limiter {max: 3, duration: 300} on one queue of
#              18 jobs share BullMQ's limiter: six windows, never 4 jobs
#              started within 300 ms (processedOn, as Node reads them).
#   ratelimit_node  Node's setGlobalRateLimit(2, 300) holds for a C worker
#              without a limit of its own, and Node's queue.rateLimit(600)
#              holds back a C worker with one.
#   ratelimit_meta  lanes' global concurrency and rate limit, and its
#              manual limit, as Node's getGlobalConcurrency,
#              getGlobalRateLimit and getRateLimitTtl read them; Node's
#              setGlobalConcurrency as `lanes jobs concurrency` reads it.
#   ratelimit_error  `lanes worker --exec` exit 77 with {"rate_limit_ms":
#              6000} on a Node job (BullMQ's RateLimitError): Node sees it
#              waiting with no attempt used and the queue limited, and a
#              Node Worker with a limiter runs it once the limit is over.
#   ratelimit_idle  a C worker held back by a 2 s manual limit sleeps it
#              out: on a redis-server of our own, it runs at most a few
#              step scripts meanwhile (25 for a worker that went on
#              waking on the marker or polling).
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
workers)
    # Node's getWorkers() lists a running C worker, named as BullMQ's are.
    b64=$(printf %s "$q" | base64)
    js get-workers "$q" | grep -qx '{"count":0,"names":\[\]}' || fail "workers before any ran"
    "$peer" work "$url" "$q" --forever >/dev/null 2>&1 &
    worker=$!
    pids="$pids $worker"
    i=0
    until js get-workers "$q" >"$tmp/gw.json" && grep -q '"count":1,' "$tmp/gw.json"; do
        i=$((i + 1))
        [ $i -le 50 ] || fail "getWorkers() does not list the C worker: $(cat "$tmp/gw.json")"
        sleep 0.1
    done
    grep -qx "{\"count\":1,\"names\":\[\"bull:$b64:w:lanes-$worker\"\]}" "$tmp/gw.json" ||
        fail "getWorkers() listed $(cat "$tmp/gw.json")"
    kill -TERM $worker
    wait $worker || fail "C worker did not stop cleanly on SIGTERM"
    js get-workers "$q" | grep -q '"count":0,' || fail "the stopped C worker is still listed"
    echo "Node's getWorkers() lists a running C worker (bull:$b64:w:lanes-PID), not a stopped one"
    [ -n "$cli" ] || exit 0
    "$cli" worker "$url" "$q" --exec true >/dev/null 2>&1 &
    worker=$!
    pids="$pids $worker"
    i=0
    until js get-workers "$q" | grep -q "\"bull:$b64:w:lanes-$worker\""; do
        i=$((i + 1))
        [ $i -le 50 ] || fail "getWorkers() does not list \`lanes worker\`"
        sleep 0.1
    done
    "$cli" jobs "$url" workers "$q" --json >"$tmp/lw.json" || fail "lanes jobs workers"
    grep -q "\"kind\":\"lanes\",\"name\":\"lanes-$worker\",\"addr\":\"[0-9.]*:[0-9]*\",\"host\":null,\"pid\":$worker," "$tmp/lw.json" ||
        fail "lanes jobs workers listed $(cat "$tmp/lw.json")"
    kill -TERM $worker
    wait $worker || fail "lanes worker did not stop cleanly on SIGTERM"
    echo "... and a running \`lanes worker\`, which lanes jobs workers lists too"
    # lanes lists BullMQ's Node workers.
    node "$interop/interop.mjs" idle-workers "$q" >/dev/null 2>"$tmp/iw.err" &
    node_pid=$!
    pids="$pids $node_pid"
    i=0
    until grep -q ready "$tmp/iw.err" 2>/dev/null; do
        i=$((i + 1))
        [ $i -le 200 ] || fail "Node workers did not start: $(cat "$tmp/iw.err")"
        sleep 0.05
    done
    "$cli" jobs "$url" workers "$q" --json >"$tmp/nw.json" || fail "lanes jobs workers"
    grep -q '"kind":"bullmq","name":"nodew",' "$tmp/nw.json" || fail "no named Node worker: $(cat "$tmp/nw.json")"
    grep -q '"kind":"bullmq","name":null,' "$tmp/nw.json" || fail "no unnamed Node worker: $(cat "$tmp/nw.json")"
    [ "$(grep -o '"kind"' "$tmp/nw.json" | wc -l)" -eq 2 ] || fail "not 2 workers: $(cat "$tmp/nw.json")"
    kill -TERM $node_pid
    wait $node_pid || fail "Node workers failed: $(cat "$tmp/iw.err")"
    i=0
    until "$cli" jobs "$url" workers "$q" --json | grep -qx '\[\]'; do
        i=$((i + 1))
        [ $i -le 50 ] || fail "closed Node workers still listed"
        sleep 0.1
    done
    echo "lanes jobs workers lists BullMQ's Node workers (named and unnamed), not closed ones"
    ;;
metrics)
    [ -n "$cli" ] || { echo "skipped: no lanes CLI"; exit 77; }
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
assert c["meta"]["count"] == 4 and f["meta"]["count"] == 1, d
assert c["meta"]["prevTS"] > 1e12 and f["meta"]["prevTS"] > 1e12, d
assert sum(c["data"]) == c["meta"]["prevCount"] and c["count"] == len(c["data"]) <= 1, d
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
assert c["meta"]["count"] == 5 and c["meta"]["prevCount"] == 4, c
assert c["data"] in ([0, 0, 4], [0, 0, 0, 4]) and c["count"] == len(c["data"]), c
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
assert c["count"] == 2 and f["count"] == 1 and c["prevTS"] > 1e12, d
assert sum(c["data"]) == c["prevCount"] and c["points"] == len(c["data"]), d
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
assert list(d) == ["completed"], d
c = d["completed"]
assert c["count"] == 3 and c["prevCount"] == 2 and c["data"] in ([0, 2], [0, 0, 2]), c
PY
    echo "lanes jobs metrics reads the counts and points of a Node worker with metrics on"
    ;;
longid)
    [ -n "$cli" ] || { echo "skipped: no lanes CLI"; exit 77; }
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
assert j["id"] == sys.argv[2] and j["state"] == "completed", j
assert j["returnvalue"] == {"name": "plain", "data": {"n": 1}}, j
PY
    echo "a Node job with a 200-byte id ran on a C worker; Node reads its return value"
    "$cli" jobs "$url" get "$q-a" "$lid" --json >"$tmp/get.json" 2>"$tmp/get.err" ||
        fail "lanes jobs get: $(cat "$tmp/get.err")"
    python3 - "$tmp/get.json" "$lid" <<'PY' || fail "lanes jobs get: $(cat "$tmp/get.json")"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["id"] == sys.argv[2] and j["state"] == "completed", j
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
assert j["id"] == sys.argv[2] and j["state"] == "completed", j
assert j["returnvalue"] == {"name": "plain", "data": {"b": 1}}, j
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
    ;;
cancel)
    [ -n "$cli" ] || { echo "skipped: no lanes CLI"; exit 77; }
    # A C worker (lanes worker --exec) runs the Node job lanes cancels.
    js cancel-seen "$q-c" held "$tmp/ready-c" >"$tmp/cs-c.json" 2>"$tmp/cs-c.err" &
    node_pid=$!
    pids="$pids $node_pid"
    wait_lines "$tmp/ready-c" 1
    id=$(head -1 "$tmp/ready-c")
    "$cli" worker "$url" "$q-c" --exit-when-empty --exec /bin/sh -c \
        'exec 2>/dev/null; echo >"$0/started"; while :; do sleep 0.05; done' "$tmp" \
        >/dev/null 2>"$tmp/w.err" &
    wpid=$!
    pids="$pids $wpid"
    wait_lines "$tmp/started" 1
    t0=$(date +%s%N)
    "$cli" jobs "$url" cancel "$q-c" "$id" || fail "lanes jobs cancel of a C worker's job"
    wait $node_pid || fail "Node on a job canceled under a C worker: $(cat "$tmp/cs-c.err")"
    wait $wpid || fail "lanes worker: $(cat "$tmp/w.err")"
    ms=$((($(date +%s%N) - t0) / 1000000))
    # The worker's lease (30 s) would find it at its renewal, 15 s on.
    [ $ms -lt 3000 ] || fail "the C worker ended $ms ms after the cancel"
    echo "a job canceled under lanes worker --exec: failed \"canceled\" for Node's QueueEvents," \
        "the program gone $ms ms after the cancel"
    # A Node Worker runs the job lanes cancels.
    js cancel-seen "$q-n" held "$tmp/ready-n" node >"$tmp/cs-n.json" 2>"$tmp/cs-n.err" &
    node_pid=$!
    pids="$pids $node_pid"
    wait_lines "$tmp/ready-n" 1
    id=$(head -1 "$tmp/ready-n")
    "$cli" jobs "$url" cancel "$q-n" "$id" || fail "lanes jobs cancel of a Node worker's job"
    wait $node_pid || fail "Node worker on a canceled job: $(cat "$tmp/cs-n.err")"
    grep -q '"errors":[1-9]' "$tmp/cs-n.json" ||
        fail "the Node processor's late outcome was not refused: $(cat "$tmp/cs-n.json")"
    ttl=$(redis-cli -u "$url" pttl "bull:$q-n:lanes:cancel")
    [ "$ttl" -gt 0 ] && [ "$ttl" -le 86400000 ] || fail "lanes:cancel expires in $ttl ms"
    echo "a job canceled under a Node worker: failed \"canceled\", the worker went on"
    ;;
sched_node_to_c | sched_cron_node_to_c)
    # C workers only; the time a C worker runs is given, not a job count.
    c_run() { # SECONDS
        "$peer" work "$url" "$q" --forever >/dev/null 2>&1 &
        worker=$!
        pids="$pids $worker"
        sleep "$1"
        kill -TERM $worker
        wait $worker || fail "C worker did not stop cleanly"
    }
    if [ "$what" = sched_node_to_c ]; then
        js sched-upsert "$q" nsch '{"every":200}' '{"n":1}' >/dev/null || fail "Node upsertJobScheduler"
        c_run 2.2
        n1=$(js sched-check "$q" nsch 8 200 '{"n":1}') || fail "after the first C run"
        c_run 1
        n2=$(js sched-check "$q" nsch 12 200 '{"n":1}') || fail "after the second C run"
        echo "Node scheduler run by C workers: $n1 then $n2"
    else
        js sched-upsert "$q" cr '{"pattern":"* * * * * *","tz":"Europe/Berlin"}' '{}' >/dev/null ||
            fail "Node upsertJobScheduler"
        c_run 3.4
        n1=$(js sched-check "$q" cr 2 1000 '{}' 1000) || fail "cron iterations"
        echo "Node cron scheduler (seconds) run by a C worker: $n1"
    fi
    ;;
sched_c_to_node)
    [ -n "$cli" ] || { echo "skipped: no lanes CLI"; exit 77; }
    "$cli" jobs "$url" schedule "$q" lsch --every 200 tick '{"c":2}' >/dev/null ||
        fail "lanes jobs schedule"
    "$cli" jobs "$url" schedule "$q" lcr --cron '* * * * * *' --tz Asia/Kolkata tick >/dev/null ||
        fail "lanes jobs schedule --cron"
    node "$interop/interop.mjs" serve "$q" "$tmp/n.log" 2>"$tmp/n.err" &
    node_pid=$!
    pids="$pids $node_pid"
    i=0
    until grep -q ready "$tmp/n.err" 2>/dev/null; do
        i=$((i + 1))
        [ $i -le 200 ] || fail "Node worker did not start"
        sleep 0.05
    done
    sleep 2.2
    kill -TERM $node_pid
    wait $node_pid || fail "Node worker: $(cat "$tmp/n.err")"
    n1=$(js sched-check "$q" lsch 8 200 '{"c":2}') || fail "lanes scheduler run by Node"
    n2=$(js sched-check "$q" lcr 2 1000 '{}' 1000) || fail "lanes cron scheduler run by Node"
    "$cli" jobs "$url" schedules "$q" | grep -q '^lsch .* every:200 ' || fail "lanes jobs schedules"
    echo "lanes schedulers advanced by a Node Worker: every $n1, cron $n2"
    ;;
sched_mixed)
    js sched-upsert "$q" mix '{"every":100}' '{"m":1}' >/dev/null || fail "Node upsertJobScheduler"
    node "$interop/interop.mjs" serve "$q" "$tmp/n.log" 2>"$tmp/n.err" &
    node_pid=$!
    pids="$pids $node_pid"
    i=0
    until grep -q ready "$tmp/n.err" 2>/dev/null; do
        i=$((i + 1))
        [ $i -le 200 ] || fail "Node worker did not start"
        sleep 0.05
    done
    "$peer" work "$url" "$q" --forever --log "$tmp/c.log" >/dev/null 2>&1 &
    worker=$!
    pids="$pids $worker"
    sleep 2.5
    kill -TERM $worker $node_pid
    wait $worker || fail "C worker did not stop cleanly"
    wait $node_pid || fail "Node worker: $(cat "$tmp/n.err")"
    n=$(js sched-check "$q" mix 15 100 '{"m":1}') || fail "mixed run"
    [ -s "$tmp/c.log" ] && [ -s "$tmp/n.log" ] || fail "one side ran no iteration"
    cat "$tmp/c.log" "$tmp/n.log" | sort | uniq -d | grep -q . && fail "an iteration ran twice"
    echo "Node scheduler with a Node and a C worker: $n ($(wc -l <"$tmp/c.log") by C, $(wc -l <"$tmp/n.log") by Node)"
    ;;
ratelimit)
    [ -n "$cli" ] || exit 77
    # The Node worker first, waiting for jobs; then the jobs and the C worker.
    node "$interop/interop.mjs" rl-work "$q" 3 300 18 >/dev/null 2>"$tmp/n.err" &
    node_pid=$!
    pids="$pids $node_pid"
    i=0
    until grep -q ready "$tmp/n.err" 2>/dev/null; do
        i=$((i + 1))
        [ $i -le 400 ] || fail "Node worker did not start: $(cat "$tmp/n.err")"
        sleep 0.05
    done
    js rl-add "$q" 18 >/dev/null || fail "add"
    "$cli" worker "$url" "$q" --rate-limit 3/300 --concurrency 2 --exit-when-empty --verbose \
        --exec true 2>"$tmp/c.err" || fail "lanes worker: $(cat "$tmp/c.err")"
    wait $node_pid || fail "Node worker: $(cat "$tmp/n.err")"
    js rl-check "$q" 3 300 18 >"$tmp/rl.json" || fail "limit check"
    ran=$(grep -c completed "$tmp/c.err")
    [ "$ran" -ge 1 ] && [ "$ran" -le 17 ] || fail "the C worker ran $ran of 18 jobs"
    echo "C and Node workers with limiter 3/300: 18 jobs, never 4 in a window ($(cat "$tmp/rl.json"), C ran $ran)"
    ;;
ratelimit_node)
    [ -n "$cli" ] || exit 77
    js rl-node "$q" "$cli" "$url" >"$tmp/rl.json" || fail "Node limits on a C worker"
    echo "Node's setGlobalRateLimit and queue.rateLimit hold for C workers: $(cat "$tmp/rl.json")"
    ;;
ratelimit_meta)
    [ -n "$cli" ] || exit 77
    "$cli" jobs "$url" concurrency "$q" 3 || fail "lanes jobs concurrency"
    "$cli" jobs "$url" rate-limit "$q" 7/900 || fail "lanes jobs rate-limit"
    "$cli" jobs "$url" rate-limit "$q" --for 20000 || fail "lanes jobs rate-limit --for"
    js rl-meta "$q" 3 7 900 >"$tmp/rl.json" || fail "Node reads lanes' limits"
    [ "$("$cli" jobs "$url" concurrency "$q")" = 5 ] || fail "lanes reads Node's concurrency"
    "$cli" jobs "$url" rate-limit "$q" --clear || fail "clear"
    "$cli" jobs "$url" rate-limit "$q" --for 0 || fail "end the manual limit"
    [ "$("$cli" jobs "$url" rate-limit "$q" --json)" = '{"max":0,"duration_ms":0,"limited_ms":0}' ] ||
        fail "limits left: $("$cli" jobs "$url" rate-limit "$q" --json)"
    [ "$("$cli" jobs "$url" rate-limit "$q" | head -1)" = none ] || fail "rate limit not cleared"
    echo "lanes' limits read by Node and Node's by lanes: $(cat "$tmp/rl.json")"
    ;;
ratelimit_error)
    [ -n "$cli" ] || exit 77
    id=$(js add-one "$q" n '{}' '{"attempts":3}' | sed 's/.*"id":"\([^"]*\)".*/\1/')
    printf '#!/bin/sh\necho %s\nexit 77\n' "'{\"rate_limit_ms\": 6000}'" >"$tmp/rl.sh"
    chmod +x "$tmp/rl.sh"
    "$cli" worker "$url" "$q" --max-jobs 1 --exec "$tmp/rl.sh" 2>"$tmp/c.err" ||
        fail "lanes worker: $(cat "$tmp/c.err")"
    js rl-error "$q" "$id" >"$tmp/rl.json" || fail "Node's view of the rate-limited job"
    echo "a C RateLimitError as Node sees it: $(cat "$tmp/rl.json")"
    ;;
ratelimit_idle)
    [ -n "$cli" ] || exit 77
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    mkdir "$tmp/redis"
    redis-server --port "$port" --bind 127.0.0.1 --dir "$tmp/redis" --save "" --appendonly no \
        --daemonize no --loglevel warning >>"$tmp/redis/log" 2>&1 &
    redis_pid=$!
    i=0
    until redis-cli -p "$port" ping 2>/dev/null | grep -q PONG; do
        i=$((i + 1))
        [ $i -le 200 ] || fail "redis-server did not start: $(cat "$tmp/redis/log")"
        sleep 0.05
    done
    url2="redis://127.0.0.1:$port/0"
    "$cli" jobs "$url2" add "$q" n '{}' >/dev/null || fail "add"
    "$cli" jobs "$url2" rate-limit "$q" --for 2000 || fail "rate-limit --for"
    redis-cli -p "$port" config resetstat >/dev/null
    "$cli" worker "$url2" "$q" --rate-limit 5/1000 --exit-when-empty --poll 10 --exec true \
        2>"$tmp/c.err" || fail "lanes worker: $(cat "$tmp/c.err")"
    calls=$(redis-cli -p "$port" info commandstats | sed -n 's/^cmdstat_evalsha:calls=\([0-9]*\),.*/\1/p')
    "$cli" jobs "$url2" counts "$q" --json | grep -q '"completed":1' || fail "the job did not run"
    [ "${calls:-0}" -ge 1 ] && [ "${calls:-0}" -le 12 ] || fail "the limited worker ran ${calls:-0} scripts in 2 s"
    echo "a C worker limited for 2 s ran $calls step scripts, then the job"
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
