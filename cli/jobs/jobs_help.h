/* jobs_help.h - the subcommands of `lanes jobs`: their names and their
 * --help text (docs/cli.md); the options each takes are in the option
 * tables of cmd_jobs.c, jobs_schedule.c and jobs_ratelimit.c. */
#ifndef CLI_JOBS_HELP_H
#define CLI_JOBS_HELP_H

#include <stddef.h>
#include <stdio.h>

typedef struct cli_jobs_cmd {
    const char *name;     /* "add", "counts", ... */
    const char *summary;  /* one line for `lanes jobs --help` */
    const char *synopsis; /* the arguments after the name */
    const char *help;     /* what it does, and its options, for --help */
} cli_jobs_cmd;

/* The subcommand called name, or NULL. */
const cli_jobs_cmd *cli_jobs_cmd_find(const char *name);

/* The name of the i-th subcommand of `lanes jobs` (0, 1, ...; the job
 * scheduler commands included), and its one-line summary into *summary
 * when not NULL; NULL past the last. `lanes jobs --help`, the man page and
 * `lanes completion` list them from here. */
const char *cli_jobs_cmd_name(size_t i, const char **summary);

/* `lanes jobs --help` (every subcommand), and `lanes jobs URL CMD --help`. */
void cli_jobs_usage(FILE *f);
void cli_jobs_cmd_usage(FILE *f, const cli_jobs_cmd *cmd);

#endif
