#!/bin/sh
# redis-instructions.sh - what one no-op job costs redis-server, counted in
# instructions (valgrind's callgrind), for lanes' default C worker and for
# BullMQ 6.7's Node worker, concurrency 50 each, on one server, the two
# sides alternating. Instruction counts do not move with the machine's
# load as `INFO cpu` does, so this is the stable form of `lanes bench
# bullmq`'s worker comparison (docs/internals/redis-speed.md).
#
#   bench/tools/redis-instructions.sh [--build DIR] [--jobs N] [--repeats R]
#                                     [--out FILE]
#
#   --build DIR    the build tree holding bench/tools/redis_floor (build)
#   --jobs N       jobs per run (3000); under callgrind the server is about
#                  50 times slower, so a run of 3,000 takes 5-15 s
#   --repeats R    runs per side (3); the figures are their medians
#   --out FILE     also write the JSON line to FILE (the raw data of a
#                  published figure: results/redis-instructions.json), with
#                  "createdAt", "commit" (git, "+dirty" with local changes)
#                  and "loadAverage" added
#
# It starts its own redis-server under valgrind on a free 127.0.0.1 port
# (no persistence) and stops it at the end. Each run starts from an empty
# server: the side's own add puts the N jobs in (untimed: lanes'
# ln_jobs_add_bulk, BullMQ's addBulk), callgrind's counters are dumped
# just before and just after its worker runs them
# (redis_floor --callgrind, bench.mjs --around), and the second dump's
# total over N is the run's figure. Each side first runs a tenth of N (at
# most 1,000) untimed on a queue of its own, so its scripts are loaded
# (and Node's JIT is warm) before the counted part.
# Needs valgrind, redis-server, node and tests/interop's npm install.
# Prints a line per run, then one JSON line: {"jobs", "repeats",
# "lanesInstrPerJob", "bullmqInstrPerJob" (medians), "ratio" (BullMQ's
# over lanes': > 1, lanes costs the server less), "lanesRuns",
# "bullmqRuns"}. Exit 0, or 1 when a run failed, 2 for bad arguments.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=build jobs=3000 repeats=3 out=
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=${2:?}; shift 2 ;;
    --jobs) jobs=${2:?}; shift 2 ;;
    --repeats) repeats=${2:?}; shift 2 ;;
    --out) out=${2:?}; shift 2 ;;
    -h|--help) sed -n '2,34p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "redis-instructions.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
case "$jobs$repeats" in *[!0-9]*|'') echo "redis-instructions.sh: --jobs and --repeats take numbers" >&2; exit 2 ;; esac
[ "$jobs" -ge 1 ] && [ "$repeats" -ge 1 ] || { echo "redis-instructions.sh: --jobs and --repeats must be >= 1" >&2; exit 2; }
floor="$build/bench/tools/redis_floor"
[ -x "$floor" ] || floor="$root/$build/bench/tools/redis_floor"
for need in valgrind callgrind_control redis-server redis-cli node; do
  command -v "$need" >/dev/null 2>&1 || { echo "redis-instructions.sh: $need not found" >&2; exit 1; }
done
[ -x "$floor" ] || { echo "redis-instructions.sh: no redis_floor in $build (build the tree first)" >&2; exit 1; }
[ -d "$root/tests/interop/node_modules/bullmq" ] ||
  { echo "redis-instructions.sh: no BullMQ: run npm ci in tests/interop" >&2; exit 1; }

dir=$(mktemp -d "${TMPDIR:-/tmp}/lanes-instr.XXXXXX")
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null ||
  shuf -i 20000-60000 -n 1)
valgrind --tool=callgrind --dump-instr=no --callgrind-out-file="$dir/cg.%p" \
  redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --dir "$dir" \
  --daemonize no --loglevel warning >"$dir/server.log" 2>&1 &
pid=$!
cleanup() {
  redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || kill "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM # (the EXIT trap then stops the server)
i=0
until redis-cli -p "$port" ping >/dev/null 2>&1; do
  i=$((i + 1))
  if [ $i -gt 600 ]; then echo "redis-instructions.sh: the server did not start:" >&2; cat "$dir/server.log" >&2; exit 1; fi
  sleep 0.1
done

# The dumps so far (callgrind numbers them cg.PID.1, .2, ...).
dumps() { ls "$dir"/cg."$pid".* 2>/dev/null | wc -l; }
# The instructions of the newest dump (the part just measured) over N; it
# fails unless the run made exactly its two dumps since dumps() gave $1.
last_per_job() {
  [ "$(dumps)" -eq $(($1 + 2)) ] || { echo "expected 2 callgrind dumps in the run, got $(($(dumps) - $1))" >&2; return 1; }
  f="$dir/cg.$pid.$(($1 + 2))"
  awk -v n="$jobs" '/^summary:/ { printf "%.0f\n", $2 / n; found = 1 } END { exit !found }' "$f"
}
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.0f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

lanes_runs="" bullmq_runs="" failed=0
r=1
while [ "$r" -le "$repeats" ]; do
  redis-cli -p "$port" flushall >/dev/null
  d=$(dumps)
  if "$floor" "$port" worker "$jobs" 50 --callgrind "$pid" >"$dir/lanes.out" 2>&1 && v=$(last_per_job "$d"); then
    echo "run $r lanes  $v instructions per job ($(grep -o 'jobs_per_step=[0-9.]*' "$dir/lanes.out"))"
    lanes_runs="$lanes_runs $v"
  else
    echo "run $r lanes failed:" >&2; cat "$dir/lanes.out" >&2; failed=1
  fi
  redis-cli -p "$port" flushall >/dev/null
  d=$(dumps)
  if LANES_BENCH_REDIS_URL="redis://127.0.0.1:$port/0" node "$root/bench/peers-bullmq/bench.mjs" worker \
       --workerJobs="$jobs" --concurrency=50 --around="callgrind_control -d $pid" >"$dir/bullmq.out" 2>&1 &&
     v=$(last_per_job "$d"); then
    echo "run $r bullmq $v instructions per job"
    bullmq_runs="$bullmq_runs $v"
  else
    echo "run $r bullmq failed:" >&2; cat "$dir/bullmq.out" >&2; failed=1
  fi
  r=$((r + 1))
done
[ "$failed" -eq 0 ] || exit 1
l=$(echo "$lanes_runs" | tr ' ' '\n' | grep . | median)
b=$(echo "$bullmq_runs" | tr ' ' '\n' | grep . | median)
list() { echo "$1" | sed 's/^ //; s/ /, /g'; }
line=$(printf '{"jobs": %s, "repeats": %s, "lanesInstrPerJob": %s, "bullmqInstrPerJob": %s, "ratio": %s, "lanesRuns": [%s], "bullmqRuns": [%s]}' \
  "$jobs" "$repeats" "$l" "$b" "$(awk -v l="$l" -v b="$b" 'BEGIN { printf "%.3f", b / l }')" \
  "$(list "$lanes_runs")" "$(list "$bullmq_runs")")
echo "$line"
[ -z "$out" ] && exit 0
commit=$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)
[ -n "$(git -C "$root" status --porcelain --untracked-files=no 2>/dev/null)" ] && commit="$commit+dirty"
echo "$line" | python3 -c '
import json, sys, time
r = json.loads(sys.stdin.read())
r["createdAt"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
r["commit"] = sys.argv[1]
r["loadAverage"] = open("/proc/loadavg").read().split()[0]
r["tool"] = "bench/tools/redis-instructions.sh"
with open(sys.argv[2], "w") as f:
    json.dump(r, f, indent=1)
    f.write("\n")
' "$commit" "$out" || { echo "redis-instructions.sh: cannot write $out" >&2; exit 1; }
