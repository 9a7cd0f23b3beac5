#!/bin/sh
# test_jobs_longid_cli.sh LANES - `lanes jobs` with job ids longer than 127
# bytes on a SQLite store: add --id of a 5000-byte id prints it whole, get,
# list, logs, retry, wait and remove take it, a worker runs it under the
# whole id (LANES_JOB_ID), a flow of 300-byte ids is added, run and read
# whole, a long id is canceled, and a custom id past 65535 bytes is
# refused with exit 2 and a message. (Redis: tests/interop/test_redis_interop.sh longid.)
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=cli_common.sh source-path=SCRIPTDIR
. "$here/cli_common.sh"
lid=L-$(printf '%04998d' 0 | tr 0 x) # 5000 bytes
got=$(j add q bad '{"a":1}' --id "$lid" 2>"$tmp/err") ||
    fail "add --id: $(cat "$tmp/err")"
[ "$got" = "$lid" ] || fail "add --id printed $got"
j get q "$lid" --json >"$tmp/get.json" 2>"$tmp/err" || fail "get: $(cat "$tmp/err")"
grep -q "\"id\": *\"$lid\"" "$tmp/get.json" || fail "get: $(cat "$tmp/get.json")"
"$cli" worker "$url" q --exit-when-empty --exec sh -c \
    'echo "$LANES_JOB_ID" >>"$0"; [ "$LANES_JOB_NAME" != bad ] || [ -e "$0.ok" ]' "$tmp/ran" \
    >/dev/null 2>&1
[ "$(cat "$tmp/ran")" = "$lid" ] || fail "the worker ran $(cat "$tmp/ran")"
j get q "$lid" | grep -q failed || fail "get: not failed"
j list q failed | grep -q "^$lid " || fail "list failed"
j logs q "$lid" >/dev/null || fail "logs"
j retry q "$lid" >/dev/null || fail "retry"
touch "$tmp/ran.ok"
"$cli" worker "$url" q --exit-when-empty --exec sh -c 'echo "$LANES_JOB_ID" >>"$0"' "$tmp/ran" \
    >/dev/null 2>&1 || fail "second worker"
j wait q "$lid" --timeout 5 >/dev/null || fail "wait"
j remove q "$lid" >/dev/null || fail "remove"
expect_rc 4 j get q "$lid" # removed
# A flow of long ids: printed whole, the parent reads its child by its
# whole key, the child names its whole parent; a long id is canceled.
pid=P-$(printf '%0298d' 0 | tr 0 p) kid=K-$(printf '%0298d' 0 | tr 0 k) # 300 bytes
printf '{"name":"p","queueName":"f","opts":{"jobId":"%s"},"children":[{"name":"k","opts":{"jobId":"%s"}}]}' \
    "$pid" "$kid" >"$tmp/flow.json"
j flow "$tmp/flow.json" >"$tmp/flow.out" 2>"$tmp/err" || fail "flow: $(cat "$tmp/err")"
[ "$(cat "$tmp/flow.out")" = "$(printf 'f %s\nf %s' "$pid" "$kid")" ] ||
    fail "flow printed $(cat "$tmp/flow.out")"
"$cli" worker "$url" f --exit-when-empty --exec sh -c 'echo "\"r-$LANES_JOB_NAME\""' \
    >/dev/null 2>&1 || fail "flow worker"
j get f "$pid" >"$tmp/p.txt" 2>&1 || fail "get parent: $(cat "$tmp/p.txt")"
grep -q "completed" "$tmp/p.txt" || fail "parent: $(cat "$tmp/p.txt")"
grep -q "^child  *f:$kid processed" "$tmp/p.txt" || fail "parent's child: $(cat "$tmp/p.txt")"
j get f "$kid" | grep -q "^parent  *f:$pid\$" || fail "child's parent"
j add c n '{}' --id "$lid" >/dev/null || fail "add to cancel"
j cancel c "$lid" 2>"$tmp/err" || fail "cancel: $(cat "$tmp/err")"
j get c "$lid" | grep -q failed || fail "canceled job not failed"
over=L-$(printf '%065534d' 0 | tr 0 o) # 65536 bytes: one past the bound
rc=0
j add q n '{}' --id "$over" >/dev/null 2>"$tmp/err" || rc=$?
[ $rc -eq 2 ] || fail "add of a 65536-byte id exited $rc"
grep -q 'longer than 65535 bytes' "$tmp/err" || fail "message: $(head -c 300 "$tmp/err")"
echo "lanes jobs add/get/list/logs/retry/wait/remove/flow/cancel and lanes worker with long ids"
