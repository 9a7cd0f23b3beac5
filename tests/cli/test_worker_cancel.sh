#!/bin/sh
# test_worker_cancel.sh - `lanes jobs URL cancel QUEUE ID`, run as a process
# of its own, of a job `lanes worker --exec` is running: the program's
# process group gets SIGTERM within a second (a program that traps it
# exits), then SIGKILL after the worker's --grace, 2 s without one (a
# program that ignores it: killed 2 s, or with --grace 1 one second, after
# its SIGTERM), the worker goes on, and the job ends failed "canceled"
# after one run although it has attempts left. On sqlite always, and on Redis when
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
# 143), a "stubborn" one does not exit on it (writes the time it got it,
# in ns, to termat.<id>, and goes on); then (the trap set) its pid to
# pid.<id>, and loop. Its stderr goes to /dev/null: the worker closes
# the program's pipes at a cancel, and sh reporting its killed sleep
# there would die of SIGPIPE before its trap ran.
prog='exec 2>/dev/null
if [ "$LANES_JOB_NAME" = stubborn ]; then trap "date +%s%N > \"\$0/termat.\$LANES_JOB_ID\"" TERM
else trap "echo term > \"\$0/term.\$LANES_JOB_ID\"; exit 143" TERM; fi
echo $$ > "$0/pid.$LANES_JOB_ID"
while :; do sleep 0.05; done'

# run_case URL NAME [WORKER OPTION...]: add a job NAME, let a worker
# (with those options) start its program, cancel it from another process;
# prints the ms from the cancel to the worker's end, and for a stubborn
# job the ms from its SIGTERM to the worker's end.
run_case() {
    url=$1 name=$2
    shift 2
    q="cancel-$$-$name-$#"
    id=$("$lanes" jobs "$url" add "$q" "$name" '{}' --attempts 3)
    "$lanes" worker "$url" "$q" --exit-when-empty "$@" --exec /bin/sh -c "$prog" "$dir" \
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
    end=$(now_ms)
    elapsed=$((end - t0))
    job=$("$lanes" jobs "$url" get "$q" "$id" --json)
    case $job in *'"state":"failed"'*'"failed_reason":"canceled"'*) ;;
        *) fail "$url $name: not failed canceled: $job" ;; esac
    case $job in *'"attempts_made":1,'*'"attempts_started":1,'*) ;;
        *) fail "$url $name: retried or counted wrong: $job" ;; esac
    pid=$(cat "$dir/pid.$id")
    ! kill -0 "$pid" 2>/dev/null || fail "$url $name: program $pid still runs"
    if [ "$name" = stubborn ]; then
        [ -s "$dir/termat.$id" ] || fail "$url $name: the program got no SIGTERM"
        echo "$elapsed $((end - $(cat "$dir/termat.$id") / 1000000))"
    else
        echo "$elapsed"
    fi
}

# check_kill URL LO HI [WORKER OPTION...]: a stubborn program is killed
# LO..HI ms after its SIGTERM.
check_kill() {
    url=$1 lo=$2 hi=$3
    shift 3
    set -- $(run_case "$url" stubborn "$@") "$@"
    ms=$1 kill_ms=$2
    shift 2
    [ "$kill_ms" -ge "$lo" ] && [ "$kill_ms" -lt "$hi" ] ||
        fail "$url stubborn $*: ended $kill_ms ms after its SIGTERM, not $lo..$hi (SIGKILL)"
    echo "ok $url: a program ignoring SIGTERM was killed $kill_ms ms after it ($ms after the cancel) $*"
    rm -f "$dir"/pid.* "$dir"/termat.*
}

check_store() {
    url=$1
    ms=$(run_case "$url" polite)
    ls "$dir"/term.* >/dev/null 2>&1 || fail "$url polite: the program got no SIGTERM"
    [ "$ms" -lt 1500 ] || fail "$url polite: took $ms ms after the cancel"
    echo "ok $url: a program trapping SIGTERM ended $ms ms after the cancel"
    rm -f "$dir"/pid.* "$dir"/term.*
    check_kill "$url" 1900 3000       # without --grace: 2 s
    check_kill "$url" 900 1700 --grace 1
}

check_store "sqlite:$dir/cancel.db"
if [ -n "${LANES_TEST_REDIS_URL:-}" ]; then
    check_store "$LANES_TEST_REDIS_URL"
else
    echo "skipped [redis]: LANES_TEST_REDIS_URL is not set: the redis half did not run"
fi
