/* view.c - reading jobs: one job (get), counts per state, pages of a
 * state's listing by offset (list) and by cursor (list_after), a job's
 * log lines, whether a queue has work left (pending).
 *
 * DESIGN
 * States as BullMQ stores them (docs/internals/postgres.md "States"):
 * waiting with priority 0 is lanes' waiting, with a priority prioritized;
 * both read as paused while meta.paused is set. A listing's order is its
 * state's index: (priority, seq) for ready jobs, process_at_ms for
 * delayed, locked_until_ms for active, finished_at_ms newest first for
 * completed and failed, seq for waiting-children; seq, unique per job
 * (the global job_seq), breaks ties. A cursor is "p<state>.<k1>.<seq>",
 * the row's key: the next page is one index range scan from it.
 */
#include "pg_int.h"

#include "internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ln__pg_backoff_kind(const char *type) {
    if (type == NULL || strcmp(type, "fixed") == 0) return LN_BACKOFF_FIXED;
    if (strcmp(type, "exponential") == 0) return LN_BACKOFF_EXPONENTIAL;
    return LN_BACKOFF_CUSTOM;
}

static int state_of(const char *s, int priority, int paused) {
    if (strcmp(s, "waiting") == 0)
        return paused ? LN_JOB_PAUSED : priority > 0 ? LN_JOB_PRIORITIZED : LN_JOB_WAITING;
    if (strcmp(s, "active") == 0) return LN_JOB_ACTIVE;
    if (strcmp(s, "delayed") == 0) return LN_JOB_DELAYED;
    if (strcmp(s, "completed") == 0) return LN_JOB_COMPLETED;
    if (strcmp(s, "failed") == 0) return LN_JOB_FAILED;
    return LN_JOB_WAITING_CHILDREN;
}

int ln__pg_job_info(pg_be *be, const PGresult *r, int row, int paused, ln_job_info *info) {
    int oom = 0;
    memset(info, 0, sizeof *info);
    info->id = ln__pg_dup(r, row, 0, &oom);
    info->priority = (int)ln__pg_i64(r, row, 9);
    info->state = state_of(PQgetvalue(r, row, 1), info->priority, paused);
    info->name = ln__pg_dup(r, row, 2, &oom);
    info->data = ln__pg_dup(r, row, 3, &oom);
    info->result = ln__pg_dup(r, row, 4, &oom);
    info->failed_reason = ln__pg_dup(r, row, 5, &oom);
    info->progress = ln__pg_dup(r, row, 6, &oom);
    info->traceparent = ln__pg_dup(r, row, 7, &oom);
    info->tracestate = ln__pg_dup(r, row, 8, &oom);
    info->lifo = (int)ln__pg_i64(r, row, 10);
    info->attempts = (int)ln__pg_i64(r, row, 11);
    info->attempts_made = (int)ln__pg_i64(r, row, 12);
    info->attempts_started = (int)ln__pg_i64(r, row, 13);
    info->stalled = (int)ln__pg_i64(r, row, 14);
    const char *bt = PQgetisnull(r, row, 15) ? NULL : PQgetvalue(r, row, 15);
    info->backoff = ln__pg_backoff_kind(bt);
    if (info->backoff == LN_BACKOFF_CUSTOM) info->backoff_type = ln__pg_dup(r, row, 15, &oom);
    info->backoff_ms = ln__pg_i64(r, row, 16);
    double j = PQgetisnull(r, row, 17) ? 0 : strtod(PQgetvalue(r, row, 17), NULL);
    info->backoff_jitter = j < 0 ? 0 : j > 1 ? 1 : j;
    info->created_ms = ln__pg_i64(r, row, 18);
    info->run_at_ms = ln__pg_i64(r, row, 19);
    info->started_ms = ln__pg_i64(r, row, 20);
    info->finished_ms = ln__pg_i64(r, row, 21);
    if (info->id == NULL || oom) {
        ln_job_info_clear(info);
        return ln__pg_oom(be);
    }
    return 0;
}

int ln__pg_paused(pg_be *be, const char *queue) {
    const char *p[1] = {queue};
    int rc;
    PGresult *r =
        ln__pg_q(be, "SELECT 1 FROM @meta WHERE queue = $1 AND field = 'paused'", 1, p, &rc);
    if (r == NULL) return rc;
    int paused = PQntuples(r) > 0;
    PQclear(r);
    return paused;
}

int ln__pg_get(ln__jobs_be *b, const char *queue, const char *id, ln_job_info *info) {
    pg_be *be = pgbe(b);
    const char *p[2] = {queue, id};
    int rc;
    PGresult *r = ln__pg_q(be,
                           "SELECT " PG_JOB_COLS ", EXISTS (SELECT 1 FROM @meta m WHERE "
                           "m.queue = $1 AND m.field = 'paused') FROM @job j "
                           "WHERE j.queue = $1 AND j.id = $2",
                           2, p, &rc);
    if (r == NULL) return rc;
    if (PQntuples(r) == 0) {
        PQclear(r);
        return ln__jobs_be_err(b, LN_ENOENT, "queue '%s' has no job '%s'", queue, id);
    }
    rc = ln__pg_job_info(be, r, 0, PQgetvalue(r, 0, PG_JOB_NCOLS)[0] == 't', info);
    PQclear(r);
    return rc;
}

int ln__pg_counts(ln__jobs_be *b, const char *queue, ln_job_counts *c) {
    pg_be *be = pgbe(b);
    const char *p[1] = {queue};
    int rc;
    PGresult *r = ln__pg_q(
        be,
        "SELECT count(*) FILTER (WHERE state = 'waiting' AND priority = 0), "
        "count(*) FILTER (WHERE state = 'delayed'), "
        "count(*) FILTER (WHERE state = 'waiting' AND priority > 0), "
        "count(*) FILTER (WHERE state = 'active'), count(*) FILTER (WHERE state = 'completed'), "
        "count(*) FILTER (WHERE state = 'failed'), "
        "count(*) FILTER (WHERE state = 'waiting-children'), "
        "EXISTS (SELECT 1 FROM @meta WHERE queue = $1 AND field = 'paused') "
        "FROM @job WHERE queue = $1",
        1, p, &rc);
    if (r == NULL) return rc;
    memset(c, 0, sizeof *c);
    c->waiting = (uint64_t)ln__pg_i64(r, 0, 0);
    c->delayed = (uint64_t)ln__pg_i64(r, 0, 1);
    c->prioritized = (uint64_t)ln__pg_i64(r, 0, 2);
    c->active = (uint64_t)ln__pg_i64(r, 0, 3);
    c->completed = (uint64_t)ln__pg_i64(r, 0, 4);
    c->failed = (uint64_t)ln__pg_i64(r, 0, 5);
    c->waiting_children = (uint64_t)ln__pg_i64(r, 0, 6);
    if (PQgetvalue(r, 0, 7)[0] == 't') {
        c->paused = c->waiting + c->prioritized;
        c->waiting = c->prioritized = 0;
    }
    PQclear(r);
    return 0;
}

int ln__pg_pending(ln__jobs_be *b, const char *queue, int *pending) {
    pg_be *be = pgbe(b);
    const char *p[1] = {queue};
    int rc;
    PGresult *r = ln__pg_q(be,
                           "SELECT EXISTS (SELECT 1 FROM @job WHERE queue = $1 AND state IN "
                           "('waiting', 'delayed', 'active'))",
                           1, p, &rc);
    if (r == NULL) return rc;
    *pending = PQgetvalue(r, 0, 0)[0] == 't';
    PQclear(r);
    return 0;
}

int ln__pg_logs(ln__jobs_be *b, const char *queue, const char *id, char ***lines, size_t *n) {
    pg_be *be = pgbe(b);
    *lines = NULL;
    *n = 0;
    const char *p[2] = {queue, id};
    int rc;
    PGresult *r = ln__pg_q(be,
                           "SELECT l.row FROM @job j LEFT JOIN @job_log l ON l.queue = j.queue "
                           "AND l.job_id = j.id WHERE j.queue = $1 AND j.id = $2 ORDER BY l.idx",
                           2, p, &rc);
    if (r == NULL) return rc;
    int rows = PQntuples(r);
    if (rows == 0) {
        PQclear(r);
        return ln__jobs_be_err(b, LN_ENOENT, "queue '%s' has no job '%s'", queue, id);
    }
    if (rows == 1 && PQgetisnull(r, 0, 0)) rows = 0; /* no line */
    char **arr = rows > 0 ? ln__calloc((size_t)rows, sizeof *arr) : NULL;
    int oom = rows > 0 && arr == NULL;
    for (int i = 0; !oom && i < rows; i++) arr[i] = ln__pg_dup(r, i, 0, &oom);
    PQclear(r);
    if (oom) {
        ln_jobs_free_lines(arr, (size_t)rows);
        return ln__pg_oom(be);
    }
    *lines = arr;
    *n = (size_t)rows;
    return 0;
}

/* ---- Listings */

typedef struct page_spec {
    const char *where; /* over j, after "j.queue = $1 AND " */
    const char *k1;    /* the first ordering key */
    int desc;          /* newest first */
} page_spec;

static const page_spec specs[LN_JOB_NSTATES] = {
    [LN_JOB_WAITING] = {"j.state = 'waiting' AND j.priority = 0", "j.priority", 0},
    [LN_JOB_PRIORITIZED] = {"j.state = 'waiting' AND j.priority > 0", "j.priority", 0},
    [LN_JOB_PAUSED] = {"j.state = 'waiting'", "j.priority", 0},
    [LN_JOB_DELAYED] = {"j.state = 'delayed'", "j.process_at_ms", 0},
    [LN_JOB_ACTIVE] = {"j.state = 'active'", "j.locked_until_ms", 0},
    [LN_JOB_COMPLETED] = {"j.state = 'completed'", "j.finished_at_ms", 1},
    [LN_JOB_FAILED] = {"j.state = 'failed'", "j.finished_at_ms", 1},
    [LN_JOB_WAITING_CHILDREN] = {"j.state = 'waiting-children'", "0::bigint", 0},
};

static int parse_cursor(pg_be *be, const char *after, int state, char *k1, char *k2) {
    int st = -1, used = 0;
    long long a, c;
    if (sscanf(after, "p%d.%lld.%lld%n", &st, &a, &c, &used) != 3 || after[used] != '\0' ||
        after[0] != 'p')
        return ln__jobs_be_err(&be->base, LN_EINVAL,
                               "bad cursor '%.64s' (give the cursor of a row a listing of this "
                               "PostgreSQL store returned)",
                               after);
    if (st != state)
        return ln__jobs_be_err(&be->base, LN_EINVAL,
                               "cursor '%.64s' is from a listing of state %s, not %s", after,
                               ln_job_state_name(st), ln_job_state_name(state));
    ln__pg_itoa(k1, a);
    ln__pg_itoa(k2, c);
    return 0;
}

static int read_rows(pg_be *be, PGresult *r, int state, int paused, ln_job_info **out, size_t *n) {
    int rows = PQntuples(r);
    if (rows == 0) return 0;
    ln_job_info *arr = ln__calloc((size_t)rows, sizeof *arr);
    if (arr == NULL) return ln__pg_oom(be);
    for (int i = 0; i < rows; i++) {
        int err = ln__pg_job_info(be, r, i, paused, &arr[i]);
        char buf[96];
        if (err == 0) {
            snprintf(buf, sizeof buf, "p%d.%" PRId64 ".%" PRId64, state,
                     ln__pg_i64(r, i, PG_JOB_NCOLS), ln__pg_i64(r, i, PG_JOB_NCOLS - 1));
            if ((arr[i].cursor = ln__strdup(buf)) == NULL) err = ln__pg_oom(be);
        }
        if (err != 0) {
            ln_job_info_free_array(arr, (size_t)i + 1);
            return err;
        }
    }
    *out = arr;
    *n = (size_t)rows;
    return 0;
}

static int page(pg_be *be, const char *queue, int state, size_t offset, const char *after,
                size_t limit, ln_job_info **out, size_t *n) {
    *out = NULL;
    *n = 0;
    if (state < 0 || state >= LN_JOB_NSTATES)
        return ln__jobs_be_err(&be->base, LN_EINVAL, "unknown state %d", state);
    char k1[24] = "0", k2[24] = "0", lim[24], off[24];
    int err = after != NULL ? parse_cursor(be, after, state, k1, k2) : 0;
    if (err != 0) return err;
    const page_spec *s = &specs[state];
    err = ln__pg_exec(be, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", 0, NULL);
    int paused = err == 0 ? ln__pg_paused(be, queue) : err;
    if (paused < 0) return ln__pg_fail(be, paused);
    int ready = state == LN_JOB_WAITING || state == LN_JOB_PRIORITIZED;
    if ((state == LN_JOB_PAUSED && !paused) || (ready && paused)) return ln__pg_commit(be);
    char sql[4096];
    const char *dir = s->desc ? "DESC" : "";
    snprintf(sql, sizeof sql,
             "SELECT " PG_JOB_COLS ", %s FROM @job j WHERE j.queue = $1 AND %s%s%s%s "
             "ORDER BY %s %s, j.seq %s LIMIT $2 OFFSET $3",
             s->k1, s->where, after != NULL ? " AND (" : "", after != NULL ? s->k1 : "",
             after == NULL ? ""
             : s->desc     ? ", j.seq) < ($4::bigint, $5::bigint)"
                           : ", j.seq) > ($4::bigint, $5::bigint)",
             s->k1, dir, dir);
    const char *p[5] = {queue, ln__pg_itoa(lim, (int64_t)limit),
                        ln__pg_itoa(off, after != NULL ? 0 : (int64_t)offset), k1, k2};
    PGresult *r = ln__pg_q(be, sql, after != NULL ? 5 : 3, p, &err);
    if (r == NULL) return ln__pg_fail(be, err);
    err = read_rows(be, r, state, paused, out, n);
    PQclear(r);
    ln__pg_commit(be);
    return err;
}

int ln__pg_list(ln__jobs_be *b, const char *queue, int state, size_t offset, size_t limit,
                ln_job_info **out, size_t *n) {
    return page(pgbe(b), queue, state, offset, NULL, limit, out, n);
}

int ln__pg_list_after(ln__jobs_be *b, const char *queue, int state, const char *after, size_t limit,
                      ln_job_info **out, size_t *n) {
    return page(pgbe(b), queue, state, 0, after, limit, out, n);
}
