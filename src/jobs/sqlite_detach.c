/* sqlite_detach.c - BullMQ's job.removeChildDependency() on the SQLite
 * backend (jobs_flows.h ln_jobs_remove_child_dependency): a pending child
 * leaves its parent's lanes_deps, the parent's deps count drops, and a
 * parent in waiting-children left with none is released as the delete of
 * its last pending child releases it (the schema's lanes_deps_child_gone
 * trigger: ready, or delayed by its own delay, with its event). Primary
 * key statements only, inside the edit method's write transaction. */
#include "sqlite_int.h"

#include "../internal.h"

#include <stdio.h>

/* Prepare sql, bind a and b (as ?1, ?2), step once; a row's columns stay
 * readable in *out (the caller finalizes it) or it is finalized here. */
static int step1(sq_be *be, const char *sql, int64_t a, int64_t b, sqlite3_stmt **out, int *row) {
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v2(be->db, sql, -1, &s, NULL);
    if (rc != SQLITE_OK) return ln__sq_err(be, rc, "remove child dependency");
    sqlite3_bind_int64(s, 1, a);
    sqlite3_bind_int64(s, 2, b);
    rc = sqlite3_step(s);
    *row = rc == SQLITE_ROW;
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        sqlite3_finalize(s);
        return ln__sq_err(be, rc, "remove child dependency");
    }
    if (out != NULL && *row) {
        *out = s;
        return 0;
    }
    sqlite3_finalize(s);
    return 0;
}

/* Parent prid, left with no pending child, out of waiting-children: ready,
 * or delayed by its own delay, with the event the trigger's release has. */
static int release(sq_be *be, int64_t prid, int64_t now) {
    sqlite3_stmt *s = NULL;
    int row = 0;
    int err = step1(be,
                    "UPDATE lanes_jobs SET state = CASE WHEN delay > 0 THEN 1 ELSE 0 END, "
                    "run_at = ?2 + delay WHERE rid = ?1 AND state = 7 AND deps = 0 "
                    "RETURNING queue, cid, delay",
                    prid, now, &s, &row);
    if (err != 0 || !row) return err;
    char num[24], due[24];
    const char *queue = (const char *)sqlite3_column_text(s, 0);
    const char *cid = (const char *)sqlite3_column_text(s, 1);
    int64_t delay = sqlite3_column_int64(s, 2);
    const char *id = ln__sq_public_id(num, sizeof num, prid, cid != NULL && cid[0] ? cid : NULL);
    snprintf(due, sizeof due, "%lld", (long long)(now + delay));
    if (delay <= 0)
        err = ln__sq_event(be, queue, "waiting", id, "prev", "waiting-children", NULL, NULL, now);
    else
        err = ln__sq_event(be, queue, "delayed", id, "delay", due, NULL, NULL, now);
    int rc = sqlite3_step(s);
    sqlite3_finalize(s);
    if (err == 0 && rc != SQLITE_DONE) err = ln__sq_err(be, rc, "remove child dependency");
    return err;
}

int ln__sq_edit_detach(sq_be *be, int64_t rid, int64_t now, ln__jobs_edit *e) {
    sqlite3_stmt *s = NULL;
    int row = 0;
    e->removed = 0;
    int err = step1(be, "SELECT parent_rid FROM lanes_jobs WHERE rid = ?1", rid, 0, &s, &row);
    if (err != 0 || !row) return err;
    int has_parent = sqlite3_column_type(s, 0) != SQLITE_NULL;
    int64_t prid = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    if (!has_parent) return 0;
    if ((err = step1(be, "SELECT 1 FROM lanes_jobs WHERE rid = ?1", prid, 0, NULL, &row)) != 0)
        return err;
    if (!row)
        return ln__jobs_be_err(&be->base, LN_ENOENT, "the parent of job '%s' no longer exists",
                               e->id);
    if ((err = step1(be,
                     "DELETE FROM lanes_deps WHERE parent_rid = ?1 AND child_rid = ?2 AND "
                     "status = 0 RETURNING 1",
                     prid, rid, NULL, &row)) != 0 ||
        !row)
        return err; /* not pending: processed, failed, or never a dependency */
    /* the RETURNING row is stepped once: finalizing it completes the DELETE */
    if ((err = step1(be, "UPDATE lanes_jobs SET deps = deps - 1 WHERE rid = ?1", prid, 0, NULL,
                     &row)) != 0)
        return err;
    if ((err = release(be, prid, now)) != 0) return err;
    err = step1(be, "UPDATE lanes_jobs SET parent_rid = NULL, pflags = pflags & ?2 WHERE rid = ?1",
                rid, SQ_FLOW_PARENT, NULL, &row);
    if (err == 0) e->removed = 1;
    return err;
}
