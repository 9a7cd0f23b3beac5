#!/bin/sh
# test_sched_cli.sh LANES - `lanes jobs URL schedule | unschedule |
# schedules` on a sqlite: store (the Redis side is in test_redis_interop.sh's
# sched_* cases): output, --json, errors and exit codes, and a scheduler's
# iterations run by `lanes worker --exec`, each made when the one before
# was taken.
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=cli_common.sh source-path=SCRIPTDIR
. "$here/cli_common.sh"

id=$(j schedule q tick --every 50 --limit 3 tick '{"n":1}') || fail "schedule --every"
case $id in repeat:tick:[0-9]*) ;; *) fail "iteration id '$id'" ;; esac
j schedule q rep --cron '0 9 * * mon-fri' --tz Europe/Berlin report >/dev/null ||
    fail "schedule --cron"
j schedules q >"$tmp/list" || fail "schedules"
grep -q "^tick .* every:50 1 tick$" "$tmp/list" || fail "schedules: $(cat "$tmp/list")"
grep -q "^rep .*T0[78]:00:00.000Z cron:'0 9 \* \* mon-fri'@Europe/Berlin 1 report$" "$tmp/list" ||
    fail "schedules: $(cat "$tmp/list")"
j schedules q --json | grep -q '"id":"rep".*"pattern":"0 9 \* \* mon-fri"' ||
    fail "schedules --json"

# Errors: bad pattern and zone (2, JSON under --json), unknown option (2),
# no such scheduler (4); --help without a store.
expect_rc 2 j schedule q b --cron '0 25 * * *' n
grep -q 'hour field' "$tmp/err" || fail "bad pattern: $(cat "$tmp/err")"
expect_rc 2 j schedule q b --cron '* * * * *' --tz Nowhere/Else n --json
grep -q '"code":"LN_EINVAL"' "$tmp/err" || fail "bad zone under --json: $(cat "$tmp/err")"
expect_rc 2 j schedule q b --every 10 --colour red n
expect_rc 2 j schedule q b --every 10 --cron '* * * * *' n
expect_rc 4 j unschedule q nope
expect_rc 0 "$cli" jobs "sqlite:$tmp/none.db" schedule --help
grep -q '^usage: lanes jobs URL schedule QUEUE ID' "$tmp/out" || fail "schedule --help"
[ ! -e "$tmp/none.db" ] || fail "--help made a store"
expect_rc 2 "$cli" jobs "sqlite:$tmp/none.db" schedules q

# A worker runs the every scheduler's three iterations (limit 3), then
# finds the queue empty but for the cron one's, which it leaves delayed.
"$cli" worker "$url" q --max-jobs 3 --exec cat >/dev/null 2>"$tmp/w.err" ||
    fail "lanes worker: $(cat "$tmp/w.err")"
j list q completed >"$tmp/done" || fail "list"
[ "$(grep -c '^repeat:tick:' "$tmp/done")" = 3 ] || fail "completed: $(cat "$tmp/done")"
j schedules q | grep -q "^tick .* every:50 3 tick$" || fail "iterations after the run"
j unschedule q rep || fail "unschedule"
j counts q --json | grep -q '"delayed":0' || fail "the cron iteration stayed"
echo "lanes jobs schedule/unschedule/schedules on sqlite: ok"
