/* limit.c - the SQLite store: rate limits and global concurrency,
 * the same semantics as BullMQ's on Redis (docs/internals/ratelimit.md):
 * one lanes_limits row per queue holds the global limits (max, duration,
 * concurrency; 0 = none) and the counter of the current window (win_count
 * jobs taken, the window ending at win_until, store clock ms; a window
 * that ended counts 0, as an expired Redis key). The step checks and
 * counts in its own write transaction, so no two workers can both take the
 * last place of a window. A queue without a row and a worker without a
 * limit cost one primary-key lookup per taking step. */
#include "sqlite_int.h"

#include "internal.h"

#include <stdlib.h>
#include <string.h>

#define FULL 9007199254740991LL /* BullMQ's queue.rateLimit: full for any max */
#define DEFAULT_DURATION_MS 1000

typedef struct limits_row {
    int found;
    int64_t max, duration, concurrency, count, until;
} limits_row;

static int read_row(sq_be *be, const char *queue, limits_row *r) {
    memset(r, 0, sizeof *r);
    sqlite3_stmt *s = ln__sq_stmt_get(be, S_LIMIT_GET);
    if (s == NULL) return LN_EBACKEND;
    sqlite3_bind_text(s, 1, queue, -1, SQLITE_STATIC);
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        r->found = 1;
        r->max = sqlite3_column_int64(s, 0);
        r->duration = sqlite3_column_int64(s, 1);
        r->concurrency = sqlite3_column_int64(s, 2);
        r->count = sqlite3_column_int64(s, 3);
        r->until = sqlite3_column_int64(s, 4);
    }
    sqlite3_reset(s);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : ln__sq_err(be, rc, "read limits");
}

/* The counter now: 0 once its window ended. */
static int64_t window_count(const limits_row *r, int64_t now) {
    return r->until > now ? r->count : 0;
}

/* The max a take applies (BullMQ's rule: the global one, else the
 * worker's) and its window (the worker's, else the global one). */
static int64_t take_max(const limits_row *r, const ln__jobs_step *st, int64_t *duration) {
    int64_t max = r->max > 0 ? r->max : st->rate_max;
    *duration = st->rate_max > 0  ? st->rate_duration_ms
                : r->duration > 0 ? r->duration
                                  : DEFAULT_DURATION_MS;
    return max;
}

static int write_count(sq_be *be, const char *queue, int64_t count, int64_t until) {
    sqlite3_stmt *s = ln__sq_stmt_get(be, S_LIMIT_COUNT);
    if (s == NULL) return LN_EBACKEND;
    sqlite3_bind_text(s, 1, queue, -1, SQLITE_STATIC);
    sqlite3_bind_int64(s, 2, count);
    sqlite3_bind_int64(s, 3, until);
    return ln__sq_run(be, s, "count the rate limit");
}

static int active_count(sq_be *be, const char *queue, int64_t *n) {
    sqlite3_stmt *s = ln__sq_stmt_get(be, S_LIMIT_ACTIVE);
    if (s == NULL) return LN_EBACKEND;
    sqlite3_bind_text(s, 1, queue, -1, SQLITE_STATIC);
    int rc = sqlite3_step(s);
    *n = rc == SQLITE_ROW ? sqlite3_column_int64(s, 0) : 0;
    sqlite3_reset(s);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : ln__sq_err(be, rc, "active count");
}

int ln__sq_limit_take(sq_be *be, const char *queue, ln__jobs_step *st, int64_t now, size_t *allowed,
                      int *counted) {
    *allowed = st->want;
    *counted = 0;
    if (st->limited_ms > 0) { /* a "rate limited" outcome of this step */
        *allowed = 0;
        return 0;
    }
    limits_row r;
    int err = read_row(be, queue, &r);
    if (err != 0 || (!r.found && st->rate_max == 0)) return err;
    int64_t duration, max = take_max(&r, st, &duration);
    if (max > 0) {
        int64_t used = window_count(&r, now);
        if (used >= max) { /* at the limit: nothing until the window ends */
            st->limited_ms = r.until - now;
            *allowed = 0;
            return 0;
        }
        if ((uint64_t)(max - used) < *allowed) *allowed = (size_t)(max - used);
        *counted = 1;
    }
    if (r.concurrency > 0) {
        int64_t active = 0;
        if ((err = active_count(be, queue, &active)) != 0) return err;
        int64_t room = r.concurrency > active ? r.concurrency - active : 0;
        if ((uint64_t)room < *allowed) *allowed = (size_t)room;
    }
    return 0;
}

int ln__sq_limit_count(sq_be *be, const char *queue, const ln__jobs_step *st, int64_t now) {
    if (st->ntaken == 0) return 0;
    limits_row r;
    int err = read_row(be, queue, &r);
    if (err != 0) return err;
    int64_t duration, max = take_max(&r, st, &duration);
    LN_ASSERT(max > 0); /* limit_take said this take is counted */
    int64_t used = window_count(&r, now);
    /* The first take of a window starts it (Redis: INCR to 1, PEXPIRE). */
    return write_count(be, queue, used + (int64_t)st->ntaken, used == 0 ? now + duration : r.until);
}

int ln__sq_limit_requeue(sq_be *be, const char *queue, ln__job_done *d, ln__jobs_step *st,
                         int64_t now) {
    sqlite3_stmt *s = ln__sq_stmt_get(be, S_LIMIT_REQUEUE);
    if (s == NULL) return LN_EBACKEND;
    sqlite3_bind_int64(s, 1, (int64_t)d->ref.key);
    sqlite3_bind_int64(s, 2, strtoll(d->ref.token, NULL, 10));
    sqlite3_bind_text(s, 3, queue, -1, SQLITE_STATIC);
    int err = ln__sq_run(be, s, "rate limited");
    if (err != 0) return err;
    d->rc = sqlite3_changes(be->db) == 1 ? 0 : LN_ESTALE;
    if (d->rc != 0) return 0;
    if (d->delay_ms > 0 && (err = write_count(be, queue, FULL, now + d->delay_ms)) != 0) return err;
    limits_row r;
    if ((err = read_row(be, queue, &r)) != 0) return err;
    if (r.until - now > st->limited_ms) st->limited_ms = r.until - now;
    return ln__sq_event(be, queue, "waiting", d->ref.id, "prev", "active", NULL, NULL, now);
}

/* getRateLimitTtl: the window's rest when it holds max or more (max 0:
 * the global max; no max at all: the window's rest). */
static int64_t ttl_of(const limits_row *r, int64_t max, int64_t now) {
    if (max == 0) max = r->max;
    if (max > 0 && window_count(r, now) < max) return 0;
    return r->until > now ? r->until - now : 0;
}

static int limits_once(sq_be *be, const char *queue, ln__jobs_limits *l) {
    int64_t now;
    int err = ln__sq_begin_write(be, &now);
    if (err != 0) return err;
    sqlite3_stmt *s = NULL;
    limits_row r;
    switch (l->op) {
    case LN__LIMITS_SET_RATE:
    case LN__LIMITS_SET_CONCURRENCY:
        s = ln__sq_stmt_get(be, l->op == LN__LIMITS_SET_RATE ? S_LIMIT_RATE : S_LIMIT_CONC);
        if (s == NULL) {
            err = LN_EBACKEND;
            break;
        }
        sqlite3_bind_text(s, 1, queue, -1, SQLITE_STATIC);
        sqlite3_bind_int64(s, 2, l->op == LN__LIMITS_SET_RATE ? l->max : l->concurrency);
        if (l->op == LN__LIMITS_SET_RATE) sqlite3_bind_int64(s, 3, l->duration_ms);
        err = ln__sq_run(be, s, "set limits");
        break;
    case LN__LIMITS_MANUAL:
        err = write_count(be, queue, l->ttl_ms > 0 ? FULL : 0, l->ttl_ms > 0 ? now + l->ttl_ms : 0);
        break;
    default: /* GET, TTL */
        if ((err = read_row(be, queue, &r)) != 0) break;
        l->duration_ms = r.duration;
        l->concurrency = r.concurrency;
        if (l->op == LN__LIMITS_TTL)
            l->ttl_ms = ttl_of(&r, l->max, now);
        else
            l->max = r.max;
        break;
    }
    if (err == 0) return ln__sq_commit(be);
    ln__sq_rollback(be);
    return err;
}

int ln__sq_limits(ln__jobs_be *b, const char *queue, ln__jobs_limits *l) {
    return limits_once((sq_be *)b, queue, l);
}
