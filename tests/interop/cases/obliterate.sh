# shellcheck shell=sh
# shellcheck disable=SC2154 # url, q, tmp, peer, cli, ...: set by the driver
# interop/cases/obliterate.sh - the interop cases of obliterating a queue:
# `lanes jobs obliterate` (ln_jobs_obliterate) of a Node team's queue and
# BullMQ's queue.obliterate() of a lanes one.
# Sourced by tests/interop/test_redis_interop.sh, which has the helpers (js, fail,
# events_start, ...) and the variables (url, q, tmp, peer, cli) they use.
# Case X is the function case_X; tests/redis.cmake lists the names.

# The keys of queue $1 ("bull:$1:*"), sorted, on one line.
ob_keys() { # QUEUE
    redis-cli -u "$url" --scan --pattern "bull:$1:*" | sort | tr '\n' ' '
}

#   obliterate_c_on_node  `lanes jobs obliterate` of a Node team's queue
#              with something in every key BullMQ writes (completed and
#              failed jobs with logs, metrics and their points, a rate
#              limit's window, a global concurrency, waiting, delayed and
#              prioritized jobs, a job scheduler, deduplication ids, the
#              child of a flow parent in another queue, a flow parent
#              waiting for a child in another queue, lanes' cancel mark)
#              says it removed the 13 jobs and leaves no key of the queue;
#              BullMQ then counts no job, no scheduler, no deduplication
#              holder; the parent in the other queue is released (waiting,
#              then completed by a Node Worker); the child of the removed
#              parent completes and writes nothing back; and a Node Worker
#              completes a new job of the queue.
case_obliterate_c_on_node() {
    need_cli
    ids=$(js ob-setup "$q" own,cancel) || fail "ob-setup"
    get() { echo "$ids" | sed "s/.*\"$1\":\"\([^\"]*\)\".*/\1/"; }
    "$cli" jobs "$url" obliterate "$q" >"$tmp/ob.out" 2>"$tmp/ob.err" ||
        fail "lanes jobs obliterate: $(cat "$tmp/ob.err")"
    [ "$(cat "$tmp/ob.out")" = 13 ] || fail "obliterate removed $(cat "$tmp/ob.out") jobs, not 13"
    js ob-check "$q" "$(get parent)" "$(get farKid)" >/dev/null || fail "ob-check"
    echo "lanes jobs obliterate left nothing of a Node queue and released the parent; it works afresh"
}

#   obliterate_same_as_node  the same Node team's queue (without a flow
#              parent waiting in it, which lanes' obliterate removes and
#              BullMQ's leaves; with a deduplication key whose job was
#              removed) twice: BullMQ's queue.obliterate() of one and `lanes
#              jobs obliterate` of the other leave the same keys (the
#              stale deduplication key), but lanes:cancel and limiter,
#              which lanes' deletes and BullMQ's does not; and in the flow
#              parents' queue the same keys, the parent waiting.
case_obliterate_same_as_node() {
    need_cli
    js ob-setup "${q}a" stale,cancel >/dev/null || fail "ob-setup ${q}a"
    js ob-setup "${q}b" stale,cancel >/dev/null || fail "ob-setup ${q}b"
    js ob-node "${q}a" >/dev/null || fail "queue.obliterate()"
    "$cli" jobs "$url" obliterate "${q}b" >/dev/null 2>"$tmp/ob.err" ||
        fail "lanes jobs obliterate: $(cat "$tmp/ob.err")"
    js ob-same "${q}a" "${q}b" >"$tmp/same.json" || fail "ob-same"
    echo "lanes jobs obliterate left what queue.obliterate() left: $(ob_keys "${q}b")"
}

#   obliterate_active  `lanes jobs obliterate` of a queue whose job a Node
#              Worker holds: refused (exit 1, saying why), nothing removed,
#              the queue left paused, as BullMQ's; with --force the 3 jobs
#              go, the held one too, and no key of the queue is left while
#              the Worker holds it, nor after its processor returned: its
#              moveToFinished finds the job gone ("Missing key", the
#              Worker's 'error') and writes nothing.
case_obliterate_active() {
    need_cli
    node "$interop/interop.mjs" ob-hold "$q" >"$tmp/hold.out" 2>"$tmp/hold.err" &
    hold=$!
    pids="$pids $hold"
    wait_word "$tmp/hold.err" held 200 "the Node Worker never held a job" say
    id=$(sed -n 's/^held //p' "$tmp/hold.err")
    js ob-state "$q" >"$tmp/before.json" || fail "ob-state"
    grep -q '"active":1,.*"delayed":1,.*"waiting":1,.*"paused":false' "$tmp/before.json" ||
        fail "not one active, delayed and waiting job: $(cat "$tmp/before.json")"
    "$cli" jobs "$url" obliterate "$q" >/dev/null 2>"$tmp/ob.err"
    rc=$?
    [ $rc -eq 1 ] || fail "obliterate with an active job: exit $rc, not 1: $(cat "$tmp/ob.err")"
    grep -q "active jobs" "$tmp/ob.err" || fail "no reason given: $(cat "$tmp/ob.err")"
    js ob-refused "$q" "$tmp/before.json" >/dev/null || fail "ob-refused"
    "$cli" jobs "$url" obliterate "$q" --force >"$tmp/ob.out" 2>"$tmp/ob.err" ||
        fail "lanes jobs obliterate --force: $(cat "$tmp/ob.err")"
    [ "$(cat "$tmp/ob.out")" = 3 ] || fail "obliterate --force removed $(cat "$tmp/ob.out") jobs, not 3"
    js ob-gone "$q" "$id" "while the Node Worker holds it" >/dev/null || fail "ob-gone"
    kill -TERM "$hold"
    wait "$hold" || fail "the Node Worker: $(cat "$tmp/hold.err")"
    grep -q "\"error\":\[\"Missing key for job $id\. moveToFinished\"" "$tmp/hold.out" ||
        fail "the Node Worker did not find the job gone: $(cat "$tmp/hold.out")"
    js ob-gone "$q" "$id" "after the processor returned" >/dev/null || fail "ob-gone after"
    echo "lanes jobs obliterate refused a held job, then --force took it; Node's outcome wrote nothing"
}

#   obliterate_node_on_c  BullMQ's queue.obliterate() of a lanes queue:
#              jobs a lanes worker completed and failed (metrics, a rate
#              limit), waiting (one with a log line), delayed, prioritized
#              and deduplicated jobs `lanes jobs add` added, a job scheduler
#              of `lanes jobs schedule`, a global concurrency; then `lanes
#              jobs counts` shows 0 everywhere, `lanes jobs schedules`
#              none, and no key of the queue is left but limiter (BullMQ's
#              obliterate does not delete it).
case_obliterate_node_on_c() {
    need_cli
    "$cli" jobs "$url" add "$q" good '{}' >/dev/null || fail "add good"
    "$cli" jobs "$url" add "$q" bad '{}' >/dev/null || fail "add bad"
    # shellcheck disable=SC2016 # the program's own $LANES_JOB_NAME
    timeout 30 "$cli" worker "$url" "$q" --exit-when-empty --metrics-points 10 \
        --rate-limit 1000/600000 --exec /bin/sh -c '[ "$LANES_JOB_NAME" != bad ]' \
        >/dev/null 2>"$tmp/c.err" || fail "lanes worker: $(cat "$tmp/c.err")"
    id=$("$cli" jobs "$url" add "$q" logged '{"n":1}') || fail "add logged"
    "$cli" jobs "$url" add-log "$q" "$id" "a line" >/dev/null || fail "add-log"
    "$cli" jobs "$url" add "$q" plain '{}' >/dev/null || fail "add plain"
    "$cli" jobs "$url" add "$q" later '{}' --delay 60000 >/dev/null || fail "add later"
    "$cli" jobs "$url" add "$q" prio '{}' --priority 3 >/dev/null || fail "add prio"
    "$cli" jobs "$url" add "$q" dd '{}' --dedup d1 >/dev/null || fail "add dd"
    "$cli" jobs "$url" schedule "$q" tick --every 60000 tick '{}' >/dev/null || fail "schedule"
    "$cli" jobs "$url" concurrency "$q" 4 >/dev/null || fail "concurrency"
    b="bull:$q:"
    n=$(redis-cli -u "$url" exists "${b}completed" "${b}failed" "${b}wait" "${b}delayed" \
        "${b}prioritized" "${b}de:d1" "${b}repeat" "${b}repeat:tick" "${b}$id:logs" \
        "${b}metrics:completed" "${b}metrics:failed" "${b}limiter" "${b}meta" "${b}events")
    [ "$n" = 14 ] || fail "the setup lacks keys ($n of 14): $(ob_keys "$q")"
    js ob-node "$q" >/dev/null || fail "queue.obliterate()"
    "$cli" jobs "$url" counts "$q" >"$tmp/counts.out" || fail "lanes jobs counts"
    [ "$(awk '$NF != 0' "$tmp/counts.out")" = "" ] || fail "jobs left: $(cat "$tmp/counts.out")"
    "$cli" jobs "$url" schedules "$q" >"$tmp/sched.out" || fail "lanes jobs schedules"
    [ -s "$tmp/sched.out" ] && fail "schedules left: $(cat "$tmp/sched.out")"
    [ "$(ob_keys "$q")" = "${b}limiter " ] || fail "keys left: $(ob_keys "$q")"
    echo "queue.obliterate() of a lanes queue: no job, no schedule, only BullMQ's limiter left"
}
