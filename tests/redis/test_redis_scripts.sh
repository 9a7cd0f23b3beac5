#!/bin/sh
# test_redis_scripts.sh ROOT GENDIR - the Lua embedded in the build's
# redis_scripts.[ch] and redis_codes.h (in GENDIR) must be exactly what scripts/embed-lua.sh
# makes of src/jobs/redis/lua/*.lua now, and each SHA1 must be its body's.
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
# Each embedded body is the parts of codes.lua, lib.lua and lib_flow.lua
# the script uses, then the script itself (embed-lua.sh's slim_body); its
# SHA1 must be that body's (EVALSHA runs it without a SCRIPT LOAD).
for lua in "$root"/src/jobs/redis/lua/*.lua; do
    name=$(basename "$lua" .lua)
    [ "$name" = lib ] || [ "$name" = lib_flow ] || [ "$name" = codes ] && continue
    line=$(grep "^        \"$name\", \"[0-9a-f]*\",$" "$gen/redis_scripts.c" || true)
    sha=$(echo "$line" | sed 's/.*", "\([0-9a-f]*\)",$/\1/')
    awk -v head="$line" '$0 == head { on = 1; next } on && /^    },$/ { exit } on' \
        "$gen/redis_scripts.c" |
        sed -e 's/^ *"//' -e 's/\\n"$//' -e 's/\\"/"/g' -e 's/\\\\/\\/g' >"$tmp/body"
    n=$(wc -l <"$lua")
    if [ -z "$line" ] || [ "$(sha1sum <"$tmp/body" | cut -d' ' -f1)" != "$sha" ] ||
        ! tail -n "$n" "$tmp/body" | cmp -s - "$lua"; then
        echo "redis_scripts.c: wrong or missing SHA1 or body for $name" >&2
        status=1
    fi
done
[ $status = 0 ] && echo "embedded Lua matches src/jobs/redis/lua"
exit $status
