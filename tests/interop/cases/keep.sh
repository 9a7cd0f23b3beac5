# shellcheck shell=sh
# shellcheck disable=SC2154 # url, q, tmp, peer, cli, ...: set by the driver
# interop/cases/keep.sh - the interop cases of a worker's retention
# (ln_worker_opts remove_on_complete / remove_on_fail, `lanes worker
# --remove-on-complete`) against BullMQ's worker options of those names:
# it applies to the jobs without an option of their own, and a job's own
# (also removeOnComplete: false) wins, whichever side added the job.
# Sourced by tests/interop/test_redis_interop.sh, which has the helpers (js, fail,
# ...) and the variables (url, q, tmp, peer, cli) they use.

#   keep_c_worker  Node adds u1, u2 (no removeOnComplete) and kf
#              (removeOnComplete: false); a `lanes worker
#              --remove-on-complete all` runs them: BullMQ finds only kf.
case_keep_c_worker() {
    need_cli
    for id in u1 u2; do
        js add-one "$q" n '{}' "{\"jobId\":\"$id\"}" >/dev/null || fail "add $id"
    done
    js add-one "$q" n '{}' '{"jobId":"kf","removeOnComplete":false}' >/dev/null || fail "add kf"
    "$cli" worker "$url" "$q" --remove-on-complete all --exit-when-empty --exec true \
        2>"$tmp/w.err" || fail "lanes worker: $(cat "$tmp/w.err")"
    for id in u1 u2; do
        js job "$q" "$id" | grep -qx null || fail "$id was kept: $(js job "$q" "$id")"
    done
    js job "$q" kf | grep -q '"state":"completed"' || fail "kf: $(js job "$q" kf)"
    echo "a lanes worker's retention removed Node's jobs without their own, kept kf"
}

#   keep_node_worker  lanes adds c1, c2 (no retention) and cn
#              (--remove-on-complete none, stored as false); a Node Worker
#              with removeOnComplete {count: 0} runs them: lanes finds only
#              cn.
case_keep_node_worker() {
    need_cli
    for id in c1 c2; do "$cli" jobs "$url" add "$q" n --id "$id" >/dev/null || fail "add $id"; done
    "$cli" jobs "$url" add "$q" n --id cn --remove-on-complete none >/dev/null || fail "add cn"
    js job "$q" cn | grep -q '"state":"waiting"' || fail "cn: $(js job "$q" cn)"
    js work "$q" 1 '' '{"removeOnComplete":{"count":0}}' >/dev/null || fail "Node worker"
    for id in c1 c2; do
        "$cli" jobs "$url" get "$q" "$id" >/dev/null 2>&1 && fail "$id was kept"
    done
    "$cli" jobs "$url" get "$q" cn | grep -q '^state *completed$' || fail "cn was not kept"
    echo "a Node worker's retention removed lanes' jobs without their own, kept cn"
}
