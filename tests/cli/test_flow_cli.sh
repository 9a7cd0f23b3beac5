#!/bin/sh
# test_flow_cli.sh LANES - `lanes jobs URL flow FILE.json` on a sqlite:
# store: the tree lands (ids in pre-order, the root in waiting-children),
# `get` shows the relations, `lanes worker --exec` runs the children and
# then the root, whose program reads every child's result from
# $LANES_CHILDREN_FILE (removed afterwards); bad files exit 2 and add
# nothing.
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=cli_common.sh source-path=SCRIPTDIR
. "$here/cli_common.sh"
cat >"$tmp/f.json" <<'JSON'
{"name": "root", "queueName": "fq", "data": {"r": 1}, "children": [
  {"name": "mid", "queueName": "fc", "data": {"m": 1},
   "children": [{"name": "leaf", "data": [1, 2]}]},
  {"name": "kid", "queueName": "fc", "data": {"k": 2},
   "opts": {"jobId": "k2", "ignoreDependencyOnFailure": true}}]}
JSON
j flow "$tmp/f.json" >"$tmp/ids" || fail "flow"
[ "$(tr '\n' ' ' <"$tmp/ids")" = "fq 1 fc 2 fc 3 fc k2 " ] || fail "ids: $(cat "$tmp/ids")"
j counts fq | grep -qx 'waiting-children 1' || fail "counts: $(j counts fq)"
j list fc waiting-children | grep -q '^2 ' || fail "list waiting-children"
j get fq 1 | grep -qx 'child        fc:k2 pending' || fail "get: no pending child"
j get fc 3 | grep -qx 'parent       fc:2' || fail "get: no parent"
"$cli" worker "$url" fc --exit-when-empty --exec cat 2>/dev/null || fail "worker fc"
# shellcheck disable=SC2016
"$cli" worker "$url" fq --exit-when-empty --exec sh -c 'cat "$LANES_CHILDREN_FILE"; echo "$LANES_CHILDREN_FILE" >"$0"' \
    "$tmp/cf" 2>/dev/null || fail "worker fq"
j get fq 1 --json >"$tmp/root.json" || fail "get root"
grep -q '"state":"completed"' "$tmp/root.json" || fail "root not completed: $(cat "$tmp/root.json")"
grep -q '"result":{"values":{"fc:2":{"m":1},"fc:k2":{"k":2}},"failed":{},"unsuccessful":\[\],"pending":\[\]}' \
    "$tmp/root.json" || fail "root result: $(cat "$tmp/root.json")"
grep -q '"children":\[{"key":"fc:2","queue":"fc","id":"2","status":"processed"' "$tmp/root.json" ||
    fail "get --json children: $(cat "$tmp/root.json")"
cf=$(cat "$tmp/cf")
case $cf in */lanes-children-*) ;; *) fail "LANES_CHILDREN_FILE was '$cf'" ;; esac
[ ! -e "$cf" ] || fail "$cf left behind"
rc=0
echo '{"name": "x", "queueName": "fq", "bogus": 1}' | j flow - 2>/dev/null || rc=$?
[ $rc -eq 2 ] || fail "unknown key exited $rc"
rc=0
echo '{"name": "x", "children": []}' | j flow - 2>/dev/null || rc=$?
[ $rc -eq 2 ] || fail "no queueName exited $rc"
rc=0
echo '{"name": "x", "queueName": "fq", "opts": {"removeOnFail": {"age": 1e300}}}' |
  j flow - 2>"$tmp/err" || rc=$?
[ $rc -eq 2 ] || fail "an age past int64 ms exited $rc"
grep -q 'opts.removeOnFail: unknown, or a bad value' "$tmp/err" || fail "age 1e300: $(cat "$tmp/err")"
expect_rc 2 j flow "$tmp/f.json" # k2 exists now
[ "$(j counts fq | awk '{s += $2} END {print s}')" = 1 ] || fail "a refused flow added jobs"
echo "lanes jobs flow: tree added, relations shown, children's results in LANES_CHILDREN_FILE"
