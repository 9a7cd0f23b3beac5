/* cli_num.h - numbers on the `lanes` command line and in the dashboard's
 * query strings: one rule for all of them. */
#ifndef CLI_NUM_H
#define CLI_NUM_H

/* s as a whole decimal integer in [lo, hi] into *out: an optional '-' and
 * digits only (no blanks, no '+', nothing after them). 0, or -1 (s is
 * NULL, empty, not such a number, or out of range; *out unchanged). */
int cli_parse_ll(const char *s, long long lo, long long hi, long long *out);

struct ln_job_keep;
/* A retention WHAT of --remove-on-complete / --remove-on-fail into *k:
 * "none" removes none (LN_KEEP_ALWAYS for a job: kept whatever the
 * worker's retention; LN_KEEP_ALL for a worker), "all" removes each job as
 * it finishes (LN_KEEP_NONE), "keep:N" (or a bare N, BullMQ's number)
 * keeps the newest N, "age:S" removes those older than S seconds. 0, or -1
 * (*k unchanged). */
int cli_parse_keep(const char *s, int for_worker, struct ln_job_keep *k);

#endif
