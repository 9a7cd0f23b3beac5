/* retry.c - the SQLite store: finished jobs back to waiting by hand
 * (backend.h's retry: ln_jobs_retry_finished, one step of
 * ln_jobs_retry_all_finished), as BullMQ's job.retry(state) with
 * resetAttemptsMade and queue.retryJobs. */
#include "sqlite_int.h"

#include "internal.h"

#include <string.h>

#define BIND_TEXT(s, i, v) sqlite3_bind_text((s), (i), (v), -1, SQLITE_STATIC)

/* retry_once's "the job is in another state" (not an LN_E* code: the
 * caller words it after the rollback, by the job's public state). */
#define LN__SQ_NOT_IN_STATE 1

/* Child rid's row in its parent's dependencies is pending again
 * (S_RETRY_DEPS*: the parent's deps first, while the row still says
 * whether it counted). A job without a parent changes nothing. */
static int retry_deps(sq_be *be, int64_t rid) {
    const sq_stmt ids[2] = {S_RETRY_DEPS_INC, S_RETRY_DEPS};
    for (int i = 0; i < 2; i++) {
        sqlite3_stmt *s = ln__sq_stmt_get(be, ids[i]);
        if (s == NULL) return LN_EBACKEND;
        sqlite3_bind_int64(s, 1, rid);
        int err = ln__sq_run(be, s, "retry (flow)");
        if (err != 0) return err;
    }
    return 0;
}

/* Job rid (public id id), found in state st: its 'waiting' event, its
 * parent's dependency, then the row back in line. In the write
 * transaction. */
static int retry_row(sq_be *be, const char *queue, int64_t rid, const char *id, int st,
                     int64_t now) {
    const char *prev = st == ST_COMPLETED ? "completed" : "failed";
    int err = ln__sq_event(be, queue, "waiting", id, "prev", prev, NULL, NULL, now);
    if (err == 0) err = retry_deps(be, rid);
    if (err != 0) return err;
    sqlite3_stmt *s = ln__sq_stmt_get(be, S_RETRY_ONE);
    if (s == NULL) return LN_EBACKEND;
    sqlite3_bind_int64(s, 1, rid);
    sqlite3_bind_int64(s, 2, now);
    sqlite3_bind_int(s, 3, st);
    return ln__sq_run(be, s, "retry");
}

/* The picked rows of one step: their rids and public ids (ln__malloc'd). */
typedef struct picked {
    int64_t rid[LN__RETRY_STEP];
    char *id[LN__RETRY_STEP];
    size_t n;
} picked;

/* Up to LN__RETRY_STEP jobs of queue in state st finished at or before
 * bound, oldest first, read before any of them moves. */
static int pick(sq_be *be, const char *queue, int st, int64_t bound, picked *p) {
    sqlite3_stmt *s = ln__sq_stmt_get(be, st == ST_COMPLETED ? S_RETRY_PICK_C : S_RETRY_PICK_F);
    if (s == NULL) return LN_EBACKEND;
    BIND_TEXT(s, 1, queue);
    sqlite3_bind_int64(s, 2, bound);
    sqlite3_bind_int(s, 3, LN__RETRY_STEP);
    int rc, err = 0;
    while (err == 0 && (rc = sqlite3_step(s)) == SQLITE_ROW) {
        LN_ASSERT(p->n < LN__RETRY_STEP);
        p->rid[p->n] = sqlite3_column_int64(s, 0);
        p->id[p->n] = ln__strdup((const char *)sqlite3_column_text(s, 1));
        if (p->id[p->n] == NULL) err = LN_ENOMEM;
        p->n += err == 0;
    }
    if (err == 0 && rc != SQLITE_DONE) err = ln__sq_err(be, rc, "retry (pick)");
    sqlite3_reset(s);
    return err;
}

static int retry_once(sq_be *be, const char *queue, const char *id, int st, int64_t *before_ms,
                      picked *p, size_t *count) {
    int64_t now, rid = 0;
    int state = -1;
    *count = 0;
    int err = ln__sq_begin_write(be, &now);
    if (err != 0) return err;
    if (id != NULL) {
        if ((err = ln__sq_find_job(be, queue, id, &rid, &state)) == 0 && state != st)
            err = LN__SQ_NOT_IN_STATE;
        if (err == 0 && (err = retry_row(be, queue, rid, id, st, now)) == 0) *count = 1;
    } else {
        if (*before_ms < 0) *before_ms = now;
        err = pick(be, queue, st, *before_ms, p);
        for (size_t i = 0; err == 0 && i < p->n; i++)
            err = retry_row(be, queue, p->rid[i], p->id[i], st, now);
        if (err == 0) *count = p->n;
    }
    for (size_t i = 0; i < p->n; i++) ln__free(p->id[i]);
    p->n = 0;
    if (err != 0) {
        ln__sq_rollback(be);
        *count = 0;
        return err;
    }
    return ln__sq_commit(be);
}

int ln__sq_retry(ln__jobs_be *b, const char *queue, const char *id, int state, int64_t *before_ms,
                 size_t *count) {
    sq_be *be = (sq_be *)b;
    int st = state == LN_JOB_COMPLETED ? ST_COMPLETED : ST_FAILED;
    picked *p = ln__malloc(sizeof *p);
    if (p == NULL) return ln__jobs_be_err(b, LN_ENOMEM, "out of memory");
    p->n = 0;
    int err = retry_once(be, queue, id, st, before_ms, p, count);
    if (ln__sq_retry_for_space(be, err, 0))
        err = retry_once(be, queue, id, st, before_ms, p, count);
    ln__free(p);
    if (err == LN__SQ_NOT_IN_STATE) {
        ln_job_info info = {0};
        int rc = ln__sq_get(b, queue, id, &info);
        const char *now = rc ? "not in that state" : ln_job_state_name(info.state);
        err = ln__jobs_be_err(b, LN_EINVAL, "job '%s' is %s, not %s", id, now,
                              ln_job_state_name(state));
        ln_job_info_clear(&info);
    }
    return ln__sq_relieved(be, err);
}
