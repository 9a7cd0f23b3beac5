# shellcheck shell=sh
# shellcheck disable=SC2154 # url, q, tmp, peer, cli, ...: set by the driver
# interop/cases/workers.sh - the interop cases of connected workers.
# Sourced by tests/interop/test_redis_interop.sh, which has the helpers (js, fail,
# events_start, ...) and the variables (url, q, tmp, peer, cli) they use.
# Case X is the function case_X; tests/redis.cmake lists the names.

#   workers    connected workers both ways: a running `lanes worker` (and a
#              C ln_worker) is listed by Node's queue.getWorkers() under
#              BullMQ's name format and gone once it stopped; two idle
#              BullMQ Workers (named 'nodew' and unnamed) are listed by
#              `lanes jobs workers --json` as kind bullmq, gone after close.
case_workers() {
    # Node's getWorkers() lists a running C worker, named as BullMQ's are.
    b64=$(printf %s "$q" | base64)
    js get-workers "$q" | grep -qx '{"count":0,"names":\[\]}' || fail "workers before any ran"
    "$peer" work "$url" "$q" --forever >/dev/null 2>&1 &
    worker=$!
    pids="$pids $worker"
    i=0
    until js get-workers "$q" >"$tmp/gw.json" && grep -q '"count":1,' "$tmp/gw.json"; do
        i=$((i + 1))
        [ $i -le 50 ] || fail "getWorkers() does not list the C worker: $(cat "$tmp/gw.json")"
        sleep 0.1
    done
    grep -qx "{\"count\":1,\"names\":\[\"bull:$b64:w:lanes-$worker\"\]}" "$tmp/gw.json" ||
        fail "getWorkers() listed $(cat "$tmp/gw.json")"
    kill -TERM $worker
    wait $worker || fail "C worker did not stop cleanly on SIGTERM"
    js get-workers "$q" | grep -q '"count":0,' || fail "the stopped C worker is still listed"
    echo "Node's getWorkers() lists a running C worker (bull:$b64:w:lanes-PID), not a stopped one"
    need_cli
    "$cli" worker "$url" "$q" --exec true >/dev/null 2>&1 &
    worker=$!
    pids="$pids $worker"
    i=0
    until js get-workers "$q" | grep -q "\"bull:$b64:w:lanes-$worker\""; do
        i=$((i + 1))
        [ $i -le 50 ] || fail "getWorkers() does not list \`lanes worker\`"
        sleep 0.1
    done
    "$cli" jobs "$url" workers "$q" --json >"$tmp/lw.json" || fail "lanes jobs workers"
    grep -q "\"kind\":\"lanes\",\"name\":\"lanes-$worker\",\"addr\":\"[0-9.]*:[0-9]*\",\"host\":null,\"pid\":$worker," "$tmp/lw.json" ||
        fail "lanes jobs workers listed $(cat "$tmp/lw.json")"
    kill -TERM $worker
    wait $worker || fail "lanes worker did not stop cleanly on SIGTERM"
    echo "... and a running \`lanes worker\`, which lanes jobs workers lists too"
    # lanes lists BullMQ's Node workers.
    node "$interop/interop.mjs" idle-workers "$q" >/dev/null 2>"$tmp/iw.err" &
    node_pid=$!
    pids="$pids $node_pid"
    wait_word "$tmp/iw.err" ready 200 "Node workers did not start" say
    "$cli" jobs "$url" workers "$q" --json >"$tmp/nw.json" || fail "lanes jobs workers"
    grep -q '"kind":"bullmq","name":"nodew",' "$tmp/nw.json" || fail "no named Node worker: $(cat "$tmp/nw.json")"
    grep -q '"kind":"bullmq","name":null,' "$tmp/nw.json" || fail "no unnamed Node worker: $(cat "$tmp/nw.json")"
    [ "$(grep -o '"kind"' "$tmp/nw.json" | wc -l)" -eq 2 ] || fail "not 2 workers: $(cat "$tmp/nw.json")"
    kill -TERM $node_pid
    wait $node_pid || fail "Node workers failed: $(cat "$tmp/iw.err")"
    i=0
    until "$cli" jobs "$url" workers "$q" --json | grep -qx '\[\]'; do
        i=$((i + 1))
        [ $i -le 50 ] || fail "closed Node workers still listed"
        sleep 0.1
    done
    echo "lanes jobs workers lists BullMQ's Node workers (named and unnamed), not closed ones"
}
