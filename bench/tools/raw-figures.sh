#!/bin/sh
# raw-figures.sh [BUILD_DIR] - rerun the README figures that `lanes bench`
# does not write (its experiments go to results/*.json by `make bench`), and
# keep their raw output in results/ beside them:
#
#   results/bench_pool.txt           build/bench/bench_pool's table
#   results/bench_rails.txt          build/bench/bench_rails's table
#   results/redis-instructions.json  bench/tools/redis-instructions.sh
#                                    --repeats 5 (callgrind on redis-server)
#
# Each .txt starts with a line naming the program, the commit ("+dirty"
# with local changes), the time (UTC) and the load average, so a figure
# can be traced to the code that made it. Several minutes; run it on a
# quiet machine, after `make all`. Exit 0, or 1 when a program failed (its
# file is then left as it was).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-build}
case $build in /*) ;; *) build="$root/$build" ;; esac
out="$root/results"
commit=$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)
[ -n "$(git -C "$root" status --porcelain --untracked-files=no 2>/dev/null)" ] && commit="$commit+dirty"
failed=0

# save NAME CMD...: CMD's output into results/NAME.txt, with its header.
save() {
  name=$1
  shift
  tmp="$out/.$name.txt.tmp"
  {
    echo "# $name: $*; commit $commit; $(date -u +%Y-%m-%dT%H:%M:%SZ);" \
         "load average $(cut -d' ' -f1 /proc/loadavg)"
    "$@" 2>&1
  } >"$tmp"
  if [ $? -eq 0 ]; then
    mv "$tmp" "$out/$name.txt"
    echo "raw-figures.sh: wrote results/$name.txt"
  else
    echo "raw-figures.sh: $name failed:" >&2
    cat "$tmp" >&2
    rm -f "$tmp"
    failed=1
  fi
}

for prog in bench_pool bench_rails; do
  [ -x "$build/bench/$prog" ] || { echo "raw-figures.sh: no $build/bench/$prog (run make first)" >&2; exit 1; }
done
save bench_pool "$build/bench/bench_pool"
save bench_rails "$build/bench/bench_rails"
if "$here/redis-instructions.sh" --build "$build" --repeats 5 --out "$out/redis-instructions.json"; then
  echo "raw-figures.sh: wrote results/redis-instructions.json"
else
  echo "raw-figures.sh: redis-instructions.sh failed" >&2
  failed=1
fi
exit $failed
