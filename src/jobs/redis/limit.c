/* limit.c - rate limits and global concurrency on Redis: one call of
 * lua/ratelimit.lua per op, on BullMQ's own meta fields ('max',
 * 'duration', 'concurrency') and 'limiter' key, so Node's
 * setGlobalRateLimit / setGlobalConcurrency / rateLimit and lanes read and
 * write the same limits (docs/internals/ratelimit.md). */
#include "redis_int.h"

#include "internal.h"
#include "redis_scripts.h"
#include "redis_view.h"

#include <stdio.h>

static const char *const op_name[] = {
    [LN__LIMITS_GET] = "get",
    [LN__LIMITS_SET_RATE] = "rate",
    [LN__LIMITS_SET_CONCURRENCY] = "conc",
    [LN__LIMITS_MANUAL] = "manual",
    [LN__LIMITS_TTL] = "ttl",
};

int ln__redis_limits(ln__jobs_be *be, const char *queue, ln__jobs_limits *l) {
    LN_ASSERT(l->op >= LN__LIMITS_GET && l->op <= LN__LIMITS_TTL);
    ln__redis_be *r = ln__redis_at(be, queue);
    ln__redis_args a = {0};
    ln__redis_args_str(&a, op_name[l->op]);
    if (l->op == LN__LIMITS_SET_RATE || l->op == LN__LIMITS_TTL) ln__redis_args_i64(&a, l->max);
    if (l->op == LN__LIMITS_SET_RATE) ln__redis_args_i64(&a, l->duration_ms);
    if (l->op == LN__LIMITS_SET_CONCURRENCY) ln__redis_args_i64(&a, l->concurrency);
    if (l->op == LN__LIMITS_MANUAL) ln__redis_args_i64(&a, l->ttl_ms);
    int rc = 0;
    redisReply *rep = ln__redis_run(r, LN__RS_RATELIMIT, &a, &rc);
    ln__redis_args_free(&a);
    if (rep == NULL) return rc;
    int ok = l->op == LN__LIMITS_GET ? rep->type == REDIS_REPLY_ARRAY && rep->elements == 3
                                     : rep->type == REDIS_REPLY_INTEGER;
    if (ok && l->op == LN__LIMITS_GET) {
        l->max = ln__redis_int_at(rep, 0);
        l->duration_ms = ln__redis_int_at(rep, 1);
        l->concurrency = ln__redis_int_at(rep, 2);
    } else if (ok && l->op == LN__LIMITS_TTL) {
        l->ttl_ms = rep->integer;
    }
    freeReplyObject(rep);
    return ok ? 0 : ln__jobs_be_err(be, LN_EBACKEND, "redis: unexpected reply to ratelimit");
}
