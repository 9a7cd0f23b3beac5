/* redis_replicas.h - WAIT for replicas after a write (jobs.h
 * ln_jobs_opts.wait_replicas, URL parameter wait_replicas): Redis
 * replicates asynchronously, so a write the primary acknowledged can be
 * lost when a replica takes over after the primary died; WAIT N T blocks
 * until N replicas acknowledged every write of the connection so far, or
 * T ms passed, and answers how many did. Internal to src/jobs/redis/;
 * not API.
 *
 * WAIT counts the writes of its own connection only, so it is sent on the
 * connection (the very node context) that made the write: never through
 * ln__redis_command, which may reconnect or follow the cluster map to
 * another node, where WAIT would confirm nothing.
 */
#ifndef LN_JOBS_REDIS_REPLICAS_H
#define LN_JOBS_REDIS_REPLICAS_H

#include "backend.h"
#include "redis_conn.h"

#include <lanes/jobs.h>

#include <stddef.h>

/* At open: the URL's wait_replicas and wait_timeout_ms win over opts';
 * the timeout defaults to 1000 ms and must be below the reply timeout
 * (cfg->timeout_ms: a WAIT that outlived it would drop the connection). 0,
 * or LN_EINVAL with the reason in err. */
int ln__redis_wait_settle(ln__redis_cfg *cfg, const ln_jobs_opts *opts, char *err, size_t size);

/* After a write on c (cfg->wait_replicas > 0; else 0 at once): WAIT on
 * the context that made it. 0 when enough replicas acknowledged; LN_EIO
 * when fewer did ("WAIT reached 0 of 1 replicas within 1000 ms"), or the
 * connection was lost meanwhile (dropped then), with the reason in c->err
 * after 'what' ("job 42 is on the primary, but"). */
int ln__redis_wait_replicas(ln__redis_conn *c, const char *what);

/* The store's uses (add.c, flow.c, step.c): after an add of n jobs (or
 * a flow of n nodes): 0, or LN_EIO with the detail in be's errmsg, naming
 * the first job's id. After a worker step that recorded outcomes: st->unreplicated
 * = st->ndone when WAIT did not confirm them (the step stands). */
int ln__redis_wait_added(ln__redis_conn *c, ln__jobs_be *be, const ln__job_new *first, size_t n);
void ln__redis_wait_step(ln__redis_conn *c, ln__jobs_step *st);

/* The pipe's side (pipe.c): append WAIT to ctx (0, or LN_ENOMEM),
 * and read a WAIT reply: 1 if enough replicas acknowledged, else 0. */
int ln__redis_wait_append(redisContext *ctx, const ln__redis_cfg *cfg);
int ln__redis_wait_enough(const redisReply *r, const ln__redis_cfg *cfg);

#endif
