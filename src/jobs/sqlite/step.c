/* step.c - the SQLite store: the worker's round trip (the step method),
 * one write transaction, in this file in the order it runs:
 *   0. idle_check   nothing to record or renew: one read without the lock
 *                   says whether there is work (none: next_due, done)
 *   1. begin        BEGIN IMMEDIATE and the store clock (store.c)
 *   2. record       each outcome of st->done (record_one), then the
 *                   counters of the completions and the metrics
 *   3. renew        the leases of st->renew
 *   4. take         the rate limits (limit.c), due delayed jobs promoted,
 *                   up to want jobs taken in run order, their schedulers'
 *                   next iterations (sched.c), events and counters
 *   5. after        when the take fell short: next_due, 'drained'
 *   6. commit       (store.c: keep-last's due next jobs, dedup_next.c)
 * The hooks it calls elsewhere: a flow child's parent (flow.c), the
 * limits (limit.c), the backoff columns (backoff.c), events (events.c),
 * metrics (metrics.c). After the step: progress, log lines and pending,
 * the other calls of a worker on a job it holds (stalled.c has stalled
 * recovery and release).
 *
 * A lease token is the job's 'token' column, incremented by every take and
 * by stalled recovery, so a token is never handed out twice for one job and
 * every fenced statement is "... WHERE rid = ? AND token = ? AND state =
 * active": a stale holder's write changes no row and reports LN_ESTALE.
 *
 * Every write here may use the disk-space reserve (reserve.c): out of
 * space, it frees the reserve and runs once more. */
#include "sqlite_int.h"

#include "internal.h"

#include <stdio.h>
#include <string.h>

/* A finished job's retention (remove_on_complete / remove_on_fail); the
 * cancel, the stalled check and a flow's failed parent use it too. */
int ln__sq_apply_keep(sq_be *be, const char *queue, int64_t rid, int state, int mode, int64_t value,
                      int64_t now_ms, int64_t uncounted) {
    int done = state == ST_COMPLETED;
    sqlite3_stmt *s;
    switch (mode) {
    case LN_KEEP_NONE:
        if ((s = ln__sq_stmt_get(be, S_DELETE_RID)) == NULL) return LN_EBACKEND;
        sqlite3_bind_int64(s, 1, rid);
        break;
    case LN_KEEP_COUNT:
        s = ln__sq_stmt_get(be, done ? S_TRIM_COUNT_C : S_TRIM_COUNT_F);
        if (s == NULL) return LN_EBACKEND;
        sqlite3_bind_text(s, 1, queue, -1, SQLITE_STATIC);
        sqlite3_bind_int64(s, 2, value);
        sqlite3_bind_int64(s, 3, uncounted);
        break;
    case LN_KEEP_AGE:
        s = ln__sq_stmt_get(be, done ? S_TRIM_AGE_C : S_TRIM_AGE_F);
        if (s == NULL) return LN_EBACKEND;
        sqlite3_bind_text(s, 1, queue, -1, SQLITE_STATIC);
        sqlite3_bind_int64(s, 2, now_ms - value);
        break;
    default:
        return 0; /* LN_KEEP_ALL */
    }
    return ln__sq_run(be, s, "retention");
}

/* ---- 0. Before the lock ---- */

/* ms until the earliest delayed job of queue is due (0 if due), -1 if none. */
static int next_due(sq_be *be, const char *queue, int64_t now, int64_t *out) {
    sqlite3_stmt *s = ln__sq_stmt_get(be, S_NEXT_DUE);
    if (s == NULL) return LN_EBACKEND;
    sqlite3_bind_text(s, 1, queue, -1, SQLITE_STATIC);
    sqlite3_bind_int64(s, 2, now);
    int rc = sqlite3_step(s);
    if (rc != SQLITE_ROW) {
        int err = ln__sq_err(be, rc, "next due");
        sqlite3_reset(s);
        return err;
    }
    if (sqlite3_column_type(s, 0) == SQLITE_NULL) {
        *out = -1;
    } else {
        int64_t d = sqlite3_column_int64(s, 0);
        *out = d < 0 ? 0 : d;
    }
    sqlite3_reset(s);
    return 0;
}

/* Without outcomes to record, look before locking: an idle poll then costs
 * one read (no write lock, so it never delays producers or other workers). */
static int idle_check(sq_be *be, const char *queue, ln__jobs_step *st, int *has_work) {
    sqlite3_stmt *s = ln__sq_stmt_get(be, S_HAS_WORK);
    if (s == NULL) return LN_EBACKEND;
    sqlite3_bind_text(s, 1, queue, -1, SQLITE_STATIC);
    int rc = sqlite3_step(s);
    int err = rc == SQLITE_ROW ? 0 : ln__sq_err(be, rc, "poll");
    *has_work = rc == SQLITE_ROW && sqlite3_column_int(s, 0) != 0;
    sqlite3_reset(s);
    if (err != 0 || *has_work) return err;
    if ((s = ln__sq_stmt_get(be, S_NOW)) == NULL) return LN_EBACKEND;
    rc = sqlite3_step(s);
    int64_t now = sqlite3_column_int64(s, 0);
    sqlite3_reset(s);
    if (rc != SQLITE_ROW) return ln__sq_err(be, rc, "clock");
    return next_due(be, queue, now, &st->next_due_ms);
}

/* ---- 2. Record the outcomes ---- */

/* A retried run's event: delayed (with its due time) or waiting. */
static int retry_event(sq_be *be, const char *queue, const ln__job_done *d, int64_t now) {
    if (d->delay_ms <= 0)
        return ln__sq_event(be, queue, "waiting", d->ref.id, "prev", "failed", NULL, NULL, now);
    char due[24];
    snprintf(due, sizeof due, "%lld", (long long)(now + d->delay_ms));
    return ln__sq_event(be, queue, "delayed", d->ref.id, "delay", due, NULL, NULL, now);
}

/* A retried or delayed run back to delayed or waiting. */
static int record_rerun(sq_be *be, const char *queue, ln__job_done *d, int64_t now) {
    int retry = d->kind == LN__DONE_RETRY;
    sqlite3_stmt *s = ln__sq_stmt_get(be, retry ? S_RETRY_RUN : S_DELAY_RUN);
    if (s == NULL) return LN_EBACKEND;
    ln__sq_bind_ref(s, &d->ref);
    if (retry) {
        sqlite3_bind_int64(s, 3, now);
        sqlite3_bind_int64(s, 4, d->delay_ms);
        sqlite3_bind_text(s, 5, d->reason, -1, SQLITE_STATIC);
    } else {
        sqlite3_bind_int64(s, 3, d->run_at_ms);
    }
    int err = ln__sq_run(be, s, retry ? "retry" : "delay");
    if (err != 0) return err;
    d->rc = sqlite3_changes(be->db) == 1 ? 0 : LN_ESTALE;
    return d->rc != 0 ? 0 : retry_event(be, queue, d, now);
}

/* A completion or a failure: the row to completed / failed, its flow
 * parent, its event, its retention. d->rc = LN_ESTALE if the lease is
 * gone, LN__DONE_PENDING_DEPS if children refuse a completion (unchanged);
 * a failed child turns the completion into the final failure. A
 * completion adds 1 to *completed, which the caller counts (sqlite_int.h). */
static int record_finish(sq_be *be, const char *queue, ln__job_done *d, ln__jobs_step *st,
                         int64_t now, int64_t *completed) {
    int complete = d->kind == LN__DONE_COMPLETE;
    sqlite3_stmt *s = ln__sq_stmt_get(be, complete ? S_COMPLETE : S_FAIL);
    if (s == NULL) return LN_EBACKEND;
    ln__sq_bind_ref(s, &d->ref);
    sqlite3_bind_int64(s, 3, now);
    const char *text = complete ? d->result : d->reason;
    if (text != NULL) sqlite3_bind_text(s, 4, text, -1, SQLITE_STATIC);
    int rc = sqlite3_step(s);
    if (rc == SQLITE_DONE) { /* no row: the token is stale, or a parent refuses */
        sqlite3_reset(s);
        d->rc = LN_ESTALE;
        ln__job_done alt = *d;
        if (!complete) return 0;
        size_t size = strlen(d->ref.id) + 96; /* the reason holds the whole id */
        char *why = ln__malloc(size);
        if (why == NULL) return ln__jobs_be_err(&be->base, LN_ENOMEM, "out of memory");
        int err = ln__sq_flow_refused(be, &alt, why, size); /* flow.c */
        if (err == 2) { /* pending children: still held, the worker fails it */
            d->rc = LN__DONE_PENDING_DEPS;
            err = 0;
        } else if (err > 0) { /* a failed child: the final failure instead */
            err = record_finish(be, queue, &alt, st, now, completed);
            d->rc = alt.rc;
        }
        ln__free(why);
        return err;
    }
    if (rc != SQLITE_ROW) {
        int err = ln__sq_err(be, rc, complete ? "complete" : "fail");
        sqlite3_reset(s);
        return err;
    }
    int mode = sqlite3_column_int(s, 0);
    int64_t value = sqlite3_column_int64(s, 1);
    if (mode == LN_KEEP_ALL) { /* not set: the worker's (jobs.h ln_worker_opts) */
        const ln_job_keep *k = complete ? &st->keep_complete : &st->keep_fail;
        mode = k->mode;
        value = k->value;
    }
    int64_t prid = sqlite3_column_int64(s, 2); /* a flow child's parent, else 0 */
    int pflags = sqlite3_column_int(s, 3);
    int err = ln__sq_run(be, s, "finish"); /* drain and reset */
    ln__sq_wkeep wk = {queue, st->keep_fail};
    if (err == 0 && prid > 0) /* flow.c */
        err = ln__sq_flow_child_done(be, queue, d->ref.id, (int64_t)d->ref.key, prid, pflags,
                                     complete, text, now, &wk);
    if (err == 0)
        err = complete ? ln__sq_event(be, queue, "completed", d->ref.id, "returnvalue",
                                      text != NULL ? text : "null", "prev", "active", now)
                       : ln__sq_event(be, queue, "failed", d->ref.id, "failedReason",
                                      text != NULL ? text : "failed", "prev", "active", now);
    if (err != 0) return err;
    d->rc = 0;
    *completed += complete;
    /* Failures are counted by trigger at once; completions of this step
     * are added to lanes_counts by the caller afterwards (sqlite_int.h). */
    return ln__sq_apply_keep(be, queue, (int64_t)d->ref.key, complete ? ST_COMPLETED : ST_FAILED,
                             mode, value, now, complete ? *completed : 0);
}

/* Record one outcome (d->rc set): a rate-limited run back to its queue
 * (limit.c), a retried or delayed run, or a completion or failure. */
static int record_one(sq_be *be, const char *queue, ln__job_done *d, ln__jobs_step *st, int64_t now,
                      int64_t *completed) {
    if (d->kind == LN__DONE_LIMITED) return ln__sq_limit_requeue(be, queue, d, st, now);
    if (d->kind == LN__DONE_RETRY || d->kind == LN__DONE_DELAY)
        return record_rerun(be, queue, d, now);
    return record_finish(be, queue, d, st, now, completed);
}

/* Every outcome of st->done, then the counters of the completions (the
 * inline-counted move, sqlite_int.h) and the metrics (metrics.c).
 * *nfinal: the completions and final failures recorded. */
static int record_outcomes(sq_be *be, const char *queue, ln__jobs_step *st, int64_t now,
                           size_t *nfinal) {
    int64_t completed = 0;
    int err = 0;
    for (size_t i = 0; i < st->ndone && err == 0; i++) {
        ln__job_done *d = &st->done[i];
        err = record_one(be, queue, d, st, now, &completed);
        *nfinal +=
            err == 0 && d->rc == 0 && (d->kind == LN__DONE_COMPLETE || d->kind == LN__DONE_FAIL);
    }
    if (err == 0) err = ln__sq_count(be, queue, LN_JOB_ACTIVE, -completed);
    if (err == 0) err = ln__sq_count(be, queue, LN_JOB_COMPLETED, completed);
    if (err == 0 && st->metrics_max_points > 0) err = ln__sq_metrics_collect(be, queue, st, now);
    return err;
}

/* ---- 3. Renew the leases ---- */

/* Each lease of st->renew extended to now + lease_ms (renew_rc: 0 or
 * LN_ESTALE). */
static int renew_leases(sq_be *be, ln__jobs_step *st, int64_t now) {
    int err = 0;
    for (size_t i = 0; i < st->nrenew && err == 0; i++) {
        sqlite3_stmt *s = ln__sq_stmt_get(be, S_RENEW);
        if (s == NULL) return LN_EBACKEND;
        ln__sq_bind_ref(s, &st->renew[i]);
        sqlite3_bind_int64(s, 3, now + st->lease_ms);
        if ((err = ln__sq_run(be, s, "renew lease")) == 0)
            st->renew_rc[i] = sqlite3_changes(be->db) == 1 ? 0 : LN_ESTALE;
    }
    return err;
}

/* ---- 4. Promote and take ---- */

/* Due delayed jobs of queue to ready, each with its event. */
static int promote_due(sq_be *be, const char *queue, int64_t now) {
    sqlite3_stmt *s = ln__sq_stmt_get(be, S_PROMOTE);
    if (s == NULL) return LN_EBACKEND;
    sqlite3_bind_text(s, 1, queue, -1, SQLITE_STATIC);
    sqlite3_bind_int64(s, 2, now);
    int err = ln__sq_events_for(be, S_EVENT_PROMOTE, queue, now); /* before: it reads them */
    if (err == 0) err = ln__sq_run(be, s, "promote delayed");
    return err;
}

/* Order taken[0..n) by (priority, seq, rid), the run order: RETURNING gives
 * rows in the order SQLite updated them, which is not guaranteed. */
static void sort_taken(ln__job_taken *t, int64_t (*key)[3], size_t n) {
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0; j--) {
            int64_t *a = key[j - 1], *b = key[j];
            int after = a[0] != b[0] ? a[0] > b[0] : a[1] != b[1] ? a[1] > b[1] : a[2] > b[2];
            if (!after) break;
            ln__job_taken tt = t[j];
            t[j] = t[j - 1];
            t[j - 1] = tt;
            int64_t k[3] = {a[0], a[1], a[2]};
            memcpy(a, b, sizeof k);
            memcpy(b, k, sizeof k);
        }
}

/* S_TAKE took nothing: then no job may be ready, or the ready index names
 * jobs the table does not have (a damaged file), and every later step
 * would find work it cannot take: an idle worker that never ends. Within
 * the write transaction nobody else can have taken them. One index probe,
 * only on a step that took nothing. */
static int check_none_ready(sq_be *be, const char *queue) {
    sqlite3_stmt *s = ln__sq_stmt_get(be, S_READY_ANY);
    if (s == NULL) return LN_EBACKEND;
    sqlite3_bind_text(s, 1, queue, -1, SQLITE_STATIC);
    int rc = sqlite3_step(s);
    int err = rc == SQLITE_ROW ? 0 : ln__sq_err(be, rc, "take (check)");
    if (err == 0 && sqlite3_column_int(s, 0) != 0)
        err = ln__sq_corrupt(be,
                             "the ready index lists jobs that cannot be "
                             "taken",
                             0);
    sqlite3_reset(s);
    return err;
}

/* The job of a row of S_TAKE into *t (zeroed here, freed on error), its
 * run-order key into key. */
static int taken_of_row(sq_be *be, sqlite3_stmt *s, ln__job_taken *t, int64_t key[3]) {
    memset(t, 0, sizeof *t);
    int64_t rid = sqlite3_column_int64(s, 0);
    t->ref.id = ln__sq_id_dup(rid, (const char *)sqlite3_column_text(s, 1));
    t->ref.key = (uint64_t)rid;
    snprintf(t->ref.token, sizeof t->ref.token, "%lld", (long long)sqlite3_column_int64(s, 4));
    if (sqlite3_column_type(s, 2) == SQLITE_NULL ||
        sqlite3_column_type(s, 3) == SQLITE_NULL) { /* NOT NULL columns */
        ln__job_taken_free(t);
        return ln__sq_corrupt(be, "a job without name or data", rid);
    }
    if (t->ref.id == NULL || ln__sq_dup_text(s, 2, &t->name) || ln__sq_dup_text(s, 3, &t->data) ||
        ln__sq_dup_text(s, 10, &t->traceparent) || ln__sq_dup_text(s, 11, &t->tracestate)) {
        ln__job_taken_free(t);
        return ln__jobs_be_err(&be->base, LN_ENOMEM, "out of memory");
    }
    t->attempts_started = sqlite3_column_int(s, 5);
    t->attempts_made = sqlite3_column_int(s, 6);
    t->attempts = sqlite3_column_int(s, 7);
    t->backoff = sqlite3_column_int(s, 8);
    t->backoff_ms = sqlite3_column_int64(s, 9);
    t->timeout_ms = sqlite3_column_int64(s, 14);
    int err = ln__sq_read_backoff(be, s, 15, &t->backoff_jitter, &t->backoff_type); /* backoff.c */
    if (err != 0) {
        ln__job_taken_free(t);
        return err;
    }
    key[0] = sqlite3_column_int64(s, 12);
    key[1] = sqlite3_column_int64(s, 13);
    key[2] = rid;
    return 0;
}

/* Take up to st->want (> 0) ready jobs of queue into st->taken, in run
 * order: each active with a new token and lease; the iterations among them
 * make their schedulers' next; their events and counters. */
static int take(sq_be *be, const char *queue, ln__jobs_step *st, int64_t now) {
    int64_t(*key)[3] = ln__malloc(st->want * sizeof *key);
    if (key == NULL) return ln__jobs_be_err(&be->base, LN_ENOMEM, "out of memory");
    sqlite3_stmt *s = ln__sq_stmt_get(be, S_TAKE);
    if (s == NULL) {
        ln__free(key);
        return LN_EBACKEND;
    }
    sqlite3_bind_text(s, 1, queue, -1, SQLITE_STATIC);
    sqlite3_bind_int64(s, 2, now);
    sqlite3_bind_int64(s, 3, st->lease_ms);
    sqlite3_bind_int64(s, 4, (int64_t)st->want);
    int rc, err = 0;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (st->ntaken == st->want) continue; /* cannot happen: LIMIT */
        if ((err = taken_of_row(be, s, &st->taken[st->ntaken], key[st->ntaken])) != 0) break;
        st->ntaken++;
    }
    if (err == 0 && rc != SQLITE_DONE) err = ln__sq_err(be, rc, "take");
    sqlite3_reset(s);
    if (err == 0 && st->ntaken == 0) err = check_none_ready(be, queue);
    if (err == 0) err = ln__sq_sched_taken(be, queue, st->taken, st->ntaken, now); /* sched.c */
    for (size_t i = 0; i < st->ntaken && err == 0 && !st->no_active_event; i++)
        err = ln__sq_event(be, queue, "active", st->taken[i].ref.id, "prev", "waiting", NULL, NULL,
                           now);
    /* Count the moves: ready (waiting or prioritized) -> active. */
    int64_t prioritized = 0, taken = (int64_t)st->ntaken;
    for (size_t i = 0; i < st->ntaken; i++) prioritized += key[i][0] > 0;
    int64_t waiting = taken - prioritized;
    if (err == 0) err = ln__sq_count(be, queue, LN_JOB_WAITING, -waiting);
    if (err == 0) err = ln__sq_count(be, queue, LN_JOB_PRIORITIZED, -prioritized);
    if (err == 0) err = ln__sq_count(be, queue, LN_JOB_ACTIVE, taken);
    if (err == 0) sort_taken(st->taken, key, st->ntaken);
    ln__free(key);
    return err;
}

/* Step 4 (st->want > 0): as many as the rate limits and the global
 * concurrency let through (limit.c; 0 with st->limited_ms when limited),
 * after the due delayed jobs are promoted. */
static int promote_and_take(sq_be *be, const char *queue, ln__jobs_step *st, int64_t now) {
    size_t want = st->want, allowed = want;
    int counted = 0;
    int err = ln__sq_limit_take(be, queue, st, now, &allowed, &counted);
    if (err == 0) err = promote_due(be, queue, now);
    if (err != 0 || allowed == 0) return err; /* (0: held back by a limit) */
    st->want = allowed;
    err = take(be, queue, st, now);
    st->want = want;
    if (err == 0 && counted && st->ntaken > 0) err = ln__sq_limit_count(be, queue, st, now);
    return err;
}

/* ---- 5. After a take that fell short: next_due (above), drained ---- */

/* BullMQ's moveToFinished writes 'drained' after a completion or a final
 * failure (nfinal of this step's outcomes; a retried or delayed run writes
 * none) that leaves nothing to take: the step took nothing, is not rate
 * limited, and the queue has nothing ready, delayed or active and is not
 * paused (BullMQ's fetchNextJob returns the due time, the limit or the
 * pause instead). Once per step, however many outcomes it records. */
static int drained_event(sq_be *be, const char *queue, const ln__jobs_step *st, size_t nfinal,
                         int64_t now) {
    if (nfinal == 0 || st->ntaken > 0 || st->limited_ms > 0 || st->next_due_ms >= 0) return 0;
    sqlite3_stmt *s = ln__sq_stmt_get(be, S_DRAINED);
    if (s == NULL) return LN_EBACKEND;
    sqlite3_bind_text(s, 1, queue, -1, SQLITE_STATIC);
    int rc = sqlite3_step(s);
    int err = rc == SQLITE_ROW ? 0 : ln__sq_err(be, rc, "drained check");
    int drained = rc == SQLITE_ROW && sqlite3_column_int(s, 0) != 0;
    sqlite3_reset(s);
    if (err != 0 || !drained) return err;
    return ln__sq_event(be, queue, "drained", NULL, NULL, NULL, NULL, NULL, now);
}

/* ---- The step ---- */

static int step_once(sq_be *be, const char *queue, ln__jobs_step *st) {
    st->ntaken = 0;
    st->next_due_ms = -1;
    st->limited_ms = 0;
    /* 0. nothing to record or renew: look before locking */
    if (st->ndone == 0 && st->nrenew == 0) {
        int has_work = 0;
        if (st->want == 0) return 0;
        int err = idle_check(be, queue, st, &has_work);
        if (err != 0 || !has_work) return err;
    }
    /* 1. the write lock and the store clock */
    int64_t now;
    int err = ln__sq_begin_write(be, &now);
    if (err != 0) return err;
    /* 2. record, 3. renew, 4. promote and take */
    size_t nfinal = 0, want = st->want; /* completions and final failures recorded */
    err = record_outcomes(be, queue, st, now, &nfinal);
    if (err == 0) err = renew_leases(be, st, now);
    if (err == 0 && want > 0) err = promote_and_take(be, queue, st, now);
    /* 5. a take that fell short: when the next delayed job is due, drained */
    if (err == 0 && want > 0 && st->ntaken < want && st->limited_ms == 0)
        err = next_due(be, queue, now, &st->next_due_ms);
    if (err == 0) err = drained_event(be, queue, st, nfinal, now);
    /* 6. commit, or roll back and hand out nothing */
    if (err == 0)
        err = ln__sq_commit(be);
    else
        ln__sq_rollback(be);
    if (err != 0) {
        for (size_t i = 0; i < st->ntaken; i++) ln__job_taken_free(&st->taken[i]);
        st->ntaken = 0;
    }
    return err;
}

int ln__sq_step(ln__jobs_be *b, const char *queue, ln__jobs_step *st) {
    sq_be *be = (sq_be *)b;
    int err = step_once(be, queue, st);
    if (ln__sq_retry_for_space(be, err, 0)) err = step_once(be, queue, st);
    return ln__sq_relieved(be, err);
}

/* ---- Beside the step: a job a worker holds ---- */

/* progress and log: one fenced write of text to an active job. */
static int fenced_write(sq_be *be, const char *queue, sq_stmt id, const ln__job_ref *ref,
                        const char *text, const char *what) {
    int64_t now;
    int err = ln__sq_begin_write(be, &now);
    if (err != 0) return err;
    sqlite3_stmt *s = ln__sq_stmt_get(be, id);
    if (s == NULL) {
        ln__sq_rollback(be);
        return LN_EBACKEND;
    }
    ln__sq_bind_ref(s, ref);
    sqlite3_bind_text(s, 3, text, -1, SQLITE_STATIC);
    if ((err = ln__sq_run(be, s, what)) != 0) {
        ln__sq_rollback(be);
        return err;
    }
    int changed = sqlite3_changes(be->db);
    if (changed == 1 && id == S_PROGRESS &&
        (err = ln__sq_event(be, queue, "progress", ref->id, "data", text, NULL, NULL, now)) != 0) {
        ln__sq_rollback(be);
        return err;
    }
    if ((err = ln__sq_commit(be)) != 0) return err;
    return changed == 1 ? 0
                        : ln__jobs_be_err(&be->base, LN_ESTALE, "job '%s': lease lost", ref->id);
}

int ln__sq_progress(ln__jobs_be *b, const char *queue, const ln__job_ref *ref, const char *json) {
    sq_be *be = (sq_be *)b;
    int err = fenced_write(be, queue, S_PROGRESS, ref, json, "progress");
    if (ln__sq_retry_for_space(be, err, 0))
        err = fenced_write(be, queue, S_PROGRESS, ref, json, "progress");
    return ln__sq_relieved(be, err);
}

int ln__sq_log(ln__jobs_be *b, const char *queue, const ln__job_ref *ref, const char *line) {
    sq_be *be = (sq_be *)b;
    int err = fenced_write(be, queue, S_LOG, ref, line, "log");
    if (ln__sq_retry_for_space(be, err, 0)) err = fenced_write(be, queue, S_LOG, ref, line, "log");
    return ln__sq_relieved(be, err);
}

int ln__sq_pending(ln__jobs_be *b, const char *queue, int *pending) {
    sq_be *be = (sq_be *)b;
    sqlite3_stmt *s = ln__sq_stmt_get(be, S_PENDING);
    if (s == NULL) return LN_EBACKEND;
    sqlite3_bind_text(s, 1, queue, -1, SQLITE_STATIC);
    int rc = sqlite3_step(s);
    int err = rc == SQLITE_ROW ? 0 : ln__sq_err(be, rc, "pending");
    *pending = rc == SQLITE_ROW && sqlite3_column_int(s, 0) != 0;
    sqlite3_reset(s);
    return err;
}
