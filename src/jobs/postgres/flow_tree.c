/* flow_tree.c - the PostgreSQL store: removing a job with its subtree of
 * children (remove_tree) and a job's unprocessed children
 * (remove_unprocessed), in one transaction (docs/internals/flows.md).
 *
 * DESIGN
 * One recursive walk of job_dependency from the job, bounded by max + 1
 * rows (UNION drops a job met twice, so a cycle ends the walk), then one
 * DELETE of what it found, with a "removed" event each; the dependency
 * rows go with their parents (cascade), and a parent outside the tree that
 * waited for a removed child is released (flow.c's ln__pg_flow_gone). For
 * the unprocessed children the walk follows pending dependencies only and
 * skips an active or failed child with its subtree; the job is kept.
 */
#include "pg_int.h"

#include "internal.h"

#include <stdio.h>
#include <string.h>

/* $1 queue, $2 id, $3 the most rows, $4 1: unprocessed children only.
 * Rows: queue, id, state (null: the child is gone), whether it is its
 * scheduler's current iteration, in the walk's order. */
static const char walk_sql[] =
    "WITH RECURSIVE t(q, i) AS (SELECT $1::text, $2::text UNION SELECT d.child_queue, "
    "d.child_id FROM t JOIN @job_dependency d ON d.parent_queue = t.q AND d.parent_id = t.i "
    "LEFT JOIN @job c ON c.queue = d.child_queue AND c.id = d.child_id WHERE $4::int = 0 OR "
    "(d.status = 'pending' AND c.state NOT IN ('active', 'failed'))) "
    "SELECT t.q, t.i, j.state::text, j.scheduler_id IS NOT NULL AND EXISTS (SELECT 1 FROM "
    "@scheduler s WHERE s.queue = j.queue AND s.scheduler_id = j.scheduler_id AND 'repeat:' || "
    "s.scheduler_id || ':' || s.next_run_ms = j.id) FROM (SELECT q, i, row_number() OVER () AS n "
    "FROM "
    "(SELECT q, i FROM t LIMIT $3::bigint) w) t LEFT JOIN @job j ON j.queue = t.q AND "
    "j.id = t.i ORDER BY t.n";

/* The walk's jobs still there (the root first), locked. */
static int walk(pg_be *be, const char *queue, const char *id, size_t max, int pending_only,
                PGresult **out) {
    char lim[24];
    const char *p[4] = {queue, id, ln__pg_itoa(lim, (int64_t)max + 1), pending_only ? "1" : "0"};
    int rc;
    PGresult *r = ln__pg_q(be, walk_sql, 4, p, &rc);
    if (r == NULL) return rc;
    int rows = PQntuples(r);
    if (rows == 0 || PQgetisnull(r, 0, 2)) {
        PQclear(r);
        return ln__jobs_be_err(&be->base, LN_ENOENT, "queue '%s' has no job '%s'", queue, id);
    }
    if (!pending_only && PQgetvalue(r, 0, 3)[0] == 't') {
        PQclear(r);
        return ln__jobs_be_err(&be->base, LN_EBUSY,
                               "job '%s' is its job scheduler's current iteration: remove the "
                               "scheduler instead",
                               id);
    }
    if ((size_t)rows > max) {
        PQclear(r);
        return ln__jobs_be_err(&be->base, LN_ETOOBIG,
                               "the tree of job '%s' has more than %zu entries (its jobs and the "
                               "children their parents record): remove its subtrees first",
                               id, max);
    }
    for (int k = pending_only ? 1 : 0; k < rows; k++) {
        if (PQgetisnull(r, k, 2) || strcmp(PQgetvalue(r, k, 2), "active") != 0) continue;
        int err = ln__jobs_be_err(&be->base, LN_EBUSY,
                                  "job '%s' of queue '%s' in the tree is active; a worker holds "
                                  "it",
                                  PQgetvalue(r, k, 1), PQgetvalue(r, k, 0));
        PQclear(r);
        return err;
    }
    *out = r;
    return 0;
}

/* Delete row k of the walk, with its event and dedup rows. */
static int drop(pg_be *be, const PGresult *r, int k) {
    const char *p[3] = {PQgetvalue(r, k, 0), PQgetvalue(r, k, 1), PQgetvalue(r, k, 2)};
    int rc = ln__pg_dedup_drop_next(be, p[0], p[1]);
    if (rc == 0)
        rc = ln__pg_exec(
            be,
            "WITH d AS (DELETE FROM @job WHERE queue = $1 AND id = $2 AND state <> 'active' "
            "RETURNING id), x AS (DELETE FROM @dedup WHERE queue = $1 AND job_id = $2) "
            "INSERT INTO @event (queue, event, data, created_at_ms) SELECT $1, 'removed', "
            "jsonb_build_object('jobId', id, 'prev', $3::text), " PG_NOW " FROM d",
            3, p);
    return rc;
}

static int tree_tx(pg_be *be, const char *queue, const char *id, size_t max, int pending_only,
                   size_t *removed) {
    PGresult *r = NULL;
    int rc = walk(be, queue, id, max > 0 ? max : 1, pending_only, &r);
    if (rc != 0) return rc;
    int rows = PQntuples(r);
    for (int k = rows - 1; rc == 0 && k >= (pending_only ? 1 : 0); k--) {
        if (PQgetisnull(r, k, 2)) continue;
        rc = drop(be, r, k);
        if (rc == 0) (*removed)++;
    }
    /* the parents the removed jobs were pending children of */
    for (int k = 0; rc == 0 && k < rows; k++) {
        int seen = 0;
        for (int m = 0; m < k && !seen; m++)
            seen = strcmp(PQgetvalue(r, m, 0), PQgetvalue(r, k, 0)) == 0;
        if (!seen) rc = ln__pg_flow_gone(be, PQgetvalue(r, k, 0), 0);
    }
    PQclear(r);
    return rc;
}

static int tree_mode(ln__jobs_be *b, const char *queue, const char *id, size_t max,
                     int pending_only, size_t *removed) {
    pg_be *be = pgbe(b);
    *removed = 0;
    int rc = ln__pg_begin(be);
    if (rc == 0) rc = tree_tx(be, queue, id, max, pending_only, removed);
    if (rc == 0) rc = ln__pg_commit(be);
    if (rc == 0) return 0;
    *removed = 0;
    return ln__pg_fail(be, rc);
}

int ln__pg_remove_tree(ln__jobs_be *b, const char *queue, const char *id, size_t max,
                       size_t *removed) {
    return tree_mode(b, queue, id, max, 0, removed);
}

int ln__pg_remove_unprocessed(ln__jobs_be *b, const char *queue, const char *id, size_t max,
                              size_t *removed) {
    return tree_mode(b, queue, id, max, 1, removed);
}
