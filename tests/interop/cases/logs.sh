# shellcheck shell=sh
# shellcheck disable=SC2154 # url, q, tmp, peer, cli, ...: set by the driver
# interop/cases/logs.sh - the interop cases of a job's log lines: a C
# worker's ln_job_log under a Node job's keepLogs, and lanes' add-log /
# clear-logs (<lanes/jobs_edit.h>) against BullMQ's queue.getJobLogs,
# queue.addJobLog and job.clearLogs (tests/interop/node/logs.mjs).
# Sourced by tests/interop/test_redis_interop.sh, which has the helpers (js, fail,
# ...) and the variables (url, q, tmp, peer, cli) they use.

# Fail unless BullMQ reads job $1's lines as JSON $2 (the logs array).
logs_expect() {
    got=$(js logs-get "$q" "$1") || fail "getJobLogs $1"
    want="{\"logs\":$2,\"count\":$(echo "$2" | node -e 'process.stdout.write(String(JSON.parse(require("fs").readFileSync(0)).length))')}"
    [ "$got" = "$want" ] || fail "job $1: BullMQ reads $got, want $want"
}

#   logs_keep_node_to_c  Node adds jobs with keepLogs 2, keepLogs 0 and
#              none; a C worker's handler logs five lines in each: BullMQ
#              reads the newest two, then all five (0 keeps every line, as
#              a Node worker's job.log does), then all five.
case_logs_keep_node_to_c() {
    js add-one "$q" logs5 '{}' '{"jobId":"k2","keepLogs":2}' >/dev/null || fail "add k2"
    js add-one "$q" logs5 '{}' '{"jobId":"k0","keepLogs":0}' >/dev/null || fail "add k0"
    js add-one "$q" logs5 '{}' '{"jobId":"kn"}' >/dev/null || fail "add kn"
    "$peer" work "$url" "$q" >/dev/null || fail "C worker"
    logs_expect k2 '["line 4","line 5"]'
    all='["line 1","line 2","line 3","line 4","line 5"]'
    logs_expect k0 "$all"
    logs_expect kn "$all"
    echo "a C worker's log lines under keepLogs 2 / 0 / none: 2, 5, 5"
}

#   logs_both_ways  lanes adds lines to a Node job (add-log, --keep) and
#              clears them (clear-logs --keep): BullMQ reads each step;
#              then Node's addJobLog (with keepLogs) and clearLogs: lanes
#              reads each step.
case_logs_both_ways() {
    need_cli
    js add-one "$q" n '{}' '{"jobId":"j"}' >/dev/null || fail "add j"
    lc() { "$cli" jobs "$url" "$@" 2>"$tmp/l.err" || fail "lanes jobs $*: $(cat "$tmp/l.err")"; }
    [ "$(lc add-log "$q" j a)" = 1 ] || fail "add-log count"
    lc add-log "$q" j 'b "quoted" é' >/dev/null
    lc add-log "$q" j c >/dev/null
    logs_expect j '["a","b \"quoted\" é","c"]'
    [ "$(lc add-log "$q" j d --keep 2)" = 2 ] || fail "add-log --keep count"
    logs_expect j '["c","d"]'
    lc clear-logs "$q" j --keep 1
    logs_expect j '["d"]'
    lc clear-logs "$q" j
    logs_expect j '[]'
    js logs-node "$q" j add n1 >/dev/null || fail "Node addJobLog"
    js logs-node "$q" j add n2 >/dev/null || fail "Node addJobLog"
    [ "$(js logs-node "$q" j add n3 2)" = '{"count":2}' ] || fail "Node addJobLog keep"
    [ "$(lc logs "$q" j | tr '\n' ,)" = "n2,n3," ] || fail "lanes reads $(lc logs "$q" j)"
    js logs-node "$q" j clear 1 || fail "Node clearLogs"
    [ "$(lc logs "$q" j | tr '\n' ,)" = "n3," ] || fail "lanes reads $(lc logs "$q" j)"
    js logs-node "$q" j clear || fail "Node clearLogs"
    [ -z "$(lc logs "$q" j)" ] || fail "lines left after Node's clearLogs"
    echo "add-log / clear-logs read by BullMQ, addJobLog / clearLogs read by lanes"
}
