# shellcheck shell=sh
# shellcheck disable=SC2154 # url, q, tmp, peer, cli, ...: set by the driver
# interop/cases/admin.sh - the interop cases of lanes' administration
# commands on the queues of a Node team.
# Sourced by tests/test_redis_interop.sh, which has the helpers (js, fail,
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
    [ -n "$cli" ] || { echo "skipped: no lanes CLI"; exit 77; }
    ids=$(js drain-setup "$q") || fail "drain-setup"
    other=$(echo "$ids" | sed 's/.*"other":"\([^"]*\)".*/\1/')
    same=$(echo "$ids" | sed 's/.*"same":"\([^"]*\)".*/\1/')
    "$cli" jobs "$url" drain "$q" >/dev/null || fail "lanes jobs drain $q"
    "$cli" jobs "$url" drain "${q}k" >/dev/null || fail "lanes jobs drain ${q}k"
    js drain-check "$q" "$other" "$same" >/dev/null || fail "drain-check"
    echo "lanes jobs drain kept the scheduler, freed the deduplication ids, released the parent"
}
