# shellcheck shell=sh
# shellcheck disable=SC2154 # url, q, tmp, peer, cli, ...: set by the driver
# interop/cases/edit.sh - the interop cases of changing a waiting job
# (<lanes/jobs_edit.h>, `lanes jobs change-priority | change-delay |
# update-data | dedup`) against BullMQ's job.changePriority,
# job.changeDelay, job.updateData, queue.getDeduplicationJobId and
# queue.removeDeduplicationKey (tests/interop/node/edit.mjs); and a
# change of priority of an active job, and a dedup key whose holder is gone.
# Sourced by tests/interop/test_redis_interop.sh, which has the helpers (js, fail,
# ...) and the variables (url, q, tmp, cli) they use.

# `lanes jobs URL ARGS...`, failing the case on a non-zero exit.
ed_cli() {
    "$cli" jobs "$url" "$@" >"$tmp/ed.out" 2>"$tmp/ed.err" ||
        fail "lanes jobs $*: $(cat "$tmp/ed.err")"
}

#   edit_c_to_node  lanes changes Node's jobs: a priority (waiting ->
#              prioritized, back and lifo front, prioritized -> waiting),
#              a delay, data (byte for byte) and a released dedup id; BullMQ
#              reads the lists, fields, due time and dedup keys, and a Node
#              Worker runs the jobs in their new order.
case_edit_c_to_node() {
    need_cli
    js ed-setup "$q" >/dev/null || fail "ed-setup"
    ed_cli change-priority "$q" a 1
    ed_cli change-priority "$q" e 0
    ed_cli change-priority "$q" e 0 --lifo
    ed_cli change-priority "$q" d 1 --lifo
    ed_cli change-delay "${q}d" f 3600000
    ed_cli update-data "${q}d" g ' [1, 2.50, "\u00e9"] '
    ed_cli dedup "${q}d" k --remove
    [ "$(cat "$tmp/ed.out")" = 1 ] || fail "dedup --remove of k printed $(cat "$tmp/ed.out")"
    js ed-check "$q" ' [1, 2.50, "\u00e9"] ' >/dev/null || fail "ed-check"
    echo "BullMQ read lanes' priority, delay, data and dedup changes, and ran the new order"
}

#   edit_node_to_c  Node makes the same changes; lanes reads them (lists
#              in run order, priorities, due time, data, dedup holders) and
#              a C worker runs the jobs in their new order.
case_edit_node_to_c() {
    need_cli
    js ed-setup "$q" >/dev/null || fail "ed-setup"
    js ed-node "$q" >/dev/null || fail "ed-node"
    ed_cli list "$q" waiting
    [ "$(awk '{printf "%s ", $1}' "$tmp/ed.out")" = "e b c " ] || fail "waiting: $(cat "$tmp/ed.out")"
    ed_cli list "$q" prioritized
    [ "$(awk '{printf "%s ", $1}' "$tmp/ed.out")" = "d a " ] || fail "prioritized: $(cat "$tmp/ed.out")"
    ed_cli get "$q" a --json
    grep -q '"priority":1,' "$tmp/ed.out" || fail "a's priority: $(cat "$tmp/ed.out")"
    now=$(date +%s)
    ed_cli get "${q}d" f --json
    due=$(sed 's/.*"run_at_ms":\([0-9]*\).*/\1/' "$tmp/ed.out")
    off=$((due / 1000 - now - 3600))
    [ "$off" -le 10 ] || fail "f due at $due, not an hour after $now"
    [ "$off" -ge -10 ] || fail "f due at $due, not an hour after $now"
    ed_cli get "${q}d" g --json
    grep -q '"data":{"x":\[1,2\]}' "$tmp/ed.out" || fail "g's data: $(cat "$tmp/ed.out")"
    "$cli" jobs "$url" dedup "${q}d" k >/dev/null 2>&1
    [ $? -eq 4 ] || fail "dedup k is still held after Node released it"
    ed_cli dedup "${q}d" k2
    [ "$(cat "$tmp/ed.out")" = h ] || fail "dedup k2: $(cat "$tmp/ed.out")"
    # shellcheck disable=SC2016 # the program's own $LANES_JOB_ID and $0
    "$cli" worker "$url" "$q" --concurrency 1 --exit-when-empty --exec /bin/sh -c \
        'cat >/dev/null; echo "$LANES_JOB_ID" >>"$0"; echo 1' "$tmp/order" >/dev/null 2>"$tmp/c.err" ||
        fail "lanes worker: $(cat "$tmp/c.err")"
    [ "$(tr '\n' ' ' <"$tmp/order")" = "e b c d a " ] || fail "run order: $(cat "$tmp/order")"
    echo "lanes read Node's priority, delay, data and dedup changes, and ran the new order"
}

#   promote_all_c_to_node  `lanes jobs promote --all` of Node's delayed jobs
#              (some with a priority): BullMQ finds none delayed, each in
#              wait or prioritized by its priority, and its
#              getCountsPerPriority agrees with `lanes jobs priority-counts`.
case_promote_all_c_to_node() {
    need_cli
    js pc-setup "$q" >/dev/null || fail "pc-setup"
    ed_cli promote "$q" --all
    [ "$(cat "$tmp/ed.out")" = 5 ] || fail "promote --all printed $(cat "$tmp/ed.out")"
    js pc-counts "$q" >"$tmp/node.json" || fail "pc-counts"
    grep -qx '{"0":5,"3":3,"5":0}' "$tmp/node.json" || fail "Node's counts: $(cat "$tmp/node.json")"
    grep -qx '{"delayed":0}' "$tmp/node.json" || fail "Node's delayed: $(cat "$tmp/node.json")"
    ed_cli priority-counts "$q" 0 3 5 --json
    [ "$(cat "$tmp/ed.out")" = "$(head -1 "$tmp/node.json")" ] ||
        fail "lanes counts $(cat "$tmp/ed.out"), Node $(head -1 "$tmp/node.json")"
    echo "BullMQ read lanes' promotions; both sides count the same per priority"
}

#   promote_all_node_to_c  BullMQ's queue.promoteJobs() (which puts even
#              the prioritized ones into wait): lanes counts none delayed
#              and the same per priority as getCountsPerPriority.
case_promote_all_node_to_c() {
    need_cli
    js pc-setup "$q" >/dev/null || fail "pc-setup"
    js pc-promote "$q" >/dev/null || fail "pc-promote"
    js pc-counts "$q" >"$tmp/node.json" || fail "pc-counts"
    ed_cli priority-counts "$q" 0 3 5 --json
    [ "$(cat "$tmp/ed.out")" = "$(head -1 "$tmp/node.json")" ] ||
        fail "lanes counts $(cat "$tmp/ed.out"), Node $(head -1 "$tmp/node.json")"
    grep -qx '{"0":7,"3":1,"5":0}' "$tmp/ed.out" || fail "lanes' counts: $(cat "$tmp/ed.out")"
    ed_cli counts "$q" --json
    grep -q '"delayed":0' "$tmp/ed.out" || fail "lanes counts: $(cat "$tmp/ed.out")"
    echo "lanes read BullMQ's promotions and counts the same per priority"
}

# The "len" of a tr-* line.
tr_len() { sed 's/.*"len":\([0-9]*\).*/\1/' "$1"; }

#   trim_events_c_to_node  `lanes jobs trim-events` of the events of 300 jobs
#              Node added: the stream BullMQ reads is shorter by what lanes
#              said went, still at least the length asked for.
case_trim_events_c_to_node() {
    need_cli
    js tr-add "$q" 300 >"$tmp/len0" || fail "tr-add"
    ed_cli trim-events "$q" 10
    removed=$(cat "$tmp/ed.out")
    js tr-len "$q" >"$tmp/len1" || fail "tr-len"
    before=$(tr_len "$tmp/len0") after=$(tr_len "$tmp/len1")
    [ "$after" -eq $((before - removed)) ] || fail "$before events, $removed removed, $after left"
    [ "$after" -ge 10 ] || fail "$after events left of $before"
    [ "$after" -lt "$before" ] || fail "$after events left of $before"
    echo "lanes trimmed Node's events from $before to $after"
}

#   trim_events_node_to_c  BullMQ's queue.trimEvents of the events of 150
#              jobs lanes added: lanes reads the shorter stream, the newest
#              events kept.
case_trim_events_node_to_c() {
    need_cli
    i=0
    while [ $i -lt 150 ]; do
        "$cli" jobs "$url" add "$q" t "{\"i\":$i}" >/dev/null || fail "add $i"
        i=$((i + 1))
    done
    ed_cli events "$q"
    before=$(wc -l <"$tmp/ed.out")
    newest=$(tail -1 "$tmp/ed.out")
    js tr-trim "$q" 10 >/dev/null || fail "tr-trim"
    ed_cli events "$q"
    after=$(wc -l <"$tmp/ed.out")
    [ "$after" -ge 10 ] || fail "$after events left of $before"
    [ "$after" -lt "$before" ] || fail "$after events left of $before"
    [ "$(tail -1 "$tmp/ed.out")" = "$newest" ] || fail "the newest event went"
    echo "lanes read the events Node trimmed ($before to $after)"
}

#   edit_active_priority_node  Node's job.changePriority on a job a
#              `lanes worker --exec` runs: the job stays active with the new
#              priority field (7), and its failed first run retries by it:
#              behind job y of priority 5 that Node added meanwhile (by
#              the old priority 0 it would run before y); both complete.
case_edit_active_priority_node() {
    need_cli
    js ap-add "$q" >/dev/null || fail "ap-add"
    # shellcheck disable=SC2016 # the program's own $0 and $LANES_JOB_ID
    "$cli" worker "$url" "$q" --concurrency 1 --exit-when-empty --exec /bin/sh -c \
        'cat >/dev/null; echo "$LANES_JOB_ID" >>"$0.order"; if [ ! -f "$0.go" ]; then echo run >"$0"; while [ ! -f "$0.go" ]; do sleep 0.05; done; exit 1; fi; echo 1' \
        "$tmp/run" >/dev/null 2>"$tmp/c.err" &
    wpid=$!
    pids="$pids $wpid"
    wait_word "$tmp/run" run 400 "the C worker did not start x"
    js ap-prio "$q" 7 >/dev/null || fail "ap-prio"
    touch "$tmp/run.go"
    wait "$wpid" || fail "lanes worker: $(cat "$tmp/c.err")"
    [ "$(tr '\n' ' ' <"$tmp/run.order")" = "x y x " ] || fail "run order: $(cat "$tmp/run.order")"
    js ap-check "$q" 7 >/dev/null || fail "ap-check"
    echo "a C worker ran a job whose priority Node changed while it ran: retried and completed"
}

#   edit_dedup_stale_key  a dedup id held without a TTL by a job that
#              is gone (its hash deleted, as a crash or a restored copy
#              leaves it): BullMQ's next add takes the id (its stale key
#              recovery), so `lanes jobs dedup` says none holds it (exit 4),
#              as the sqlite store answers, and --remove says 0.
case_edit_dedup_stale_key() {
    need_cli
    id=$("$cli" jobs "$url" add "$q" n '{}' --dedup k 2>"$tmp/c.err") || fail "add: $(cat "$tmp/c.err")"
    redis-cli -u "$url" del "bull:$q:$id" >/dev/null || fail "redis-cli del"
    "$cli" jobs "$url" dedup "$q" k >"$tmp/d.out" 2>&1
    rc=$?
    [ $rc -eq 4 ] || fail "dedup k with its holder gone: exit $rc, $(cat "$tmp/d.out")"
    out=$("$cli" jobs "$url" dedup "$q" k --remove 2>&1) || fail "dedup --remove: $out"
    [ "$out" = 0 ] || fail "dedup --remove of a stale key printed $out"
    id2=$("$cli" jobs "$url" add "$q" n '{}' --dedup k 2>"$tmp/c.err") || fail "add: $(cat "$tmp/c.err")"
    [ "$id2" != "$id" ] || fail "lanes' add deduplicated to the gone holder"
    redis-cli -u "$url" del "bull:$q:$id2" >/dev/null || fail "redis-cli del"
    js sd-add "$q" "$id2" >/dev/null || fail "sd-add"
    echo "a stale dedup key: lanes says none holds it, as BullMQ's add and the sqlite store"
}
