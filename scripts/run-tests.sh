#!/bin/sh
# run-tests.sh [CTEST ARGS...] - ctest with ARGS, then scripts/test-skips.py
# on its results: the run fails when a test failed, or when a test or a
# case skipped for a reason LANES_ALLOW_SKIP does not name (docs/build.md,
# "Skipped tests"). `make test` runs it under scripts/with-services.sh.
set -u
here=$(cd "$(dirname "$0")" && pwd)
# Python's -O drops assert statements; no test may run without its checks.
unset PYTHONOPTIMIZE
# --output-junit, which the skip check reads, came with CTest 3.21.
v=$(ctest --version | sed -n 's/^ctest version \([0-9]*\)\.\([0-9]*\).*/\1 \2/p')
set -- $v "$@"
if [ $# -lt 2 ] || [ "$1" -lt 3 ] || { [ "$1" -eq 3 ] && [ "$2" -lt 21 ]; }; then
  echo "run-tests.sh: needs CTest 3.21 or newer (for --output-junit); this is $(ctest --version | head -n 1)" >&2
  exit 1
fi
shift 2
junit=$(mktemp "${TMPDIR:-/tmp}/lanes-ctest.XXXXXX")
log=$(mktemp "${TMPDIR:-/tmp}/lanes-ctest-log.XXXXXX")
status=$(mktemp "${TMPDIR:-/tmp}/lanes-ctest-rc.XXXXXX")
trap 'rm -f "$junit" "$log" "$status"' EXIT
trap 'exit 1' INT TERM
# The whole output of a passed test (CTest keeps 1 KiB by default), so the
# skip lines of its skipped cases reach the JUnit file. The output is also
# kept in $log, for CTest's summary line at the end.
{
  ctest --output-junit "$junit" --test-output-size-passed 4194304 \
    --test-output-size-failed 4194304 "$@"
  echo $? >"$status"
} | tee "$log"
rc=$(cat "$status")
python3 "$here/test-skips.py" "$junit"
skips=$?
[ "$rc" -eq 0 ] || echo "run-tests.sh: ctest failed (exit $rc)" >&2
[ $skips -eq 0 ] || echo "run-tests.sh: tests skipped that LANES_ALLOW_SKIP does not name" >&2
# The run ends with CTest's own summary line, as a reader of its output
# (CI) expects; the exit code says what the skips decided too.
grep -E '^[0-9]+% tests passed' "$log" | tail -n 1
[ "$rc" -eq 0 ] || exit "$rc"
exit $skips
