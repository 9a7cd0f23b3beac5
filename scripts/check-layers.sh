#!/bin/sh
# check-layers.sh - the include rules of the jobs wing and the command
# (docs/internals/backend.md "Who calls whom"), as far as the build's
# include folders cannot state them:
#   - a source of src/jobs/ names its project headers by file name only
#     ("front.h", never "../front/front.h" or "front/front.h"): the folders
#     its role may use are its include path, so a header of another role
#     is not found;
#   - model/ includes nothing of the wing outside model/ (it is what every
#     store shares, and calls only the core);
#   - nothing under cli/ includes a header of src/ (the command uses the
#     public API only).
# Exit 0 when every rule holds, else 1 with the offending lines.
# The format test (scripts/check-format.sh) runs it.
set -u
cd "$(dirname "$0")/.." || exit 2

fail=0
report() {
  if [ -n "$2" ]; then
    echo "check-layers: $1:" >&2
    printf '%s\n' "$2" >&2
    fail=1
  fi
}

# Project headers by name only in the wing.
report "an include in src/jobs names a folder" \
  "$(grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]+"[^"]*/' src/jobs --include='*.[ch]')"

# model/ includes only model/'s headers and the core's internal.h.
if [ -d src/jobs/model ]; then
  model_h=$(cd src/jobs/model && ls ./*.h | sed 's|^\./||')
  out=$(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]+"' src/jobs/model/*.[ch] |
    while IFS= read -r line; do
      h=$(printf '%s\n' "$line" | sed -E 's/.*#[[:space:]]*include[[:space:]]+"([^"]*)".*/\1/')
      [ "$h" = internal.h ] && continue
      printf '%s\n' "$model_h" | grep -qxF "$h" || printf '%s\n' "$line"
    done)
  report "model/ includes a header outside model/" "$out"
fi

# The command uses public headers only.
report "cli/ includes a header of src/" \
  "$(grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]+"([^"]*/)?(\.\./)+src/' cli --include='*.[ch]')"

[ "$fail" = 0 ] && echo "check-layers: the include rules hold"
exit "$fail"
