# shellcheck shell=sh
# shellcheck disable=SC2154 # url, q, tmp, peer, cli, ...: set by the driver
# interop/cases/exec_children.sh - a `lanes worker --exec` program
# processed in steps (exit 78, BullMQ's moveToWaitingChildren) whose
# children stock BullMQ 6.7.0 Workers run. Sourced by
# tests/interop/test_redis_interop.sh; tests/redis.cmake lists the names.

#   exec_wait_children  Node adds a job "report"; `lanes worker --exec`
#              runs a program for it that adds two children to another
#              queue with `lanes jobs "$LANES_STORE_URL" add --parent
#              "$LANES_JOB_QUEUE:$LANES_JOB_ID"` and exits 78: the job waits
#              in waiting-children. A Node Worker runs the children;
#              BullMQ's completion of the last one releases the parent
#              (Node's QueueEvents sees its "waiting" with prev
#              "waiting-children"), and the program's second run, with
#              the children in LANES_CHILDREN_FILE, prints that file as
#              the job's result: both children's Node results, as
#              getChildrenValues has them, one attempt used. Two runs in
#              all, two children run by Node.
case_exec_wait_children() {
    need_cli
    kq="$q-kids"
    cat >"$tmp/report.sh" <<EOS
#!/bin/sh
if [ -n "\${LANES_CHILDREN_FILE:-}" ]; then
    echo "second \$LANES_JOB_ID" >>"$tmp/runs.log"
    cat "\$LANES_CHILDREN_FILE"
    exit 0
fi
echo "first \$LANES_JOB_ID" >>"$tmp/runs.log"
for n in 1 2; do
    "$cli" jobs "\$LANES_STORE_URL" add --parent "\$LANES_JOB_QUEUE:\$LANES_JOB_ID" \\
        "$kq" part "{\"n\":\$n}" >/dev/null || exit 1
done
exit 78
EOS
    node "$interop/interop.mjs" xc-events "$q" >"$tmp/xc-ev.json" 2>"$tmp/xc-ev.err" &
    epid=$!
    pids="$pids $epid"
    wait_word "$tmp/xc-ev.err" ready 200 "QueueEvents did not start"
    id=$(js add-one "$q" report '{"parts":2}' | sed 's/.*"id":"\([^"]*\)".*/\1/') ||
        fail "Node add of the parent"
    "$cli" worker "$url" "$q" --exec /bin/sh "$tmp/report.sh" >/dev/null 2>"$tmp/c.err" &
    cpid=$!
    pids="$pids $cpid"
    wait_word "$tmp/runs.log" "first $id" 200 "the program did not run: $(cat "$tmp/c.err")"
    # The children wait for a Node Worker: the parent is in waiting-children.
    js wait-state "$q" "$id" waiting-children >/dev/null ||
        fail "the parent did not wait for its children: $(js job "$q" "$id")"
    out=$(js job "$q" "$id") || fail "Node read of the parent"
    case $out in
        *'"state":"waiting-children"'*'"attemptsMade":0'*) ;;
        *) fail "the parent is not waiting for its children, no attempt used: $out" ;;
    esac
    node "$interop/interop.mjs" xc-serve "$kq" "$tmp/kids.log" 2>"$tmp/n.err" &
    npid=$!
    pids="$pids $npid"
    js xc-check "$q" "$id" "$kq" >/dev/null || fail "the parent's second run: $(cat "$tmp/c.err")"
    kill -TERM "$cpid"
    wait "$cpid"
    kill -TERM "$npid"
    wait "$npid" || fail "Node worker: $(cat "$tmp/n.err")"
    kill -TERM "$epid"
    wait "$epid" || fail "QueueEvents: $(cat "$tmp/xc-ev.err")"
    [ "$(wc -l <"$tmp/kids.log")" -eq 2 ] || fail "Node ran $(tr '\n' ' ' <"$tmp/kids.log")"
    [ "$(tr '\n' ' ' <"$tmp/runs.log")" = "first $id second $id " ] ||
        fail "the program's runs: $(tr '\n' ' ' <"$tmp/runs.log")"
    grep -q "{\"jobId\":\"$id\",\"prev\":\"waiting-children\"}" "$tmp/xc-ev.json" ||
        fail "no waiting event of the released parent: $(cat "$tmp/xc-ev.json")"
    echo "a lanes worker --exec parent (exit 78) waited for children Node ran and completed with their results"
}
