#!/bin/sh
# persist-vs-exec.sh [LANES] [JOBS] [CONCURRENCY] [RUNS] [BOUND_S] - jobs/s
# of the same Python handler (bench/tools/persist_handler.py) through
# `lanes worker --exec` (a process per job) and `--exec-persistent` on the
# same queue: JOBS jobs (default 2000) in a fresh SQLite store per run,
# CONCURRENCY (default 4), RUNS runs of each mode (default 3), each run
# bounded to BOUND_S seconds (default 60: the worker is then stopped and
# the jobs it completed so far count). Prints each run, the median of each
# mode, their ratio and the load average before and after. Needs python3;
# the figures depend on the machine and how busy it is.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
lanes=${1:-$root/build/cli/lanes}
jobs=${2:-2000}
conc=${3:-4}
runs=${4:-3}
bound=${5:-60}
handler="$here/persist_handler.py"
dir=$(mktemp -d "${TMPDIR:-/tmp}/lanes-persist-bench.XXXXXX")
trap 'rm -rf "$dir"' EXIT
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"

# The queue once; each run works on a copy of it.
i=0
while [ $i -lt "$jobs" ]; do
  echo "{\"i\":$i}"
  i=$((i + 1))
done | while read -r d; do "$lanes" jobs "sqlite:$dir/seed.db" add bench job "$d" >/dev/null || exit 1; done
[ -s "$dir/seed.db" ] || { echo "cannot seed the queue" >&2; exit 1; }

# one MODE N: one run; prints its jobs/s.
one() {
  rm -f "$dir"/run.db*
  cp "$dir/seed.db" "$dir/run.db"
  timeout -s TERM "$bound" "$lanes" worker "sqlite:$dir/run.db" bench --concurrency "$conc" \
    --exit-when-empty --log-format json "$1" python3 "$handler" 2>"$dir/err" >/dev/null
  python3 - "$dir/err" <<'PY'
import json, sys
stop = None
for line in open(sys.argv[1]):
    try:
        o = json.loads(line)
    except ValueError:
        continue
    if o.get("event") == "stop":
        stop = o
if stop is None or stop["ms"] == 0:
    print("0 0 0")
else:
    print("%.1f %d %d" % (stop["completed"] * 1000.0 / stop["ms"], stop["completed"], stop["ms"]))
PY
}

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

for mode in --exec --exec-persistent; do
  : >"$dir/rates"
  r=1
  while [ $r -le "$runs" ]; do
    set -- $(one $mode)
    echo "$mode run $r: $1 jobs/s ($2 jobs in $3 ms)"
    echo "$1" >>"$dir/rates"
    r=$((r + 1))
  done
  m=$(median <"$dir/rates")
  echo "$mode median: $m jobs/s"
  echo "$m" >"$dir/median$mode"
done
pj=$(cat "$dir/median--exec")
pp=$(cat "$dir/median--exec-persistent")
awk -v a="$pp" -v b="$pj" 'BEGIN { if (b > 0) printf "persistent / per-job: %.1fx\n", a / b }'
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
