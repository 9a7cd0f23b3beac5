/* check.c - `writepath check`: the write path's consistency check
 * (docs/writepath.md). After a run, wait until the outbox is empty (the
 * service's relay must still be running, or be restarted) and the queue
 * has nothing waiting, delayed, prioritized or active (the worker must
 * still be running), then check that the database holds what the naive mode
 * produces for the same requests:
 *
 *   - every post's comment_count and like_count equal its comment and like
 *     rows;
 *   - every comment and like was counted (its follow-ups ran), and no
 *     outbox row is left (outbox.h: the relay deletes each once its job
 *     is stored);
 *   - notifications are exactly the expected ones: one per comment or like
 *     for the post's author unless the author wrote it, nothing else.
 *
 * Prints one JSON object on stdout; exit 0 when everything holds, 1 when
 * not (or the queue did not drain in time), 2 on a bad command line.
 */
#include "db.h"
#include "service.h"

#include <lanes.h>
#include <lanes/jobs.h>

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const struct {
    const char *key;
    int must_be_zero; /* the check fails unless this figure is 0 */
    const char *sql;
} figures[] = {
    {"posts", 0, "SELECT count(*) FROM posts"},
    {"comments", 0, "SELECT count(*) FROM comments"},
    {"likes", 0, "SELECT count(*) FROM post_likes"},
    {"notifications", 0, "SELECT count(*) FROM notifications"},
    {"expected_notifications", 0,
     "SELECT (SELECT count(*) FROM comments c JOIN posts p ON p.id = c.post_id"
     "        WHERE p.author_id <> c.user_id)"
     "     + (SELECT count(*) FROM post_likes l JOIN posts p ON p.id = l.post_id"
     "        WHERE p.author_id <> l.user_id)"},
    {"comment_count_mismatches", 1,
     "SELECT count(*) FROM posts p"
     " WHERE p.comment_count <> (SELECT count(*) FROM comments c WHERE c.post_id = p.id)"},
    {"like_count_mismatches", 1,
     "SELECT count(*) FROM posts p"
     " WHERE p.like_count <> (SELECT count(*) FROM post_likes l WHERE l.post_id = p.id)"},
    {"uncounted", 1,
     "SELECT (SELECT count(*) FROM comments WHERE counted = 0)"
     "     + (SELECT count(*) FROM post_likes WHERE counted = 0)"},
    {"outbox_pending", 1, "SELECT count(*) FROM outbox"},
    {"missing_notifications", 1,
     "SELECT (SELECT count(*) FROM comments c JOIN posts p ON p.id = c.post_id"
     "        WHERE p.author_id <> c.user_id AND NOT EXISTS (SELECT 1 FROM notifications n"
     "          WHERE n.kind = 'comment' AND n.source_id = c.id AND n.user_id = p.author_id))"
     "     + (SELECT count(*) FROM post_likes l JOIN posts p ON p.id = l.post_id"
     "        WHERE p.author_id <> l.user_id AND NOT EXISTS (SELECT 1 FROM notifications n"
     "          WHERE n.kind = 'like' AND n.source_id = l.rowid AND n.user_id = p.author_id))"},
    {"unexpected_notifications", 1,
     "SELECT count(*) FROM notifications n WHERE NOT EXISTS ("
     "  SELECT 1 FROM comments c JOIN posts p ON p.id = c.post_id"
     "  WHERE n.kind = 'comment' AND c.id = n.source_id AND p.author_id = n.user_id"
     "    AND c.user_id = n.actor_id AND c.user_id <> p.author_id)"
     " AND NOT EXISTS ("
     "  SELECT 1 FROM post_likes l JOIN posts p ON p.id = l.post_id"
     "  WHERE n.kind = 'like' AND l.rowid = n.source_id AND p.author_id = n.user_id"
     "    AND l.user_id = n.actor_id AND l.user_id <> p.author_id)"},
};

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The rows left in db's outbox (committed writes whose jobs the relay has
 * not stored yet), or -1 when it cannot be read. */
static long long outbox_rows(sqlite3 *db) {
    sqlite3_stmt *st = NULL;
    long long v = -1;
    if (sqlite3_prepare_v2(db, "SELECT count(*) FROM outbox", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    else
        fprintf(stderr, "writepath check: outbox: %s\n", sqlite3_errmsg(db));
    sqlite3_finalize(st);
    return v;
}

/* Wait until the outbox of db is empty and then the queue has nothing left
 * to run. The outbox is read first in each round: the relay adds a row's
 * job before it deletes the row, so a job relayed after an empty queue was
 * seen cannot be missed (a write answered just before the check may still
 * be in the outbox while the queue looks drained). 1 drained, 0 timed
 * out, -1 store error. counts gets the last counts, *outbox the last rows. */
static int drain(const char *url, sqlite3 *db, double timeout_s, ln_job_counts *counts,
                 long long *outbox, double *waited) {
    ln_jobs *jobs = NULL;
    char err[256] = "";
    int e = ln_jobs_open_ex(&jobs, url, NULL, err, sizeof err);
    if (e) {
        fprintf(stderr, "writepath check: queue %s: %s: %s\n", url, ln_strerror(e), err);
        return -1;
    }
    double start = now_s();
    int drained = -1;
    for (;;) {
        *outbox = outbox_rows(db);
        if (*outbox < 0) break;
        e = ln_jobs_counts(jobs, WP_QUEUE, counts);
        if (e) {
            fprintf(stderr, "writepath check: counts: %s: %s\n", ln_strerror(e),
                    ln_jobs_errmsg(jobs));
            break;
        }
        if (*outbox == 0 && counts->waiting + counts->delayed + counts->prioritized +
                                    counts->active + counts->paused ==
                                0) {
            drained = 1;
            break;
        }
        if (now_s() - start > timeout_s) {
            drained = 0;
            break;
        }
        usleep(100 * 1000);
    }
    *waited = now_s() - start;
    ln_jobs_close(jobs);
    return drained;
}

static void usage(void) {
    fprintf(stderr, "usage: writepath check --db PATH [--queue URL|none] [--timeout S]\n"
                    "  --queue    job store to drain first (default sqlite:DB" WP_QUEUE_SUFFIX
                    " if that file exists; none: do not wait)\n"
                    "  --timeout  longest wait for the queue to drain (default 300 s)\n");
}

int wp_check_main(int argc, char **argv) {
    const char *db = NULL, *queue = NULL;
    double timeout_s = 300;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--db"))
            db = argv[i + 1];
        else if (!strcmp(argv[i], "--queue"))
            queue = argv[i + 1];
        else if (!strcmp(argv[i], "--timeout"))
            timeout_s = atof(argv[i + 1]);
        else
            db = NULL, i = argc; /* unknown option: fall through to usage */
    }
    if (!db || argc % 2 == 0 || timeout_s <= 0) {
        usage();
        return 2;
    }
    char *default_queue = NULL;
    if (!queue) {
        default_queue = wp_default_queue_url(db);
        if (default_queue && access(default_queue + strlen("sqlite:"), F_OK) == 0)
            queue = default_queue;
    } else if (!strcmp(queue, "none")) {
        queue = NULL;
    }

    sqlite3 *sdb = NULL;
    if (sqlite3_open_v2(db, &sdb, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        fprintf(stderr, "writepath check: %s: %s\n", db, sqlite3_errmsg(sdb));
        sqlite3_close(sdb);
        free(default_queue);
        return 1;
    }
    wp_db_busy_handler(sdb);
    json_t *out = json_object();
    int ok = 1;
    if (queue) {
        ln_job_counts c = {0};
        double waited = 0;
        long long outbox = -1;
        int drained = drain(queue, sdb, timeout_s, &c, &outbox, &waited);
        json_object_set_new(out, "queue",
                            json_pack("{s:s,s:b,s:f,s:I,s:I,s:I,s:I,s:I,s:I}", "url", queue,
                                      "drained", drained == 1, "waited_s", waited, "outbox",
                                      (json_int_t)outbox, "waiting", (json_int_t)c.waiting,
                                      "delayed", (json_int_t)c.delayed, "active",
                                      (json_int_t)c.active, "completed", (json_int_t)c.completed,
                                      "failed", (json_int_t)c.failed));
        ok = drained == 1;
    }
    free(default_queue);

    for (size_t i = 0; i < sizeof figures / sizeof figures[0]; i++) {
        sqlite3_stmt *st = NULL;
        long long v = -1;
        if (sqlite3_prepare_v2(sdb, figures[i].sql, -1, &st, NULL) == SQLITE_OK &&
            sqlite3_step(st) == SQLITE_ROW)
            v = sqlite3_column_int64(st, 0);
        else
            fprintf(stderr, "writepath check: %s: %s\n", figures[i].key, sqlite3_errmsg(sdb));
        sqlite3_finalize(st);
        json_object_set_new(out, figures[i].key, json_integer(v));
        if (v < 0 || (figures[i].must_be_zero && v != 0)) ok = 0;
    }
    sqlite3_close(sdb);
    long long expected = json_integer_value(json_object_get(out, "expected_notifications"));
    long long actual = json_integer_value(json_object_get(out, "notifications"));
    if (expected != actual) ok = 0;

    json_object_set_new(out, "ok", json_boolean(ok));
    char *text = json_dumps(out, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(out);
    if (text) puts(text);
    free(text);
    return ok ? 0 : 1;
}
