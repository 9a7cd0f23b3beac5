#!/bin/sh
# test_audit_board.sh LANES - audit: a Node dashboard's view (getJobCounts
# incl. waiting-children, getJobs, getMetrics, getWorkers, QueueEvents)
# while C and Node workers run a flow, a scheduler and a failing job
# (tests/interop/audit_board.mjs says what is checked).
# Exit 77 (skipped) without LANES_TEST_REDIS_URL, node or the npm packages.
set -u
cli=$1
here=$(cd "$(dirname "$0")" && pwd)
. "$here/audit_common.sh"
audit_run audit_board.mjs "$q" "$tmp/runs.log"
