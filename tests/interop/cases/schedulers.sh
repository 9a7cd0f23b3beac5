# shellcheck shell=sh
# shellcheck disable=SC2154 # url, q, tmp, peer, cli, ...: set by the driver
# interop/cases/schedulers.sh - the interop cases of job schedulers.
# Sourced by tests/interop/test_redis_interop.sh, which has the helpers (js, fail,
# events_start, ...) and the variables (url, q, tmp, peer, cli) they use.
# Case X is the function case_X; tests/redis.cmake lists the names.

#   sched_node_to_c    a Node upsertJobScheduler (every 200 ms) run by C
#              workers only: >= 8 iterations in 2.2 s (each made when a C
#              worker took the one before), BullMQ's fields on each, and
#              still producing after (a second C run adds more).
#   sched_cron_node_to_c    a Node pattern with seconds ('* * * * * *' in
#              Europe/Berlin) run by a C worker: an iteration a second,
#              on whole seconds.
case_sched_node_to_c() {
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
}
case_sched_cron_node_to_c() { case_sched_node_to_c; }

# A Node Worker (interop.mjs serve) on $q for SECONDS, its stderr in
# $tmp/n.err; fails the case when it does not start or stop cleanly.
node_serve_for() { # SECONDS
    node "$interop/interop.mjs" serve "$q" "$tmp/n.log" 2>"$tmp/n.err" &
    node_pid=$!
    pids="$pids $node_pid"
    wait_word "$tmp/n.err" ready 200 "Node worker did not start"
    sleep "$1"
    kill -TERM $node_pid
    wait $node_pid || fail "Node worker: $(cat "$tmp/n.err")"
}

#   sched_c_to_node    schedules made by `lanes jobs schedule` (--every 200,
#              and --cron with seconds in Asia/Kolkata) advanced by a Node
#              Worker only, likewise.
case_sched_c_to_node() {
    need_cli
    "$cli" jobs "$url" schedule "$q" lsch --every 200 tick '{"c":2}' >/dev/null ||
        fail "lanes jobs schedule"
    "$cli" jobs "$url" schedule "$q" lcr --cron '* * * * * *' --tz Asia/Kolkata tick >/dev/null ||
        fail "lanes jobs schedule --cron"
    node_serve_for 2.2
    n1=$(js sched-check "$q" lsch 8 200 '{"c":2}') || fail "lanes scheduler run by Node"
    n2=$(js sched-check "$q" lcr 2 1000 '{}' 1000) || fail "lanes cron scheduler run by Node"
    "$cli" jobs "$url" schedules "$q" | grep -q '^lsch .* every:200 ' || fail "lanes jobs schedules"
    echo "lanes schedulers advanced by a Node Worker: every $n1, cron $n2"
}

#   sched_mixed    a Node scheduler (every 100 ms) with a Node Worker and
#              a C worker on its queue at once: each advances the iterations
#              it takes, both take some, and none is made or run twice.
case_sched_mixed() {
    js sched-upsert "$q" mix '{"every":100}' '{"m":1}' >/dev/null || fail "Node upsertJobScheduler"
    node "$interop/interop.mjs" serve "$q" "$tmp/n.log" 2>"$tmp/n.err" &
    node_pid=$!
    pids="$pids $node_pid"
    wait_word "$tmp/n.err" ready 200 "Node worker did not start"
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
}

#   sched_colon_node_to_c    a Node scheduler whose id holds ':' in the
#              shape of a legacy repeat key ('team:7::UTC:5000', which
#              BullMQ 6.7 tells apart by its hash's `ic`), every 200 ms,
#              run by a C worker only: it advances as any other.
#   sched_colon_c_to_node    the same shape made by `lanes jobs schedule`,
#              advanced by a Node Worker only (which would refuse it as a
#              legacy key if lanes wrote no `ic`).
case_sched_colon_node_to_c() {
    js sched-upsert "$q" 'team:7::UTC:5000' '{"every":200}' '{"t":7}' >/dev/null ||
        fail "Node upsertJobScheduler"
    "$peer" work "$url" "$q" --forever >/dev/null 2>&1 &
    worker=$!
    pids="$pids $worker"
    sleep 2.2
    kill -TERM $worker
    wait $worker || fail "C worker did not stop cleanly"
    n=$(js sched-check "$q" 'team:7::UTC:5000' 8 200 '{"t":7}') || fail "C run of a ':' id"
    echo "Node scheduler with ':' in its id run by a C worker: $n"
}

case_sched_colon_c_to_node() {
    need_cli
    "$cli" jobs "$url" schedule "$q" 'user:42::UTC:9' --every 200 tick '{"u":42}' >/dev/null ||
        fail "lanes jobs schedule of a ':' id"
    node_serve_for 2.2
    grep -q 'Failed to add repeatable job' "$tmp/n.err" && fail "Node: $(cat "$tmp/n.err")"
    n=$(js sched-check "$q" 'user:42::UTC:9' 8 200 '{"u":42}') || fail "Node run of a ':' id"
    "$cli" jobs "$url" schedules "$q" | grep -q '^user:42::UTC:9 ' || fail "lanes jobs schedules"
    echo "lanes scheduler with ':' in its id advanced by a Node Worker: $n"
}
