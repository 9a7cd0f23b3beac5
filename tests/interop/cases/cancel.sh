# shellcheck shell=sh
# shellcheck disable=SC2154 # url, q, tmp, peer, cli, ...: set by the driver
# interop/cases/cancel.sh - the interop cases of cancelling a job.
# Sourced by tests/interop/test_redis_interop.sh, which has the helpers (js, fail,
# events_start, ...) and the variables (url, q, tmp, peer, cli) they use.
# Case X is the function case_X; tests/redis.cmake lists the names.

#   cancel     `lanes jobs cancel` of a Node job that `lanes worker --exec`
#              runs: Node's QueueEvents sees it failed "canceled" (one
#              attempt of 3 made, no retry) and the C worker ends; of a
#              job a Node Worker runs: the same, BullMQ refuses the
#              processor's late outcome (an 'error') and the Node worker
#              goes on with the next job.
case_cancel() {
    need_cli
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
}

#   cancel_child  `lanes jobs cancel` of Node flow children before they
#              ran: the parent learns of the failure as of any: one whose
#              child had ignoreDependencyOnFailure completes with it as an
#              ignored failure, one whose child had failParentOnFailure
#              fails, on Node Workers.
case_cancel_child() {
    need_cli
    ids=$(js cancel-setup "$q") || fail "cancel-setup"
    get() { echo "$ids" | sed "s/.*\"$1\":\"\([^\"]*\)\".*/\1/"; }
    "$cli" jobs "$url" cancel "${q}k" "$(get hi)" >/dev/null || fail "cancel held-i"
    "$cli" jobs "$url" cancel "${q}k" "$(get hf)" >/dev/null || fail "cancel held-f"
    js cancel-check "$q" "$(get pi)" "$(get pf)" >/dev/null || fail "cancel-check"
    echo "canceled Node flow children reached their parents as failures"
}
