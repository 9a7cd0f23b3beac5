# shellcheck shell=sh
# shellcheck disable=SC2154 # url, q, tmp, peer, cli, ...: set by the driver
# interop/cases/drained.sh - the interop case of QueueEvents' 'drained'.
# Sourced by tests/interop/test_redis_interop.sh, which has the helpers (js, fail,
# ...) and the variables (url, q, tmp, peer, cli) they use.
# Case X is the function case_X; tests/redis.cmake lists the names.

#   drained_c_vs_node  the same jobs (a "flaky" job retried twice through
#              delayed, a plain one, a delayed one) run by a stock Worker,
#              by a C worker (redis_peer) and by `lanes worker --exec`
#              leave the same 'drained' events: one, after the last
#              completion; none after a run retried through delayed, nor
#              after a completion while a job waits in delayed.
case_drained_c_vs_node() {
    js dr-setup "$q-n" >/dev/null || fail "Node add"
    js work "$q-n" 1 >/dev/null || fail "Node worker"
    js dr-events "$q-n" >"$tmp/dr-n.json" || fail "events of the Node worker"
    grep -q '"drained":1,' "$tmp/dr-n.json" || fail "Node worker: $(cat "$tmp/dr-n.json")"
    js dr-setup "$q-c" >/dev/null || fail "Node add"
    "$peer" work "$url" "$q-c" >/dev/null || fail "C worker"
    js dr-events "$q-c" >"$tmp/dr-c.json" || fail "events of the C worker"
    cmp -s "$tmp/dr-n.json" "$tmp/dr-c.json" ||
        fail "C worker: $(cat "$tmp/dr-c.json"), Node: $(cat "$tmp/dr-n.json")"
    [ -n "$cli" ] || exit 0
    js dr-setup "$q-x" >/dev/null || fail "Node add"
    "$cli" worker "$url" "$q-x" --exit-when-empty --exec sh "$interop/handler.sh" \
        >/dev/null 2>&1 || fail "lanes worker --exec"
    js dr-events "$q-x" >"$tmp/dr-x.json" || fail "events of lanes worker --exec"
    cmp -s "$tmp/dr-n.json" "$tmp/dr-x.json" ||
        fail "lanes worker --exec: $(cat "$tmp/dr-x.json"), Node: $(cat "$tmp/dr-n.json")"
    echo "one 'drained', after the last completion, from Node, C and --exec workers"
}
