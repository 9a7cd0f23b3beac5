/* jobs_workers.h - the workers connected to a queue, for `lanes jobs URL
 * workers` and the dashboard (jobs_workers.c). */
#ifndef CLI_JOBS_WORKERS_H
#define CLI_JOBS_WORKERS_H

#include <lanes/jobs.h>

#include <jansson.h>

/* One worker as JSON: {"id","kind" ("lanes"|"bullmq"|"unknown"),"name",
 * "addr","host","pid","startedOn","seenOn"} (null where unknown). */
json_t *cli_worker_json(const ln_worker_info *w);

/* `lanes jobs URL workers QUEUE`: print them, one a line ("ID KIND NAME
 * WHERE pid=P up=Ns seen=Ns-ago"), or as one JSON array; errors as prog.
 * Returns the exit code. */
int cli_jobs_workers(ln_jobs *jobs, const char *prog, const char *queue, int json);

#endif
