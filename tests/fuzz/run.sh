#!/bin/sh
# One bounded fuzz run (tests/fuzz.cmake): replay the committed seeds of
# tests/fuzz/corpus/NAME, then fuzz for SECONDS more, new finds going to a
# scratch corpus in the build tree (never into the source tree).
#   run.sh FUZZER SEEDS WORKDIR SECONDS [DICT]
# Exit 77 (CTest: skipped) when FUZZER was not built: no clang/libFuzzer,
# or the fuzz tree (LN_FUZZ_DIR) was not made.
set -eu
fuzzer=$1 seeds=$2 work=$3 seconds=$4 dict=${5:-}
if [ ! -x "$fuzzer" ]; then
  echo "skipped [fuzz]: $fuzzer not built (needs clang with libFuzzer: Debian clang and" \
       "libclang-rt-14-dev; make test builds it in build-fuzz)"
  exit 77
fi
mkdir -p "$work/new" "$work/crash"
set --
if [ -n "$dict" ]; then set -- -dict="$dict"; fi
# -timeout: one input taking 10 s is a hang; -rss_limit_mb: a leak or a
# runaway allocation fails; artifacts (the crashing input) stay in $work.
exec "$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=1024 \
  -max_len=4096 -print_final_stats=1 -artifact_prefix="$work/crash/" "$@" \
  "$work/new" "$seeds"
