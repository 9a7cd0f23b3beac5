#!/bin/sh
# test_deploy.sh - the systemd units of deploy/ (docs/deploy.md):
#   - `systemd-analyze verify` takes each with no warning (an unknown or
#     misspelt key is only a warning there: any output fails here), with
#     ExecStart pointed at this build's lanes
#   - each is hardened: its own unprivileged user, no privileges to gain,
#     a read-only system, and the worker's SIGTERM goes to the worker alone
#   - the options the units pass are ones lanes takes (--help names them)
# Skipped (exit 77, reason systemd) where systemd-analyze is not installed.
#
#   test_deploy.sh SRCDIR LANES
set -u
src=${1:?usage: test_deploy.sh SRCDIR LANES}
lanes=${2:?}
if ! command -v systemd-analyze >/dev/null 2>&1; then
  echo "skipped [systemd]: systemd-analyze not found (package systemd)"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
no() { echo "FAIL: $*"; fail=1; }

for unit in lanes-dash.service lanes-worker@.service; do
  [ -f "$src/deploy/$unit" ] || { no "deploy/$unit is missing"; continue; }
  sed "s#/usr/local/bin/lanes#$lanes#g" "$src/deploy/$unit" >"$tmp/$unit"
  for want in DynamicUser=yes NoNewPrivileges=yes ProtectSystem=strict ProtectHome=yes \
              PrivateTmp=yes CapabilityBoundingSet= Restart=on-failure; do
    grep -qx "$want" "$src/deploy/$unit" || no "$unit lacks $want"
  done
done
grep -qx KillMode=mixed "$src/deploy/lanes-worker@.service" ||
  no "lanes-worker@.service: SIGTERM must reach the worker alone (KillMode=mixed)"
ln -s lanes-worker@.service "$tmp/lanes-worker@emails.service"
out=$(cd "$tmp" && systemd-analyze verify --man=no ./lanes-dash.service \
        ./lanes-worker@emails.service 2>&1)
rc=$?
[ "$rc" -eq 0 ] || no "systemd-analyze verify exits $rc"
[ -z "$out" ] || no "systemd-analyze verify says:
$out"

# The options the units and examples pass exist.
"$lanes" worker --help | grep -q -- '--fail-fast' || no "lanes worker has no --fail-fast"
"$lanes" worker --help | grep -q -- '--log-format' || no "lanes worker has no --log-format"
"$lanes" worker --help | grep -q 'LANES_STORE' || no "lanes worker --help names no LANES_STORE"
"$lanes" dash --help | grep -q 'LANES_TOKEN_FILE' || no "lanes dash --help names no LANES_TOKEN_FILE"
for f in lanes.env.example worker.env.example dash.env.example; do
  [ -f "$src/deploy/$f" ] || no "deploy/$f is missing"
done
[ "$fail" -eq 0 ] && echo ok
exit "$fail"
