#!/bin/sh
# bench.sh BUILD_DIR [lanes bench options] - `make bench`: the full run of
# every experiment (docs/experiments.md), lanes beside the original Node.js
# library, written to results/ (JSON, SVG and README.md), the published
# figures of the project. Takes several minutes; run it on a quiet machine.
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
[ $# -gt 0 ] && shift
lanes=$build/cli/lanes
[ -x "$lanes" ] || lanes=$build/lanes
if [ ! -x "$lanes" ]; then
  echo "bench.sh: no lanes binary in $build (run make first)" >&2
  exit 2
fi
scripts/npm-peers.sh bench.sh
exec "$lanes" bench --out results "$@"
