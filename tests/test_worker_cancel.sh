#!/bin/sh
# test_worker_cancel.sh - `lanes jobs URL cancel QUEUE ID`, run as a process
# of its own, of a job `lanes worker --exec` is running: the program's
# process group gets SIGTERM within a second (a program that traps it
# exits), or SIGKILL 2 s later (a program that ignores it), the worker
# goes on, and the job ends failed "canceled" after one run although it
# has attempts left. On sqlite always, and on Redis when
# LANES_TEST_REDIS_URL is set (scripts/with-services.sh).
#
#   test_worker_cancel.sh LANES_BIN
set -eu
lanes=$1
dir=$(mktemp -d "${TMPDIR:-/tmp}/lanes-cancel.XXXXXX")
wpid=""
cleanup() {
    [ -z "$wpid" ] || kill "$wpid" 2>/dev/null || true
    rm -rf "$dir"
}
trap cleanup EXIT
fail() {
    echo "FAIL: $*" >&2
    for f in "$dir"/w.err; do [ -f "$f" ] && sed 's/^/  worker: /' "$f" >&2; done
    exit 1
}
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# The program: a "polite" job traps SIGTERM (writes term.<id>, exits
# 143), a "stubborn" one ignores it; then (the trap set) its pid to
# pid.<id>, and loop. Its stderr goes to /dev/null: the worker closes
# the program's pipes at a cancel, and sh reporting its killed sleep
# there would die of SIGPIPE before its trap ran.
prog='exec 2>/dev/null
if [ "$LANES_JOB_NAME" = stubborn ]; then trap "" TERM
else trap "echo term > \"\$0/term.\$LANES_JOB_ID\"; exit 143" TERM; fi
echo $$ > "$0/pid.$LANES_JOB_ID"
while :; do sleep 0.05; done'

# run_case URL NAME: add a job NAME, let a worker start its program,
# cancel it from another process; prints the ms from the cancel to the
# worker's end.
run_case() {
    url=$1 name=$2
    q="cancel-$$-$name"
    id=$("$lanes" jobs "$url" add "$q" "$name" '{}' --attempts 3)
    "$lanes" worker "$url" "$q" --exit-when-empty --exec /bin/sh -c "$prog" "$dir" \
        >"$dir/w.out" 2>"$dir/w.err" &
    wpid=$!
    i=0
    while [ ! -s "$dir/pid.$id" ]; do
        i=$((i + 1))
        [ $i -lt 200 ] || fail "$url $name: the program did not start"
        sleep 0.05
    done
    t0=$(now_ms)
    "$lanes" jobs "$url" cancel "$q" "$id" || fail "$url $name: cancel failed"
    wait "$wpid" || fail "$url $name: the worker exited $?"
    wpid=""
    elapsed=$(($(now_ms) - t0))
    job=$("$lanes" jobs "$url" get "$q" "$id" --json)
    case $job in *'"state":"failed"'*'"failed_reason":"canceled"'*) ;;
        *) fail "$url $name: not failed canceled: $job" ;; esac
    case $job in *'"attempts_made":1,'*'"attempts_started":1,'*) ;;
        *) fail "$url $name: retried or counted wrong: $job" ;; esac
    pid=$(cat "$dir/pid.$id")
    ! kill -0 "$pid" 2>/dev/null || fail "$url $name: program $pid still runs"
    echo "$elapsed"
}

check_store() {
    url=$1
    ms=$(run_case "$url" polite)
    ls "$dir"/term.* >/dev/null 2>&1 || fail "$url polite: the program got no SIGTERM"
    [ "$ms" -lt 1500 ] || fail "$url polite: took $ms ms after the cancel"
    echo "ok $url: a program trapping SIGTERM ended $ms ms after the cancel"
    rm -f "$dir"/pid.* "$dir"/term.*
    ms=$(run_case "$url" stubborn)
    ! ls "$dir"/term.* >/dev/null 2>&1 || fail "$url stubborn: trapped SIGTERM"
    [ "$ms" -ge 1800 ] && [ "$ms" -lt 5000 ] ||
        fail "$url stubborn: ended $ms ms after the cancel, not about 2 s (SIGKILL)"
    echo "ok $url: a program ignoring SIGTERM was killed $ms ms after the cancel"
    rm -f "$dir"/pid.*
}

check_store "sqlite:$dir/cancel.db"
if [ -n "${LANES_TEST_REDIS_URL:-}" ]; then
    check_store "$LANES_TEST_REDIS_URL"
else
    echo "skip redis: LANES_TEST_REDIS_URL is not set"
fi
