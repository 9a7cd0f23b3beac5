/* redis_pipe.h - pipelined worker steps of the Redis backend (backend.h's
 * pipe_* ops). Internal to src/jobs/redis*.c; not API. */
#ifndef LN_JOBS_REDIS_PIPE_H
#define LN_JOBS_REDIS_PIPE_H

#include "backend.h"
#include "redis_conn.h"

/* A pipe for the queue whose base is "<prefix>:<queue>:" (base); 'worker'
 * is stored as the jobs' processedBy. cfg is borrowed (see
 * ln__redis_wait_open); the strings are copied. Does not connect. 0,
 * LN_ENOMEM, or LN_EBACKEND (no random bytes for the lock tokens). */
int ln__redis_pipe_open(const ln__redis_cfg *cfg, const ln__jobs_ops *ops, const char *base,
                        const char *worker, ln__jobs_pipe **out);

/* backend.h's pipe_send, pipe_recv, pipe_poll, pipe_close. */
int ln__redis_pipe_send(ln__jobs_pipe *p, ln__jobs_step *st);
int ln__redis_pipe_recv(ln__jobs_pipe *p, ln__jobs_step *st);
int ln__redis_pipe_poll(ln__jobs_pipe *p, int *fd);
void ln__redis_pipe_close(ln__jobs_pipe *p);

#endif
