# shellcheck shell=sh
# shellcheck disable=SC2154 # url, q, tmp, peer, cli, ...: set by the driver
# interop/cases/detach.sh - the interop cases of detaching a flow child
# from its parent (ln_jobs_remove_child_dependency, `lanes jobs detach`)
# against BullMQ's job.removeChildDependency() (tests/interop/node/
# detach.mjs). Sourced by tests/interop/test_redis_interop.sh, which has the
# helpers (js, fail, ...) and the variables (url, q, tmp, peer, cli).

# Fail unless BullMQ reads job $1 in state $2.
dt_state() {
    js job "$q" "$1" | grep -q "\"state\":\"$2\"" || fail "$1 is not $2: $(js job "$q" "$1")"
}

# After both children were detached: BullMQ reads r released, x and y
# without a parent; then a run of every job by worker $1 (c or node)
# gives r no child value.
dt_after() {
    dt_state r waiting
    for k in x y; do
        js fm-children "$q" "$k" | grep -q '"parentKey":null' || fail "$k still has a parent"
    done
    js fm-children "$q" r | grep -q '"unprocessed":0' || fail "r still has pending children"
    if [ "$1" = c ]; then
        "$peer" work "$url" "$q" >/dev/null || fail "C worker"
    else
        js work "$q" 3 >/dev/null || fail "Node worker"
    fi
    dt_state r completed
    js fm-children "$q" r | grep -q '"values":{}' || fail "a detached child's value reached r"
}

#   detach_c_to_node  a Node flow r(x, y); lanes detaches x (r still
#              waits for y, a second detach of x is 0), then y: BullMQ
#              reads r in wait and no parent on x, y; a Node worker runs
#              them and r gets no child value.
case_detach_c_to_node() {
    need_cli
    js dt-setup "$q" >/dev/null || fail "dt-setup"
    [ "$("$cli" jobs "$url" detach "$q" x)" = 1 ] || fail "lanes jobs detach x"
    dt_state r waiting-children
    js fm-children "$q" r | grep -q '"unprocessed":1' || fail "r does not wait for y alone"
    [ "$("$cli" jobs "$url" detach "$q" x)" = 0 ] || fail "a second detach of x"
    [ "$("$cli" jobs "$url" detach "$q" y)" = 1 ] || fail "lanes jobs detach y"
    dt_after node
    echo "lanes detached Node's flow children; BullMQ released r"
}

#   detach_node_to_c  the same flow; Node's removeChildDependency() on x
#              and y: lanes reads r waiting, and a C worker runs all three
#              with no child value reaching r.
case_detach_node_to_c() {
    need_cli
    js dt-setup "$q" >/dev/null || fail "dt-setup"
    js dt-node "$q" x | grep -q '"removed":true' || fail "Node removeChildDependency x"
    js dt-node "$q" y | grep -q '"removed":true' || fail "Node removeChildDependency y"
    "$cli" jobs "$url" get "$q" r | grep -q '^state *waiting$' || fail "lanes reads r not waiting"
    [ "$("$cli" jobs "$url" detach "$q" x)" = 0 ] || fail "lanes detaches x again"
    dt_after c
    echo "Node detached the children; lanes read r released, a C worker ran it"
}
