/* flow.c - the SQLite store: flows (jobs.h "Flows";
 * docs/internals/flows.md): add_flow, children, and the hooks of the
 * other paths. A flow is added in one transaction; a child's completion or
 * final failure updates its parent in the transaction that records it
 * (record_finish in step.c calls ln__sq_flow_child_done only for a row
 * with a parent_rid, so other jobs pay nothing). Removing a subtree is
 * flow_tree.c, children added to an existing parent flow_parent.c. */
#include "sqlite_int.h"

#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BIND_TEXT(s, i, v) sqlite3_bind_text((s), (i), (v), -1, SQLITE_STATIC)
/* How far a failure or a clean climbs a chain of parents in one
 * transaction (backend.h). */
#define CLIMB_MAX LN__PARENT_CLIMB_MAX

static int run_flow_set(sq_be *be, int64_t rid, const ln__flow_new *nd, int64_t prid) {
    sqlite3_stmt *s = ln__sq_stmt_get(be, S_FLOW_SET);
    if (s == NULL) return LN_EBACKEND;
    sqlite3_bind_int64(s, 1, rid);
    sqlite3_bind_int64(s, 2, (int64_t)nd->nchildren);
    if (prid > 0) sqlite3_bind_int64(s, 3, prid);
    sqlite3_bind_int(s, 4, nd->on_fail | (nd->nchildren > 0 ? SQ_FLOW_PARENT : 0));
    return ln__sq_run(be, s, "add flow (links)");
}

/* "queue:id" as a new string (ln__free), NULL without memory: a child's
 * key holds its whole id, of any length (docs/internals/long-ids.md). */
static char *join_key(const char *queue, const char *id) {
    size_t ql = strlen(queue), il = strlen(id);
    char *key = ln__malloc(ql + il + 2);
    if (key == NULL) return NULL;
    memcpy(key, queue, ql);
    key[ql] = ':';
    memcpy(key + ql + 1, id, il + 1);
    return key;
}

static int add_dep(sq_be *be, int64_t prid, int64_t rid, const char *queue, const char *id) {
    char *key = join_key(queue, id);
    if (key == NULL) return ln__jobs_be_err(&be->base, LN_ENOMEM, "out of memory");
    sqlite3_stmt *s = ln__sq_stmt_get(be, S_DEP_ADD);
    int err = LN_EBACKEND;
    if (s != NULL) {
        sqlite3_bind_int64(s, 1, prid);
        sqlite3_bind_int64(s, 2, rid);
        BIND_TEXT(s, 3, key);
        err = ln__sq_run(be, s, "add flow (dependency)"); /* (resets s: key unbound) */
    }
    ln__free(key);
    return err;
}

/* The events of node nd just added: added, then waiting-children (a
 * parent), delayed or waiting. */
static int node_events(sq_be *be, const ln__flow_new *nd, int64_t now) {
    const ln__job_new *j = &nd->job;
    int err = ln__sq_event(be, nd->queue, "added", j->id, "name", j->name, NULL, NULL, now);
    if (err != 0) return err;
    if (nd->nchildren > 0)
        return ln__sq_event(be, nd->queue, "waiting-children", j->id, NULL, NULL, NULL, NULL, now);
    if (j->opts.delay_ms <= 0)
        return ln__sq_event(be, nd->queue, "waiting", j->id, NULL, NULL, NULL, NULL, now);
    char due[24];
    snprintf(due, sizeof due, "%lld", (long long)(now + j->opts.delay_ms));
    return ln__sq_event(be, nd->queue, "delayed", j->id, "delay", due, NULL, NULL, now);
}

/* One node: insert, link to its parent, count, events. */
static int add_node(sq_be *be, ln__flow_new *nodes, size_t i, int64_t *rids, int64_t now) {
    ln__flow_new *nd = &nodes[i];
    ln__job_new *j = &nd->job;
    int err = ln__sq_insert_job(be, nd->queue, j, now, "add flow");
    if (err == 1)
        return ln__jobs_be_err(&be->base, LN_EINVAL, "flow node %zu: queue '%s' has a job '%s'", i,
                               nd->queue, j->opts.job_id);
    if (err != 0) return err;
    int64_t rid = rids[i] = sqlite3_last_insert_rowid(be->db);
    ln__free(j->id); /* the backend sets it; any length (job_record.h) */
    if ((j->id = ln__sq_id_dup(rid, j->opts.job_id)) == NULL)
        return ln__jobs_be_err(&be->base, LN_ENOMEM, "out of memory");
    j->existed = 0;
    /* S_ADD's state is counted here; the move to waiting-children by the
     * triggers (sqlite_int.h). */
    if ((err = ln__sq_count(be, nd->queue, ln__sq_new_state(&j->opts), 1)) != 0) return err;
    int64_t prid = nd->parent >= 0 ? rids[nd->parent] : 0;
    if (nd->nchildren > 0 || prid > 0) err = run_flow_set(be, rid, nd, prid);
    if (err == 0 && prid > 0) err = add_dep(be, prid, rid, nd->queue, j->id);
    if (err == 0 && nd->parent < 0 && j->opts.parent_queue != NULL) /* a root with a parent */
        err = ln__sq_dynflow_link(be, nd->queue, j, rid, 0, 1, now);
    if (err == 0) err = node_events(be, nd, now);
    return err;
}

int ln__sq_add_flow(ln__jobs_be *b, ln__flow_new *nodes, size_t n) {
    sq_be *be = (sq_be *)b;
    int64_t now;
    int err = ln__sq_reserve_check(be); /* adds never use the space reserve */
    if (err != 0) return err;
    int64_t *rids = ln__calloc(n, sizeof *rids);
    if (rids == NULL) return ln__jobs_be_err(&be->base, LN_ENOMEM, "out of memory");
    if ((err = ln__sq_begin_write(be, &now)) != 0) {
        ln__free(rids);
        return err;
    }
    for (size_t i = 0; i < n && err == 0; i++) err = add_node(be, nodes, i, rids, now);
    ln__free(rids);
    if (err == 0)
        err = ln__sq_commit(be);
    else
        ln__sq_rollback(be);
    return err == LN_ENOSPC ? ln__sq_add_full(be) : err;
}

/* -------------------------------------------------- a child finished */

/* Text column col of s copied into buf ("" for NULL): for queue names,
 * which are bounded (LN_JOB_QUEUE_MAX). */
static void col_text(sqlite3_stmt *s, int col, char *buf, size_t size) {
    const unsigned char *t = sqlite3_column_text(s, col);
    snprintf(buf, size, "%s", t != NULL ? (const char *)t : "");
}

/* The public id of row rid whose caller id is column col of s (NULL or
 * "" when store-numbered), as a new string (ln__free) read while s is on
 * its row; NULL without memory. Ids have any length. */
static char *col_id(sqlite3_stmt *s, int col, int64_t rid) {
    const char *cid = (const char *)sqlite3_column_text(s, col);
    return ln__sq_id_dup(rid, cid != NULL && cid[0] ? cid : NULL);
}

/* Parent prid out of waiting-children (force: even with pending deps),
 * with its event. */
int ln__sq_flow_release(sq_be *be, int64_t prid, int force, int64_t now) {
    sqlite3_stmt *s = ln__sq_stmt_get(be, S_FLOW_RELEASE);
    if (s == NULL) return LN_EBACKEND;
    sqlite3_bind_int64(s, 1, prid);
    sqlite3_bind_int64(s, 2, now);
    sqlite3_bind_int(s, 3, force);
    int rc = sqlite3_step(s);
    if (rc != SQLITE_ROW) {
        int err = rc == SQLITE_DONE ? 0 : ln__sq_err(be, rc, "release parent");
        sqlite3_reset(s);
        return err;
    }
    char queue[LN_JOB_QUEUE_MAX];
    col_text(s, 0, queue, sizeof queue);
    char *id = col_id(s, 1, prid);
    int64_t delay = sqlite3_column_int64(s, 2);
    int err = ln__sq_run(be, s, "release parent");
    if (err == 0 && id == NULL) err = ln__jobs_be_err(&be->base, LN_ENOMEM, "out of memory");
    if (err == 0 && delay <= 0) {
        err = ln__sq_event(be, queue, "waiting", id, "prev", "waiting-children", NULL, NULL, now);
    } else if (err == 0) {
        char due[24];
        snprintf(due, sizeof due, "%lld", (long long)(now + delay));
        err = ln__sq_event(be, queue, "delayed", id, "delay", due, NULL, NULL, now);
    }
    ln__free(id);
    return err;
}

/* Mark child rid of prid: status (1 processed, 2 failed, 3 unsuccessful,
 * 5 removed) with value. *changed: it was pending. */
static int mark_dep(sq_be *be, int64_t prid, int64_t rid, int status, const char *value,
                    int *changed) {
    sqlite3_stmt *s = ln__sq_stmt_get(be, S_DEP_DONE);
    if (s == NULL) return LN_EBACKEND;
    sqlite3_bind_int64(s, 1, prid);
    sqlite3_bind_int64(s, 2, rid);
    sqlite3_bind_int(s, 3, status);
    if (value != NULL) BIND_TEXT(s, 4, value);
    int err = ln__sq_run(be, s, "flow dependency");
    *changed = err == 0 && sqlite3_changes(be->db) == 1;
    if (err != 0 || !*changed || status == 3) return err; /* 3 keeps blocking */
    if ((s = ln__sq_stmt_get(be, S_FLOW_DEPS_DEC)) == NULL) return LN_EBACKEND;
    sqlite3_bind_int64(s, 1, prid);
    return ln__sq_run(be, s, "flow dependency count");
}

static int child_done(sq_be *be, const char *key, int64_t rid, int64_t prid, int pflags,
                      int completed, const char *text, int64_t now, int depth,
                      const ln__sq_wkeep *wk);

/* fail-parent: parent prid fails now if it is not running or finished
 * (an active parent keeps its unsuccessful child, which refuses its
 * completion), and its own parent hears of it. Its retention: its own, or
 * for one without (LN_KEEP_ALL) in the queue of the worker wk (may be
 * NULL) that recorded the failure, that worker's remove_on_fail, as on
 * Redis the worker taking such a parent fails it (BullMQ's deferred
 * failure) with its own. */
static int fail_parent(sq_be *be, int64_t prid, const char *reason, int64_t now, int depth,
                       const ln__sq_wkeep *wk) {
    sqlite3_stmt *s = ln__sq_stmt_get(be, S_FLOW_FAIL_PARENT);
    if (s == NULL) return LN_EBACKEND;
    sqlite3_bind_int64(s, 1, prid);
    BIND_TEXT(s, 2, reason);
    sqlite3_bind_int64(s, 3, now);
    int rc = sqlite3_step(s);
    if (rc != SQLITE_ROW) {
        int err = rc == SQLITE_DONE ? 0 : ln__sq_err(be, rc, "fail parent");
        sqlite3_reset(s);
        return err;
    }
    char queue[LN_JOB_QUEUE_MAX];
    col_text(s, 0, queue, sizeof queue);
    char *id = col_id(s, 1, prid);
    int64_t gprid = sqlite3_column_int64(s, 2);
    int gflags = sqlite3_column_int(s, 3), mode = sqlite3_column_int(s, 4);
    int64_t value = sqlite3_column_int64(s, 5);
    if (mode == LN_KEEP_ALL && wk != NULL && strcmp(queue, wk->queue) == 0) {
        mode = wk->keep.mode;
        value = wk->keep.value;
    }
    int err = ln__sq_run(be, s, "fail parent");
    char *key = id != NULL && gprid > 0 ? join_key(queue, id) : NULL;
    if (err == 0 && (id == NULL || (gprid > 0 && key == NULL)))
        err = ln__jobs_be_err(&be->base, LN_ENOMEM, "out of memory");
    if (err == 0)
        err = ln__sq_event(be, queue, "failed", id, "failedReason", reason, "prev",
                           "waiting-children", now);
    if (err == 0 && gprid > 0 && depth < CLIMB_MAX)
        err = child_done(be, key, prid, gprid, gflags, 0, reason, now, depth + 1, wk);
    if (err == 0) err = ln__sq_apply_keep(be, queue, prid, ST_FAILED, mode, value, now, 0);
    ln__free(key);
    ln__free(id);
    return err;
}

/* BullMQ's updateParentDepsIfNeeded (completed) and
 * moveChildFromDependenciesIfNeeded (failed for good). */
static int child_done(sq_be *be, const char *key, int64_t rid, int64_t prid, int pflags,
                      int completed, const char *text, int64_t now, int depth,
                      const ln__sq_wkeep *wk) {
    int changed = 0, err;
    if (completed) {
        err = mark_dep(be, prid, rid, 1, text != NULL ? text : "null", &changed);
        return err == 0 && changed ? ln__sq_flow_release(be, prid, 0, now) : err;
    }
    if (pflags & LN__FLOW_FPOF) {
        if ((err = mark_dep(be, prid, rid, 3, NULL, &changed)) != 0 || !changed) return err;
        size_t size = strlen(key) + sizeof "child  failed"; /* the whole key */
        char *reason = ln__malloc(size);
        if (reason == NULL) return ln__jobs_be_err(&be->base, LN_ENOMEM, "out of memory");
        snprintf(reason, size, "child %s failed", key);
        err = fail_parent(be, prid, reason, now, depth, wk);
        ln__free(reason);
        return err;
    }
    if (pflags & LN__FLOW_CPOF) {
        err = mark_dep(be, prid, rid, 2, text, &changed);
        return err == 0 && changed ? ln__sq_flow_release(be, prid, 1, now) : err;
    }
    if (pflags & (LN__FLOW_IDOF | LN__FLOW_RDOF)) {
        int idof = (pflags & LN__FLOW_IDOF) != 0;
        err = mark_dep(be, prid, rid, idof ? 2 : 5, idof ? text : NULL, &changed);
        return err == 0 && changed ? ln__sq_flow_release(be, prid, 0, now) : err;
    }
    return 0; /* no option: it stays a pending dependency */
}

int ln__sq_flow_child_done(sq_be *be, const char *queue, const char *id, int64_t rid, int64_t prid,
                           int pflags, int completed, const char *text, int64_t now,
                           const ln__sq_wkeep *wk) {
    char *key = join_key(queue, id);
    if (key == NULL) return ln__jobs_be_err(&be->base, LN_ENOMEM, "out of memory");
    int err = child_done(be, key, rid, prid, pflags, completed, text, now, 0, wk);
    ln__free(key);
    return err;
}

int ln__sq_flow_refused(sq_be *be, ln__job_done *d, char *reason, size_t reason_size) {
    sqlite3_stmt *s = ln__sq_stmt_get(be, S_FLOW_BLOCKED);
    if (s == NULL) return LN_EBACKEND;
    sqlite3_bind_int64(s, 1, (int64_t)d->ref.key);
    sqlite3_bind_int64(s, 2, strtoll(d->ref.token, NULL, 10));
    int rc = sqlite3_step(s);
    if (rc != SQLITE_ROW) {
        int err = rc == SQLITE_DONE ? 0 : ln__sq_err(be, rc, "complete (dependencies)");
        sqlite3_reset(s);
        return err;
    }
    int failed_child = sqlite3_column_int(s, 1);
    sqlite3_reset(s);
    /* Pending ones: BullMQ's worker retries that error with the job's
     * backoff, jitter and custom strategy included, which only the
     * worker can apply. */
    if (!failed_child) return 2;
    d->result = NULL;
    d->reason = reason;
    snprintf(reason, reason_size, /* BullMQ: unrecoverable */
             "Cannot complete job %s because it has at least one failed child. moveToFinished",
             d->ref.id);
    d->kind = LN__DONE_FAIL;
    return 1;
}

/* ------------------------------------------------------------ reading */

/* "queue:id" into c's queue and id (queue names have no ':'). */
static int split_key(const char *key, char **queue, char **id) {
    const char *colon = strchr(key, ':');
    if (colon == NULL) return 0;
    *queue = ln__malloc((size_t)(colon - key) + 1);
    if (*queue == NULL) return LN_ENOMEM;
    memcpy(*queue, key, (size_t)(colon - key));
    (*queue)[colon - key] = '\0';
    return (*id = ln__strdup(colon + 1)) != NULL ? 0 : LN_ENOMEM;
}

static int read_parent(sq_be *be, int64_t rid, ln_job_children *out) {
    sqlite3_stmt *s = ln__sq_stmt_get(be, S_FLOW_PARENT);
    if (s == NULL) return LN_EBACKEND;
    sqlite3_bind_int64(s, 1, rid);
    int rc = sqlite3_step(s), err = 0;
    if (rc == SQLITE_ROW) {
        char queue[LN_JOB_QUEUE_MAX];
        col_text(s, 0, queue, sizeof queue);
        if ((out->parent_id = col_id(s, 1, sqlite3_column_int64(s, 2))) == NULL ||
            (out->parent_key = join_key(queue, out->parent_id)) == NULL ||
            (out->parent_queue = ln__strdup(queue)) == NULL)
            err = LN_ENOMEM;
    } else if (rc != SQLITE_DONE) {
        err = ln__sq_err(be, rc, "children (parent)");
    }
    sqlite3_reset(s);
    return err;
}

static int read_child(sqlite3_stmt *s, ln_job_child *c) {
    memset(c, 0, sizeof *c);
    const unsigned char *key = sqlite3_column_text(s, 0), *v = sqlite3_column_text(s, 2);
    int st = sqlite3_column_int(s, 1);
    c->status = st == 1   ? LN_CHILD_PROCESSED
                : st == 2 ? LN_CHILD_FAILED
                : st == 3 ? LN_CHILD_UNSUCCESSFUL
                          : LN_CHILD_PENDING;
    if ((c->key = ln__strdup(key != NULL ? (const char *)key : "")) == NULL) return LN_ENOMEM;
    if (v != NULL && (c->value = ln__strdup((const char *)v)) == NULL) return LN_ENOMEM;
    return split_key(c->key, &c->queue, &c->id);
}

static int read_children(sq_be *be, int64_t rid, ln_job_children *out) {
    sqlite3_stmt *s = ln__sq_stmt_get(be, S_FLOW_CHILDREN);
    if (s == NULL) return LN_EBACKEND;
    sqlite3_bind_int64(s, 1, rid);
    sqlite3_bind_int64(s, 2, 4 * (int64_t)LN_JOB_CHILDREN_MAX);
    size_t cap = 0;
    int rc = SQLITE_DONE, err = 0;
    while (err == 0 && (rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (out->n == cap) {
            size_t ncap = cap ? cap * 2 : 8;
            ln_job_child *p = ln__realloc(out->children, ncap * sizeof *p);
            if (p == NULL) {
                err = LN_ENOMEM;
                break;
            }
            out->children = p;
            cap = ncap;
        }
        err = read_child(s, &out->children[out->n++]);
    }
    if (err == 0 && rc != SQLITE_DONE) err = ln__sq_err(be, rc, "children");
    sqlite3_reset(s);
    return err;
}

int ln__sq_children(ln__jobs_be *b, const char *queue, const char *id, ln_job_children *out) {
    sq_be *be = (sq_be *)b;
    int64_t rid = 0;
    int state = 0;                        /* (any state has children to read) */
    int err = ln__sq_exec(be, S_BEGIN_R); /* one snapshot */
    if (err != 0) return err;
    err = ln__sq_find_job(be, queue, id, &rid, &state);
    if (err == 0) err = read_parent(be, rid, out);
    if (err == 0) err = read_children(be, rid, out);
    ln__sq_rollback(be);
    if (err == LN_ENOMEM) return ln__jobs_be_err(&be->base, LN_ENOMEM, "out of memory");
    return err;
}

/* A clean removes for good, as BullMQ's clean does (its removeJob with
 * 'hard'): a parent of the cleaned queue that a cleaned failed child was
 * the last pending dependency of goes too, and so on up while the next
 * parent is of the queue; one of another queue is released (the schema's
 * trigger does that). ln__sq_flow_clean_parents, before the clean's
 * delete: the queue's waiting-children parents of the children it takes
 * (bound as S_CLEAN_PARENTS says), into *out (ln__free), *n of them; none
 * and no allocation when the queue has no such parent (one index probe).
 * ln__sq_flow_clean_drop, after it: removes those the delete released. */
int ln__sq_flow_clean_parents(sq_be *be, const char *queue, int64_t keep, int64_t cutoff, int chunk,
                              int64_t **out, size_t *n) {
    *out = NULL;
    *n = 0;
    sqlite3_stmt *s = ln__sq_stmt_get(be, S_CLEAN_PARENTS);
    if (s == NULL) return LN_EBACKEND;
    BIND_TEXT(s, 1, queue);
    sqlite3_bind_int64(s, 2, keep);
    sqlite3_bind_int64(s, 3, cutoff);
    sqlite3_bind_int(s, 4, chunk > 0 ? chunk : -1);
    size_t cap = 0;
    int rc = SQLITE_DONE, err = 0;
    while (err == 0 && (rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (*n == cap) {
            int64_t *more = ln__realloc(*out, (cap = cap ? 2 * cap : 16) * sizeof *more);
            if (more == NULL) {
                err = ln__jobs_be_err(&be->base, LN_ENOMEM, "out of memory");
                break;
            }
            *out = more;
        }
        (*out)[(*n)++] = sqlite3_column_int64(s, 0);
    }
    if (err == 0 && rc != SQLITE_DONE) err = ln__sq_err(be, rc, "clean (parents)");
    sqlite3_reset(s);
    if (err != 0) {
        ln__free(*out);
        *out = NULL;
        *n = 0;
    }
    return err;
}

/* Remove parent rid if the clean released it (it was in waiting-children:
 * now ready or delayed with no dependency left); *up gets its parent when
 * that one is of queue and in waiting-children, so may be released by
 * this removal in turn, else 0. */
static int drop_released(sq_be *be, const char *queue, int64_t rid, int64_t *up) {
    *up = 0;
    sqlite3_stmt *s = ln__sq_stmt_get(be, S_CLEAN_PARENT_UP);
    if (s == NULL) return LN_EBACKEND;
    sqlite3_bind_int64(s, 1, rid);
    BIND_TEXT(s, 2, queue);
    int rc = sqlite3_step(s), released = 0;
    if (rc == SQLITE_ROW) {
        released = sqlite3_column_int(s, 0);
        if (released && sqlite3_column_int(s, 2)) *up = sqlite3_column_int64(s, 1);
        rc = sqlite3_step(s);
    }
    sqlite3_reset(s);
    if (rc != SQLITE_DONE) return ln__sq_err(be, rc, "clean (parent)");
    if (!released) return 0;
    if ((s = ln__sq_stmt_get(be, S_DELETE_RID)) == NULL) return LN_EBACKEND;
    sqlite3_bind_int64(s, 1, rid);
    return ln__sq_run(be, s, "clean (parent)");
}

int ln__sq_flow_clean_drop(sq_be *be, const char *queue, const int64_t *parents, size_t n) {
    for (size_t i = 0; i < n; i++) {
        int64_t rid = parents[i];
        for (int depth = 0; rid != 0 && depth < CLIMB_MAX; depth++) {
            int err = drop_released(be, queue, rid, &rid);
            if (err != 0) return err;
        }
    }
    return 0;
}
