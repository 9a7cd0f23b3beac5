/* db.h - the write path's SQLite database: the seed's minimal schema, its
 * seed data, and connections with their statements prepared once.
 *
 * Schema (the original Node.js service's db/schema.sql, see
 * docs/experiments.md#e3): users, posts (with like_count and
 * comment_count), post_likes, comments, notifications; and for the async
 * mode an outbox table (outbox.h) and a meta table holding this database's
 * random instance tag. Posts 1..WP_HOT_POSTS
 * are the hot posts the load targets. A comment or like row has a 'counted'
 * flag: 0 until the follow-up work (count UPDATE, notifications) has run, so
 * a job delivered twice (the queue is at-least-once) counts once, and the
 * consistency check can see work that never ran.
 *
 * The database runs in WAL mode with synchronous=NORMAL in every mode (a
 * commit survives a crash of the process, not of the machine).
 *
 * Thread rules: a wp_conn is used by one thread at a time (the pool in
 * dbpool.h hands them out).
 */
#ifndef WP_DB_H
#define WP_DB_H

#include <sqlite3.h>

#define WP_USERS 1000
#define WP_POSTS 100
#define WP_HOT_POSTS 10
#define WP_BODY_MAX 1000 /* bytes of comment text */

/* Every statement the write path runs, prepared once per connection. */
typedef enum wp_stmt_id {
    WP_SQL_BEGIN,
    WP_SQL_COMMIT,
    WP_SQL_ROLLBACK,
    WP_SQL_INSERT_COMMENT,      /* ?1 post ?2 user ?3 body ?4 time; only if both exist */
    WP_SQL_INSERT_LIKE,         /* ?1 post ?2 user ?3 time; OR IGNORE, only if both exist */
    WP_SQL_POST_EXISTS,         /* ?1 post */
    WP_SQL_USER_EXISTS,         /* ?1 user */
    WP_SQL_MARK_COMMENT,        /* ?1 id: counted 0 -> 1 */
    WP_SQL_MARK_LIKE,           /* ?1 rowid: counted 0 -> 1 */
    WP_SQL_COUNT_COMMENT,       /* ?1 post: comment_count + 1 */
    WP_SQL_COUNT_LIKE,          /* ?1 post: like_count + 1 */
    WP_SQL_NOTIFY_TARGETS,      /* ?1 post ?2 actor -> user ids to notify */
    WP_SQL_INSERT_NOTIFICATION, /* ?1 user ?2 kind ?3 source ?4 actor ?5 time */
    WP_SQL_INSERT_OUTBOX,       /* ?1 kind ?2 row ?3 post ?4 user ?5 traceparent ?6 time */
    WP_SQL_DELETE_OUTBOX,       /* ?1 outbox id */
    WP_SQL_SCAN_OUTBOX,         /* ?1 limit -> the oldest outbox rows */
    WP_SQL_INSTANCE,            /* -> this database's instance tag (16 hex digits) */
    WP_SQL_COUNT_
} wp_stmt_id;

typedef struct wp_conn {
    sqlite3 *db;
    sqlite3_stmt *stmt[WP_SQL_COUNT_];
} wp_conn;

/* Open path (creating it), set WAL, synchronous=NORMAL, the busy handler,
 * and prepare every statement. The schema must exist (wp_db_init).
 * Returns NULL and prints the SQLite error to stderr on failure. */
wp_conn *wp_conn_open(const char *path);
void wp_conn_close(wp_conn *c); /* NULL is a no-op */

/* Put a connection back in its idle state: reset every statement still
 * stepping and roll back a transaction left open. The write statements
 * leave nothing behind (writes.c resets after each step); the pool calls
 * this on every release anyway, so that no slip can keep an old read
 * snapshot on a pooled connection. Returns how many things it undid. */
int wp_conn_settle(wp_conn *c);

/* Reset and clear the bindings of a statement and return it. */
sqlite3_stmt *wp_stmt(wp_conn *c, wp_stmt_id id);
/* The SQL text of a statement, for span attributes (static). */
const char *wp_stmt_sql(wp_stmt_id id);
/* A short span name for a statement, e.g. "INSERT comments" (static). */
const char *wp_stmt_name(wp_stmt_id id);

/* Create the schema and seed users and posts if the database is empty
 * (idempotent; safe to run from several processes at once). 0, or -1 with
 * the error printed to stderr. */
int wp_db_init(const char *path);

/* Install the busy handler every connection uses: short sleeps, growing
 * from 50 us to 2 ms, up to a 10 s total. SQLite's default busy timeout
 * sleeps 1, 2, 5, 10 ... 100 ms, which adds tens of ms to any request that
 * meets a writer; both modes get this same handler. */
void wp_db_busy_handler(sqlite3 *db);

#endif
