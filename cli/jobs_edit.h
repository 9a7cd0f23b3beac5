/* jobs_edit.h - `lanes jobs URL change-priority | change-delay |
 * update-data | dedup` (jobs_edit.c): change a waiting job, read or
 * release a deduplication id (<lanes/jobs_edit.h>). */
#ifndef CLI_JOBS_EDIT_H
#define CLI_JOBS_EDIT_H

/* Their synopses and --help texts (the table of jobs_help.c). */
#define CLI_JOBS_CHANGE_PRIORITY_SYNOPSIS "QUEUE ID PRIORITY [--lifo]"
#define CLI_JOBS_CHANGE_DELAY_SYNOPSIS "QUEUE ID DELAY_MS"
#define CLI_JOBS_UPDATE_DATA_SYNOPSIS "QUEUE ID JSON|-"
#define CLI_JOBS_DEDUP_SYNOPSIS "QUEUE DEDUP_ID [--remove]"
extern const char cli_jobs_change_priority_help[];
extern const char cli_jobs_change_delay_help[];
extern const char cli_jobs_update_data_help[];
extern const char cli_jobs_dedup_help[];

/* 1 if name is one of the four subcommands. */
int cli_jobs_edit_is(const char *name);
/* Run `lanes jobs URL SUB ...` (argv as cmd_jobs gets it); the exit code. */
int cli_jobs_edit_main(int argc, char **argv);

#endif
