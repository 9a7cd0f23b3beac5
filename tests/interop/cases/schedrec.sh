# shellcheck shell=sh
# shellcheck disable=SC2154 # url, q, tmp, peer, cli, ...: set by the driver
# interop/cases/schedrec.sh - a job scheduler's current iteration whose
# holder died (tests/interop/node/schedrec.mjs): a BullMQ Worker makes the
# next iteration in a call after its take, so a worker killed between the
# two leaves the iteration active and none after it. A stalled check,
# lanes' (`lanes worker --max-stalled 0`) as BullMQ 6.7's, requeues a
# repeatable job however often it stalled, never fails it, and the take
# that runs it makes the next iteration (docs/internals/schedules.md).
# Sourced by tests/interop/test_redis_interop.sh (helpers and variables).

# A lanes worker checking for stalls every 300 ms until iteration $1 of
# scheduler sr (KIND every or cron) is requeued, taken and completed by it
# and Node found the one next iteration; then, that worker stopped, a Node
# Worker runs that one.
sr_recover() { # ID KIND
    "$cli" worker "$url" "$q" --max-stalled 0 --stalled-interval 300 --exec true \
        >/dev/null 2>"$tmp/sr.err" &
    w=$!
    pids="$pids $w"
    js sr-check "$q" "$1" "$2" >"$tmp/sr.out" 2>"$tmp/sr.cerr" &
    c=$!
    pids="$pids $c"
    wait "$c"
    rc=$?
    kill -TERM "$w"
    wait "$w" 2>/dev/null
    [ $rc -eq 0 ] || fail "sr-check: $(cat "$tmp/sr.cerr") (worker: $(cat "$tmp/sr.err"))"
    next=$(sed 's/.*"next":"\([^"]*\)".*/\1/' "$tmp/sr.out")
    js sr-run "$q" "$next" "$2" >>"$tmp/sr.out" || fail "sr-run"
}

# The queue paused, a lanes worker only checks for stalls (every 300 ms,
# --max-stalled 0) until iteration $1 of sr (KIND) is back in wait with no
# deferred failure; stopped, a stock Node Worker (the queue resumed) takes
# it, completes it and finds the one next iteration, which a second Node
# Worker runs, making the third.
sr_requeue_node_take() { # ID KIND
    js sr-pause "$q" >/dev/null || fail "sr-pause"
    "$cli" worker "$url" "$q" --max-stalled 0 --stalled-interval 300 --exec true \
        >/dev/null 2>"$tmp/sr.err" &
    w=$!
    pids="$pids $w"
    js sr-requeued "$q" "$1" >"$tmp/sr.out" 2>"$tmp/sr.cerr"
    rc=$?
    kill -TERM "$w"
    wait "$w" 2>/dev/null
    [ $rc -eq 0 ] || fail "sr-requeued: $(cat "$tmp/sr.cerr") (worker: $(cat "$tmp/sr.err"))"
    js sr-node-take "$q" "$1" "$2" >"$tmp/sr.out" || fail "sr-node-take"
    next=$(sed 's/.*"next":"\([^"]*\)".*/\1/' "$tmp/sr.out")
    js sr-run "$q" "$next" "$2" >>"$tmp/sr.out" || fail "sr-run"
}

#   schedrec_node_died  a Node take of an every scheduler's iteration,
#              without the worker's next call (its lock lapses): lanes'
#              stalled check requeues it past --max-stalled 0, the lanes
#              worker's take runs it and makes exactly one pending
#              iteration, a minute after it (count 2, the template's
#              data), and a Node Worker runs that one.
case_schedrec_node_died() {
    need_cli
    js sr-take "$q" 0 every >"$tmp/take.json" || fail "sr-take"
    id=$(sed 's/.*"id":"\([^"]*\)".*/\1/' "$tmp/take.json")
    sr_recover "$id" every
    echo "the take of $id after lanes' stalled check made: $(cat "$tmp/sr.out")"
}

#   schedrec_node_made_next  the same with the worker's next call made
#              before its lock lapsed: the take of the requeued iteration
#              makes no second pending iteration.
case_schedrec_node_made_next() {
    need_cli
    js sr-take "$q" 1 every >"$tmp/take.json" || fail "sr-take"
    id=$(sed 's/.*"id":"\([^"]*\)".*/\1/' "$tmp/take.json")
    sr_recover "$id" every
    echo "one pending iteration after the stall of $id: $(cat "$tmp/sr.out")"
}

#   schedrec_node_died_cron  schedrec_node_died with a pattern in a time
#              zone (New Year in Berlin, the first iteration promoted): the
#              next time is cron-parser's (computed in C), and opts carry
#              the pattern, tz and prevMillis.
case_schedrec_node_died_cron() {
    need_cli
    js sr-take "$q" 0 cron >"$tmp/take.json" || fail "sr-take"
    id=$(sed 's/.*"id":"\([^"]*\)".*/\1/' "$tmp/take.json")
    sr_recover "$id" cron
    echo "the take of $id after lanes' stalled check made: $(cat "$tmp/sr.out")"
}

#   schedrec_node_stalled_c_take  a Node take without the next call, then
#              BullMQ's own stalled check (run twice, maxStalledCount 0)
#              once the lock lapsed: BullMQ 6.7 moves a scheduler's
#              iteration back to wait with no deferred failure (defa), so
#              a lanes worker's take runs it and makes the one next
#              iteration (the schedule does not end), as after lanes' own
#              check.
case_schedrec_node_stalled_c_take() {
    need_cli
    js sr-take "$q" stall every >"$tmp/take.json" || fail "sr-take"
    id=$(sed 's/.*"id":"\([^"]*\)".*/\1/' "$tmp/take.json")
    sr_recover "$id" every
    echo "after BullMQ's stalled check, a lanes take of $id made: $(cat "$tmp/sr.out")"
}

#   schedrec_c_died_node_take  a C worker (redis_peer, 1 s lease) killed
#              with kill -9 while it holds an every scheduler's iteration:
#              lanes' stalled check requeues it past --max-stalled 0 (no
#              defa), a stock Node Worker takes and completes it, and the
#              schedule goes on with exactly one next iteration (the C
#              take made it), which a Node Worker runs, making the third.
case_schedrec_c_died_node_take() {
    need_cli
    js sr-add "$q" sleep >"$tmp/add.json" || fail "sr-add"
    id=$(sed 's/.*"id":"\([^"]*\)".*/\1/' "$tmp/add.json")
    "$peer" work "$url" "$q" --lease-ms 1000 --sleep-ms 60000 --log "$tmp/held.log" --forever \
        >/dev/null 2>"$tmp/peer.err" &
    p=$!
    pids="$pids $p"
    wait_word "$tmp/held.log" "$id" 200 "the C worker did not take $id"
    kill -KILL "$p"
    wait "$p" 2>/dev/null
    sr_requeue_node_take "$id" every
    echo "after the C holder of $id died: $(cat "$tmp/sr.out")"
}

#   schedrec_node_died_node_take  a Node take without the worker's next
#              call (the iteration stays current), lanes' stalled check
#              requeues it, and a stock Node Worker's take of it makes the
#              one next iteration and completes it.
case_schedrec_node_died_node_take() {
    need_cli
    js sr-take "$q" 0 every >"$tmp/take.json" || fail "sr-take"
    id=$(sed 's/.*"id":"\([^"]*\)".*/\1/' "$tmp/take.json")
    sr_requeue_node_take "$id" every
    echo "after the Node holder of $id died: $(cat "$tmp/sr.out")"
}

#   schedrec_rjk_stalled  BullMQ's isRepeatableJob beyond schedulers: a
#              job whose rjk is only a member of the repeat ZSET (a legacy
#              repeatable job) and one whose rjk names nothing, taken and
#              left to stall, under BullMQ's own check (one queue) and
#              lanes' (a twin queue, paused so its worker only checks):
#              both requeue the first with no defa; the second fails
#              (lanes: at once; BullMQ: defa, failed by its next take).
case_schedrec_rjk_stalled() {
    need_cli
    for side in bullmq lanes; do
        js sr-rjk-take "$q-$side" >"$tmp/rjk.json" || fail "sr-rjk-take"
        legacy=$(sed 's/.*"legacy":"\([^"]*\)".*/\1/' "$tmp/rjk.json")
        nothing=$(sed 's/.*"nothing":"\([^"]*\)".*/\1/' "$tmp/rjk.json")
        w=""
        if [ "$side" = lanes ]; then
            js sr-pause "$q-$side" >/dev/null || fail "sr-pause"
            "$cli" worker "$url" "$q-$side" --max-stalled 0 --stalled-interval 300 --exec true \
                >/dev/null 2>"$tmp/sr.err" &
            w=$!
            pids="$pids $w"
        fi
        js sr-rjk-check "$q-$side" "$side" "$legacy" "$nothing" >>"$tmp/sr.out" 2>"$tmp/sr.cerr"
        rc=$?
        [ -n "$w" ] && { kill -TERM "$w"; wait "$w" 2>/dev/null; }
        [ $rc -eq 0 ] || fail "sr-rjk-check $side: $(cat "$tmp/sr.cerr")"
    done
    echo "the stalled checks agree: $(cat "$tmp/sr.out")"
}
