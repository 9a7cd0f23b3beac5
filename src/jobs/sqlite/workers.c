/* workers.c - the SQLite store: the workers connected to a queue
 * (jobs.h ln_jobs_workers). A file has no connections to list, so each
 * ln_worker_run keeps a row of lanes_workers (schema migration "workers"):
 * it inserts it when the run starts, refreshes seen_at every
 * LN_JOB_WORKER_BEAT_MS from the worker's maintenance phase, and deletes
 * it when the run ends. A listing shows the rows seen within
 * LN_JOB_WORKER_WINDOW_MS, so a crashed run drops out by itself.
 *
 * Bounded work: a heartbeat is one small write transaction (one
 * primary-key update or insert, and at most PRUNE_MAX rows of the queue
 * long dead deleted through the (queue, seen_at) index); a listing one
 * range read of that index, at most 'max' rows. These statements run every
 * few seconds per worker, not per job, so they are prepared per call
 * instead of joining the statement cache. Docs: docs/internals/workers.md. */
#include "sqlite_int.h"

#include "internal.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define PRUNE_MAX 16 /* dead rows deleted per heartbeat */
/* A row not seen for this long is deleted by the next heartbeat on its queue. */
#define PRUNE_AFTER_MS (10 * LN_JOB_WORKER_WINDOW_MS)

static int prep(sq_be *be, const char *sql, sqlite3_stmt **s) {
    int rc = sqlite3_prepare_v2(be->db, sql, -1, s, NULL);
    return rc == SQLITE_OK ? 0 : ln__sq_err(be, rc, "workers");
}

/* Run a prepared statement that returns no rows and finalize it. */
static int run_once(sq_be *be, sqlite3_stmt *s) {
    int rc = sqlite3_step(s);
    int err = rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 : ln__sq_err(be, rc, "workers");
    sqlite3_finalize(s);
    return err;
}

static int insert_row(sq_be *be, const char *queue, int64_t now, int64_t *id) {
    char host[256] = "", name[32];
    if (gethostname(host, sizeof host) != 0) host[0] = '\0';
    host[sizeof host - 1] = '\0';
    snprintf(name, sizeof name, "lanes-%ld", (long)getpid());
    sqlite3_stmt *s;
    int err = prep(be,
                   "INSERT INTO lanes_workers(queue, name, host, pid, started_at, seen_at) "
                   "VALUES (?1, ?2, ?3, ?4, ?5, ?5)",
                   &s);
    if (err != 0) return err;
    sqlite3_bind_text(s, 1, queue, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 2, name, -1, SQLITE_STATIC);
    if (host[0] != '\0') sqlite3_bind_text(s, 3, host, -1, SQLITE_STATIC);
    sqlite3_bind_int64(s, 4, (int64_t)getpid());
    sqlite3_bind_int64(s, 5, now);
    if ((err = run_once(be, s)) == 0) *id = sqlite3_last_insert_rowid(be->db);
    return err;
}

/* Refresh row id (or delete it: leaving); *changed = rows touched. */
static int touch_row(sq_be *be, int64_t id, int64_t now, int leaving, int *changed) {
    sqlite3_stmt *s;
    int err = prep(be,
                   leaving ? "DELETE FROM lanes_workers WHERE id = ?1"
                           : "UPDATE lanes_workers SET seen_at = ?2 WHERE id = ?1",
                   &s);
    if (err != 0) return err;
    sqlite3_bind_int64(s, 1, id);
    if (!leaving) sqlite3_bind_int64(s, 2, now);
    if ((err = run_once(be, s)) == 0) *changed = sqlite3_changes(be->db);
    return err;
}

static int prune(sq_be *be, const char *queue, int64_t now) {
    sqlite3_stmt *s;
    int err = prep(be,
                   "DELETE FROM lanes_workers WHERE id IN (SELECT id FROM lanes_workers "
                   "WHERE queue = ?1 AND seen_at < ?2 LIMIT ?3)",
                   &s);
    if (err != 0) return err;
    sqlite3_bind_text(s, 1, queue, -1, SQLITE_STATIC);
    sqlite3_bind_int64(s, 2, now - PRUNE_AFTER_MS);
    sqlite3_bind_int(s, 3, PRUNE_MAX);
    return run_once(be, s);
}

int ln__sq_worker_beat(ln__jobs_be *b, const char *queue, int64_t *id, int leaving) {
    sq_be *be = (sq_be *)b;
    if (leaving && *id == 0) return 0;
    int64_t now;
    int err = ln__sq_begin_write(be, &now);
    if (err != 0) return err;
    int changed = 0;
    if (*id != 0) err = touch_row(be, *id, now, leaving, &changed);
    /* A new run, or a row pruned while this run could not beat (a store
     * unreachable for long): register again. */
    if (err == 0 && !leaving && changed == 0) err = insert_row(be, queue, now, id);
    if (err == 0 && !leaving) err = prune(be, queue, now);
    if (err != 0) {
        ln__sq_rollback(be);
        return err;
    }
    if ((err = ln__sq_commit(be)) == 0 && leaving) *id = 0;
    return err;
}

static char *col_dup(sqlite3_stmt *s, int col) {
    const unsigned char *t = sqlite3_column_text(s, col);
    return t != NULL ? ln__strdup((const char *)t) : NULL;
}

static int read_row(sqlite3_stmt *s, ln_worker_info *w) {
    memset(w, 0, sizeof *w);
    char id[24];
    snprintf(id, sizeof id, "%lld", (long long)sqlite3_column_int64(s, 0));
    w->id = ln__strdup(id);
    w->name = col_dup(s, 1);
    w->host = col_dup(s, 2);
    w->pid = sqlite3_column_int64(s, 3);
    w->started_ms = sqlite3_column_int64(s, 4);
    w->seen_ms = sqlite3_column_int64(s, 5);
    w->kind = LN_WORKER_LANES;
    int host_lost = w->host == NULL && sqlite3_column_type(s, 2) != SQLITE_NULL;
    return w->id == NULL || w->name == NULL || host_lost ? LN_ENOMEM : 0;
}

/* The store clock (store.c's S_NOW). */
static int store_now(sq_be *be, int64_t *now) {
    sqlite3_stmt *s = ln__sq_stmt_get(be, S_NOW);
    if (s == NULL) return LN_EBACKEND;
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) *now = sqlite3_column_int64(s, 0);
    int err = rc == SQLITE_ROW ? 0 : ln__sq_err(be, rc, "clock");
    sqlite3_reset(s);
    return err;
}

int ln__sq_workers(ln__jobs_be *b, const char *queue, size_t max, ln_worker_info **out, size_t *n) {
    sq_be *be = (sq_be *)b;
    sqlite3_stmt *s;
    int err = prep(be,
                   "SELECT id, name, host, pid, started_at, seen_at FROM lanes_workers "
                   "WHERE queue = ?1 AND seen_at >= ?2 - ?3 ORDER BY started_at, id LIMIT ?4",
                   &s);
    if (err != 0) return err;
    int64_t now = 0;
    if ((err = store_now(be, &now)) != 0) {
        sqlite3_finalize(s);
        return err;
    }
    sqlite3_bind_text(s, 1, queue, -1, SQLITE_STATIC);
    sqlite3_bind_int64(s, 2, now);
    sqlite3_bind_int64(s, 3, LN_JOB_WORKER_WINDOW_MS);
    sqlite3_bind_int64(s, 4, (int64_t)max);
    size_t cap = 0;
    int rc = SQLITE_DONE;
    while (err == 0 && (rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (*n == cap) {
            size_t c = cap ? cap * 2 : 8;
            ln_worker_info *a = ln__realloc(*out, c * sizeof *a);
            if (a == NULL) {
                err = ln__jobs_be_err(b, LN_ENOMEM, "out of memory");
                break;
            }
            *out = a;
            cap = c;
        }
        err = read_row(s, &(*out)[(*n)++]);
        if (err != 0) err = ln__jobs_be_err(b, err, "out of memory");
    }
    if (err == 0 && rc != SQLITE_DONE) err = ln__sq_err(be, rc, "list workers");
    sqlite3_finalize(s);
    return err;
}
