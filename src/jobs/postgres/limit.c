/* limit.c - rate limits and global concurrency as BullMQ's PostgreSQL
 * backend keeps them (docs/internals/postgres.md "Rate limit and global
 * concurrency"): the queue's limits in meta (max, duration, concurrency),
 * the limiter's window in rate_limit (points taken, the window's end). A
 * take checks and counts under BullMQ's advisory locks for the limiter and
 * for concurrency, so C and Node workers on one queue never overshoot
 * together. The rule of the other stores (docs/internals/ratelimit.md):
 * the queue's max wins over the worker's, the worker's window over the
 * queue's; a window that ended counts 0.
 */
#include "pg_int.h"

#include "internal.h"

#include <stdio.h>
#include <string.h>

#define FULL "9007199254740991" /* a manual limit: full for any max */
#define DEFAULT_DURATION_MS 1000

typedef struct limits_row {
    int64_t max, duration, concurrency, points, until, now;
} limits_row;

static int read_row(pg_be *be, const char *queue, limits_row *r) {
    const char *p[1] = {queue};
    int rc;
    PGresult *res =
        ln__pg_q(be,
                 "SELECT (SELECT value::bigint FROM @meta WHERE queue = $1 AND field = 'max'), "
                 "(SELECT value::bigint FROM @meta WHERE queue = $1 AND field = 'duration'), "
                 "(SELECT value::bigint FROM @meta WHERE queue = $1 AND field = 'concurrency'), "
                 "(SELECT points FROM @rate_limit WHERE queue = $1), "
                 "(SELECT expire_at_ms FROM @rate_limit WHERE queue = $1), " PG_NOW,
                 1, p, &rc);
    if (res == NULL) return rc;
    r->max = ln__pg_i64(res, 0, 0);
    r->duration = ln__pg_i64(res, 0, 1);
    r->concurrency = ln__pg_i64(res, 0, 2);
    r->points = ln__pg_i64(res, 0, 3);
    r->until = ln__pg_i64(res, 0, 4);
    r->now = ln__pg_i64(res, 0, 5);
    PQclear(res);
    return 0;
}

static int64_t used_now(const limits_row *r) {
    return r->until > r->now ? r->points : 0;
}

static int lock(pg_be *be, const char *what, const char *queue) {
    const char *p[2] = {what, queue};
    return ln__pg_exec(be, "SELECT pg_advisory_xact_lock(hashtext($1 || $2))", 2, p);
}

int ln__pg_limit_take(pg_be *be, const char *queue, ln__jobs_step *st, size_t *allowed,
                      int *count) {
    *allowed = st->want;
    *count = 0;
    limits_row r;
    int rc = read_row(be, queue, &r);
    if (rc != 0) return rc;
    int64_t max = r.max > 0 ? r.max : st->rate_max;
    if (max > 0) {
        if ((rc = lock(be, "bullmq:limiter:", queue)) != 0 || (rc = read_row(be, queue, &r)) != 0)
            return rc;
        int64_t used = used_now(&r);
        if (used >= max) {
            st->limited_ms = r.until - r.now;
            *allowed = 0;
            return 0;
        }
        if ((uint64_t)(max - used) < *allowed) *allowed = (size_t)(max - used);
        *count = 1;
    } else if (used_now(&r) >= 9007199254740991LL) { /* a manual limit */
        st->limited_ms = r.until - r.now;
        *allowed = 0;
        return 0;
    }
    if (r.concurrency > 0) {
        if ((rc = lock(be, "bullmq:concurrency:", queue)) != 0) return rc;
        const char *p[1] = {queue};
        PGresult *res = ln__pg_q(
            be, "SELECT count(*) FROM @job WHERE queue = $1 AND state = 'active'", 1, p, &rc);
        if (res == NULL) return rc;
        int64_t active = ln__pg_i64(res, 0, 0);
        PQclear(res);
        int64_t room = r.concurrency > active ? r.concurrency - active : 0;
        if ((uint64_t)room < *allowed) *allowed = (size_t)room;
    }
    return 0;
}

int ln__pg_limit_count(pg_be *be, const char *queue, const ln__jobs_step *st) {
    if (st->ntaken == 0) return 0;
    limits_row r;
    int rc = read_row(be, queue, &r);
    if (rc != 0) return rc;
    int64_t duration = st->rate_max > 0 ? st->rate_duration_ms
                       : r.duration > 0 ? r.duration
                                        : DEFAULT_DURATION_MS;
    int64_t used = used_now(&r);
    char pts[24], until[24];
    const char *p[3] = {queue, ln__pg_itoa(pts, used + (int64_t)st->ntaken),
                        ln__pg_itoa(until, used == 0 ? r.now + duration : r.until)};
    return ln__pg_exec(be,
                       "INSERT INTO @rate_limit (queue, points, expire_at_ms) VALUES ($1, "
                       "$2::bigint, $3::bigint) ON CONFLICT (queue) DO UPDATE SET points = "
                       "excluded.points, expire_at_ms = excluded.expire_at_ms",
                       3, p);
}

static int set_field(pg_be *be, const char *queue, const char *field, int64_t v) {
    char num[24];
    const char *p[3] = {queue, field, ln__pg_itoa(num, v)};
    if (v <= 0) return ln__pg_exec(be, "DELETE FROM @meta WHERE queue = $1 AND field = $2", 2, p);
    return ln__pg_exec(be,
                       "INSERT INTO @meta (queue, field, value) VALUES ($1, $2, $3) ON CONFLICT "
                       "(queue, field) DO UPDATE SET value = excluded.value",
                       3, p);
}

static int limits_tx(pg_be *be, const char *queue, ln__jobs_limits *l) {
    limits_row r;
    int rc = 0;
    char ttl[24];
    const char *p[2] = {queue, ttl};
    switch (l->op) {
    case LN__LIMITS_SET_RATE:
        rc = set_field(be, queue, "max", l->max);
        if (rc == 0) rc = set_field(be, queue, "duration", l->max > 0 ? l->duration_ms : 0);
        return rc == 0 ? ln__pg_touch_queue(be, queue) : rc;
    case LN__LIMITS_SET_CONCURRENCY:
        rc = set_field(be, queue, "concurrency", l->concurrency);
        return rc == 0 ? ln__pg_touch_queue(be, queue) : rc;
    case LN__LIMITS_MANUAL:
        if (l->ttl_ms <= 0)
            return ln__pg_exec(be, "DELETE FROM @rate_limit WHERE queue = $1", 1, p);
        ln__pg_itoa(ttl, l->ttl_ms);
        return ln__pg_exec(be,
                           "INSERT INTO @rate_limit (queue, points, expire_at_ms) VALUES ($1, " FULL
                           ", " PG_NOW " + $2::bigint) ON CONFLICT (queue) DO UPDATE SET points "
                           "= excluded.points, expire_at_ms = excluded.expire_at_ms",
                           2, p);
    default: /* GET, TTL */
        if ((rc = read_row(be, queue, &r)) != 0) return rc;
        l->duration_ms = r.duration;
        l->concurrency = r.concurrency;
        if (l->op != LN__LIMITS_TTL) {
            l->max = r.max;
            return 0;
        }
        int64_t max = l->max == 0 ? r.max : l->max;
        l->ttl_ms = max > 0 && used_now(&r) < max ? 0 : r.until > r.now ? r.until - r.now : 0;
        return 0;
    }
}

int ln__pg_limits(ln__jobs_be *b, const char *queue, ln__jobs_limits *l) {
    pg_be *be = pgbe(b);
    int rc = ln__pg_begin(be);
    if (rc == 0) rc = limits_tx(be, queue, l);
    if (rc == 0) rc = ln__pg_commit(be);
    return rc == 0 ? 0 : ln__pg_fail(be, rc);
}
