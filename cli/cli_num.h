/* cli_num.h - numbers on the `lanes` command line and in the dashboard's
 * query strings: one rule for all of them. */
#ifndef CLI_NUM_H
#define CLI_NUM_H

/* s as a whole decimal integer in [lo, hi] into *out: an optional '-' and
 * digits only (no blanks, no '+', nothing after them). 0, or -1 (s is
 * NULL, empty, not such a number, or out of range; *out unchanged). */
int cli_parse_ll(const char *s, long long lo, long long hi, long long *out);

#endif
