/* admin.c - the SQLite store: a queue as a whole: the queue list,
 * pause and is_paused, clean, drain (in steps of DRAIN_CHUNK jobs) and
 * obliterate (below). The queue list is prepared per call (a rare admin
 * call), the others use the statement cache of store.c. */
#include "sqlite_int.h"

#include "internal.h"

#include <stdio.h>
#include <string.h>

#define BIND_TEXT(s, i, v) sqlite3_bind_text((s), (i), (v), -1, SQLITE_STATIC)

/* Every queue that has a counter row (it held a job: lanes_counts, one row
 * per queue and state, its primary key an index on queue) or a pause flag
 * (lanes_queues). Both reads walk an index, never lanes_jobs. */
#define QUEUES_SQL                                                                                 \
    "SELECT queue FROM lanes_counts UNION SELECT name FROM lanes_queues "                          \
    "ORDER BY 1 LIMIT ?1"

static int collect_names(sq_be *be, sqlite3_stmt *s, size_t max, char ***names, size_t *n) {
    char **arr = ln__calloc(max > 0 ? max : 1, sizeof *arr);
    if (arr == NULL) return ln__jobs_be_err(&be->base, LN_ENOMEM, "out of memory");
    size_t len = 0;
    int rc;
    while (len < max && (rc = sqlite3_step(s)) == SQLITE_ROW) {
        const char *t = (const char *)sqlite3_column_text(s, 0);
        if (t == NULL) continue;
        size_t l = strlen(t);
        if ((arr[len] = ln__malloc(l + 1)) == NULL) {
            ln_jobs_free_lines(arr, len);
            return ln__jobs_be_err(&be->base, LN_ENOMEM, "out of memory");
        }
        memcpy(arr[len++], t, l + 1);
    }
    if (len < max && rc != SQLITE_DONE) {
        ln_jobs_free_lines(arr, len);
        return ln__sq_err(be, rc, "list queues");
    }
    if (len == 0) {
        ln__free(arr);
        arr = NULL;
    }
    *names = arr;
    *n = len;
    return 0;
}

int ln__sq_queues(ln__jobs_be *b, size_t max, char ***names, size_t *n) {
    sq_be *be = (sq_be *)b;
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v2(be->db, QUEUES_SQL, -1, &s, NULL);
    if (rc != SQLITE_OK) return ln__sq_err(be, rc, "list queues");
    sqlite3_bind_int64(s, 1, (sqlite3_int64)max);
    int err = collect_names(be, s, max, names, n);
    sqlite3_finalize(s);
    return err;
}

int ln__sq_pause(ln__jobs_be *b, const char *queue, int paused) {
    sq_be *be = (sq_be *)b;
    int64_t now;
    int err = ln__sq_begin_write(be, &now);
    if (err != 0) return err;
    sqlite3_stmt *s = ln__sq_stmt_get(be, S_PAUSE);
    if (s == NULL) {
        ln__sq_rollback(be);
        return LN_EBACKEND;
    }
    BIND_TEXT(s, 1, queue);
    sqlite3_bind_int(s, 2, paused);
    if ((err = ln__sq_run(be, s, "pause")) != 0 ||
        (err = ln__sq_event(be, queue, paused ? "paused" : "resumed", NULL, NULL, NULL, NULL, NULL,
                            now)) != 0) {
        ln__sq_rollback(be);
        return err;
    }
    return ln__sq_commit(be);
}

int ln__sq_is_paused(ln__jobs_be *b, const char *queue, int *paused) {
    sq_be *be = (sq_be *)b;
    sqlite3_stmt *s = ln__sq_stmt_get(be, S_IS_PAUSED);
    if (s == NULL) return LN_EBACKEND;
    BIND_TEXT(s, 1, queue);
    int rc = sqlite3_step(s);
    *paused = rc == SQLITE_ROW && sqlite3_column_int(s, 0) != 0;
    int err = rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : ln__sq_err(be, rc, "paused");
    sqlite3_reset(s);
    return err;
}

/* clean_once and clean_chunked use this: begin a write and delete the
 * finished jobs of state that one clean statement takes (chunk 0: all of
 * them; else at most chunk). On success the transaction stays open with
 * *now and *n (jobs removed) set; on failure it is rolled back. */
static int clean_step(sq_be *be, const char *queue, int state, int64_t age_ms, uint64_t keep,
                      int chunk, int64_t *now, size_t *n) {
    int err = ln__sq_begin_write(be, now);
    if (err != 0) return err;
    int completed = state == LN_JOB_COMPLETED;
    int64_t kept = keep > INT64_MAX ? INT64_MAX : (int64_t)keep;
    int64_t cutoff = age_ms < 0 ? INT64_MAX : *now - age_ms;
    int64_t *parents = NULL; /* failed children's parents it may take */
    size_t np = 0;
    if (!completed &&
        (err = ln__sq_flow_clean_parents(be, queue, kept, cutoff, chunk, &parents, &np)) != 0) {
        ln__sq_rollback(be);
        return err;
    }
    /* first the deduplication ids of the jobs the delete takes */
    const sq_stmt ids[2] = {completed ? S_CLEAN_DEDUP_C : S_CLEAN_DEDUP_F,
                            chunk > 0 ? (completed ? S_CLEAN_CHUNK_C : S_CLEAN_CHUNK_F)
                                      : (completed ? S_CLEAN_COMPLETED : S_CLEAN_FAILED)};
    be->hard_queue = queue; /* its released parents go: no release event */
    for (int i = 0; i < 2; i++) {
        sqlite3_stmt *s = ln__sq_stmt_get(be, ids[i]);
        if (s == NULL) {
            err = LN_EBACKEND;
            break;
        }
        BIND_TEXT(s, 1, queue);
        sqlite3_bind_int64(s, 2, kept);
        sqlite3_bind_int64(s, 3, cutoff);
        if (chunk > 0 || i == 0) sqlite3_bind_int(s, 4, chunk > 0 ? chunk : -1);
        if ((err = ln__sq_run(be, s, i == 0 ? "clean (dedup)" : "clean")) != 0) break;
    }
    *n = (size_t)sqlite3_changes(be->db);
    if (err == 0) err = ln__sq_flow_clean_drop(be, queue, parents, np);
    be->hard_queue = NULL;
    ln__free(parents);
    if (err != 0) ln__sq_rollback(be);
    return err;
}

static int clean_once(sq_be *be, const char *queue, int state, int64_t age_ms, uint64_t keep,
                      size_t *removed) {
    int64_t now;
    size_t n;
    *removed = 0;
    int err = clean_step(be, queue, state, age_ms, keep, 0, &now, &n);
    if (err != 0) return err;
    char count[24];
    snprintf(count, sizeof count, "%zu", n);
    if ((err = ln__sq_event(be, queue, "cleaned", NULL, "count", count, NULL, NULL, now)) != 0) {
        ln__sq_rollback(be);
        return err;
    }
    *removed = n;
    return ln__sq_commit(be);
}

/* clean on a full disk: at most CLEAN_CHUNK jobs per transaction, each
 * followed by a checkpoint, so the WAL is reused and never needs more room
 * than one chunk's pages; a chunk too big for the room left is halved, down
 * to one job, after the emergency part of the reserve was freed. Not
 * atomic as a whole: each chunk is. */
#define CLEAN_CHUNK 32

static int clean_chunked(sq_be *be, const char *queue, int state, int64_t age_ms, uint64_t keep,
                         size_t *removed) {
    *removed = 0;
    int chunk = CLEAN_CHUNK;
    for (;;) {
        int64_t now;
        size_t n = 0;
        int err = clean_step(be, queue, state, age_ms, keep, chunk, &now, &n);
        if (err == 0) err = ln__sq_commit(be);
        if (err == LN_ENOSPC && ln__sq_retry_for_space(be, err, 1)) continue;
        if (err == LN_ENOSPC && chunk > 1) {
            chunk /= 2;
            continue;
        }
        if (err != 0) return err;
        *removed += n;
        ln__sq_relieve(be);
        if (n < (size_t)chunk) return 0;
    }
}

int ln__sq_clean(ln__jobs_be *b, const char *queue, int state, int64_t age_ms, uint64_t keep,
                 size_t *removed) {
    sq_be *be = (sq_be *)b;
    int err = LN_ENOSPC;
    if (!ln__sq_room_begin(be)) { /* a full disk: straight to small transactions */
        err = clean_once(be, queue, state, age_ms, keep, removed);
        if (ln__sq_retry_for_space(be, err, 1))
            err = clean_once(be, queue, state, age_ms, keep, removed);
    }
    if (err == LN_ENOSPC) /* too big a transaction for the room left */
        err = clean_chunked(be, queue, state, age_ms, keep, removed);
    err = ln__sq_relieved(be, err);
    ln__sq_room_end(be);
    return err;
}

/* Jobs one drain transaction looks at (docs/internals/drain.md): as a
 * Redis drain call, and a write lock held for milliseconds, not for as
 * long as a whole queue takes. */
#define DRAIN_CHUNK 1000

/* A drain walks each index (ready, then delayed jobs) down from its top,
 * DRAIN_CHUNK rows per transaction, each going on below the last row of
 * the one before (key; it starts above every row), so a spared job is
 * looked at once. It looks at most at as many rows as the index held at
 * the start (budget), so jobs added meanwhile cannot keep it going. */
typedef struct drain_walk {
    sq_stmt tie, rest; /* the window's statements (sql.c) */
    int64_t key[3];
    int64_t budget;
    int64_t chunk; /* rows per transaction: DRAIN_CHUNK, fewer on a full disk */
} drain_walk;

typedef struct drain_row {
    int64_t rid;
    int64_t parent; /* the flow parent of the queue waiting for it, or 0 */
    int spared;     /* a job scheduler's current iteration: it stays */
} drain_row;

/* Delete a drained job rid (ready or delayed) as remove does. */
static int drain_job(sq_be *be, const char *queue, int64_t rid) {
    int priority;
    return ln__sq_remove_row(be, queue, rid, &priority, "drain");
}

/* Flow parent rid of the queue, once the delete of its last pending child
 * released it (the schema's trigger), goes too, and so on up its tree, as
 * BullMQ's drain removes it; it is not counted, as on Redis. At most
 * LN__PARENT_CLIMB_MAX of them: the parent above stays released (ready),
 * as on Redis, so a transaction's work stays bounded. */
static int drain_released(sq_be *be, const char *queue, int64_t rid) {
    for (int depth = 0; rid > 0 && depth < LN__PARENT_CLIMB_MAX; depth++) {
        sqlite3_stmt *s = ln__sq_stmt_get(be, S_DRAIN_RELEASED);
        if (s == NULL) return LN_EBACKEND;
        sqlite3_bind_int64(s, 1, rid);
        BIND_TEXT(s, 2, queue);
        int rc = sqlite3_step(s);
        if (rc == SQLITE_DONE) return 0; /* it waits for other children */
        if (rc != SQLITE_ROW) return ln__sq_err(be, rc, "drain");
        int64_t up = sqlite3_column_int64(s, 0); /* NULL reads 0 */
        sqlite3_reset(s);
        int err = drain_job(be, queue, rid);
        if (err != 0) return err;
        rid = up;
    }
    return 0;
}

/* The rows of window statement id (at most want) after rows[0..*n), *n
 * growing, and the key of the last into key. */
static int drain_rows(sq_be *be, const char *queue, sq_stmt id, const int64_t from[3], int64_t want,
                      drain_row *rows, size_t *n, int64_t key[3]) {
    sqlite3_stmt *s = ln__sq_stmt_get(be, id);
    if (s == NULL) return LN_EBACKEND;
    BIND_TEXT(s, 1, queue);
    for (int i = 0; i < 3; i++) sqlite3_bind_int64(s, 2 + i, from[i]);
    sqlite3_bind_int64(s, 5, want - (int64_t)*n);
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        LN_ASSERT(*n < (size_t)want);
        drain_row *r = &rows[(*n)++];
        r->rid = sqlite3_column_int64(s, 0);
        key[0] = sqlite3_column_int64(s, 1);
        key[1] = sqlite3_column_int64(s, 2);
        key[2] = r->rid;
        r->spared = sqlite3_column_int(s, 3);
        r->parent = sqlite3_column_int64(s, 4);
    }
    sqlite3_reset(s);
    return rc == SQLITE_DONE ? 0 : ln__sq_err(be, rc, "drain");
}

/* The next rows of walk w (at most want) into rows, *n of them, and the
 * key of the last into key: those of the cursor's key first. */
static int drain_window(sq_be *be, const char *queue, const drain_walk *w, int64_t want,
                        drain_row *rows, size_t *n, int64_t key[3]) {
    *n = 0;
    int err = drain_rows(be, queue, w->tie, w->key, want, rows, n, key);
    if (err == 0 && (int64_t)*n < want)
        err = drain_rows(be, queue, w->rest, w->key, want, rows, n, key);
    return err;
}

/* One transaction of walk w; *removed grows by the jobs it removed. On
 * failure nothing changed, w included, so the step may run again. *more:
 * 0 once the walk is over. */
static int drain_step(sq_be *be, const char *queue, drain_walk *w, drain_row *rows, size_t *removed,
                      int *more) {
    int64_t now, key[3];
    int err = ln__sq_begin_write(be, &now);
    if (err != 0) return err;
    int64_t want = w->budget < w->chunk ? w->budget : w->chunk;
    size_t n = 0, gone = 0;
    err = drain_window(be, queue, w, want, rows, &n, key);
    be->hard_queue = queue; /* its released parents go: no release event */
    for (size_t i = 0; err == 0 && i < n; i++) {
        if (rows[i].spared) continue;
        if ((err = drain_job(be, queue, rows[i].rid)) == 0)
            err = drain_released(be, queue, rows[i].parent);
        gone++;
    }
    be->hard_queue = NULL;
    if (err != 0) {
        ln__sq_rollback(be);
        return err;
    }
    if ((err = ln__sq_commit(be)) != 0) return err;
    *removed += gone;
    memcpy(w->key, key, sizeof key);
    w->budget -= (int64_t)n;
    *more = (int64_t)n == want && w->budget > 0;
    return 0;
}

/* The walks' budgets: the ready and the delayed jobs there now. */
static int drain_sizes(sq_be *be, const char *queue, drain_walk walks[2]) {
    sqlite3_stmt *s = ln__sq_stmt_get(be, S_DRAIN_SIZE);
    if (s == NULL) return LN_EBACKEND;
    BIND_TEXT(s, 1, queue);
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        walks[0].budget = sqlite3_column_int64(s, 0);
        walks[1].budget = sqlite3_column_int64(s, 1);
    }
    sqlite3_reset(s);
    return rc == SQLITE_ROW ? 0 : ln__sq_err(be, rc, "drain");
}

/* Not atomic as a whole (each transaction is): docs/internals/drain.md.
 * On a full disk the transactions are small (as clean_chunked's). */
int ln__sq_drain(ln__jobs_be *b, const char *queue, size_t *removed) {
    sq_be *be = (sq_be *)b;
    *removed = 0;
    drain_row *rows = ln__malloc(DRAIN_CHUNK * sizeof *rows);
    if (rows == NULL) return ln__jobs_be_err(b, LN_ENOMEM, "out of memory");
    int64_t chunk = ln__sq_room_begin(be) ? CLEAN_CHUNK : DRAIN_CHUNK;
    drain_walk walks[2] = {
        {S_DRAIN_READY_TIE, S_DRAIN_READY, {INT64_MAX, INT64_MAX, INT64_MAX}, 0, chunk},
        {S_DRAIN_DELAYED_TIE, S_DRAIN_DELAYED, {INT64_MAX, INT64_MAX, INT64_MAX}, 0, chunk}};
    int err = drain_sizes(be, queue, walks);
    for (size_t i = 0; err == 0 && i < LN_ARRAY_SIZE(walks); i++) {
        drain_walk *w = &walks[i];
        int more = w->budget > 0;
        while (err == 0 && more) {
            err = drain_step(be, queue, w, rows, removed, &more);
            if (err == LN_ENOSPC && ln__sq_retry_for_space(be, err, 1)) {
                err = 0; /* the step changed nothing: again, with more room */
            } else if (err == LN_ENOSPC && w->chunk > 1) {
                w->chunk /= 2;
                err = 0;
            } else {
                err = ln__sq_relieved(be, err);
            }
        }
    }
    ln__free(rows);
    ln__sq_room_end(be);
    return err;
}

/* ---- Obliterate: a step of ln_jobs_obliterate (BullMQ's
 * queue.obliterate(); front/front.c pauses the queue and repeats the
 * steps): one write transaction of at most LN__OBLITERATE_STEP jobs and
 * job schedulers of a paused queue, as the Redis store's obliterate.lua
 * takes them: state by state (active only with force, delayed, the
 * schedulers, completed, ready, failed, then parents waiting for
 * children), each job deleted as a drain deletes one
 * (its deduplication id freed, its logs and dependencies by the schema's
 * triggers, a parent in another queue released; be->hard_queue: a parent
 * of this queue gets no release event, it goes too). A transaction that
 * finds nothing left deletes the queue's own rows: events, metrics,
 * limits, counters and its pause flag. Left, as on Redis: deduplication
 * ids whose job was gone before (they hold until their TTL, BullMQ's
 * keys), and the registrations of workers still running (Redis lists
 * them by their connections). */

/* One statement per state, each with its partial index's own WHERE term,
 * so each walks that index: active first (force only). */
static const char *const state_sql[] = {
    "SELECT rid FROM lanes_jobs WHERE queue = ?1 AND state = 3 LIMIT ?2",
    "SELECT rid FROM lanes_jobs WHERE queue = ?1 AND state = 1 LIMIT ?2",
    "SELECT rid FROM lanes_jobs WHERE queue = ?1 AND state = 4 LIMIT ?2",
    "SELECT rid FROM lanes_jobs WHERE queue = ?1 AND state = 0 LIMIT ?2",
    "SELECT rid FROM lanes_jobs WHERE queue = ?1 AND state = 5 LIMIT ?2",
    "SELECT rid FROM lanes_jobs WHERE queue = ?1 AND state = 7 LIMIT ?2",
};

/* The queue's own rows, deleted once it has no job and no scheduler. Its
 * events go but the store's newest row, whose seq the next event's is
 * counted from (events.c: no seq is handed out twice, or followers
 * of other queues would skip new events): if it is the queue's, it stays
 * as a row of no queue (no follower has the name ""). */
static const char *const queue_sql[] = {
    "DELETE FROM lanes_events WHERE queue = ?1 AND seq <> (SELECT max(seq) FROM lanes_events)",
    "UPDATE lanes_events SET queue = '', name = '', job_id = NULL, fields = NULL WHERE queue = ?1",
    "DELETE FROM lanes_metrics WHERE queue = ?1",
    "DELETE FROM lanes_metrics_data WHERE queue = ?1",
    "DELETE FROM lanes_limits WHERE queue = ?1",
    "DELETE FROM lanes_counts WHERE queue = ?1",
    "DELETE FROM lanes_queues WHERE name = ?1",
};

/* Job rids of queue appended to rids (*n of them) until *n is want, from
 * the states state_sql[first..last) in that order. */
static int step_rids(sq_be *be, const char *queue, size_t first, size_t last, int64_t want,
                     int64_t *rids, int64_t *n) {
    for (size_t k = first; k < last && *n < want; k++) {
        sqlite3_stmt *s = NULL;
        int rc = sqlite3_prepare_v2(be->db, state_sql[k], -1, &s, NULL);
        if (rc != SQLITE_OK) return ln__sq_err(be, rc, "obliterate");
        sqlite3_bind_text(s, 1, queue, -1, SQLITE_STATIC);
        sqlite3_bind_int64(s, 2, want - *n);
        while ((rc = sqlite3_step(s)) == SQLITE_ROW) rids[(*n)++] = sqlite3_column_int64(s, 0);
        sqlite3_finalize(s);
        if (rc != SQLITE_DONE) return ln__sq_err(be, rc, "obliterate");
    }
    return 0;
}

/* Delete jobs rids[0..n) of queue: a deduplication id each held first
 * (the drain's statement), then the row, whatever its state. */
static int delete_rids(sq_be *be, const char *queue, const int64_t *rids, int64_t n) {
    sqlite3_stmt *del = NULL;
    int rc = sqlite3_prepare_v2(be->db, "DELETE FROM lanes_jobs WHERE rid = ?1", -1, &del, NULL);
    if (rc != SQLITE_OK) return ln__sq_err(be, rc, "obliterate");
    int err = 0;
    for (int64_t i = 0; i < n && err == 0; i++) {
        sqlite3_stmt *s = ln__sq_stmt_get(be, S_REMOVE_DEDUP);
        if (s == NULL) {
            err = LN_EBACKEND;
            break;
        }
        sqlite3_bind_int64(s, 1, rids[i]);
        sqlite3_bind_text(s, 2, queue, -1, SQLITE_STATIC);
        if ((err = ln__sq_run(be, s, "obliterate")) != 0) break;
        sqlite3_bind_int64(del, 1, rids[i]);
        err = ln__sq_run(be, del, "obliterate");
    }
    sqlite3_finalize(del);
    return err;
}

/* The queue's job schedulers, at most want of them; *n gets how many. */
static int delete_schedulers(sq_be *be, const char *queue, int64_t want, int64_t *n) {
    int err = ln__sq_run_once(be, "obliterate", NULL,
                              "DELETE FROM lanes_schedulers WHERE queue = ?1 AND id IN (SELECT id "
                              "FROM lanes_schedulers WHERE queue = ?1 LIMIT ?2)",
                              "ti", queue, want);
    *n = err == 0 ? sqlite3_changes(be->db) : 0;
    return err;
}

/* Inside the step's transaction: LN_EBUSY unless queue is paused, or with
 * active jobs and no force; *left (may be NULL) the jobs and schedulers it
 * has. */
static int step_check(sq_be *be, const char *queue, int force, int64_t *left) {
    int64_t v = 0;
    int err = ln__sq_run_once(be, "obliterate", &v,
                              "SELECT paused FROM lanes_queues WHERE name = ?1", "t", queue);
    if (err == 0 && v != 1)
        return ln__jobs_be_err(&be->base, LN_EBUSY,
                               "queue '%s' was resumed while being obliterated", queue);
    if (err == 0 && !force)
        err = ln__sq_run_once(be, "obliterate", &v,
                              "SELECT EXISTS(SELECT 1 FROM lanes_jobs WHERE queue = ?1 AND "
                              "state = 3)",
                              "t", queue);
    if (err == 0 && !force && v)
        return ln__jobs_be_err(&be->base, LN_EBUSY,
                               "queue '%s' has active jobs: not obliterated (force removes them)",
                               queue);
    if (err == 0 && left != NULL)
        err = ln__sq_run_once(be, "obliterate", left,
                              "SELECT (SELECT coalesce(sum(n), 0) FROM lanes_counts WHERE queue "
                              "= ?1) + (SELECT count(*) FROM lanes_schedulers WHERE queue = ?1)",
                              "t", queue);
    return err;
}

/* One transaction: at most step jobs and schedulers, or, none
 * being left, the queue's own rows (*more 0). *removed grows by the jobs;
 * on failure nothing changed. */
static int obliterate_step(sq_be *be, const char *queue, int force, int64_t step, int64_t *rids,
                           int64_t *left, size_t *removed, int *more) {
    int64_t now, n = 0, ns = 0;
    int err = ln__sq_begin_write(be, &now);
    if (err != 0) return err;
    err = step_check(be, queue, force, left);
    be->hard_queue = queue; /* its released parents go: no release event */
    /* Redis's order: active (force), delayed, the schedulers, the rest. */
    if (err == 0) err = step_rids(be, queue, force ? 0 : 1, 2, step, rids, &n);
    if (err == 0) err = delete_schedulers(be, queue, step - n, &ns);
    if (err == 0) err = step_rids(be, queue, 2, LN_ARRAY_SIZE(state_sql), step - ns, rids, &n);
    if (err == 0) err = delete_rids(be, queue, rids, n);
    be->hard_queue = NULL;
    *more = n + ns > 0;
    for (size_t i = 0; err == 0 && !*more && i < LN_ARRAY_SIZE(queue_sql); i++)
        err = ln__sq_run_once(be, "obliterate", NULL, queue_sql[i], "t", queue);
    if (err != 0) {
        ln__sq_rollback(be);
        return err;
    }
    if ((err = ln__sq_commit(be)) != 0) return err;
    *removed += (size_t)n;
    return 0;
}

/* A step on a full disk: the queue's events first, then transactions of
 * at most 32 jobs (fewer when one does not fit, as a clean's), each
 * followed by a checkpoint, up to LN__OBLITERATE_STEP jobs in all. */
static int obliterate_small(sq_be *be, const char *queue, int force, int64_t *rids, int64_t *left,
                            size_t *removed, int *more) {
    int64_t step = 32;
    size_t before = *removed;
    int err = ln__sq_trim_small(be, queue, 0, NULL); /* events are not written now */
    while (err == 0) {
        err = obliterate_step(be, queue, force, step, rids, left, removed, more);
        if (err == LN_ENOSPC && ln__sq_retry_for_space(be, err, 1)) {
            err = 0; /* the step changed nothing: again, with more room */
        } else if (err == LN_ENOSPC && step > 1) {
            step /= 2;
            err = 0;
        } else if (err == 0) {
            ln__sq_relieve(be);
            if (!*more || *removed - before >= LN__OBLITERATE_STEP) break;
        }
    }
    return err;
}

/* backend.h's obliterate step: one transaction, run again once when the
 * disk was full and the space reserve was freed for it; on a full disk
 * (the reserve not whole) small ones instead (obliterate_small). */
int ln__sq_obliterate(ln__jobs_be *b, const char *queue, int force, int64_t *left, size_t *removed,
                      int *more) {
    sq_be *be = (sq_be *)b;
    int64_t *rids = ln__malloc(LN__OBLITERATE_STEP * sizeof *rids);
    if (rids == NULL) return ln__jobs_be_err(b, LN_ENOMEM, "out of memory");
    int err;
    if (ln__sq_room_begin(be)) {
        err = obliterate_small(be, queue, force, rids, left, removed, more);
    } else {
        err = obliterate_step(be, queue, force, LN__OBLITERATE_STEP, rids, left, removed, more);
        if (ln__sq_retry_for_space(be, err, 1))
            err = obliterate_step(be, queue, force, LN__OBLITERATE_STEP, rids, left, removed, more);
    }
    ln__free(rids);
    err = ln__sq_relieved(be, err);
    ln__sq_room_end(be);
    return err;
}
