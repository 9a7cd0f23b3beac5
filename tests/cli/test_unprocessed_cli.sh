#!/bin/sh
# test_unprocessed_cli.sh LANES - `lanes jobs URL remove QUEUE ID
# --unprocessed-children`: the job stays, its pending children go with
# their own pending children, a processed one stays (and its record in the
# job), one a worker runs stays; the count on stdout or as --json; bad
# command lines exit 2, no such job 4, past 1000 entries 2 with nothing
# removed. On sqlite always, and on Redis when LANES_TEST_REDIS_URL is set
# (scripts/with-services.sh).
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=cli_common.sh source-path=SCRIPTDIR
. "$here/cli_common.sh"
state() { j get "$1" "$2" --json | sed 's/.*"state":"\([^"]*\)".*/\1/'; }

run_store() { # URL NAME
    url=$1
    store=$2
    q=u$$q
    k=u$$k
    d=u$$d
    h=u$$h
    j add "$q" parent --id p --create >/dev/null || fail "add p"
    j add "$k" kid --id a --parent "$q:p" >/dev/null || fail "add a"
    j add "$k" kid --id c --parent "$k:a" >/dev/null || fail "add c, a's child"
    j add "$d" kid --id b --parent "$q:p" >/dev/null || fail "add b"
    j add "$h" kid --id h --parent "$q:p" >/dev/null || fail "add h"
    "$cli" worker "$url" "$d" --exit-when-empty --exec cat >/dev/null 2>&1 || fail "worker $d"
    [ "$(state "$d" b)" = completed ] || fail "b did not complete"
    # shellcheck disable=SC2016 # $0 is the program's, not ours
    "$cli" worker "$url" "$h" --exit-when-empty --exec /bin/sh -c \
        'cat >/dev/null; touch "$0/held"; while [ ! -e "$0/go" ]; do sleep 0.05; done; echo 1' \
        "$tmp" >/dev/null 2>"$tmp/w.err" &
    bg_pid=$!
    i=0
    until [ -e "$tmp/held" ]; do
        i=$((i + 1))
        [ $i -le 200 ] || fail "the worker never ran h: $(cat "$tmp/w.err")"
        sleep 0.05
    done
    expect_rc 2 j remove "$q" p --unprocessed-children --children
    grep -q "exclude each other" "$tmp/err" || fail "both options: $(cat "$tmp/err")"
    expect_rc 2 j remove "$q" p extra --unprocessed-children
    expect_rc 2 j retry "$q" p --unprocessed-children
    [ "$(state "$k" a)" = waiting ] || fail "a refused call removed a"
    n=$(j remove "$q" p --unprocessed-children) || fail "remove --unprocessed-children"
    [ "$n" = 2 ] || fail "removed $n jobs, not 2 (a and c)"
    expect_rc 4 j get "$k" a # gone
    expect_rc 4 j get "$k" c
    [ "$(state "$q" p)" = waiting ] || fail "p is not waiting"
    [ "$(state "$h" h)" = active ] || fail "the running h went"
    j get "$q" p >"$tmp/p" || fail "get p"
    grep -q "child .*$d:b processed" "$tmp/p" || fail "b's record went: $(cat "$tmp/p")"
    grep -q "child .*$h:h pending" "$tmp/p" || fail "h is no longer p's child: $(cat "$tmp/p")"
    touch "$tmp/go"
    wait "$bg_pid" || fail "worker $h: $(cat "$tmp/w.err")"
    bg_pid=""
    rm -f "$tmp/held" "$tmp/go"
    out=$(j remove "$q" p --unprocessed-children --json) || fail "remove --json"
    [ "$out" = '{"ok":true,"count":0}' ] || fail "--json printed $out"
    expect_rc 4 j remove "$q" nope --unprocessed-children --json
    grep -q '"code":"LN_ENOENT"' "$tmp/err" || fail "no such job under --json: $(cat "$tmp/err")"
    # 1001 entries: the root and its 1000 children (999 in a flow, one more)
    {
        printf '{"name":"big","queueName":"%s","opts":{"jobId":"big"},"children":[' "$q"
        i=1
        while [ $i -le 999 ]; do
            [ $i -eq 1 ] || printf ','
            printf '{"name":"leaf","queueName":"%s"}' "$k"
            i=$((i + 1))
        done
        printf ']}'
    } >"$tmp/big.json"
    j flow "$tmp/big.json" >/dev/null || fail "flow of 1000 jobs"
    j add "$k" leaf --id last --parent "$q:big" >/dev/null || fail "the 1000th child"
    expect_rc 2 j remove "$q" big --unprocessed-children # 1001 entries
    grep -q "more than 1000 entries" "$tmp/err" || fail "no reason given: $(cat "$tmp/err")"
    [ "$(state "$k" last)" = waiting ] || fail "a refused call removed a child"
    j remove "$k" last >/dev/null || fail "remove last"
    n=$(j remove "$q" big --unprocessed-children) || fail "remove 999 children"
    [ "$n" = 999 ] || fail "removed $n of 999"
    [ "$(state "$q" big)" = waiting ] || fail "big was not released from waiting-children"
}

each_store run_store lunp
echo "lanes jobs remove --unprocessed-children: pending children gone, the job and a running child kept"
