#!/bin/sh
# test_audit_dedup.sh LANES - audit: Node deduplication (simple and TTL
# mode, with retries, failures and removeOnComplete) on a queue a Node job
# scheduler feeds too, run by Node and C workers at once
# (tests/interop/audit_dedup.mjs says what is checked).
# Exit 77 (skipped) without LANES_TEST_REDIS_URL, node or the npm packages.
set -u
cli=$1
here=$(cd "$(dirname "$0")" && pwd)
. "$here/audit_common.sh"
audit_run audit_dedup.mjs "$q" "$tmp/runs.log"
