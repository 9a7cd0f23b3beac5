/* flow.c - the PostgreSQL store: flows (jobs.h "Flows";
 * docs/internals/flows.md): add_flow, children, and the hook the step
 * calls when a child finishes.
 *
 * DESIGN
 * BullMQ's own rows (docs/internals/postgres.md "Flows"): a parent is added
 * waiting-children with pending_deps its child count, each child carries
 * parent_queue / parent_id / parent_key and opts.parent, and has a pending
 * row in job_dependency. A child's completion or final failure updates its
 * row and its parent in the transaction that records it, under BullMQ's
 * advisory lock for that parent. A fail-parent child's failure does not
 * fail the parent here: it sets the parent's deferred_failure and releases
 * it, and whoever claims it next (a lanes step or a Node worker) fails it
 * with that reason, so the failure climbs a chain one claim at a time.
 */
#include "pg_int.h"

#include "internal.h"

#include <stdio.h>
#include <string.h>

/* ---- Adding */

static int add_node(pg_be *be, ln__flow_new *nodes, size_t i) {
    ln__flow_new *nd = &nodes[i];
    ln__job_new *j = &nd->job;
    char seq[160] = "";
    int rc = 0;
    if (j->opts.job_id == NULL) rc = ln__pg_id_sequence(be, nd->queue, seq, sizeof seq);
    if (rc == 0) rc = ln__pg_touch_queue(be, nd->queue);
    if (rc != 0) return rc;
    ln__pg_link link = {nd->nchildren, NULL, NULL, 0};
    if (nd->parent >= 0) {
        link.parent_queue = nodes[nd->parent].queue;
        link.parent_id = nodes[nd->parent].job.id;
        link.on_fail = nd->on_fail;
    } else if (j->opts.parent_id != NULL) { /* a root with a parent */
        if ((rc = ln__pg_parent_check(be, nd->queue, j, "")) != 0) return rc;
        link.parent_queue = j->opts.parent_queue;
        link.parent_id = j->opts.parent_id;
        link.on_fail = ln__job_flow_flags(&j->opts);
    }
    if ((rc = ln__pg_add_linked(be, nd->queue, seq, j, &link)) != 0) return rc;
    if (j->existed)
        return ln__jobs_be_err(&be->base, LN_EINVAL, "flow node %zu: queue '%s' has a job '%s'", i,
                               nd->queue, j->opts.job_id);
    if (nd->parent < 0 && link.parent_id != NULL) {
        rc = ln__pg_dep_add(be, link.parent_queue, link.parent_id, nd->queue, j->id, 0);
    } else if (link.parent_id != NULL) {
        const char *p[4] = {link.parent_queue, link.parent_id, nd->queue, j->id};
        rc = ln__pg_exec(be,
                         "INSERT INTO @job_dependency (parent_queue, parent_id, child_queue, "
                         "child_id, child_key) VALUES ($1, $2, $3, $4, $3 || ':' || $4)",
                         4, p);
    }
    if (rc == 0) rc = ln__pg_notify_jobs(be, nd->queue);
    return rc;
}

int ln__pg_add_flow(ln__jobs_be *b, ln__flow_new *nodes, size_t n) {
    pg_be *be = pgbe(b);
    int rc = ln__pg_begin(be);
    for (size_t i = 0; rc == 0 && i < n; i++) rc = add_node(be, nodes, i);
    if (rc == 0) rc = ln__pg_commit(be);
    return rc == 0 ? 0 : ln__pg_fail(be, rc);
}

/* ---- A child finished */

int ln__pg_flow_release(pg_be *be, const char *pq, const char *pid, int force) {
    const char *p[3] = {pq, pid, force ? "1" : "0"};
    int rc;
    PGresult *r = ln__pg_q(
        be,
        "WITH u AS (UPDATE @job j SET state = CASE WHEN j.delay_ms > 0 THEN 'delayed' ELSE "
        "'waiting' END::@job_state, process_at_ms = CASE WHEN j.delay_ms > 0 THEN " PG_NOW
        " + j.delay_ms END, pending_deps = (SELECT count(*) FROM @job_dependency d WHERE "
        "d.parent_queue = $1 AND d.parent_id = $2 AND d.status = 'pending'), "
        "seq = " PG_SEQ_BY_LIFO " WHERE j.queue = $1 AND j.id = $2 AND j.state = "
        "'waiting-children' AND ($3::int = 1 OR NOT EXISTS (SELECT 1 FROM @job_dependency d "
        "WHERE d.parent_queue = $1 AND d.parent_id = $2 AND d.status = 'pending')) "
        "RETURNING j.id, j.state, j.process_at_ms) "
        "INSERT INTO @event (queue, event, data, created_at_ms) SELECT $1, u.state::text, "
        "CASE WHEN u.state = 'delayed' THEN jsonb_build_object('jobId', u.id, 'delay', "
        "u.process_at_ms) ELSE jsonb_build_object('jobId', u.id, 'prev', 'waiting-children') "
        "END, " PG_NOW " FROM u RETURNING 1",
        3, p, &rc);
    if (r == NULL) return rc;
    int moved = PQntuples(r) > 0;
    PQclear(r);
    return moved ? ln__pg_notify_jobs(be, pq) : 0;
}

/* The dependency of cq:cid on pq:pid, still pending, set to status with
 * value (JSON text or NULL), or deleted (status NULL); 1 if it was
 * pending, 0, or a negative LN_E*. */
static int mark_dep(pg_be *be, const char *const *key, const char *status, const char *value) {
    const char *p[6] = {key[0], key[1], key[2], key[3], status, value};
    int rc;
    PGresult *r =
        status == NULL
            ? ln__pg_q(be,
                       "DELETE FROM @job_dependency WHERE parent_queue = $1 AND parent_id = $2 "
                       "AND child_key = $3 || ':' || $4 AND status = 'pending' RETURNING 1",
                       4, p, &rc)
            : ln__pg_q(be,
                       "UPDATE @job_dependency SET status = $5::@dep_status, value = "
                       "$6::text::jsonb WHERE parent_queue = $1 AND parent_id = $2 AND "
                       "child_key = $3 || ':' || $4 AND status = 'pending' RETURNING 1",
                       6, p, &rc);
    if (r == NULL) return rc;
    int n = PQntuples(r);
    PQclear(r);
    if (n == 0) return 0;
    rc = ln__pg_exec(be,
                     "UPDATE @job SET pending_deps = greatest(coalesce(pending_deps, 1) - 1, 0) "
                     "WHERE queue = $1 AND id = $2",
                     2, p);
    return rc == 0 ? 1 : rc;
}

/* The child's LN__FLOW_* bits from its opts (0 if it is gone). */
static int child_flags(pg_be *be, const char *cq, const char *cid, int *flags) {
    const char *p[2] = {cq, cid};
    int rc;
    PGresult *r = ln__pg_q(be,
                           "SELECT (CASE WHEN (opts->>'failParentOnFailure')::boolean THEN 1 ELSE "
                           "0 END) | (CASE WHEN (opts->>'continueParentOnFailure')::boolean THEN 2 "
                           "ELSE 0 END) | (CASE WHEN (opts->>'ignoreDependencyOnFailure')::boolean "
                           "THEN 4 ELSE 0 END) | (CASE WHEN "
                           "(opts->>'removeDependencyOnFailure')::boolean THEN 8 ELSE 0 END) "
                           "FROM @job WHERE queue = $1 AND id = $2",
                           2, p, &rc);
    if (r == NULL) return rc;
    *flags = PQntuples(r) > 0 ? (int)ln__pg_i64(r, 0, 0) : 0;
    PQclear(r);
    return 0;
}

static int child_failed(pg_be *be, const char *const *key, const char *reason) {
    int flags = 0, rc = child_flags(be, key[2], key[3], &flags);
    if (rc != 0) return rc;
    char *json = NULL;
    if (flags & (LN__FLOW_FPOF | LN__FLOW_CPOF | LN__FLOW_IDOF)) {
        const char *p[1] = {reason != NULL ? reason : ""};
        PGresult *r = ln__pg_q(be, "SELECT to_jsonb($1::text)::text", 1, p, &rc);
        if (r == NULL) return rc;
        json = ln__strdup(PQgetvalue(r, 0, 0));
        PQclear(r);
        if (json == NULL) return ln__pg_oom(be);
    }
    int was = 0, force = 0;
    if (flags & LN__FLOW_FPOF) {
        was = mark_dep(be, key, "failed", json);
        if (was > 0) {
            const char *p[4] = {key[0], key[1], key[2], key[3]};
            rc = ln__pg_exec(be,
                             "UPDATE @job SET deferred_failure = 'child ' || $3 || ':' || $4 || "
                             "' failed' WHERE queue = $1 AND id = $2 AND state IN ('waiting', "
                             "'delayed', 'waiting-children')",
                             4, p);
            if (rc != 0) was = rc;
        }
        force = 1;
    } else if (flags & (LN__FLOW_CPOF | LN__FLOW_IDOF)) {
        was = mark_dep(be, key, "ignored", json);
        force = (flags & LN__FLOW_CPOF) != 0;
    } else if (flags & LN__FLOW_RDOF) {
        was = mark_dep(be, key, NULL, NULL);
    }
    ln__free(json);
    if (was < 0) return was;
    return was > 0 ? ln__pg_flow_release(be, key[0], key[1], force) : 0;
}

int ln__pg_flow_child_done(pg_be *be, const char *cq, const char *cid, const char *pq,
                           const char *pid, int completed, const char *text) {
    const char *key[4] = {pq, pid, cq, cid};
    int rc = ln__pg_exec(be,
                         "SELECT pg_advisory_xact_lock(hashtext('bullmq:parent:' || $1 || ':' || "
                         "$2))",
                         2, key);
    if (rc != 0) return rc;
    if (!completed) return child_failed(be, key, text);
    int was = mark_dep(be, key, "processed", text != NULL ? text : "null");
    if (was < 0) return was;
    return was > 0 ? ln__pg_flow_release(be, pq, pid, 0) : 0;
}

/* ---- Reading */

/* "queue:id" into queue and id (queue names have no ':'). */
static int split_key(const char *key, char **queue, char **id) {
    const char *colon = strchr(key, ':');
    if (colon == NULL) return 0;
    *queue = ln__malloc((size_t)(colon - key) + 1);
    if (*queue == NULL) return LN_ENOMEM;
    memcpy(*queue, key, (size_t)(colon - key));
    (*queue)[colon - key] = '\0';
    return (*id = ln__strdup(colon + 1)) != NULL ? 0 : LN_ENOMEM;
}

static int read_child(const PGresult *r, int row, ln_job_child *c) {
    int oom = 0;
    memset(c, 0, sizeof *c);
    const char *st = PQgetvalue(r, row, 1);
    c->status = strcmp(st, "processed") == 0 ? LN_CHILD_PROCESSED
                : strcmp(st, "ignored") == 0 ? LN_CHILD_FAILED
                : strcmp(st, "failed") == 0  ? LN_CHILD_UNSUCCESSFUL
                                             : LN_CHILD_PENDING;
    c->key = ln__pg_dup(r, row, 0, &oom);
    if (c->status == LN_CHILD_PROCESSED || c->status == LN_CHILD_FAILED)
        c->value = ln__pg_dup(r, row, 2, &oom);
    if (oom || c->key == NULL) return LN_ENOMEM;
    return split_key(c->key, &c->queue, &c->id);
}

static int read_children(pg_be *be, const char *queue, const char *id, ln_job_children *out) {
    char max[24];
    const char *p[3] = {queue, id, ln__pg_itoa(max, 4 * (int64_t)LN_JOB_CHILDREN_MAX)};
    int rc;
    PGresult *r = ln__pg_q(
        be,
        "SELECT d.child_key, d.status::text, CASE WHEN d.status = 'ignored' THEN d.value #>> "
        "'{}' WHEN j.opts ? 'lanesResult' AND (j.opts->>'lanesResult')::jsonb = d.value THEN "
        "j.opts->>'lanesResult' ELSE d.value::text END FROM @job_dependency d LEFT JOIN @job j "
        "ON j.queue = d.child_queue AND j.id = d.child_id WHERE d.parent_queue = $1 AND "
        "d.parent_id = $2 ORDER BY CASE d.status WHEN 'processed' THEN 0 WHEN 'ignored' THEN 1 "
        "WHEN 'failed' THEN 2 ELSE 3 END, d.child_key LIMIT $3::bigint",
        3, p, &rc);
    if (r == NULL) return rc;
    int rows = PQntuples(r);
    if (rows > 0 && (out->children = ln__calloc((size_t)rows, sizeof *out->children)) == NULL)
        rc = LN_ENOMEM;
    for (int i = 0; rc == 0 && i < rows; i++) {
        rc = read_child(r, i, &out->children[i]);
        out->n++;
    }
    PQclear(r);
    return rc == LN_ENOMEM ? ln__pg_oom(be) : rc;
}

int ln__pg_children(ln__jobs_be *b, const char *queue, const char *id, ln_job_children *out) {
    pg_be *be = pgbe(b);
    const char *p[2] = {queue, id};
    int rc = ln__pg_exec(be, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", 0, NULL);
    if (rc != 0) return rc;
    PGresult *r = ln__pg_q(
        be, "SELECT parent_queue, parent_id FROM @job WHERE queue = $1 AND id = $2", 2, p, &rc);
    if (r == NULL) return ln__pg_fail(be, rc);
    if (PQntuples(r) == 0) {
        PQclear(r);
        ln__pg_rollback(be);
        return ln__jobs_be_err(b, LN_ENOENT, "queue '%s' has no job '%s'", queue, id);
    }
    int oom = 0;
    if (!PQgetisnull(r, 0, 0) && !PQgetisnull(r, 0, 1)) {
        out->parent_queue = ln__pg_dup(r, 0, 0, &oom);
        out->parent_id = ln__pg_dup(r, 0, 1, &oom);
        size_t len = strlen(PQgetvalue(r, 0, 0)) + strlen(PQgetvalue(r, 0, 1)) + 2;
        if ((out->parent_key = ln__malloc(len)) != NULL)
            snprintf(out->parent_key, len, "%s:%s", PQgetvalue(r, 0, 0), PQgetvalue(r, 0, 1));
        oom |= out->parent_key == NULL;
    }
    PQclear(r);
    rc = oom ? ln__pg_oom(be) : read_children(be, queue, id, out);
    ln__pg_rollback(be);
    return rc;
}

/* ---- A child gone or finished outside the step */

int ln__pg_flow_finished(pg_be *be, const char *queue, const char *id, int completed,
                         const char *text) {
    const char *p[2] = {queue, id};
    int rc;
    PGresult *r = ln__pg_q(be,
                           "SELECT parent_queue, parent_id FROM @job WHERE queue = $1 AND id = $2 "
                           "AND parent_id IS NOT NULL",
                           2, p, &rc);
    if (r == NULL) return rc;
    if (PQntuples(r) == 0) {
        PQclear(r);
        return 0;
    }
    char *pq = ln__strdup(PQgetvalue(r, 0, 0)), *pid = ln__strdup(PQgetvalue(r, 0, 1));
    PQclear(r);
    rc = pq != NULL && pid != NULL ? ln__pg_flow_child_done(be, queue, id, pq, pid, completed, text)
                                   : ln__pg_oom(be);
    ln__free(pq);
    ln__free(pid);
    return rc;
}

/* Parent pq:pid of queue, released by a clean or a drain of queue, is
 * removed instead (BullMQ's clean and drain remove it with its last
 * child), and so on up while the next parent is of queue, at most
 * LN__PARENT_CLIMB_MAX parents; the next one is released. */
static int climb(pg_be *be, const char *queue, const char *pq, const char *pid) {
    char *q = ln__strdup(pq), *id = ln__strdup(pid);
    int rc = q != NULL && id != NULL ? 0 : ln__pg_oom(be);
    for (int budget = LN__PARENT_CLIMB_MAX; rc == 0;) {
        if (strcmp(q, queue) != 0 || budget == 0) {
            rc = ln__pg_flow_release(be, q, id, 0);
            break;
        }
        const char *p[2] = {q, id};
        PGresult *r = ln__pg_q(
            be,
            "WITH d AS (DELETE FROM @job j WHERE j.queue = $1 AND j.id = $2 AND j.state = "
            "'waiting-children' AND NOT EXISTS (SELECT 1 FROM @job_dependency d WHERE "
            "d.parent_queue = $1 AND d.parent_id = $2 AND d.status = 'pending') RETURNING "
            "j.id, j.parent_queue, j.parent_id), x AS (DELETE FROM @dedup dd USING d WHERE "
            "dd.queue = $1 AND dd.job_id = d.id), e AS (INSERT INTO @event (queue, event, data, "
            "created_at_ms) SELECT $1, 'removed', jsonb_build_object('jobId', id, 'prev', "
            "'waiting-children'), " PG_NOW " FROM d) SELECT parent_queue, parent_id FROM d",
            2, p, &rc);
        if (r == NULL) break;
        int more = PQntuples(r) > 0 && !PQgetisnull(r, 0, 1);
        char *nq = more ? ln__strdup(PQgetvalue(r, 0, 0)) : NULL;
        char *nid = more ? ln__strdup(PQgetvalue(r, 0, 1)) : NULL;
        PQclear(r);
        const char *k[4] = {nq, nid, q, id};
        if (more && (nq == NULL || nid == NULL))
            rc = ln__pg_oom(be);
        else if (more && (rc = mark_dep(be, k, NULL, NULL)) > 0)
            rc = 0;
        ln__free(q);
        ln__free(id);
        q = nq;
        id = nid;
        budget--;
        if (!more) break;
    }
    ln__free(q);
    ln__free(id);
    return rc;
}

int ln__pg_flow_gone(pg_be *be, const char *queue, int cascade) {
    const char *p[1] = {queue};
    int rc;
    PGresult *r = ln__pg_q(
        be,
        "WITH d AS (DELETE FROM @job_dependency dep WHERE dep.child_queue = $1 AND dep.status = "
        "'pending' AND NOT EXISTS (SELECT 1 FROM @job j WHERE j.queue = dep.child_queue AND j.id "
        "= dep.child_id) RETURNING dep.parent_queue, dep.parent_id) "
        "SELECT parent_queue, parent_id, count(*) FROM d GROUP BY 1, 2 ORDER BY 1, 2",
        1, p, &rc);
    if (r == NULL) return rc;
    int rows = PQntuples(r);
    for (int i = 0; rc == 0 && i < rows; i++) {
        const char *q[3] = {PQgetvalue(r, i, 0), PQgetvalue(r, i, 1), PQgetvalue(r, i, 2)};
        rc = ln__pg_exec(be,
                         "UPDATE @job SET pending_deps = greatest(coalesce(pending_deps, 0) - "
                         "$3::int, 0) WHERE queue = $1 AND id = $2",
                         3, q);
        if (rc == 0)
            rc = cascade ? climb(be, queue, q[0], q[1]) : ln__pg_flow_release(be, q[0], q[1], 0);
    }
    PQclear(r);
    return rc;
}
