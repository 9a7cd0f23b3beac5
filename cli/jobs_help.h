/* jobs_help.h - the subcommands of `lanes jobs`: their names, the options
 * each one takes, and their --help text (docs/cli.md). */
#ifndef CLI_JOBS_HELP_H
#define CLI_JOBS_HELP_H

#include <stdio.h>

typedef struct cli_jobs_cmd {
    const char *name;     /* "add", "counts", ... */
    const char *synopsis; /* the arguments after the name */
    const char *options;  /* the options it takes, each followed by a space */
    const char *help;     /* what it does, and its options, for --help */
} cli_jobs_cmd;

/* The subcommand called name, or NULL. */
const cli_jobs_cmd *cli_jobs_cmd_find(const char *name);

/* 1 if option opt (e.g. "--limit") applies to cmd. --json, --create and
 * --help apply to every subcommand. */
int cli_jobs_opt_applies(const cli_jobs_cmd *cmd, const char *opt);

/* `lanes jobs --help` (every subcommand), and `lanes jobs URL CMD --help`. */
void cli_jobs_usage(FILE *f);
void cli_jobs_cmd_usage(FILE *f, const cli_jobs_cmd *cmd);

#endif
