#!/bin/sh
# handler.sh - the interop handler (interop.mjs's handler()) as a program
# for `lanes worker --exec`: data JSON on stdin, LANES_JOB_NAME and
# LANES_JOB_ATTEMPT in the environment; exit 0 = completed with stdout as
# the return value, else failed with stderr as the reason.
data=$(cat)
case $LANES_JOB_NAME in
flaky)
    if [ "$LANES_JOB_ATTEMPT" -le 2 ]; then
        printf 'flaky attempt %s' "$LANES_JOB_ATTEMPT" >&2
        exit 1
    fi ;;
doomed)
    printf 'doomed' >&2
    exit 1 ;;
esac
printf '{"name":"%s","data":%s}' "$LANES_JOB_NAME" "$data"
