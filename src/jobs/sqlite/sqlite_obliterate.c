/* sqlite_obliterate.c - a step of ln_jobs_obliterate on the SQLite
 * backend (store methods version 19; BullMQ's queue.obliterate(); front.c
 * pauses the queue and repeats the steps): one write transaction of at
 * most LN__OBLITERATE_STEP jobs and job schedulers of a paused queue, as
 * the Redis store's obliterate.lua takes them: state by state (active only
 * with force, delayed, the schedulers, completed, ready, failed, then
 * parents waiting for children), each job deleted as a drain deletes one
 * (its deduplication id freed, its logs and dependencies by the schema's
 * triggers, a parent in another queue released; be->hard_queue: a parent
 * of this queue gets no release event, it goes too). A transaction that
 * finds nothing left deletes the queue's own rows: events, metrics,
 * limits, counters and its pause flag. Left, as on Redis: deduplication
 * ids whose job was gone before (they hold until their TTL, BullMQ's
 * keys), and the registrations of workers still running (Redis lists
 * them by their connections). */
#include "sqlite_int.h"

#include "internal.h"

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
 * counted from (sqlite_events.c: no seq is handed out twice, or followers
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
