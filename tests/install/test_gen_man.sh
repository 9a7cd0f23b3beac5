#!/bin/sh
# test_gen_man.sh LANES GEN_MAN - cmake/gen-man.sh fails (exit non-zero,
# saying which) when a `lanes CMD --help` it reads fails, rather than write
# an empty man page; with the real command it writes every page.
set -u
lanes=$1
gen=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

sh "$gen" "$lanes" "$dir/ok" 2>"$dir/ok.err" || fail "gen-man.sh failed: $(cat "$dir/ok.err")"
[ -s "$dir/ok/lanes-worker.1" ] || fail "no lanes-worker.1"
echo "ok   the real command: every page written"

# A command whose `worker --help` fails, and one whose `jobs - add --help` does.
for bad in "worker --help" "jobs - add --help"; do
  cat >"$dir/fake" <<FAKE
#!/bin/sh
[ "\$*" = "$bad" ] && exit 3
exec "$lanes" "\$@"
FAKE
  chmod +x "$dir/fake"
  rm -rf "$dir/bad"
  if sh "$gen" "$dir/fake" "$dir/bad" 2>"$dir/bad.err"; then
    fail "gen-man.sh succeeded although '$bad' failed"
  fi
  grep -q "failed or printed nothing" "$dir/bad.err" || fail "no reason: $(cat "$dir/bad.err")"
  echo "ok   '$bad' failing fails the build"
done
