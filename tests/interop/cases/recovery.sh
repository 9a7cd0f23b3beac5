# shellcheck shell=sh
# shellcheck disable=SC2154 # url, q, tmp, peer, cli, ...: set by the driver
# interop/cases/recovery.sh - the interop cases of stalled jobs, lock renewal, a Redis restart
# and idle workers waking.
# Sourced by tests/interop/test_redis_interop.sh, which has the helpers (js, fail,
# events_start, ...) and the variables (url, q, tmp, peer, cli) they use.
# Case X is the function case_X; tests/redis.cmake lists the names.

#   kill9      kill -9 a C worker mid-job: lanes' stalled check (a second C
#              worker) and BullMQ's (a Node Worker) each recover the job.
case_kill9() {
    for who in c node; do
        qk="$q-$who"
        events_start "$qk"
        "$peer" one "$url" "$qk" sleep '{"k":1}' >/dev/null || fail "add"
        "$peer" work "$url" "$qk" --lease-ms 1000 --sleep-ms 30000 --log "$tmp/k1-$who.log" \
            >/dev/null 2>&1 &
        victim=$!
        wait_lines "$tmp/k1-$who.log" 1
        kill -9 $victim
        wait $victim 2>/dev/null
        if [ $who = c ]; then # lanes' stalled check, in a new C worker
            "$peer" work "$url" "$qk" --lease-ms 1000 --log "$tmp/k2-$who.log" >/dev/null ||
                fail "recovering C worker"
        else # BullMQ's stalled check, in a Node Worker
            js work "$qk" 1 "$tmp/k2-$who.log" '{"stalledInterval":300,"lockDuration":1000}' \
                >/dev/null || fail "recovering Node worker"
        fi
        events_stop "$qk"
        js summarize "$qk" >"$tmp/sum.json" || fail "summarize"
        grep -q '"1":{"state":"completed"' "$tmp/sum.json" || fail "$who: $(cat "$tmp/sum.json")"
        grep -q '"stalledCounter":1' "$tmp/sum.json" || fail "$who: stalledCounter $(cat "$tmp/sum.json")"
        grep -q '"stalled"' "$tmp/ev-$qk.json" || fail "$who: no stalled event $(cat "$tmp/ev-$qk.json")"
        echo "kill -9 mid-job: recovered by the $who stalled check"
    done
}

#   renew      a C worker renews its lock while BullMQ's stalled check runs
#              every 300 ms beside it: the job is not taken away.
case_renew() {
    events_start "$q"
    "$peer" one "$url" "$q" sleep '{"r":1}' >/dev/null || fail "add"
    "$peer" work "$url" "$q" --lease-ms 1000 --sleep-ms 3000 --log "$tmp/c.log" >/dev/null 2>&1 &
    worker=$!
    pids="$pids $worker"
    wait_lines "$tmp/c.log" 1
    # BullMQ's stalled check runs every 300 ms beside the 3 s job whose
    # 1 s lock the C worker renews: it must not take the job away.
    js work "$q" 1 "$tmp/node.log" '{"stalledInterval":300,"lockDuration":1000}' >/dev/null ||
        fail "Node worker"
    wait $worker || fail "C worker"
    events_stop "$q"
    js summarize "$q" >"$tmp/sum.json" || fail "summarize"
    grep -q '"attemptsStarted":1,' "$tmp/sum.json" || fail "job ran twice: $(cat "$tmp/sum.json")"
    grep -q '"stalledCounter":0}' "$tmp/sum.json" || fail "stalled: $(cat "$tmp/sum.json")"
    ! grep -q stalled "$tmp/ev-$q.json" || fail "stalled event: $(cat "$tmp/ev-$q.json")"
    [ ! -s "$tmp/node.log" ] || fail "the Node worker ran the job too"
    echo "a C worker's renewed lock holds against BullMQ's stalled check"
}

#   restart    a redis-server of our own with AOF: SHUTDOWN NOSAVE and a
#              restart while a C worker runs 300 jobs: it reconnects and
#              every job completes.
case_restart() {
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    mkdir "$tmp/redis"
    start_redis() {
        redis-server --port "$port" --bind 127.0.0.1 --dir "$tmp/redis" --save "" \
            --appendonly yes --appendfsync always --daemonize no \
            --loglevel warning >>"$tmp/redis/log" 2>&1 &
        redis_pid=$!
        wait_redis "$port"
    }
    start_redis
    url2="redis://127.0.0.1:$port/0"
    n=300
    "$peer" bulk "$url2" "$q" $n sleep >/dev/null || fail "add"
    "$peer" work "$url2" "$q" --concurrency 4 --sleep-ms 10 --lease-ms 5000 \
        --log "$tmp/r.log" >"$tmp/peer.json" 2>"$tmp/peer.err" &
    worker=$!
    pids="$pids $worker"
    wait_lines "$tmp/r.log" 60
    redis-cli -p "$port" shutdown nosave >/dev/null 2>&1
    wait "$redis_pid" 2>/dev/null
    redis_pid=""
    sleep 1
    start_redis
    wait "$worker" || fail "C worker did not survive the restart: $(cat "$tmp/peer.err")"
    LANES_TEST_REDIS_URL=$url2 js counts "$q" >"$tmp/counts.json"
    grep -q "\"completed\":$n," "$tmp/counts.json" || fail "after restart: $(cat "$tmp/counts.json")"
    [ "$(sort -u "$tmp/r.log" | wc -l)" -eq $n ] || fail "not every job ran"
    echo "redis SHUTDOWN NOSAVE + restart mid-run: worker reconnected, $n/$n completed"
}

#   wake       a BullMQ Worker and a C worker idle on one empty queue, both
#              blocked on the marker (BullMQ's default drainDelay, 5 s; the
#              C worker's wait is capped at 5 s too): two slow jobs added at
#              once start on both workers well before either wait's timeout
#              (the first worker's take passes the wake-up on).
case_wake() {
    node "$interop/interop.mjs" serve "$q" "$tmp/node.log" 2>"$tmp/node.err" &
    pids="$pids $!"
    "$peer" work "$url" "$q" --forever --concurrency 1 --sleep-ms 500 \
        --log "$tmp/c.log" >/dev/null 2>"$tmp/c.err" &
    pids="$pids $!"
    i=0
    until grep -q ready "$tmp/node.err" 2>/dev/null && grep -q working "$tmp/c.err" 2>/dev/null; do
        i=$((i + 1))
        [ $i -le 400 ] || fail "workers did not start: $(cat "$tmp/node.err" "$tmp/c.err")"
        sleep 0.05
    done
    sleep 1 # both are blocked on the marker now, with waits of 5 s
    t0=$(date +%s%N)
    "$peer" bulk "$url" "$q" 2 sleep >/dev/null || fail "C add"
    i=0 # each must start a job within 2.5 s: half of either wait's timeout
    until [ -s "$tmp/node.log" ] && [ -s "$tmp/c.log" ]; do
        i=$((i + 1))
        [ $i -le 50 ] || fail "not both woken in 2.5 s: node $(cat "$tmp/node.log" 2>/dev/null), C $(cat "$tmp/c.log" 2>/dev/null)"
        sleep 0.05
    done
    echo "both idle workers woke at once: $(( ($(date +%s%N) - t0) / 1000000 )) ms for node $(cat "$tmp/node.log") and C $(cat "$tmp/c.log")"
}
