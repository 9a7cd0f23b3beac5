/* edit.c - the SQLite store: a job's changes. The edit method
 * (jobs_edit.h): a job's priority, delay or data, a deduplication id's row
 * of lanes_dedup, a step of promoting delayed jobs, counts by priority,
 * trimming a queue's events, a job's log lines, detaching a child from its
 * parent; and the remove and promote methods (below). Each change is one
 * write transaction of a few primary-key (or index) statements, the edit
 * ops' prepared per call (rare admin calls: store.c's statement cache
 * stays as it is). docs/internals/edit.md. */
#include "sqlite_int.h"

#include "internal.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define BIND_TEXT(s, i, v) sqlite3_bind_text((s), (i), (v), -1, SQLITE_STATIC)

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
 * (events.c). A scan of lanes_events, which retention keeps near
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

/* A job's log lines from outside its run (jobs_edit.h
 * ln_jobs_add_log, ln_jobs_clear_logs; BullMQ's queue.addJobLog and
 * job.clearLogs) on the SQLite backend: rows of lanes_logs, walked by its
 * index (rid, seq), inside the edit method's write transaction. */

/* Every line of job rid older than its newest keep (keep > 0). */
#define TRIM_LOGS_SQL                                                                              \
    "DELETE FROM lanes_logs WHERE rid = ?1 AND seq < (SELECT seq FROM lanes_logs WHERE rid = ?1 "  \
    "ORDER BY seq DESC LIMIT 1 OFFSET ?2 - 1)"

static int edit_logs(sq_be *be, int64_t rid, ln__jobs_edit *e) {
    int64_t keep = e->max > INT64_MAX ? INT64_MAX : (int64_t)e->max;
    int err = 0;
    if (e->op == LN__EDIT_ADD_LOG)
        err = ln__sq_run_once(be, "job logs", NULL,
                              "INSERT INTO lanes_logs(rid, line) VALUES(?1, ?2)", "id", rid,
                              e->data, e->data_len);
    if (err == 0 && keep > 0)
        err = ln__sq_run_once(be, "job logs", NULL, TRIM_LOGS_SQL, "ii", rid, keep);
    else if (err == 0 && e->op == LN__EDIT_CLEAR_LOGS)
        err = ln__sq_run_once(be, "job logs", NULL, "DELETE FROM lanes_logs WHERE rid = ?1", "i",
                              rid);
    int64_t n = 0;
    if (err == 0 && e->op == LN__EDIT_ADD_LOG)
        err = ln__sq_run_once(be, "job logs", &n, "SELECT count(*) FROM lanes_logs WHERE rid = ?1",
                              "i", rid);
    e->count = (size_t)n;
    return err;
}

/* BullMQ's job.removeChildDependency() on the SQLite
 * backend (jobs_flows.h ln_jobs_remove_child_dependency): a pending child
 * leaves its parent's lanes_deps, the parent's deps count drops, and a
 * parent in waiting-children left with none is released as the delete of
 * its last pending child releases it (ln__sq_flow_release: ready, or
 * delayed by its own delay, with its event). Primary-key statements only,
 * inside the edit method's write transaction. */

#define DETACH_WHAT "remove child dependency"

static int edit_detach(sq_be *be, int64_t rid, int64_t now, ln__jobs_edit *e) {
    e->removed = 0;
    int64_t prid = 0, found = 0; /* rowids start at 1: 0 is no parent */
    int err =
        ln__sq_run_once(be, DETACH_WHAT, &prid,
                        "SELECT coalesce(parent_rid, 0) FROM lanes_jobs WHERE rid = ?1", "i", rid);
    if (err != 0 || prid == 0) return err;
    if ((err = ln__sq_run_once(be, DETACH_WHAT, &found, "SELECT 1 FROM lanes_jobs WHERE rid = ?1",
                               "i", prid)) != 0)
        return err;
    if (!found)
        return ln__jobs_be_err(&be->base, LN_ENOENT, "the parent of job '%s' no longer exists",
                               e->id);
    if ((err = ln__sq_run_once(be, DETACH_WHAT, &found,
                               "DELETE FROM lanes_deps WHERE parent_rid = ?1 AND child_rid = ?2 "
                               "AND status = 0 RETURNING 1",
                               "ii", prid, rid)) != 0 ||
        !found)
        return err; /* not pending: processed, failed, or never a dependency */
    if ((err = ln__sq_run_once(be, DETACH_WHAT, NULL,
                               "UPDATE lanes_jobs SET deps = deps - 1 WHERE rid = ?1", "i",
                               prid)) != 0 ||
        (err = ln__sq_flow_release(be, prid, 0, now)) != 0)
        return err;
    err = ln__sq_run_once(be, DETACH_WHAT, NULL,
                          "UPDATE lanes_jobs SET parent_rid = NULL, pflags = pflags & ?2 WHERE "
                          "rid = ?1",
                          "ii", rid, (int64_t)SQ_FLOW_PARENT);
    if (err == 0) e->removed = 1;
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
        return edit_logs(be, rid, e);
    case LN__EDIT_DETACH:
        return edit_detach(be, rid, now, e);
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

/* ---- Removing one job ---- */

/* Delete job rid (not active) and free the deduplication id it holds (any
 * TTL); *priority gets its priority. what names the caller in an error. */
int ln__sq_remove_row(sq_be *be, const char *queue, int64_t rid, int *priority, const char *what) {
    sqlite3_stmt *s = ln__sq_stmt_get(be, S_REMOVE_DEDUP);
    if (s == NULL) return LN_EBACKEND;
    sqlite3_bind_int64(s, 1, rid);
    BIND_TEXT(s, 2, queue);
    int err = ln__sq_run(be, s, what);
    if (err != 0) return err;
    if ((s = ln__sq_stmt_get(be, S_REMOVE)) == NULL) return LN_EBACKEND;
    sqlite3_bind_int64(s, 1, rid);
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        *priority = sqlite3_column_int(s, 0);
        rc = sqlite3_step(s);
    }
    sqlite3_reset(s);
    return rc == SQLITE_DONE ? 0 : ln__sq_err(be, rc, what);
}

const char *ln__sq_prev_name(int state, int priority) {
    static const char *const prev[] = {[ST_READY] = "waiting",
                                       [ST_DELAYED] = "delayed",
                                       [ST_COMPLETED] = "completed",
                                       [ST_FAILED] = "failed",
                                       [ST_WAITING_CHILDREN] = "waiting-children"};
    if (state == ST_READY && priority > 0) return "prioritized"; /* as the Redis store's */
    return state >= 0 && state <= ST_WAITING_CHILDREN && prev[state] ? prev[state] : "unknown";
}

static int remove_once(sq_be *be, const char *queue, const char *id) {
    int64_t now, rid;
    int state;
    int err = ln__sq_begin_write(be, &now);
    if (err != 0) return err;
    if ((err = ln__sq_find_job(be, queue, id, &rid, &state)) != 0) goto fail;
    if (state == ST_ACTIVE) {
        err = ln__jobs_be_err(&be->base, LN_EBUSY, "job '%s' is active; a worker holds it", id);
        goto fail;
    }
    int iteration = ln__sq_is_current_iteration(be, queue, id);
    if (iteration != 0) {
        err = iteration < 0 ? iteration
                            : ln__jobs_be_err(&be->base, LN_EBUSY,
                                              "job '%s' is its job scheduler's current iteration: "
                                              "remove the scheduler instead",
                                              id);
        goto fail;
    }
    int priority = 0;
    if ((err = ln__sq_remove_row(be, queue, rid, &priority, "remove")) != 0) goto fail;
    err = ln__sq_event(be, queue, "removed", id, "prev", ln__sq_prev_name(state, priority), NULL,
                       NULL, now);
    if (err != 0) goto fail;
    return ln__sq_commit(be);
fail:
    ln__sq_rollback(be);
    return err;
}

int ln__sq_remove(ln__jobs_be *b, const char *queue, const char *id) {
    sq_be *be = (sq_be *)b;
    ln__sq_room_begin(be);
    int err = remove_once(be, queue, id);
    if (ln__sq_retry_for_space(be, err, 1)) err = remove_once(be, queue, id);
    err = ln__sq_relieved(be, err);
    ln__sq_room_end(be);
    return err;
}

/* ---- Promoting one delayed job ---- */

/* delayed -> ready (waiting or prioritized by its priority, which the
 * counter key reads: the trigger of schema version 2 moves the count),
 * seq 0: the back of its line by the order jobs were added, whatever its
 * lifo option, as a promotion places every job on Redis. */
static int promote_row(sq_be *be, int64_t rid, int64_t now) {
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v2(
        be->db, "UPDATE lanes_jobs SET state = 0, seq = 0, run_at = ?2 WHERE rid = ?1", -1, &s,
        NULL);
    if (rc != SQLITE_OK) return ln__sq_err(be, rc, "promote");
    sqlite3_bind_int64(s, 1, rid);
    sqlite3_bind_int64(s, 2, now);
    rc = sqlite3_step(s);
    sqlite3_finalize(s);
    return rc == SQLITE_DONE ? 0 : ln__sq_err(be, rc, "promote");
}

int ln__sq_promote(ln__jobs_be *b, const char *queue, const char *id) {
    sq_be *be = (sq_be *)b;
    int64_t now, rid = 0;
    int state = -1;
    int err = ln__sq_begin_write(be, &now);
    if (err != 0) return err;
    err = ln__sq_find_job(be, queue, id, &rid, &state);
    if (err == 0 && state != ST_DELAYED)
        err = ln__jobs_be_err(&be->base, LN_EINVAL, "job '%s' is not delayed (it is %s)", id,
                              state == ST_READY ? "waiting" : ln_job_state_name(state));
    if (err == 0) err = promote_row(be, rid, now);
    if (err != 0) {
        ln__sq_rollback(be);
        return err;
    }
    return ln__sq_commit(be);
}
