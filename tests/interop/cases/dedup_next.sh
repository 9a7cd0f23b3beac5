# shellcheck shell=sh
# shellcheck disable=SC2154 # url, q, tmp, peer, cli, ...: set by the driver
# interop/cases/dedup_next.sh - deduplication's keepLastIfActive against
# stock BullMQ 6.7.0: an add while the holder runs is kept (the hash
# <base>dn:<id>) and the holder's finalization adds it, whichever side
# added it and whichever side runs the holder; and lanes' recovery of a
# stale key (its holder gone). Sourced by tests/interop/test_redis_interop.sh;
# tests/redis.cmake lists the names.

dn_id_of() { sed 's/.*"id":"\([^"]*\)".*/\1/'; }

# FILE's line N.
dn_line() { sed -n "${2}p" "$1"; }

#   dedup_next_node_to_c  Node adds a "sleep" job with deduplication
#              {id, keepLastIfActive}; while a C worker runs it, Node adds
#              two more with that id (both deduplicated: the holder's id);
#              the C worker's completion of the holder adds the last one
#              (BullMQ's requeueDeduplicatedJob), which the C worker runs:
#              two jobs in all, the second with the last add's data.
case_dedup_next_node_to_c() {
    de='{"deduplication":{"id":"k","keepLastIfActive":true}}'
    h=$(js add-one "$q" sleep '{"n":1}' "$de" | dn_id_of) || fail "Node add of the holder"
    "$peer" work "$url" "$q" --sleep-ms 30000 --hold "$tmp/go" --log "$tmp/log" \
        >/dev/null 2>"$tmp/c.err" &
    cpid=$!
    pids="$pids $cpid"
    wait_lines "$tmp/log" 1
    a=$(js add-one "$q" last '{"n":2}' "$de" | dn_id_of) || fail "Node add 2"
    b=$(js add-one "$q" last '{"n":3}' "$de" | dn_id_of) || fail "Node add 3"
    : >"$tmp/go" # the holder completes now, after both adds
    [ "$a" = "$h" ] && [ "$b" = "$h" ] || fail "the adds were not deduplicated: $h $a $b"
    wait "$cpid" || fail "C worker: $(cat "$tmp/c.err")"
    [ "$(wc -l <"$tmp/log")" -eq 2 ] || fail "C worker ran $(tr '\n' ' ' <"$tmp/log")"
    n=$(dn_line "$tmp/log" 2)
    out=$(js job "$q" "$n") || fail "Node read of job $n"
    case $out in
        *'"state":"completed"'*'"data":{"n":3}'*'"returnvalue":{"name":"last","data":{"n":3}}'*) ;;
        *) fail "the kept job is not the last add, completed: $out" ;;
    esac
    [ "$(redis-cli -u "$url" exists "bull:$q:dn:k")" = 0 ] || fail "dn:k is left"
    echo "Node's keepLastIfActive add while a C worker runs the holder is added at its completion"
}

#   dedup_next_c_to_node  the reverse: `lanes jobs add --dedup k
#              --dedup-keep-last` while a Node Worker runs the holder keeps
#              the last add in dn:k as BullMQ stores it, and BullMQ's own
#              moveToFinished adds it, which the Node Worker runs.
case_dedup_next_c_to_node() {
    need_cli
    node "$interop/interop.mjs" serve "$q" "$tmp/log" 2>"$tmp/n.err" &
    npid=$!
    pids="$pids $npid"
    wait_word "$tmp/n.err" ready 200 "Node worker did not start"
    h=$("$cli" jobs "$url" add --dedup k --dedup-keep-last "$q" sleep '{"n":1}') ||
        fail "lanes add of the holder"
    wait_lines "$tmp/log" 1
    a=$("$cli" jobs "$url" add --dedup k --dedup-keep-last "$q" last '{"n":2}') || fail "lanes add 2"
    b=$("$cli" jobs "$url" add --dedup k --dedup-keep-last "$q" last '{"n":3}') || fail "lanes add 3"
    [ "$a" = "$h" ] && [ "$b" = "$h" ] || fail "the adds were not deduplicated: $h $a $b"
    wait_lines "$tmp/log" 2
    n=$(dn_line "$tmp/log" 2)
    i=0
    until js job "$q" "$n" | grep -q '"state":"completed"'; do
        i=$((i + 1))
        [ $i -le 100 ] || fail "job $n did not complete"
        sleep 0.05
    done
    kill -TERM "$npid"
    wait "$npid" || fail "Node worker: $(cat "$tmp/n.err")"
    out=$(js job "$q" "$n") || fail "Node read of job $n"
    case $out in
        *'"data":{"n":3}'*'"deduplicationId":"k"'*) ;;
        *) fail "the kept job is not the last add: $out" ;;
    esac
    [ "$(wc -l <"$tmp/log")" -eq 2 ] || fail "Node ran $(tr '\n' ' ' <"$tmp/log")"
    echo "lanes' keep-last add while a Node Worker runs the holder is added by BullMQ's finalization"
}

#   dedup_next_stale  a de: key whose holder is gone (its hash deleted, as
#              an outage would leave it) with a next job kept for it: a
#              lanes keep-last add takes the key over (a new job, held
#              without expiry although it has a TTL, as BullMQ's
#              keepLastIfActive) and drops the kept job, so finishing the
#              new holder adds nothing.
case_dedup_next_stale() {
    need_cli
    h=$("$cli" jobs "$url" add --dedup k:60000 --dedup-keep-last "$q" a '{}') || fail "lanes add"
    [ "$(redis-cli -u "$url" pttl "bull:$q:de:k")" = -1 ] || fail "keep-last gave de:k a TTL"
    redis-cli -u "$url" hset "bull:$q:dn:k" name ghost data '{}' jid ghost \
        opts '{"de":{"id":"k","keepLastIfActive":true}}' >/dev/null
    redis-cli -u "$url" del "bull:$q:$h" >/dev/null
    b=$("$cli" jobs "$url" add --dedup k:60000 --dedup-keep-last "$q" b '{}') || fail "lanes add 2"
    [ "$b" != "$h" ] || fail "the stale key was not recovered"
    [ "$(redis-cli -u "$url" exists "bull:$q:dn:k")" = 0 ] || fail "the gone holder's dn:k is left"
    "$peer" work "$url" "$q" >/dev/null 2>"$tmp/c.err" || fail "C worker: $(cat "$tmp/c.err")"
    [ "$(js job "$q" ghost)" = null ] || fail "the dropped next job was added"
    js job "$q" "$b" | grep -q '"state":"completed"' || fail "the new holder did not complete"
    echo "a stale de: key is taken over and its kept next job dropped"
}

#   dedup_next_reschedule  Node adds a job delayed by a minute with
#              deduplication {id, reschedule}; `lanes jobs add --dedup r
#              --dedup-reschedule` (no delay) is deduplicated and makes the
#              holder due now, as BullMQ's own reschedule does: a C worker
#              runs it at once, with its own data.
case_dedup_next_reschedule() {
    need_cli
    h=$(js add-one "$q" first '{"n":1}' '{"delay":60000,"deduplication":{"id":"r","reschedule":true}}' |
        dn_id_of) || fail "Node add of the holder"
    b=$("$cli" jobs "$url" add --dedup r --dedup-reschedule "$q" second '{"n":2}') || fail "lanes add"
    [ "$b" = "$h" ] || fail "the add was not deduplicated: $h $b"
    "$peer" work "$url" "$q" >/dev/null 2>"$tmp/c.err" || fail "C worker: $(cat "$tmp/c.err")"
    out=$(js job "$q" "$h") || fail "Node read of job $h"
    case $out in
        *'"state":"completed"'*'"data":{"n":1}'*'"delay":0'*) ;;
        *) fail "the holder was not rescheduled to now: $out" ;;
    esac
    echo "lanes' reschedule add makes a delayed Node holder due now"
}

#   dedup_next_stalled  a C worker running a keep-last holder (`lanes jobs
#              add --dedup k --dedup-keep-last`) is killed after a kept
#              add; stock BullMQ's stalled check (maxStalledCount 0) puts
#              the holder back in wait with its deferred failure and leaves
#              de:k and dn:k as they are; a C worker's take then fails it
#              ("job stalled more than allowable limit") and that final
#              failure releases de:k and adds the kept job, which it runs
#              (its completion releases de:k in turn).
case_dedup_next_stalled() {
    need_cli
    h=$("$cli" jobs "$url" add --dedup k --dedup-keep-last "$q" sleep '{"n":1}') ||
        fail "lanes add of the holder"
    "$peer" work "$url" "$q" --lease-ms 500 --sleep-ms 30000 --log "$tmp/k1.log" \
        >/dev/null 2>&1 &
    victim=$!
    pids="$pids $victim"
    wait_lines "$tmp/k1.log" 1
    a=$("$cli" jobs "$url" add --dedup k --dedup-keep-last "$q" last '{"n":2}') || fail "lanes add 2"
    [ "$a" = "$h" ] || fail "the add was not deduplicated: $h $a"
    kill -9 "$victim"
    wait "$victim" 2>/dev/null
    js dn-stalled "$q" "$h" || fail "BullMQ's stalled check"
    [ "$(redis-cli -u "$url" get "bull:$q:de:k")" = "$h" ] || fail "BullMQ's check moved de:k"
    [ "$(redis-cli -u "$url" exists "bull:$q:dn:k")" = 1 ] || fail "BullMQ's check dropped dn:k"
    "$peer" work "$url" "$q" --log "$tmp/k2.log" >/dev/null 2>"$tmp/c.err" ||
        fail "C worker: $(cat "$tmp/c.err")"
    case $(js job "$q" "$h") in
        *'"state":"failed"'*'"failedReason":"job stalled more than allowable limit"'*) ;;
        *) fail "the holder was not failed by its deferred failure: $(js job "$q" "$h")" ;;
    esac
    [ "$(wc -l <"$tmp/k2.log")" -eq 1 ] || fail "C worker ran $(tr '\n' ' ' <"$tmp/k2.log")"
    n=$(dn_line "$tmp/k2.log" 1)
    [ "$n" != "$h" ] || fail "the holder ran again"
    case $(js job "$q" "$n") in
        *'"state":"completed"'*'"data":{"n":2}'*'"deduplicationId":"k"'*) ;;
        *) fail "the kept job is not the kept add, completed: $(js job "$q" "$n")" ;;
    esac
    [ "$(redis-cli -u "$url" exists "bull:$q:dn:k")" = 0 ] || fail "dn:k is left"
    [ "$(redis-cli -u "$url" exists "bull:$q:de:k")" = 0 ] || fail "de:k is left"
    echo "BullMQ's stalled check defers a keep-last holder's failure; a C worker's take finalizes it"
}
