#!/bin/sh
# test_audit_freeze.sh LANES - audit: a C worker frozen (SIGSTOP) past its
# lease holding a flow child and an iteration: Node's stalled check takes
# them back, and the resumed C worker must not finish them again
# (tests/interop/audit_freeze.mjs says what is checked).
# Exit 77 (skipped) without LANES_TEST_REDIS_URL, node or the npm packages.
set -u
cli=$1
here=$(cd "$(dirname "$0")" && pwd)
. "$here/audit_common.sh"
audit_run audit_freeze.mjs "$q" "$tmp/runs.log"
