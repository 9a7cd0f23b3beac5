# shellcheck shell=sh
# shellcheck disable=SC2154 # url, q, tmp, peer, cli, ...: set by the driver
# interop/cases/jobs.sh - the interop cases of adding and running jobs both ways, their outcomes,
# waiting for them, obliterate.
# Sourced by tests/interop/test_redis_interop.sh, which has the helpers (js, fail,
# events_start, ...) and the variables (url, q, tmp, peer, cli) they use.
# Case X is the function case_X; tests/redis.cmake lists the names.

#   node_to_c  BullMQ Queue.add/addBulk (plain, delayed, prioritized, LIFO,
#              attempts + exponential backoff, custom ids) -> a C ln_worker
#              (and `lanes worker --exec` when the CLI has it). BullMQ's
#              getJobCounts/getJobs and QueueEvents must report exactly what
#              they report for the same jobs run by a BullMQ Worker, and the
#              jobs must run in the same order.
case_node_to_c() {
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
    need_cli
    events_start "$q-x"
    js produce "$q-x" >/dev/null || fail "produce"
    LANES_ORDER_LOG="$tmp/order-$q-x.log" "$cli" worker "$url" "$q-x" --exit-when-empty \
        --exec sh -c 'echo "$LANES_JOB_ID" >>"$LANES_ORDER_LOG"; exec "$0"' \
        "$interop/handler.sh" >/dev/null || fail "lanes worker --exec"
    events_stop "$q-x"
    same_outcome "$q-n" "$q-x" exec
    echo "... and by \`lanes worker --exec\`"
}

#   c_to_node  the same jobs added with the C API (and `lanes jobs add`) ->
#              a BullMQ Worker: same order, results, retries and events as
#              for jobs BullMQ added itself.
case_c_to_node() {
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
    need_cli
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
}

#   mixed      10,000 jobs, a BullMQ Worker and a C worker (concurrency 50
#              each) on one queue: every job completes exactly once.
case_mixed() {
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
}

#   outcomes   `lanes worker --exec` (a C ln_worker) on BullMQ jobs: exit 76
#              (unrecoverable) is failed for Node after one attempt with two
#              left (attemptsMade 1); exit 75 with {"delay_ms": 300} is
#              delayed for Node (attempts unchanged, a "delayed" event),
#              and a Node Worker then runs it.
case_outcomes() {
    need_cli
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
if not (u["state"] == "failed" and u["attemptsMade"] == 1 and u["attemptsStarted"] == 1):
    raise SystemExit("check failed: %r" % (u,))
if not (u["failedReason"] == "exit status 76 (unrecoverable): bad input"):
    raise SystemExit("check failed: %r" % (u,))
if not (d["state"] == "delayed" and d["attemptsMade"] == 0 and d["attemptsStarted"] == 1):
    raise SystemExit("check failed: %r" % (d,))
if not (0 < d["delay"] <= 300):
    raise SystemExit("check failed: %r" % (d,))
PY
    redis-cli -u "$url" xrange "bull:$q:events" - + | tr '\n' ' ' |
        grep -q 'event delayed jobId 2 delay' || fail "no delayed event for job 2"
    js work "$q" 1 >/dev/null || fail "Node worker"
    js job "$q" 2 >"$tmp/j2.json" || fail "Node get 2"
    python3 - "$tmp/j2.json" <<'PY' || fail "the delayed job after Node ran it: $(cat "$tmp/j2.json")"
import json, sys
d = json.load(open(sys.argv[1]))
if not (d["state"] == "completed" and d["attemptsMade"] == 1 and d["attemptsStarted"] == 2):
    raise SystemExit("check failed: %r" % (d,))
if not (d["returnvalue"] == {"name": "later", "data": {"l": 1}}):
    raise SystemExit("check failed: %r" % (d,))
PY
    echo "C unrecoverable: failed after 1 attempt for Node; C delay: delayed for Node, then run by it"
}

#   runat      a BullMQ job with a delay, promoted and retried (backoff) by
#              a BullMQ Worker: \`lanes jobs get\` reports run_at_ms as
#              created_ms + its delay, as for jobs lanes ran (jobs.h).
case_runat() {
    need_cli
    js add-one "$q" flaky '{}' '{"delay":200,"attempts":3,"backoff":{"type":"fixed","delay":100}}' \
        >/dev/null || fail "Node add"
    js work "$q" 1 "$tmp/n.log" >/dev/null || fail "Node worker"
    "$cli" jobs "$url" get "$q" 1 --json >"$tmp/get.json" || fail "lanes jobs get"
    python3 - "$tmp/get.json" <<'PY' || fail "run_at_ms: $(cat "$tmp/get.json")"
import json, sys
j = json.load(open(sys.argv[1]))
if not (j["state"] == "completed" and j["attempts_made"] == 2):
    raise SystemExit("check failed: %r" % (j,))
if not (j["run_at_ms"] - j["created_ms"] == 200):
    raise SystemExit("check failed: %r" % (j,))
PY
    echo "a job BullMQ delayed, promoted and retried: run_at_ms = created_ms + 200"
}

case_waitfor() {
    # Node's waitUntilFinished for a job a C worker runs.
    js wait-finished "$q-a" plain '{"n":1}' "$tmp/ready-a" >"$tmp/wf.json" &
    node_pid=$!
    pids="$pids $node_pid"
    wait_lines "$tmp/ready-a" 1
    "$peer" work "$url" "$q-a" >/dev/null 2>&1 || fail "C worker"
    wait $node_pid || fail "waitUntilFinished in Node"
    echo "BullMQ's waitUntilFinished returns the result of a job a C worker ran"
    need_cli
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
}

#   obliterate queue.obliterate({force: true}) while a C worker holds a job
#              (and after it finished it): no key of the queue is left.
case_obliterate() {
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
}
