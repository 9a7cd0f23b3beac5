/* store.c - the SQLite store: open and close (the URL, the connection
 * and its settings), the statement cache, transactions, error mapping and
 * the method table. The schema and its migrations are in schema.c, the
 * statements' SQL in sql.c; each method in the file of its concept: add.c,
 * view.c, edit.c (and remove, promote), retry.c, cancel.c, step.c (the
 * worker's round trip), stalled.c, flow.c, flow_tree.c, flow_parent.c,
 * sched.c, limit.c, events.c, metrics.c, workers.c, admin.c (a queue as a
 * whole) and file.c (check).
 *
 * DESIGN
 * The schema (one table of jobs, an index per hot path, counted counts) is
 * described in schema.c.
 * Every write runs in BEGIN IMMEDIATE: a writer waits for the lock up front
 * (busy_wait below) instead of failing with SQLITE_BUSY when it upgrades.
 * Times come from SQLite's clock (julianday('now') in ms), read once per
 * transaction, so every process on the machine compares leases against the
 * same clock.
 * The database runs in WAL mode, synchronous=NORMAL by default (durable
 * across process crashes, the last commits may roll back on power loss) or
 * FULL with ?sync=full (the WAL is fsynced at every commit).
 *
 * Disk full: a reserve of disk space beside the database keeps finishing,
 * failing, cleaning and removing stored jobs possible on a full disk
 * (reserve.c has the design).
 */
#include "sqlite_int.h"

#include "internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---------------------------------------------------------------- errors */

static int map_rc(sqlite3 *db, int rc) {
    int sys = db != NULL ? sqlite3_system_errno(db) : 0;
    switch (rc & 0xff) {
    case SQLITE_FULL:
        return LN_ENOSPC;
    case SQLITE_NOMEM:
        return LN_ENOMEM;
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
        return LN_ECORRUPT;
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_AUTH:
        return LN_EACCES;
    case SQLITE_CANTOPEN:
        return sys == EACCES || sys == EPERM || sys == EROFS ? LN_EACCES : LN_EIO;
    case SQLITE_IOERR:
        return sys == ENOSPC ? LN_ENOSPC : LN_EIO;
    default:
        return LN_EBACKEND;
    }
}

int ln__sq_corrupt(sq_be *be, const char *what, long long rid) {
    char row[48] = "";
    if (rid != 0) snprintf(row, sizeof row, " (job row %lld)", rid);
    return ln__jobs_be_err(&be->base, LN_ECORRUPT,
                           "store is corrupt: %s%s; restore it from a copy "
                           "(PRAGMA integrity_check says more)",
                           what, row);
}

int ln__sq_err(sq_be *be, int rc, const char *what) {
    const char *msg = be->db != NULL ? sqlite3_errmsg(be->db) : sqlite3_errstr(rc);
    int sys = be->db != NULL ? sqlite3_system_errno(be->db) : 0;
    char ebuf[128];
    if (sys != 0 && (rc & 0xff) != SQLITE_BUSY)
        return ln__jobs_be_err(&be->base, map_rc(be->db, rc), "sqlite: %s: %s (%s)", what, msg,
                               strerror_r(sys, ebuf, sizeof ebuf));
    return ln__jobs_be_err(&be->base, map_rc(be->db, rc), "sqlite: %s: %s", what, msg);
}

/* ------------------------------------------------------------ statements */

sqlite3_stmt *ln__sq_stmt_get(sq_be *be, sq_stmt id) {
    sqlite3_stmt *s = be->st[id];
    if (s != NULL) {
        sqlite3_reset(s);
        sqlite3_clear_bindings(s);
        return s;
    }
    int rc =
        sqlite3_prepare_v3(be->db, ln__sq_sql_text(id), -1, SQLITE_PREPARE_PERSISTENT, &s, NULL);
    if (rc != SQLITE_OK) {
        ln__sq_err(be, rc, "prepare");
        return NULL;
    }
    be->st[id] = s;
    return s;
}

int ln__sq_run_once(sq_be *be, const char *what, int64_t *out, const char *sql, const char *binds,
                    ...) {
    if (out != NULL) *out = 0;
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v2(be->db, sql, -1, &s, NULL);
    if (rc != SQLITE_OK) return ln__sq_err(be, rc, what);
    va_list ap;
    va_start(ap, binds);
    for (int i = 0; binds[i] != '\0'; i++) {
        if (binds[i] == 'i' || binds[i] == 'j') {
            int64_t v = va_arg(ap, int64_t);
            if (binds[i] == 'i' || v > 0) sqlite3_bind_int64(s, i + 1, v);
        } else {
            const char *t = va_arg(ap, const char *);
            int len = binds[i] == 'd' ? (int)va_arg(ap, size_t) : -1;
            sqlite3_bind_text(s, i + 1, t, len, SQLITE_TRANSIENT);
        }
    }
    va_end(ap);
    if ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (out != NULL) *out = sqlite3_column_int64(s, 0);
        rc = sqlite3_step(s);
    }
    sqlite3_finalize(s);
    return rc == SQLITE_DONE ? 0 : ln__sq_err(be, rc, what);
}

int ln__sq_dup_text(sqlite3_stmt *s, int col, char **out) {
    const unsigned char *t = sqlite3_column_text(s, col);
    *out = NULL;
    return t == NULL || (*out = ln__strdup((const char *)t)) != NULL ? 0 : LN_ENOMEM;
}

int ln__sq_run(sq_be *be, sqlite3_stmt *s, const char *what) {
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
    }
    if (rc != SQLITE_DONE) {
        rc = ln__sq_err(be, rc, what);
        sqlite3_reset(s);
        return rc;
    }
    sqlite3_reset(s);
    return 0;
}

int ln__sq_exec(sq_be *be, sq_stmt id) {
    sqlite3_stmt *s = ln__sq_stmt_get(be, id);
    if (s == NULL) return LN_EBACKEND;
    return ln__sq_run(be, s, ln__sq_sql_text(id));
}

int ln__sq_begin_write(sq_be *be, int64_t *now_ms) {
    int err = ln__sq_room_gate(be); /* reserve.c: a full disk */
    if (err == 0) err = ln__sq_exec(be, S_BEGIN_W);
    if (err != 0) return err;
    sqlite3_stmt *s = ln__sq_stmt_get(be, S_NOW);
    if (s == NULL || sqlite3_step(s) != SQLITE_ROW) {
        err = s != NULL ? ln__sq_err(be, sqlite3_errcode(be->db), "clock") : LN_EBACKEND;
        ln__sq_rollback(be);
        return err;
    }
    *now_ms = sqlite3_column_int64(s, 0);
    sqlite3_reset(s);
    return 0;
}

int ln__sq_count(sq_be *be, const char *queue, int state, int64_t delta) {
    if (delta == 0) return 0;
    sqlite3_stmt *s = ln__sq_stmt_get(be, S_COUNT);
    if (s == NULL) return LN_EBACKEND;
    sqlite3_bind_text(s, 1, queue, -1, SQLITE_STATIC);
    sqlite3_bind_int(s, 2, state);
    sqlite3_bind_int64(s, 3, delta);
    return ln__sq_run(be, s, "count jobs");
}

int ln__sq_commit(sq_be *be) {
    int err = be->dedup_due ? ln__sq_dedup_requeue(be) : 0; /* dedup_next.c */
    if (err == 0) err = ln__sq_room_commit(be);             /* reserve.c: a full disk */
    if (err == 0) err = ln__sq_exec(be, S_COMMIT);
    if (err != 0) ln__sq_rollback(be);
    return err;
}

void ln__sq_rollback(sq_be *be) {
    be->dedup_due = 0;
    if (sqlite3_get_autocommit(be->db)) return;
    /* Keep the first error's text: ROLLBACK's own failure adds nothing. */
    char saved[LN__JOBS_ERRMSG_MAX];
    memcpy(saved, be->base.errmsg, sizeof saved);
    sqlite3_exec(be->db, "ROLLBACK", NULL, NULL, NULL);
    memcpy(be->base.errmsg, saved, sizeof saved);
}

int64_t ln__sq_numeric_id(const char *id) {
    int64_t v = 0;
    if (*id == '\0' || *id == '0') return 0;
    for (const char *p = id; *p; p++) {
        if (*p < '0' || *p > '9' || v > (INT64_MAX - 9) / 10) return 0;
        v = v * 10 + (*p - '0');
    }
    return v;
}

/* ------------------------------------------------------------- open/close */

static void sq_close(ln__jobs_be *b, int forked) {
    sq_be *be = (sq_be *)b;
    if (be->reserve_fd >= 0) close(be->reserve_fd);
    if (!forked) {
        for (int i = 0; i < S_COUNT_; i++) sqlite3_finalize(be->st[i]);
        sqlite3_close_v2(be->db);
    }
    /* After fork() the connection belongs to the parent: finalizing or
     * closing it here could checkpoint or unlink its WAL. It is leaked. */
    ln__free(be);
}

/* The store's methods, in backend.h's order, each pointing at the
 * function of the file of its concept. No wait_open / pipe_open: idle
 * workers poll, and the front gives the worker its synchronous pipe
 * (front/store.c). No sched_taken: the take makes a scheduler's next
 * iteration in its own transaction (ln__sq_sched_taken, step.c). */
static const ln__store_methods sq_methods = {
    /* the store: here, file.c */
    .version = LN__STORE_METHODS_VERSION,
    .name = "sqlite",
    .close = sq_close,
    .check = ln__sq_check,
    /* jobs: add.c, view.c, retry.c, edit.c, cancel.c */
    .add = ln__sq_add,
    .get = ln__sq_get,
    .counts = ln__sq_counts,
    .list = ln__sq_list,
    .list_after = ln__sq_list_after,
    .logs = ln__sq_logs,
    .retry = ln__sq_retry,
    .remove = ln__sq_remove,
    .promote = ln__sq_promote,
    .cancel = ln__sq_cancel,
    .edit = ln__sq_edit,
    /* workers: step.c, stalled.c, cancel.c, workers.c */
    .step = ln__sq_step,
    .recover_stalled = ln__sq_recover_stalled,
    .release = ln__sq_release,
    .progress = ln__sq_progress,
    .log = ln__sq_log,
    .pending = ln__sq_pending,
    .wait_open = NULL,
    .pipe_open = NULL,
    .cancel_poll = ln__sq_cancel_poll,
    .worker_beat = ln__sq_worker_beat,
    .workers = ln__sq_workers,
    /* flows: flow.c, flow_tree.c, flow_parent.c */
    .add_flow = ln__sq_add_flow,
    .children = ln__sq_children,
    .remove_tree = ln__sq_remove_tree,
    .wait_children = ln__sq_wait_children,
    .wait_child = ln__sq_wait_child,
    .remove_unprocessed = ln__sq_remove_unprocessed,
    /* job schedulers: sched.c */
    .sched_upsert = ln__sq_sched_upsert,
    .sched_remove = ln__sq_sched_remove,
    .sched_get = ln__sq_sched_get,
    .sched_list = ln__sq_sched_list,
    .sched_taken = NULL,
    /* rate limits and global concurrency: limit.c */
    .limits = ln__sq_limits,
    /* events: events.c */
    .events_open = ln__sq_events_open,
    /* metrics: metrics.c */
    .metrics = ln__sq_metrics,
    /* a queue as a whole: admin.c */
    .queues = ln__sq_queues,
    .pause = ln__sq_pause,
    .is_paused = ln__sq_is_paused,
    .clean = ln__sq_clean,
    .drain = ln__sq_drain,
    .obliterate = ln__sq_obliterate,
};

/* Split "sqlite:PATH?k=v&k=v" into a path (ln__malloc'd) and settings. */
static int parse_url(sq_be *be, const char *url, char **path, unsigned *busy_ms) {
    const char *p = url + strlen("sqlite:");
    if (strncmp(p, "//", 2) == 0) p += 2; /* sqlite:///abs/path */
    const char *q = strchr(p, '?');
    size_t plen = q != NULL ? (size_t)(q - p) : strlen(p);
    if (plen == 0)
        return ln__jobs_be_err(&be->base, LN_EINVAL, "sqlite URL '%s' has no file path", url);
    while (q != NULL) {
        const char *k = q + 1;
        q = strchr(k, '&');
        size_t klen = q != NULL ? (size_t)(q - k) : strlen(k);
        char kv[64];
        if (klen >= sizeof kv)
            return ln__jobs_be_err(&be->base, LN_EINVAL, "sqlite URL parameter too long in '%s'",
                                   url);
        memcpy(kv, k, klen);
        kv[klen] = '\0';
        char *end;
        if (strcmp(kv, "sync=normal") == 0) {
            be->full_sync = 0;
        } else if (strcmp(kv, "sync=full") == 0) {
            be->full_sync = 1;
        } else if (strncmp(kv, "busy_timeout=", 13) == 0 && kv[13] != '\0' &&
                   strtoul(kv + 13, &end, 10) <= 3600000 && *end == '\0' && kv[13] != '-') {
            *busy_ms = (unsigned)strtoul(kv + 13, NULL, 10);
        } else if (strcmp(kv, "events=none") == 0 || strcmp(kv, "events=outcomes") == 0 ||
                   strcmp(kv, "events=all") == 0) {
            be->events = kv[7] == 'n'   ? SQ_EVENTS_NONE
                         : kv[7] == 'o' ? SQ_EVENTS_OUTCOMES
                                        : SQ_EVENTS_ALL;
        } else if (strncmp(kv, "reserve=", 8) == 0 && kv[8] >= '0' && kv[8] <= '9' &&
                   strtoll(kv + 8, &end, 10) <= (1LL << 40) && *end == '\0') {
            be->reserve_bytes = strtoll(kv + 8, NULL, 10);
        } else {
            return ln__jobs_be_err(&be->base, LN_EINVAL,
                                   "unknown or invalid sqlite URL parameter "
                                   "'%s' (known: sync=normal|full, "
                                   "busy_timeout=MS, reserve=BYTES, "
                                   "events=none|outcomes|all)",
                                   kv);
        }
    }
    *path = ln__malloc(plen + 1);
    if (*path == NULL) return LN_ENOMEM;
    memcpy(*path, p, plen);
    (*path)[plen] = '\0';
    return 0;
}

int ln__sq_pragma_int(sq_be *be, const char *sql, int64_t *out) {
    sqlite3_stmt *s;
    int rc = sqlite3_prepare_v2(be->db, sql, -1, &s, NULL);
    if (rc != SQLITE_OK) return ln__sq_err(be, rc, sql);
    rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) *out = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : ln__sq_err(be, rc, sql);
}

int ln__sq_exec_sql(sq_be *be, const char *sql, const char *what) {
    int rc = sqlite3_exec(be->db, sql, NULL, NULL, NULL);
    return rc == SQLITE_OK ? 0 : ln__sq_err(be, rc, what);
}

/* Waiting for a lock. SQLite calls this when another connection holds the
 * lock a statement needs (in WAL mode: the write lock, taken by BEGIN
 * IMMEDIATE), with count = 0, 1, 2, ... for the attempts of one wait; 1
 * means "try again", 0 gives up with SQLITE_BUSY. sqlite3_busy_timeout's
 * handler sleeps 1, 2, 5, 10, ... 100 ms between attempts: an add that
 * meets a worker's 100 us transaction would sleep >= 1 ms, and with it
 * every thread queued on the handle's mutex (a convoy the write-path
 * service measured as a tail of tens of ms). Here the sleeps start at 50 us
 * and double up to 2 ms: a writer notices a released lock within about the
 * time it has waited so far, and never more than 2 ms late. The total stays
 * bounded by busy_ms, measured from the first call of this wait. */
#define BUSY_FIRST_NS 50000u /* 50 us */
#define BUSY_MAX_NS 2000000u /* 2 ms */

static int busy_wait(void *arg, int count) {
    sq_be *be = arg;
    uint64_t now = ln__now_ns();
    if (count == 0) be->busy_since_ns = now;
    uint64_t waited = now - be->busy_since_ns;
    uint64_t limit = (uint64_t)be->busy_ms * 1000000u;
    if (waited >= limit) return 0;
    uint64_t step = count < 6 ? (uint64_t)BUSY_FIRST_NS << count : BUSY_MAX_NS;
    if (step > BUSY_MAX_NS) step = BUSY_MAX_NS;
    if (step > limit - waited) step = limit - waited;
    struct timespec ts = {0, (long)step};
    nanosleep(&ts, NULL); /* a signal only shortens one step */
    return 1;
}

static int open_db(sq_be *be, const char *path) {
    int kind = ln__sq_check_kind(be, path);
    if (kind != 0) return kind;
    int rc = sqlite3_open_v2(path, &be->db,
                             SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX |
                                 SQLITE_OPEN_EXRESCODE,
                             NULL);
    if (rc != SQLITE_OK) {
        int err = ln__sq_open_denied(be, path);
        if (err != 0) return err;
        err = ln__sq_err(be, rc, "open");
        size_t len = strlen(be->base.errmsg);
        snprintf(be->base.errmsg + len, sizeof be->base.errmsg - len, " [%s]", path);
        return err;
    }
    sqlite3_busy_handler(be->db, busy_wait, be);
    sqlite3_extended_result_codes(be->db, 1);
    return 0;
}

/* journal_mode=WAL returns the mode in effect; anything else means the
 * file cannot do WAL (e.g. in-memory): refuse rather than run unsafely.
 * Switching a new file to WAL needs it to itself, and SQLite reports
 * "database is locked" at once, without the busy handler, while another
 * process is opening the same new file: retry for up to busy_ms. */
static int switch_to_wal(sq_be *be, const char *path) {
    sqlite3_stmt *s;
    int wal = 0, rc;
    uint64_t give_up = ln__now_ns() + (uint64_t)be->busy_ms * 1000000u;
    for (;;) {
        rc = sqlite3_prepare_v2(be->db, "PRAGMA journal_mode=WAL", -1, &s, NULL);
        if (rc == SQLITE_OK) {
            rc = sqlite3_step(s);
            wal = rc == SQLITE_ROW && strcmp((const char *)sqlite3_column_text(s, 0), "wal") == 0;
            sqlite3_finalize(s);
        }
        int busy = (rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED;
        if (!busy || ln__now_ns() >= give_up) break;
        struct timespec pause = {0, 1000000}; /* 1 ms */
        nanosleep(&pause, NULL);
    }
    if (rc != SQLITE_ROW) return ln__sq_err(be, rc, "journal_mode");
    if (!wal)
        return ln__jobs_be_err(&be->base, LN_EINVAL, "sqlite: '%s' cannot use WAL mode", path);
    return 0;
}

/* Everything after the open: checks, WAL, schema. */
static int setup(sq_be *be, const char *path) {
    /* Before anything writes, in one read transaction: one snapshot for
     * every check, while another process may be creating the store. */
    int64_t version;
    int err = ln__sq_exec_sql(be, "BEGIN", "begin store check");
    if (err == 0) err = ln__sq_check_schema(be, &version);
    if (err == 0) err = ln__sq_check_pages(be, path);
    sqlite3_exec(be->db, "COMMIT", NULL, NULL, NULL);
    if (err == 0) err = switch_to_wal(be, path);
    if (err == 0)
        err = ln__sq_exec_sql(
            be, be->full_sync ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL",
            "synchronous");
    if (err == 0) err = ln__sq_migrate(be);
    if (err == 0) err = ln__sq_dedup_next_open(be);
    if (err == 0) err = ln__sq_parent_events_open(be);
    return err;
}

static int configure(sq_be *be, const char *path, unsigned busy_ms) {
    be->busy_ms = busy_ms;
    int err = open_db(be, path);
    if (err == 0) err = setup(be, path);
    /* A store closed while its disk filled up may need room even to be
     * read (SQLite's PATH-shm): that is what the reserve is for. */
    if (err == LN_ENOSPC && ln__sq_reserve_free(path)) {
        sqlite3_close_v2(be->db);
        be->db = NULL;
        err = open_db(be, path);
        if (err == 0) err = setup(be, path);
    }
    if (err == 0) err = ln__sq_reserve_open(be, path);
    return err;
}

int ln__jobs_sqlite_open(ln__jobs_be **out, const char *url, const ln_jobs_opts *opts, char *errmsg,
                         size_t errmsg_size) {
    sq_be *be = ln__calloc(1, sizeof *be);
    if (be == NULL) {
        snprintf(errmsg, errmsg_size, "out of memory");
        return LN_ENOMEM;
    }
    be->base.methods = &sq_methods;
    be->reserve_fd = -1;
    be->reserve_bytes = -1; /* sized to the volume */
    be->events = SQ_EVENTS_OUTCOMES;
    char *path = NULL;
    unsigned busy_ms = opts->busy_timeout_ms;
    int err = parse_url(be, url, &path, &busy_ms);
    if (err == 0) err = configure(be, path, busy_ms);
    ln__free(path);
    if (err != 0) {
        snprintf(errmsg, errmsg_size, "%s", be->base.errmsg);
        sq_close(&be->base, 0);
        return err;
    }
    *out = &be->base;
    return 0;
}
