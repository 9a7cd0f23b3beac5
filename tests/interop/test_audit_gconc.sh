#!/bin/sh
# test_audit_gconc.sh LANES - audit: Node changes the global concurrency
# (1, 3, removed) while Node and C workers run (tests/interop/audit_gconc.mjs
# says what is checked).
# Exit 77 (skipped) without LANES_TEST_REDIS_URL, node or the npm packages.
set -u
cli=$1
here=$(cd "$(dirname "$0")" && pwd)
. "$here/audit_common.sh"
audit_run audit_gconc.mjs "$q" "$tmp/runs.log"
