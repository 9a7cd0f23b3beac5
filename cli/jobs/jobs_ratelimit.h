/* jobs_ratelimit.h - `lanes jobs URL rate-limit` and `lanes jobs URL
 * concurrency` (jobs_ratelimit.c), and the MAX/DURATION_MS syntax that
 * `lanes worker --rate-limit` shares. */
#ifndef CLI_JOBS_RATELIMIT_H
#define CLI_JOBS_RATELIMIT_H

/* Their --help texts (the table of jobs_help.c). */
extern const char cli_jobs_rate_limit_help[];
extern const char cli_jobs_concurrency_help[];

/* 1 if name is one of the two subcommands. */
int cli_jobs_limits_is(const char *name);
/* Run `lanes jobs URL rate-limit|concurrency QUEUE ...` (argv as
 * cmd_jobs gets it); the exit code. */
int cli_jobs_limits_main(int argc, char **argv);

/* "MAX/DURATION_MS", both 1..2147483647, into *max and *duration_ms: 0,
 * or -1 for anything else. */
int cli_parse_rate(const char *s, unsigned *max, unsigned *duration_ms);

#endif
