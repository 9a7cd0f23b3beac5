/* step.c - the worker's round trip, top to bottom, in one transaction:
 * record the outcomes, renew leases, promote due delayed jobs, take new
 * ones; and a finished job's retention, which cancel and the stalled check
 * use too.
 *
 * DESIGN
 * Every outcome is an UPDATE guarded by state = 'active' and the job's
 * lock_token: a job whose lease another worker took (or that was canceled)
 * matches no row and the outcome reports LN_ESTALE, changing nothing. A
 * take is one statement: the first `want` waiting jobs in BullMQ's claim
 * order (priority, seq) locked with FOR UPDATE SKIP LOCKED, so concurrent
 * workers (C or Node) never take the same job and never wait for each
 * other. A token is a fresh UUID and the run's number, unique per take. The
 * events are the rows BullMQ's backend writes for the same moves. Due
 * delayed jobs are promoted at most PG_BATCH per step.
 */
#include "pg_int.h"

#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Retention */

/* A JSON number as a count or ms: whole, 0..INT64_MAX (BullMQ's options
 * may hold any number). */
#define CLAMP(x) "least(greatest(floor(" x "), 0), 9223372036854775807)::bigint"

/* The job's own retention option $3 as (LN_KEEP_* mode, value). */
/* clang-format off */
static const char keep_sql[] =
    "SELECT CASE jsonb_typeof(k) WHEN 'boolean' THEN CASE WHEN k = 'true'::jsonb THEN 1 ELSE 4 "
    "END WHEN 'number' THEN 2 WHEN 'object' THEN CASE WHEN jsonb_typeof(k->'age') = 'number' "
    "THEN 3 WHEN jsonb_typeof(k->'count') = 'number' THEN 2 ELSE 0 END ELSE 0 END, "
    "CASE jsonb_typeof(k) WHEN 'number' THEN " CLAMP("k::numeric") " WHEN 'object' THEN "
    "CASE WHEN jsonb_typeof(k->'age') = 'number' THEN " CLAMP("(k->'age')::numeric * 1000")
    " WHEN jsonb_typeof(k->'count') = 'number' THEN " CLAMP("(k->'count')::numeric") " END END "
    "FROM (SELECT opts->$3 AS k FROM @job WHERE queue = $1 AND id = $2) x";
/* clang-format on */

int ln__pg_retain(pg_be *be, const char *queue, const char *id, int completed,
                  const ln_job_keep *worker_keep) {
    const char *p[3] = {queue, id, completed ? "removeOnComplete" : "removeOnFail"};
    int rc;
    PGresult *r = ln__pg_q(be, keep_sql, 3, p, &rc);
    if (r == NULL) return rc;
    if (PQntuples(r) == 0) {
        PQclear(r);
        return 0;
    }
    int mode = (int)ln__pg_i64(r, 0, 0);
    int64_t value = ln__pg_i64(r, 0, 1);
    PQclear(r);
    if (mode == LN_KEEP_ALL) {
        mode = worker_keep->mode;
        value = worker_keep->value;
    }
    char v[24];
    const char *q[3] = {queue, completed ? "completed" : "failed", ln__pg_itoa(v, value)};
    switch (mode) {
    case LN_KEEP_NONE:
        rc = ln__pg_exec(be, "DELETE FROM @job WHERE queue = $1 AND id = $2", 2, p);
        break;
    case LN_KEEP_COUNT:
        rc = ln__pg_exec(be,
                         "DELETE FROM @job WHERE (queue, id) IN (SELECT queue, id FROM @job "
                         "WHERE queue = $1 AND state = $2::@job_state ORDER BY finished_at_ms "
                         "DESC, seq DESC OFFSET $3::bigint LIMIT " PG_BATCH_S ")",
                         3, q);
        break;
    case LN_KEEP_AGE:
        rc = ln__pg_exec(be,
                         "DELETE FROM @job WHERE (queue, id) IN (SELECT queue, id FROM @job "
                         "WHERE queue = $1 AND state = $2::@job_state AND finished_at_ms <= " PG_NOW
                         " - $3::bigint ORDER BY finished_at_ms LIMIT " PG_BATCH_S ")",
                         3, q);
        break;
    default:
        return 0;
    }
    return rc == 0 ? ln__pg_flow_gone(be, queue, 0) : rc;
}

/* ---- 1. Outcomes */

/* What each outcome writes: the guarded UPDATE (returning the event's
 * name and data, and for a completion or a final failure the parent) and
 * whether retention applies. $1 queue, $2 id, $3 token,
 * $4 result / reason, $5 delay or run_at. */
#define GUARD " WHERE queue = $1 AND id = $2 AND state = 'active' AND lock_token = $3 "
#define UNLOCK "lock_token = NULL, locked_until_ms = NULL"
/* A child pending, or failed with fail-parent: a completion is refused. */
#define DEPS_LEFT                                                                                  \
    "EXISTS (SELECT 1 FROM @job_dependency d WHERE d.parent_queue = $1 AND d.parent_id = $2 "      \
    "AND d.status IN ('pending', 'failed'))"
static const char *const outcome_sql[] = {
    [LN__DONE_COMPLETE] =
        "UPDATE @job SET state = 'completed', return_value = $4::text::jsonb, "
        "opts = CASE WHEN $4::text IS NULL THEN opts - 'lanesResult' ELSE "
        "" PG_RAW_SET(
            "$4", "lanesResult") " END, "
                                 "finished_at_ms = " PG_NOW ", attempts_made = attempts_made + 1, "
                                 "" UNLOCK GUARD "AND $5::bigint IS NOT NULL AND NOT " DEPS_LEFT
                                 " RETURNING 'completed', "
                                 "jsonb_build_object('jobId', id, 'returnvalue', "
                                 "coalesce($4::text, 'null'), 'prev', 'active'), parent_queue, "
                                 "parent_id",
    [LN__DONE_RETRY] =
        "UPDATE @job j SET state = CASE WHEN $5::bigint > 0 THEN 'delayed' ELSE 'waiting' "
        "END::@job_state, failed_reason = $4, attempts_made = attempts_made + 1, "
        "process_at_ms = CASE WHEN $5::bigint > 0 THEN " PG_NOW " + $5::bigint END, "
        "delay_ms = $5::bigint, seq = CASE WHEN $5::bigint > 0 THEN seq ELSE " PG_SEQ_BY_LIFO
        " END, " UNLOCK GUARD
        "RETURNING state::text, CASE WHEN state = 'delayed' THEN jsonb_build_object('jobId', id, "
        "'delay', process_at_ms) ELSE jsonb_build_object('jobId', id, 'prev', 'active') END",
    [LN__DONE_FAIL] =
        "UPDATE @job SET state = 'failed', failed_reason = $4, finished_at_ms = " PG_NOW
        ", attempts_made = attempts_made + 1, " UNLOCK GUARD
        "AND $5::bigint IS NOT NULL RETURNING 'failed', jsonb_build_object('jobId', "
        "id, 'failedReason', failed_reason, 'prev', 'active'), parent_queue, parent_id",
    [LN__DONE_DELAY] = "UPDATE @job SET state = 'delayed', process_at_ms = $5::bigint, "
                       "delay_ms = greatest($5::bigint - " PG_NOW ", 0), " UNLOCK GUARD
                       "AND $4::text IS NULL RETURNING 'delayed', jsonb_build_object('jobId', "
                       "id, 'delay', process_at_ms)",
    [LN__DONE_LIMITED] = "UPDATE @job SET state = 'waiting', seq = -nextval('@job_seq'::regclass), "
                         "" UNLOCK GUARD "AND $4::text IS NULL AND $5::bigint IS NOT NULL "
                         "RETURNING 'waiting', jsonb_build_object('jobId', id, 'prev', 'active')",
};

static int write_event(pg_be *be, const char *queue, const char *event, const char *data) {
    const char *p[3] = {queue, event, data};
    return ln__pg_exec(be,
                       "INSERT INTO @event (queue, event, data, created_at_ms) "
                       "VALUES ($1, $2, $3::jsonb, " PG_NOW ")",
                       3, p);
}

/* A completion that matched no row: LN__DONE_PENDING_DEPS when the job
 * is active with that token and has children left (d->rc stays stale
 * otherwise). */
static int refused(pg_be *be, ln__job_done *d, const char *const *p) {
    int rc;
    PGresult *r = ln__pg_q(be,
                           "SELECT 1 FROM @job WHERE queue = $1 AND id = $2 AND state = "
                           "'active' AND lock_token = $3 AND " DEPS_LEFT,
                           3, p, &rc);
    if (r == NULL) return rc;
    if (PQntuples(r) > 0) d->rc = LN__DONE_PENDING_DEPS;
    PQclear(r);
    return 0;
}

static int record(pg_be *be, const char *queue, ln__jobs_step *st, ln__job_done *d) {
    char num[24];
    int64_t v = d->kind == LN__DONE_DELAY ? d->run_at_ms : d->delay_ms;
    const char *arg4 = d->kind == LN__DONE_COMPLETE                            ? d->result
                       : d->kind == LN__DONE_RETRY || d->kind == LN__DONE_FAIL ? d->reason
                                                                               : NULL;
    const char *p[5] = {queue, d->ref.id, d->ref.token, arg4, ln__pg_itoa(num, v)};
    if (d->kind < 0 || d->kind > LN__DONE_LIMITED)
        return ln__jobs_be_err(&be->base, LN_EINVAL, "unknown outcome %d", d->kind);
    int rc;
    PGresult *r = ln__pg_q(be, outcome_sql[d->kind], 5, p, &rc);
    if (r == NULL) return rc;
    if (PQntuples(r) == 0) {
        PQclear(r);
        d->rc = LN_ESTALE;
        return d->kind == LN__DONE_COMPLETE ? refused(be, d, p) : 0;
    }
    d->rc = 0;
    rc = write_event(be, queue, PQgetvalue(r, 0, 0), PQgetvalue(r, 0, 1));
    int final = d->kind == LN__DONE_COMPLETE || d->kind == LN__DONE_FAIL;
    if (rc == 0 && final && !PQgetisnull(r, 0, 2) && !PQgetisnull(r, 0, 3))
        rc = ln__pg_flow_child_done(be, queue, d->ref.id, PQgetvalue(r, 0, 2), PQgetvalue(r, 0, 3),
                                    d->kind == LN__DONE_COMPLETE, arg4);
    PQclear(r);
    if (rc == 0 && d->kind == LN__DONE_FAIL) {
        const char *q[2] = {queue, d->ref.id};
        PGresult *a = ln__pg_q(be,
                               "SELECT jsonb_build_object('jobId', id, 'attemptsMade', "
                               "attempts_made)::text FROM @job WHERE queue = $1 AND id = $2",
                               2, q, &rc);
        if (a == NULL) return rc;
        rc =
            PQntuples(a) > 0 ? write_event(be, queue, "retries-exhausted", PQgetvalue(a, 0, 0)) : 0;
        PQclear(a);
    }
    if (rc == 0 && (d->kind == LN__DONE_COMPLETE || d->kind == LN__DONE_FAIL))
        rc = ln__pg_dedup_release(be, queue, d->ref.id);
    if (rc == 0 && (d->kind == LN__DONE_COMPLETE || d->kind == LN__DONE_FAIL)) {
        int done = d->kind == LN__DONE_COMPLETE;
        rc = ln__pg_retain(be, queue, d->ref.id, done, done ? &st->keep_complete : &st->keep_fail);
    }
    if (rc == 0 && d->kind == LN__DONE_LIMITED) {
        if (d->delay_ms > st->limited_ms) st->limited_ms = d->delay_ms;
        if (d->delay_ms > 0) {
            const char *q[2] = {queue, ln__pg_itoa(num, d->delay_ms)};
            rc = ln__pg_exec(be,
                             "INSERT INTO @rate_limit (queue, points, expire_at_ms) VALUES ($1, "
                             "9007199254740991, " PG_NOW " + $2::bigint) ON CONFLICT (queue) DO "
                             "UPDATE SET points = excluded.points, "
                             "expire_at_ms = excluded.expire_at_ms",
                             2, q);
        }
    }
    return rc;
}

/* ---- 2. Renewals */

static int renew(pg_be *be, const char *queue, ln__jobs_step *st) {
    char lease[24];
    ln__pg_itoa(lease, st->lease_ms);
    for (size_t i = 0; i < st->nrenew; i++) {
        const char *p[4] = {queue, st->renew[i].id, st->renew[i].token, lease};
        int rc;
        PGresult *r = ln__pg_q(
            be, "UPDATE @job SET locked_until_ms = " PG_NOW " + $4::bigint " GUARD "RETURNING 1", 4,
            p, &rc);
        if (r == NULL) return rc;
        st->renew_rc[i] = PQntuples(r) > 0 ? 0 : LN_ESTALE;
        PQclear(r);
    }
    return 0;
}

/* ---- 3. Promotion and take */

static int promote_due(pg_be *be, const char *queue) {
    const char *p[1] = {queue};
    return ln__pg_exec(be,
                       "WITH due AS (SELECT queue, id FROM @job WHERE queue = $1 AND state = "
                       "'delayed' AND process_at_ms <= " PG_NOW " ORDER BY process_at_ms LIMIT "
                       "" PG_BATCH_S " FOR UPDATE SKIP LOCKED), "
                       "up AS (UPDATE @job j SET state = 'waiting', delay_ms = 0, "
                       "seq = nextval('@job_seq'::regclass) FROM due "
                       "WHERE j.queue = due.queue AND j.id = due.id RETURNING j.id, j.seq) "
                       "INSERT INTO @event (queue, event, data, created_at_ms) SELECT $1, "
                       "'waiting', jsonb_build_object('jobId', id, 'prev', 'delayed'), " PG_NOW
                       " FROM up ORDER BY seq",
                       1, p);
}

static int fill_taken(pg_be *be, const PGresult *r, int row, ln__job_taken *t) {
    int oom = 0;
    memset(t, 0, sizeof *t);
    t->ref.id = ln__pg_dup(r, row, 0, &oom);
    snprintf(t->ref.token, sizeof t->ref.token, "%s", PQgetvalue(r, row, PG_JOB_NCOLS));
    t->name = ln__pg_dup(r, row, 2, &oom);
    t->data = ln__pg_dup(r, row, 3, &oom);
    t->traceparent = ln__pg_dup(r, row, 7, &oom);
    t->tracestate = ln__pg_dup(r, row, 8, &oom);
    t->attempts = (int)ln__pg_i64(r, row, 11);
    t->attempts_made = (int)ln__pg_i64(r, row, 12);
    t->attempts_started = (int)ln__pg_i64(r, row, 13);
    const char *bt = PQgetisnull(r, row, 15) ? NULL : PQgetvalue(r, row, 15);
    t->backoff = ln__pg_backoff_kind(bt);
    if (t->backoff == LN_BACKOFF_CUSTOM) t->backoff_type = ln__pg_dup(r, row, 15, &oom);
    t->backoff_ms = ln__pg_i64(r, row, 16);
    double j = PQgetisnull(r, row, 17) ? 0 : strtod(PQgetvalue(r, row, 17), NULL);
    t->backoff_jitter = j < 0 ? 0 : j > 1 ? 1 : j;
    t->timeout_ms = ln__pg_i64(r, row, 22);
    if (t->ref.id == NULL || t->name == NULL || t->data == NULL || oom) {
        ln__job_taken_free(t);
        return ln__pg_oom(be);
    }
    return 0;
}

/* A job claimed with deferred_failure set fails at once with that reason,
 * as a Node worker fails it, instead of being run. */
static int fail_deferred(pg_be *be, const char *queue, ln__jobs_step *st, const PGresult *r,
                         int row) {
    ln__job_done d;
    memset(&d, 0, sizeof d);
    d.kind = LN__DONE_FAIL;
    d.ref.id = PQgetvalue(r, row, 0);
    snprintf(d.ref.token, sizeof d.ref.token, "%s", PQgetvalue(r, row, PG_JOB_NCOLS));
    d.reason = PQgetvalue(r, row, PG_JOB_NCOLS + 1);
    return record(be, queue, st, &d);
}

static int take(pg_be *be, const char *queue, ln__jobs_step *st, size_t n) {
    char want[24], lease[24];
    const char *p[4] = {queue, ln__pg_itoa(want, (int64_t)n), ln__pg_itoa(lease, st->lease_ms),
                        st->no_active_event ? "1" : "0"};
    int rc;
    PGresult *r = ln__pg_q(
        be,
        "WITH c AS (SELECT queue, id, deferred_failure AS df FROM @job WHERE queue = $1 AND "
        "state = 'waiting' ORDER BY priority, seq LIMIT $2::bigint FOR UPDATE SKIP LOCKED), "
        "u AS (UPDATE @job j SET state = 'active', attempts_started = j.attempts_started + 1, "
        "deferred_failure = NULL, "
        "lock_token = gen_random_uuid()::text || ':' || (j.attempts_started + 1), "
        "locked_until_ms = " PG_NOW " + $3::bigint, processed_at_ms = " PG_NOW ", "
        "stalled_marked = false FROM c WHERE j.queue = c.queue AND j.id = c.id RETURNING j.*, "
        "c.df), "
        "ev AS (INSERT INTO @event (queue, event, data, created_at_ms) SELECT $1, 'active', "
        "jsonb_build_object('jobId', id, 'prev', 'waiting'), " PG_NOW " FROM u "
        "WHERE $4::int = 0 ORDER BY priority, seq) "
        "SELECT " PG_JOB_COLS ", j.lock_token, j.df FROM u j ORDER BY j.priority, j.seq",
        4, p, &rc);
    if (r == NULL) return rc;
    int rows = PQntuples(r);
    uint64_t failed = 0;
    for (int i = 0; i < rows && rc == 0; i++) {
        if (!PQgetisnull(r, i, PG_JOB_NCOLS + 1)) { /* BullMQ's deferred failure */
            rc = fail_deferred(be, queue, st, r, i);
            failed++;
            continue;
        }
        rc = fill_taken(be, r, i, &st->taken[st->ntaken]);
        if (rc == 0) st->ntaken++;
    }
    PQclear(r);
    if (rc == 0 && failed > 0)
        rc = ln__pg_metrics_count(be, queue, 0, failed, st->metrics_max_points);
    return rc;
}

static int next_due(pg_be *be, const char *queue, int64_t *out) {
    const char *p[1] = {queue};
    int rc;
    PGresult *r = ln__pg_q(be,
                           "SELECT min(process_at_ms) - " PG_NOW " FROM @job "
                           "WHERE queue = $1 AND state = 'delayed'",
                           1, p, &rc);
    if (r == NULL) return rc;
    int64_t ms = ln__pg_i64(r, 0, 0);
    *out = PQgetisnull(r, 0, 0) ? -1 : ms < 0 ? 0 : ms; /* none, due already, or in ms */
    PQclear(r);
    return 0;
}

/* BullMQ's moveToFinished writes 'drained' after a completion or a final
 * failure that leaves nothing to take: the step took nothing, is not
 * rate limited, nothing is due later, and the queue has nothing waiting,
 * delayed or active and is not paused. Once per step. */
static int drained(pg_be *be, const char *queue, const ln__jobs_step *st, uint64_t nfinal) {
    if (nfinal == 0 || st->ntaken > 0 || st->limited_ms > 0 || st->next_due_ms >= 0) return 0;
    const char *p[1] = {queue};
    return ln__pg_exec(
        be,
        "INSERT INTO @event (queue, event, created_at_ms) SELECT $1, 'drained', " PG_NOW
        " WHERE NOT EXISTS (SELECT 1 FROM @job WHERE queue = $1 AND state IN "
        "('waiting', 'delayed', 'active')) AND NOT EXISTS (SELECT 1 FROM @meta "
        "WHERE queue = $1 AND field = 'paused')",
        1, p);
}

static int step_take(pg_be *be, const char *queue, ln__jobs_step *st) {
    int rc = promote_due(be, queue);
    int paused = rc == 0 ? ln__pg_paused(be, queue) : rc;
    if (paused < 0) return paused;
    size_t allowed = 0;
    int count = 0;
    if (!paused && st->limited_ms == 0) rc = ln__pg_limit_take(be, queue, st, &allowed, &count);
    if (rc == 0 && allowed > 0) rc = take(be, queue, st, allowed);
    if (rc == 0 && count) rc = ln__pg_limit_count(be, queue, st);
    if (rc == 0 && st->ntaken < st->want) rc = next_due(be, queue, &st->next_due_ms);
    return rc;
}

static int step_tx(pg_be *be, const char *queue, ln__jobs_step *st) {
    int rc = 0;
    uint64_t n[2] = {0, 0}; /* final failures, completions */
    for (size_t i = 0; rc == 0 && i < st->ndone; i++) {
        ln__job_done *d = &st->done[i];
        rc = record(be, queue, st, d);
        if (rc == 0 && d->rc == 0 && (d->kind == LN__DONE_COMPLETE || d->kind == LN__DONE_FAIL))
            n[d->kind == LN__DONE_COMPLETE]++;
    }
    for (int k = 0; rc == 0 && k < 2; k++)
        rc = ln__pg_metrics_count(be, queue, k, n[k], st->metrics_max_points);
    if (rc == 0) rc = renew(be, queue, st);
    if (rc == 0 && st->want > 0) rc = step_take(be, queue, st);
    if (rc == 0 && st->want == 0 && n[0] + n[1] > 0) rc = next_due(be, queue, &st->next_due_ms);
    if (rc == 0) rc = drained(be, queue, st, n[0] + n[1]);
    if (rc == 0 && (st->ndone > 0 || st->ntaken > 0)) rc = ln__pg_notify_events(be, queue);
    return rc;
}

int ln__pg_step(ln__jobs_be *b, const char *queue, ln__jobs_step *st) {
    pg_be *be = pgbe(b);
    st->ntaken = 0;
    st->next_due_ms = -1;
    st->limited_ms = 0;
    st->unreplicated = 0;
    int rc = ln__pg_begin(be);
    if (rc == 0) rc = step_tx(be, queue, st);
    if (rc == 0) rc = ln__pg_commit(be);
    if (rc == 0) return 0;
    ln__pg_rollback(be);
    for (size_t i = 0; i < st->ntaken; i++) ln__job_taken_free(&st->taken[i]);
    st->ntaken = 0;
    return rc;
}

/* ---- Beside the step: release, progress, a log line */

int ln__pg_release(ln__jobs_be *b, const char *queue, const ln__job_ref *refs, int *rcs, size_t n) {
    pg_be *be = pgbe(b);
    int rc = ln__pg_begin(be);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const char *p[3] = {queue, refs[i].id, refs[i].token};
        PGresult *r = ln__pg_q(be,
                               "UPDATE @job SET state = 'waiting', attempts_started = "
                               "greatest(attempts_started - 1, 0), " UNLOCK GUARD "RETURNING 1",
                               3, p, &rc);
        if (r == NULL) break;
        rcs[i] = PQntuples(r) > 0 ? 0 : LN_ESTALE;
        PQclear(r);
    }
    if (rc == 0) rc = ln__pg_notify_jobs(be, queue);
    if (rc == 0) rc = ln__pg_commit(be);
    return rc == 0 ? 0 : ln__pg_fail(be, rc);
}

int ln__pg_progress(ln__jobs_be *b, const char *queue, const ln__job_ref *ref, const char *json) {
    pg_be *be = pgbe(b);
    const char *p[4] = {queue, ref->id, ref->token, json};
    int rc;
    PGresult *r =
        ln__pg_q(be,
                 "WITH u AS (UPDATE @job SET progress = $4::text::jsonb, opts = " PG_RAW_SET(
                     "$4", "lanesProgress") GUARD
                 "RETURNING id) INSERT INTO @event (queue, event, data, "
                 "created_at_ms) SELECT $1, 'progress', jsonb_build_object('jobId', id, "
                 "'data', $4::text), " PG_NOW " FROM u RETURNING 1",
                 4, p, &rc);
    if (r == NULL) return rc;
    int n = PQntuples(r);
    PQclear(r);
    return n > 0 ? 0
                 : ln__jobs_be_err(b, LN_ESTALE, "job '%s' is not active with that token", ref->id);
}

int ln__pg_log(ln__jobs_be *b, const char *queue, const ln__job_ref *ref, const char *line) {
    pg_be *be = pgbe(b);
    const char *p[4] = {queue, ref->id, ref->token, line};
    int rc;
    PGresult *r = ln__pg_q(be,
                           "WITH j AS (SELECT queue, id FROM @job" GUARD "FOR UPDATE) "
                           "INSERT INTO @job_log (queue, job_id, idx, row) SELECT j.queue, j.id, "
                           "coalesce((SELECT max(idx) + 1 FROM @job_log l WHERE l.queue = j.queue "
                           "AND l.job_id = j.id), 0), $4 FROM j RETURNING 1",
                           4, p, &rc);
    if (r == NULL) return rc;
    int n = PQntuples(r);
    PQclear(r);
    return n > 0 ? 0
                 : ln__jobs_be_err(b, LN_ESTALE, "job '%s' is not active with that token", ref->id);
}
