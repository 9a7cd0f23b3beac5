#!/bin/sh
# Run a command with the services the tests need: redis-server on a free
# loopback port (exported as LANES_TEST_REDIS_URL, with its port and the
# server binary for tests that restart it), stopped at the end whatever
# the command's outcome.
set -u
dir=$(mktemp -d "${TMPDIR:-/tmp}/lanes-services.XXXXXX")
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null \
       || shuf -i 20000-60000 -n 1)
redis_pid=""
cleanup() {
  if [ -n "$redis_pid" ]; then
    redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || kill "$redis_pid" 2>/dev/null
    wait "$redis_pid" 2>/dev/null
  fi
  rm -rf "$dir"
}
trap cleanup EXIT INT TERM

if command -v redis-server >/dev/null 2>&1; then
  redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no \
    --dir "$dir" --daemonize no --loglevel warning >"$dir/redis.log" 2>&1 &
  redis_pid=$!
  i=0
  until redis-cli -p "$port" ping >/dev/null 2>&1; do
    i=$((i + 1))
    if [ $i -gt 100 ]; then echo "redis-server did not start:" >&2; cat "$dir/redis.log" >&2; exit 1; fi
    sleep 0.05
  done
  export LANES_TEST_REDIS_URL="redis://127.0.0.1:$port/0"
  export LANES_TEST_REDIS_PORT="$port"
fi
"$@"
