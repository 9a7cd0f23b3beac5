#!/bin/sh
# gen-man.sh LANES OUTDIR - write the man pages of the `lanes` command into
# OUTDIR (lanes.1, and lanes-COMMAND.1 for each command `lanes --help`
# lists) from the text the built command prints for --help, so the pages
# say what --help says. lanes-jobs.1 also holds each `lanes jobs` command's
# own --help. Run at build time (cli/CMakeLists.txt).
set -eu
lanes=${1:?usage: gen-man.sh LANES OUTDIR}
out=${2:?usage: gen-man.sh LANES OUTDIR}
mkdir -p "$out"

version=$("$lanes" --version | sed -n '1s/^lanes \([^ ]*\).*/\1/p')
[ -n "$version" ] || { echo "gen-man.sh: '$lanes --version' gave no version" >&2; exit 1; }

# roff of plain text, kept as it is laid out (no fill, no hyphenation):
# backslashes and hyphens escaped, a leading . or ' made literal.
roff_text() {
  printf '.nf\n'
  sed -e 's/\\/\\e/g' -e 's/-/\\-/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"
  printf '.fi\n'
}

# The commands a usage text lists: the lines after "commands:" up to a
# blank line, "  NAME  summary".
commands_of() {
  sed -n '/^commands:$/,/^$/s/^  \([a-z][a-z-]*\) *\(.*\)$/\1	\2/p'
}

# help ARGS...: what `lanes ARGS... --help` prints; the build fails
# (exit 1) when it fails or prints nothing, rather than write an empty page.
help() {
  text=$("$lanes" "$@" --help) && [ -n "$text" ] || {
    echo "gen-man.sh: '$lanes $* --help' failed or printed nothing" >&2
    exit 1
  }
  printf '%s\n' "$text"
}

header() { # header FILE-NAME TITLE NAME-LINE
  printf '.TH %s 1 "" "lanes %s" "User Commands"\n.SH NAME\n%s\n' "$1" "$version" "$2"
}

top=$(help)
list=$(printf '%s\n' "$top" | commands_of)
{
  header LANES 'lanes \- run durable job queues, workers and a dashboard; rerun the benchmarks'
  printf '.SH SYNOPSIS\n.B lanes\n.I command\n[\\fIargs\\fR...]\n.SH DESCRIPTION\n'
  printf '%s\n' "$top" | roff_text
  printf '.SH SEE ALSO\n'
  printf '%s\n' "$list" | cut -f1 | sed 's/.*/.BR lanes\\-& (1)/' | sed '$!s/$/,/'
} >"$out/lanes.1"

printf '%s\n' "$list" | while IFS='	' read -r cmd summary; do
  upper=$(printf '%s' "$cmd" | tr 'a-z' 'A-Z' | sed 's/-/\\-/g')
  {
    header "LANES\\-$upper" "lanes\\-$cmd \\- $(printf '%s' "$summary" | sed 's/-/\\-/g')"
    printf '.SH DESCRIPTION\n'
    text=$(help "$cmd")
    printf '%s\n' "$text" | roff_text
    if [ "$cmd" = jobs ]; then
      # each command's own help, without the text common to all of them
      printf '.SH COMMANDS\n'
      text=$(help jobs)
      subs=$(printf '%s\n' "$text" | commands_of | cut -f1)
      printf '%s\n' "$subs" | while read -r sub; do
        printf '.SS %s\n' "$(printf '%s' "$sub" | sed 's/-/\\-/g')"
        text=$(help jobs - "$sub")
        printf '%s\n' "$text" | sed '/^URL: /,$d' | roff_text
      done
    fi
    printf '.SH SEE ALSO\n.BR lanes (1)\n'
  } >"$out/lanes-$cmd.1"
done
