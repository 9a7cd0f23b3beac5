# shellcheck shell=sh
# shellcheck disable=SC2154 # url, q, tmp, peer, cli, ...: set by the driver
# interop/cases/flowmore.sh - the interop cases of three flow calls:
# ln_jobs_remove_unprocessed_children (job.removeUnprocessedChildren()),
# ln_job_wait_child (moveToWaitingChildren with opts.child) and a flow
# whose root has a parent (FlowProducer's opts.parent on the root).
# Sourced by tests/test_redis_interop.sh; tests/redis.cmake lists the names.
# The C side is tests/flowmore_peer.c, beside redis_peer.

fpeer() { "$(dirname "$peer")/flowmore_peer" "$@"; }

fm_id() { sed 's/.*"id":"\([^"]*\)".*/\1/'; }
fm_state() { js job "$1" "$2" | sed 's/.*"state":"\([^"]*\)".*/\1/'; }

#   flowmore_unprocessed  the same FlowProducer trees (remove_tree.sh's
#              rt-setup: p with r and s pending, r with processed c1, c2
#              and pending k) in two queues; BullMQ's
#              job.removeUnprocessedChildren() of r in one and
#              ln_jobs_remove_unprocessed_children in the other (k goes,
#              c1, c2 and their records stay, r released to wait, p still
#              waiting for r and s) leave the same keyspace, events
#              included. (Not of p: its two pending children come in
#              SMEMBERS order, which differs between the two queues' names
#              on a Redis < 7.2, so the events would differ in order only.)
case_flowmore_unprocessed() {
    js rt-setup "${q}a" >/dev/null || fail "rt-setup ${q}a"
    js rt-setup "${q}b" >/dev/null || fail "rt-setup ${q}b"
    js fm-unprocessed "${q}a" r >/dev/null || fail "job.removeUnprocessedChildren"
    n=$(fpeer unprocessed "$url" "${q}b" r 2>"$tmp/u.err") || fail "lanes: $(cat "$tmp/u.err")"
    [ "$n" = 1 ] || fail "lanes removed $n jobs, not 1"
    [ "$(fm_state "${q}b" r)" = waiting ] || fail "r was not released to wait"
    same_keys "${q}a" "${q}b" "the keyspaces differ after the removals"
    n=$(fpeer unprocessed "$url" "${q}b" p 2>"$tmp/u.err") || fail "lanes (p): $(cat "$tmp/u.err")"
    [ "$n" = 2 ] || fail "lanes removed $n jobs of p, not 2"
    [ "$(fm_state "${q}b" p)" = waiting ] || fail "p was not released to wait"
    echo "ln_jobs_remove_unprocessed_children left what BullMQ's removeUnprocessedChildren leaves"
}

#   flowmore_wait_child  a parent Node added has children k1 (pending) and
#              k2 (completed by a Node Worker) that Node's queue.add with
#              opts.parent made; a C worker's ln_job_wait_child says 0 for
#              k2 and moves the job for k1; Node sees it in
#              waiting-children, and waiting once its Worker ran k1.
case_flowmore_wait_child() {
    pid=$(js add-one "$q-p" step '{}' | fm_id) || fail "add the parent"
    k1=$(js dyn-add "$q-c" kid "$q-p" "$pid" | fm_id) || fail "Node add of k1"
    k2=$(js dyn-add "$q-d" kid "$q-p" "$pid" | fm_id) || fail "Node add of k2"
    js work "$q-d" >/dev/null || fail "Node worker (k2)"
    out=$(fpeer wait-child "$url" "$q-p" "$q-d" "$k2" "$q-c" "$k1" 2>"$tmp/w.err") ||
        fail "C worker: $(cat "$tmp/w.err")"
    [ "$out" = "0 1" ] || fail "ln_job_wait_child answered $out, not 0 1"
    [ "$(fm_state "$q-p" "$pid")" = waiting-children ] || fail "the parent is not in waiting-children"
    js work "$q-c" >/dev/null || fail "Node worker (k1)"
    [ "$(fm_state "$q-p" "$pid")" = waiting ] || fail "k1 did not release the parent"
    echo "ln_job_wait_child waits only for the child named, on BullMQ's keys"
}

#   flowmore_flow_parent  ln_jobs_add_flow of a root r (child x) whose
#              parent is a job Node added: Node Workers run x and r, and
#              Node's getChildrenValues of the parent has r's result; a
#              missing parent refuses the flow, nothing stored.
case_flowmore_flow_parent() {
    pid=$(js add-one "$q-p" step '{}' | fm_id) || fail "add the parent"
    if fpeer flow-parent "$url" "$q-r" "$q-p" nope 2>"$tmp/m.err"; then
        fail "a flow with a missing parent was added"
    fi
    grep -q "missing key for parent job" "$tmp/m.err" || fail "missing parent: $(cat "$tmp/m.err")"
    [ "$(js job "$q-r" r)" = null ] || fail "the refused flow stored its root"
    fpeer flow-parent "$url" "$q-r" "$q-p" "$pid" 2>"$tmp/f.err" || fail "add the flow: $(cat "$tmp/f.err")"
    js fm-children "$q-p" "$pid" | grep -q '"unprocessed":1' || fail "r is not a pending child of the parent"
    js fm-children "$q-r" r | grep -q "\"parentKey\":\"bull:$q-p:$pid\"" || fail "r has no parentKey"
    js work "$q-r" >/dev/null || fail "Node worker (x, r)"
    out=$(js fm-children "$q-p" "$pid") || fail "fm-children"
    echo "$out" | grep -q "\"bull:$q-r:r\"" || fail "the parent has no result of r: $out"
    echo "$out" | grep -q '"unprocessed":0' || fail "r is still pending: $out"
    echo "a lanes flow whose root has a Node parent gives it the tree's result"
}
