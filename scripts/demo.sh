#!/bin/sh
# demo.sh BUILD_DIR - `make demo`: rerun every experiment
# (docs/experiments.md) quickly with lanes and, where Node.js is present, the
# original library beside it, and print the summary table. The quick results
# go to BUILD_DIR/demo-results (the committed full run in results/ is left
# alone).
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
lanes=$build/cli/lanes
[ -x "$lanes" ] || lanes=$build/lanes
if [ ! -x "$lanes" ]; then
  echo "demo.sh: no lanes binary in $build (run make first)" >&2
  exit 2
fi

scripts/npm-peers.sh demo.sh

# The core's cost per task against a raw SPSC handoff (the pool's target:
# the group path with one thread within 5x of it; docs/experiments.md#e1).
if [ -x "$build/bench/bench_pool" ]; then
  "$build/bench/bench_pool" --quick
  echo
fi

echo "lanes bench --quick: every experiment at a reduced size (a check of the"
echo "pipeline, not of the claims; 'make bench' runs them at full size)"
echo
exec "$lanes" bench --quick --out "$build/demo-results"
