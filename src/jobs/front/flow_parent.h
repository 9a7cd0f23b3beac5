/* flow_parent.h - children added to an existing parent and a running job that
 * waits for its children (jobs_flows.h "Children of an existing parent";
 * docs/internals/flows.md "Adding to an existing parent"). Not API. */
#ifndef LN_JOBS_FLOW_PARENT_H
#define LN_JOBS_FLOW_PARENT_H

#include <lanes/jobs.h>

#include <stddef.h>

/* The parent members of o (ln__jobs_check_opts calls this last): both of
 * parent_queue / parent_id or neither, a valid queue and id, the four
 * failure options 0/1 and only with a parent, no dedup_id with a parent.
 * 0 or LN_EINVAL with err set. */
int ln__dynflow_check_opts(const ln_job_opts *o, char *err, size_t errsize);

/* "what" cannot take a parent (a flow node, a scheduler's template):
 * LN_EINVAL with err set when o has one, else 0. */
int ln__dynflow_refuse(const ln_job_opts *o, const char *what, char *err, size_t errsize);

/* what (a prefix of the message, "" or "child: ") followed by the
 * problem with queue or id, as ln_jobs_* check them; 0 or LN_EINVAL with
 * msg set. */
int ln__dynflow_check_qid(const char *what, const char *queue, const char *id, char *msg,
                          size_t msgsize);

#endif
