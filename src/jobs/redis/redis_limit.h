/* redis_limit.h - rate limits and global concurrency of the Redis backend
 * (redis_limit.c, lua/ratelimit.lua). Internal to src/jobs/redis*.c. */
#ifndef LN_JOBS_REDIS_LIMIT_H
#define LN_JOBS_REDIS_LIMIT_H

#include "backend.h"
#include "redis_conn.h"

/* The limits method (backend.h, version 7) for the queue whose key base
 * "<prefix>:<queue>:" is base, on connection c; failures are described in
 * be's errmsg. Errors as ln__redis_command. */
int ln__redis_limits(ln__redis_conn *c, const char *base, ln__jobs_be *be, ln__jobs_limits *l);

#endif
