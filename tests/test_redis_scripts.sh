#!/bin/sh
# test_redis_scripts.sh ROOT GENDIR - the Lua embedded in the build's
# redis_scripts.[ch] and redis_codes.h (in GENDIR) must be exactly what scripts/embed-lua.sh
# makes of src/jobs/lua/*.lua now, and each SHA1 must be its body's.
set -eu
root=$1
gen=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sh "$root/scripts/embed-lua.sh" "$tmp"
status=0
for f in redis_scripts.h redis_scripts.c redis_codes.h; do
    if ! cmp -s "$tmp/$f" "$gen/$f"; then
        echo "$gen/$f is stale: rebuild" >&2
        diff "$gen/$f" "$tmp/$f" | head -20 >&2
        status=1
    fi
done
# Each embedded body is codes.lua + lib.lua + lib_flow.lua + the script,
# and its SHA1 is that body's.
for lua in "$root"/src/jobs/lua/*.lua; do
    name=$(basename "$lua" .lua)
    [ "$name" = lib ] || [ "$name" = lib_flow ] || [ "$name" = codes ] && continue
    sha=$(cat "$root/src/jobs/lua/codes.lua" "$root/src/jobs/lua/lib.lua" \
        "$root/src/jobs/lua/lib_flow.lua" "$lua" | sha1sum | cut -d' ' -f1)
    grep -q "\"$name\", \"$sha\"" "$gen/redis_scripts.c" || {
        echo "redis_scripts.c: wrong or missing SHA1 for $name" >&2
        status=1
    }
done
[ $status = 0 ] && echo "embedded Lua matches src/jobs/lua"
exit $status
