# shellcheck shell=sh
# shellcheck disable=SC2154 # url, q, tmp, peer, cli, ...: set by the driver
# interop/cases/remove_tree.sh - the interop cases of removing a job with its
# children (`lanes jobs remove --children`, BullMQ's queue.remove).
# Sourced by tests/interop/test_redis_interop.sh, which has the helpers (js, fail,
# events_start, ...) and the variables (url, q, tmp, peer, cli) they use.
# Case X is the function case_X; tests/redis.cmake lists the names.

# The keyspaces of queue pairs $1/$12 and $2/$22 (tmp files $1.keys,
# $2.keys) are the same, but for the queue names.
same_keys() { # QA QB WHAT
    js rt-keys "$1" >"$tmp/$1.keys" || fail "rt-keys $1"
    js rt-keys "$2" >"$tmp/$2.keys" || fail "rt-keys $2"
    js compare "$tmp/$1.keys" "$tmp/$2.keys" >"$tmp/cmp.out" 2>&1 || fail "$3: $(cat "$tmp/cmp.out")"
}

#   remove_tree_node_to_c  FlowProducer trees (r, its own parent p outside
#              the removal, children in two queues, three of them processed;
#              d, a job holding a deduplication id) removed
#              by `lanes jobs remove --children` leave the keyspace, events
#              included, that BullMQ's queue.remove leaves of the same
#              jobs: every job of the subtrees and the deduplication key
#              gone, p waiting for its other child, r first released to
#              wait and its queue's marker set.
case_remove_tree_node_to_c() {
    need_cli
    js rt-setup "${q}a" >/dev/null || fail "rt-setup ${q}a"
    js rt-setup "${q}b" >/dev/null || fail "rt-setup ${q}b"
    js rt-remove "${q}a" r | grep -q '"code":1' || fail "queue.remove refused the tree"
    js rt-remove "${q}a" d | grep -q '"code":1' || fail "queue.remove refused d"
    n=$("$cli" jobs "$url" remove "${q}b" r --children) || fail "lanes jobs remove --children"
    [ "$n" = 5 ] || fail "lanes jobs remove --children removed $n jobs, not 5"
    n=$("$cli" jobs "$url" remove "${q}b" d --children) || fail "lanes jobs remove --children d"
    [ "$n" = 1 ] || fail "lanes jobs remove --children removed $n jobs, not 1"
    same_keys "${q}a" "${q}b" "the keyspaces differ after the removals"
    grep -q '"bull:Q:de:dk"' "$tmp/${q}b.keys" && fail "the deduplication key stayed"
    echo "lanes jobs remove --children left what BullMQ's queue.remove leaves"
}

#   remove_tree_c_to_node  the same tree added by `lanes jobs flow` and run
#              by a lanes worker, removed by BullMQ's queue.remove and by
#              `lanes jobs remove --children`: the same keyspaces after.
case_remove_tree_c_to_node() {
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
        "$cli" worker "$url" "${qs}2" --exit-when-empty --exec /bin/sh -c 'cat >/dev/null; echo 1' \
            >/dev/null 2>"$tmp/w-$s.err" || fail "lanes worker ${qs}2: $(cat "$tmp/w-$s.err")"
        js rt-trim "$qs" >/dev/null || fail "rt-trim $qs"
    done
    n=$("$cli" jobs "$url" remove "${q}a" r --children) || fail "lanes jobs remove --children"
    [ "$n" = 5 ] || fail "lanes jobs remove --children removed $n jobs, not 5"
    js rt-remove "${q}b" r | grep -q '"code":1' || fail "queue.remove refused the lanes tree"
    same_keys "${q}a" "${q}b" "the keyspaces differ after the removals"
    grep -q '"bull:Q:r"' "$tmp/${q}b.keys" && fail "queue.remove left r"
    echo "BullMQ's queue.remove left of a lanes tree what lanes jobs remove --children leaves"
}

#   remove_tree_refused  `lanes jobs remove --children` refuses, changing
#              nothing, a FlowProducer tree of 1001 jobs (exit 2: past
#              lanes' cap of 1000 entries) and one whose child a Node
#              Worker holds (exit 1, as BullMQ's queue.remove returns 0).
case_remove_tree_refused() {
    need_cli
    js rt-big "${q}g" >/dev/null || fail "rt-big"
    js rt-keys "${q}g" >"$tmp/big-before.json" || fail "rt-keys"
    "$cli" jobs "$url" remove "${q}g" big --children >/dev/null 2>"$tmp/big.err"
    rc=$?
    [ $rc -eq 2 ] || fail "remove --children of 1001 jobs: exit $rc, not 2: $(cat "$tmp/big.err")"
    grep -q "more than 1000 entries" "$tmp/big.err" || fail "no reason given: $(cat "$tmp/big.err")"
    js rt-keys "${q}g" >"$tmp/big-after.json" || fail "rt-keys"
    js compare "$tmp/big-before.json" "$tmp/big-after.json" >/dev/null || fail "the refusal changed keys"
    node "$interop/interop.mjs" rt-hold "${q}h" >/dev/null 2>"$tmp/hold.err" &
    hold=$!
    pids="$pids $hold"
    wait_word "$tmp/hold.err" held 200 "the Node Worker never held h" say
    js rt-keys "${q}h" >"$tmp/h-before.json" || fail "rt-keys"
    "$cli" jobs "$url" remove "${q}h" hr --children >/dev/null 2>"$tmp/h.err"
    rc=$?
    [ $rc -eq 1 ] || fail "remove --children of a held tree: exit $rc, not 1: $(cat "$tmp/h.err")"
    grep -q "bull:${q}h2:h" "$tmp/h.err" || fail "the held job is not named: $(cat "$tmp/h.err")"
    js rt-remove "${q}h" hr | grep -q '"code":0' || fail "queue.remove did not refuse the held tree"
    js rt-keys "${q}h" >"$tmp/h-after.json" || fail "rt-keys"
    js compare "$tmp/h-before.json" "$tmp/h-after.json" >/dev/null || fail "the refusal changed keys"
    kill -TERM "$hold"
    wait "$hold"
    echo "lanes jobs remove --children refused a tree too large and a held one, changing nothing"
}
