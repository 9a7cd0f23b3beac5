#!/bin/sh
# test_redis_scripts.sh ROOT - the Lua embedded in src/jobs/redis_scripts.[ch]
# must be exactly what scripts/embed-lua.sh makes of src/jobs/lua/*.lua (the
# .lua files are the source of truth; rerun the script after editing them).
set -eu
root=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sh "$root/scripts/embed-lua.sh" "$tmp"
status=0
for f in redis_scripts.h redis_scripts.c; do
    if ! cmp -s "$tmp/$f" "$root/src/jobs/$f"; then
        echo "src/jobs/$f is stale: run scripts/embed-lua.sh" >&2
        diff "$root/src/jobs/$f" "$tmp/$f" | head -20 >&2
        status=1
    fi
done
# Each embedded body is lib.lua + the script, and its SHA1 is that body's.
for lua in "$root"/src/jobs/lua/*.lua; do
    name=$(basename "$lua" .lua)
    [ "$name" = lib ] && continue
    sha=$(cat "$root/src/jobs/lua/lib.lua" "$lua" | sha1sum | cut -d' ' -f1)
    grep -q "\"$name\", \"$sha\"" "$root/src/jobs/redis_scripts.c" || {
        echo "redis_scripts.c: wrong or missing SHA1 for $name" >&2
        status=1
    }
done
[ $status = 0 ] && echo "embedded Lua matches src/jobs/lua"
exit $status
