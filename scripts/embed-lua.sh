#!/bin/sh
# embed-lua.sh - generate redis_scripts.[ch] and redis_codes.h from
# src/jobs/redis/lua/*.lua; the build runs it (src/jobs/CMakeLists.txt) into its
# own tree, so nothing generated is kept in the source tree.
#
# The .lua files are the source of truth. Each script is embedded as one C
# string: the parts of codes.lua (the return codes, table RC), lib.lua and
# lib_flow.lua (the shared helpers) that the script uses, then the script
# itself, with the SHA1 Redis gives that body, so the backend can EVALSHA
# without a SCRIPT LOAD round trip first.
#
# "The parts it uses": the library files are cut into their top-level
# definitions (a line at column 0 starting `local ` or `NAME = function`,
# with the comment lines just above it, up to the next one), and a
# definition is kept when a name it defines is a word of the script's code
# or of a definition kept (comments and string literals do not count).
# Every closure a script body creates costs Redis on every call (a step
# script with all of lib.lua spent more on its prelude than on ten jobs'
# commands: docs/internals/redis-speed.md), so a script pays only for the
# helpers it can call. Definitions keep their order, so a forward
# declaration (`local flow_on_finish`) still comes before its assignment.
#
# A script (or a kept definition) that calls a helper as `cold().NAME`
# marks NAME, and what only it needs, as cold: those definitions go into a
# generated function `cold`, which defines them on its first call and
# returns a table of the NAMEs. A step that takes the fast paths only never
# calls it, so never makes those closures.
# codes.lua's table RC keeps, in each body, only the entries the body names
# as RC.NAME (building all of them cost every step call about 3k
# instructions).
# redis_codes.h is made from codes.lua's `NAME = value, -- meaning` lines,
# so Lua and C read their return codes from one table.
#
#   scripts/embed-lua.sh OUTDIR
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
lua="$root/src/jobs/redis/lua"
out=${1:?usage: embed-lua.sh OUTDIR}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

names=$(cd "$lua" && ls *.lua | sed -n 's/\.lua$//p' | grep -v '^lib$' | grep -v '^lib_flow$' | grep -v '^codes$' | LC_ALL=C sort)

# The body of script $1: the library definitions it uses, then itself.
slim_body() {
    awk -v script="$1" '
    function code_of(s) {
        sub(/--.*$/, "", s)
        gsub(/\047[^\047]*\047/, " ", s)
        gsub(/"[^"]*"/, " ", s)
        return s
    }
    function words(s, into,    w) {
        while (match(s, /cold\(\)\.[A-Za-z_][A-Za-z0-9_]*/)) {
            coldroot[substr(s, RSTART + 7, RLENGTH - 7)] = 1
            s = substr(s, 1, RSTART - 1) " cold " substr(s, RSTART + RLENGTH)
        }
        while (match(s, /[A-Za-z_][A-Za-z0-9_]*/)) {
            w = substr(s, RSTART, RLENGTH)
            into[w] = 1
            s = substr(s, RSTART + RLENGTH)
        }
    }
    FILENAME == script { body = body $0 "\n"; words(code_of($0), need); next }
    FNR == 1 && nc > 0 { text[nc] = text[nc] pend; pend = "" }
    /^[ \t]*$/ || /^--/ { pend = pend $0 "\n"; next }
    /^local / || /^[A-Za-z_][A-Za-z0-9_]* *= *function/ {
        nc++
        text[nc] = pend $0 "\n"
        pend = ""
        d = $0
        if (d ~ /^local function /) {
            sub(/^local function /, "", d)
            sub(/[^A-Za-z0-9_].*$/, "", d)
        } else if (d ~ /^local /) {
            sub(/^local /, "", d)
            sub(/=.*$/, "", d)
            gsub(/,/, " ", d)
        } else {
            sub(/ *=.*$/, "", d)
        }
        defs[nc] = d
        refs[nc] = code_of($0)
        next
    }
    { text[nc] = text[nc] pend $0 "\n"; pend = ""; refs[nc] = refs[nc] " " code_of($0) }
    END {
        if (nc == 0) exit 1
        text[nc] = text[nc] pend
        include(need, 1)
        for (w in coldroot) coldneed[w] = 1
        include(coldneed, 2)
        for (w in coldroot) if (!(w in defined)) {
            print "embed-lua.sh: cold()." w " is not defined in the library" >"/dev/stderr"
            exit 1
        }
        rc_names(body)
        for (i = 1; i <= nc; i++) if (used[i]) rc_names(refs[i])
        if (ncold) print "local cold, cold_table -- (cold() is below)"
        for (i = 1; i <= nc; i++) if (used[i] == 1) printf "%s", slim_rc(i)
        if (ncold) {
            print "-- cold(): the helpers this script calls as cold().NAME (and what they use),"
            print "-- defined on the first call only (scripts/embed-lua.sh writes this)."
            print "cold = function()"
            print "if cold_table then return cold_table end"
            for (i = 1; i <= nc; i++) if (used[i] == 2) printf "%s", slim_rc(i)
            t = ""
            for (w in coldroot) t = t (t == "" ? "" : ", ") w " = " w
            print "cold_table = {" t "}"
            print "return cold_table"
            print "end"
        }
        printf "%s", body
    }
    # The codes (RC.NAME) named by the script or a kept definition.
    function rc_names(s) {
        s = code_of_all(s)
        while (match(s, /RC\.[A-Z_][A-Z0-9_]*/)) {
            rcuse[substr(s, RSTART + 3, RLENGTH - 3)] = 1
            s = substr(s, RSTART + RLENGTH)
        }
    }
    function code_of_all(s,    n, k, ln, r) {
        n = split(s, ln, "\n")
        for (k = 1; k <= n; k++) r = r code_of(ln[k]) " "
        return r
    }
    # Definition i as embedded: the table RC of codes.lua keeps only the entries
    # named (each entry costs every call of the script to build).
    function slim_rc(i,    n, k, ln, r, nm) {
        if (defs[i] !~ /^RC *$/) return text[i]
        n = split(text[i], ln, "\n")
        for (k = 1; k < n; k++) {
            if (match(ln[k], /^    [A-Z_][A-Z0-9_]* = -?[0-9]+,/)) {
                nm = ln[k]
                sub(/^    /, "", nm)
                sub(/ .*$/, "", nm)
                if (!(nm in rcuse)) continue
            }
            r = r ln[k] "\n"
        }
        return r
    }
    # Mark (as "as") every definition not yet used that defines a word of
    # set, adding the words of its code to set, until nothing changes.
    function include(set, as,    changed, i, k, n, dn) {
        for (changed = 1; changed;) {
            changed = 0
            for (i = 1; i <= nc; i++) {
                if (used[i]) continue
                n = split(defs[i], dn, " ")
                for (k = 1; k <= n; k++) if (dn[k] in set) break
                if (k > n) continue
                used[i] = as
                changed = 1
                if (as == 2) ncold++
                for (k = 1; k <= n; k++) defined[dn[k]] = 1
                words(refs[i], set)
                if (as == 2) for (w in coldroot) set[w] = 1
            }
        }
    }' "$lua/codes.lua" "$lua/lib.lua" "$lua/lib_flow.lua" "$1"
}

# C string literal of a file: one "line\n" per line, \ and " escaped.
c_string() {
    sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/    "/' -e 's/$/\\n"/' "$1"
}

{
    echo "/* redis_scripts.h - GENERATED by scripts/embed-lua.sh from src/jobs/redis/lua/;"
    echo " * do not edit. The Lua scripts of the Redis backend (redis.c). */"
    echo "/* clang-format off */"
    echo "#ifndef LN_JOBS_REDIS_SCRIPTS_H"
    echo "#define LN_JOBS_REDIS_SCRIPTS_H"
    echo ""
    echo "typedef struct ln__redis_script {"
    echo "    const char *name; /* file name without .lua */"
    echo "    const char *sha1; /* SHA1 of body, as EVALSHA wants it */"
    echo "    const char *body; /* what it uses of codes.lua, lib*.lua, then the script */"
    echo "} ln__redis_script;"
    echo ""
    echo "enum {"
    for n in $names; do
        echo "    LN__RS_$(echo "$n" | tr 'a-z-' 'A-Z_'),"
    done
    echo "    LN__RS_COUNT"
    echo "};"
    echo ""
    echo "extern const ln__redis_script ln__redis_scripts[LN__RS_COUNT];"
    echo ""
    echo "#endif"
} >"$tmp/redis_scripts.h"

{
    echo "/* redis_scripts.c - GENERATED by scripts/embed-lua.sh from src/jobs/redis/lua/;"
    echo " * do not edit. */"
    echo "/* clang-format off */"
    echo "#include \"redis_scripts.h\""
    echo ""
    echo "const ln__redis_script ln__redis_scripts[LN__RS_COUNT] = {"
    for n in $names; do
        slim_body "$lua/$n.lua" >"$tmp/body"
        sha=$(sha1sum "$tmp/body" | cut -d' ' -f1)
        echo "    [LN__RS_$(echo "$n" | tr 'a-z-' 'A-Z_')] = {"
        echo "        \"$n\", \"$sha\","
        c_string "$tmp/body" | sed 's/^/    /'
        echo "    },"
    done
    echo "};"
} >"$tmp/redis_scripts.c"

# codes.lua's entries: "    NAME = -1, -- meaning" -> "NAME -1 meaning".
codes=$(sed -n 's/^ *\([A-Z_][A-Z0-9_]*\) *= *\(-\{0,1\}[0-9][0-9]*\), *-- *\(.*\)$/\1 \2 \3/p' \
    "$lua/codes.lua")
[ -n "$codes" ] || { echo "embed-lua.sh: no codes in $lua/codes.lua" >&2; exit 1; }
{
    echo "/* redis_codes.h - GENERATED by scripts/embed-lua.sh from"
    echo " * src/jobs/redis/lua/codes.lua; do not edit. The codes the Redis backend's"
    echo " * scripts return (RC.<NAME> in Lua), as C constants. */"
    echo "/* clang-format off */"
    echo "#ifndef LN_JOBS_REDIS_CODES_H"
    echo "#define LN_JOBS_REDIS_CODES_H"
    echo ""
    echo "enum {"
    echo "$codes" | while read -r name value meaning; do
        echo "    LN__RC_$name = $value, /* $meaning */"
    done
    echo "};"
    echo ""
    echo "#endif"
} >"$tmp/redis_codes.h"

mkdir -p "$out"
cp "$tmp/redis_scripts.h" "$tmp/redis_scripts.c" "$tmp/redis_codes.h" "$out/"
