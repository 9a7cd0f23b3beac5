/* redis_wait.h - the blocking wait of the Redis backend (backend.h's
 * wait methods): BZPOPMIN on BullMQ's marker key, on a connection of its own.
 * Internal to src/jobs/redis*.c; not API. */
#ifndef LN_JOBS_REDIS_WAIT_H
#define LN_JOBS_REDIS_WAIT_H

#include "backend.h"
#include "redis_conn.h"

/* A wait object for the queue whose base is "<prefix>:<queue>:" (base).
 * cfg is borrowed: the instance that owns it outlives every wait (a worker
 * run closes its wait before it returns, and the handle cannot be closed
 * while a worker runs). Does not connect. 0 or LN_ENOMEM. The object's
 * methods are backend.h's wait methods. */
int ln__redis_wait_open(const ln__redis_cfg *cfg, const char *base, ln__jobs_wait **out);

#endif
