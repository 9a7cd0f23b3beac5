/* redis_backoff.h - a job's backoff in the Redis store's opts and views
 * (backoff.c). Not API. */
#ifndef LN_JOBS_REDIS_BACKOFF_H
#define LN_JOBS_REDIS_BACKOFF_H

#include "redis_conn.h"

#include <lanes/jobs.h>

#include <hiredis/hiredis.h>
#include <jansson.h>

/* add.lua's and flow.lua's two backoff arguments for o: the type ("" for
 * the default: no opts.backoff) and "<ms>" or "<ms>:<jitter>". */
void ln__redis_args_backoff(ln__redis_args *a, const ln_job_opts *o);

/* o's backoff as BullMQ stores it ({type, delay[, jitter]}), a new
 * reference, or NULL for the default (none stored) or out of memory. */
json_t *ln__redis_backoff_json(const ln_job_opts *o);

/* A view's backoff jitter (a text or nil) and custom type name (a text or
 * nil; then *type = LN_BACKOFF_CUSTOM and *name_out a copy). 0 or
 * LN_ENOMEM. */
int ln__redis_backoff_view(const redisReply *jitter, const redisReply *name, int *type,
                           double *jitter_out, char **name_out);

#endif /* LN_JOBS_REDIS_BACKOFF_H */
