/* jobs_edit.h - `lanes jobs URL change-priority | change-delay |
 * update-data | dedup | promote | priority-counts | trim-events |
 * add-log | clear-logs | detach`
 * (jobs_edit.c): change a waiting job, read or release a deduplication id,
 * promote delayed jobs, count ready jobs by priority (<lanes/jobs_edit.h>),
 * trim a queue's events (<lanes/jobs_events.h>), add or clear a job's log
 * lines, detach a flow child from its parent. */
#ifndef CLI_JOBS_EDIT_H
#define CLI_JOBS_EDIT_H

/* Their synopses and --help texts (the table of jobs_help.c). */
#define CLI_JOBS_CHANGE_PRIORITY_SYNOPSIS "QUEUE ID PRIORITY [--lifo]"
#define CLI_JOBS_CHANGE_DELAY_SYNOPSIS "QUEUE ID DELAY_MS"
#define CLI_JOBS_UPDATE_DATA_SYNOPSIS "QUEUE ID JSON|-"
#define CLI_JOBS_DEDUP_SYNOPSIS "QUEUE DEDUP_ID [--remove]"
#define CLI_JOBS_PROMOTE_SYNOPSIS "QUEUE ID|--all"
#define CLI_JOBS_PRIORITY_COUNTS_SYNOPSIS "QUEUE PRIORITY..."
#define CLI_JOBS_TRIM_EVENTS_SYNOPSIS "QUEUE MAXLEN"
#define CLI_JOBS_ADD_LOG_SYNOPSIS "QUEUE ID LINE|- [--keep N]"
#define CLI_JOBS_CLEAR_LOGS_SYNOPSIS "QUEUE ID [--keep N]"
#define CLI_JOBS_DETACH_SYNOPSIS "QUEUE ID"
extern const char cli_jobs_change_priority_help[];
extern const char cli_jobs_change_delay_help[];
extern const char cli_jobs_update_data_help[];
extern const char cli_jobs_dedup_help[];
extern const char cli_jobs_promote_help[];
extern const char cli_jobs_priority_counts_help[];
extern const char cli_jobs_trim_events_help[];
extern const char cli_jobs_add_log_help[];
extern const char cli_jobs_clear_logs_help[];
extern const char cli_jobs_detach_help[];

/* 1 if name is one of the subcommands above. */
int cli_jobs_edit_is(const char *name);
/* Run `lanes jobs URL SUB ...` (argv as cmd_jobs gets it); the exit code. */
int cli_jobs_edit_main(int argc, char **argv);

#endif
