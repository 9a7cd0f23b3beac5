#!/bin/sh
# test_install.sh - install a build tree into a temporary prefix and use it
# the way a program outside the tree would (tests/install.cmake):
#   - the libraries, headers, .pc files and the `lanes` command are there;
#     the .pc files name the prefix installed into and lanes.h's version
#   - examples/quickstart.c builds with `pkg-config --cflags --libs lanes`
#     and runs; liblanes.so needs no store library (readelf -d)
#   - with the job queue: tests/install/test_install_jobs.c builds against
#     `pkg-config lanes-jobs`, shared and (liblanes*.a + --static) static,
#     and runs
#   - a CMake project finds both with find_package(lanes) (lanes::lanes,
#     lanes::jobs_static)
#   - the SONAMEs carry MAJOR.MINOR while the major version is 0
#   - with the command: a fully static program links with `pkg-config
#     --static --libs lanes-jobs` alone (ICU's C++ runtime included) and
#     runs; `lanes --version` names the commit; `man lanes` and `man
#     lanes-jobs` show the --help text; the bash completion script is
#     installed, parses (bash -n) and completes `lanes jo` to `jobs`;
#     `lanes jobs --help` lists every command with one line
#   - uninstalling (cmake/uninstall.cmake, what `make uninstall` runs) the
#     prefix install, then a DESTDIR install, leaves no file behind; it
#     runs ldconfig (a stand-in on PATH) when the loader's cache names a
#     removed library, and never under DESTDIR
# The programs run WITHOUT LD_LIBRARY_PATH: a prefix outside the loader's
# directories gets an rpath in the .pc files' Libs (docs/build.md), so a
# program built with pkg-config finds its libraries where they were
# installed.
#
#   test_install.sh SRCDIR BUILDDIR LIBDIR WITH_JOBS(0|1) CC
set -u
src=${1:?usage: test_install.sh SRCDIR BUILDDIR LIBDIR WITH_JOBS CC}
build=${2:?}
libdir_rel=${3:?}
with_jobs=${4:?}
cc=${5:?}

for tool in pkg-config readelf cmake; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "skipped [install]: $tool not found"
    exit 77
  fi
done
case $libdir_rel in
  /*) echo "skipped [install]: CMAKE_INSTALL_LIBDIR is absolute ($libdir_rel): --prefix cannot move it"; exit 77 ;;
esac

tmp=$(mktemp -d "${TMPDIR:-/tmp}/lanes-install.XXXXXX") || exit 1
# `cmake --install` writes BUILD/install_manifest.txt: keep the one of the
# user's own `make install` (what their `make uninstall` reads).
manifest=$build/install_manifest.txt
[ ! -e "$manifest" ] || cp -p "$manifest" "$tmp/user-manifest"
restore() {
  if [ -e "$tmp/user-manifest" ]; then cp -p "$tmp/user-manifest" "$manifest"; else rm -f "$manifest"; fi
  rm -rf "$tmp"
}
trap restore EXIT
trap 'exit 1' INT TERM
prefix=$tmp/prefix
libdir=$prefix/$libdir_rel
fails=0
fail() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}
ok() { echo "ok: $*"; }

version=$(sed -n 's/^#define LN_VERSION_\(MAJOR\|MINOR\|PATCH\) *\([0-9]*\).*/\2/p' \
          "$src/include/lanes.h" | paste -sd. -)
major=${version%%.*}
minor=${version#*.}
minor=${minor%%.*}
# the SONAME's version: MAJOR.MINOR while 0.x, then MAJOR (CMakeLists.txt)
if [ "$major" = 0 ]; then soversion=$major.$minor; else soversion=$major; fi

if ! cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1; then
  cat "$tmp/install.log"
  echo "FAIL: cmake --install $build --prefix $prefix"
  exit 1
fi
ok "cmake --install into $prefix"
cp "$manifest" "$tmp/manifest-prefix"

# ---- what is installed
expect="include/lanes.h include/lanes/uv.h bin/lanes
        $libdir_rel/liblanes.so $libdir_rel/liblanes.so.$soversion $libdir_rel/liblanes.a
        $libdir_rel/pkgconfig/lanes.pc"
unexpected=""
# the man pages of the command (cli/CMakeLists.txt)
man_pages=""
for page in lanes lanes-bench lanes-completion lanes-dash lanes-jobs lanes-worker; do
  man_pages="$man_pages share/man/man1/$page.1"
done
# jobs.h and every part of it in the source tree (lanes/jobs_*.h)
jobs_headers=$(cd "$src" && echo include/lanes/jobs.h include/lanes/jobs_*.h)
if [ "$with_jobs" = 1 ]; then
  expect="$expect $jobs_headers $libdir_rel/liblanes-jobs.so
          $libdir_rel/liblanes-jobs.so.$soversion $libdir_rel/liblanes-jobs.a
          $libdir_rel/pkgconfig/lanes-jobs.pc $man_pages
          share/bash-completion/completions/lanes share/zsh/site-functions/_lanes"
else
  # a core-only build installs neither the job queue nor the CLI
  expect=$(echo "$expect" | sed 's| bin/lanes||')
  unexpected="$jobs_headers $libdir_rel/pkgconfig/lanes-jobs.pc bin/lanes $man_pages"
fi
for f in $expect; do
  [ -e "$prefix/$f" ] || fail "not installed: $f"
done
for f in $unexpected; do
  [ ! -e "$prefix/$f" ] || fail "installed without the job queue: $f"
done
ok "installed files"

export PKG_CONFIG_PATH="$libdir/pkgconfig"
unset LD_LIBRARY_PATH

# ---- lanes.pc
[ "$(pkg-config --modversion lanes)" = "$version" ] ||
  fail "lanes.pc Version $(pkg-config --modversion lanes), lanes.h says $version"
[ "$(pkg-config --variable=prefix lanes)" = "$prefix" ] ||
  fail "lanes.pc prefix $(pkg-config --variable=prefix lanes), installed into $prefix"
if pkg-config --print-requires --print-requires-private lanes | grep -q .; then
  fail "lanes.pc requires: $(pkg-config --print-requires --print-requires-private lanes | tr '\n' ' ')"
fi
ok "lanes.pc: version $version, prefix, no Requires"
case " $(pkg-config --libs lanes) " in
  *" -Wl,-rpath,$libdir "*) ok "lanes.pc Libs: an rpath to $libdir (not a system directory)" ;;
  *) fail "lanes.pc Libs has no -Wl,-rpath,$libdir: $(pkg-config --libs lanes)" ;;
esac

# ---- liblanes.so needs no store library
needed=$(readelf -d "$libdir/liblanes.so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
echo "liblanes.so NEEDED: $(echo $needed)"
if echo "$needed" | grep -Eiq 'sqlite|jansson|hiredis|crypto|ssl|uv'; then
  fail "liblanes.so needs a library beyond libc/pthreads: $(echo $needed)"
fi
readelf -d "$libdir/liblanes.so" | grep -q "SONAME.*\[liblanes\.so\.$soversion\]" ||
  fail "liblanes.so has no SONAME liblanes.so.$soversion: $(readelf -d "$libdir/liblanes.so" | grep SONAME)"

# ---- quickstart against pkg-config lanes
# shellcheck disable=SC2046
if $cc -o "$tmp/quickstart" "$src/examples/quickstart.c" $(pkg-config --cflags --libs lanes) \
     2>"$tmp/cc.log"; then
  out=$("$tmp/quickstart" 2>&1)
  case $out in
    *"12 squared is 144"*) ok "quickstart built with pkg-config lanes: $out" ;;
    *) fail "quickstart printed: $out" ;;
  esac
  if readelf -d "$tmp/quickstart" | grep NEEDED | grep -Eiq 'sqlite|jansson|hiredis|lanes-jobs'; then
    fail "quickstart links a store library"
  fi
else
  cat "$tmp/cc.log"
  fail "quickstart does not build with pkg-config lanes"
fi

if [ "$with_jobs" = 1 ]; then
  # ---- lanes-jobs.pc
  [ "$(pkg-config --modversion lanes-jobs)" = "$version" ] ||
    fail "lanes-jobs.pc Version $(pkg-config --modversion lanes-jobs), lanes.h says $version"
  pkg-config --print-requires lanes-jobs | grep -q '^lanes' ||
    fail "lanes-jobs.pc does not require lanes"
  ok "lanes-jobs.pc: requires $(pkg-config --print-requires lanes-jobs | tr '\n' ' ');" \
     "private $(pkg-config --print-requires-private lanes-jobs | tr '\n' ' ')"
  jneeded=$(readelf -d "$libdir/liblanes-jobs.so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
  echo "liblanes-jobs.so NEEDED: $(echo $jneeded)"
  echo "$jneeded" | grep -qx "liblanes\.so\.$soversion" ||
    fail "liblanes-jobs.so does not need liblanes.so.$soversion"
  readelf -d "$libdir/liblanes-jobs.so" | grep -q "SONAME.*\[liblanes-jobs\.so\.$soversion\]" ||
    fail "liblanes-jobs.so has no SONAME liblanes-jobs.so.$soversion"

  # each installed header of the job queue compiles included on its own
  for h in $jobs_headers; do
    printf '#include <lanes/%s>\n' "${h#include/lanes/}" >"$tmp/one_header.c"
    # shellcheck disable=SC2046
    $cc -fsyntax-only -Wall -Werror "$tmp/one_header.c" $(pkg-config --cflags lanes-jobs) \
      2>"$tmp/cc.log" || { cat "$tmp/cc.log"; fail "$h does not compile on its own"; }
  done
  ok "the job queue's headers compile each on its own"

  # shared
  # shellcheck disable=SC2046
  if $cc -o "$tmp/jobs_shared" "$src/tests/install/test_install_jobs.c" \
       $(pkg-config --cflags --libs lanes-jobs) 2>"$tmp/cc.log"; then
    mkdir -p "$tmp/shared"
    if out=$("$tmp/jobs_shared" "$tmp/shared" 2>&1); then
      ok "jobs program built with pkg-config lanes-jobs: $out"
    else
      fail "jobs program (shared): $out"
    fi
  else
    cat "$tmp/cc.log"
    fail "jobs program does not build with pkg-config lanes-jobs"
  fi

  # static: the two archives, then what --static says they need
  libs=$(pkg-config --static --libs lanes-jobs | sed -e 's/-llanes-jobs//' -e 's/-llanes\b//')
  # shellcheck disable=SC2046,SC2086
  if $cc -o "$tmp/jobs_static" "$src/tests/install/test_install_jobs.c" \
       $(pkg-config --cflags lanes-jobs) "$libdir/liblanes-jobs.a" "$libdir/liblanes.a" \
       $libs 2>"$tmp/cc.log"; then
    mkdir -p "$tmp/static"
    if out=$("$tmp/jobs_static" "$tmp/static" 2>&1); then
      ok "jobs program linked statically (pkg-config --static lanes-jobs): $out"
    else
      fail "jobs program (static): $out"
    fi
  else
    cat "$tmp/cc.log"
    fail "jobs program does not link with liblanes-jobs.a and pkg-config --static lanes-jobs"
  fi

  # fully static: every library from `pkg-config --static --libs` alone
  # (ICU's archives need the C++ runtime after them: lanes-jobs.pc). Not
  # with the PostgreSQL store: a static libpq needs archives Debian does
  # not ship (libpgcommon, libpgport, libgssapi_krb5), so such a program
  # needs a build without it (docs/build.md); the link above covers it.
  # shellcheck disable=SC2046
  if printf ' %s ' "$(pkg-config --static --libs lanes-jobs)" | grep -q ' -lpq '; then
    ok "not linked -static: this build has the PostgreSQL store (libpq has no full static form on Debian)"
  elif $cc -static -o "$tmp/jobs_fullstatic" "$src/tests/install/test_install_jobs.c" \
       $(pkg-config --cflags --static --libs lanes-jobs) 2>"$tmp/cc.log"; then
    mkdir -p "$tmp/fullstatic"
    if out=$("$tmp/jobs_fullstatic" "$tmp/fullstatic" 2>&1); then
      ok "jobs program linked -static with pkg-config --static --libs lanes-jobs: $out"
    else
      fail "jobs program (-static): $out"
    fi
  else
    grep -v 'warning:\|in function' "$tmp/cc.log" | head -20
    fail "cc -static ... \$(pkg-config --static --libs lanes-jobs) does not link:" \
         "$(pkg-config --static --libs lanes-jobs)"
  fi

  lanes=$prefix/bin/lanes
  # ---- lanes --version: the version and the commit built: in a checkout
  # HEAD or, for a tree built before its last commits, one of its
  # ancestors; "unknown" outside one
  out=$("$lanes" --version 2>&1)
  top=$(git -C "$src" rev-parse --show-toplevel 2>/dev/null) &&
    [ "$(cd "$top" && pwd -P)" = "$(cd "$src" && pwd -P)" ] &&
    head=$(git -C "$src" rev-parse --short=12 HEAD 2>/dev/null) || head=""
  built=$(echo "$out" | sed -n "s/^lanes $version (commit \([0-9a-f]\{12\}\)\(-dirty\)\{0,1\})\$/\1/p")
  if [ -z "$head" ] && [ "$out" = "lanes $version (commit unknown)" ]; then
    ok "lanes --version outside a checkout: $out"
  elif [ -n "$head" ] && [ -n "$built" ] &&
       git -C "$src" merge-base --is-ancestor "$built" HEAD 2>/dev/null; then
    ok "lanes --version: $out (HEAD $head)"
  else
    fail "installed 'lanes --version' printed '$out', not 'lanes $version (commit ${head:-unknown})'"
  fi

  # ---- lanes jobs --help: every command with one line, each describable
  list=$("$lanes" jobs --help | sed -n '/^commands:$/,/^$/p' | sed '1d;$d')
  n=0
  while read -r name summary; do
    n=$((n + 1))
    # a summary in words ("add a job ..."), not the arguments ("QUEUE ...")
    case $summary in
      [a-z]*) ;;
      *) fail "lanes jobs --help: '$name' has no one-line summary: '$summary'" ;;
    esac
    "$lanes" jobs - "$name" --help 2>&1 | head -1 | grep -q "^usage: lanes jobs URL $name " ||
      fail "lanes jobs --help lists '$name', whose --help is not its usage"
  done <<LIST
$list
LIST
  [ "$n" -ge 30 ] || fail "lanes jobs --help lists $n commands: $list"
  ok "lanes jobs --help: $n commands, one line each"

  # ---- man pages: `man lanes` shows the --help text
  if command -v man >/dev/null 2>&1; then
    show_man() { MANPATH='' MANWIDTH=100 man -M "$prefix/share/man" "$1" 2>&1; }
    how="man -M $prefix/share/man"
  else
    show_man() { groff -man -Tutf8 "$prefix/share/man/man1/$1.1" 2>&1 | sed 's/.\x08//g'; }
    how="groff -man -Tutf8 (no man)"
  fi
  show_man lanes >"$tmp/man.txt"
  if ! grep -q 'administer a durable job queue' "$tmp/man.txt" ||
     ! grep -q '^LANES(1)' "$tmp/man.txt"; then
    fail "$how lanes: $(head -20 "$tmp/man.txt")"
  fi
  show_man lanes-jobs >"$tmp/man.txt"
  if ! grep -q 'Add a job and print its id' "$tmp/man.txt" ||
     ! grep -q -- '--remove-on-complete' "$tmp/man.txt"; then
    fail "$how lanes-jobs: $(head -20 "$tmp/man.txt")"
  fi
  ok "man pages ($how): lanes, lanes-jobs"

  # ---- completion: the installed bash script parses and completes
  bcomp=$prefix/share/bash-completion/completions/lanes
  if command -v bash >/dev/null 2>&1; then
    "$lanes" completion bash | bash -n || fail "lanes completion bash: bash -n refuses it"
    bash -n "$bcomp" || fail "$bcomp: bash -n refuses it"
    # shellcheck disable=SC2016
    got=$(PATH="$prefix/bin:$PATH" bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
             _lanes; printf "%s\n" "${COMPREPLY[@]}"' sh "$bcomp" lanes jo)
    [ "$got" = jobs ] || fail "bash completion of 'lanes jo': '$got'"
    # shellcheck disable=SC2016
    got=$(PATH="$prefix/bin:$PATH" bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
             _lanes; printf "%s\n" "${COMPREPLY[@]}"' sh "$bcomp" lanes jobs q.db add --remove-on-c)
    [ "$got" = --remove-on-complete ] || fail "bash completion of 'lanes jobs q.db add --remove-on-c': '$got'"
    ok "bash completion: lanes jo -> jobs, add --remove-on-c -> --remove-on-complete"
  else
    fail "no bash to check the bash completion with"
  fi
  zcomp=$prefix/share/zsh/site-functions/_lanes
  if command -v zsh >/dev/null 2>&1; then
    zsh -n "$zcomp" || fail "_lanes: zsh -n refuses it"
    # its function with words/CURRENT as zsh sets them; compadd prints
    # shellcheck disable=SC2016
    got=$(PATH="$prefix/bin:$PATH" zsh -fc 'compadd() { shift; print -l -- "$@"; }
             _files() { :; }; . "$1" >/dev/null; shift; words=("$@"); CURRENT=$#
             _lanes | grep -x "jobs"' sh "$zcomp" lanes jo)
    [ "$got" = jobs ] || fail "zsh completion of 'lanes jo': '$got'"
    ok "zsh completion: lanes jo -> jobs"
  fi
  head -1 "$zcomp" | grep -qx '#compdef lanes' ||
    fail "_lanes does not start with #compdef lanes"
fi

# ---- a system prefix: no rpath (the loader finds the libraries; the
# install runs ldconfig as root, but not under DESTDIR, as here)
if DESTDIR="$tmp/destdir" cmake --install "$build" --prefix /usr >"$tmp/install2.log" 2>&1; then
  cp "$manifest" "$tmp/manifest-destdir"
  pc="$tmp/destdir/usr/$libdir_rel/pkgconfig/lanes.pc"
  if grep -q rpath "$pc"; then
    fail "lanes.pc for prefix /usr has an rpath: $(grep '^Libs:' "$pc")"
  else
    ok "lanes.pc for prefix /usr: $(grep '^Libs:' "$pc")"
  fi
  if grep -q "Running: .*ldconfig" "$tmp/install2.log"; then
    fail "an install under DESTDIR ran ldconfig"
  fi
else
  cat "$tmp/install2.log"
  fail "DESTDIR=... cmake --install --prefix /usr"
fi

# ---- find_package(lanes) from a CMake project outside the tree
mkdir -p "$tmp/consumer"
cat >"$tmp/consumer/CMakeLists.txt" <<EOF
cmake_minimum_required(VERSION 3.16)
project(lanes_consumer C)
find_package(lanes $version REQUIRED)
add_executable(quickstart "$src/examples/quickstart.c")
target_link_libraries(quickstart PRIVATE lanes::lanes)
if(lanes_HAVE_JOBS)
  add_executable(jobs_static "$src/tests/install/test_install_jobs.c")
  target_link_libraries(jobs_static PRIVATE lanes::jobs_static)
endif()
EOF
if cmake -S "$tmp/consumer" -B "$tmp/consumer/build" -DCMAKE_PREFIX_PATH="$prefix" \
     -DCMAKE_C_COMPILER="$cc" >"$tmp/consumer.log" 2>&1 &&
   cmake --build "$tmp/consumer/build" >>"$tmp/consumer.log" 2>&1; then
  out=$("$tmp/consumer/build/quickstart" 2>&1)
  case $out in
    *"12 squared is 144"*) ok "find_package(lanes): lanes::lanes: $out" ;;
    *) fail "find_package(lanes) quickstart printed: $out" ;;
  esac
  if [ "$with_jobs" = 1 ]; then
    mkdir -p "$tmp/cmake"
    if out=$("$tmp/consumer/build/jobs_static" "$tmp/cmake" 2>&1); then
      ok "find_package(lanes): lanes::jobs_static: $out"
    else
      fail "find_package(lanes) jobs program: $out"
    fi
  fi
else
  cat "$tmp/consumer.log"
  fail "a CMake project cannot use find_package(lanes) and its targets"
fi

# ---- uninstall (cmake/uninstall.cmake, as `make uninstall` runs it): no
# file of either install left, nor lanes' own directories
uninstall() { # uninstall MANIFEST ROOT [DESTDIR]
  if ! DESTDIR=${3:-} cmake -DMANIFEST="$1" -P "$src/cmake/uninstall.cmake" >"$tmp/uninstall.log" 2>&1; then
    cat "$tmp/uninstall.log"
    fail "uninstall of $2"
  fi
  left=$(find "$2" -type f -o -type l)
  [ -z "$left" ] || fail "uninstall left in $2: $(echo "$left" | tr '\n' ' ')"
  for d in include/lanes "$libdir_rel/cmake/lanes"; do
    [ ! -d "$2/$d" ] || fail "uninstall left the directory $2/$d"
  done
  [ ! -e "$1" ] || fail "uninstall kept its manifest $1"
}
# The prefix's uninstall with a stand-in ldconfig whose cache names the
# installed liblanes (as the real one's does after a system install): the
# uninstall must run it (as root; otherwise ask for it), as install did.
mkdir -p "$tmp/fakebin"
cat >"$tmp/fakebin/ldconfig" <<EOF
#!/bin/sh
if [ "\${1:-}" = -p ]; then
  echo "1 libs found in cache"
  echo "	liblanes.so.$soversion (libc6,x86-64) => $libdir/liblanes.so.$soversion"
else
  touch "$tmp/ldconfig-ran"
fi
EOF
chmod +x "$tmp/fakebin/ldconfig"
PATH="$tmp/fakebin:$PATH" uninstall "$tmp/manifest-prefix" "$prefix"
if [ "$(id -u)" = 0 ]; then
  [ -e "$tmp/ldconfig-ran" ] ||
    fail "uninstall did not run ldconfig though its cache named $libdir/liblanes.so.$soversion"
else
  grep -q "run ldconfig as root" "$tmp/uninstall.log" ||
    fail "uninstall (not root) did not ask for ldconfig though its cache named the library"
fi
rm -f "$tmp/ldconfig-ran"
[ ! -e "$tmp/manifest-destdir" ] ||
  PATH="$tmp/fakebin:$PATH" uninstall "$tmp/manifest-destdir" "$tmp/destdir" "$tmp/destdir"
if [ -e "$tmp/ldconfig-ran" ] || grep -q "ldconfig" "$tmp/uninstall.log"; then
  fail "an uninstall under DESTDIR ran (or asked for) ldconfig"
fi
ok "uninstall: nothing left of $prefix's install nor of the DESTDIR one"

if [ "$fails" -gt 0 ]; then
  echo "$fails check(s) failed"
  exit 1
fi
echo "all install checks passed"
