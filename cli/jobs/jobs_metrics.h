/* jobs_metrics.h - `lanes jobs URL metrics QUEUE [--type T]`: a queue's
 * per-minute metrics (jobs.h "Metrics"), cli/jobs/jobs_metrics.c. */
#ifndef CLI_JOBS_METRICS_H
#define CLI_JOBS_METRICS_H

#include <lanes/jobs.h>

/* Its entry of the subcommand table (jobs_help.c). */
#define CLI_JOBS_METRICS_SYNOPSIS "QUEUE [--type completed|failed]"
#define CLI_JOBS_METRICS_HELP                                                                      \
    "Print the queue's per-minute counts of completed and failed jobs (BullMQ's\n"                 \
    "metrics, as queue.getMetrics and Bull Board's chart read them), which\n"                      \
    "workers started with --metrics-points N write: per type the jobs counted\n"                   \
    "so far, prevTS (ms) and prevCount, then the data points, newest first,\n"                     \
    "one per minute: point i is the jobs of the (i+1)-th minute before prevTS's.\n"                \
    "\n"                                                                                           \
    "  --type T    completed or failed (default: both)\n"                                          \
    "\n"                                                                                           \
    "--json: {\"completed\":{\"count\",\"prevTS\",\"prevCount\",\"points\",\"data\":[...]},\n"     \
    "\"failed\":{...}} (with --type, only that one).\n"

/* Run it: pos[0..npos) the positional arguments (QUEUE), type the value of
 * --type or NULL, json 1 for --json; prog names the command in errors.
 * The exit code. */
int cli_jobs_metrics(ln_jobs *jobs, const char *prog, const char *const *pos, int npos,
                     const char *type, int json);

#endif
