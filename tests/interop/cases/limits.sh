# shellcheck shell=sh
# shellcheck disable=SC2154 # url, q, tmp, peer, cli, ...: set by the driver
# interop/cases/limits.sh - the interop cases of global concurrency and rate limits.
# Sourced by tests/interop/test_redis_interop.sh, which has the helpers (js, fail,
# events_start, ...) and the variables (url, q, tmp, peer, cli) they use.
# Case X is the function case_X; tests/redis.cmake lists the names.

#   gconc      queue.setGlobalConcurrency(1) and a C worker of concurrency 4
#              (idle on the marker, 5 s waits): 6 jobs of 300 ms run one
#              at a time, back to back (under 2x the ideal 1.8 s; a worker
#              that slept out its wait after each job took ~5 s a job).
case_gconc() {
    "$peer" work "$url" "$q" --forever --concurrency 4 --sleep-ms 300 \
        --log "$tmp/c.log" >/dev/null 2>"$tmp/c.err" &
    pids="$pids $!"
    wait_word "$tmp/c.err" working 200 "C worker did not start" say
    sleep 0.5 # idle on the marker now
    js global-concurrency "$q" 1 6 >"$tmp/gc.json" || fail "global concurrency run"
    ms=$(sed 's/.*"ms":\([0-9]*\).*/\1/' "$tmp/gc.json")
    grep -q '"maxActive":1}' "$tmp/gc.json" || fail "limit broken: $(cat "$tmp/gc.json")"
    [ "$ms" -lt 3600 ] || fail "6 jobs of 300 ms took $ms ms (ideal 1800)"
    [ "$(sort -u "$tmp/c.log" | wc -l)" -eq 6 ] || fail "the C worker ran $(wc -l <"$tmp/c.log") runs"
    echo "global concurrency 1, C worker of concurrency 4: 6 jobs of 300 ms in $ms ms, one at a time"
}

#   ratelimit  a C worker (`lanes worker --rate-limit 3/300`) and a Node
#              Worker with limiter {max: 3, duration: 300} on one queue of
#              18 jobs share BullMQ's limiter: six windows, never 4 jobs
#              started within 300 ms (processedOn, as Node reads them).
case_ratelimit() {
    need_cli
    # The Node worker first, waiting for jobs; then the jobs and the C worker.
    node "$interop/interop.mjs" rl-work "$q" 3 300 18 >/dev/null 2>"$tmp/n.err" &
    node_pid=$!
    pids="$pids $node_pid"
    wait_word "$tmp/n.err" ready 400 "Node worker did not start" say
    js rl-add "$q" 18 >/dev/null || fail "add"
    "$cli" worker "$url" "$q" --rate-limit 3/300 --concurrency 2 --exit-when-empty --verbose \
        --exec true 2>"$tmp/c.err" || fail "lanes worker: $(cat "$tmp/c.err")"
    wait $node_pid || fail "Node worker: $(cat "$tmp/n.err")"
    js rl-check "$q" 3 300 18 >"$tmp/rl.json" || fail "limit check"
    ran=$(grep -c completed "$tmp/c.err")
    [ "$ran" -ge 1 ] && [ "$ran" -le 17 ] || fail "the C worker ran $ran of 18 jobs"
    echo "C and Node workers with limiter 3/300: 18 jobs, never 4 in a window ($(cat "$tmp/rl.json"), C ran $ran)"
}

#   ratelimit_node  Node's setGlobalRateLimit(2, 300) holds for a C worker
#              without a limit of its own, and Node's queue.rateLimit(600)
#              holds back a C worker with one.
case_ratelimit_node() {
    need_cli
    js rl-node "$q" "$cli" "$url" >"$tmp/rl.json" || fail "Node limits on a C worker"
    echo "Node's setGlobalRateLimit and queue.rateLimit hold for C workers: $(cat "$tmp/rl.json")"
}

#   ratelimit_meta  lanes' global concurrency and rate limit, and its
#              manual limit, as Node's getGlobalConcurrency,
#              getGlobalRateLimit and getRateLimitTtl read them; Node's
#              setGlobalConcurrency as `lanes jobs concurrency` reads it.
case_ratelimit_meta() {
    need_cli
    "$cli" jobs "$url" concurrency "$q" 3 || fail "lanes jobs concurrency"
    "$cli" jobs "$url" rate-limit "$q" 7/900 || fail "lanes jobs rate-limit"
    "$cli" jobs "$url" rate-limit "$q" --for 20000 || fail "lanes jobs rate-limit --for"
    js rl-meta "$q" 3 7 900 >"$tmp/rl.json" || fail "Node reads lanes' limits"
    [ "$("$cli" jobs "$url" concurrency "$q")" = 5 ] || fail "lanes reads Node's concurrency"
    "$cli" jobs "$url" rate-limit "$q" --clear || fail "clear"
    "$cli" jobs "$url" rate-limit "$q" --for 0 || fail "end the manual limit"
    [ "$("$cli" jobs "$url" rate-limit "$q" --json)" = '{"max":0,"duration_ms":0,"limited_ms":0}' ] ||
        fail "limits left: $("$cli" jobs "$url" rate-limit "$q" --json)"
    [ "$("$cli" jobs "$url" rate-limit "$q" | head -1)" = none ] || fail "rate limit not cleared"
    echo "lanes' limits read by Node and Node's by lanes: $(cat "$tmp/rl.json")"
}

#   ratelimit_error  `lanes worker --exec` exit 77 with {"rate_limit_ms":
#              6000} on a Node job (BullMQ's RateLimitError): Node sees it
#              waiting with no attempt used and the queue limited, and a
#              Node Worker with a limiter runs it once the limit is over.
case_ratelimit_error() {
    need_cli
    id=$(js add-one "$q" n '{}' '{"attempts":3}' | sed 's/.*"id":"\([^"]*\)".*/\1/')
    printf '#!/bin/sh\necho %s\nexit 77\n' "'{\"rate_limit_ms\": 6000}'" >"$tmp/rl.sh"
    chmod +x "$tmp/rl.sh"
    "$cli" worker "$url" "$q" --max-jobs 1 --exec "$tmp/rl.sh" 2>"$tmp/c.err" ||
        fail "lanes worker: $(cat "$tmp/c.err")"
    js rl-error "$q" "$id" >"$tmp/rl.json" || fail "Node's view of the rate-limited job"
    echo "a C RateLimitError as Node sees it: $(cat "$tmp/rl.json")"
}

#   ratelimit_idle  a C worker held back by a 2 s manual limit sleeps it
#              out: on a redis-server of our own, it runs at most a few
#              step scripts meanwhile (25 for a worker that went on
#              waking on the marker or polling).
case_ratelimit_idle() {
    need_cli
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    mkdir "$tmp/redis"
    redis-server --port "$port" --bind 127.0.0.1 --dir "$tmp/redis" --save "" --appendonly no \
        --daemonize no --loglevel warning >>"$tmp/redis/log" 2>&1 &
    redis_pid=$!
    wait_redis "$port"
    url2="redis://127.0.0.1:$port/0"
    "$cli" jobs "$url2" add "$q" n '{}' >/dev/null || fail "add"
    "$cli" jobs "$url2" rate-limit "$q" --for 2000 || fail "rate-limit --for"
    redis-cli -p "$port" config resetstat >/dev/null
    "$cli" worker "$url2" "$q" --rate-limit 5/1000 --exit-when-empty --poll 10 --exec true \
        2>"$tmp/c.err" || fail "lanes worker: $(cat "$tmp/c.err")"
    calls=$(redis-cli -p "$port" info commandstats | sed -n 's/^cmdstat_evalsha:calls=\([0-9]*\),.*/\1/p')
    "$cli" jobs "$url2" counts "$q" --json | grep -q '"completed":1' || fail "the job did not run"
    [ "${calls:-0}" -ge 1 ] && [ "${calls:-0}" -le 12 ] || fail "the limited worker ran ${calls:-0} scripts in 2 s"
    echo "a C worker limited for 2 s ran $calls step scripts, then the job"
}
