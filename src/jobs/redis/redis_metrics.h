/* redis_metrics.h - reading a queue's metrics on Redis (redis_metrics.c;
 * lua/metrics.lua). Internal to src/jobs/redis*.c; not API. */
#ifndef LN_JOBS_REDIS_METRICS_H
#define LN_JOBS_REDIS_METRICS_H

#include "backend.h"
#include "redis_conn.h"

/* The store method metrics (backend.h) for the queue whose base
 * "<prefix>:<queue>:" is base, on connection c (routed to its slot);
 * failures are described in be's errmsg. Errors as ln__redis_command. */
int ln__redis_metrics(ln__redis_conn *c, const char *base, ln__jobs_be *be, int type, int64_t start,
                      int64_t end, ln_job_metrics *out);

#endif
