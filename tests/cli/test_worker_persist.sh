#!/bin/sh
# test_worker_persist.sh - `lanes worker --exec-persistent` with a Python
# handler written with examples/handlers/python/lanes_handler.py
# (tests/cli/persist/handler.py): data and results byte for byte, progress and
# log lines stored, a handler killed mid-job restarted and its job back
# without using an attempt, a job that always kills its handler failed
# after 3 deaths, a malformed line failing clearly, a timeout killing the
# handler (a new one takes the next job), a cancel killing it too, an error
# line failing the job.
# The Node library (examples/handlers/node, tests/cli/persist/handler.mjs) too:
# data to result byte for byte, progress, log, a throw. On sqlite, and on
# Redis when LANES_TEST_REDIS_URL is set.
#
#   test_worker_persist.sh LANES_BIN
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/cli_common.sh"
# Failures show the worker's stderr too.
fail() {
    echo "FAIL${store:+ ($store)}: $*" >&2
    [ ! -s "$tmp/w.err" ] || sed 's/^/  worker: /' "$tmp/w.err" >&2
    exit 1
}
handler="$here/persist/handler.py"
lib="$here/../../examples/handlers/python"
command -v python3 >/dev/null || { echo "skipped [python3]: python3 not installed"; exit 77; }

# A data text jansson would print otherwise: spaces, 1.50, an escape, an
# integer past 64 bits.
data='{"b" : 1.50, "u":"\u00e9", "n":123456789012345678901234567890, "l":[ 1,2 ]}'

state_of() { # URL Q ID: the job's JSON
    "$cli" jobs "$1" get "$2" "$3" --json
}

case_all() { # URL STORE
    u=$1 store=$2
    q="persist$$"
    m="$tmp/marks.$store"
    mkdir -p "$m"
    echo_id=$("$cli" jobs "$u" add "$q" echo "$data" --attempts 1) || fail "add"
    once_id=$("$cli" jobs "$u" add "$q" crash-once '{}' --attempts 1)
    always_id=$("$cli" jobs "$u" add "$q" crash-always '{}' --attempts 1)
    bad_id=$("$cli" jobs "$u" add "$q" bad-line '{}' --attempts 1)
    slow_id=$("$cli" jobs "$u" add "$q" slow '{}' --attempts 1)
    err_id=$("$cli" jobs "$u" add "$q" error '{}' --attempts 1)
    after_id=$("$cli" jobs "$u" add "$q" after '{}' --attempts 1 --delay 9000)
    "$cli" worker "$u" "$q" --concurrency 2 --timeout 8 --grace 1 --exit-when-empty \
        --exec-persistent python3 "$handler" "$m" "$lib" >"$tmp/w.out" 2>"$tmp/w.err" &
    bg_pid=$!
    # Everything settles within the bound: each job ends completed or failed.
    i=0
    for id in $echo_id $once_id $always_id $bad_id $slow_id $err_id $after_id; do
        while :; do
            case $(state_of "$u" "$q" "$id") in *'"state":"completed"'* | *'"state":"failed"'*) break ;; esac
            i=$((i + 1))
            [ $i -lt 900 ] || fail "job $id did not finish: $(state_of "$u" "$q" "$id"); $(cat "$tmp/w.err")"
            sleep 0.1
        done
    done
    kill "$bg_pid" 2>/dev/null
    wait "$bg_pid" 2>/dev/null
    bg_pid=""
    werr=$(cat "$tmp/w.err")

    s=$(state_of "$u" "$q" "$echo_id")
    case $s in *'"state":"completed"'*) ;; *) fail "echo not completed: $s; $werr" ;; esac
    case $s in *"\"result\":$data,"*) ;; *) fail "echo's result is not the data byte for byte: $s" ;; esac
    case $s in *'"progress":{"half":0.5}'*) ;; *) fail "echo's progress missing: $s" ;; esac
    "$cli" jobs "$u" logs "$q" "$echo_id" | grep -q "^echo $echo_id" || fail "echo's log line missing"
    case $werr in *"a stray print goes to stderr"*) ;; *) fail "a print did not reach stderr: $werr" ;; esac

    s=$(state_of "$u" "$q" "$once_id")
    case $s in *'"state":"completed"'*'"attempts_made":0'*) ;;
        *'"state":"completed"'*) ;; *) fail "crash-once not completed after its restart: $s; $werr" ;; esac
    case $s in *'"attempts_made":0,'*) ;; *) fail "crash-once spent an attempt: $s" ;; esac
    case $werr in *"broke running job $once_id"*"killed by signal 9"*) ;;
        *) fail "no line about the handler killed on crash-once: $werr" ;; esac

    s=$(state_of "$u" "$q" "$always_id")
    case $s in *'"state":"failed"'*'the handler broke 3 times running this job'*'exit status 3'*) ;;
        *) fail "crash-always not failed after 3 deaths: $s" ;; esac

    s=$(state_of "$u" "$q" "$bad_id")
    case $s in *'"state":"failed"'*'broke 3 times'*'a line that is not JSON'*) ;;
        *) fail "bad-line not failed clearly: $s" ;; esac

    s=$(state_of "$u" "$q" "$slow_id")
    case $s in *'"state":"failed"'*'timed out'*) ;; *) fail "slow not timed out: $s" ;; esac
    spid=$(ls "$m" | sed -n 's/^slow\.//p' | head -1)
    [ -n "$spid" ] || fail "the slow job never ran"
    ! kill -0 "$spid" 2>/dev/null || fail "the timed-out handler $spid still runs"

    s=$(state_of "$u" "$q" "$err_id")
    case $s in *'"state":"failed"'*'"failed_reason":"ValueError: no good"'*) ;;
        *) fail "error not failed with its message: $s" ;; esac

    s=$(state_of "$u" "$q" "$after_id")
    case $s in *'"state":"completed"'*'"result":{"pid":'*) ;;
        *) fail "the worker did not go on after the crashes: $s; $werr" ;; esac
    echo "ok ($store)"
    case_cancel "$u" "$store"
    case_node "$u" "$store"
}

# `lanes jobs URL cancel` of a job a persistent handler runs: the handler
# is killed, the job fails "canceled" after one run, the worker goes on.
case_cancel() { # URL STORE
    u=$1 store=$2
    q="persistcancel$$"
    m="$tmp/cmarks.$store"
    mkdir -p "$m"
    slow_id=$("$cli" jobs "$u" add "$q" slow '{}' --attempts 3) || fail "add"
    "$cli" worker "$u" "$q" --exit-when-empty --grace 1 \
        --exec-persistent python3 "$handler" "$m" "$lib" >"$tmp/w.out" 2>"$tmp/w.err" &
    bg_pid=$!
    i=0
    while [ -z "$(ls "$m")" ]; do
        i=$((i + 1))
        [ $i -lt 300 ] || fail "cancel: the slow job never started: $(cat "$tmp/w.err")"
        sleep 0.1
    done
    after_id=$("$cli" jobs "$u" add "$q" after '{}' --attempts 1) # waits for the place
    "$cli" jobs "$u" cancel "$q" "$slow_id" >/dev/null || fail "cancel failed"
    wait "$bg_pid" || fail "cancel: the worker exited $?: $(cat "$tmp/w.err")"
    bg_pid=""
    s=$(state_of "$u" "$q" "$slow_id")
    case $s in *'"state":"failed"'*'"attempts_made":1,'*'"failed_reason":"canceled"'*) ;;
        *) fail "cancel: not failed canceled after one run: $s" ;; esac
    spid=$(ls "$m" | sed -n 's/^slow\.//p' | head -1)
    ! kill -0 "$spid" 2>/dev/null || fail "cancel: the canceled job's handler $spid still runs"
    s=$(state_of "$u" "$q" "$after_id")
    case $s in *'"state":"completed"'*) ;; *) fail "cancel: the worker did not go on: $s" ;; esac
    echo "ok (cancel, $store)"
}

# The Node library: the same echo, and a throw failing the job.
case_node() { # URL STORE
    u=$1 store=$2
    command -v node >/dev/null || { echo "skipped [node]: node not installed: the Node library case did not run"; return 0; }
    q="persistnode$$"
    echo_id=$("$cli" jobs "$u" add "$q" echo "$data" --attempts 1) || fail "add"
    throw_id=$("$cli" jobs "$u" add "$q" throw '{}' --attempts 1)
    "$cli" worker "$u" "$q" --exit-when-empty --exec-persistent node "$here/persist/handler.mjs" \
        "$here/../../examples/handlers/node/lanes_handler.mjs" >"$tmp/w.out" 2>"$tmp/w.err" ||
        fail "the node worker exited $?: $(cat "$tmp/w.err")"
    s=$(state_of "$u" "$q" "$echo_id")
    case $s in *'"state":"completed"'*"\"result\":$data,"*'"progress":{"half":0.5}'*) ;;
        *) fail "node: echo not completed with the data byte for byte: $s; $(cat "$tmp/w.err")" ;; esac
    "$cli" jobs "$u" logs "$q" "$echo_id" | grep -q "^echo $echo_id" || fail "node: log line missing"
    s=$(state_of "$u" "$q" "$throw_id")
    case $s in *'"state":"failed"'*'"failed_reason":"Error: no good"'*) ;;
        *) fail "node: throw not failed with its message: $s" ;; esac
    grep -q 'a stray console.log goes to stderr' "$tmp/w.err" || fail "node: console.log not on stderr"
    echo "ok (node, $store)"
}

each_store case_all persist
