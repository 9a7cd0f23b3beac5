# shellcheck shell=sh
# shellcheck disable=SC2154 # url, q, tmp, peer, cli, ...: set by the driver
# interop/cases/board.sh - the interop cases of Bull Board.
# Sourced by tests/interop/test_redis_interop.sh, which has the helpers (js, fail,
# events_start, ...) and the variables (url, q, tmp, peer, cli) they use.
# Case X is the function case_X; tests/redis.cmake lists the names.

#   board      Bull Board (@bull-board/api + express) lists the queue and
#              the jobs C added, with their data, over HTTP on loopback, and
#              a running C worker in its workers panel.
case_board() {
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
}
