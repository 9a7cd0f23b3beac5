# audit_common.sh - sourced by tests/interop/test_audit_*.sh: skips (exit 77)
# without Redis, node or the npm packages, makes a temporary directory and a
# queue name of this run ($tmp, $q), drops the run's keys at exit, and
# audit_run SCRIPT ARGS... runs tests/interop/SCRIPT with the lanes CLI in
# AUDIT_LANES (its exit status is the test's: 0, 1, or 42 for a known bug).
[ -n "${LANES_TEST_REDIS_URL:-}" ] || { echo "skipped [redis]: LANES_TEST_REDIS_URL not set"; exit 77; }
command -v node >/dev/null 2>&1 || { echo "skipped [node]: node not installed"; exit 77; }
[ -d "$here/node_modules/bullmq" ] || { echo "skipped [node]: no npm packages in tests/interop"; exit 77; }
[ -x "$cli" ] || { echo "skipped [cli]: no lanes CLI"; exit 77; }
expect=${2:-}
url=$LANES_TEST_REDIS_URL
tmp=$(mktemp -d "${TMPDIR:-/tmp}/lanes-audit.XXXXXX")
q="au$$$(basename "$0" .sh | sed 's/test_audit_//')"
audit_cleanup() {
    redis-cli -u "$url" --scan --pattern "bull:$q*" 2>/dev/null |
        xargs -r -n 500 redis-cli -u "$url" del >/dev/null 2>&1
    rm -rf "$tmp"
}
trap audit_cleanup EXIT
trap 'exit 1' INT TERM
audit_run() {
    script=$1
    shift
    AUDIT_LANES=$cli timeout 60 node "$here/$script" "$@"
    rc=$?
    [ $rc -eq 124 ] && echo "audit: $script did not finish in 60 s" >&2
    if [ "$expect" = known-bug ]; then
        [ $rc -eq 42 ] && { echo "known bug reproduced (expected failure)"; exit 0; }
        [ $rc -eq 0 ] && { echo "audit: the known bug is fixed: move this case to LN_AUDIT_CASES" >&2; exit 1; }
    fi
    exit $rc
}
