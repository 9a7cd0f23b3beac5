# shellcheck shell=sh
# shellcheck disable=SC2154 # url, q, tmp, cli, interop, pids: set by the driver
# interop/cases/speed.sh - the interop cases of the worker's speed options.
# Sourced by tests/interop/test_redis_interop.sh, which has the helpers (js, fail,
# events_start, ...) and the variables (url, q, tmp, peer, cli) they use.
# Case X is the function case_X; tests/redis.cmake lists the names.

#   no_active_event  `lanes worker --no-active-event`: BullMQ's QueueEvents
#              hears added, waiting and completed for the jobs it runs but
#              no 'active' (the default worker's jobs: 'active' too), and
#              BullMQ's waitUntilFinished still returns their results.
case_no_active_event() {
    need_cli
    run() { # QUEUE [lanes worker options]
        qq=$1
        shift
        "$cli" worker "$url" "$qq" --exit-when-empty "$@" --exec "$interop/handler.sh" \
            >/dev/null 2>&1 || fail "lanes worker $*"
    }
    events_start "$q-d"
    events_start "$q-o"
    for n in 1 2; do
        js add-one "$q-d" plain "{\"n\":$n}" >/dev/null || fail "add to $q-d"
        js add-one "$q-o" plain "{\"n\":$n}" >/dev/null || fail "add to $q-o"
    done
    run "$q-d"
    run "$q-o" --no-active-event
    events_stop "$q-d"
    events_stop "$q-o"
    want_d='{"1":["added","waiting","active","completed"],"2":["added","waiting","active","completed"]}'
    want_o='{"1":["added","waiting","completed"],"2":["added","waiting","completed"]}'
    [ "$(cat "$tmp/ev-$q-d.json")" = "$want_d" ] || fail "default worker's events: $(cat "$tmp/ev-$q-d.json")"
    [ "$(cat "$tmp/ev-$q-o.json")" = "$want_o" ] || fail "--no-active-event's events: $(cat "$tmp/ev-$q-o.json")"
    echo "QueueEvents hears 'active' from the default C worker, not with --no-active-event"
    js wait-finished "$q-w" plain '{"n":3}' "$tmp/ready-w" >"$tmp/wf.json" &
    node_pid=$!
    pids="$pids $node_pid"
    wait_lines "$tmp/ready-w" 1
    run "$q-w" --no-active-event
    wait $node_pid || fail "waitUntilFinished in Node"
    echo "BullMQ's waitUntilFinished returns the result of a job run with --no-active-event"
}
