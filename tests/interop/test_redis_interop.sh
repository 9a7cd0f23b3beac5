#!/bin/sh
# test_redis_interop.sh CASE PEER [LANES] - lanes' Redis backend against stock
# BullMQ 6.7.0 (tests/interop, pinned by package-lock.json). PEER is
# build/tests/redis_peer (the C side), LANES the `lanes` CLI if built.
#
#   The cases are the functions case_<name> of tests/interop/cases/*.sh,
#   one file per feature, each with a paragraph saying what it checks;
#   tests/redis.cmake lists the names (ctest test_redis_interop/<name>).
#
# Exit 77 (skipped) without LANES_TEST_REDIS_URL, node or the npm packages.
set -u
what=$1
peer=$2
cli=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
interop=$here

[ -n "${LANES_TEST_REDIS_URL:-}" ] || { echo "skipped [redis]: LANES_TEST_REDIS_URL not set"; exit 77; }
command -v node >/dev/null 2>&1 || { echo "skipped [node]: node not installed"; exit 77; }
[ -d "$interop/node_modules/bullmq" ] ||
    { echo "skipped [node]: run 'npm ci' in tests/interop (scripts/install-deps.sh does)"; exit 77; }

url=$LANES_TEST_REDIS_URL
tmp=$(mktemp -d "${TMPDIR:-/tmp}/lanes-interop.XXXXXX")
q="it$$$what" # this run's queues: q-..., so parallel runs never meet
pids=""
redis_pid=""

cleanup() {
    for p in $pids; do kill "$p" 2>/dev/null; done
    if [ -n "$redis_pid" ]; then
        kill "$redis_pid" 2>/dev/null
        wait "$redis_pid" 2>/dev/null
    fi
    # Drop this run's keys (redis-cli --scan walks, DEL in batches).
    redis-cli -u "$url" --scan --pattern "bull:$q*" 2>/dev/null |
        xargs -r -n 500 redis-cli -u "$url" del >/dev/null 2>&1
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

fail() {
    echo "FAIL ($what): $*" >&2
    exit 1
}

# A case that needs the lanes CLI skips without it (exit 77, with the
# reason the make-test driver reads: docs/build.md, "Skipped tests").
need_cli() {
    [ -n "$cli" ] || { echo "skipped [cli]: no lanes CLI in this build"; exit 77; }
}

# Foreground only: a background job must run node itself, so that $! is
# node's pid and the cleanup can stop it.
js() { node "$interop/interop.mjs" "$@"; }

# Until FILE has WORD, looking every 50 ms up to TRIES times; else fail
# with WHAT, followed by FILE's text when the fifth argument is "say".
wait_word() { # FILE WORD TRIES WHAT [say]
    i=0
    until grep -q "$2" "$1" 2>/dev/null; do
        i=$((i + 1))
        if [ $i -gt "$3" ]; then
            [ "${5:-}" = say ] && fail "$4: $(cat "$1")"
            fail "$4"
        fi
        sleep 0.05
    done
}

# Until the redis-server of our own on PORT answers (10 s); else fail with
# its log ($tmp/redis/log).
wait_redis() { # PORT
    i=0
    until redis-cli -p "$1" ping 2>/dev/null | grep -q PONG; do
        i=$((i + 1))
        [ $i -le 200 ] || fail "redis-server did not start: $(cat "$tmp/redis/log")"
        sleep 0.05
    done
}

# Record a queue's QueueEvents in the background into $tmp/ev-QUEUE.json.
events_start() {
    node "$interop/interop.mjs" events "$1" >"$tmp/ev-$1.json" 2>"$tmp/ev-$1.err" &
    pids="$pids $!"
    eval "ev_pid_$(echo "$1" | tr -c 'a-zA-Z0-9\n' _)=$!"
    wait_word "$tmp/ev-$1.err" ready 200 "QueueEvents for $1 did not start"
}

events_stop() {
    eval "p=\$ev_pid_$(echo "$1" | tr -c 'a-zA-Z0-9\n' _)"
    kill -TERM "$p"
    wait "$p" || fail "QueueEvents for $1 failed: $(cat "$tmp/ev-$1.err")"
}

# First run of each job id, in order, without the ids whose timing varies
# (delayed job 5, and the retries).
first_runs() {
    awk '!seen[$0]++' "$1" | grep -vx 5
}

# Both queues ran the scenario: the same summary, events and order
# (third argument "exec": b ran under `lanes worker --exec`).
same_outcome() {
    a=$1 b=$2
    js summarize "$a" >"$tmp/sum-$a.json" || fail "summarize $a"
    js summarize "$b" >"$tmp/sum-$b.json" || fail "summarize $b"
    # `lanes worker --exec` reports a failed program as "exit status N: <stderr>"
    [ "${3:-}" = exec ] && sed -i 's/"failedReason":"exit status 1: /"failedReason":"/g' "$tmp/sum-$b.json"
    js compare "$tmp/sum-$a.json" "$tmp/sum-$b.json" >/dev/null || fail "summaries differ"
    js compare "$tmp/ev-$a.json" "$tmp/ev-$b.json" >/dev/null || fail "events differ"
    first_runs "$tmp/order-$a.log" >"$tmp/first-$a"
    first_runs "$tmp/order-$b.log" >"$tmp/first-$b"
    cmp -s "$tmp/first-$a" "$tmp/first-$b" ||
        fail "run order differs: $(tr '\n' ' ' <"$tmp/first-$a") vs $(tr '\n' ' ' <"$tmp/first-$b")"
}

wait_lines() { # FILE N: until FILE has N lines (10 s)
    i=0
    until [ -f "$1" ] && [ "$(wc -l <"$1")" -ge "$2" ]; do
        i=$((i + 1))
        [ $i -le 200 ] || fail "$1 never reached $2 lines"
        sleep 0.05
    done
}

# The case files only define functions: source them all, run the one.
for f in "$interop"/cases/*.sh; do
    # shellcheck source=/dev/null
    . "$f"
done
case $what in
    '' | *[!a-z0-9_]*) fn='' ;;
    *) fn=case_$what ;;
esac
if [ -z "$fn" ] || ! command -v "$fn" >/dev/null 2>&1; then
    echo "unknown case $what" >&2
    exit 2
fi
"$fn"
exit 0
