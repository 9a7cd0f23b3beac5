# shellcheck shell=sh
# shellcheck disable=SC2154 # url, q, tmp, peer, cli, ...: set by the driver
# interop/cases/review3.sh - the review's interop cases
# (tests/interop/node/review3.mjs). Sourced by tests/interop/test_redis_interop.sh,
# which has the helpers (js, fail, wait_word, ...) and the variables.

#   review3_active_priority_node  Node's job.changePriority on a job a
#              `lanes worker --exec` runs: the job stays active with the new
#              priority field (7), and its failed first run retries by it:
#              behind job y of priority 5 that Node added meanwhile (by
#              the old priority 0 it would run before y); both complete.
case_review3_active_priority_node() {
    need_cli
    js rv-add "$q" >/dev/null || fail "rv-add"
    # shellcheck disable=SC2016 # the program's own $0 and $LANES_JOB_ID
    "$cli" worker "$url" "$q" --concurrency 1 --exit-when-empty --exec /bin/sh -c \
        'cat >/dev/null; echo "$LANES_JOB_ID" >>"$0.order"; if [ ! -f "$0.go" ]; then echo run >"$0"; while [ ! -f "$0.go" ]; do sleep 0.05; done; exit 1; fi; echo 1' \
        "$tmp/run" >/dev/null 2>"$tmp/c.err" &
    wpid=$!
    pids="$pids $wpid"
    wait_word "$tmp/run" run 400 "the C worker did not start x"
    js rv-prio "$q" 7 >/dev/null || fail "rv-prio"
    touch "$tmp/run.go"
    wait "$wpid" || fail "lanes worker: $(cat "$tmp/c.err")"
    [ "$(tr '\n' ' ' <"$tmp/run.order")" = "x y x " ] || fail "run order: $(cat "$tmp/run.order")"
    js rv-check "$q" 7 >/dev/null || fail "rv-check"
    echo "a C worker ran a job whose priority Node changed while it ran: retried and completed"
}

#   review3_dedup_stale_key  a dedup id held without a TTL by a job that
#              is gone (its hash deleted, as a crash or a restored copy
#              leaves it): BullMQ's next add takes the id (its stale key
#              recovery), so `lanes jobs dedup` says none holds it (exit 4),
#              as the sqlite store answers, and --remove says 0.
case_review3_dedup_stale_key() {
    need_cli
    id=$("$cli" jobs "$url" add "$q" n '{}' --dedup k 2>"$tmp/c.err") || fail "add: $(cat "$tmp/c.err")"
    redis-cli -u "$url" del "bull:$q:$id" >/dev/null || fail "redis-cli del"
    "$cli" jobs "$url" dedup "$q" k >"$tmp/d.out" 2>&1
    rc=$?
    [ $rc -eq 4 ] || fail "dedup k with its holder gone: exit $rc, $(cat "$tmp/d.out")"
    out=$("$cli" jobs "$url" dedup "$q" k --remove 2>&1) || fail "dedup --remove: $out"
    [ "$out" = 0 ] || fail "dedup --remove of a stale key printed $out"
    id2=$("$cli" jobs "$url" add "$q" n '{}' --dedup k 2>"$tmp/c.err") || fail "add: $(cat "$tmp/c.err")"
    [ "$id2" != "$id" ] || fail "lanes' add deduplicated to the gone holder"
    redis-cli -u "$url" del "bull:$q:$id2" >/dev/null || fail "redis-cli del"
    js rv-dedup-add "$q" "$id2" >/dev/null || fail "rv-dedup-add"
    echo "a stale dedup key: lanes says none holds it, as BullMQ's add and the sqlite store"
}
