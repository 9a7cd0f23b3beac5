# cli_common.sh - sourced by the shell tests of the `lanes` command
# (tests/cli/test_*_cli.sh, run as `sh SCRIPT LANES`) after `set -u`:
#
#   here=$(cd "$(dirname "$0")" && pwd)
#   . "$here/cli_common.sh"
#
# It sets cli (the lanes binary, the script's $1), tmp (a temporary
# directory of this run, removed at exit, when the background process in
# $bg_pid, if any, is killed too) and url (a SQLite store in $tmp), and
# gives:
#   fail MSG...          "FAIL: MSG" on stderr ("FAIL ($store): ..." when
#                        $store is set), exit 1
#   j ARGS...            "$cli" jobs "$url" ARGS...
#   expect_rc RC CMD...  runs CMD (stdin /dev/null, stdout to $tmp/out,
#                        stderr to $tmp/err); its exit status must be RC
#   each_store FN TAG    FN URL STORE for STORE sqlite (a fresh file) and,
#                        when LANES_TEST_REDIS_URL is set
#                        (scripts/with-services.sh), redis (key prefix
#                        TAG and this shell's pid)
cli=$1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/lanes-$(basename "$0" .sh).XXXXXX")
url="sqlite:$tmp/t.db"
bg_pid=""
cli_cleanup() {
    [ -z "$bg_pid" ] || kill "$bg_pid" 2>/dev/null
    rm -rf "$tmp"
}
trap cli_cleanup EXIT
fail() {
    echo "FAIL${store:+ ($store)}: $*" >&2
    exit 1
}
j() { "$cli" jobs "$url" "$@"; }
expect_rc() { # RC CMD...
    want=$1
    shift
    rc=0
    "$@" >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
    [ $rc -eq "$want" ] || fail "$* exited $rc, not $want: $(cat "$tmp/err")"
}
each_store() { # FN TAG
    "$1" "sqlite:$tmp/$2.db" sqlite
    [ -n "${LANES_TEST_REDIS_URL:-}" ] || {
        echo "skipped [redis]: LANES_TEST_REDIS_URL not set: $1 did not run on Redis"
        return 0
    }
    case $LANES_TEST_REDIS_URL in *\?*) sep='&' ;; *) sep='?' ;; esac
    "$1" "$LANES_TEST_REDIS_URL${sep}prefix=$2$$" redis
}
