/* writes.c - the statements of one comment or like, with a span each. */
#include "writes.h"

#include <time.h>

const char *wp_kind_name(wp_kind kind) {
    return kind == WP_COMMENT ? "comment" : "like";
}

static int64_t now_ms(void) {
    return (int64_t)(wp_now_ns() / 1000000u);
}

/* Step a bound statement once inside a span named after it, then reset it.
 * The reset matters: a statement left after SQLITE_ROW keeps the
 * connection's read transaction open, and in WAL mode that old snapshot
 * makes the connection's next write fail with SQLITE_BUSY_SNAPSHOT as soon
 * as another connection has written. sqlite3_changes() and
 * sqlite3_last_insert_rowid() belong to the connection and survive the
 * reset. */
static int run(wp_stmt_id id, sqlite3_stmt *st, wp_trace *tr, const wp_span *parent) {
    wp_span *s = wp_span_start(tr, parent, NULL, wp_stmt_name(id), WP_KIND_CLIENT);
    wp_span_str(s, "db.system", "sqlite");
    wp_span_str(s, "db.statement", wp_stmt_sql(id));
    int rc = sqlite3_step(st);
    s->error = rc != SQLITE_DONE && rc != SQLITE_ROW;
    sqlite3_reset(st);
    wp_span_end(s);
    return rc;
}

static int exists(wp_conn *c, wp_stmt_id id, int64_t key, wp_trace *tr, const wp_span *parent) {
    sqlite3_stmt *st = wp_stmt(c, id);
    sqlite3_bind_int64(st, 1, key);
    int rc = run(id, st, tr, parent);
    return rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -1;
}

static int simple(wp_conn *c, wp_stmt_id id, wp_trace *tr, const wp_span *parent) {
    return run(id, wp_stmt(c, id), tr, parent) == SQLITE_DONE ? 0 : -1;
}

/* The INSERT itself: 1 inserted (w->id set), 0 nothing inserted, -1 error. */
static int insert_row(wp_conn *c, wp_trace *tr, const wp_span *parent, wp_write *w) {
    wp_stmt_id id = w->kind == WP_COMMENT ? WP_SQL_INSERT_COMMENT : WP_SQL_INSERT_LIKE;
    sqlite3_stmt *st = wp_stmt(c, id);
    sqlite3_bind_int64(st, 1, w->post_id);
    sqlite3_bind_int64(st, 2, w->user_id);
    if (w->kind == WP_COMMENT) {
        sqlite3_bind_text(st, 3, w->body, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 4, now_ms());
    } else {
        sqlite3_bind_int64(st, 3, now_ms());
    }
    if (run(id, st, tr, parent) != SQLITE_DONE) return -1;
    if (sqlite3_changes(c->db) != 1) return 0;
    w->id = sqlite3_last_insert_rowid(c->db);
    return 1;
}

/* Nothing was inserted: find out why (only on this rare path). */
static int why_not(wp_conn *c, wp_trace *tr, const wp_span *parent, const wp_write *w) {
    int post = exists(c, WP_SQL_POST_EXISTS, w->post_id, tr, parent);
    if (post < 0) return WP_EDB;
    if (!post) return WP_ENOPOST;
    int user = exists(c, WP_SQL_USER_EXISTS, w->user_id, tr, parent);
    if (user < 0) return WP_EDB;
    if (!user) return WP_ENOUSER;
    return w->kind == WP_LIKE ? WP_ALREADY : WP_EDB;
}

int wp_write_insert(wp_conn *c, wp_trace *tr, const wp_span *parent, wp_write *w) {
    int rc = insert_row(c, tr, parent, w);
    return rc > 0 ? WP_OK : rc < 0 ? WP_EDB : why_not(c, tr, parent, w);
}

int wp_write_insert_outbox(wp_conn *c, wp_trace *tr, const wp_span *parent, wp_write *w,
                           const char *traceparent) {
    if (simple(c, WP_SQL_BEGIN, tr, parent)) return WP_EDB;
    int rc = insert_row(c, tr, parent, w);
    if (rc > 0) {
        sqlite3_stmt *st = wp_stmt(c, WP_SQL_INSERT_OUTBOX);
        sqlite3_bind_text(st, 1, wp_kind_name(w->kind), -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 2, w->id);
        sqlite3_bind_int64(st, 3, w->post_id);
        sqlite3_bind_int64(st, 4, w->user_id);
        if (traceparent) sqlite3_bind_text(st, 5, traceparent, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 6, now_ms());
        if (run(WP_SQL_INSERT_OUTBOX, st, tr, parent) != SQLITE_DONE) rc = -1;
        w->outbox = sqlite3_last_insert_rowid(c->db);
    }
    if (rc > 0 && simple(c, WP_SQL_COMMIT, tr, parent) == 0) return WP_OK;
    simple(c, WP_SQL_ROLLBACK, tr, parent);
    w->outbox = 0;
    return rc < 0 ? WP_EDB : why_not(c, tr, parent, w);
}

/* The body of the transaction; 0 or -1. */
static int followups(wp_conn *c, wp_trace *tr, const wp_span *parent, const wp_write *w,
                     int *targets) {
    int comment = w->kind == WP_COMMENT;
    wp_stmt_id mark = comment ? WP_SQL_MARK_COMMENT : WP_SQL_MARK_LIKE;
    sqlite3_stmt *st = wp_stmt(c, mark);
    sqlite3_bind_int64(st, 1, w->id);
    if (run(mark, st, tr, parent) != SQLITE_DONE) return -1;
    if (sqlite3_changes(c->db) == 0) return 0; /* counted by an earlier delivery */

    wp_stmt_id count = comment ? WP_SQL_COUNT_COMMENT : WP_SQL_COUNT_LIKE;
    st = wp_stmt(c, count);
    sqlite3_bind_int64(st, 1, w->post_id);
    if (run(count, st, tr, parent) != SQLITE_DONE) return -1;

    /* The targets are few (the post's author): read them all, then insert. */
    int64_t users[8];
    int n = 0, rc;
    st = wp_stmt(c, WP_SQL_NOTIFY_TARGETS);
    sqlite3_bind_int64(st, 1, w->post_id);
    sqlite3_bind_int64(st, 2, w->user_id);
    wp_span *s =
        wp_span_start(tr, parent, NULL, wp_stmt_name(WP_SQL_NOTIFY_TARGETS), WP_KIND_CLIENT);
    wp_span_str(s, "db.system", "sqlite");
    wp_span_str(s, "db.statement", wp_stmt_sql(WP_SQL_NOTIFY_TARGETS));
    while ((rc = sqlite3_step(st)) == SQLITE_ROW && n < 8) users[n++] = sqlite3_column_int64(st, 0);
    s->error = rc != SQLITE_DONE && rc != SQLITE_ROW;
    sqlite3_reset(st); /* see run() */
    wp_span_end(s);
    if (s->error) return -1;

    for (int i = 0; i < n; i++) {
        st = wp_stmt(c, WP_SQL_INSERT_NOTIFICATION);
        sqlite3_bind_int64(st, 1, users[i]);
        sqlite3_bind_text(st, 2, wp_kind_name(w->kind), -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 3, w->id);
        sqlite3_bind_int64(st, 4, w->user_id);
        sqlite3_bind_int64(st, 5, now_ms());
        if (run(WP_SQL_INSERT_NOTIFICATION, st, tr, parent) != SQLITE_DONE) return -1;
    }
    *targets = n;
    return 0;
}

int wp_write_followups(wp_conn *c, wp_trace *tr, const wp_span *parent, const wp_write *w,
                       int *targets) {
    *targets = 0;
    if (simple(c, WP_SQL_BEGIN, tr, parent)) return WP_EDB;
    if (followups(c, tr, parent, w, targets) || simple(c, WP_SQL_COMMIT, tr, parent)) {
        simple(c, WP_SQL_ROLLBACK, tr, parent);
        *targets = 0;
        return WP_EDB;
    }
    return WP_OK;
}

void wp_write_push(wp_trace *tr, const wp_span *parent, unsigned push_ms, int targets) {
    if (targets == 0) return;
    wp_span *s = wp_span_start(tr, parent, NULL, "push.send", WP_KIND_CLIENT);
    wp_span_int(s, "push.recipients", targets);
    struct timespec ts = {push_ms / 1000, (long)(push_ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
    wp_span_end(s);
}
