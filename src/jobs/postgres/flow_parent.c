/* flow_parent.c - the PostgreSQL store: children of an existing parent
 * (jobs_flows.h: an add with opts.parent_*, ln_job_wait_children,
 * ln_job_wait_child), on BullMQ's rows as flow.c writes them.
 *
 * DESIGN
 * A child added to an existing parent is a pending job_dependency row and
 * one more pending_deps on the parent, whatever the parent's state; under
 * BullMQ's advisory lock for the parent, taken before any row lock, as a
 * child's finish takes it. A custom id that exists is attached instead (a
 * completed one as processed, and a waiting-children parent it was the
 * last pending child of released). Waiting for children moves the active
 * job to waiting-children, guarded by its lock token.
 */
#include "pg_int.h"

#include "internal.h"

#include <stdio.h>
#include <string.h>

static int lock_parent(pg_be *be, const char *pq, const char *pid) {
    const char *p[2] = {pq, pid};
    return ln__pg_exec(be,
                       "SELECT pg_advisory_xact_lock(hashtext('bullmq:parent:' || $1 || ':' || "
                       "$2))",
                       2, p);
}

/* 1 if job pq:pid exists, 0, or a negative LN_E*. */
static int exists(pg_be *be, const char *pq, const char *pid) {
    const char *p[2] = {pq, pid};
    int rc;
    PGresult *r = ln__pg_q(be, "SELECT 1 FROM @job WHERE queue = $1 AND id = $2", 2, p, &rc);
    if (r == NULL) return rc;
    int n = PQntuples(r);
    PQclear(r);
    return n > 0;
}

/* The dependency row of child cq:cid (status pending, or processed with
 * the completed child's result) and the parent's count. */
int ln__pg_dep_add(pg_be *be, const char *pq, const char *pid, const char *cq, const char *cid,
                   int done) {
    const char *p[5] = {pq, pid, cq, cid, done ? "1" : "0"};
    int rc = ln__pg_exec(
        be,
        "INSERT INTO @job_dependency (parent_queue, parent_id, child_queue, child_id, child_key, "
        "status, value) SELECT $1, $2, $3, $4, $3 || ':' || $4, CASE WHEN $5::int = 1 THEN "
        "'processed' ELSE 'pending' END::@dep_status, CASE WHEN $5::int = 1 THEN "
        "coalesce(c.return_value, 'null'::jsonb) END FROM @job c WHERE c.queue = $3 AND c.id = $4 "
        "ON CONFLICT (parent_queue, parent_id, child_key) DO NOTHING",
        5, p);
    if (rc == 0 && !done)
        rc = ln__pg_exec(be,
                         "UPDATE @job SET pending_deps = coalesce(pending_deps, 0) + 1 WHERE "
                         "queue = $1 AND id = $2",
                         2, p);
    return rc;
}

/* 1 if job cq:cid is pq:pid or one of its ancestors (a bounded climb). */
static int is_ancestor(pg_be *be, const char *cq, const char *cid, const char *pq,
                       const char *pid) {
    char max[24];
    const char *p[5] = {pq, pid, cq, cid, ln__pg_itoa(max, LN__PARENT_CLIMB_MAX)};
    int rc;
    PGresult *r = ln__pg_q(
        be,
        "WITH RECURSIVE up(q, i, n) AS (SELECT $1::text, $2::text, 0 UNION ALL SELECT "
        "j.parent_queue, j.parent_id, up.n + 1 FROM up JOIN @job j ON j.queue = up.q AND j.id = "
        "up.i WHERE j.parent_id IS NOT NULL AND up.n < $5::int) "
        "SELECT 1 FROM up WHERE q = $3 AND i = $4 LIMIT 1",
        5, p, &rc);
    if (r == NULL) return rc;
    int n = PQntuples(r);
    PQclear(r);
    return n > 0;
}

/* A custom id that exists, attached to the parent (jobs_flows.h). */
static int attach(pg_be *be, const char *queue, const ln__job_new *j, const char *what) {
    const ln_job_opts *o = &j->opts;
    const char *p[4] = {queue, j->id, o->parent_queue, o->parent_id};
    int rc;
    PGresult *r = ln__pg_q(be,
                           "SELECT c.state::text, c.parent_queue, c.parent_id, (c.parent_queue = "
                           "$3 AND c.parent_id = $4), EXISTS (SELECT 1 FROM @job x WHERE x.queue "
                           "= c.parent_queue AND x.id = c.parent_id) FROM @job c WHERE c.queue = "
                           "$1 AND c.id = $2 FOR UPDATE",
                           4, p, &rc);
    if (r == NULL) return rc;
    if (PQntuples(r) == 0) { /* held by deduplication: nothing to attach */
        PQclear(r);
        return 0;
    }
    char state[32];
    snprintf(state, sizeof state, "%s", PQgetvalue(r, 0, 0));
    int linked = !PQgetisnull(r, 0, 2);
    int same = PQgetvalue(r, 0, 3)[0] == 't', other_live = PQgetvalue(r, 0, 4)[0] == 't';
    PQclear(r);
    int cycle = is_ancestor(be, queue, j->id, o->parent_queue, o->parent_id);
    if (cycle < 0) return cycle;
    if (cycle)
        return ln__jobs_be_err(&be->base, LN_EINVAL,
                               "%sjob '%s' is the parent job %s:%s or an ancestor of it: each "
                               "would wait for the other for good",
                               what, j->id, o->parent_queue, o->parent_id);
    if (linked && !same && other_live)
        return ln__jobs_be_err(&be->base, LN_EEXIST,
                               "%sjob '%s' is a child of another parent; the parent job %s:%s "
                               "cannot be replaced",
                               what, j->id, o->parent_queue, o->parent_id);
    if (strcmp(state, "active") == 0)
        return ln__jobs_be_err(&be->base, LN_EBUSY,
                               "%sjob '%s' is running; it can be made a child of %s:%s once it is "
                               "not",
                               what, j->id, o->parent_queue, o->parent_id);
    if (linked && same) return 0;
    char bits[24];
    const char *q[5] = {queue, j->id, o->parent_queue, o->parent_id,
                        ln__pg_itoa(bits, ln__job_flow_flags(o))};
    rc = ln__pg_exec(
        be,
        "UPDATE @job SET parent_queue = $3, parent_id = $4, parent_key = $3 || ':' || $4, "
        "opts = opts || jsonb_strip_nulls(jsonb_build_object('parent', jsonb_build_object('id', "
        "$4::text, 'queue', $3::text), "
        "'failParentOnFailure', CASE WHEN $5::int & 1 <> 0 THEN true END, "
        "'continueParentOnFailure', CASE WHEN $5::int & 2 <> 0 THEN true END, "
        "'ignoreDependencyOnFailure', CASE WHEN $5::int & 4 <> 0 THEN true END, "
        "'removeDependencyOnFailure', CASE WHEN $5::int & 8 <> 0 THEN true END)) "
        "WHERE queue = $1 AND id = $2",
        5, q);
    int done = strcmp(state, "completed") == 0;
    if (rc == 0) rc = ln__pg_dep_add(be, o->parent_queue, o->parent_id, queue, j->id, done);
    if (rc == 0 && done) rc = ln__pg_flow_release(be, o->parent_queue, o->parent_id, 0);
    return rc;
}

int ln__pg_parent_check(pg_be *be, const char *queue, const ln__job_new *j, const char *what) {
    const ln_job_opts *o = &j->opts;
    int rc = lock_parent(be, o->parent_queue, o->parent_id);
    int has = rc == 0 ? exists(be, o->parent_queue, o->parent_id) : rc;
    if (has < 0) return has;
    if (has == 0)
        return ln__jobs_be_err(&be->base, LN_ENOENT,
                               "%smissing key for parent job: queue '%s' has no job '%s'", what,
                               o->parent_queue, o->parent_id);
    if (o->job_id != NULL && strcmp(queue, o->parent_queue) == 0 &&
        strcmp(o->job_id, o->parent_id) == 0)
        return ln__jobs_be_err(&be->base, LN_EINVAL, "%sjob '%s' cannot be its own parent", what,
                               o->job_id);
    return 0;
}

int ln__pg_add_child(pg_be *be, const char *queue, const char *seq, ln__job_new *j, size_t i,
                     size_t n) {
    const ln_job_opts *o = &j->opts;
    char what[32] = "";
    if (n > 1) snprintf(what, sizeof what, "job %zu: ", i);
    int rc = ln__pg_parent_check(be, queue, j, what);
    if (rc != 0) return rc;
    ln__pg_link link = {0, o->parent_queue, o->parent_id, ln__job_flow_flags(o)};
    if ((rc = ln__pg_add_linked(be, queue, seq, j, &link)) != 0) return rc;
    if (j->existed) return attach(be, queue, j, what);
    return ln__pg_dep_add(be, o->parent_queue, o->parent_id, queue, j->id, 0);
}

/* ---- ln_job_wait_children */

static int wait_tx(pg_be *be, const char *queue, const ln__job_ref *ref, const char *cq,
                   const char *cid) {
    const char *p[5] = {queue, ref->id, ref->token, cq, cid};
    int rc;
    PGresult *r = ln__pg_q(
        be,
        "SELECT state = 'active' AND lock_token = $3, EXISTS (SELECT 1 FROM @job_dependency d "
        "WHERE d.parent_queue = $1 AND d.parent_id = $2 AND d.status = 'failed'), EXISTS "
        "(SELECT 1 FROM @job_dependency d WHERE d.parent_queue = $1 AND d.parent_id = $2 AND "
        "d.status = 'pending' AND ($4::text IS NULL OR d.child_key = $4 || ':' || $5)) "
        "FROM @job WHERE queue = $1 AND id = $2 FOR UPDATE",
        5, p, &rc);
    if (r == NULL) return rc;
    if (PQntuples(r) == 0) {
        PQclear(r);
        return ln__jobs_be_err(&be->base, LN_ESTALE,
                               "job %s no longer exists. moveToWaitingChildren", ref->id);
    }
    int held = PQgetvalue(r, 0, 0)[0] == 't', failed = PQgetvalue(r, 0, 1)[0] == 't';
    int pending = PQgetvalue(r, 0, 2)[0] == 't';
    PQclear(r);
    if (failed)
        return ln__jobs_be_err(&be->base, LN_EFAILED,
                               "Cannot complete job %s because it has at least one failed child. "
                               "moveToWaitingChildren",
                               ref->id);
    if (!pending) return 0;
    if (!held)
        return ln__jobs_be_err(&be->base, LN_ESTALE,
                               "job %s is not active with this worker's lease. "
                               "moveToWaitingChildren",
                               ref->id);
    rc = ln__pg_exec(
        be,
        "WITH u AS (UPDATE @job SET state = 'waiting-children', lock_token = NULL, "
        "locked_until_ms = NULL WHERE queue = $1 AND id = $2 RETURNING id) "
        "INSERT INTO @event (queue, event, data, created_at_ms) SELECT $1, "
        "'waiting-children', jsonb_build_object('jobId', id, 'prev', 'active'), " PG_NOW " FROM u",
        2, p);
    return rc != 0 ? rc : 1;
}

static int wait_in_tx(ln__jobs_be *b, const char *queue, const ln__job_ref *ref, const char *cq,
                      const char *cid) {
    pg_be *be = pgbe(b);
    int rc = ln__pg_begin(be);
    if (rc == 0) rc = lock_parent(be, queue, ref->id);
    if (rc == 0) rc = wait_tx(be, queue, ref, cq, cid);
    if (rc == 1) {
        int c = ln__pg_commit(be);
        return c != 0 ? ln__pg_fail(be, c) : 1;
    }
    ln__pg_rollback(be);
    return rc;
}

int ln__pg_wait_children(ln__jobs_be *b, const char *queue, const ln__job_ref *ref) {
    return wait_in_tx(b, queue, ref, NULL, NULL);
}

int ln__pg_wait_child(ln__jobs_be *b, const char *queue, const ln__job_ref *ref,
                      const char *child_queue, const char *child_id) {
    return wait_in_tx(b, queue, ref, child_queue, child_id);
}
