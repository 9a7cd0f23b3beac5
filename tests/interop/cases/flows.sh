# shellcheck shell=sh
# shellcheck disable=SC2154 # url, q, tmp, peer, cli, ...: set by the driver
# interop/cases/flows.sh - the interop cases of flows.
# Sourced by tests/interop/test_redis_interop.sh, which has the helpers (js, fail,
# events_start, ...) and the variables (url, q, tmp, peer, cli) they use.
# Case X is the function case_X; tests/redis.cmake lists the names.

#   flow_node_to_c  FlowProducer trees (a root with three children in another
#              queue, one with a child of its own; roots whose child fails
#              with failParentOnFailure / ignoreDependencyOnFailure) run by C
#              workers: Node's getChildrenValues has every child's result,
#              the root its own, the fail-parent root is failed for its
#              child, the other completed with the failure in
#              getFailedChildrenValues.
case_flow_node_to_c() {
    ids=$(js flow-add "$q") || fail "FlowProducer add"
    ok=$(echo "$ids" | sed 's/.*"ok":"\([^"]*\)".*/\1/')
    bad=$(echo "$ids" | sed 's/.*"bad":"\([^"]*\)".*/\1/')
    ign=$(echo "$ids" | sed 's/.*"ign":"\([^"]*\)".*/\1/')
    "$peer" work "$url" "$q-c" >/dev/null 2>"$tmp/c.err" || fail "C worker (children): $(cat "$tmp/c.err")"
    "$peer" work "$url" "$q-p" >/dev/null 2>"$tmp/p.err" || fail "C worker (roots): $(cat "$tmp/p.err")"
    js flow-check "$q" "$ok" "$bad" "$ign" >/dev/null || fail "the FlowProducer trees did not finish on C workers"
    echo "FlowProducer trees finish on C workers: getChildrenValues has every child, fail-parent fails the root"
}

#   flow_c_to_node  the same trees added by `lanes jobs flow`, run by Node
#              Workers: the same checks.
case_flow_c_to_node() {
    need_cli
    js flow-json "$q" "$tmp/t1.json" "$tmp/t2.json" "$tmp/t3.json" >/dev/null || fail "flow-json"
    ok=$("$cli" jobs "$url" flow "$tmp/t1.json" | head -1 | cut -d' ' -f2) || fail "lanes jobs flow"
    bad=$("$cli" jobs "$url" flow "$tmp/t2.json" | head -1 | cut -d' ' -f2) || fail "lanes jobs flow"
    ign=$("$cli" jobs "$url" flow "$tmp/t3.json" | head -1 | cut -d' ' -f2) || fail "lanes jobs flow"
    [ -n "$ok" ] && [ -n "$bad" ] && [ -n "$ign" ] || fail "lanes jobs flow printed no ids"
    js work "$q-c" >/dev/null || fail "Node worker (children)"
    js work "$q-p" >/dev/null || fail "Node worker (roots)"
    js flow-check "$q" "$ok" "$bad" "$ign" >/dev/null || fail "the lanes trees did not finish on Node workers"
    echo "lanes flows finish on Node workers: getChildrenValues has every child, fail-parent fails the root"
}

#   flow_removed_child  a FlowProducer child with removeOnFail: true (and no
#              failure option) fails for good on a C worker: it is gone and
#              its root goes to wait, as the same tree's root does when a
#              Node Worker fails that child (BullMQ's moveToFinished).
case_flow_removed_child() {
    for side in c node; do
        ids=$(js flow-rof-add "$q") || fail "FlowProducer add"
        root=$(echo "$ids" | sed 's/.*"root":"\([^"]*\)".*/\1/')
        child=$(echo "$ids" | sed 's/.*"child":"\([^"]*\)".*/\1/')
        if [ "$side" = c ]; then
            "$peer" work "$url" "$q-c" >/dev/null 2>"$tmp/c.err" || fail "C worker: $(cat "$tmp/c.err")"
        else
            js work "$q-c" >/dev/null || fail "Node worker"
        fi
        js flow-rof-check "$q" "$root" "$child" >/dev/null || fail "the root after its removed child failed on the $side side"
    done
    echo "a child removed as it fails releases its root, on a C worker as on a Node one"
}
