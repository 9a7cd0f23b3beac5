#!/bin/sh
# check-format.sh - check (or, with --fix, apply) .clang-format on lanes' C.
#
#   scripts/check-format.sh          list the files clang-format would change;
#                                    exit 1 if any, 77 if clang-format is missing
#   scripts/check-format.sh --fix    reformat them in place (`make format`)
#   scripts/check-format.sh --list   print the files checked
#
# The files: every .c and .h git tracks under include src tests bench cli
# examples (outside a git checkout, the same found on disk). CLANG_FORMAT
# names the binary (default clang-format). CTest runs the check as `format`.
set -u
cd "$(dirname "$0")/.." || exit 2

mode=check
case ${1:-} in
  "") ;;
  --fix) mode=fix ;;
  --list) mode=list ;;
  *) echo "usage: scripts/check-format.sh [--fix | --list]" >&2; exit 2 ;;
esac

dirs="include src tests bench cli examples"
list_files() {
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    # shellcheck disable=SC2086
    git ls-files -- $dirs | grep -E '\.[ch]$' |
      while read -r f; do [ -f "$f" ] && printf '%s\n' "$f"; done
  else
    # shellcheck disable=SC2086
    find $dirs -name node_modules -prune -o -type f \( -name '*.c' -o -name '*.h' \) -print |
      LC_ALL=C sort
  fi
}

files=$(list_files)
if [ -z "$files" ]; then
  echo "check-format: no C files found under $dirs" >&2
  exit 2
fi
if [ "$mode" = list ]; then
  printf '%s\n' "$files"
  exit 0
fi

cf=${CLANG_FORMAT:-clang-format}
if ! command -v "$cf" >/dev/null 2>&1; then
  echo "skipped [clang-format]: $cf not found (Debian: apt-get install clang-format)" >&2
  exit 77
fi

if [ "$mode" = fix ]; then
  # shellcheck disable=SC2086
  exec "$cf" -i --style=file $files
fi

bad=""
nbad=0
for f in $files; do
  if ! out=$("$cf" --dry-run -Werror --style=file "$f" 2>&1); then
    # A file clang-format cannot read or parse is a failure too, not a skip.
    case $out in
      *"code should be clang-formatted"*) ;;
      *) printf '%s\n' "$out" >&2 ;;
    esac
    bad="$bad $f"
    nbad=$((nbad + 1))
  fi
done

if [ "$nbad" -gt 0 ]; then
  echo "check-format: $nbad file(s) differ from .clang-format ($($cf --version)):" >&2
  for f in $bad; do echo "  $f" >&2; done
  echo "fix with: make format   (or scripts/check-format.sh --fix)" >&2
  echo "see a file's changes: $cf --style=file FILE | diff -u FILE -" >&2
  exit 1
fi
# The Python checks of the tests raise explicitly: a bare `assert` is
# dropped by python -O (PYTHONOPTIMIZE), and the check with it.
asserts=$(cd "$(dirname "$0")/.." && grep -rnE '^[[:space:]]*assert[[:space:](]' \
  --include='*.py' --include='*.sh' --exclude-dir=node_modules tests scripts bench examples)
if [ -n "$asserts" ]; then
  echo "check-format: a bare assert in a test (use check(), or raise):" >&2
  printf '%s\n' "$asserts" >&2
  exit 1
fi
# The include rules of the jobs wing and the command.
scripts/check-layers.sh || exit 1
echo "check-format: $(printf '%s\n' "$files" | wc -l) files match .clang-format"
