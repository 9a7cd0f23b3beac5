/* worker_steps.c - the steps a worker has in flight: what a finished run
 * stores (the retry policy), sending a step down the run's pipe and
 * receiving it. Dispatcher only; docs/internals/worker-loop.md.
 *
 * The steps sent and not yet received are a FIFO fl[] of at most the
 * pipe's depth (1 for a synchronous store, up to LN__PIPE_DEPTH). fl_done
 * and fl_want sum the outcomes and takes of the steps in flight: a step's
 * takes count against concurrency from the moment it is sent. A job that a
 * step in flight refers to (its outcome or its renewal) is never freed
 * before that step is received.
 */
#include "worker_int.h"

#include "backoff.h"
#include "sched_record.h"

#include <stdio.h>
#include <string.h>

/* Decide once the retry of job's failed run with reason (sets
 * retry_decided, retry_ms, maybe retry_reason): fixed and exponential
 * with their jitter, a custom type by the worker's backoff_strategy, or
 * no retry when it has none (docs/internals/backoff.md). */
static void decide_retry(ln_job *job, const char *reason) {
    const ln__job_taken *t = &job->t;
    const ln_worker_opts *o = &job->w->opts;
    job->retry_decided = 1;
    if (t->backoff != LN_BACKOFF_CUSTOM) {
        int64_t d = ln__backoff_base(t->backoff, t->backoff_ms, t->attempts_made);
        job->retry_ms = t->backoff_jitter > 0
                            ? ln__backoff_jittered(d, t->backoff_jitter, ln__backoff_random())
                            : d;
        return;
    }
    const char *type = t->backoff_type != NULL ? t->backoff_type : "";
    if (o->backoff_strategy != NULL) { /* user code: no lock is held here */
        job->retry_ms = ln__backoff_strategy_delay(
            o->backoff_strategy(t->attempts_made + 1, type, reason, job, o->backoff_user));
        return;
    }
    job->retry_ms = -1; /* never silently: the reason says why */
    static const char fmt[] = "%s (not retried: no backoff strategy for type '%s')";
    size_t n = strlen(reason) + strlen(type) + sizeof fmt;
    if ((job->retry_reason = ln__malloc(n)) != NULL)
        snprintf(job->retry_reason, n, fmt, reason, type);
}

/* The front's retry policy: what to store for a finished run. A timeout
 * wins over what the handler asked (it may still be writing its fields);
 * then ln_job_delay_until; then success (unless ln_job_set_result refused
 * the result: a failure with its reason), or a failure retried while
 * attempts remain unless the handler called it unrecoverable, the job was
 * started max_started_attempts times, or the backoff says no. */
static void decide(ln_job *job, ln__job_done *d) {
    memset(d, 0, sizeof *d);
    d->ref = job->t.ref;
    int final = 0;        /* ln_job_fail_unrecoverable: no retry */
    if (job->timed_out) { /* rc, result, reason: the handler's, maybe still
                             being written; the outcome is the timeout */
        d->reason = job->timeout_reason;
    } else if (job->limit_set) { /* no attempt used, nothing stored */
        d->kind = LN__DONE_LIMITED;
        d->delay_ms = job->limit_ms;
        return;
    } else if (job->delay_set) { /* no attempt used, nothing stored */
        d->kind = LN__DONE_DELAY;
        d->run_at_ms = job->delay_at_ms;
        return;
    } else if (job->rc == 0 && !job->result_refused) {
        d->kind = LN__DONE_COMPLETE;
        d->result = job->result;
        return;
    } else if (job->rc == 0) { /* never completed with a result lost */
        d->reason = job->refused_reason != NULL ? job->refused_reason
                                                : "the result was refused: out of memory";
    } else {
        final = job->unrecoverable;
        d->reason = job->reason != NULL ? job->reason
                    : job->rc < 0       ? ln_strerror(job->rc)
                                        : "handler returned a positive value";
    }
    unsigned max_started = job->w->opts.max_started_attempts;
    if (max_started > 0 && (unsigned)job->t.attempts_started >= max_started)
        final = 1; /* BullMQ's maxStartedAttempts: started enough, no retry */
    if (job->t.attempts_made + 1 < job->t.attempts && !final) {
        if (!job->retry_decided) decide_retry(job, d->reason);
        if (job->retry_reason != NULL) d->reason = job->retry_reason;
        LN_ASSERT(job->retry_ms >= -1);
        if (job->retry_ms >= 0) {
            d->kind = LN__DONE_RETRY;
            d->delay_ms = job->retry_ms;
            return;
        }
    }
    d->kind = LN__DONE_FAIL;
}

int ln__steps_send(ln_worker *w, int renew, size_t want) {
    LN_ASSERT(w->fl_count < ln__pipe_depth(w->pipe));
    ln__flight *f = &w->fl[(w->fl_head + w->fl_count) % LN__PIPE_DEPTH];
    size_t nd = w->nunrecorded, nr = 0;
    for (size_t i = 0; i < nd; i++) {
        LN_ASSERT(w->unrecorded[i]->collected);
        decide(w->unrecorded[i], &f->done[i]);
        f->jobs[i] = w->unrecorded[i];
    }
    for (size_t i = 0; renew && i < w->nslots; i++) {
        ln_job *job = w->slots[i];
        if (job->collected || job->renew_sent ||
            atomic_load_explicit(&job->canceled, memory_order_relaxed))
            continue;
        job->renew_sent = 1;
        f->renewing[nr] = job;
        f->refs[nr++] = job->t.ref;
    }
    f->st = (ln__jobs_step){.done = f->done,
                            .ndone = nd,
                            .renew = f->refs,
                            .renew_rc = f->rcs,
                            .nrenew = nr,
                            .want = want,
                            .lease_ms = w->opts.lease_ms,
                            .taken = f->taken,
                            .metrics_max_points = w->opts.metrics_max_points,
                            .rate_max = w->opts.rate_max,
                            .rate_duration_ms = w->opts.rate_duration_ms,
                            .no_active_event = w->opts.no_active_event != 0,
                            .keep_complete = w->opts.remove_on_complete,
                            .keep_fail = w->opts.remove_on_fail};
    int err = ln__pipe_send(w->pipe, &f->st);
    if (err != 0) {
        for (size_t i = 0; i < nr; i++) f->renewing[i]->renew_sent = 0;
        return err;
    }
    w->nunrecorded = 0;
    w->fl_count++;
    w->fl_done += nd;
    w->fl_want += want;
    return 0;
}

int ln__steps_failed(ln_worker *w, int err, uint64_t failing_ms) {
    if (ln__jobs_enter(w->jobs) == 0) {
        if (failing_ms > 0)
            ln__jobs_err(w->jobs, err,
                         "gave up after %llu ms of store failures in a row "
                         "(store_retry_ms %u ms); the last: %s",
                         (unsigned long long)failing_ms, ln__worker_retry_ms(&w->opts, err),
                         ln__pipe_errmsg(w->pipe));
        else
            ln__jobs_err(w->jobs, err, "%s", ln__pipe_errmsg(w->pipe));
        ln__jobs_leave(w->jobs, err);
    }
    return err;
}

/* Count a received step's outcomes and lost leases in the stats. */
static void count_step(ln_worker *w, const ln__flight *f) {
    ln_worker_stats d = {0};
    for (size_t i = 0; i < f->st.ndone; i++) {
        if (f->done[i].rc == LN__DONE_PENDING_DEPS) /* counted as it is recorded */
            continue;
        if (f->done[i].rc != 0)
            d.stale += (uint64_t)ln__worker_stale(f->jobs[i]); /* once per take */
        else if (f->done[i].kind == LN__DONE_COMPLETE)
            d.completed++;
        else if (f->done[i].kind == LN__DONE_RETRY)
            d.retried++;
        else if (f->done[i].kind == LN__DONE_DELAY)
            d.delayed++;
        else if (f->done[i].kind == LN__DONE_LIMITED)
            d.rate_limited++;
        else
            d.failed++;
    }
    for (size_t i = 0; i < f->st.nrenew; i++)
        if (f->rcs[i] != 0) d.stale += (uint64_t)ln__worker_lost(f->renewing[i]);
    pthread_mutex_lock(&w->mu);
    w->stats.taken += f->st.ntaken;
    w->stats.completed += d.completed;
    w->stats.failed += d.failed;
    w->stats.retried += d.retried;
    w->stats.delayed += d.delayed;
    w->stats.rate_limited += d.rate_limited;
    w->stats.stale += d.stale;
    w->stats.unreplicated += f->st.unreplicated; /* wait_replicas (jobs.h) */
    pthread_mutex_unlock(&w->mu);
}

/* A completion the job's pending children refused (LN__DONE_PENDING_DEPS:
 * still held, nothing stored): the run failed instead, with BullMQ's
 * reason for moveToFinished's -4, and the next step records that failure
 * through decide(), so the job's backoff applies (jitter, a custom
 * strategy) as BullMQ's worker retries that error. A completion only: no
 * retry was decided, and the failure cannot be refused again. */
static void refused_to_failure(ln_worker *w, ln_job *job) {
    LN_ASSERT(job->collected && !job->timed_out && !job->retry_decided);
    static const char fmt[] = "Job %s has pending dependencies. moveToFinished";
    size_t n = strlen(job->t.ref.id) + sizeof fmt;
    char *why = ln__malloc(n);
    if (why != NULL) snprintf(why, n, fmt, job->t.ref.id);
    ln__free(job->reason);
    job->reason = why;
    job->rc = why != NULL ? 1 : LN_ENOMEM; /* a failure: reason, else the error's */
    LN_ASSERT(w->nunrecorded < w->opts.concurrency);
    w->unrecorded[w->nunrecorded++] = job;
}

/* The step took room for the jobs it recorded; the ones whose completion
 * was refused stay (refused_to_failure), so a take past the worker's
 * concurrency goes back to the store untouched, as a job that cannot be
 * started (ln__worker_release). Only after a refusal. */
static void give_back_excess(ln_worker *w, ln__flight *f, size_t nrefused) {
    size_t leaving = f->st.ndone - nrefused;
    LN_ASSERT(w->nslots >= leaving && w->nslots - leaving <= w->opts.concurrency);
    size_t room = w->opts.concurrency - (w->nslots - leaving);
    if (f->st.ntaken <= room) return;
    size_t n = f->st.ntaken - room;
    for (size_t k = 0; k < n; k++) w->refs[k] = f->taken[room + k].ref;
    (void)ln__store_release(w->jobs, w->queue, w->refs, w->rcs, n); /* else the leases lapse */
    for (size_t k = 0; k < n; k++) ln__job_taken_free(&f->taken[room + k]);
    f->st.ntaken = room;
}

int ln__steps_recv(ln_worker *w, ln__round *rd) {
    LN_ASSERT(w->fl_count > 0);
    ln__flight *f = &w->fl[w->fl_head];
    int err = ln__pipe_recv(w->pipe, &f->st);
    size_t nd = f->st.ndone, nr = f->st.nrenew;
    w->fl_head = (w->fl_head + 1) % LN__PIPE_DEPTH;
    w->fl_count--;
    w->fl_done -= nd;
    w->fl_want -= f->st.want;
    rd->asked = f->st.want;
    rd->ntaken = 0;
    rd->next_due = -1;
    rd->limited = 0;
    for (size_t i = 0; i < nr; i++) f->renewing[i]->renew_sent = 0;
    if (err != 0) { /* recorded again by a later step (a repeat is stale) */
        for (size_t i = 0; i < nd; i++) w->unrecorded[w->nunrecorded++] = f->jobs[i];
        if (w->nwaited > 0) ln__worker_waited_sweep(w); /* worker_waited.c */
        return err;
    }
    LN_ASSERT(f->st.ntaken <= f->st.want);
    size_t nrefused = 0;
    for (size_t i = 0; i < nd; i++) nrefused += f->done[i].rc == LN__DONE_PENDING_DEPS;
    if (nrefused > 0) give_back_excess(w, f, nrefused);
    count_step(w, f);
    ln__store_sched_taken(w->jobs, w->queue, f->taken, f->st.ntaken); /* job schedulers */
    for (size_t i = 0; i < nd; i++) /* stored: the outcomes leave slots[] */
        if (f->done[i].rc == LN__DONE_PENDING_DEPS)
            refused_to_failure(w, f->jobs[i]);
        else
            ln__worker_outcome_done(w, f->jobs[i]);
    for (size_t i = 0; i < nr; i++) /* lease lost: the outcome is refused */
        if (f->rcs[i] != 0)
            atomic_store_explicit(&f->renewing[i]->canceled, 1, memory_order_relaxed);
    if (w->nwaited > 0) ln__worker_waited_sweep(w); /* renewed ones moved away (worker_waited.c) */
    /* Before its takes arrive (docs/internals/worker-loop.md). */
    LN_ASSERT(w->nslots + f->st.ntaken <= w->opts.concurrency);
    rd->ntaken = f->st.ntaken;
    rd->next_due = f->st.next_due_ms;
    rd->limited = f->st.limited_ms;
    ln__worker_start_taken(w, f->taken, f->st.ntaken);
    return 0;
}

void ln__steps_drain(ln_worker *w) {
    while (w->fl_count > 0) {
        ln__round scratch;
        (void)ln__steps_recv(w, &scratch);
    }
}
