/* retry.c - retry of finished jobs: one job, or a bounded step of a
 * queue's completed or failed jobs back to waiting (ln_jobs_retry_finished).
 * One transaction each.
 */
#include "pg_int.h"

#include "internal.h"

#include <stdio.h>
#include <string.h>

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
        if ((rc = ln__pg_lock_job(be, queue, id, st)) != 0) return rc;
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
