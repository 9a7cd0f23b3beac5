# shellcheck shell=sh
# shellcheck disable=SC2154 # url, q, tmp, peer, cli, ...: set by the driver
# interop/cases/retry_finished.sh - the interop cases of retrying
# completed jobs: `lanes jobs retry --state completed` on a Node team's
# jobs, and BullMQ's job.retry('completed') and queue.retryJobs() on jobs
# a C worker completed.
# Sourced by tests/interop/test_redis_interop.sh, which has the helpers (js, fail,
# events_start, ...) and the variables (url, q, tmp, peer, cli) they use.
# Case X is the function case_X; tests/redis.cmake lists the names.

#   retry_completed_c_on_node  a Node Worker completes job j and the
#              child k of flow parent p (in another queue, left waiting);
#              `lanes jobs retry Q j --state completed` and `lanes jobs
#              retry Q --all --state completed` (which takes k, saying 1)
#              leave both as BullMQ's job.retry('completed',
#              {resetAttemptsMade: true}) does (waiting, no returnvalue,
#              finishedOn or processedOn, attemptsMade 0), with 'waiting'
#              events of prev 'completed'; p's dependency on k is
#              unprocessed again and p stays waiting; a Node Worker runs
#              both again and p then holds k's new result.
case_retry_completed_c_on_node() {
    need_cli
    ids=$(js rf-setup "$q") || fail "rf-setup"
    get() { echo "$ids" | sed "s/.*\"$1\":\"\([^\"]*\)\".*/\1/"; }
    "$cli" jobs "$url" retry "$q" "$(get j)" --state completed >"$tmp/one.out" 2>"$tmp/rf.err" ||
        fail "lanes jobs retry: $(cat "$tmp/rf.err")"
    "$cli" jobs "$url" retry "$q" --all --state completed >"$tmp/all.out" 2>"$tmp/rf.err" ||
        fail "lanes jobs retry --all: $(cat "$tmp/rf.err")"
    [ "$(cat "$tmp/all.out")" = 1 ] || fail "retry --all moved $(cat "$tmp/all.out") jobs, not 1"
    js rf-check "$q" "$(get j)" "$(get k)" "$(get p)" >/dev/null || fail "rf-check"
    echo "lanes jobs retry --state completed did what BullMQ's job.retry('completed') does"
}

#   retry_completed_node_on_c  a C worker completes three jobs a Node
#              producer added; Node retries one by job.retry('completed')
#              and the others by queue.retryJobs({state: 'completed'}) (a
#              QueueEvents sees each 'waiting' with prev 'completed'); the
#              C worker, still running, runs all three again (run 2), each
#              then at attemptsMade 2 (BullMQ's retry keeps the first).
case_retry_completed_node_on_c() {
    need_cli
    ids=$(js rf-add "$q") || fail "rf-add"
    get() { echo "$ids" | sed "s/.*\"$1\":\"\([^\"]*\)\".*/\1/"; }
    mkdir -p "$tmp/runs"
    "$cli" worker "$url" "$q" --exec /bin/sh -c \
        'cat >/dev/null; f="$0/$LANES_JOB_ID"; echo x >>"$f"
         printf "{\"run\":%s}" "$(wc -l <"$f" | tr -d " ")"' "$tmp/runs" >/dev/null \
        2>"$tmp/c.err" &
    pids="$pids $!"
    for id in "$(get a)" "$(get b)" "$(get c)"; do
        js wait-state "$q" "$id" completed >/dev/null || fail "job $id never completed"
    done
    js rf-node-retry "$q" "$(get a)" "$(get b)" "$(get c)" >/dev/null || fail "rf-node-retry"
    js rf-ran-again "$q" "$(get a)" "$(get b)" "$(get c)" >/dev/null ||
        fail "rf-ran-again: $(cat "$tmp/c.err")"
    echo "the C worker ran the jobs Node's job.retry('completed') and retryJobs() retried"
}
