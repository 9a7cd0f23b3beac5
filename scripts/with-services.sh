#!/bin/sh
# Run a command with the services the tests need: redis-server on a free
# loopback port (exported as LANES_TEST_REDIS_URL, with its port and the
# server binary for tests that restart it), and a local Redis Cluster of 3
# masters and 3 replicas (LANES_TEST_REDIS_CLUSTER_URL, one master's URL;
# LANES_TEST_REDIS_CLUSTER_PORTS, all six ports; a node's files in
# $LANES_TEST_REDIS_CLUSTER_DIR/cluster-PORT), and a throwaway PostgreSQL
# server (LANES_TEST_PG_URL, a postgresql:// URI of an empty database;
# LANES_TEST_PG_PORT; its data directory LANES_TEST_PG_DATA; and
# LANES_TEST_PG_CTL, a command that runs pg_ctl on it as its owner, e.g.
# "$LANES_TEST_PG_CTL restart -m immediate"), all stopped at the end
# whatever the command's outcome.
#
# A service that cannot start fails the run before the command, naming the
# service and why, unless LANES_ALLOW_SKIP (commas or spaces) names its skip
# reason: "redis" for the server, "redis-cluster" for the cluster (a
# redis-server without cluster support), "postgres" for PostgreSQL. Allowed,
# it is left out and its tests skip, each saying so (docs/build.md, "Skipped
# tests").
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
# PostgreSQL: initdb into $dir/pg/data, the server on a free loopback port
# (trust for 127.0.0.1 and for its unix socket, which is in $dir/pg; fsync
# and everything else at the server's defaults), one database "lanes_test"
# owned by the superuser "lanes". initdb and the server refuse to run as
# root: as root they run as the user "postgres" (Debian's postgresql package
# creates it), or "nobody" without it, through runuser.
pg_bin=""
pg_data=""
pg_as=""
pg_run() { # PROGRAM ARGS...: run it as the server's owner
  if [ -n "$pg_as" ]; then runuser -u "$pg_as" -- "$@"; else "$@"; fi
}
pg_find() { # sets pg_bin: a directory with initdb, pg_ctl, pg_isready, createdb
  first=$(command -v initdb 2>/dev/null) && first=$(dirname "$(readlink -f "$first")")
  for d in $first $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    if [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ] && [ -x "$d/pg_isready" ] && [ -x "$d/createdb" ]; then
      pg_bin=$d
      return 0
    fi
  done
  return 1
}
pg_job=""
pg_stop() { # stop the server if it runs (fast: nothing of it is kept)
  if [ -n "$pg_job" ]; then # a start under way ends within its bounds
    wait "$pg_job" 2>/dev/null
    pg_job=""
  fi
  [ -n "$pg_data" ] && [ -f "$pg_data/postmaster.pid" ] || return 0
  pg_run "$pg_bin/pg_ctl" -D "$pg_data" -m immediate -w -t 20 -s stop >/dev/null 2>&1
  if [ -f "$pg_data/postmaster.pid" ]; then
    kill -9 "$(head -n 1 "$pg_data/postmaster.pid")" 2>/dev/null
  fi
  pg_data=""
}
pg_fail() { # WHY [LOG]: say why PostgreSQL did not start (and its log); 1
  echo "with-services.sh: PostgreSQL: $1" >&2
  [ -n "${2:-}" ] && [ -f "$2" ] && cat "$2" >&2
  return 1
}
pg_prepare() { # find the programs, make $dir/pg for the owner; 1 with why
  pg_find || { pg_fail "initdb, pg_ctl, pg_isready or createdb not found (PATH, /usr/lib/postgresql/*/bin)"; return 1; }
  pgdir="$dir/pg"
  mkdir -m 700 "$pgdir" || return 1
  if [ "$(id -u)" = 0 ]; then
    command -v runuser >/dev/null 2>&1 || { pg_fail "runuser not found (initdb refuses root)"; return 1; }
    pg_as=postgres
    id "$pg_as" >/dev/null 2>&1 || pg_as=nobody
    { chmod 711 "$dir" && chown "$pg_as" "$pgdir" && pg_run test -w "$pgdir"; } ||
      { pg_fail "user $pg_as cannot write $pgdir (a private parent in TMPDIR?)"; return 1; }
  fi
  pg_data="$pgdir/data"
}
pg_start() { # (in the background) 0 when the server answers; else 1 with why
  pg_run "$pg_bin/initdb" -D "$pg_data" -U lanes -A trust -E UTF8 --locale=C --no-sync \
    >"$pgdir/initdb.log" 2>&1 || { pg_fail "initdb failed:" "$pgdir/initdb.log"; return 1; }
  printf '%s\n' "local all all trust" "host all all 127.0.0.1/32 trust" |
    pg_run tee "$pg_data/pg_hba.conf" >/dev/null
  printf '%s\n' "listen_addresses = '127.0.0.1'" "port = $pg_port" \
    "unix_socket_directories = '$pgdir'" | pg_run tee -a "$pg_data/postgresql.conf" >/dev/null
  printf '#!/bin/sh\n# pg_ctl on the server of scripts/with-services.sh, as its owner\n%s\n' \
    "exec ${pg_as:+runuser -u $pg_as -- }'$pg_bin/pg_ctl' -D '$pg_data' -l '$pgdir/server.log' \"\$@\"" \
    >"$pgdir/pg_ctl" && chmod 755 "$pgdir/pg_ctl"
  "$pgdir/pg_ctl" -W -s start >/dev/null 2>&1 || { pg_fail "pg_ctl start failed:" "$pgdir/server.log"; return 1; }
  deadline=$(($(date +%s) + 15))
  until "$pg_bin/pg_isready" -q -h 127.0.0.1 -p "$pg_port" -t 2; do
    [ "$(date +%s)" -lt $deadline ] || { pg_fail "no answer within 15 s:" "$pgdir/server.log"; return 1; }
    sleep 0.05
  done
  "$pg_bin/createdb" -h 127.0.0.1 -p "$pg_port" -U lanes lanes_test >&2 ||
    { pg_fail "createdb failed" "$pgdir/server.log"; return 1; }
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
  pg_stop
  [ -n "${LANES_KEEP_SERVICES_DIR:-}" ] || rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

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

# PostgreSQL starts in the background while the cluster forms (initdb takes
# a second or two); its port is kept out of the cluster's.
pg_port=$(free_port)
if pg_prepare; then
  pg_start 2>"$dir/pg-start.err" &
  pg_job=$!
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
sys.exit(1)' $cluster_ports $port $pg_port
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
if [ -n "$pg_job" ] && wait "$pg_job"; then
  pg_job=""
  export LANES_TEST_PG_URL="postgresql://lanes@127.0.0.1:$pg_port/lanes_test"
  export LANES_TEST_PG_PORT="$pg_port"
  export LANES_TEST_PG_DATA="$pg_data"
  export LANES_TEST_PG_CTL="$dir/pg/pg_ctl"
else
  pg_job=""
  [ -f "$dir/pg-start.err" ] && cat "$dir/pg-start.err" >&2
  pg_stop
  missing postgres "no PostgreSQL server (see above why)"
fi
"$@"
