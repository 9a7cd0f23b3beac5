/* flow_tree.c - the SQLite store: removing a job with its subtree of
 * children (remove_tree) and a job's unprocessed children
 * (remove_unprocessed): one walk of lanes_deps from the job, then one
 * write transaction that deletes what it found (docs/internals/flows.md).
 * The statements are prepared per call (rare admin calls). */
#include "sqlite_int.h"

#include "internal.h"

#include <string.h>

/* The entries a parent records (lanes_deps by its primary key), but a
 * child gone with remove_dependency_on_failure (status 5: no longer its
 * parent's, as on Redis); an entry whose child is gone reads rid NULL. */
#define TREE_KIDS_SQL                                                                              \
    "SELECT j.rid, j.state, j.priority, j.queue, IFNULL(j.cid, j.rid) FROM lanes_deps d "          \
    "LEFT JOIN lanes_jobs j ON j.rid = d.child_rid WHERE d.parent_rid = ?1 AND d.status <> 5 "     \
    "LIMIT ?2"
/* The unprocessed ones only (ln_jobs_remove_unprocessed_children): pending
 * entries whose child exists and has not failed, as BullMQ takes a
 * parent's dependencies not in their queue's failed set. */
#define TREE_PENDING_KIDS_SQL                                                                      \
    "SELECT j.rid, j.state, j.priority, j.queue, IFNULL(j.cid, j.rid) FROM lanes_deps d "          \
    "JOIN lanes_jobs j ON j.rid = d.child_rid WHERE d.parent_rid = ?1 AND d.status = 0 "           \
    "AND j.state <> 5 LIMIT ?2"

typedef struct tree_node {
    int64_t rid;
    int state, priority;
    char *queue, *id;
} tree_node;

typedef struct tree {
    tree_node *v; /* pre-order of the walk (breadth first): parents first */
    size_t n, entries, max;
    sqlite3_stmt *kids;
    int pending_only; /* the root kept, only unprocessed children taken, active ones skipped */
} tree;

static void tree_free(tree *t) {
    for (size_t i = 0; i < t->n; i++) {
        ln__free(t->v[i].queue);
        ln__free(t->v[i].id);
    }
    ln__free(t->v);
    if (t->kids != NULL) sqlite3_finalize(t->kids);
}

static int tree_push(sq_be *be, tree *t, int64_t rid, int state, int priority, const char *queue,
                     const char *id) {
    LN_ASSERT(t->n < t->max);
    tree_node *nd = &t->v[t->n];
    nd->rid = rid;
    nd->state = state;
    nd->priority = priority;
    nd->queue = ln__strdup(queue);
    nd->id = ln__strdup(id);
    t->n++;
    if (nd->queue == NULL || nd->id == NULL)
        return ln__jobs_be_err(&be->base, LN_ENOMEM, "out of memory");
    if (state == ST_ACTIVE && !t->pending_only) /* pending_only: a kept root may run */
        return ln__jobs_be_err(&be->base, LN_EBUSY,
                               "job '%s' of queue '%s' in the tree is active; a worker holds it",
                               id, queue);
    return 0;
}

/* Whether job rid is in t already: a job added as a child of its own
 * descendant closes a cycle, which the walk takes once, as the Redis
 * store's does (at most t->max nodes: bounded). */
static int tree_has(const tree *t, int64_t rid) {
    for (size_t i = 0; i < t->n; i++)
        if (t->v[i].rid == rid) return 1;
    return 0;
}

/* The children node i records into t (each entry counted, at most
 * t->max in all: LN_ETOOBIG past it). */
static int tree_kids(sq_be *be, tree *t, size_t i, const char *root) {
    sqlite3_stmt *s = t->kids;
    sqlite3_reset(s);
    sqlite3_bind_int64(s, 1, t->v[i].rid);
    sqlite3_bind_int64(s, 2, (int64_t)(t->max - t->entries) + 1);
    int rc, err = 0;
    while (err == 0 && (rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (++t->entries > t->max)
            return ln__jobs_be_err(&be->base, LN_ETOOBIG,
                                   "the tree of job '%s' has more than %zu entries (its jobs and "
                                   "the children their parents record): remove its subtrees first",
                                   root, t->max);
        if (sqlite3_column_type(s, 0) == SQLITE_NULL) continue; /* that child is gone */
        /* An active child of the unprocessed walk is kept with its subtree,
         * as BullMQ skips a locked one; it stays its parent's pending entry. */
        if (t->pending_only && sqlite3_column_int(s, 1) == ST_ACTIVE) continue;
        if (tree_has(t, sqlite3_column_int64(s, 0))) continue;
        err = tree_push(be, t, sqlite3_column_int64(s, 0), sqlite3_column_int(s, 1),
                        sqlite3_column_int(s, 2), (const char *)sqlite3_column_text(s, 3),
                        (const char *)sqlite3_column_text(s, 4));
    }
    if (err != 0) return err;
    return rc == SQLITE_DONE ? 0 : ln__sq_err(be, rc, "remove tree");
}

/* Walk the subtree of queue's job id into t; nothing written. */
static int tree_walk(sq_be *be, const char *queue, const char *id, tree *t) {
    int64_t rid;
    int state;
    int err = ln__sq_find_job(be, queue, id, &rid, &state);
    if (err != 0) return err;
    int iteration = t->pending_only ? 0 : ln__sq_is_current_iteration(be, queue, id);
    if (iteration != 0)
        return iteration < 0 ? iteration
                             : ln__jobs_be_err(&be->base, LN_EBUSY,
                                               "job '%s' is its job scheduler's current "
                                               "iteration: remove the scheduler instead",
                                               id);
    int rc = sqlite3_prepare_v2(be->db, t->pending_only ? TREE_PENDING_KIDS_SQL : TREE_KIDS_SQL, -1,
                                &t->kids, NULL);
    if (rc != SQLITE_OK) return ln__sq_err(be, rc, "remove tree");
    if ((err = tree_push(be, t, rid, state, 0, queue, id)) != 0) return err;
    t->entries = 1;
    for (size_t i = 0; err == 0 && i < t->n; i++) err = tree_kids(be, t, i, id);
    return err;
}

/* Delete the walked jobs, children before their parents (the schema's
 * triggers then release a parent whose last pending child went, outside
 * the tree too), each with its "removed" event. */
static int tree_delete(sq_be *be, const tree *t, int64_t now) {
    for (size_t k = t->n; k-- > (t->pending_only ? 1u : 0u);) {
        const tree_node *nd = &t->v[k];
        int priority = nd->priority;
        int err = ln__sq_remove_row(be, nd->queue, nd->rid, &priority, "remove tree");
        if (err == 0)
            err = ln__sq_event(be, nd->queue, "removed", nd->id, "prev",
                               ln__sq_prev_name(nd->state, priority), NULL, NULL, now);
        if (err != 0) return err;
    }
    return 0;
}

static int remove_tree_once(sq_be *be, const char *queue, const char *id, size_t max,
                            int pending_only, size_t *removed) {
    tree t = {0};
    t.pending_only = pending_only;
    t.max = max > 0 ? max : 1; /* entries: the root and the children its tree records */
    if ((t.v = ln__calloc(t.max, sizeof *t.v)) == NULL)
        return ln__jobs_be_err(&be->base, LN_ENOMEM, "out of memory");
    int64_t now;
    int err = ln__sq_begin_write(be, &now);
    if (err == 0) {
        if ((err = tree_walk(be, queue, id, &t)) == 0) err = tree_delete(be, &t, now);
        if (err == 0)
            err = ln__sq_commit(be);
        else
            ln__sq_rollback(be);
    }
    if (err == 0) *removed = t.n - (pending_only ? 1 : 0);
    tree_free(&t);
    return err;
}

static int remove_tree_mode(ln__jobs_be *b, const char *queue, const char *id, size_t max,
                            int pending_only, size_t *removed) {
    sq_be *be = (sq_be *)b;
    *removed = 0;
    ln__sq_room_begin(be);
    int err = remove_tree_once(be, queue, id, max, pending_only, removed);
    if (ln__sq_retry_for_space(be, err, 1))
        err = remove_tree_once(be, queue, id, max, pending_only, removed);
    err = ln__sq_relieved(be, err);
    ln__sq_room_end(be);
    return err;
}

int ln__sq_remove_tree(ln__jobs_be *b, const char *queue, const char *id, size_t max,
                       size_t *removed) {
    return remove_tree_mode(b, queue, id, max, 0, removed);
}

/* The unprocessed children of job id and their
 * unprocessed subtrees, the job kept (docs/internals/flows.md). */
int ln__sq_remove_unprocessed(ln__jobs_be *b, const char *queue, const char *id, size_t max,
                              size_t *removed) {
    return remove_tree_mode(b, queue, id, max, 1, removed);
}
