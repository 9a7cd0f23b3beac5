#!/bin/sh
# test_audit_flow.sh LANES - audit: Node FlowProducer trees (nested, children
# that fail with failParentOnFailure / ignoreDependencyOnFailure on C
# workers, a retried child, removeOnComplete/removeOnFail children) over
# two queues served by Node and C workers at once
# (tests/interop/audit_flow.mjs says what is checked).
# Exit 77 (skipped) without LANES_TEST_REDIS_URL, node or the npm packages.
set -u
cli=$1
here=$(cd "$(dirname "$0")" && pwd)
. "$here/audit_common.sh"
audit_run audit_flow.mjs "$q" "$tmp/runs.log"
