/* cancel.c - the SQLite store: cancelling jobs (the cancel and
 * cancel_poll methods; docs/internals/cancel.md). A cancel is one write transaction
 * that moves the job's row to failed; for an active job that voids the
 * holder's lease by itself, since every worker op on a job wants it active
 * (state 3) with the holder's token. The cancel poll of a worker is thus a
 * look at whether each job it holds is still active with its token: one
 * primary-key lookup per job, no table of its own and no schema change. */
#include "sqlite_int.h"

#include "internal.h"

#include <stdio.h>
#include <stdlib.h>

/* The row of job id: rid, stored state, priority, caller id (or NULL). */
typedef struct sq_row {
    int64_t rid;
    int state, priority;
    char *pub; /* its public id, for the event (ln__malloc'd; any length) */
} sq_row;

/* Job id's row: ln__sq_find_job's lookup (rid and state), then the two
 * columns only a cancel needs, by primary key. */
static int find_row(sq_be *be, const char *queue, const char *id, sq_row *row) {
    int err = ln__sq_find_job(be, queue, id, &row->rid, &row->state);
    if (err != 0) return err;
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v2(be->db, "SELECT priority, cid FROM lanes_jobs WHERE rid = ?1", -1,
                                &s, NULL);
    if (rc != SQLITE_OK) return ln__sq_err(be, rc, "cancel");
    sqlite3_bind_int64(s, 1, row->rid);
    rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        row->priority = sqlite3_column_int(s, 0);
        const char *cid = (const char *)sqlite3_column_text(s, 1);
        if ((row->pub = ln__sq_id_dup(row->rid, cid)) == NULL)
            err = ln__jobs_be_err(&be->base, LN_ENOMEM, "out of memory");
    } else {
        err = ln__sq_err(be, rc, "cancel"); /* (the write transaction holds the row) */
    }
    sqlite3_finalize(s);
    return err;
}

/* The state a job was canceled from, as the "failed" event's prev. */
static const char *prev_name(const sq_row *row) {
    if (row->state == ST_ACTIVE) return "active";
    if (row->state == ST_DELAYED) return "delayed";
    return row->priority > 0 ? "prioritized" : "waiting";
}

/* Fail the row (a run counts only if it was active), tell a flow child's
 * parent of the final failure (its failure options apply, as for any final
 * failure: jobs.h "Flows"), write the event, apply remove_on_fail. The
 * counters follow by trigger (sqlite_int.h). */
static int fail_row(sq_be *be, const char *queue, const sq_row *row, const char *reason,
                    int64_t now) {
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v2(be->db,
                                "UPDATE lanes_jobs SET state = 5, attempts_made = attempts_made + "
                                "(state = 3), reason = ?2, finished_at = ?3, lease_until = NULL "
                                "WHERE rid = ?1 AND state IN (0, 1, 3) "
                                "RETURNING keep_f_mode, keep_f_val, parent_rid, pflags",
                                -1, &s, NULL);
    if (rc != SQLITE_OK) return ln__sq_err(be, rc, "cancel");
    sqlite3_bind_int64(s, 1, row->rid);
    sqlite3_bind_text(s, 2, reason, -1, SQLITE_STATIC);
    sqlite3_bind_int64(s, 3, now);
    rc = sqlite3_step(s);
    int mode = 0, pflags = 0;
    int64_t value = 0, prid = 0; /* a flow child's parent, else 0 */
    if (rc == SQLITE_ROW) {
        mode = sqlite3_column_int(s, 0);
        value = sqlite3_column_int64(s, 1);
        prid = sqlite3_column_int64(s, 2);
        pflags = sqlite3_column_int(s, 3);
        rc = sqlite3_step(s);
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) return ln__sq_err(be, rc, "cancel");
    int err = 0;
    if (prid > 0)
        err = ln__sq_flow_child_done(be, queue, row->pub, row->rid, prid, pflags, 0, reason, now,
                                     NULL);
    if (err != 0) return err;
    err = ln__sq_event(be, queue, "failed", row->pub, "failedReason", reason, "prev",
                       prev_name(row), now);
    if (err != 0) return err;
    return ln__sq_apply_keep(be, queue, row->rid, ST_FAILED, mode, value, now, 0);
}

static int cancel_once(sq_be *be, const char *queue, const char *id, const char *reason) {
    int64_t now;
    int err = ln__sq_begin_write(be, &now);
    if (err != 0) return err;
    sq_row row = {0};
    err = find_row(be, queue, id, &row);
    if (err == 0 && row.state != ST_READY && row.state != ST_DELAYED && row.state != ST_ACTIVE)
        err = ln__jobs_be_err(
            &be->base, LN_EINVAL,
            "job '%s' is %s: only a waiting, prioritized, delayed or active job can be canceled",
            id, ln_job_state_name(row.state));
    int iteration =
        err == 0 && row.state != ST_ACTIVE ? ln__sq_is_current_iteration(be, queue, id) : 0;
    if (iteration != 0)
        err = iteration < 0 ? iteration
                            : ln__jobs_be_err(&be->base, LN_EINVAL,
                                              "job '%s' is its job scheduler's current iteration: "
                                              "remove the scheduler instead",
                                              id);
    if (err == 0) err = fail_row(be, queue, &row, reason, now);
    ln__free(row.pub);
    if (err != 0) {
        ln__sq_rollback(be);
        return err;
    }
    return ln__sq_commit(be);
}

int ln__sq_cancel(ln__jobs_be *b, const char *queue, const char *id, const char *reason) {
    sq_be *be = (sq_be *)b;
    int err = cancel_once(be, queue, id, reason);
    if (ln__sq_retry_for_space(be, err, 0)) err = cancel_once(be, queue, id, reason);
    return ln__sq_relieved(be, err);
}

int ln__sq_cancel_poll(ln__jobs_be *b, const char *queue, int64_t *mark, const ln__job_ref *refs,
                       int *gone, size_t n) {
    sq_be *be = (sq_be *)b;
    (void)mark; /* every look is cheap here: no mark to skip it */
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v2(be->db,
                                "SELECT 1 FROM lanes_jobs WHERE rid = ?1 AND token = ?2 "
                                "AND state = 3 AND queue = ?3",
                                -1, &s, NULL);
    if (rc != SQLITE_OK) return ln__sq_err(be, rc, "cancel poll");
    int err = 0;
    for (size_t i = 0; i < n && err == 0; i++) {
        sqlite3_bind_int64(s, 1, (sqlite3_int64)refs[i].key);
        sqlite3_bind_int64(s, 2, strtoll(refs[i].token, NULL, 10));
        sqlite3_bind_text(s, 3, queue, -1, SQLITE_STATIC);
        rc = sqlite3_step(s);
        if (rc == SQLITE_ROW || rc == SQLITE_DONE)
            gone[i] = rc == SQLITE_DONE;
        else
            err = ln__sq_err(be, rc, "cancel poll");
        sqlite3_reset(s);
    }
    sqlite3_finalize(s);
    return err;
}
