/* dynflow.h - children added to an existing parent and a running job that
 * waits for its children (jobs_flows.h "Children of an existing parent";
 * docs/internals/flows.md "Adding to an existing parent"). Not API. */
#ifndef LN_JOBS_DYNFLOW_H
#define LN_JOBS_DYNFLOW_H

#include "backend.h"

#include <stddef.h>

/* The parent members of o (ln__jobs_check_opts calls this last): both of
 * parent_queue / parent_id or neither, a valid queue and id, the four
 * failure options 0/1 and only with a parent, no dedup_id with a parent.
 * 0 or LN_EINVAL with err set. */
int ln__dynflow_check_opts(const ln_job_opts *o, char *err, size_t errsize);

/* LN__FLOW_* bits of o's four failure options. */
int ln__dynflow_flags(const ln_job_opts *o);

/* "what" cannot take a parent (a flow node, a scheduler's template):
 * LN_EINVAL with err set when o has one, else 0. */
int ln__dynflow_refuse(const ln_job_opts *o, const char *what, char *err, size_t errsize);

typedef struct ln_worker ln_worker;

/* The dispatcher's side of ln_job_wait_children: collect (worker_jobs.c)
 * gives ln__worker_waited a job whose handler moved it to waiting-children
 * and returned; it is freed with nothing recorded, at once or, while a
 * step in flight renews its lease, by the sweep ln__steps_recv makes once
 * such a step is received (worker_steps.c; only while w->nwaited > 0). */
void ln__worker_waited(ln_worker *w, ln_job *job);
void ln__worker_waited_sweep(ln_worker *w);

#endif
