/* edit.c - changing one stored job: the edit method (jobs_edit.h's calls
 * and ln_jobs_trim_events: a job's priority, delay, data and log lines, a
 * deduplication id's holder, a bounded promotion of delayed jobs, counts
 * per priority, trimming the events stream, detaching a pending child),
 * and removing and promoting one job. One transaction each.
 */
#include "pg_int.h"

#include "internal.h"

#include <stdio.h>
#include <string.h>

/* The job's state under a row lock (into st, 32 bytes); LN_ENOENT. */
static int job_state(pg_be *be, const char *queue, const char *id, char *st) {
    const char *p[2] = {queue, id};
    int rc;
    PGresult *r = ln__pg_q(
        be, "SELECT state::text FROM @job WHERE queue = $1 AND id = $2 FOR UPDATE", 2, p, &rc);
    if (r == NULL) return rc;
    if (PQntuples(r) == 0) {
        PQclear(r);
        return ln__jobs_be_err(&be->base, LN_ENOENT, "queue '%s' has no job '%s'", queue, id);
    }
    snprintf(st, 32, "%s", PQgetvalue(r, 0, 0));
    PQclear(r);
    return 0;
}

/* Ready jobs move in their new priority's line: LIFO to its front, else
 * to its back; in any other state only the priority is written, read when
 * the job is ready again. */
static int edit_priority(pg_be *be, const char *queue, ln__jobs_edit *e) {
    char prio[24];
    const char *p[4] = {queue, e->id, ln__pg_itoa(prio, e->priority), e->lifo ? "1" : "0"};
    return ln__pg_exec(be,
                       "UPDATE @job SET priority = $3::int, opts = CASE WHEN $3::int > 0 THEN "
                       "opts || jsonb_build_object('priority', $3::int) ELSE opts - 'priority' "
                       "END, seq = CASE WHEN state <> 'waiting' THEN seq WHEN $4::int = 1 THEN "
                       "-nextval('@job_seq'::regclass) ELSE nextval('@job_seq'::regclass) END "
                       "WHERE queue = $1 AND id = $2",
                       4, p);
}

static int edit_delay(pg_be *be, const char *queue, const char *st, ln__jobs_edit *e) {
    if (strcmp(st, "delayed") != 0)
        return ln__jobs_be_err(&be->base, LN_EINVAL, "job '%s' is not delayed (it is %s)", e->id,
                               st);
    char d[24];
    const char *p[3] = {queue, e->id, ln__pg_itoa(d, e->delay_ms)};
    return ln__pg_exec(be,
                       "WITH u AS (UPDATE @job SET process_at_ms = " PG_NOW " + $3::bigint "
                       "WHERE queue = $1 AND id = $2 RETURNING id, process_at_ms) "
                       "INSERT INTO @event (queue, event, data, created_at_ms) SELECT $1, "
                       "'delayed', jsonb_build_object('jobId', id, 'delay', process_at_ms), " PG_NOW
                       " FROM u",
                       3, p);
}

static int edit_logs(pg_be *be, const char *queue, ln__jobs_edit *e) {
    char keep[24];
    const char *p[4] = {
        queue, e->id, ln__pg_itoa(keep, e->max > INT64_MAX ? INT64_MAX : (int64_t)e->max), e->data};
    int rc = 0;
    if (e->op == LN__EDIT_ADD_LOG)
        rc = ln__pg_exec(be,
                         "INSERT INTO @job_log (queue, job_id, idx, row) SELECT $1, $2, "
                         "coalesce(max(idx) + 1, 0), $3 FROM @job_log WHERE queue = $1 AND "
                         "job_id = $2",
                         3, (const char *const[]){p[0], p[1], p[3]});
    if (rc == 0 && (e->max > 0 || e->op == LN__EDIT_CLEAR_LOGS))
        rc = ln__pg_exec(be,
                         "DELETE FROM @job_log WHERE queue = $1 AND job_id = $2 AND idx NOT IN "
                         "(SELECT idx FROM @job_log WHERE queue = $1 AND job_id = $2 ORDER BY idx "
                         "DESC LIMIT $3::bigint)",
                         3, p);
    e->count = 0;
    if (rc != 0 || e->op != LN__EDIT_ADD_LOG) return rc;
    PGresult *r =
        ln__pg_q(be, "SELECT count(*) FROM @job_log WHERE queue = $1 AND job_id = $2", 2, p, &rc);
    if (r == NULL) return rc;
    e->count = (size_t)ln__pg_i64(r, 0, 0);
    PQclear(r);
    return 0;
}

/* A pending child leaves its parent: the dependency row goes, the
 * parent's count drops and, at 0, a parent waiting for children is
 * released (flow.c). A parent that is gone: LN_ENOENT. */
static int edit_detach(pg_be *be, const char *queue, ln__jobs_edit *e) {
    const char *p[2] = {queue, e->id};
    int rc;
    PGresult *r = ln__pg_q(be,
                           "SELECT j.parent_queue, j.parent_id, EXISTS (SELECT 1 FROM @job x "
                           "WHERE x.queue = j.parent_queue AND x.id = j.parent_id) FROM @job j "
                           "WHERE j.queue = $1 AND j.id = $2 AND j.parent_id IS NOT NULL",
                           2, p, &rc);
    if (r == NULL) return rc;
    if (PQntuples(r) == 0) {
        PQclear(r);
        return 0;
    }
    char *pq = ln__strdup(PQgetvalue(r, 0, 0)), *pid = ln__strdup(PQgetvalue(r, 0, 1));
    int live = PQgetvalue(r, 0, 2)[0] == 't';
    PQclear(r);
    if (pq == NULL || pid == NULL) {
        rc = ln__pg_oom(be);
    } else if (!live) {
        rc = ln__jobs_be_err(&be->base, LN_ENOENT,
                             "missing key for parent job: queue '%s' has no job '%s'", pq, pid);
    } else {
        const char *q[4] = {pq, pid, queue, e->id};
        r = ln__pg_q(be,
                     "WITH d AS (DELETE FROM @job_dependency WHERE parent_queue = $1 AND "
                     "parent_id = $2 AND child_key = $3 || ':' || $4 AND status = 'pending' "
                     "RETURNING 1), c AS (UPDATE @job SET parent_queue = NULL, parent_id = NULL, "
                     "parent_key = NULL, opts = opts - 'parent' WHERE queue = $3 AND id = $4 AND "
                     "EXISTS (SELECT 1 FROM d)), u AS (UPDATE @job SET pending_deps = "
                     "greatest(coalesce(pending_deps, 1) - 1, 0) WHERE queue = $1 AND id = $2 "
                     "AND EXISTS (SELECT 1 FROM d)) SELECT count(*) FROM d",
                     4, q, &rc);
        if (r != NULL) {
            e->removed = ln__pg_i64(r, 0, 0) > 0;
            PQclear(r);
            if (e->removed) rc = ln__pg_flow_release(be, pq, pid, 0);
        }
    }
    ln__free(pq);
    ln__free(pid);
    return rc;
}

static int edit_job(pg_be *be, const char *queue, ln__jobs_edit *e) {
    char st[32];
    int rc = job_state(be, queue, e->id, st);
    if (rc != 0) return rc;
    switch (e->op) {
    case LN__EDIT_PRIORITY:
        return edit_priority(be, queue, e);
    case LN__EDIT_DELAY:
        return edit_delay(be, queue, st, e);
    case LN__EDIT_DATA: {
        const char *p[3] = {queue, e->id, e->data};
        return ln__pg_exec(be,
                           "UPDATE @job SET data = $3::text::jsonb, opts = " PG_RAW_SET(
                               "$3", "lanesData") " WHERE queue = $1 AND id = $2",
                           3, p);
    }
    case LN__EDIT_ADD_LOG:
    case LN__EDIT_CLEAR_LOGS:
        return edit_logs(be, queue, e);
    case LN__EDIT_DETACH:
        return edit_detach(be, queue, e);
    default:
        return ln__jobs_be_err(&be->base, LN_EINVAL, "unknown edit %d", e->op);
    }
}

/* The holder of a dedup id: a row whose expiry has not passed, or without
 * expiry whose job exists. */
static int edit_dedup(pg_be *be, const char *queue, ln__jobs_edit *e) {
    const char *p[2] = {queue, e->dedup_id};
    int rc;
    PGresult *r = ln__pg_q(
        be,
        "SELECT d.job_id FROM @dedup d WHERE d.queue = $1 AND d.dedup_id = $2 "
        "AND CASE WHEN d.expire_at_ms IS NULL THEN EXISTS (SELECT 1 FROM @job "
        "j WHERE j.queue = d.queue AND j.id = d.job_id) ELSE d.expire_at_ms > " PG_NOW " END",
        2, p, &rc);
    if (r == NULL) return rc;
    int held = PQntuples(r) > 0;
    if (e->op == LN__EDIT_DEDUP_GET) {
        int oom = 0;
        e->job_id = held ? ln__pg_dup(r, 0, 0, &oom) : NULL;
        PQclear(r);
        if (oom) return ln__pg_oom(be);
        return held ? 0
                    : ln__jobs_be_err(&be->base, LN_ENOENT,
                                      "queue '%s': no job holds dedup id '%s'", queue, e->dedup_id);
    }
    PQclear(r);
    e->removed = held;
    return ln__pg_exec(be, "DELETE FROM @dedup WHERE queue = $1 AND dedup_id = $2", 2, p);
}

static int promote_some(pg_be *be, const char *queue, ln__jobs_edit *e) {
    char max[24];
    const char *p[2] = {queue, ln__pg_itoa(max, (int64_t)e->max)};
    int rc;
    PGresult *r = ln__pg_q(
        be,
        "WITH c AS (SELECT queue, id FROM @job WHERE queue = $1 AND state = 'delayed' ORDER BY "
        "process_at_ms, seq LIMIT $2::bigint FOR UPDATE), "
        "u AS (UPDATE @job j SET state = 'waiting', delay_ms = 0, process_at_ms = NULL, "
        "seq = nextval('@job_seq'::regclass) FROM c WHERE j.queue = c.queue AND j.id = c.id "
        "RETURNING j.id, j.seq), "
        "ev AS (INSERT INTO @event (queue, event, data, created_at_ms) SELECT $1, 'waiting', "
        "jsonb_build_object('jobId', id, 'prev', 'delayed'), " PG_NOW " FROM u ORDER BY seq) "
        "SELECT count(*) FROM u",
        2, p, &rc);
    if (r == NULL) return rc;
    e->count = (size_t)ln__pg_i64(r, 0, 0);
    PQclear(r);
    return e->count > 0 ? ln__pg_notify_jobs(be, queue) : 0;
}

static int priority_counts(pg_be *be, const char *queue, ln__jobs_edit *e) {
    for (size_t i = 0; i < e->n; i++) {
        char prio[24];
        const char *p[2] = {queue, ln__pg_itoa(prio, e->priorities[i])};
        int rc;
        PGresult *r = ln__pg_q(be,
                               "SELECT count(*) FROM @job WHERE queue = $1 AND state = 'waiting' "
                               "AND priority = $2::int",
                               2, p, &rc);
        if (r == NULL) return rc;
        e->counts[i] = (uint64_t)ln__pg_i64(r, 0, 0);
        PQclear(r);
    }
    return 0;
}

static int trim_events(pg_be *be, const char *queue, ln__jobs_edit *e) {
    char max[24];
    const char *p[2] = {queue, ln__pg_itoa(max, e->max > INT64_MAX ? INT64_MAX : (int64_t)e->max)};
    int rc;
    PGresult *r =
        ln__pg_q(be,
                 "WITH d AS (DELETE FROM @event WHERE queue = $1 AND id NOT IN (SELECT id "
                 "FROM @event WHERE queue = $1 ORDER BY id DESC LIMIT $2::bigint) "
                 "RETURNING 1) SELECT count(*) FROM d",
                 2, p, &rc);
    if (r == NULL) return rc;
    e->count = (size_t)ln__pg_i64(r, 0, 0);
    PQclear(r);
    return 0;
}

int ln__pg_edit(ln__jobs_be *b, const char *queue, ln__jobs_edit *e) {
    pg_be *be = pgbe(b);
    int rc = ln__pg_begin(be);
    if (rc != 0) return rc;
    switch (e->op) {
    case LN__EDIT_DEDUP_GET:
    case LN__EDIT_DEDUP_REMOVE:
        rc = edit_dedup(be, queue, e);
        break;
    case LN__EDIT_PROMOTE_SOME:
        rc = promote_some(be, queue, e);
        break;
    case LN__EDIT_PRIORITY_COUNTS:
        rc = priority_counts(be, queue, e);
        break;
    case LN__EDIT_TRIM_EVENTS:
        rc = trim_events(be, queue, e);
        break;
    default:
        rc = edit_job(be, queue, e);
    }
    if (rc == 0) rc = ln__pg_commit(be);
    if (rc == 0) return 0;
    ln__free(e->job_id);
    e->job_id = NULL;
    return ln__pg_fail(be, rc);
}

/* ---- Remove and promote one job */

/* The job's state under a row lock (pg_int.h). */
int ln__pg_lock_job(pg_be *be, const char *queue, const char *id, char *st) {
    const char *p[2] = {queue, id};
    int rc;
    PGresult *r = ln__pg_q(be,
                           "SELECT state::text, scheduler_id IS NOT NULL AND EXISTS (SELECT 1 "
                           "FROM @scheduler s WHERE s.queue = j.queue AND s.scheduler_id = "
                           "j.scheduler_id AND 'repeat:' || s.scheduler_id || ':' || "
                           "s.next_run_ms = j.id) FROM @job j WHERE queue = $1 AND id = $2 FOR "
                           "UPDATE",
                           2, p, &rc);
    if (r == NULL) return rc;
    if (PQntuples(r) == 0) {
        PQclear(r);
        return ln__jobs_be_err(&be->base, LN_ENOENT, "queue '%s' has no job '%s'", queue, id);
    }
    snprintf(st, 32, "%s", PQgetvalue(r, 0, 0));
    if (PQgetvalue(r, 0, 1)[0] == 't') strcat(st, "+");
    PQclear(r);
    return 0;
}

static int remove_tx(pg_be *be, const char *queue, const char *id) {
    char st[32];
    int rc = ln__pg_lock_job(be, queue, id, st);
    if (rc != 0) return rc;
    if (strncmp(st, "active", 6) == 0)
        return ln__jobs_be_err(&be->base, LN_EBUSY, "job '%s' is active", id);
    size_t len = strlen(st);
    if (len > 0 && st[len - 1] == '+')
        return ln__jobs_be_err(&be->base, LN_EBUSY,
                               "job '%s' is its job scheduler's current iteration: remove the "
                               "scheduler instead",
                               id);
    if (len > 0 && st[len - 1] == '+') st[len - 1] = '\0';
    const char *p[3] = {queue, id, st};
    rc = ln__pg_dedup_drop_next(be, queue, id);
    if (rc == 0) rc = ln__pg_exec(be, "DELETE FROM @job WHERE queue = $1 AND id = $2", 2, p);
    if (rc == 0) rc = ln__pg_exec(be, "DELETE FROM @dedup WHERE queue = $1 AND job_id = $2", 2, p);
    if (rc == 0) rc = ln__pg_flow_gone(be, queue, 0);
    if (rc == 0)
        rc = ln__pg_exec(
            be,
            "INSERT INTO @event (queue, event, data, created_at_ms) VALUES ($1, "
            "'removed', jsonb_build_object('jobId', $2::text, 'prev', $3::text), " PG_NOW ")",
            3, p);
    return rc;
}

int ln__pg_remove(ln__jobs_be *b, const char *queue, const char *id) {
    pg_be *be = pgbe(b);
    int rc = ln__pg_begin(be);
    if (rc == 0) rc = remove_tx(be, queue, id);
    if (rc == 0) rc = ln__pg_commit(be);
    return rc == 0 ? 0 : ln__pg_fail(be, rc);
}

int ln__pg_promote(ln__jobs_be *b, const char *queue, const char *id) {
    pg_be *be = pgbe(b);
    char st[32];
    int rc = ln__pg_begin(be);
    if (rc == 0) rc = ln__pg_lock_job(be, queue, id, st);
    if (rc == 0 && strncmp(st, "delayed", 7) != 0) {
        if (strchr(st, '+')) *strchr(st, '+') = '\0';
        rc = ln__jobs_be_err(b, LN_EINVAL, "job '%s' is %s, not delayed", id, st);
    }
    const char *p[2] = {queue, id};
    if (rc == 0)
        rc = ln__pg_exec(be,
                         "WITH u AS (UPDATE @job SET state = 'waiting', delay_ms = 0, "
                         "process_at_ms = NULL, seq = nextval('@job_seq'::regclass) "
                         "WHERE queue = $1 AND id = $2 RETURNING id) "
                         "INSERT INTO @event (queue, event, data, created_at_ms) SELECT $1, "
                         "'waiting', jsonb_build_object('jobId', id, 'prev', 'delayed'), " PG_NOW
                         " FROM u",
                         2, p);
    if (rc == 0) rc = ln__pg_notify_jobs(be, queue);
    if (rc == 0) rc = ln__pg_commit(be);
    return rc == 0 ? 0 : ln__pg_fail(be, rc);
}
