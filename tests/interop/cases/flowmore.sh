# shellcheck shell=sh
# shellcheck disable=SC2154 # url, q, tmp, peer, cli, ...: set by the driver
# interop/cases/flowmore.sh - the interop cases of three flow calls:
# ln_jobs_remove_unprocessed_children (job.removeUnprocessedChildren()),
# ln_job_wait_child (moveToWaitingChildren with opts.child) and a flow
# whose root has a parent (FlowProducer's opts.parent on the root).
# Sourced by tests/interop/test_redis_interop.sh; tests/redis.cmake lists the names.
# The C side is tests/interop/flowmore_peer.c, beside redis_peer.

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

#   flowmore_unprocessed_locked  FlowProducer trees hr -> h (held by a
#              Node Worker, with a pending child hc that queue.add gave
#              it while it runs) and f, in two queues; BullMQ's
#              removeUnprocessedChildren of hr in one and
#              ln_jobs_remove_unprocessed_children in the other skip h
#              and hc and remove f only (hr stays in waiting-children for
#              h): the same keyspace, events included.
case_flowmore_unprocessed_locked() {
    for s in a b; do
        node "$interop/interop.mjs" rt-hold "$q$s" >/dev/null 2>"$tmp/hold-$s.err" &
        pids="$pids $!"
        eval "hold_$s=\$!"
    done
    wait_word "$tmp/hold-a.err" held 200 "the Node Worker never held h (a)" say
    wait_word "$tmp/hold-b.err" held 200 "the Node Worker never held h (b)" say
    for s in a b; do
        js dyn-add "$q$s" kid "$q${s}2" h hc >/dev/null || fail "queue.add of hc under h ($s)"
        js rt-trim "$q$s" >/dev/null || fail "rt-trim $q$s"
    done
    js fm-unprocessed "${q}a" hr >/dev/null || fail "job.removeUnprocessedChildren"
    n=$(fpeer unprocessed "$url" "${q}b" hr 2>"$tmp/u.err") || fail "lanes: $(cat "$tmp/u.err")"
    [ "$n" = 1 ] || fail "lanes removed $n jobs, not 1"
    for s in a b; do
        [ "$(js job "$q$s" f)" = null ] || fail "f stayed ($s)"
        [ "$(fm_state "$q${s}2" h)" = active ] || fail "h is not active ($s)"
        [ "$(fm_state "$q$s" hc)" = waiting ] || fail "hc, h's child, went ($s)"
        [ "$(fm_state "$q$s" hr)" = waiting-children ] || fail "hr left waiting-children ($s)"
    done
    same_keys "${q}a" "${q}b" "the keyspaces differ after the removals"
    # shellcheck disable=SC2154 # set by the eval above
    kill -TERM "$hold_a" "$hold_b"
    wait "$hold_a" "$hold_b"
    echo "ln_jobs_remove_unprocessed_children skips a locked child and its subtree as BullMQ does"
}

#   flowmore_unprocessed_c_to_node  the trees of flowmore_unprocessed
#              added by `lanes jobs flow` and run by a C worker; BullMQ's
#              job.removeUnprocessedChildren() of r in one queue and
#              ln_jobs_remove_unprocessed_children in the other: the same
#              keyspace; both sides read k gone, r waiting with c1 and c2
#              processed and nothing pending.
case_flowmore_unprocessed_c_to_node() {
    need_cli
    for s in a b; do
        qs=$q$s
        printf '%s' "{\"name\":\"p\",\"queueName\":\"$qs\",\"opts\":{\"jobId\":\"p\"},\"children\":[
          {\"name\":\"r\",\"opts\":{\"jobId\":\"r\"},\"children\":[
            {\"name\":\"c1\",\"queueName\":\"${qs}2\",\"opts\":{\"jobId\":\"c1\"},
             \"children\":[{\"name\":\"g\",\"opts\":{\"jobId\":\"g\"}}]},
            {\"name\":\"c2\",\"queueName\":\"${qs}2\",\"opts\":{\"jobId\":\"c2\"}},
            {\"name\":\"k\",\"opts\":{\"jobId\":\"k\"}}]},
          {\"name\":\"s\",\"opts\":{\"jobId\":\"s\"}}]}" >"$tmp/tree-$s.json"
        "$cli" jobs "$url" flow "$tmp/tree-$s.json" >/dev/null || fail "lanes jobs flow $s"
        fpeer run "$url" "${qs}2" 2>"$tmp/w-$s.err" || fail "C worker ${qs}2: $(cat "$tmp/w-$s.err")"
        js rt-trim "$qs" >/dev/null || fail "rt-trim $qs"
    done
    n=$(fpeer unprocessed "$url" "${q}a" r 2>"$tmp/u.err") || fail "lanes: $(cat "$tmp/u.err")"
    [ "$n" = 1 ] || fail "lanes removed $n jobs, not 1"
    js fm-unprocessed "${q}b" r >/dev/null || fail "job.removeUnprocessedChildren of a lanes tree"
    same_keys "${q}a" "${q}b" "the keyspaces differ after the removals"
    [ "$(fpeer state "$url" "${q}b" k)" = none ] || fail "k stayed (lanes reads it)"
    [ "$(fpeer state "$url" "${q}b" r)" = waiting ] || fail "r was not released to wait (lanes)"
    [ "$(fm_state "${q}b" r)" = waiting ] || fail "r was not released to wait (Node)"
    fpeer children "$url" "${q}b" r >"$tmp/kids" || fail "ln_jobs_children of r"
    [ "$(cut -d' ' -f1,2 "$tmp/kids" | tr '\n' ' ')" = "c1 1 c2 1 " ] || fail "r's children: $(cat "$tmp/kids")"
    out=$(js fm-children "${q}b" r) || fail "fm-children"
    echo "$out" | grep -q '"unprocessed":0' || fail "Node sees pending children of r: $out"
    echo "$out" | grep -q "\"bull:${q}b2:c1\"" || fail "Node lost c1's result: $out"
    echo "BullMQ's removeUnprocessedChildren left of a lanes tree what lanes leaves"
}

#   flowmore_wait_child_node  the other way of flowmore_wait_child: C adds
#              a parent and its children k1 (pending) and k2 (completed
#              by a C worker); a Node Worker's moveToWaitingChildren with
#              opts.child says false for k2 and moves the job for k1; C
#              reads it in waiting-children, and waiting (Node too) once
#              its worker ran k1.
case_flowmore_wait_child_node() {
    fpeer add "$url" "$q-p" p 2>"$tmp/a.err" || fail "add the parent: $(cat "$tmp/a.err")"
    fpeer add "$url" "$q-c" k1 "$q-p" p 2>"$tmp/a.err" || fail "add k1: $(cat "$tmp/a.err")"
    fpeer add "$url" "$q-d" k2 "$q-p" p 2>"$tmp/a.err" || fail "add k2: $(cat "$tmp/a.err")"
    fpeer run "$url" "$q-d" 2>"$tmp/w.err" || fail "C worker (k2): $(cat "$tmp/w.err")"
    out=$(js fm-wait-child "$q-p" "$q-d" k2 "$q-c" k1) || fail "Node worker"
    [ "$out" = '{"got":[false,true]}' ] || fail "moveToWaitingChildren answered $out"
    [ "$(fpeer state "$url" "$q-p" p)" = waiting-children ] || fail "lanes does not read p in waiting-children"
    fpeer run "$url" "$q-c" 2>"$tmp/w.err" || fail "C worker (k1): $(cat "$tmp/w.err")"
    [ "$(fpeer state "$url" "$q-p" p)" = waiting ] || fail "k1 did not release the parent (lanes)"
    [ "$(fm_state "$q-p" p)" = waiting ] || fail "k1 did not release the parent (Node)"
    fpeer children "$url" "$q-p" p >"$tmp/kids" || fail "ln_jobs_children of p"
    [ "$(cut -d' ' -f1,2 "$tmp/kids" | tr '\n' ' ')" = "k1 1 k2 1 " ] || fail "p's children: $(cat "$tmp/kids")"
    echo "moveToWaitingChildren with opts.child waits only for the child named, of lanes jobs"
}

#   flowmore_flow_parent_node  the other way of flowmore_flow_parent:
#              FlowProducer's root r (child x) with opts.parent a job C
#              added; C reads r as its pending child, a C worker runs x
#              and r, and both sides read r's result in the parent, which
#              has nothing pending.
case_flowmore_flow_parent_node() {
    fpeer add "$url" "$q-p" p 2>"$tmp/a.err" || fail "add the parent: $(cat "$tmp/a.err")"
    js fm-flow-parent "$q-r" "$q-p" p | grep -q "\"parentKey\":\"bull:$q-p:p\"" ||
        fail "FlowProducer gave r no parentKey"
    [ "$(fpeer children "$url" "$q-p" p)" = "r 0 -" ] || fail "lanes does not read r as p's pending child"
    fpeer run "$url" "$q-r" 2>"$tmp/w.err" || fail "C worker (x, r): $(cat "$tmp/w.err")"
    [ "$(fpeer state "$url" "$q-r" r)" = completed ] || fail "r did not complete"
    fpeer children "$url" "$q-p" p >"$tmp/kids" || fail "ln_jobs_children of p"
    grep -q '^r 1 .*"by":"c".*"name":"r"' "$tmp/kids" || fail "lanes reads no result of r: $(cat "$tmp/kids")"
    out=$(js fm-children "$q-p" p) || fail "fm-children"
    echo "$out" | grep -q "\"bull:$q-r:r\":{\"by\":\"c\",\"name\":\"r\"}" || fail "Node reads no result of r: $out"
    echo "$out" | grep -q '"unprocessed":0' || fail "r is still pending: $out"
    echo "a FlowProducer root with a lanes parent gives it the tree's result from C workers"
}
