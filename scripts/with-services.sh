#!/bin/sh
# Run a command with the services the tests need: redis-server on a free
# loopback port (exported as LANES_TEST_REDIS_URL, with its port and the
# server binary for tests that restart it), and a local Redis Cluster of 3
# masters and 3 replicas (LANES_TEST_REDIS_CLUSTER_URL, one master's URL;
# LANES_TEST_REDIS_CLUSTER_PORTS, all six ports; a node's files in
# $LANES_TEST_REDIS_CLUSTER_DIR/cluster-PORT), all stopped at the end
# whatever the command's outcome.
#
# A service that cannot start fails the run before the command, naming the
# service and why, unless LANES_ALLOW_SKIP (commas or spaces) names its skip
# reason: "redis" for the server, "redis-cluster" for the cluster (a
# redis-server without cluster support). Allowed, it is left out and its
# tests skip, each saying so (docs/build.md, "Skipped tests").
set -u
# Python's -O drops assert statements; no test may run without its checks.
unset PYTHONOPTIMIZE
allowed() { # REASON: 0 when LANES_ALLOW_SKIP names it
  case ",$(echo "${LANES_ALLOW_SKIP:-}" | tr ' ' ',')," in *",$1,"*) return 0 ;; esac
  return 1
}
# A service that did not start: fail (exit 1) unless its reason is allowed.
missing() { # REASON WHAT
  if allowed "$1"; then
    echo "with-services.sh: $2; its tests will skip (LANES_ALLOW_SKIP names $1)" >&2
    return 0
  fi
  echo "with-services.sh: $2. Install it (scripts/install-deps.sh) or set" \
       "LANES_ALLOW_SKIP=$1 to run without it (its tests then skip)" >&2
  exit 1
}
dir=$(mktemp -d "${TMPDIR:-/tmp}/lanes-services.XXXXXX")
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null \
    || shuf -i 20000-60000 -n 1
}
port=$(free_port)
redis_pid=""
cluster_ports=""
cluster_pids=""
cleanup() {
  if [ -n "$redis_pid" ]; then
    redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || kill "$redis_pid" 2>/dev/null
    wait "$redis_pid" 2>/dev/null
  fi
  for p in $cluster_ports; do redis-cli -p "$p" shutdown nosave >/dev/null 2>&1; done
  for p in $cluster_pids; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  [ -n "${LANES_KEEP_SERVICES_DIR:-}" ] || rm -rf "$dir"
}
trap cleanup EXIT INT TERM

if ! command -v redis-server >/dev/null 2>&1 || ! command -v redis-cli >/dev/null 2>&1; then
  # (the cluster needs them too: LANES_ALLOW_SKIP=redis,redis-cluster)
  missing redis "redis-server or redis-cli not found (no Redis Cluster either: allow both, redis,redis-cluster)"
else
  redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no \
    --dir "$dir" --daemonize no --loglevel warning >"$dir/redis.log" 2>&1 &
  redis_pid=$!
  i=0
  until redis-cli -p "$port" ping >/dev/null 2>&1; do
    i=$((i + 1))
    if [ $i -gt 100 ]; then
      echo "with-services.sh: redis-server did not start:" >&2
      cat "$dir/redis.log" >&2
      exit 1
    fi
    sleep 0.05
  done
  export LANES_TEST_REDIS_URL="redis://127.0.0.1:$port/0"
  export LANES_TEST_REDIS_PORT="$port"
fi

# The cluster: six nodes in $dir/cluster-PORT, joined by redis-cli. A node
# also listens on PORT+10000 (the cluster bus), so both must be free.
cluster_port() {
  python3 -c '
import random, socket, sys
taken = set(int(a) for a in sys.argv[1:])
for _ in range(200):
    p = random.randint(20000, 55000)
    if p in taken or p + 10000 in taken: continue
    try:
        for q in (p, p + 10000):
            s = socket.socket(); s.bind(("127.0.0.1", q)); s.close()
    except OSError:
        continue
    print(p); sys.exit(0)
sys.exit(1)' $cluster_ports $port
}
start_cluster() {
  command -v redis-server >/dev/null 2>&1 || return 1
  command -v redis-cli >/dev/null 2>&1 || return 1
  for i in 1 2 3 4 5 6; do
    p=$(cluster_port) || return 1
    d="$dir/cluster-$p"
    mkdir -p "$d"
    redis-server --cluster-enabled yes --cluster-config-file "$d/nodes.conf" \
      --cluster-node-timeout 2000 --port "$p" --bind 127.0.0.1 --save "" \
      --appendonly no --dir "$d" --daemonize no --loglevel warning >"$d/redis.log" 2>&1 &
    cluster_pids="$cluster_pids $!"
    cluster_ports="$cluster_ports $p"
  done
  for p in $cluster_ports; do
    i=0
    until redis-cli -p "$p" ping >/dev/null 2>&1; do
      i=$((i + 1))
      [ $i -gt 100 ] && { echo "cluster node $p did not start" >&2; return 1; }
      sleep 0.05
    done
  done
  set -- $cluster_ports
  redis-cli --cluster create "127.0.0.1:$1" "127.0.0.1:$2" "127.0.0.1:$3" \
    "127.0.0.1:$4" "127.0.0.1:$5" "127.0.0.1:$6" --cluster-replicas 1 --cluster-yes \
    >"$dir/cluster-create.log" 2>&1 || { echo "redis-cli --cluster create failed" >&2; return 1; }
  for p in $cluster_ports; do
    i=0
    until redis-cli -p "$p" cluster info 2>/dev/null | grep -q 'cluster_state:ok'; do
      i=$((i + 1))
      [ $i -gt 300 ] && { echo "cluster node $p: state not ok" >&2; return 1; }
      sleep 0.1
    done
  done
  # Nodes report ok before they all know who replicates whom; wait until
  # every node sees 3 masters and 3 replicas, and every replica is in sync
  # (the tests fail over and read CLUSTER NODES).
  for p in $cluster_ports; do
    i=0
    until [ "$(redis-cli -p "$p" cluster nodes 2>/dev/null |
               awk '$8 == "connected" && $3 ~ /slave/' | wc -l)" -eq 3 ] &&
          [ "$(redis-cli -p "$p" cluster nodes 2>/dev/null |
               awk '$8 == "connected" && $3 ~ /master/' | wc -l)" -eq 3 ] &&
          { redis-cli -p "$p" info replication | grep -q role:master ||
            redis-cli -p "$p" info replication | grep -q 'master_link_status:up'; }; do
      i=$((i + 1))
      [ $i -gt 300 ] && { echo "cluster node $p does not see all nodes" >&2; return 1; }
      sleep 0.1
    done
  done
  return 0
}
if start_cluster; then
  export LANES_TEST_REDIS_CLUSTER_URL="redis://127.0.0.1:$(echo $cluster_ports | cut -d' ' -f1)/0"
  export LANES_TEST_REDIS_CLUSTER_PORTS="$(echo $cluster_ports)"
  export LANES_TEST_REDIS_CLUSTER_DIR="$dir" # node P's files: cluster-P/
else
  [ -f "$dir/cluster-create.log" ] && cat "$dir/cluster-create.log" >&2
  for p in $cluster_ports; do redis-cli -p "$p" shutdown nosave >/dev/null 2>&1; done
  cluster_ports=""
  missing redis-cluster "no local Redis Cluster (redis-server without cluster support?)"
fi
"$@"
