#!/bin/sh
# test_audit_schedlife.sh LANES - audit: a Node job scheduler's lifecycle
# (limit, upsert of a running one, remove while a C worker holds an
# iteration, retried iterations) with Node and C workers at once
# (tests/interop/audit_schedlife.mjs says what is checked).
# Exit 77 (skipped) without LANES_TEST_REDIS_URL, node or the npm packages.
set -u
cli=$1
here=$(cd "$(dirname "$0")" && pwd)
. "$here/audit_common.sh"
audit_run audit_schedlife.mjs "$q" "$tmp/runs.log"
