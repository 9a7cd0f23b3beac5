/* redis_pipe.h - pipelined worker steps of the Redis backend (backend.h's
 * pipe methods). Internal to src/jobs/redis*.c; not API. */
#ifndef LN_JOBS_REDIS_PIPE_H
#define LN_JOBS_REDIS_PIPE_H

#include "backend.h"
#include "redis_conn.h"

/* A pipe for the queue whose base is "<prefix>:<queue>:" (base); 'worker'
 * is stored as the jobs' processedBy. cfg is borrowed (see
 * ln__redis_wait_open); the strings are copied. Does not connect. 0,
 * LN_ENOMEM, or LN_EBACKEND (no random bytes for the lock tokens). The
 * object's methods are backend.h's pipe methods (depth LN__PIPE_DEPTH). */
int ln__redis_pipe_open(const ln__redis_cfg *cfg, const char *base, const char *worker,
                        ln__jobs_pipe **out);

#endif
