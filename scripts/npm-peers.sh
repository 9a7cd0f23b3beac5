#!/bin/sh
# npm-peers.sh NAME - install the Node.js peers' pinned npm packages when
# they are missing (npm ci: exactly each lockfile): Piscina and
# promise-pool in bench/peers, BullMQ in tests/interop. Used by demo.sh
# and bench.sh (NAME prefixes their messages). Without npm or the network
# lanes runs alone and the results say so: a failure here is not fatal.
cd "$(dirname "$0")/.."
for dir in bench/peers tests/interop; do
  if [ ! -d "$dir/node_modules" ] && command -v npm >/dev/null 2>&1; then
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error) ||
      echo "${1:-npm-peers.sh}: npm ci failed in $dir; its peer will be missing" >&2
  fi
done
exit 0
