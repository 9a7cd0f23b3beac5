#!/bin/sh
# test_edit_cli.sh LANES - `lanes jobs URL change-priority | change-delay |
# update-data | dedup | promote | priority-counts | trim-events | add-log |
# clear-logs | detach` on a
# sqlite: store (the Redis side is in test_redis_interop.sh's edit_*,
# promote_all_* and trim_events_* cases): output, --json, stdin data, errors
# and exit codes, --help without a store.
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=cli_common.sh source-path=SCRIPTDIR
. "$here/cli_common.sh"

for id in a b c; do j add q n '{}' --id "$id" >/dev/null || fail "add $id"; done
j add q n '{}' --id late --delay 600000 >/dev/null || fail "add late"

# change-priority: c to the front of priority 4 (prints nothing), a behind
# it; --json says ok; a bad priority is exit 2, no such job 4.
expect_rc 0 j change-priority q c 4 --lifo
[ ! -s "$tmp/out" ] || fail "change-priority printed $(cat "$tmp/out")"
expect_rc 0 j change-priority q a 4 --json
grep -qx '{"ok":true,"id":"a"}' "$tmp/out" || fail "change-priority --json: $(cat "$tmp/out")"
j list q prioritized | awk '{printf "%s ", $1}' >"$tmp/order"
[ "$(cat "$tmp/order")" = "c a " ] || fail "prioritized: $(cat "$tmp/order")"
expect_rc 2 j change-priority q a 2097152
expect_rc 2 j change-priority q a x1
expect_rc 4 j change-priority q nope 1
expect_rc 2 j change-priority q a 1 --colour red
expect_rc 2 j change-priority q a --json
grep -q '"error"' "$tmp/err" || fail "missing PRIORITY under --json: $(cat "$tmp/err")"

# change-delay: only a delayed job (exit 2 for a waiting one, 4 for none).
expect_rc 0 j change-delay q late 3600000
j get q late --json | grep -q '"state":"delayed"' || fail "late is not delayed"
expect_rc 2 j change-delay q b 10
grep -q 'not delayed' "$tmp/err" || fail "change-delay of a waiting job: $(cat "$tmp/err")"
expect_rc 4 j change-delay q nope 10
expect_rc 2 j change-delay q late -5

# update-data: the argument or stdin ('-', one trailing newline dropped),
# byte for byte; not JSON is exit 2 (a JSON error under --json).
expect_rc 0 j update-data q b ' [1, 2.50] '
printf '{"via":"stdin"}\n' | j update-data q late - || fail "update-data -"
j get q late --json | grep -q '"data":{"via":"stdin"}' || fail "stdin data: $(j get q late --json)"
expect_rc 2 j update-data q b '{bad' --json
grep -q '"code":"LN_EINVAL"' "$tmp/err" || fail "bad data under --json: $(cat "$tmp/err")"
expect_rc 4 j update-data q nope 1

# dedup: the holder's id, --remove (1 then 0), then none holds it (4).
held=$(j add q n '{}' --dedup k) || fail "add --dedup"
expect_rc 0 j dedup q k
[ "$(cat "$tmp/out")" = "$held" ] || fail "dedup k: $(cat "$tmp/out"), not $held"
expect_rc 0 j dedup q k --json
grep -qx "{\"dedup\":\"k\",\"id\":\"$held\"}" "$tmp/out" || fail "dedup --json: $(cat "$tmp/out")"
expect_rc 0 j dedup q k --remove
[ "$(cat "$tmp/out")" = 1 ] || fail "dedup --remove: $(cat "$tmp/out")"
expect_rc 0 j dedup q k --remove --json
grep -qx '{"removed":false}' "$tmp/out" || fail "dedup --remove --json: $(cat "$tmp/out")"
expect_rc 4 j dedup q k
expect_rc 2 j dedup q

# promote: one (exit 2 when not delayed), then --all prints how many;
# priority-counts per priority, --json an object.
j add p n '{}' --id one --delay 600000 >/dev/null || fail "add one"
j add p n '{}' --delay 600000 --priority 2 >/dev/null || fail "add delayed 2"
j add p n '{}' --delay 600000 >/dev/null || fail "add delayed"
expect_rc 0 j promote p one
expect_rc 2 j promote p one
expect_rc 4 j promote p nope
expect_rc 0 j promote p --all
[ "$(cat "$tmp/out")" = 2 ] || fail "promote --all printed $(cat "$tmp/out")"
expect_rc 0 j promote p --all --json
grep -qx '{"count":0}' "$tmp/out" || fail "promote --all --json: $(cat "$tmp/out")"
expect_rc 2 j promote p
expect_rc 0 j priority-counts p 0 2 9
[ "$(tr '\n' ' ' <"$tmp/out")" = "0 2 2 1 9 0 " ] || fail "priority-counts: $(cat "$tmp/out")"
expect_rc 0 j priority-counts p 2 --json
grep -qx '{"2":1}' "$tmp/out" || fail "priority-counts --json: $(cat "$tmp/out")"
expect_rc 2 j priority-counts p
expect_rc 2 j priority-counts p -1

# trim-events: the newest MAXLEN of the queue stay (a handle writing every
# event: an add writes more than one), it prints how many went.
for i in 1 2 3 4 5 6 7 8 9 10 11 12; do
    "$cli" jobs "$url?events=all" add t n "{\"i\":$i}" >/dev/null || fail "add t $i"
done
before=$(j events t | wc -l)
[ "$before" -ge 12 ] || fail "only $before events"
expect_rc 0 j trim-events t 5
[ "$(cat "$tmp/out")" = $((before - 5)) ] || fail "trim-events printed $(cat "$tmp/out")"
[ "$(j events t | wc -l)" -eq 5 ] || fail "events left: $(j events t)"
expect_rc 0 j trim-events t 5 --json
grep -qx '{"removed":0}' "$tmp/out" || fail "trim-events --json: $(cat "$tmp/out")"
expect_rc 2 j trim-events t -1
expect_rc 2 j trim-events t

# add-log / clear-logs: lines in any state, --keep leaves the newest,
# stdin with '-'; no such job is exit 4, a bad --keep 2.
j add l n '{}' --id lj >/dev/null || fail "add lj"
for w in one two three; do expect_rc 0 j add-log l lj "$w"; done
[ "$(cat "$tmp/out")" = 3 ] || fail "add-log count: $(cat "$tmp/out")"
printf 'four\n' | j add-log l lj - --keep 2 --json >"$tmp/out" || fail "add-log -"
grep -qx '{"count":2}' "$tmp/out" || fail "add-log --keep --json: $(cat "$tmp/out")"
[ "$(j logs l lj | tr '\n' ,)" = "three,four," ] || fail "logs: $(j logs l lj)"
expect_rc 0 j clear-logs l lj --keep 1
[ "$(j logs l lj)" = four ] || fail "after clear-logs --keep 1: $(j logs l lj)"
expect_rc 0 j clear-logs l lj --json
grep -qx '{"ok":true,"id":"lj"}' "$tmp/out" || fail "clear-logs --json: $(cat "$tmp/out")"
[ -z "$(j logs l lj)" ] || fail "lines left: $(j logs l lj)"
expect_rc 4 j add-log l nope x
expect_rc 4 j clear-logs l nope
expect_rc 2 j add-log l lj x --keep -3
expect_rc 2 j add-log l lj

# detach: a flow child leaves its parent (1), which is released when none
# is left; again is 0; no such job is exit 4.
echo '{"name":"p","queueName":"f","opts":{"jobId":"r"},"children":[{"name":"k","opts":{"jobId":"x"}}]}' |
    j flow - >/dev/null || fail "flow"
expect_rc 0 j detach f x
[ "$(cat "$tmp/out")" = 1 ] || fail "detach printed $(cat "$tmp/out")"
j get f r --json | grep -q '"state":"waiting"' || fail "r was not released"
expect_rc 0 j detach f x --json
grep -qx '{"removed":false}' "$tmp/out" || fail "detach again: $(cat "$tmp/out")"
expect_rc 4 j detach f nope

# --help of each, without making a store; a missing store is exit 2.
for sub in change-priority change-delay update-data dedup promote priority-counts trim-events \
    add-log clear-logs detach; do
    expect_rc 0 "$cli" jobs "sqlite:$tmp/none.db" "$sub" --help
    grep -q "^usage: lanes jobs URL $sub " "$tmp/out" || fail "$sub --help: $(cat "$tmp/out")"
done
[ ! -e "$tmp/none.db" ] || fail "--help made a store"
expect_rc 2 "$cli" jobs "sqlite:$tmp/none.db" dedup q k
echo "ok"
