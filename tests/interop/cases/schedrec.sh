# shellcheck shell=sh
# shellcheck disable=SC2154 # url, q, tmp, peer, cli, ...: set by the driver
# interop/cases/schedrec.sh - a job scheduler's current iteration whose
# Node holder died (tests/interop/node/schedrec.mjs): a BullMQ Worker makes
# the next iteration in a call after its take, so a worker killed between
# the two leaves the iteration active and none after it. lanes' stalled
# check (`lanes worker --max-stalled 0`) fails the iteration and makes the
# next one as the take would have (docs/internals/schedules.md).
# Sourced by tests/test_redis_interop.sh (helpers and variables).

# A lanes worker checking for stalls every 300 ms until iteration $1 of
# scheduler sr (KIND every or cron) failed and Node found the one next
# iteration; then, that worker stopped, a Node Worker runs it.
sr_recover() { # ID KIND [WANT: failed (default) or completed]
    "$cli" worker "$url" "$q" --max-stalled 0 --stalled-interval 300 --exec true \
        >/dev/null 2>"$tmp/sr.err" &
    w=$!
    pids="$pids $w"
    js sr-check "$q" "$1" "$2" "${3:-failed}" >"$tmp/sr.out" 2>"$tmp/sr.cerr" &
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

#   schedrec_node_died  a Node take of an every scheduler's iteration,
#              without the worker's next call (its lock lapses): once
#              lanes' stalled check failed it, the scheduler has exactly
#              one pending iteration, a minute after it (count 2, the
#              template's data), and a Node Worker runs it.
case_schedrec_node_died() {
    [ -n "$cli" ] || { echo "skipped: no lanes CLI"; exit 77; }
    js sr-take "$q" 0 every >"$tmp/take.json" || fail "sr-take"
    id=$(sed 's/.*"id":"\([^"]*\)".*/\1/' "$tmp/take.json")
    sr_recover "$id" every
    echo "lanes' stalled check made the next iteration of $id: $(cat "$tmp/sr.out")"
}

#   schedrec_node_made_next  the same with the worker's next call made
#              before its lock lapsed: the stalled failure makes no second
#              pending iteration.
case_schedrec_node_made_next() {
    [ -n "$cli" ] || { echo "skipped: no lanes CLI"; exit 77; }
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
    [ -n "$cli" ] || { echo "skipped: no lanes CLI"; exit 77; }
    js sr-take "$q" 0 cron >"$tmp/take.json" || fail "sr-take"
    id=$(sed 's/.*"id":"\([^"]*\)".*/\1/' "$tmp/take.json")
    sr_recover "$id" cron
    echo "lanes' stalled check made the next iteration of $id: $(cat "$tmp/sr.out")"
}

#   schedrec_node_stalled_c_take  a Node take without the next call, then
#              BullMQ's own stalled check (run twice, maxStalledCount 0)
#              once the lock lapsed: BullMQ 6.7 moves a scheduler's
#              iteration back to wait with no deferred failure (defa), so
#              a lanes worker's take runs it and makes the one next
#              iteration (the schedule does not end).
case_schedrec_node_stalled_c_take() {
    [ -n "$cli" ] || { echo "skipped: no lanes CLI"; exit 77; }
    js sr-take "$q" stall every >"$tmp/take.json" || fail "sr-take"
    id=$(sed 's/.*"id":"\([^"]*\)".*/\1/' "$tmp/take.json")
    sr_recover "$id" every completed
    echo "after BullMQ's stalled check, a lanes take of $id made: $(cat "$tmp/sr.out")"
}
