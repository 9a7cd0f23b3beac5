/* edit.c - changing one stored job: remove, promote, retry (one job or a
 * bounded step of a queue's finished jobs), cancel, and the worker's check
 * for canceled jobs (cancel_poll). Each is one transaction.
 */
#include "pg_int.h"

#include "internal.h"

#include <stdio.h>
#include <string.h>

/* The job's state (text into st, 32 bytes) under a row lock; LN_ENOENT. */
static int lock_job(pg_be *be, const char *queue, const char *id, char *st) {
    const char *p[2] = {queue, id};
    int rc;
    PGresult *r = ln__pg_q(be,
                           "SELECT state::text, scheduler_id IS NOT NULL AND EXISTS (SELECT 1 "
                           "FROM @scheduler s WHERE s.queue = j.queue AND s.scheduler_id = "
                           "j.scheduler_id AND 'repeat:' || s.scheduler_id || ':' || "
                           "s.next_run_ms = j.id) FROM @job j WHERE queue = $1 AND id = $2 FOR "
                           "UPDATE",
                           2, p, &rc);
    if (r == NULL) return rc;
    if (PQntuples(r) == 0) {
        PQclear(r);
        return ln__jobs_be_err(&be->base, LN_ENOENT, "queue '%s' has no job '%s'", queue, id);
    }
    snprintf(st, 32, "%s", PQgetvalue(r, 0, 0));
    if (PQgetvalue(r, 0, 1)[0] == 't') strcat(st, "+");
    PQclear(r);
    return 0;
}

static int remove_tx(pg_be *be, const char *queue, const char *id) {
    char st[32];
    int rc = lock_job(be, queue, id, st);
    if (rc != 0) return rc;
    if (strncmp(st, "active", 6) == 0)
        return ln__jobs_be_err(&be->base, LN_EBUSY, "job '%s' is active", id);
    size_t len = strlen(st);
    if (len > 0 && st[len - 1] == '+')
        return ln__jobs_be_err(&be->base, LN_EBUSY,
                               "job '%s' is its job scheduler's current iteration: remove the "
                               "scheduler instead",
                               id);
    if (len > 0 && st[len - 1] == '+') st[len - 1] = '\0';
    const char *p[3] = {queue, id, st};
    rc = ln__pg_dedup_drop_next(be, queue, id);
    if (rc == 0) rc = ln__pg_exec(be, "DELETE FROM @job WHERE queue = $1 AND id = $2", 2, p);
    if (rc == 0) rc = ln__pg_exec(be, "DELETE FROM @dedup WHERE queue = $1 AND job_id = $2", 2, p);
    if (rc == 0) rc = ln__pg_flow_gone(be, queue, 0);
    if (rc == 0)
        rc = ln__pg_exec(
            be,
            "INSERT INTO @event (queue, event, data, created_at_ms) VALUES ($1, "
            "'removed', jsonb_build_object('jobId', $2::text, 'prev', $3::text), " PG_NOW ")",
            3, p);
    return rc;
}

int ln__pg_remove(ln__jobs_be *b, const char *queue, const char *id) {
    pg_be *be = pgbe(b);
    int rc = ln__pg_begin(be);
    if (rc == 0) rc = remove_tx(be, queue, id);
    if (rc == 0) rc = ln__pg_commit(be);
    return rc == 0 ? 0 : ln__pg_fail(be, rc);
}

int ln__pg_promote(ln__jobs_be *b, const char *queue, const char *id) {
    pg_be *be = pgbe(b);
    char st[32];
    int rc = ln__pg_begin(be);
    if (rc == 0) rc = lock_job(be, queue, id, st);
    if (rc == 0 && strncmp(st, "delayed", 7) != 0) {
        if (strchr(st, '+')) *strchr(st, '+') = '\0';
        rc = ln__jobs_be_err(b, LN_EINVAL, "job '%s' is %s, not delayed", id, st);
    }
    const char *p[2] = {queue, id};
    if (rc == 0)
        rc = ln__pg_exec(be,
                         "WITH u AS (UPDATE @job SET state = 'waiting', delay_ms = 0, "
                         "process_at_ms = NULL, seq = nextval('@job_seq'::regclass) "
                         "WHERE queue = $1 AND id = $2 RETURNING id) "
                         "INSERT INTO @event (queue, event, data, created_at_ms) SELECT $1, "
                         "'waiting', jsonb_build_object('jobId', id, 'prev', 'delayed'), " PG_NOW
                         " FROM u",
                         2, p);
    if (rc == 0) rc = ln__pg_notify_jobs(be, queue);
    if (rc == 0) rc = ln__pg_commit(be);
    return rc == 0 ? 0 : ln__pg_fail(be, rc);
}

/* ---- Retry of finished jobs */

#define RETRY_SET                                                                                  \
    "state = 'waiting', attempts_made = 0, seq = " PG_SEQ_BY_LIFO ", "                             \
    "failed_reason = CASE WHEN j.state = 'failed' THEN NULL ELSE j.failed_reason END, "            \
    "return_value = CASE WHEN j.state = 'completed' THEN NULL ELSE j.return_value END, "           \
    "processed_at_ms = NULL, finished_at_ms = NULL, stacktrace = NULL"

static int retry_tx(pg_be *be, const char *queue, const char *id, const char *state,
                    int64_t *before_ms, size_t *count) {
    int rc;
    if (id != NULL) {
        char st[32];
        if ((rc = lock_job(be, queue, id, st)) != 0) return rc;
        if (strchr(st, '+')) *strchr(st, '+') = '\0';
        if (strcmp(st, state) != 0)
            return ln__jobs_be_err(&be->base, LN_EINVAL, "job '%s' is %s, not %s", id, st, state);
    }
    if (id == NULL && *before_ms < 0) {
        PGresult *r = ln__pg_q(be, "SELECT " PG_NOW, 0, NULL, &rc);
        if (r == NULL) return rc;
        *before_ms = ln__pg_i64(r, 0, 0);
        PQclear(r);
    }
    char before[24];
    const char *p[4] = {queue, state, id, ln__pg_itoa(before, id != NULL ? 0 : *before_ms)};
    PGresult *r =
        ln__pg_q(be,
                 "WITH c AS (SELECT queue, id FROM @job WHERE queue = $1 AND state = "
                 "$2::@job_state AND (CASE WHEN $3::text IS NULL THEN finished_at_ms <= "
                 "$4::bigint ELSE id = $3::text END) ORDER BY finished_at_ms, seq LIMIT "
                 "" PG_BATCH_S " FOR UPDATE), "
                 "u AS (UPDATE @job j SET " RETRY_SET " FROM c WHERE j.queue = c.queue "
                 "AND j.id = c.id RETURNING j.id, j.seq), "
                 "dp AS (UPDATE @job_dependency d SET status = 'pending', value = NULL FROM u "
                 "WHERE d.child_queue = $1 AND d.child_id = u.id AND d.status <> 'pending' "
                 "RETURNING d.parent_queue, d.parent_id), "
                 "pp AS (UPDATE @job pj SET pending_deps = coalesce(pj.pending_deps, 0) + x.n "
                 "FROM (SELECT parent_queue, parent_id, count(*) AS n FROM dp GROUP BY 1, 2) x "
                 "WHERE pj.queue = x.parent_queue AND pj.id = x.parent_id), "
                 "ev AS (INSERT INTO @event (queue, event, data, created_at_ms) SELECT "
                 "$1, 'waiting', jsonb_build_object('jobId', id, 'prev', $2::text), " PG_NOW
                 " FROM u ORDER BY seq) SELECT count(*) FROM u",
                 4, p, &rc);
    if (r == NULL) return rc;
    *count = (size_t)ln__pg_i64(r, 0, 0);
    PQclear(r);
    return *count > 0 ? ln__pg_notify_jobs(be, queue) : 0;
}

int ln__pg_retry(ln__jobs_be *b, const char *queue, const char *id, int state, int64_t *before_ms,
                 size_t *count) {
    pg_be *be = pgbe(b);
    *count = 0;
    const char *st = state == LN_JOB_COMPLETED ? "completed" : "failed";
    int rc = ln__pg_begin(be);
    if (rc == 0) rc = retry_tx(be, queue, id, st, before_ms, count);
    if (rc == 0) rc = ln__pg_commit(be);
    if (rc == 0) return 0;
    *count = 0;
    return ln__pg_fail(be, rc);
}

/* ---- Cancel */

static int cancel_tx(pg_be *be, const char *queue, const char *id, const char *reason) {
    char st[32];
    int rc = lock_job(be, queue, id, st);
    if (rc != 0) return rc;
    if (strchr(st, '+'))
        return ln__jobs_be_err(&be->base, LN_EINVAL,
                               "job '%s' is its job scheduler's current iteration", id);
    if (strcmp(st, "completed") == 0 || strcmp(st, "failed") == 0)
        return ln__jobs_be_err(&be->base, LN_EINVAL, "job '%s' is %s", id, st);
    if (strcmp(st, "waiting-children") == 0)
        return ln__jobs_be_err(&be->base, LN_EINVAL, "job '%s' is in waiting-children", id);
    const char *p[4] = {queue, id, reason, st};
    rc = ln__pg_exec(be,
                     "WITH u AS (UPDATE @job SET attempts_made = attempts_made + CASE WHEN "
                     "state = 'active' THEN 1 ELSE 0 END, state = 'failed', failed_reason = $3, "
                     "finished_at_ms = " PG_NOW ", lock_token = NULL, locked_until_ms = NULL "
                     "WHERE queue = $1 AND id = $2 RETURNING id) "
                     "INSERT INTO @event (queue, event, data, created_at_ms) SELECT $1, 'failed', "
                     "jsonb_build_object('jobId', id, 'failedReason', $3::text, 'prev', "
                     "$4::text), " PG_NOW " FROM u",
                     4, p);
    return rc;
}

int ln__pg_cancel(ln__jobs_be *b, const char *queue, const char *id, const char *reason) {
    pg_be *be = pgbe(b);
    ln_job_keep all = {LN_KEEP_ALL, 0};
    int rc = ln__pg_begin(be);
    if (rc == 0) rc = cancel_tx(be, queue, id, reason);
    if (rc == 0) rc = ln__pg_flow_finished(be, queue, id, 0, reason);
    if (rc == 0) rc = ln__pg_dedup_release(be, queue, id);
    if (rc == 0) rc = ln__pg_retain(be, queue, id, 0, &all);
    if (rc == 0) rc = ln__pg_commit(be);
    return rc == 0 ? 0 : ln__pg_fail(be, rc);
}

int ln__pg_cancel_poll(ln__jobs_be *b, const char *queue, int64_t *mark, const ln__job_ref *refs,
                       int *gone, size_t n) {
    pg_be *be = pgbe(b);
    (void)mark;
    for (size_t i = 0; i < n; i++) {
        const char *p[3] = {queue, refs[i].id, refs[i].token};
        int rc;
        PGresult *r = ln__pg_q(be,
                               "SELECT 1 FROM @job WHERE queue = $1 AND id = $2 AND state = "
                               "'active' AND lock_token = $3",
                               3, p, &rc);
        if (r == NULL) return rc;
        gone[i] = PQntuples(r) == 0;
        PQclear(r);
    }
    return 0;
}
