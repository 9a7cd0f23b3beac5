#!/bin/sh
# bench.sh BUILD_DIR [lanes bench options] - `make bench`: the full run of
# every seed experiment, lanes beside the original Node.js library, written
# to results/ (JSON, SVG and README.md), the published figures of the
# project. Takes several minutes; run it on a quiet machine.
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
# The peers' pinned npm packages (npm ci: exactly each lockfile): Piscina and
# promise-pool in bench/peers, BullMQ in tests/interop. Without npm or the
# network, lanes runs alone and the results say so.
for dir in bench/peers tests/interop; do
  if [ ! -d "$dir/node_modules" ] && command -v npm >/dev/null 2>&1; then
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error) ||
      echo "bench.sh: npm ci failed in $dir; its peer will be missing" >&2
  fi
done
exec "$lanes" bench --out results "$@"
