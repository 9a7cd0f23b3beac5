# shellcheck shell=sh
# shellcheck disable=SC2154 # url, q, tmp, peer, cli, ...: set by the driver
# interop/cases/admin.sh - the interop cases of lanes' administration
# commands on the queues of a Node team.
# Sourced by tests/interop/test_redis_interop.sh, which has the helpers (js, fail,
# events_start, ...) and the variables (url, q, tmp, peer, cli) they use.
# Case X is the function case_X; tests/redis.cmake lists the names.

#   drain      `lanes jobs drain` of a paused Node queue leaves what BullMQ's
#              queue.drain(true) leaves: a job scheduler's pending
#              iteration (its schedule goes on after resume), no
#              deduplication id held by a removed job (TTL or not: Node's
#              next add adds), and a parent waiting for a drained child in
#              another queue goes on (to wait, then completed by a Node
#              Worker); one whose child was in its own queue goes with it.
case_drain() {
    need_cli
    ids=$(js drain-setup "$q") || fail "drain-setup"
    other=$(echo "$ids" | sed 's/.*"other":"\([^"]*\)".*/\1/')
    same=$(echo "$ids" | sed 's/.*"same":"\([^"]*\)".*/\1/')
    "$cli" jobs "$url" drain "$q" >/dev/null || fail "lanes jobs drain $q"
    "$cli" jobs "$url" drain "${q}k" >/dev/null || fail "lanes jobs drain ${q}k"
    js drain-check "$q" "$other" "$same" >/dev/null || fail "drain-check"
    echo "lanes jobs drain kept the scheduler, freed the deduplication ids, released the parent"
}

#   retry_clean  `lanes jobs retry` and `lanes jobs clean` on the children
#              of Node flows that a C worker runs: a retried child whose
#              failure its parent ignored is its dependency again (the
#              parent gets its result, no ignored failure); cleaning a
#              failed child its parent waited for lets the parent go on;
#              cleaning a job frees its TTL deduplication id, as BullMQ's
#              job.retry and queue.clean do.
case_retry_clean() {
    need_cli
    ids=$(js fix-setup "$q") || fail "fix-setup"
    get() { echo "$ids" | sed "s/.*\"$1\":\"\([^\"]*\)\".*/\1/"; }
    "$cli" worker "$url" "${q}k" --exec /bin/sh -c \
        'case "$LANES_JOB_NAME" in
         once) [ -f "$0" ] || { touch "$0"; exit 1; } ;;
         doomed) exit 1 ;;
         esac; echo "{\"by\":\"c\"}"' "$tmp/once" >/dev/null 2>"$tmp/c.err" &
    pids="$pids $!"
    js wait-state "${q}k" "$(get once)" failed >/dev/null || fail "once never failed"
    js wait-state "${q}k" "$(get dd)" completed >/dev/null || fail "dd never completed"
    js wait-state "${q}k" "$(get doomed)" failed >/dev/null || fail "doomed never failed"
    "$cli" jobs "$url" retry "${q}k" "$(get once)" >/dev/null || fail "lanes jobs retry"
    js wait-state "${q}k" "$(get once)" completed >/dev/null || fail "once never completed"
    "$cli" jobs "$url" clean "${q}k" failed >/dev/null || fail "lanes jobs clean failed"
    "$cli" jobs "$url" clean "${q}k" completed >/dev/null || fail "lanes jobs clean completed"
    js fix-check "$q" "$(get retry)" "$(get held)" "$(get clean)" >/dev/null || fail "fix-check"
    echo "lanes jobs retry and clean kept the Node flows and deduplication as BullMQ does"
}

# The current iteration of a Node job scheduler given to `lanes jobs CMD`
# is refused with exit WANT, and the schedule goes on, run by a C worker.
iteration_refused() {
    cmd=$1 want=$2
    need_cli
    id=$(js sched-upsert "$q" tick '{"every":300}' | sed 's/.*"id":"\([^"]*\)".*/\1/') ||
        fail "sched-upsert"
    "$cli" jobs "$url" "$cmd" "$q" "$id" >/dev/null 2>"$tmp/$cmd.err"
    rc=$?
    [ $rc -eq "$want" ] ||
        fail "$cmd of the current iteration $id: exit $rc, not $want: $(cat "$tmp/$cmd.err")"
    "$cli" worker "$url" "$q" --exec /bin/sh -c 'cat >/dev/null; echo 1' >/dev/null 2>"$tmp/c.err" &
    pids="$pids $!"
    sleep 1.2
    js sched-check "$q" tick 3 250 '{}' >/dev/null || fail "the schedule did not go on"
    echo "lanes jobs $cmd left the Node scheduler's iteration, and the schedule went on"
}

#   remove_iter  `lanes jobs remove` of the current iteration of a Node job
#              scheduler is refused (exit 1), as BullMQ's job.remove refuses
#              it: the schedule goes on, run by a C worker.
case_remove_iter() {
    iteration_refused remove 1
}

#   live       a Node team's calls on jobs a C worker holds or finished
#              (node/admin.mjs live): updateData, updateProgress and log
#              during the run, remove refused, the C result, Node's data,
#              both logs and both QueueEvents progresses after it; and
#              job.retry() of a job the C worker failed runs it again
#              (attemptsMade 2).
case_live() {
    need_cli
    "$cli" worker "$url" "$q" --exec /bin/sh -c \
        'data=$(cat)
         case "$LANES_JOB_NAME" in
         slow) echo "{\"log\":\"c-log\"}" >&3; sleep 1.2; echo "{\"progress\":77}" >&3
               printf "{\"seen\":%s}" "$data" ;;
         once) [ -f "$0" ] || { touch "$0"; echo first >&2; exit 1; }; echo "{\"run\":2}" ;;
         esac' "$tmp/once" >/dev/null 2>"$tmp/c.err" &
    pids="$pids $!"
    js live "$q" >/dev/null || fail "live: $(cat "$tmp/c.err")"
    echo "Node's calls on jobs a C worker held or finished did what they do on Node's own"
}

#   cancel_iter  `lanes jobs cancel` of the pending iteration of a Node job
#              scheduler is refused (exit 2), as a remove of it is: the
#              schedule goes on, run by a C worker.
case_cancel_iter() {
    iteration_refused cancel 2
}
