#!/bin/sh
# test_audit_longid.sh LANES - audit: long ids (300-500 bytes) as a job
# scheduler's id, flow job ids and a deduplication id, run by C workers and
# read by Node (tests/interop/audit_longid.mjs says what is checked).
# Exit 77 (skipped) without LANES_TEST_REDIS_URL, node or the npm packages.
set -u
cli=$1
here=$(cd "$(dirname "$0")" && pwd)
. "$here/audit_common.sh"
audit_run audit_longid.mjs "$q" "$tmp/runs.log"
