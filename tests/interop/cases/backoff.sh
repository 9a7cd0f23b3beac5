# shellcheck shell=sh
# shellcheck disable=SC2154 # url, q, tmp, peer, cli, ...: set by the driver
# interop/cases/backoff.sh - the interop cases of retry backoff: jitter and
# custom backoff types (BullMQ's backoff.jitter and settings.backoffStrategy).
# Sourced by tests/interop/test_redis_interop.sh, which has the helpers (js, fail,
# ...) and the variables (url, q, tmp, peer, cli) they use. The C side is
# tests/interop/backoff_peer.c, built beside redis_peer. Each retry is checked in
# the job's stored 'delay' (what the retry waits), never waited out.
# Case X is the function case_X; tests/redis.cmake lists the names.

backoff_peer() { "$(dirname "$peer")/backoff_peer" "$@"; }

#   backoff_node_to_c  Node jobs with backoff {type: 'fixed', delay: 60000,
#              jitter: 0.5} retried by a C worker after a delay in
#              [30000, 60000] (not all 60000), and a Node job of type
#              'linear' retried after what the C worker's backoff_strategy
#              returns (7000 ms); `lanes worker`, which has no strategy,
#              fails a 'linear' job for good and says why.
case_backoff_node_to_c() {
    js backoff-add "$q" >/dev/null || fail "Node add"
    backoff_peer work "$url" "$q" 9 >/dev/null || fail "C worker"
    js backoff-check "$q" 7000 || fail "retries of the C worker"
    need_cli
    js add-one "$q-x" lin '{}' '{"attempts":3,"backoff":{"type":"linear","delay":100}}' \
        >"$tmp/lin.json" || fail "Node add"
    "$cli" worker "$url" "$q-x" --exit-when-empty --exec sh -c 'echo boom >&2; exit 1' \
        >/dev/null 2>&1
    "$cli" jobs "$url" get "$q-x" 1 --json >"$tmp/lin-get.json" || fail "lanes jobs get"
    grep -q '"state": *"failed"' "$tmp/lin-get.json" || fail "linear job: $(cat "$tmp/lin-get.json")"
    grep -q "no backoff strategy for type 'linear'" "$tmp/lin-get.json" ||
        fail "linear job's reason: $(cat "$tmp/lin-get.json")"
    echo "... and \`lanes worker\` fails a custom type for good, saying why"
}

#   backoff_c_to_node  the same jobs added by lanes (ln_job_opts
#              backoff_jitter, LN_BACKOFF_CUSTOM "linear"): a stock Worker
#              sees opts.backoff {type, delay, jitter} as Node writes it,
#              retries them within the window and calls its backoffStrategy
#              for 'linear' only (4321 ms).
case_backoff_c_to_node() {
    backoff_peer add "$url" "$q" || fail "C add"
    js backoff-work "$q" 9 >/dev/null || fail "Node worker"
    js backoff-check "$q" 4321 || fail "retries of the Node worker"
}
