/* redis_dynflow.h - children added to an existing parent and
 * ln_job_wait_children on the Redis backend (redis_dynflow.c, lua/add.lua's
 * parent section, lua/wait_children.lua). Internal to src/jobs/redis*.c. */
#ifndef LN_JOBS_REDIS_DYNFLOW_H
#define LN_JOBS_REDIS_DYNFLOW_H

#include "backend.h"
#include "redis_conn.h"

#include <hiredis/hiredis.h>

/* add.lua's parent section after the n jobs' groups, only when one of
 * them has a parent (so a plain add sends nothing more): the prefix, then
 * per job the parent's queue ("" = none), id and LN__FLOW_* bits. On a
 * Cluster each parent's queue base must hash to base's slot: LN_EINVAL. */
int ln__redis_dynflow_push(const ln__redis_conn *c, ln__jobs_be *be, ln__redis_args *a,
                           const char *base, const ln__job_new *jobs, size_t n);

/* add.lua's refusal {RC, i} for job i (a missing parent, a parent that
 * cannot be replaced): the error, rep freed; 0 for any other reply. */
int ln__redis_dynflow_refused(ln__jobs_be *be, redisReply *rep, const ln__job_new *jobs, size_t n);

/* backend.h wait_children (child_queue NULL) and wait_child (only that
 * child of child_queue counts); c routed to base "<prefix>:<queue>:". */
int ln__redis_wait_children(ln__redis_conn *c, ln__jobs_be *be, const char *base,
                            const ln__job_ref *ref, const char *child_queue, const char *child_id);

#endif
