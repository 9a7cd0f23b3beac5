#!/bin/sh
# test_audit_cstall.sh LANES - audit: lanes' stalled check on jobs a killed
# Node Worker held (flow children with failParentOnFailure,
# ignoreDependencyOnFailure or neither, a scheduler iteration): the
# children fail as stalled and their parents follow their options; the
# iteration, repeatable, is requeued (as BullMQ 6.7's check does), run,
# and the schedule goes on (tests/interop/audit_cstall.mjs says what is
# checked).
# Exit 77 (skipped) without LANES_TEST_REDIS_URL, node or the npm packages.
set -u
cli=$1
here=$(cd "$(dirname "$0")" && pwd)
. "$here/audit_common.sh"
audit_run audit_cstall.mjs "$q" "$tmp/runs.log"
