# shellcheck shell=sh
# shellcheck disable=SC2154 # url, q, tmp, peer, cli, ...: set by the driver
# interop/cases/dynflow.sh - the interop cases of children added to an
# existing parent (opts.parent on a plain add) and of a running parent
# that waits for them (job.moveToWaitingChildren + WaitingChildrenError,
# ln_job_wait_children): BullMQ's "process in steps" pattern.
# Sourced by tests/interop/test_redis_interop.sh; tests/redis.cmake lists the names.
# The C side is tests/interop/dynflow_peer.c, beside redis_peer.

dpeer() { "$(dirname "$peer")/dynflow_peer" "$@"; }

id_of() { sed 's/.*"id":"\([^"]*\)".*/\1/'; }

#   dynflow_node_to_c  a Node Worker's "step" job adds two children with
#              opts.parent, moves to waiting-children and throws
#              WaitingChildrenError; C workers run the children, which
#              release it, and a C worker runs its second step, which sees
#              both results: Node reads it completed with {children: 2},
#              no attempt used, getChildrenValues of both.
case_dynflow_node_to_c() {
    pid=$(js add-one "$q-p" step '{}' | id_of) || fail "add the parent"
    out=$(js dyn-step "$q") || fail "Node step 1"
    [ "$out" = '{"waited":1}' ] || fail "Node step 1 did not wait: $out"
    [ "$(js job "$q-p" "$pid" | sed 's/.*"state":"\([^"]*\)".*/\1/')" = waiting-children ] ||
        fail "the parent is not in waiting-children"
    "$peer" work "$url" "$q-c" >/dev/null 2>"$tmp/c.err" || fail "C worker (children): $(cat "$tmp/c.err")"
    dpeer step "$url" "$q" 2>"$tmp/p.err" || fail "C worker (step 2): $(cat "$tmp/p.err")"
    js dyn-check "$q" "$pid" 2 >/dev/null || fail "the parent did not finish its steps on C workers"
    echo "a Node parent waits for the children it added; C workers run them and its second step"
}

#   dynflow_c_to_node  the same with the sides swapped: a C worker's step
#              job adds its children (ln_jobs_add with parent_queue /
#              parent_id) and waits (ln_job_wait_children); Node Workers run
#              the children and its second step.
case_dynflow_c_to_node() {
    pid=$(js add-one "$q-p" step '{}' | id_of) || fail "add the parent"
    dpeer step "$url" "$q" 2>"$tmp/p.err" || fail "C worker (step 1): $(cat "$tmp/p.err")"
    [ "$(js job "$q-p" "$pid" | sed 's/.*"state":"\([^"]*\)".*/\1/')" = waiting-children ] ||
        fail "the parent is not in waiting-children"
    js work "$q-c" >/dev/null || fail "Node worker (children)"
    out=$(js dyn-step "$q") || fail "Node step 2"
    [ "$out" = '{"waited":0}' ] || fail "Node step 2 waited again: $out"
    js dyn-check "$q" "$pid" 2 >/dev/null || fail "the parent did not finish its steps on Node workers"
    echo "a C parent waits for the children it added; Node workers run them and its second step"
}

#   dynflow_add_node_to_c  Node's queue.add(..., {parent}) to a parent lanes
#              added (and refused for one that does not exist); C workers
#              run the children and then the parent, which has both results.
case_dynflow_add_node_to_c() {
    pid=$("$peer" one "$url" "$q-p" step '{}') || fail "lanes add of the parent"
    js dyn-add "$q-c" kid "$q-p" "$pid" >/dev/null || fail "Node add of child 1"
    js dyn-add "$q-c" kid "$q-p" "$pid" >/dev/null || fail "Node add of child 2"
    js dyn-missing "$q-c" >/dev/null || fail "Node added a child of a missing parent"
    "$peer" work "$url" "$q-c" >/dev/null 2>"$tmp/c.err" || fail "C worker (children): $(cat "$tmp/c.err")"
    dpeer step "$url" "$q" 2>"$tmp/p.err" || fail "C worker (parent): $(cat "$tmp/p.err")"
    js dyn-check "$q" "$pid" 2 >/dev/null || fail "the lanes parent did not get the Node children"
    echo "Node's queue.add with opts.parent makes children of a lanes parent"
}

#   dynflow_add_c_to_node  the reverse: `lanes jobs add --parent` and
#              ln_jobs_add with a parent make children of a parent Node
#              added (a missing parent is refused); Node Workers run them
#              and then the parent, which has both results.
case_dynflow_add_c_to_node() {
    need_cli
    pid=$(js add-one "$q-p" step '{}' | id_of) || fail "Node add of the parent"
    "$cli" jobs "$url" add --parent "$q-p:$pid" "$q-c" kid '{"k":1}' >/dev/null ||
        fail "lanes jobs add --parent"
    dpeer child "$url" "$q-c" kid '{"k":2}' "$q-p" "$pid" >/dev/null 2>"$tmp/a.err" ||
        fail "ln_jobs_add with a parent: $(cat "$tmp/a.err")"
    if "$cli" jobs "$url" add --parent "$q-p:nope" "$q-c" kid >/dev/null 2>"$tmp/m.err"; then
        fail "lanes added a child of a missing parent"
    fi
    grep -q "missing key for parent job" "$tmp/m.err" || fail "missing parent: $(cat "$tmp/m.err")"
    js work "$q-c" >/dev/null || fail "Node worker (children)"
    out=$(js dyn-step "$q") || fail "Node worker (parent)"
    [ "$out" = '{"waited":0}' ] || fail "the Node parent found no children: $out"
    js dyn-check "$q" "$pid" 2 >/dev/null || fail "the Node parent did not get the lanes children"
    echo "lanes adds with a parent make children of a Node parent"
}

#   dynflow_existing  a custom id that exists, added again with a parent:
#              attached to a first parent by lanes, Node's add of it with a
#              second parent is refused ("cannot be replaced"), and so is
#              lanes' (LN_EEXIST); attached by Node, the same. Each first
#              parent then gets its child's result from a worker of the
#              other side.
case_dynflow_existing() {
    need_cli
    p1=$(js add-one "$q-p" step '{}' | id_of) || fail "add parent 1"
    p2=$(js add-one "$q-p" step '{}' | id_of) || fail "add parent 2"
    "$cli" jobs "$url" add --id ka --parent "$q-p:$p1" "$q-c" kid '{"k":1}' >/dev/null ||
        fail "lanes add of ka with parent 1"
    js dyn-add "$q-c" kid "$q-p" "$p2" ka 'cannot be replaced' >/dev/null ||
        fail "Node gave lanes' child ka another parent"
    js dyn-add "$q-c" kid "$q-p" "$p2" kb >/dev/null || fail "Node add of kb with parent 2"
    if "$cli" jobs "$url" add --id kb --parent "$q-p:$p1" "$q-c" kid >/dev/null 2>"$tmp/e.err"; then
        fail "lanes gave Node's child kb another parent"
    fi
    grep -q "cannot be replaced" "$tmp/e.err" || fail "kb: $(cat "$tmp/e.err")"
    js work "$q-c" >/dev/null || fail "Node worker (children)"
    dpeer step "$url" "$q" 2>"$tmp/p.err" || fail "C worker (parents): $(cat "$tmp/p.err")"
    js dyn-check "$q" "$p1" 1 >/dev/null || fail "parent 1 did not get ka"
    js dyn-check "$q" "$p2" 1 >/dev/null || fail "parent 2 did not get kb"
    echo "an existing child keeps its parent on both sides; each parent gets its own"
}
