#!/bin/sh
# test_redis_instructions.sh SOURCE_DIR BUILD_DIR - bench/tools/redis-instructions.sh
# end to end on a small run: it counts a positive number of instructions
# per job for both workers and prints them as its JSON line, and refuses
# bad arguments with exit 2. The figures are a benchmark's: never asserted.
set -u
src=$1 build=$2
tool="$src/bench/tools/redis-instructions.sh"
for need in valgrind node redis-server; do
  command -v "$need" >/dev/null 2>&1 || {
    case $need in redis-server) why=redis ;; *) why=$need ;; esac
    echo "skipped [$why]: $need not found"
    exit 77
  }
done
[ -d "$src/tests/interop/node_modules/bullmq" ] || { echo "skipped [node]: no BullMQ install"; exit 77; }

"$tool" --jobs 0 >/dev/null 2>&1
[ $? -eq 2 ] || { echo "FAIL: --jobs 0 should exit 2"; exit 1; }
"$tool" --bogus >/dev/null 2>&1
[ $? -eq 2 ] || { echo "FAIL: an unknown argument should exit 2"; exit 1; }

out=$("$tool" --build "$build" --jobs 200 --repeats 1) || { echo "FAIL: the tool failed:"; echo "$out"; exit 1; }
echo "$out"
echo "$out" | tail -n 1 | python3 -c '
import json, sys
r = json.loads(sys.stdin.read())
ok = (r["jobs"] == 200 and r["repeats"] == 1
      and r["lanesInstrPerJob"] > 0 and r["bullmqInstrPerJob"] > 0
      and len(r["lanesRuns"]) == 1 and len(r["bullmqRuns"]) == 1
      and abs(r["ratio"] - r["bullmqInstrPerJob"] / r["lanesInstrPerJob"]) < 0.01)
if not ok:
    raise SystemExit("FAIL: %r" % (r,))
print("1 passed, 0 failed")
' || { echo "FAIL: unexpected output"; exit 1; }
