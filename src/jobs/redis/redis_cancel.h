/* redis_cancel.h - cancelling jobs on the Redis backend (redis_cancel.c,
 * store methods version 7; docs/internals/cancel.md). Internal to
 * src/jobs/redis*.c; not API. */
#ifndef LN_JOBS_REDIS_CANCEL_H
#define LN_JOBS_REDIS_CANCEL_H

#include "backend.h"
#include "redis_conn.h"

/* backend.h's cancel and cancel_poll on connection c for the queue whose
 * key base is base ("<prefix>:<queue>:", already routed); failures are
 * described in be's errmsg. */
int ln__redis_cancel(ln__redis_conn *c, const char *base, ln__jobs_be *be, const char *queue,
                     const char *id, const char *reason);
int ln__redis_cancel_poll(ln__redis_conn *c, const char *base, ln__jobs_be *be, int64_t *mark,
                          const ln__job_ref *refs, int *gone, size_t n);

#endif
