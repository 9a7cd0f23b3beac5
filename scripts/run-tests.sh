#!/bin/sh
# run-tests.sh [CTEST ARGS...] - ctest with ARGS, then scripts/test-skips.py
# on its results: the run fails when a test failed, or when a test or a
# case skipped for a reason LANES_ALLOW_SKIP does not name (docs/build.md,
# "Skipped tests"). `make test` runs it under scripts/with-services.sh.
set -u
here=$(cd "$(dirname "$0")" && pwd)
# Python's -O drops assert statements; no test may run without its checks.
unset PYTHONOPTIMIZE
junit=$(mktemp "${TMPDIR:-/tmp}/lanes-ctest.XXXXXX")
trap 'rm -f "$junit"' EXIT
trap 'exit 1' INT TERM
# The whole output of a passed test (CTest keeps 1 KiB by default), so the
# skip lines of its skipped cases reach the JUnit file.
ctest --output-junit "$junit" --test-output-size-passed 4194304 \
  --test-output-size-failed 4194304 "$@"
rc=$?
python3 "$here/test-skips.py" "$junit"
skips=$?
[ $rc -eq 0 ] || { echo "run-tests.sh: ctest failed (exit $rc)" >&2; exit $rc; }
exit $skips
