/* redis_view.h - reading the replies of the Redis backend's scripts: a job
 * "view" (job_view in lua/lib.lua) into ln_job_info or ln__job_taken, and
 * typed access to reply arrays. Internal to src/jobs/redis/. */
#ifndef LN_JOBS_REDIS_VIEW_H
#define LN_JOBS_REDIS_VIEW_H

#include "backend.h"

#include <hiredis/hiredis.h>

#include <stddef.h>
#include <stdint.h>

/* Element i of array reply a as an integer (integer or decimal string;
 * 0 for anything else). */
int64_t ln__redis_int_at(const redisReply *a, size_t i);

/* A copy (ln__malloc) of string element i of a in *out, NULL for nil.
 * 0 or LN_ENOMEM. */
int ln__redis_str_at(const redisReply *a, size_t i, char **out);

/* 1 if v has the shape of a job view. */
int ln__redis_is_view(const redisReply *v);

/* Fill *info (zeroed) from view v: 0, or LN_ENOMEM with *info cleared. */
int ln__redis_view_info(const redisReply *v, ln_job_info *info);

/* 1 if v has the shape of a taken view (what a step returns per job). */
int ln__redis_is_taken_view(const redisReply *v);

/* Fill *t from taken view v of a job taken under token: 0, or LN_ENOMEM
 * with *t cleared. The strings are ln__malloc'd (the front owns them;
 * ln__job_taken_free frees them). */
int ln__redis_view_taken(const redisReply *v, const char *token, ln__job_taken *t);

/* A listed row's cursor, "r<state>.<position>:<id>" (position: list.lua's,
 * an integer or a score), ln__malloc'd; NULL for out of memory or a
 * position that is neither string nor integer. */
char *ln__redis_cursor(int state, const redisReply *pos, const char *id);

/* Split cursor after, made for state, into its position (pos, pos_size
 * bytes) and id (*id points into after). 0, or LN_EINVAL with be's
 * errmsg set. */
int ln__redis_parse_cursor(ln__jobs_be *be, const char *after, int state, char *pos,
                           size_t pos_size, const char **id);

#endif
