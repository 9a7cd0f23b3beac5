#!/bin/sh
# test_pg_migrate.sh CLI - the PostgreSQL store shares queues with stock
# BullMQ 6.7's PostgreSQL backend (tests/interop/node_modules, pinned by
# its package-lock.json), both ways: jobs the lanes CLI adds are run by a
# Node Worker (migrate: true, which applies BullMQ's own migrations on top
# of what lanes prepared when it came first), with their data; a job Node
# adds is run by `lanes worker --exec`. Exit 77 (skipped) without
# LANES_TEST_PG_URL, node or the npm packages.
set -u
cli=$1
interop=$(cd "$(dirname "$0")/../interop" && pwd)
[ -n "${LANES_TEST_PG_URL:-}" ] || { echo "skipped [postgres]: LANES_TEST_PG_URL not set"; exit 77; }
command -v node >/dev/null 2>&1 || { echo "skipped [node]: node not installed"; exit 77; }
[ -d "$interop/node_modules/pg" ] ||
    { echo "skipped [node]: run 'npm ci' in tests/interop (scripts/install-deps.sh does)"; exit 77; }
url=$LANES_TEST_PG_URL
q="pgi$$"
fail() { echo "FAIL: $*"; exit 1; }

"$cli" jobs "$url" add "$q" a '{"x": 1}' >/dev/null || fail "lanes add a"
"$cli" jobs "$url" add "$q" b '{"y":[1,2]}' >/dev/null || fail "lanes add b"
"$cli" jobs "$url" add "$q" c '"s"' >/dev/null || fail "lanes add c"
out=$(cd "$interop" && timeout 60 node pg_migrate.mjs "$q" 3) || fail "node: $out"
echo "$out"
echo "$out" | grep -q '^done {"id":"1","name":"a","data":{"x":1},' || fail "node did not run job 1 with its data"
echo "$out" | grep -q '^done {"id":"2","name":"b","data":{"y":\[1,2\]},' || fail "node did not run job 2"
echo "$out" | grep -q '^done {"id":"3","name":"c","data":"s",' || fail "node did not run job 3"
echo "$out" | grep -q '^added 4$' || fail "node's add did not take the queue's next number"
timeout 60 "$cli" worker "$url" "$q" --exit-when-empty --exec sh -c 'cat' || fail "lanes worker"
got=$("$cli" jobs "$url" get "$q" 4) || fail "lanes get 4"
echo "$got"
echo "$got" | grep -q '^state *completed' || fail "node's job 4 is not completed"
echo "$got" | grep -q '^result *{"n": 9}' || fail "job 4's result is not its data"
counts=$("$cli" jobs "$url" counts "$q")
echo "$counts" | grep -q '^completed *4' || fail "counts: $counts"
echo "ok"
