/* jobs_cancel.h - `lanes jobs URL cancel QUEUE ID` (jobs_cancel.c). */
#ifndef CLI_JOBS_CANCEL_H
#define CLI_JOBS_CANCEL_H

#include <lanes/jobs.h>

/* Run the subcommand on an open store with its positional arguments (pos,
 * npos) and --json; prog names it in messages. Returns the exit code. */
int cli_jobs_cancel(ln_jobs *jobs, const char *prog, const char *const *pos, int npos, int json);

#endif
