#!/bin/sh
# test_audit_sched.sh LANES - audit: Node job schedulers (every, cron) with
# a Node Worker and `lanes worker` on one queue at once, both limited to
# 4 jobs a second, global concurrency 1 set from Node
# (tests/interop/audit_sched.mjs says what is checked).
# Exit 77 (skipped) without LANES_TEST_REDIS_URL, node or the npm packages.
set -u
cli=$1
here=$(cd "$(dirname "$0")" && pwd)
. "$here/audit_common.sh"
audit_run audit_sched.mjs "$q" "$tmp/runs.log"
