/* db.c - schema, seed data and prepared connections of the write path. */
#include "db.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static const char schema_sql[] = "CREATE TABLE IF NOT EXISTS users("
                                 "  id INTEGER PRIMARY KEY,"
                                 "  name TEXT NOT NULL);"
                                 "CREATE TABLE IF NOT EXISTS posts("
                                 "  id INTEGER PRIMARY KEY,"
                                 "  author_id INTEGER NOT NULL REFERENCES users(id),"
                                 "  title TEXT NOT NULL,"
                                 "  like_count INTEGER NOT NULL DEFAULT 0,"
                                 "  comment_count INTEGER NOT NULL DEFAULT 0);"
                                 "CREATE TABLE IF NOT EXISTS post_likes("
                                 "  post_id INTEGER NOT NULL REFERENCES posts(id),"
                                 "  user_id INTEGER NOT NULL REFERENCES users(id),"
                                 "  created_at INTEGER NOT NULL,"
                                 "  counted INTEGER NOT NULL DEFAULT 0,"
                                 "  PRIMARY KEY(post_id, user_id));"
                                 "CREATE TABLE IF NOT EXISTS comments("
                                 "  id INTEGER PRIMARY KEY,"
                                 "  post_id INTEGER NOT NULL REFERENCES posts(id),"
                                 "  user_id INTEGER NOT NULL REFERENCES users(id),"
                                 "  body TEXT NOT NULL,"
                                 "  created_at INTEGER NOT NULL,"
                                 "  counted INTEGER NOT NULL DEFAULT 0);"
                                 "CREATE INDEX IF NOT EXISTS comments_by_post ON comments(post_id);"
                                 "CREATE TABLE IF NOT EXISTS notifications("
                                 "  id INTEGER PRIMARY KEY,"
                                 "  user_id INTEGER NOT NULL REFERENCES users(id),"
                                 "  kind TEXT NOT NULL CHECK(kind IN ('comment', 'like')),"
                                 "  source_id INTEGER NOT NULL,"
                                 "  actor_id INTEGER NOT NULL,"
                                 "  created_at INTEGER NOT NULL,"
                                 "  UNIQUE(kind, source_id, user_id));"
                                 /* The async mode's outbox: one row per comment or like whose
                                    job is not stored yet, committed with it (see outbox.h).
                                    AUTOINCREMENT: an id, and so a job id, is never reused. */
                                 "CREATE TABLE IF NOT EXISTS outbox("
                                 "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
                                 "  kind TEXT NOT NULL CHECK(kind IN ('comment', 'like')),"
                                 "  row_id INTEGER NOT NULL,"
                                 "  post_id INTEGER NOT NULL,"
                                 "  user_id INTEGER NOT NULL,"
                                 "  traceparent TEXT,"
                                 "  created_at INTEGER NOT NULL);"
                                 "CREATE TABLE IF NOT EXISTS meta("
                                 "  key TEXT PRIMARY KEY,"
                                 "  value TEXT NOT NULL);"
                                 /* Names this database in job ids: a queue may outlive it. */
                                 "INSERT OR IGNORE INTO meta(key, value)"
                                 "  VALUES ('instance', lower(hex(randomblob(8))));";

/* Users 1..WP_USERS; post p is written by user (p * 7) % WP_USERS + 1. */
static const char seed_sql[] =
    "INSERT INTO users(id, name)"
    "  WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)"
    "  SELECT i, 'user' || i FROM n;"
    "INSERT INTO posts(id, author_id, title)"
    "  WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?2)"
    "  SELECT i, (i * 7) % ?1 + 1, 'post ' || i FROM n;";

static const struct {
    const char *name;
    const char *sql;
} stmts[WP_SQL_COUNT_] = {
    [WP_SQL_BEGIN] = {"BEGIN", "BEGIN IMMEDIATE"},
    [WP_SQL_COMMIT] = {"COMMIT", "COMMIT"},
    [WP_SQL_ROLLBACK] = {"ROLLBACK", "ROLLBACK"},
    [WP_SQL_INSERT_COMMENT] =
        {"INSERT comments",
         "INSERT INTO comments(post_id, user_id, body, created_at)"
         " SELECT ?1, ?2, ?3, ?4 WHERE EXISTS (SELECT 1 FROM posts WHERE id = ?1)"
         " AND EXISTS (SELECT 1 FROM users WHERE id = ?2)"},
    [WP_SQL_INSERT_LIKE] = {"INSERT post_likes",
                            "INSERT OR IGNORE INTO post_likes(post_id, user_id, created_at)"
                            " SELECT ?1, ?2, ?3 WHERE EXISTS (SELECT 1 FROM posts WHERE id = ?1)"
                            " AND EXISTS (SELECT 1 FROM users WHERE id = ?2)"},
    [WP_SQL_POST_EXISTS] = {"SELECT posts", "SELECT 1 FROM posts WHERE id = ?1"},
    [WP_SQL_USER_EXISTS] = {"SELECT users", "SELECT 1 FROM users WHERE id = ?1"},
    [WP_SQL_MARK_COMMENT] = {"UPDATE comments",
                             "UPDATE comments SET counted = 1 WHERE id = ?1 AND counted = 0"},
    [WP_SQL_MARK_LIKE] = {"UPDATE post_likes",
                          "UPDATE post_likes SET counted = 1 WHERE rowid = ?1 AND counted = 0"},
    [WP_SQL_COUNT_COMMENT] = {"UPDATE posts.comment_count",
                              "UPDATE posts SET comment_count = comment_count + 1 WHERE id = ?1"},
    [WP_SQL_COUNT_LIKE] = {"UPDATE posts.like_count",
                           "UPDATE posts SET like_count = like_count + 1 WHERE id = ?1"},
    [WP_SQL_NOTIFY_TARGETS] = {"SELECT notify targets",
                               "SELECT author_id FROM posts WHERE id = ?1 AND author_id <> ?2"},
    [WP_SQL_INSERT_OUTBOX] = {"INSERT outbox",
                              "INSERT INTO outbox(kind, row_id, post_id, user_id, traceparent,"
                              " created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)"},
    [WP_SQL_DELETE_OUTBOX] = {"DELETE outbox", "DELETE FROM outbox WHERE id = ?1"},
    [WP_SQL_SCAN_OUTBOX] = {"SELECT outbox",
                            "SELECT id, kind, row_id, post_id, user_id, traceparent FROM outbox"
                            " ORDER BY id LIMIT ?1"},
    [WP_SQL_INSTANCE] = {"SELECT meta", "SELECT value FROM meta WHERE key = 'instance'"},
    [WP_SQL_INSERT_NOTIFICATION] =
        {"INSERT notifications",
         "INSERT OR IGNORE INTO notifications(user_id, kind, source_id, actor_id, created_at)"
         " VALUES (?1, ?2, ?3, ?4, ?5)"},
};

const char *wp_stmt_sql(wp_stmt_id id) {
    return stmts[id].sql;
}
const char *wp_stmt_name(wp_stmt_id id) {
    return stmts[id].name;
}

static int busy_cb(void *arg, int count) {
    (void)arg;
    /* count is the number of earlier calls for this lock attempt. */
    long us = count < 6 ? 50L << count : 2000;
    if ((long)count * 2000 > 10L * 1000 * 1000) return 0; /* give up: SQLITE_BUSY */
    struct timespec ts = {0, us * 1000};
    nanosleep(&ts, NULL);
    return 1;
}

void wp_db_busy_handler(sqlite3 *db) {
    sqlite3_busy_handler(db, busy_cb, NULL);
}

static int exec(sqlite3 *db, const char *sql, const char *what) {
    char *err = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) {
        fprintf(stderr, "writepath: %s: %s\n", what, err ? err : sqlite3_errmsg(db));
        sqlite3_free(err);
        return -1;
    }
    return 0;
}

/* WAL mode, retried while busy: switching a fresh file to WAL can fail
 * with SQLITE_BUSY at once, without the busy handler waiting (seen when the
 * service and the worker open a new database together: "database is
 * locked", and that worker never ran). Up to 10 s, as the busy handler
 * waits; any other failure is reported. */
static int set_wal(sqlite3 *db) {
    int rc = SQLITE_BUSY;
    for (int i = 0; i < 1000 && rc == SQLITE_BUSY; i++) {
        if (i > 0) nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
        rc = sqlite3_exec(db, "PRAGMA journal_mode=WAL", NULL, NULL, NULL);
    }
    if (rc == SQLITE_OK) return 0;
    fprintf(stderr, "writepath: pragmas: %s\n", sqlite3_errmsg(db));
    return -1;
}

static sqlite3 *open_raw(const char *path) {
    sqlite3 *db = NULL;
    int rc = sqlite3_open_v2(
        path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        fprintf(stderr, "writepath: open %s: %s\n", path,
                db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
        sqlite3_close(db);
        return NULL;
    }
    wp_db_busy_handler(db);
    if (set_wal(db) != 0 || exec(db, "PRAGMA synchronous=NORMAL;", "pragmas")) {
        sqlite3_close(db);
        return NULL;
    }
    return db;
}

int wp_db_init(const char *path) {
    sqlite3 *db = open_raw(path);
    if (!db) return -1;
    int rc = exec(db, "BEGIN IMMEDIATE", "begin");
    if (rc == 0) rc = exec(db, schema_sql, "schema");
    if (rc == 0) {
        sqlite3_stmt *st = NULL;
        int empty = 0;
        if (sqlite3_prepare_v2(db, "SELECT count(*) = 0 FROM users", -1, &st, NULL) == SQLITE_OK &&
            sqlite3_step(st) == SQLITE_ROW)
            empty = sqlite3_column_int(st, 0);
        sqlite3_finalize(st);
        if (empty) {
            /* The seed script has two statements: run them one by one. */
            const char *tail = seed_sql;
            while (rc == 0 && *tail) {
                st = NULL;
                if (sqlite3_prepare_v2(db, tail, -1, &st, &tail) != SQLITE_OK) rc = -1;
                if (st) {
                    sqlite3_bind_int(st, 1, WP_USERS);
                    sqlite3_bind_int(st, 2, WP_POSTS);
                    if (sqlite3_step(st) != SQLITE_DONE) rc = -1;
                    sqlite3_finalize(st);
                }
            }
            if (rc) fprintf(stderr, "writepath: seed: %s\n", sqlite3_errmsg(db));
        }
    }
    rc = exec(db, rc == 0 ? "COMMIT" : "ROLLBACK", "commit") || rc ? -1 : 0;
    sqlite3_close(db);
    return rc;
}

wp_conn *wp_conn_open(const char *path) {
    wp_conn *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->db = open_raw(path);
    if (!c->db) {
        free(c);
        return NULL;
    }
    for (int i = 0; i < WP_SQL_COUNT_; i++) {
        if (sqlite3_prepare_v3(c->db, stmts[i].sql, -1, SQLITE_PREPARE_PERSISTENT, &c->stmt[i],
                               NULL) != SQLITE_OK) {
            fprintf(stderr, "writepath: prepare %s: %s\n", stmts[i].name, sqlite3_errmsg(c->db));
            wp_conn_close(c);
            return NULL;
        }
    }
    return c;
}

void wp_conn_close(wp_conn *c) {
    if (!c) return;
    for (int i = 0; i < WP_SQL_COUNT_; i++) sqlite3_finalize(c->stmt[i]);
    sqlite3_close(c->db);
    free(c);
}

int wp_conn_settle(wp_conn *c) {
    int undone = 0;
    for (sqlite3_stmt *st = sqlite3_next_stmt(c->db, NULL); st; st = sqlite3_next_stmt(c->db, st))
        if (sqlite3_stmt_busy(st)) {
            sqlite3_reset(st);
            undone++;
        }
    if (!sqlite3_get_autocommit(c->db)) {
        sqlite3_exec(c->db, "ROLLBACK", NULL, NULL, NULL);
        undone++;
    }
    return undone;
}

sqlite3_stmt *wp_stmt(wp_conn *c, wp_stmt_id id) {
    sqlite3_stmt *st = c->stmt[id];
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return st;
}
