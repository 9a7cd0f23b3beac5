/* admin.c - a queue as a whole: the store's queue names, pause and resume
 * (BullMQ's meta.paused row), clean and drain in bounded steps, and the
 * store's check.
 */
#include "pg_int.h"

#include "internal.h"

#include <stdio.h>
#include <string.h>

int ln__pg_queues(ln__jobs_be *b, size_t max, char ***names, size_t *n) {
    pg_be *be = pgbe(b);
    *names = NULL;
    *n = 0;
    char lim[24];
    const char *p[1] = {ln__pg_itoa(lim, (int64_t)max)};
    int rc;
    PGresult *r =
        ln__pg_q(be, "SELECT DISTINCT queue FROM @meta ORDER BY 1 LIMIT $1::bigint", 1, p, &rc);
    if (r == NULL) return rc;
    int rows = PQntuples(r);
    char **arr = rows > 0 ? ln__calloc((size_t)rows, sizeof *arr) : NULL;
    int oom = rows > 0 && arr == NULL;
    for (int i = 0; !oom && i < rows; i++) arr[i] = ln__pg_dup(r, i, 0, &oom);
    PQclear(r);
    if (oom) {
        ln_jobs_free_lines(arr, (size_t)rows);
        return ln__pg_oom(be);
    }
    *names = arr;
    *n = (size_t)rows;
    return 0;
}

int ln__pg_pause(ln__jobs_be *b, const char *queue, int paused) {
    pg_be *be = pgbe(b);
    const char *p[1] = {queue};
    int rc = ln__pg_begin(be);
    PGresult *r = NULL;
    if (rc == 0)
        r = ln__pg_q(be,
                     paused ? "INSERT INTO @meta (queue, field, value) VALUES ($1, 'paused', '1') "
                              "ON CONFLICT DO NOTHING RETURNING 1"
                            : "DELETE FROM @meta WHERE queue = $1 AND field = 'paused' RETURNING 1",
                     1, p, &rc);
    if (r == NULL) return ln__pg_fail(be, rc);
    int changed = PQntuples(r) > 0;
    PQclear(r);
    if (changed) {
        rc = ln__pg_exec(be,
                         paused ? "INSERT INTO @event (queue, event, created_at_ms) VALUES ($1, "
                                  "'paused', " PG_NOW ")"
                                : "INSERT INTO @event (queue, event, created_at_ms) VALUES ($1, "
                                  "'resumed', " PG_NOW ")",
                         1, p);
        if (rc == 0 && !paused) rc = ln__pg_notify_jobs(be, queue);
    }
    if (rc == 0) rc = ln__pg_touch_queue(be, queue);
    if (rc == 0) rc = ln__pg_commit(be);
    return rc == 0 ? 0 : ln__pg_fail(be, rc);
}

int ln__pg_is_paused(ln__jobs_be *b, const char *queue, int *paused) {
    int rc = ln__pg_paused(pgbe(b), queue);
    if (rc < 0) return rc;
    *paused = rc;
    return 0;
}

/* One transaction: delete what sql selects (a statement returning the
 * count), *n the rows deleted. */
static int delete_step(pg_be *be, const char *sql, int np, const char *const *p, size_t *n) {
    int rc = ln__pg_begin(be);
    PGresult *r = rc == 0 ? ln__pg_q(be, sql, np, p, &rc) : NULL;
    if (r == NULL) return ln__pg_fail(be, rc);
    *n = (size_t)ln__pg_i64(r, 0, 0);
    PQclear(r);
    rc = ln__pg_commit(be);
    return rc == 0 ? 0 : ln__pg_fail(be, rc);
}

/* The parents of the children a clean or a drain removed, released in a
 * transaction of their own (flow.c). */
static int gone_tx(pg_be *be, const char *queue) {
    int rc = ln__pg_begin(be);
    if (rc == 0) rc = ln__pg_flow_gone(be, queue, 1);
    if (rc == 0) rc = ln__pg_commit(be);
    return rc == 0 ? 0 : ln__pg_fail(be, rc);
}

int ln__pg_clean(ln__jobs_be *b, const char *queue, int state, int64_t age_ms, uint64_t keep,
                 size_t *removed) {
    pg_be *be = pgbe(b);
    *removed = 0;
    char age[24], kp[24];
    const char *p[4] = {queue, state == LN_JOB_COMPLETED ? "completed" : "failed",
                        ln__pg_itoa(age, age_ms),
                        ln__pg_itoa(kp, keep > INT64_MAX ? INT64_MAX : (int64_t)keep)};
    /* The newest `keep` are spared: each step skips them again. */
    for (;;) {
        size_t n = 0;
        int rc = delete_step(
            be,
            "WITH k AS (SELECT id FROM @job WHERE queue = $1 AND state = $2::@job_state "
            "ORDER BY finished_at_ms DESC, seq DESC LIMIT $4::bigint), "
            "c AS (SELECT queue, id FROM @job WHERE queue = $1 AND state = $2::@job_state AND "
            "($3::bigint < 0 OR finished_at_ms < " PG_NOW " - $3::bigint) AND id NOT IN "
            "(SELECT id FROM k) ORDER BY finished_at_ms, seq LIMIT " PG_BATCH_S " FOR UPDATE), "
            "x AS (DELETE FROM @dedup dd USING c WHERE dd.queue = c.queue AND dd.job_id = c.id), "
            "d AS (DELETE FROM @job j USING c WHERE j.queue = c.queue AND j.id = c.id "
            "RETURNING 1) SELECT count(*) FROM d",
            4, p, &n);
        if (rc != 0) return rc;
        *removed += n;
        if (n < PG_BATCH) break;
    }
    int rc = *removed > 0 ? gone_tx(be, queue) : 0;
    if (rc != 0) return rc;
    if (*removed > 0) {
        char cnt[24];
        const char *q[2] = {queue, ln__pg_itoa(cnt, (int64_t)*removed)};
        return ln__pg_exec(be,
                           "INSERT INTO @event (queue, event, data, created_at_ms) VALUES ($1, "
                           "'cleaned', jsonb_build_object('count', $2::text), " PG_NOW ")",
                           2, q);
    }
    return 0;
}

int ln__pg_drain(ln__jobs_be *b, const char *queue, size_t *removed) {
    pg_be *be = pgbe(b);
    *removed = 0;
    const char *p[1] = {queue};
    size_t budget = 0;
    int rc;
    PGresult *r = ln__pg_q(be,
                           "SELECT count(*) FROM @job WHERE queue = $1 AND state IN ('waiting', "
                           "'delayed')",
                           1, p, &rc);
    if (r == NULL) return rc;
    budget = (size_t)ln__pg_i64(r, 0, 0);
    PQclear(r);
    for (size_t looked = 0; looked < budget + PG_BATCH;) {
        size_t n = 0;
        rc = delete_step(be,
                         "WITH c AS (SELECT queue, id FROM @job j WHERE queue = $1 AND state IN "
                         "('waiting', 'delayed') AND NOT (scheduler_id IS NOT NULL AND EXISTS "
                         "(SELECT 1 FROM @scheduler s WHERE s.queue = j.queue AND "
                         "s.scheduler_id = j.scheduler_id)) LIMIT " PG_BATCH_S
                         " FOR UPDATE SKIP LOCKED), "
                         "x AS (DELETE FROM @dedup dd USING c WHERE dd.queue = c.queue AND "
                         "dd.job_id = c.id RETURNING dd.dedup_id), "
                         "y AS (DELETE FROM @dedup_next dn USING x WHERE dn.queue = $1 AND "
                         "dn.dedup_id = x.dedup_id), "
                         "d AS (DELETE FROM @job j USING c WHERE j.queue = c.queue AND "
                         "j.id = c.id RETURNING 1) SELECT count(*) FROM d",
                         1, p, &n);
        if (rc != 0) return rc;
        *removed += n;
        looked += PG_BATCH;
        if (n < PG_BATCH) break;
    }
    return *removed > 0 ? gone_tx(be, queue) : 0;
}

int ln__pg_check(ln__jobs_be *b, int thorough) {
    pg_be *be = pgbe(b);
    (void)thorough;
    const char *p[1] = {be->qschema};
    int rc;
    PGresult *r = ln__pg_q(be,
                           "SELECT to_regclass($1 || '.job') IS NOT NULL AND "
                           "to_regclass($1 || '.event') IS NOT NULL AND "
                           "to_regclass($1 || '.meta') IS NOT NULL AND "
                           "to_regclass($1 || '.job_log') IS NOT NULL",
                           1, p, &rc);
    if (r == NULL) return rc;
    int ok = PQgetvalue(r, 0, 0)[0] == 't';
    PQclear(r);
    if (ok) return 0;
    return ln__jobs_be_err(b, LN_ECORRUPT,
                           "postgres: schema \"%s\" lacks BullMQ's tables (job, event, meta, "
                           "job_log)",
                           be->schema);
}

/* ---- Obliterate, one step */

static int obliterate_rest(pg_be *be, const char *queue) {
    const char *p[2] = {queue, be->qschema};
    static const char *const sql[] = {
        "DELETE FROM @scheduler WHERE queue = $1", "DELETE FROM @event WHERE queue = $1",
        "DELETE FROM @metrics WHERE queue = $1",   "DELETE FROM @rate_limit WHERE queue = $1",
        "DELETE FROM @dedup WHERE queue = $1",     "DELETE FROM @dedup_next WHERE queue = $1",
        "DELETE FROM @meta WHERE queue = $1",
    };
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < sizeof sql / sizeof sql[0]; i++)
        rc = ln__pg_exec(be, sql[i], 1, p);
    PGresult *r = rc == 0 ? ln__pg_q(be,
                                     "SELECT to_regclass($2 || '.' || s) IS NOT NULL, s FROM "
                                     "(SELECT 'bullmq_jid_' || md5($1) AS s) x",
                                     2, p, &rc)
                          : NULL;
    if (r == NULL) return rc;
    char drop[200] = "";
    if (PQgetvalue(r, 0, 0)[0] == 't') /* the name is hex digits */
        snprintf(drop, sizeof drop, "DROP SEQUENCE IF EXISTS %s.%s", be->qschema,
                 PQgetvalue(r, 0, 1));
    PQclear(r);
    return drop[0] ? ln__pg_exec(be, drop, 0, NULL) : 0;
}

static int obliterate_tx(pg_be *be, const char *queue, int force, int64_t *left, size_t *removed,
                         int *more) {
    const char *p[1] = {queue};
    int rc;
    PGresult *r = ln__pg_q(be,
                           "SELECT EXISTS (SELECT 1 FROM @meta WHERE queue = $1 AND field = "
                           "'paused'), EXISTS (SELECT 1 FROM @job WHERE queue = $1 AND state = "
                           "'active'), (SELECT count(*) FROM @job WHERE queue = $1) + (SELECT "
                           "count(*) FROM @scheduler WHERE queue = $1)",
                           1, p, &rc);
    if (r == NULL) return rc;
    int paused = PQgetvalue(r, 0, 0)[0] == 't', active = PQgetvalue(r, 0, 1)[0] == 't';
    if (left != NULL) *left = ln__pg_i64(r, 0, 2);
    PQclear(r);
    if (!paused)
        return ln__jobs_be_err(&be->base, LN_EBUSY, "queue '%s' was resumed meanwhile", queue);
    if (active && !force)
        return ln__jobs_be_err(&be->base, LN_EBUSY,
                               "queue '%s' has active jobs (obliterate with force to remove them)",
                               queue);
    r = ln__pg_q(be,
                 "WITH c AS (SELECT queue, id FROM @job WHERE queue = $1 LIMIT " PG_BATCH_S
                 " FOR UPDATE), x AS (DELETE FROM @job_dependency dep USING c WHERE "
                 "dep.child_queue = c.queue AND dep.child_id = c.id AND (dep.status <> "
                 "'pending' OR dep.parent_queue = $1)), "
                 "d AS (DELETE FROM @job j USING c WHERE j.queue = c.queue AND j.id = c.id "
                 "RETURNING 1) SELECT count(*) FROM d",
                 1, p, &rc);
    if (r == NULL) return rc;
    size_t n = (size_t)ln__pg_i64(r, 0, 0);
    PQclear(r);
    /* a parent of another queue whose last pending child went is released */
    if (n > 0 && (rc = ln__pg_flow_gone(be, queue, 0)) != 0) return rc;
    *removed += n;
    *more = n > 0;
    return n > 0 ? 0 : obliterate_rest(be, queue);
}

int ln__pg_obliterate(ln__jobs_be *b, const char *queue, int force, int64_t *left, size_t *removed,
                      int *more) {
    pg_be *be = pgbe(b);
    size_t before = *removed;
    int rc = ln__pg_begin(be);
    if (rc == 0) rc = obliterate_tx(be, queue, force, left, removed, more);
    if (rc == 0) rc = ln__pg_commit(be);
    if (rc == 0) return 0;
    *removed = before;
    return ln__pg_fail(be, rc);
}
