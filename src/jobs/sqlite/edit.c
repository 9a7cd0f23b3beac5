/* sqlite_edit.c - jobs_edit.h on the SQLite backend (store methods
 * version 17): a job's priority, delay or data, a deduplication id's row
 * of lanes_dedup, a step of promoting delayed jobs, counts by priority,
 * trimming a queue's events. Each change is one write transaction of a few
 * primary-key (or index) statements, prepared per call (rare admin calls:
 * sqlite.c's statement cache stays as it is). docs/internals/edit.md. */
#include "sqlite_int.h"

#include "internal.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Prepare sql into *out (the caller binds, steps and finalizes it). */
static int run_sql(sq_be *be, const char *sql, const char *what, sqlite3_stmt **out) {
    int rc = sqlite3_prepare_v2(be->db, sql, -1, out, NULL);
    return rc == SQLITE_OK ? 0 : ln__sq_err(be, rc, what);
}

/* Step s to its end and finalize it. */
static int step_done(sq_be *be, sqlite3_stmt *s, const char *what) {
    int rc = sqlite3_step(s);
    sqlite3_finalize(s);
    return rc == SQLITE_DONE ? 0 : ln__sq_err(be, rc, what);
}

static const char *state_name(int state) {
    return state == ST_READY ? "waiting" : ln_job_state_name(state);
}

/* Back (seq 0: by the order jobs were added) or front of the line of
 * priority: with lifo a seq below every ready job of that priority (as a
 * rate-limited job's requeue) and, as a lifo add's -rid, above the lifo
 * adds to come (?5: minus a rid taken from lanes_jobs' AUTOINCREMENT
 * sequence, which no job will have), so they run before it, as on Redis
 * the later RPUSH or lifo score does. */
#define READY_PRIORITY_SQL                                                                         \
    "UPDATE lanes_jobs SET priority = ?2, seq = CASE WHEN ?3 THEN min(?5, (SELECT "                \
    "min(0, coalesce(min(r.seq), 0)) - 1 FROM lanes_jobs r WHERE r.queue = ?4 "                    \
    "AND r.state = 0 AND r.priority = ?2)) ELSE 0 END WHERE rid = ?1"

/* -(a rid no job will have), or 0 without a sequence row. */
static int lifo_seq(sq_be *be, int64_t *seq) {
    *seq = 0;
    sqlite3_stmt *s = NULL;
    int err = run_sql(be,
                      "UPDATE sqlite_sequence SET seq = seq + 1 WHERE name = 'lanes_jobs' "
                      "RETURNING seq",
                      "change priority", &s);
    if (err != 0) return err;
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        *seq = -sqlite3_column_int64(s, 0);
        rc = sqlite3_step(s);
    }
    sqlite3_finalize(s);
    return rc == SQLITE_DONE ? 0 : ln__sq_err(be, rc, "change priority");
}

static int ready_priority(sq_be *be, const char *queue, int64_t rid, const ln__jobs_edit *e) {
    sqlite3_stmt *s = NULL;
    int64_t front = 0;
    int err = e->lifo ? lifo_seq(be, &front) : 0;
    if (err != 0) return err;
    if ((err = run_sql(be, "SELECT priority FROM lanes_jobs WHERE rid = ?1", "change priority",
                       &s)) != 0)
        return err;
    sqlite3_bind_int64(s, 1, rid);
    int old = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int(s, 0) : 0;
    sqlite3_finalize(s);
    if ((err = run_sql(be, READY_PRIORITY_SQL, "change priority", &s)) != 0) return err;
    sqlite3_bind_int64(s, 1, rid);
    sqlite3_bind_int(s, 2, e->priority);
    sqlite3_bind_int(s, 3, e->lifo);
    sqlite3_bind_text(s, 4, queue, -1, SQLITE_STATIC);
    sqlite3_bind_int64(s, 5, front);
    if ((err = step_done(be, s, "change priority")) != 0) return err;
    /* The counter key splits ready jobs by priority (SQ_COUNT_KEY); the
     * triggers see only moves of state, so this move is counted here. */
    int from = old > 0 ? LN_JOB_PRIORITIZED : LN_JOB_WAITING;
    int to = e->priority > 0 ? LN_JOB_PRIORITIZED : LN_JOB_WAITING;
    if (from == to) return 0;
    err = ln__sq_count(be, queue, from, -1);
    return err != 0 ? err : ln__sq_count(be, queue, to, 1);
}

static int edit_priority(sq_be *be, const char *queue, int64_t rid, int state,
                         const ln__jobs_edit *e) {
    if (state == ST_READY) return ready_priority(be, queue, rid, e);
    /* any other state (delayed, waiting for children, active, finished):
     * the column only, read when the job is ready again (its counter key
     * is its state whatever its priority), as BullMQ writes the field */
    sqlite3_stmt *s = NULL;
    int err =
        run_sql(be, "UPDATE lanes_jobs SET priority = ?2 WHERE rid = ?1", "change priority", &s);
    if (err != 0) return err;
    sqlite3_bind_int64(s, 1, rid);
    sqlite3_bind_int(s, 2, e->priority);
    return step_done(be, s, "change priority");
}

static int edit_delay(sq_be *be, const char *queue, int64_t rid, int state, int64_t now,
                      const ln__jobs_edit *e) {
    if (state != ST_DELAYED)
        return ln__jobs_be_err(&be->base, LN_EINVAL, "job '%s' is not delayed (it is %s)", e->id,
                               state_name(state));
    sqlite3_stmt *s = NULL;
    /* delay stays the add's: a job not delayed reports created_at + it as
     * when it was first due (jobs.h run_at_ms), as Redis reads opts.delay */
    int err = run_sql(be, "UPDATE lanes_jobs SET run_at = ?2 WHERE rid = ?1", "change delay", &s);
    if (err != 0) return err;
    int64_t due = now + e->delay_ms;
    sqlite3_bind_int64(s, 1, rid);
    sqlite3_bind_int64(s, 2, due);
    if ((err = step_done(be, s, "change delay")) != 0) return err;
    char d[24];
    snprintf(d, sizeof d, "%lld", (long long)due);
    return ln__sq_event(be, queue, "delayed", e->id, "delay", d, NULL, NULL, now);
}

static int edit_data(sq_be *be, int64_t rid, const ln__jobs_edit *e) {
    sqlite3_stmt *s = NULL;
    int err = run_sql(be, "UPDATE lanes_jobs SET data = ?2 WHERE rid = ?1", "update data", &s);
    if (err != 0) return err;
    sqlite3_bind_int64(s, 1, rid);
    sqlite3_bind_text(s, 2, e->data, (int)e->data_len, SQLITE_STATIC);
    return step_done(be, s, "update data");
}

/* The holder of a dedup id, as ln__sq_dedup_check reads it: a row whose
 * expiry has not passed (its job may be gone: a TTL holds the id whatever
 * becomes of the job), or without expiry whose job exists (a job gone
 * frees it); the id named as that add names it. */
#define DEDUP_HOLDER_SQL                                                                           \
    "SELECT d.job_rid, j.cid FROM lanes_dedup d LEFT JOIN lanes_jobs j ON j.rid = d.job_rid "      \
    "WHERE d.queue = ?1 AND d.id = ?2 AND (CASE WHEN d.expires_at IS NULL THEN j.rid IS NOT "      \
    "NULL ELSE d.expires_at > ?3 END)"

static int edit_dedup(sq_be *be, const char *queue, int64_t now, ln__jobs_edit *e) {
    sqlite3_stmt *s = NULL;
    int err = run_sql(be, DEDUP_HOLDER_SQL, "dedup id", &s);
    if (err != 0) return err;
    sqlite3_bind_text(s, 1, queue, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 2, e->dedup_id, -1, SQLITE_STATIC);
    sqlite3_bind_int64(s, 3, now);
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW && e->op == LN__EDIT_DEDUP_GET) {
        e->job_id =
            ln__sq_id_dup(sqlite3_column_int64(s, 0), (const char *)sqlite3_column_text(s, 1));
        if (e->job_id == NULL) err = ln__jobs_be_err(&be->base, LN_ENOMEM, "out of memory");
    } else if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        err = ln__sq_err(be, rc, "dedup id");
    }
    sqlite3_finalize(s);
    if (err != 0) return err;
    if (e->op == LN__EDIT_DEDUP_GET)
        return rc == SQLITE_ROW
                   ? 0
                   : ln__jobs_be_err(&be->base, LN_ENOENT, "queue '%s': no job holds dedup id '%s'",
                                     queue, e->dedup_id);
    e->removed = rc == SQLITE_ROW;
    if ((err = run_sql(be, "DELETE FROM lanes_dedup WHERE queue = ?1 AND id = ?2", "dedup id",
                       &s)) != 0)
        return err;
    sqlite3_bind_text(s, 1, queue, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 2, e->dedup_id, -1, SQLITE_STATIC);
    return step_done(be, s, "dedup id");
}

/* The first e->max delayed jobs by due time to ready, as ln__sq_promote
 * moves one (seq 0: the back, whatever its lifo; run_at now), each with
 * its "waiting" event. */
#define PROMOTE_SOME_SQL                                                                           \
    "SELECT rid FROM lanes_jobs WHERE queue = ?1 AND state = 1 ORDER BY run_at, rid "              \
    "LIMIT ?2"

static int promote_one(sq_be *be, const char *queue, int64_t rid, int64_t now) {
    sqlite3_stmt *s = NULL;
    int err = run_sql(be,
                      "UPDATE lanes_jobs SET state = 0, seq = 0, run_at = ?2 WHERE rid = ?1 "
                      "RETURNING COALESCE(cid, rid)",
                      "promote", &s);
    if (err != 0) return err;
    sqlite3_bind_int64(s, 1, rid);
    sqlite3_bind_int64(s, 2, now);
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW)
        err = ln__sq_event(be, queue, "waiting", (const char *)sqlite3_column_text(s, 0), "prev",
                           "delayed", NULL, NULL, now);
    else
        err = ln__sq_err(be, rc, "promote");
    if (err == 0 && (rc = sqlite3_step(s)) != SQLITE_DONE) err = ln__sq_err(be, rc, "promote");
    sqlite3_finalize(s);
    return err;
}

static int promote_some(sq_be *be, const char *queue, int64_t now, ln__jobs_edit *e) {
    int64_t *rids = ln__calloc(e->max, sizeof *rids);
    if (rids == NULL) return ln__jobs_be_err(&be->base, LN_ENOMEM, "out of memory");
    sqlite3_stmt *s = NULL;
    int err = run_sql(be, PROMOTE_SOME_SQL, "promote", &s);
    size_t n = 0;
    if (err == 0) {
        sqlite3_bind_text(s, 1, queue, -1, SQLITE_STATIC);
        sqlite3_bind_int64(s, 2, (sqlite3_int64)e->max);
        int rc;
        /* the rows first: no update while the SELECT walks their index */
        while (n < e->max && (rc = sqlite3_step(s)) == SQLITE_ROW)
            rids[n++] = sqlite3_column_int64(s, 0);
        if (n < e->max && rc != SQLITE_DONE) err = ln__sq_err(be, rc, "promote");
        sqlite3_finalize(s);
    }
    e->count = 0;
    for (size_t i = 0; err == 0 && i < n; i++)
        if ((err = promote_one(be, queue, rids[i], now)) == 0) e->count++;
    ln__free(rids);
    return err;
}

/* One count(*) per priority over the lanes_jobs_ready index (queue,
 * priority, seq) WHERE state = 0: its cost is the number of ready jobs
 * of that priority. Called in a read transaction (ln__sq_edit): one
 * snapshot for all of them, and no writer waits for it. */
static int priority_counts(sq_be *be, const char *queue, ln__jobs_edit *e) {
    sqlite3_stmt *s = NULL;
    int err = run_sql(be,
                      "SELECT count(*) FROM lanes_jobs WHERE queue = ?1 AND state = 0 AND "
                      "priority = ?2",
                      "counts per priority", &s);
    if (err != 0) return err;
    sqlite3_bind_text(s, 1, queue, -1, SQLITE_STATIC);
    for (size_t i = 0; err == 0 && i < e->n; i++) {
        sqlite3_bind_int(s, 2, e->priorities[i]);
        int rc = sqlite3_step(s);
        if (rc == SQLITE_ROW)
            e->counts[i] = (uint64_t)sqlite3_column_int64(s, 0);
        else
            err = ln__sq_err(be, rc, "counts per priority");
        sqlite3_reset(s);
    }
    sqlite3_finalize(s);
    return err;
}

/* The queue's events older than its max-th newest (all of them for 0),
 * but the store's newest event: its seq must stay the highest handed out
 * (sqlite_events.c). A scan of lanes_events, which retention keeps near
 * LN_JOBS_EVENTS_KEEP rows. */
#define TRIM_EVENTS_SQL                                                                            \
    "DELETE FROM lanes_events WHERE queue = ?1 AND seq < (CASE WHEN ?2 = 0 THEN "                  \
    "9223372036854775807 ELSE (SELECT seq FROM lanes_events WHERE queue = ?1 ORDER BY seq DESC "   \
    "LIMIT 1 OFFSET ?2 - 1) END) AND seq <> (SELECT max(seq) FROM lanes_events)"

/* ... the oldest ?3 of them only (ln__sq_trim_small). */
#define TRIM_SOME_SQL                                                                              \
    TRIM_EVENTS_SQL " AND seq IN (SELECT seq FROM lanes_events WHERE queue = ?1 ORDER BY seq "     \
                    "LIMIT ?3)"

/* TRIM_EVENTS_SQL, or with chunk > 0 TRIM_SOME_SQL; *count: the rows. */
static int trim_some(sq_be *be, const char *queue, size_t max, int64_t chunk, size_t *count) {
    sqlite3_stmt *s = NULL;
    int err = run_sql(be, chunk > 0 ? TRIM_SOME_SQL : TRIM_EVENTS_SQL, "trim events", &s);
    if (err != 0) return err;
    sqlite3_bind_text(s, 1, queue, -1, SQLITE_STATIC);
    sqlite3_bind_int64(s, 2, max > INT64_MAX ? INT64_MAX : (sqlite3_int64)max);
    if (chunk > 0) sqlite3_bind_int64(s, 3, chunk);
    if ((err = step_done(be, s, "trim events")) == 0) *count = (size_t)sqlite3_changes(be->db);
    return err;
}

static int trim_events(sq_be *be, const char *queue, ln__jobs_edit *e) {
    return trim_some(be, queue, e->max, 0, &e->count);
}

int ln__sq_trim_small(sq_be *be, const char *queue, size_t max, size_t *count) {
    int64_t chunk = 256, now; /* events are small: a few pages */
    size_t n = 0, total = 0;
    int err = 0;
    do {
        if ((err = ln__sq_begin_write(be, &now)) == 0 &&
            (err = trim_some(be, queue, max, chunk, &n)) == 0)
            err = ln__sq_commit(be);
        else
            ln__sq_rollback(be);
        if (err == LN_ENOSPC && ln__sq_retry_for_space(be, err, 1)) {
            err = 0; /* nothing changed: again, with more room */
            n = (size_t)chunk;
            continue;
        }
        if (err == LN_ENOSPC && chunk > 1) {
            chunk /= 2;
            err = 0;
            n = (size_t)chunk;
            continue;
        }
        if (err == 0) ln__sq_relieve(be);
        total += err == 0 ? n : 0;
    } while (err == 0 && n == (size_t)chunk);
    if (count != NULL) *count = total;
    return err;
}

static int edit_job(sq_be *be, const char *queue, int64_t now, ln__jobs_edit *e) {
    int64_t rid = 0;
    int state = -1;
    int err = ln__sq_find_job(be, queue, e->id, &rid, &state);
    if (err != 0) return err;
    switch (e->op) {
    case LN__EDIT_PRIORITY:
        return edit_priority(be, queue, rid, state, e);
    case LN__EDIT_DELAY:
        return edit_delay(be, queue, rid, state, now, e);
    case LN__EDIT_DATA:
        return edit_data(be, rid, e);
    case LN__EDIT_ADD_LOG:
    case LN__EDIT_CLEAR_LOGS:
        return ln__sq_edit_logs(be, rid, e);
    case LN__EDIT_DETACH:
        return ln__sq_edit_detach(be, rid, now, e);
    default:
        return ln__jobs_be_err(&be->base, LN_EINVAL, "unknown edit %d", e->op);
    }
}

/* Counts per priority: reads only, in a deferred transaction (WAL: a
 * snapshot, never the write lock). */
static int read_counts(sq_be *be, const char *queue, ln__jobs_edit *e) {
    int err = ln__sq_exec_sql(be, "BEGIN", "counts per priority");
    if (err == 0) err = priority_counts(be, queue, e);
    if (err == 0) err = ln__sq_exec_sql(be, "COMMIT", "counts per priority");
    if (err != 0) ln__sq_rollback(be);
    return err;
}

int ln__sq_edit(ln__jobs_be *b, const char *queue, ln__jobs_edit *e) {
    sq_be *be = (sq_be *)b;
    if (e->op == LN__EDIT_PRIORITY_COUNTS) return read_counts(be, queue, e);
    if (e->op == LN__EDIT_TRIM_EVENTS && ln__sq_room_begin(be)) { /* a full disk */
        int err = ln__sq_relieved(be, ln__sq_trim_small(be, queue, e->max, &e->count));
        ln__sq_room_end(be);
        return err;
    }
    int64_t now;
    int err = ln__sq_begin_write(be, &now);
    if (err != 0) return err;
    if (e->op == LN__EDIT_DEDUP_GET || e->op == LN__EDIT_DEDUP_REMOVE)
        err = edit_dedup(be, queue, now, e);
    else if (e->op == LN__EDIT_PROMOTE_SOME)
        err = promote_some(be, queue, now, e);
    else if (e->op == LN__EDIT_TRIM_EVENTS)
        err = trim_events(be, queue, e);
    else
        err = edit_job(be, queue, now, e);
    if (err != 0) {
        ln__free(e->job_id);
        e->job_id = NULL;
        ln__sq_rollback(be);
        return err;
    }
    return ln__sq_commit(be);
}
