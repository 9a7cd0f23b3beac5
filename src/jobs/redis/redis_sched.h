/* redis_sched.h - job schedulers of the Redis backend (redis_sched.c,
 * lua/sched.lua). Internal to src/jobs/redis*.c; not API. Each call runs
 * on connection c for the queue whose key base ("<prefix>:<queue>:") is
 * base, describing failures in be's errmsg; the store methods of the same
 * names (backend.h) in their words. Errors as ln__redis_command. */
#ifndef LN_JOBS_REDIS_SCHED_H
#define LN_JOBS_REDIS_SCHED_H

#include "backend.h"
#include "redis_conn.h"
#include "sched_record.h"

int ln__redis_sched_upsert(ln__redis_conn *c, const char *base, ln__jobs_be *be,
                           const ln__sched_new *s, char **job_id);
int ln__redis_sched_remove(ln__redis_conn *c, const char *base, ln__jobs_be *be, const char *id);
int ln__redis_sched_get(ln__redis_conn *c, const char *base, ln__jobs_be *be, const char *id,
                        ln_job_scheduler *out);
int ln__redis_sched_list(ln__redis_conn *c, const char *base, ln__jobs_be *be, size_t offset,
                         size_t limit, ln_job_scheduler **out, size_t *n);
int ln__redis_sched_taken(ln__redis_conn *c, const char *base, ln__jobs_be *be, const char *job_id);

#endif
