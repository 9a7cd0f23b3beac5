/* stalled.c - active jobs whose lease ran out: back to waiting, or failed
 * past max_stalled (never an iteration of a job scheduler that still
 * exists, as BullMQ's stalled check). One transaction of at most PG_BATCH
 * jobs, taken with FOR UPDATE SKIP LOCKED so a finish in flight is not
 * waited for. Their tokens are cleared: a late finish is LN_ESTALE.
 */
#include "pg_int.h"

#include "internal.h"

#include <stdio.h>
#include <string.h>

/* $1 queue, $2 max_stalled, $3 reason. A row: id, failed (bool). */
static const char stalled_sql[] =
    "WITH c AS (SELECT queue, id FROM @job WHERE queue = $1 AND state = 'active' AND "
    "locked_until_ms < " PG_NOW " ORDER BY locked_until_ms LIMIT " PG_BATCH_S
    " FOR UPDATE SKIP LOCKED), "
    "f AS (SELECT j.queue, j.id, j.stalled_count + 1 > $2::int AND NOT (j.scheduler_id IS NOT NULL "
    "AND EXISTS (SELECT 1 FROM @scheduler s WHERE s.queue = j.queue AND s.scheduler_id = "
    "j.scheduler_id)) AS fails FROM @job j JOIN c ON j.queue = c.queue AND j.id = c.id), "
    "u AS (UPDATE @job j SET stalled_count = j.stalled_count + 1, lock_token = NULL, "
    "locked_until_ms = NULL, stalled_marked = false, "
    "state = CASE WHEN f.fails THEN 'failed' ELSE 'waiting' END::@job_state, "
    "attempts_made = j.attempts_made + CASE WHEN f.fails THEN 1 ELSE 0 END, "
    "failed_reason = CASE WHEN f.fails THEN $3 ELSE j.failed_reason END, "
    "finished_at_ms = CASE WHEN f.fails THEN " PG_NOW " ELSE j.finished_at_ms END, "
    "seq = CASE WHEN f.fails THEN j.seq ELSE " PG_SEQ_BY_LIFO " END "
    "FROM f WHERE j.queue = f.queue AND j.id = f.id RETURNING j.id, f.fails, j.seq), "
    "ev AS (INSERT INTO @event (queue, event, data, created_at_ms) SELECT $1, e.event, "
    "e.data, " PG_NOW " FROM u, LATERAL (VALUES (1, 'stalled', jsonb_build_object('jobId', u.id)), "
    "(2, CASE WHEN u.fails THEN 'failed' ELSE 'waiting' END, CASE WHEN u.fails THEN "
    "jsonb_build_object('jobId', u.id, 'failedReason', $3::text, 'prev', 'active') ELSE "
    "jsonb_build_object('jobId', u.id, 'prev', 'active') END)) AS e(k, event, data) "
    "ORDER BY u.seq, e.k) "
    "SELECT id, fails FROM u";

int ln__pg_recover_stalled(ln__jobs_be *b, const char *queue, unsigned max_stalled,
                           const char *reason, size_t *requeued, size_t *failed) {
    pg_be *be = pgbe(b);
    *requeued = *failed = 0;
    char max[24];
    const char *p[3] = {queue, ln__pg_itoa(max, max_stalled), reason};
    int rc = ln__pg_begin(be);
    PGresult *r = rc == 0 ? ln__pg_q(be, stalled_sql, 3, p, &rc) : NULL;
    if (r == NULL) return ln__pg_fail(be, rc);
    ln_job_keep all = {LN_KEEP_ALL, 0};
    int rows = PQntuples(r);
    for (int i = 0; i < rows && rc == 0; i++) {
        if (PQgetvalue(r, i, 1)[0] != 't') {
            (*requeued)++;
            continue;
        }
        (*failed)++;
        rc = ln__pg_dedup_release(be, queue, PQgetvalue(r, i, 0));
        if (rc == 0) rc = ln__pg_retain(be, queue, PQgetvalue(r, i, 0), 0, &all);
    }
    PQclear(r);
    if (rc == 0 && *requeued > 0) rc = ln__pg_notify_jobs(be, queue);
    if (rc == 0) rc = ln__pg_commit(be);
    if (rc == 0) return 0;
    *requeued = *failed = 0;
    return ln__pg_fail(be, rc);
}
