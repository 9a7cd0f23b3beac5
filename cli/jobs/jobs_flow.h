/* jobs_flow.h - `lanes jobs URL flow FILE.json` and the flow relations
 * `lanes jobs URL get` shows (jobs_flow.c; docs/cli.md). */
#ifndef CLI_JOBS_FLOW_H
#define CLI_JOBS_FLOW_H

#include <lanes/jobs.h>

#include <stddef.h>

/* `flow FILE|-`: npos/pos are the positional arguments; json: --json.
 * Returns the exit code. */
int cli_jobs_flow(ln_jobs *jobs, int npos, const char *const *pos, int json);

/* For `get`: the job's parent and children, as text lines (json 0) or as
 * the members ,"parent":...,"children":[...] of its JSON object. Prints
 * nothing for a job of no flow or when they cannot be read. */
void cli_jobs_flow_relations(ln_jobs *jobs, const char *queue, const char *id, int json);

/* For `worker --exec`: if job has children, write them to a new file
 * (path, size bytes: "$TMPDIR/lanes-children-XXXXXX") as
 *   {"values": {KEY: RESULT, ...}, "failed": {KEY: REASON, ...},
 *    "unsuccessful": [KEY, ...], "pending": [KEY, ...]}
 * (BullMQ's getChildrenValues is "values") and return 1; the caller
 * unlinks it. 0: no children (path ""); -1: it could not be written. */
int cli_jobs_children_file(ln_job *job, char *path, size_t size);

/* For `add --parent QUEUE:ID [--parent-on-failure WHAT]` (parent NULL:
 * none): o->parent_queue (copied into queue, size bytes), o->parent_id
 * (borrowed) and the failure option WHAT (fail, continue, ignore,
 * remove). 0, or -1 for a malformed value. */
int cli_jobs_parent_opt(const char *parent, const char *on_failure, ln_job_opts *o, char *queue,
                        size_t size);

#endif
