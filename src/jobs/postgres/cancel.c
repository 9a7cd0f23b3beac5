/* cancel.c - cancelling a job (ln_jobs_cancel), and the worker's check for
 * canceled jobs it holds (cancel_poll). One transaction each.
 */
#include "pg_int.h"

#include "internal.h"

#include <stdio.h>
#include <string.h>

static int cancel_tx(pg_be *be, const char *queue, const char *id, const char *reason) {
    char st[32];
    int rc = ln__pg_lock_job(be, queue, id, st);
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
