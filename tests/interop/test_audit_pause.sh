#!/bin/sh
# test_audit_pause.sh LANES - audit: Node's queue.pause()/resume() and
# removeOnComplete/removeOnFail counts with a Node scheduler, Node and C
# workers at once (tests/interop/audit_pause.mjs says what is checked).
# Exit 77 (skipped) without LANES_TEST_REDIS_URL, node or the npm packages.
set -u
cli=$1
here=$(cd "$(dirname "$0")" && pwd)
. "$here/audit_common.sh"
audit_run audit_pause.mjs "$q" "$tmp/runs.log"
