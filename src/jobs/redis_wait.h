/* redis_wait.h - the blocking wait of the Redis backend (backend.h's
 * wait_* ops): BZPOPMIN on BullMQ's marker key, on a connection of its own.
 * Internal to src/jobs/redis*.c; not API. */
#ifndef LN_JOBS_REDIS_WAIT_H
#define LN_JOBS_REDIS_WAIT_H

#include "backend.h"
#include "redis_conn.h"

/* A wait object for the queue whose base is "<prefix>:<queue>:" (base).
 * cfg is borrowed: the instance that owns it outlives every wait (a worker
 * run closes its wait before it returns, and the handle cannot be closed
 * while a worker runs). ops is the instance's ops table. Does not connect.
 * 0 or LN_ENOMEM. */
int ln__redis_wait_open(const ln__redis_cfg *cfg, const ln__jobs_ops *ops, const char *base,
                        ln__jobs_wait **out);

/* backend.h's wait_arm, wait_read, wait_cancel, wait_close. */
int ln__redis_wait_arm(ln__jobs_wait *w, int64_t timeout_ms, int *fd, int64_t *limit_ms);
int ln__redis_wait_read(ln__jobs_wait *w, int64_t *due_in_ms);
void ln__redis_wait_cancel(ln__jobs_wait *w);
void ln__redis_wait_close(ln__jobs_wait *w);

#endif
