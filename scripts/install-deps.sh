#!/bin/sh
# Install what building and testing lanes needs, if it is missing: Debian
# packages with apt-get (as root; otherwise print the command and stop), and
# the pinned npm packages of the Node.js peers from their lockfiles.
set -eu
cd "$(dirname "$0")/.."

PKGS="build-essential cmake pkg-config libsqlite3-dev sqlite3 libjansson-dev libicu-dev
libhiredis-dev libuv1-dev libssl-dev redis-server redis-tools wrk libtbb-dev
libmicrohttpd-dev node-llhttp nodejs npm libxml2-utils clang-format chromium
python3-prometheus-client clang libclang-rt-14-dev valgrind man-db systemd
postgresql libpq-dev"

missing=""
for p in $PKGS; do
  # nodejs/npm may come from elsewhere than Debian: a working binary is enough.
  case $p in
    nodejs) command -v node >/dev/null 2>&1 && continue ;;
    npm) command -v npm >/dev/null 2>&1 && continue ;;
  esac
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  case $status in
    *"install ok installed"*) ;;
    *) missing="$missing $p" ;;
  esac
done

if [ -n "$missing" ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "lanes needs these Debian packages:$missing" >&2
    echo "run: sudo apt-get update && sudo apt-get install -y$missing" >&2
    exit 1
  fi
  echo "installing:$missing"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  # shellcheck disable=SC2086
  apt-get install -y -q --no-install-recommends $missing
fi

# Pinned npm packages (npm ci: exactly the lockfile, registry only).
for dir in bench/peers tests/interop tests/dash; do
  if [ -f "$dir/package-lock.json" ]; then
    if [ ! -f "$dir/node_modules/.package-lock.json" ] || [ "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]; then
      (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
    fi
  fi
done
