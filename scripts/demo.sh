#!/bin/sh
# demo.sh BUILD_DIR - `make demo` after the build: lanes in under 80 lines.
# 1. the pool keeping a file read fast beside CPU work, 2. a job added and
# run, 3. a flow (a parent that runs once its children are done), 4. the
# dashboard, started for a moment, 5. every experiment (docs/experiments.md)
# rerun quickly, one figure each with a line on how to read it. What the
# steps print beyond that goes to BUILD_DIR/demo.log; the quick results to
# BUILD_DIR/demo-results (results/, the committed full run, is left alone).
# The store is a temporary SQLite file; no server is left running.
#
# LANES_DEMO_RESULTS=DIR reads the figures from DIR instead of rerunning the
# experiments (LANES_DEMO_RESULTS=results: the committed full-size run).
# shellcheck disable=SC2016 # the jobs' sh -c scripts expand $(cat) themselves
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
lanes=$build/cli/lanes
[ -x "$lanes" ] || lanes=$build/lanes
if [ ! -x "$lanes" ]; then
  echo "demo.sh: no lanes binary in $build (run make first)" >&2
  exit 2
fi
lanes=$(cd "$(dirname "$lanes")" && pwd)/lanes
log=$build/demo.log
out=${LANES_DEMO_RESULTS:-$build/demo-results}
: >"$log"

tmp=$(mktemp -d)
dash_pid=
cleanup() {
  if [ -n "$dash_pid" ]; then
    kill "$dash_pid" 2>/dev/null || true
    wait "$dash_pid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
store=sqlite:$tmp/demo.db

# run TEXT CMD...: show TEXT as the command a user types, run CMD with its
# stdout indented and its stderr in the log.
run() {
  echo "  \$ $1"
  shift
  "$@" 2>>"$log" | sed 's/^/    /'
}

experiments() {
  echo "Rerunning the experiments quickly (a minute or two; output in $log) ..."
  scripts/npm-peers.sh demo.sh >>"$log" 2>&1
  if [ -x "$build/bench/bench_pool" ]; then
    "$build/bench/bench_pool" --quick >"$tmp/bench_pool.txt" 2>>"$log" || true
    cat "$tmp/bench_pool.txt" >>"$log"
  fi
  # exit 1: a run failed, its results are still written; the figures say so
  "$lanes" bench --quick --out "$out" >>"$log" 2>&1 ||
    echo "  (lanes bench: a run failed, see $log)"
}

pool() {
  echo
  echo "1. The pool: each lane has its own threads and queue"
  python3 scripts/demo-figures.py pool "$out"
}

job() {
  echo
  echo "2. A job: added to a durable queue, run by a worker (any program), its result kept"
  run "lanes jobs sqlite:demo.db add q greet '{\"name\":\"Ada\"}'   # prints the job's id" \
    "$lanes" jobs "$store" add q greet '{"name":"Ada"}'
  run "lanes worker sqlite:demo.db q --exit-when-empty --exec sh -c 'echo \"hello \$(cat)\"'" \
    "$lanes" worker "$store" q --exit-when-empty --exec sh -c 'echo "hello $(cat)"'
  run "lanes jobs sqlite:demo.db get q 1" \
    "$lanes" jobs "$store" get q 1 | grep -E '^  \$|^    (state|result)'
}

flow() {
  echo
  echo "3. A flow: a parent job runs once its two children are done, with their results"
  cat >"$tmp/flow.json" <<'EOF'
{"name": "page", "queueName": "publish", "data": {"page": "home"},
 "children": [{"name": "resize", "queueName": "images", "data": {"w": 64}},
              {"name": "resize", "queueName": "images", "data": {"w": 1024}}]}
EOF
  run "lanes jobs sqlite:demo.db flow flow.json   # publish:page, images:resize x2" \
    "$lanes" jobs "$store" flow "$tmp/flow.json"
  run "lanes worker sqlite:demo.db images --exit-when-empty --exec sh -c 'echo \"{\\\"resized\\\": \$(cat)}\"'" \
    "$lanes" worker "$store" images --exit-when-empty --exec sh -c 'echo "{\"resized\": $(cat)}"'
  run "lanes worker sqlite:demo.db publish --exit-when-empty --exec sh -c 'cat \"\$LANES_CHILDREN_FILE\"'" \
    "$lanes" worker "$store" publish --exit-when-empty --exec sh -c 'cat "$LANES_CHILDREN_FILE"'
  run "lanes jobs sqlite:demo.db get publish 2" \
    "$lanes" jobs "$store" get publish 2 | grep -E '^  \$|^    (state|child)'
}

dash() {
  echo
  echo "4. The dashboard: lanes dash URL serves it on http://127.0.0.1:7700/"
  "$lanes" dash "$store" --listen 127.0.0.1:0 2>"$tmp/dash.err" &
  dash_pid=$!
  url=
  for _ in $(seq 50); do # up to 5 s for its first line
    url=$(sed -n 's|.* on \(http://[^ ]*\).*|\1|p' "$tmp/dash.err")
    [ -n "$url" ] && break
    sleep 0.1
  done
  if [ -n "$url" ] && curl -fsS "${url}api/queues" -o "$tmp/queues.json" 2>>"$log"; then
    echo "  started here for a moment on $url: /api/queues lists" \
      "$(grep -o '"name":"[^"]*"' "$tmp/queues.json" | cut -d'"' -f4 | paste -sd' ')"
  else
    echo "  (it did not start here: see $log)"
  fi
  kill "$dash_pid" 2>/dev/null || true
  wait "$dash_pid" 2>/dev/null || true
  dash_pid=
  cat "$tmp/dash.err" >>"$log"
  echo "  yours: lanes dash sqlite:jobs.db, then open the URL (docs/dash.md)"
}

figures() {
  echo
  if [ -z "${LANES_DEMO_RESULTS:-}" ]; then
    echo "5. The experiments, quick: small workloads and 3 repeats, to show that"
    echo "   everything runs, not to measure it (make bench measures; docs/bench.md)"
  else
    echo "5. The experiments, as $out has them (not rerun here)"
    echo "   (make demo without LANES_DEMO_RESULTS reruns them quickly)"
  fi
  load=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo unknown)
  echo "   Each ratio compares two programs that ran in turn on this machine."
  echo "   Here the load average is $load on $(nproc) CPUs: when other work keeps the"
  echo "   CPUs busy, either program can be paused at any moment, and a ratio moves"
  echo "   by 2x or more between runs. A figure below target under load is the"
  echo "   busy machine talking, not a broken lanes; rerun on an idle one."
  if [ -s "$tmp/bench_pool.txt" ]; then
    sed -n 's/^target[^:]*: [^:]*: \([0-9.]*x\), \(.*\)$/  pool        \1  cost per task vs a bare ring handoff (the floor), target 5x: \2/p' \
      "$tmp/bench_pool.txt"
    echo "              lower is better, 1x is the floor; under 1x: the floor's own run was slowed"
  fi
  python3 scripts/demo-figures.py figures "$out"
  echo "   Every figure: $out/README.md; at full size: make bench (docs/bench.md)."
}

if [ -z "${LANES_DEMO_RESULTS:-}" ]; then
  experiments
else
  echo "Figures from $out (LANES_DEMO_RESULTS: the experiments are not rerun)"
fi
pool
job
flow
dash
figures
