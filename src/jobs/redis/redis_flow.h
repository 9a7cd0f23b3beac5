/* redis_flow.h - flows on the Redis backend (redis_flow.c): adding one
 * (lua/flow.lua) and reading a job's flow relations (lua/children.lua).
 * Internal to src/jobs/redis*.c; not API. */
#ifndef LN_JOBS_REDIS_FLOW_H
#define LN_JOBS_REDIS_FLOW_H

#include "backend.h"
#include "redis_conn.h"

/* Add the n nodes (backend.h add_flow) on connection c, whose route is
 * the root's queue base; failures are described in be's errmsg. */
int ln__redis_flow_add(ln__redis_conn *c, ln__jobs_be *be, ln__flow_new *nodes, size_t n);

/* The relations of job id; c routed to base "<prefix>:<queue>:". */
int ln__redis_flow_children(ln__redis_conn *c, ln__jobs_be *be, const char *base, const char *id,
                            ln_job_children *out);

#endif
