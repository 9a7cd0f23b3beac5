/* flow_parent.c - the SQLite store: a job added with a parent that exists
 * (ln_job_opts.parent_*) ln_job_wait_children and ln_job_wait_child (jobs_flows.h "Children
 * of an existing parent"; docs/internals/flows.md "Adding to an existing
 * parent"). The relations are a flow child's (flow.c): parent_rid
 * and pflags on the child, a lanes_deps row, the parent's deps and its
 * SQ_FLOW_PARENT bit. These are cold paths: their statements are prepared
 * per call rather than kept in the backend's cache. */
#include "sqlite_int.h"

#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BIND_TEXT(s, i, v) sqlite3_bind_text((s), (i), (v), -1, SQLITE_STATIC)

static sqlite3_stmt *prep(sq_be *be, const char *sql, const char *what) {
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v2(be->db, sql, -1, &s, NULL);
    if (rc != SQLITE_OK) {
        (void)ln__sq_err(be, rc, what);
        sqlite3_finalize(s);
        return NULL;
    }
    return s;
}

/* Step s to its end and finalize it: 0 or LN_E*. */
static int run_once(sq_be *be, sqlite3_stmt *s, const char *what) {
    int err = ln__sq_run(be, s, what);
    sqlite3_finalize(s);
    return err;
}

/* The child row rid: its parent and failure options. */
static int set_child(sq_be *be, int64_t rid, int64_t prid, int flags) {
    sqlite3_stmt *s = prep(be,
                           "UPDATE lanes_jobs SET parent_rid = ?2, pflags = (pflags & ?4) | ?3 "
                           "WHERE rid = ?1",
                           "add (parent)");
    if (s == NULL) return LN_EBACKEND;
    sqlite3_bind_int64(s, 1, rid);
    sqlite3_bind_int64(s, 2, prid);
    sqlite3_bind_int(s, 3, flags);
    sqlite3_bind_int(s, 4, SQ_FLOW_PARENT);
    return run_once(be, s, "add (parent)");
}

/* lanes_deps row (prid, rid) with status (0 pending: the parent's deps up
 * by one; 1 processed with value), and the parent marked as one. */
static int add_dep(sq_be *be, int64_t prid, int64_t rid, const char *queue, const char *id,
                   int status, const char *value) {
    size_t ql = strlen(queue), il = strlen(id);
    char *key = ln__malloc(ql + il + 2);
    if (key == NULL) return ln__jobs_be_err(&be->base, LN_ENOMEM, "out of memory");
    snprintf(key, ql + il + 2, "%s:%s", queue, id);
    sqlite3_stmt *s = prep(be,
                           "INSERT INTO lanes_deps(parent_rid, child_rid, child_key, status, "
                           "value) VALUES(?1, ?2, ?3, ?4, ?5)",
                           "add (dependency)");
    int err = LN_EBACKEND;
    if (s != NULL) {
        sqlite3_bind_int64(s, 1, prid);
        sqlite3_bind_int64(s, 2, rid);
        BIND_TEXT(s, 3, key);
        sqlite3_bind_int(s, 4, status);
        if (value != NULL) BIND_TEXT(s, 5, value);
        err = run_once(be, s, "add (dependency)");
    }
    ln__free(key);
    if (err != 0) return err;
    s = prep(be, "UPDATE lanes_jobs SET deps = deps + ?2, pflags = pflags | ?3 WHERE rid = ?1",
             "add (parent dependencies)");
    if (s == NULL) return LN_EBACKEND;
    sqlite3_bind_int64(s, 1, prid);
    sqlite3_bind_int(s, 2, status == 0 ? 1 : 0);
    sqlite3_bind_int(s, 3, SQ_FLOW_PARENT);
    return run_once(be, s, "add (parent dependencies)");
}

/* The existing job rid (a custom id added again): its state, its
 * parent's rid (0: none, or one that is gone), whether prid already has
 * it as a dependency, and its result (ln__malloc'd or NULL). */
typedef struct existing {
    int state;
    int64_t parent;
    int linked;
    char *result;
} existing;

static int read_existing(sq_be *be, int64_t rid, int64_t prid, existing *e) {
    sqlite3_stmt *s = prep(be,
                           "SELECT j.state, (SELECT p.rid FROM lanes_jobs p WHERE p.rid = "
                           "j.parent_rid), EXISTS (SELECT 1 FROM lanes_deps WHERE parent_rid = "
                           "?2 AND child_rid = ?1), j.result FROM lanes_jobs j WHERE j.rid = ?1",
                           "add (existing child)");
    if (s == NULL) return LN_EBACKEND;
    sqlite3_bind_int64(s, 1, rid);
    sqlite3_bind_int64(s, 2, prid);
    int rc = sqlite3_step(s), err = 0;
    memset(e, 0, sizeof *e);
    if (rc == SQLITE_ROW) {
        e->state = sqlite3_column_int(s, 0);
        e->parent = sqlite3_column_int64(s, 1);
        e->linked = sqlite3_column_int(s, 2);
        const char *r = (const char *)sqlite3_column_text(s, 3);
        if (r != NULL && (e->result = ln__strdup(r)) == NULL)
            err = ln__jobs_be_err(&be->base, LN_ENOMEM, "out of memory");
    } else {
        err = ln__sq_err(be, rc == SQLITE_DONE ? SQLITE_CORRUPT : rc, "add (existing child)");
    }
    sqlite3_finalize(s);
    return err;
}

/* A custom id that exists, added with parent prid (BullMQ's
 * updateExistingJobsParent): a completed job's result goes to the parent
 * at once (released if that was its last dependency), any other job
 * becomes a pending dependency; the child of another parent that exists
 * refuses the add (LN_EEXIST), and so does a running job (LN_EBUSY, as on
 * Redis, where its run's completion may be planned without the parent). */
/* Whether job rid is an ancestor of prid (prid's parent_rid chain, at most
 * LN_JOBS_REMOVE_TREE_MAX steps up, as the Redis store's): 1, 0 or an
 * error. Adding rid under prid would close a cycle whose jobs wait for
 * each other for good. */
static int is_ancestor(sq_be *be, int64_t rid, int64_t prid) {
    sqlite3_stmt *s = prep(be,
                           "WITH RECURSIVE up(rid, n) AS (SELECT parent_rid, 1 FROM lanes_jobs "
                           "WHERE rid = ?2 UNION ALL SELECT j.parent_rid, up.n + 1 FROM "
                           "lanes_jobs j JOIN up ON j.rid = up.rid WHERE up.n < ?3) "
                           "SELECT EXISTS (SELECT 1 FROM up WHERE rid = ?1)",
                           "add (parent chain)");
    if (s == NULL) return LN_EBACKEND;
    sqlite3_bind_int64(s, 1, rid);
    sqlite3_bind_int64(s, 2, prid);
    sqlite3_bind_int(s, 3, LN_JOBS_REMOVE_TREE_MAX);
    int rc = sqlite3_step(s);
    int found =
        rc == SQLITE_ROW ? sqlite3_column_int(s, 0) : ln__sq_err(be, rc, "add (parent chain)");
    sqlite3_finalize(s);
    return found;
}

static int attach_existing(sq_be *be, const char *queue, const ln__job_new *j, int64_t prid,
                           const char *what, int64_t now) {
    int64_t rid = 0;
    int state = 0;
    int err = ln__sq_find_job(be, queue, j->id, &rid, &state);
    existing e;
    if (err == 0) err = read_existing(be, rid, prid, &e);
    if (err != 0) return err;
    int cycle = rid != prid ? is_ancestor(be, rid, prid) : 0;
    if (cycle < 0)
        err = cycle;
    else if (rid == prid)
        err = ln__jobs_be_err(&be->base, LN_EINVAL, "%sjob '%s' cannot be its own parent", what,
                              j->id);
    else if (cycle)
        err = ln__jobs_be_err(&be->base, LN_EINVAL,
                              "%sjob '%s' is an ancestor of the parent job %s:%s: each would wait "
                              "for the other for good",
                              what, j->id, j->opts.parent_queue, j->opts.parent_id);
    else if (e.parent != 0 && e.parent != prid)
        err = ln__jobs_be_err(&be->base, LN_EEXIST,
                              "%sjob '%s' is a child of another parent; the parent job %s:%s "
                              "cannot be replaced",
                              what, j->id, j->opts.parent_queue, j->opts.parent_id);
    else if (e.state == ST_ACTIVE)
        err = ln__jobs_be_err(&be->base, LN_EBUSY,
                              "%sjob '%s' is running; it can be made a child of %s:%s once it is "
                              "not",
                              what, j->id, j->opts.parent_queue, j->opts.parent_id);
    else if (!e.linked) {
        int done = e.state == ST_COMPLETED;
        err = set_child(be, rid, prid, ln__job_flow_flags(&j->opts));
        if (err == 0)
            err = add_dep(be, prid, rid, queue, j->id, done ? 1 : 0,
                          done ? (e.result ? e.result : "null") : NULL);
        if (err == 0 && done) err = ln__sq_flow_release(be, prid, 0, now);
    }
    ln__free(e.result);
    return err;
}

int ln__sq_dynflow_link(sq_be *be, const char *queue, const ln__job_new *j, int64_t rid, size_t i,
                        size_t n, int64_t now) {
    const ln_job_opts *o = &j->opts;
    char what[32] = "";
    if (n > 1) snprintf(what, sizeof what, "job %zu: ", i);
    int64_t prid = 0;
    int pstate = 0;
    int err = ln__sq_find_job(be, o->parent_queue, o->parent_id, &prid, &pstate);
    if (err == LN_ENOENT)
        return ln__jobs_be_err(&be->base, LN_ENOENT,
                               "%smissing key for parent job: queue '%s' has no job '%s'", what,
                               o->parent_queue, o->parent_id);
    if (err != 0) return err;
    if (rid == 0) return attach_existing(be, queue, j, prid, what, now);
    err = set_child(be, rid, prid, ln__job_flow_flags(o));
    return err != 0 ? err : add_dep(be, prid, rid, queue, j->id, 0, NULL);
}

/* ------------------------------------------------ ln_job_wait_children */

/* Whether child_rid (0: no such job) is a pending dependency of job
 * prid: 1, 0 or an error. One primary-key lookup. */
static int child_pending(sq_be *be, int64_t prid, int64_t child_rid) {
    if (child_rid == 0) return 0;
    sqlite3_stmt *s = prep(be,
                           "SELECT 1 FROM lanes_deps WHERE parent_rid = ?1 AND child_rid = ?2 AND "
                           "status = 0",
                           "wait for a child");
    if (s == NULL) return LN_EBACKEND;
    sqlite3_bind_int64(s, 1, prid);
    sqlite3_bind_int64(s, 2, child_rid);
    int rc = sqlite3_step(s);
    sqlite3_finalize(s);
    if (rc == SQLITE_ROW) return 1;
    return rc == SQLITE_DONE ? 0 : ln__sq_err(be, rc, "wait for a child");
}

/* Inside the write transaction: 1 moved, 0 none pending (child_rid < 0:
 * any child; else only that one, 0 when it does not exist), or an
 * error. */
static int wait_children(sq_be *be, const char *queue, const ln__job_ref *ref, int64_t child_rid,
                         int64_t now) {
    sqlite3_stmt *s = prep(be,
                           "SELECT state, token, deps, EXISTS (SELECT 1 FROM lanes_deps WHERE "
                           "parent_rid = ?1 AND status = 3) FROM lanes_jobs WHERE rid = ?1",
                           "wait for children");
    if (s == NULL) return LN_EBACKEND;
    sqlite3_bind_int64(s, 1, (int64_t)ref->key);
    int rc = sqlite3_step(s);
    if (rc != SQLITE_ROW) {
        sqlite3_finalize(s);
        return rc == SQLITE_DONE
                   ? ln__jobs_be_err(&be->base, LN_ESTALE,
                                     "job %s no longer exists. moveToWaitingChildren", ref->id)
                   : ln__sq_err(be, rc, "wait for children");
    }
    int state = sqlite3_column_int(s, 0);
    int64_t token = sqlite3_column_int64(s, 1), deps = sqlite3_column_int64(s, 2);
    int failed = sqlite3_column_int(s, 3);
    sqlite3_finalize(s);
    if (failed)
        return ln__jobs_be_err(&be->base, LN_EFAILED,
                               "Cannot complete job %s because it has at least one failed child. "
                               "moveToWaitingChildren",
                               ref->id);
    if (child_rid >= 0) {
        int p = child_pending(be, (int64_t)ref->key, child_rid);
        if (p <= 0) return p;
    } else if (deps == 0) {
        return 0;
    }
    if (state != ST_ACTIVE || token != strtoll(ref->token, NULL, 10))
        return ln__jobs_be_err(&be->base, LN_ESTALE,
                               "job %s is not active with this worker's lease. "
                               "moveToWaitingChildren",
                               ref->id);
    if ((s = prep(be, "UPDATE lanes_jobs SET state = 7, lease_until = NULL WHERE rid = ?1",
                  "wait for children")) == NULL)
        return LN_EBACKEND;
    sqlite3_bind_int64(s, 1, (int64_t)ref->key);
    int err = run_once(be, s, "wait for children");
    if (err == 0)
        err =
            ln__sq_event(be, queue, "waiting-children", ref->id, "prev", "active", NULL, NULL, now);
    return err != 0 ? err : 1;
}

static int wait_in_tx(ln__jobs_be *b, const char *queue, const ln__job_ref *ref,
                      const char *child_queue, const char *child_id) {
    sq_be *be = (sq_be *)b;
    int64_t now, child_rid = -1;
    int err = ln__sq_begin_write(be, &now);
    if (err != 0) return err;
    if (child_queue != NULL) {
        int cstate;
        err = ln__sq_find_job(be, child_queue, child_id, &child_rid, &cstate);
        if (err == LN_ENOENT) child_rid = 0, err = 0; /* no such child: none pending */
    }
    if (err == 0) err = wait_children(be, queue, ref, child_rid, now);
    if (err == 1) {
        int c = ln__sq_commit(be);
        return c != 0 ? c : 1;
    }
    ln__sq_rollback(be);
    return err;
}

int ln__sq_wait_children(ln__jobs_be *b, const char *queue, const ln__job_ref *ref) {
    return wait_in_tx(b, queue, ref, NULL, NULL);
}

/* ln_job_wait_child: only child_id of child_queue pending counts. */
int ln__sq_wait_child(ln__jobs_be *b, const char *queue, const ln__job_ref *ref,
                      const char *child_queue, const char *child_id) {
    return wait_in_tx(b, queue, ref, child_queue, child_id);
}
