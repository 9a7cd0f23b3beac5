/* redis_admin.h - removing jobs and the queue list of the Redis backend
 * (redis_admin.c).
 * Internal to src/jobs/redis*.c; not API. */
#ifndef LN_JOBS_REDIS_ADMIN_H
#define LN_JOBS_REDIS_ADMIN_H

#include "backend.h"
#include "redis_conn.h"

/* The names of the queues under prefix (at most max, in SCAN's order) on
 * connection c, ln__malloc'd as ln_jobs_logs' lines; failures are
 * described in be's errmsg. Errors as ln__redis_command. */
int ln__redis_queues(ln__redis_conn *c, const char *prefix, ln__jobs_be *be, size_t max,
                     char ***names, size_t *n);

/* backend.h's remove and remove_tree on connection c for the queue whose
 * key base is base ("<prefix>:<queue>:", already routed); failures are
 * described in be's errmsg. */
int ln__redis_remove(ln__redis_conn *c, const char *base, ln__jobs_be *be, const char *queue,
                     const char *id);
int ln__redis_remove_tree(ln__redis_conn *c, const char *base, ln__jobs_be *be, const char *queue,
                          const char *id, size_t max, size_t *removed);
/* backend.h's remove_unprocessed, as remove_tree. */
int ln__redis_remove_unprocessed(ln__redis_conn *c, const char *base, ln__jobs_be *be,
                                 const char *queue, const char *id, size_t max, size_t *removed);
/* backend.h's drain (drain.lua in steps of at most 1,000 jobs: what the
 * steps removed is in *removed also on an error), as remove. */
int ln__redis_drain(ln__redis_conn *c, const char *base, ln__jobs_be *be, size_t *removed);
/* backend.h's obliterate step (one obliterate.lua call), as remove. */
int ln__redis_obliterate(ln__redis_conn *c, const char *base, ln__jobs_be *be, const char *queue,
                         int force, int64_t *left, size_t *removed, int *more);

#endif
