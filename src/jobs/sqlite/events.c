/* events.c - the SQLite store: a queue's events (jobs.h's "Events"):
 * writing them and following them.
 *
 * DESIGN
 * One table, lanes_events(seq, queue, name, job_id, fields, at), for every
 * queue of the store. Each op that changes a job inserts its events with
 * one prepared INSERT each in the op's own write transaction, so an event
 * is committed exactly when its change is, and a follower never sees an
 * event of a change that rolled back. fields holds the fields other than
 * jobId as a JSON object of strings (json_object in the INSERT), NULL when
 * there are none; the reader puts jobId back in front.
 *
 * Order: seq is the rowid. Writers are serialised by SQLite's write lock
 * and each insert takes max(seq) + 1, so seq grows in commit order, and a
 * reader that saw every row up to S in one snapshot never sees a new row
 * <= S later. The newest row is never trimmed (LN_JOBS_EVENTS_KEEP >= 1),
 * so no seq is handed out twice.
 *
 * Retention: every TRIM_EVERY-th event (by seq) also deletes up to
 * TRIM_CHUNK events older than the newest LN_JOBS_EVENTS_KEEP: a bounded
 * cost in the op that happens to write it, and since a chunk is larger
 * than the interval, a backlog (after rollbacks) is caught up.
 *
 * On a full disk (the space reserve of reserve.c not whole) no
 * events are written: the room kept is for finishing jobs.
 *
 * Following: a follower has its own connection to the file and a cursor
 * (the last seq it looked at). It reads the rows after the cursor in one
 * read transaction, together with max(seq), so the cursor skips other
 * queues' rows for good. When nothing is new it does not read the table
 * again until PRAGMA data_version says another connection committed
 * (a look at the WAL index, no table read), sleeping between looks from
 * SLEEP_MIN_MS doubling to SLEEP_MAX_MS, reset by every event: an idle
 * follower costs about ten cheap looks a second.
 */
#include "sqlite_int.h"

#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TRIM_EVERY 256
#define TRIM_CHUNK 512
#define SLEEP_MIN_MS 5
#define SLEEP_MAX_MS 100
#define BATCH 64 /* rows read per look */

_Static_assert(LN_JOBS_EVENTS_KEEP >= 1, "the newest event must stay (seq order)");
_Static_assert(TRIM_CHUNK > TRIM_EVERY, "a trim must catch up a backlog");

const char *ln__sq_public_id(char *num, size_t size, int64_t rid, const char *cid) {
    if (cid != NULL) return cid;
    snprintf(num, size, "%lld", (long long)rid);
    return num;
}

char *ln__sq_id_dup(int64_t rid, const char *cid) {
    char num[24];
    return ln__strdup(ln__sq_public_id(num, sizeof num, rid, cid));
}

static int trim(sq_be *be, int64_t seq) {
    if (seq % TRIM_EVERY != 0 || seq <= LN_JOBS_EVENTS_KEEP) return 0;
    sqlite3_stmt *s = ln__sq_stmt_get(be, S_EVENT_TRIM);
    if (s == NULL) return LN_EBACKEND;
    sqlite3_bind_int64(s, 1, seq - LN_JOBS_EVENTS_KEEP);
    sqlite3_bind_int(s, 2, TRIM_CHUNK);
    return ln__sq_run(be, s, "trim events");
}

/* The level that writes event name: the per-job moves (added, waiting,
 * delayed, active) only with events=all. */
static int level_of(const char *name) {
    switch (name[0]) {
    case 'a':
        return SQ_EVENTS_ALL; /* added, active */
    case 'w':
        return SQ_EVENTS_ALL; /* waiting */
    case 'd':
        return name[1] == 'e' ? SQ_EVENTS_ALL : SQ_EVENTS_OUTCOMES; /* delayed */
    default:
        return SQ_EVENTS_OUTCOMES;
    }
}

int ln__sq_event(sq_be *be, const char *queue, const char *name, const char *job_id, const char *k1,
                 const char *v1, const char *k2, const char *v2, int64_t now) {
    if (be->events < level_of(name) || be->reserve_low) return 0;
    sqlite3_stmt *s = ln__sq_stmt_get(be, S_EVENT);
    if (s == NULL) return LN_EBACKEND;
    sqlite3_bind_text(s, 1, queue, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 2, name, -1, SQLITE_STATIC);
    if (job_id != NULL) sqlite3_bind_text(s, 3, job_id, -1, SQLITE_STATIC);
    if (k1 != NULL) {
        sqlite3_bind_text(s, 4, k1, -1, SQLITE_STATIC);
        sqlite3_bind_text(s, 5, v1 != NULL ? v1 : "", -1, SQLITE_STATIC);
        if (k2 != NULL) {
            sqlite3_bind_text(s, 6, k2, -1, SQLITE_STATIC);
            sqlite3_bind_text(s, 7, v2 != NULL ? v2 : "", -1, SQLITE_STATIC);
        }
    }
    sqlite3_bind_int64(s, 8, now);
    int err = ln__sq_run(be, s, "event");
    if (err == 0) err = trim(be, sqlite3_last_insert_rowid(be->db));
    return err;
}

int ln__sq_events_for(sq_be *be, sq_stmt id, const char *queue, int64_t now) {
    if (be->events < SQ_EVENTS_ALL || be->reserve_low) return 0; /* both write "waiting" */
    sqlite3_stmt *s = ln__sq_stmt_get(be, id);
    if (s == NULL) return LN_EBACKEND;
    sqlite3_bind_text(s, 1, queue, -1, SQLITE_STATIC);
    sqlite3_bind_int64(s, 2, now);
    int err = ln__sq_run(be, s, "events");
    if (err == 0 && sqlite3_changes(be->db) > 0) err = trim(be, sqlite3_last_insert_rowid(be->db));
    return err;
}

/* ------------------------------------- parents the schema's trigger frees */

/* The schema's lanes_deps_child_gone releases a flow parent whose last
 * pending child is deleted (removed, cleaned, trimmed), but a schema
 * trigger can write no event: it would need a function every program
 * opening the file has, or would ignore ?events=. So this connection's
 * TEMP trigger, BEFORE the same delete, finds the parent that delete
 * will release (the schema trigger's own test: in waiting-children, and
 * no dependency left once this child's pending row goes) and writes its
 * event through ln__sq_event, as flow.c writes it for a parent a
 * completion or failure releases: "waiting" {prev: "waiting-children"},
 * or "delayed" {delay: the due time} for a parent with a delay. now is
 * the trigger's own clock, which SQLite keeps for the whole step, so the
 * due time is the run_at the release sets. A clean or drain
 * (be->hard_queue) removes a released parent of its own queue as well, as
 * the Redis store's (BullMQ's "hard" removal) does, which writes no event
 * for it: nor does this. One primary-key lookup per
 * deleted child (the parent), one more for its lanes_deps row; jobs with
 * no parent pay the WHEN test only. */
static void released_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
    (void)argc;
    sq_be *be = sqlite3_user_data(ctx);
    const char *queue = (const char *)sqlite3_value_text(argv[0]);
    const char *cid = (const char *)sqlite3_value_text(argv[1]);
    int64_t rid = sqlite3_value_int64(argv[2]);
    int64_t delay = sqlite3_value_int64(argv[3]);
    int64_t now = sqlite3_value_int64(argv[4]);
    if (be->hard_queue != NULL && queue != NULL && strcmp(queue, be->hard_queue) == 0) {
        sqlite3_result_int(ctx, 0);
        return;
    }
    char num[24], due[24];
    const char *id = ln__sq_public_id(num, sizeof num, rid, cid != NULL && cid[0] ? cid : NULL);
    int err;
    if (delay <= 0) {
        err = ln__sq_event(be, queue != NULL ? queue : "", "waiting", id, "prev",
                           "waiting-children", NULL, NULL, now);
    } else {
        snprintf(due, sizeof due, "%lld", (long long)(now + delay));
        err = ln__sq_event(be, queue != NULL ? queue : "", "delayed", id, "delay", due, NULL, NULL,
                           now);
    }
    if (err != 0) {
        sqlite3_result_error(ctx, "parent release event", -1);
        return;
    }
    sqlite3_result_int(ctx, 1);
}

int ln__sq_parent_events_open(sq_be *be) {
    if (be->events < SQ_EVENTS_ALL) return 0; /* waiting and delayed are both ALL */
    int rc = sqlite3_create_function(be->db, "lanes_parent_released", 5, SQLITE_UTF8, be,
                                     released_fn, NULL, NULL);
    if (rc != SQLITE_OK) return ln__sq_err(be, rc, "parent event function");
    return ln__sq_exec_sql(
        be,
        "CREATE TEMP TRIGGER IF NOT EXISTS lanes_parent_release_event BEFORE DELETE"
        "  ON main.lanes_jobs WHEN old.parent_rid IS NOT NULL AND old.state <> 4 BEGIN"
        "  SELECT lanes_parent_released(p.queue, p.cid, p.rid, p.delay, " SQ_NOW_SQL ")"
        "  FROM main.lanes_jobs p WHERE p.rid = old.parent_rid AND p.state = 7"
        "  AND p.deps - EXISTS (SELECT 1 FROM main.lanes_deps d WHERE"
        "  d.parent_rid = old.parent_rid AND d.child_rid = old.rid AND d.status = 0) = 0;"
        "  END;",
        "parent event trigger");
}

/* ------------------------------------------------------------ following */

typedef struct sq_row {
    int64_t seq, at;
    char *name, *job_id, *fields;
} sq_row;

typedef struct sq_events {
    ln__jobs_events base;
    sqlite3 *db;        /* its own connection; never writes */
    sqlite3_stmt *rows; /* the events of the queue after ?2 */
    sqlite3_stmt *top;  /* max(seq) */
    sqlite3_stmt *dv;   /* PRAGMA data_version */
    char *queue;
    int64_t cursor;    /* every row <= cursor was looked at */
    int64_t version;   /* data_version at the last look; -1: look now */
    unsigned sleep_ms; /* the next sleep when nothing is new */
    int more;          /* the last look stopped at BATCH rows: look again
                             without waiting for a new data_version */
    sq_row buf[BATCH]; /* rows read, not yet returned: [head, n) */
    size_t head, n;
} sq_events;

static const ln__events_methods sq_events_methods;

static int ev_err(sq_events *e, int rc, const char *what) {
    snprintf(e->base.errmsg, sizeof e->base.errmsg, "sqlite: %s: %s", what, sqlite3_errmsg(e->db));
    return (rc & 0xff) == SQLITE_NOMEM ? LN_ENOMEM : LN_EBACKEND;
}

static void drop_rows(sq_events *e) {
    for (size_t i = e->head; i < e->n; i++) {
        ln__free(e->buf[i].name);
        ln__free(e->buf[i].job_id);
        ln__free(e->buf[i].fields);
    }
    e->head = e->n = 0;
}

static void sq_events_close(ln__jobs_events *b) {
    sq_events *e = (sq_events *)b;
    drop_rows(e);
    sqlite3_finalize(e->rows);
    sqlite3_finalize(e->top);
    sqlite3_finalize(e->dv);
    sqlite3_close_v2(e->db);
    ln__free(e->queue);
    ln__free(e);
}

static char *col_dup(sqlite3_stmt *s, int col) {
    const unsigned char *t = sqlite3_column_text(s, col);
    return t != NULL ? ln__strdup((const char *)t) : NULL;
}

/* max(seq) in the current transaction into *out (0 when empty). */
static int read_top(sq_events *e, int64_t *out) {
    sqlite3_reset(e->top);
    int rc = sqlite3_step(e->top);
    if (rc != SQLITE_ROW) return ev_err(e, rc, "read events");
    *out = sqlite3_column_int64(e->top, 0);
    sqlite3_reset(e->top);
    return 0;
}

/* One look: up to BATCH rows of the queue after the cursor, in one read
 * transaction with max(seq) (the cursor then passes other queues' rows). */
static int look(sq_events *e) {
    int rc = sqlite3_exec(e->db, "BEGIN", NULL, NULL, NULL);
    if (rc != SQLITE_OK) return ev_err(e, rc, "read events");
    sqlite3_reset(e->rows);
    sqlite3_bind_int64(e->rows, 2, e->cursor);
    int err = 0;
    while (e->n < BATCH && (rc = sqlite3_step(e->rows)) == SQLITE_ROW) {
        sq_row *r = &e->buf[e->n];
        r->seq = sqlite3_column_int64(e->rows, 0);
        r->name = col_dup(e->rows, 1);
        r->job_id = col_dup(e->rows, 2);
        r->fields = col_dup(e->rows, 3);
        r->at = sqlite3_column_int64(e->rows, 4);
        e->n++;
        if (r->name == NULL || r->fields == NULL) {
            err = LN_ENOMEM;
            snprintf(e->base.errmsg, sizeof e->base.errmsg, "out of memory");
            break;
        }
    }
    if (err == 0 && rc != SQLITE_ROW && rc != SQLITE_DONE) err = ev_err(e, rc, "read events");
    int full = e->n == BATCH;
    sqlite3_reset(e->rows);
    int64_t top = e->cursor;
    if (err == 0 && !full) err = read_top(e, &top);
    sqlite3_exec(e->db, "COMMIT", NULL, NULL, NULL);
    if (err != 0) {
        drop_rows(e);
        return err;
    }
    /* Full: rows past the last one read may be the queue's: stop there. */
    e->cursor = full ? e->buf[e->n - 1].seq : top;
    e->more = full;
    return 0;
}

static int read_version(sq_events *e, int64_t *out) {
    sqlite3_reset(e->dv);
    int rc = sqlite3_step(e->dv);
    if (rc != SQLITE_ROW) return ev_err(e, rc, "data_version");
    *out = sqlite3_column_int64(e->dv, 0);
    sqlite3_reset(e->dv);
    return 0;
}

static void sleep_ms(unsigned ms) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

static int64_t mono_ms(void) {
    return (int64_t)(ln__now_ns() / 1000000u);
}

static void hand_out(sq_events *e, ln_job_event *ev) {
    sq_row *r = &e->buf[e->head++];
    snprintf(ev->id, sizeof ev->id, "%lld", (long long)r->seq);
    snprintf(ev->name, sizeof ev->name, "%s", r->name);
    ev->job_id = r->job_id; /* moved; NULL: the front makes it "" */
    ev->fields = r->fields; /* moved */
    ev->at_ms = r->at;
    ln__free(r->name);
    if (e->head == e->n) e->head = e->n = 0;
}

static int sq_events_next(ln__jobs_events *b, int64_t timeout_ms, ln_job_event *ev) {
    sq_events *e = (sq_events *)b;
    int64_t deadline = timeout_ms < 0 ? -1 : mono_ms() + timeout_ms;
    for (;;) {
        if (e->head < e->n) {
            hand_out(e, ev);
            e->sleep_ms = SLEEP_MIN_MS;
            return 0;
        }
        /* The version before the look: a commit after it changes it. */
        int64_t v;
        int err = read_version(e, &v);
        if (err != 0) return err;
        if (v != e->version || e->more) {
            if ((err = look(e)) != 0) return err;
            e->version = v;
            continue;
        }
        int64_t now = mono_ms();
        if (deadline >= 0 && now >= deadline) return LN_ETIMEDOUT;
        unsigned nap = e->sleep_ms;
        if (deadline >= 0 && deadline - now < nap) nap = (unsigned)(deadline - now);
        sleep_ms(nap);
        e->sleep_ms = e->sleep_ms * 2 > SLEEP_MAX_MS ? SLEEP_MAX_MS : e->sleep_ms * 2;
    }
}

static const ln__events_methods sq_events_methods = {
    .version = LN__EVENTS_METHODS_VERSION,
    .next = sq_events_next,
    .close = sq_events_close,
};

/* The cursor 'from' names: "$" / NULL the newest now, "0" none. */
static int parse_from(sq_be *be, sq_events *e, const char *from) {
    if (from == NULL || strcmp(from, "$") == 0) {
        if (sqlite3_exec(e->db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
            return ln__jobs_be_err(&be->base, LN_EBACKEND, "sqlite: events: %s",
                                   sqlite3_errmsg(e->db));
        int err = read_top(e, &e->cursor);
        sqlite3_exec(e->db, "COMMIT", NULL, NULL, NULL);
        if (err != 0) return ln__jobs_be_err(&be->base, err, "%s", e->base.errmsg);
        return 0;
    }
    char *end = NULL;
    errno = 0;
    long long v = strtoll(from, &end, 10);
    if (errno != 0 || end == from || *end != '\0' || v < 0)
        return ln__jobs_be_err(&be->base, LN_EINVAL,
                               "from '%s': an SQLite event id is a number, \"0\" or \"$\"", from);
    e->cursor = v;
    return 0;
}

static int prepare(sq_be *be, sq_events *e) {
    static const char rows[] =
        "SELECT seq, name, job_id, CASE WHEN job_id IS NULL THEN COALESCE(fields, '{}') "
        "ELSE json_patch(json_object('jobId', job_id), COALESCE(fields, '{}')) END, at "
        "FROM lanes_events WHERE seq > ?2 AND queue = ?1 ORDER BY seq";
    int rc = sqlite3_prepare_v2(e->db, rows, -1, &e->rows, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(e->db, "SELECT COALESCE(max(seq), 0) FROM lanes_events", -1,
                                &e->top, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_prepare_v2(e->db, "PRAGMA data_version", -1, &e->dv, NULL);
    if (rc != SQLITE_OK)
        return ln__jobs_be_err(&be->base, LN_EBACKEND, "sqlite: events: %s", sqlite3_errmsg(e->db));
    sqlite3_bind_text(e->rows, 1, e->queue, -1, SQLITE_STATIC);
    return 0;
}

int ln__sq_events_open(ln__jobs_be *b, const char *queue, const char *from, ln__jobs_events **out) {
    sq_be *be = (sq_be *)b;
    const char *path = sqlite3_db_filename(be->db, "main");
    if (path == NULL || *path == '\0')
        return ln__jobs_be_err(b, LN_ENOTSUP, "sqlite: events need a store file");
    sq_events *e = ln__calloc(1, sizeof *e);
    if (e == NULL || (e->queue = ln__strdup(queue)) == NULL) {
        ln__free(e);
        return ln__jobs_be_err(b, LN_ENOMEM, "out of memory");
    }
    e->base.methods = &sq_events_methods;
    e->version = -1;
    e->sleep_ms = SLEEP_MIN_MS;
    int rc = sqlite3_open_v2(
        path, &e->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE, NULL);
    int err = 0;
    if (rc != SQLITE_OK)
        err = ln__jobs_be_err(b, LN_EBACKEND, "sqlite: events: open: %s",
                              e->db != NULL ? sqlite3_errmsg(e->db) : sqlite3_errstr(rc));
    if (err == 0) {
        sqlite3_busy_timeout(e->db, 1000); /* reads in WAL mode wait only on recovery */
        err = prepare(be, e);
    }
    if (err == 0) err = parse_from(be, e, from);
    if (err != 0) {
        sq_events_close(&e->base);
        return err;
    }
    *out = &e->base;
    return 0;
}
