#!/bin/sh
# test_audit_children.sh LANES - audit: Node parents with children a C
# worker runs: step jobs (moveToWaitingChildren), removeDependencyOnFailure,
# a child added later with opts.parent, a retried failParentOnFailure child
# (tests/interop/audit_children.mjs says what is checked).
# Exit 77 (skipped) without LANES_TEST_REDIS_URL, node or the npm packages.
set -u
cli=$1
here=$(cd "$(dirname "$0")" && pwd)
. "$here/audit_common.sh"
audit_run audit_children.mjs "$q" "$tmp/runs.log"
