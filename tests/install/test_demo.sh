#!/bin/sh
# test_demo.sh SRC BUILD - `make demo` without its benchmarks
# (LANES_DEMO_RESULTS=SRC/results: the committed figures): it exits 0, shows
# a job run, a flow whose parent ran after its children, the dashboard
# answering and then stopped, a figure and a reading line per experiment,
# and stays under 80 lines with the lines this mode leaves out (the build
# line of the Makefile, bench_pool's two, a failed bench run's one). Also
# runs the README's job in three shell lines as written.
set -u
for tool in curl python3; do
  command -v $tool >/dev/null 2>&1 || { echo "skipped [$tool]: $tool not found"; exit 77; }
done
src=$1
build=$(cd "$2" && pwd)
out=$(LANES_DEMO_RESULTS="$src/results" sh "$src/scripts/demo.sh" "$build" 2>&1)
rc=$?
printf '%s\n' "$out"
fail=0
no() { echo "FAIL: $*"; fail=1; }
[ "$rc" = 0 ] || no "demo.sh exited $rc"
n=$(printf '%s\n' "$out" | wc -l)
[ $((n + 4)) -lt 80 ] || no "$n lines, and 4 more in a real run: not under 80"
[ "$(printf '%s\n' "$out" | grep -c '^    state        completed$')" = 2 ] ||
  no "the job and the flow's parent did not both complete"
printf '%s\n' "$out" | grep -q '^    child        images:4 processed {"resized": {"w":1024}}$' ||
  no "the flow's parent does not show its children's results"
printf '%s\n' "$out" | grep -q 'started here for a moment on http://127.0.0.1:[0-9]*/: /api/queues lists images publish q$' ||
  no "the dashboard did not answer /api/queues"
grep -q '^lanes dash: stopping' "$build/demo.log" || no "the dashboard was not stopped"
for e in fixedqueue rails writepath starvation jobs bullmq; do
  [ "$(printf '%s\n' "$out" | grep -c "^  $e  *[0-9.]*x  ")" = 1 ] || no "no figure for $e"
done
[ "$(printf '%s\n' "$out" | grep -c '^              > 1x: ')" = 6 ] || no "not one reading line per experiment"
printf '%s\n' "$out" | grep -q 'not a broken lanes' || no "no word on load"
# The README's job in three shell lines, run as written in an empty directory.
dir=$(mktemp -d)
sed -n '/^lanes jobs sqlite:jobs.db add /,/^lanes jobs sqlite:jobs.db counts /p' \
  "$src/README.md" >"$dir/job.sh"
[ "$(wc -l <"$dir/job.sh")" = 3 ] || no "README.md: no job in three shell lines"
(cd "$dir" && PATH="$(cd "$build/cli" && pwd):$PATH" sh -e job.sh 2>/dev/null) |
  grep -q '^completed  *1$' || no "README.md's three shell lines do not complete the job"
rm -rf "$dir"
[ "$fail" = 0 ] && echo "ok: $n lines"
exit "$fail"
