#!/bin/sh
# test_audit_stall.sh LANES - audit: BullMQ's stalled checker on queues where
# C workers run a Node scheduler's iterations and flow jobs: nothing live is
# marked stalled; after kill -9 of a C worker Node recovers exactly its jobs
# and the flow and the schedule go on (tests/interop/audit_stall.mjs).
# Exit 77 (skipped) without LANES_TEST_REDIS_URL, node or the npm packages.
set -u
cli=$1
here=$(cd "$(dirname "$0")" && pwd)
. "$here/audit_common.sh"
audit_run audit_stall.mjs "$q" "$tmp/runs.log"
