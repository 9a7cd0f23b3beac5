/* worker_jobs.c - the jobs a worker holds (slots[], unrecorded[]): collect
 * finished handlers, start taken jobs, give jobs back, abandon them.
 * Dispatcher only. The invariants: docs/internals/worker-loop.md.
 *
 * Every job taken and not yet freed is in slots[]; only these functions,
 * ln__steps_recv (after a step stored the outcome) and worker_waited.c's
 * ln__worker_waited / _sweep (a job moved to waiting-children) free jobs,
 * and a job is freed only once its handler returned (or never started).
 *
 * Timeouts: a job past its deadline is canceled and its failure is
 * recorded like any outcome, while its handler may still run. Such a job
 * ("hung") is freed by whichever of collect() (the handler returned) and
 * ln__worker_outcome_done (the outcome was stored) comes second; until
 * then it stays in slots[] and counts as running, so takes never exceed
 * concurrency while its pool thread is busy. Invariant:
 *   nhung_out == #{ job in slots[] : timed_out && !returned && !recorded }
 */
#include "worker_int.h"

#include <stdio.h>

void ln__worker_job_free(ln_job *job) {
    ln__job_taken_free(&job->t);
    ln__free(job->result);
    ln__free(job->refused_reason);
    ln__free(job->reason);
    ln__free(job->retry_reason);
    ln__free(job);
}

void ln__worker_slot_remove(ln_worker *w, ln_job *job) {
    size_t i = job->slot;
    LN_ASSERT(i < w->nslots && w->slots[i] == job);
    w->slots[i] = w->slots[--w->nslots];
    w->slots[i]->slot = i;
}

size_t ln__worker_running(const ln_worker *w) {
    LN_ASSERT(w->nunrecorded + w->fl_done <= w->nslots + w->nhung_out);
    return w->nslots + w->nhung_out - w->nunrecorded - w->fl_done;
}

void ln__worker_outcome_done(ln_worker *w, ln_job *job) {
    if (job->timed_out && !job->returned) { /* collect() frees it */
        LN_ASSERT(!job->recorded && w->nhung_out > 0);
        job->recorded = 1;
        w->nhung_out--;
        return;
    }
    ln__worker_slot_remove(w, job);
    ln__worker_job_free(job);
}

static void fire_timeout(ln_worker *w, ln_job *job) {
    /* relaxed: advisory, as every store of canceled */
    atomic_store_explicit(&job->canceled, 1, memory_order_relaxed);
    job->timed_out = 1;
    job->collected = 1;
    snprintf(job->timeout_reason, sizeof job->timeout_reason, "timed out after %lld ms",
             (long long)job->timeout_ms);
    LN_ASSERT(w->nunrecorded < w->opts.concurrency);
    w->unrecorded[w->nunrecorded++] = job;
    w->nhung_out++;
}

void ln__worker_timeouts(ln_worker *w, uint64_t now) {
    if (now < w->next_timeout) return;
    uint64_t next = UINT64_MAX;
    for (size_t i = 0; i < w->nslots; i++) {
        ln_job *job = w->slots[i];
        /* An outcome already collected, or a job given up, is not timed. */
        if (job->deadline == 0 || job->collected ||
            atomic_load_explicit(&job->canceled, memory_order_relaxed))
            continue;
        if (job->deadline <= now)
            fire_timeout(w, job);
        else if (job->deadline < next)
            next = job->deadline;
    }
    w->next_timeout = next;
}

int ln__worker_lost(ln_job *job) {
    if (!job->collected) { /* running: waited is the handler's */
        job->lost = 1;
        return 0;
    }
    /* collected and not timed out: returned (and acquired), so waited can
     * be read; a timed-out one may still be running */
    return (job->timed_out || !job->waited) && ln__worker_stale(job);
}

int ln__worker_stale(ln_job *job) {
    if (job->stale_counted) return 0;
    job->stale_counted = 1;
    return 1;
}

void ln__worker_collect(ln_worker *w) {
    /* Acquire: pairs with the release push of ln__worker_run_job, so rc,
     * result, reason and next_finished of every job taken are visible. */
    ln_job *top = atomic_exchange_explicit(&w->finished, NULL, memory_order_acquire);
    /* The stack holds the newest first; walk it oldest first, so outcomes
     * reach the store in the order the handlers returned, which for short
     * jobs is the order they were taken. On Redis each finished id is then
     * at the tail of 'active' when the step's LREM -1 looks for it; newest
     * first, every LREM scanned past the rest of its batch (about 10k
     * instructions per job at concurrency 50: docs/internals/redis-speed.md).
     * The chain is ours after the exchange: no handler touches a pushed
     * job's next_finished again. */
    ln_job *next = NULL;
    while (top != NULL) {
        ln_job *job = top;
        top = job->next_finished;
        job->next_finished = next;
        next = job;
    }
    while (next != NULL) {
        ln_job *job = next;
        next = job->next_finished;
        LN_ASSERT(!job->returned); /* a handler returns once */
        if (job->timed_out) {      /* its outcome is the timeout, whatever rc */
            job->returned = 1;
            if (job->recorded) {
                ln__worker_slot_remove(w, job);
                ln__worker_job_free(job);
            } else { /* its outcome frees it when stored */
                LN_ASSERT(w->nhung_out > 0);
                w->nhung_out--;
            }
            continue;
        }
        LN_ASSERT(!job->collected);
        if (job->waited) { /* ln_job_wait_children (worker_waited.c): nothing to record */
            ln__worker_waited(w, job);
        } else if (atomic_load_explicit(&job->canceled, memory_order_relaxed)) {
            LN_ASSERT(!job->renew_sent);              /* no step refers to it */
            if (job->lost && ln__worker_stale(job)) { /* its lease lost (ln__worker_lost) */
                pthread_mutex_lock(&w->mu);
                w->stats.stale++;
                pthread_mutex_unlock(&w->mu);
            }
            ln__worker_slot_remove(w, job); /* given up: nothing to record */
            ln__worker_job_free(job);
        } else {
            job->collected = 1;
            LN_ASSERT(w->nunrecorded < w->opts.concurrency);
            w->unrecorded[w->nunrecorded++] = job;
        }
    }
}

/* Graceful stop, a job that could not be started here, or a run given up
 * for a full disk. On other store errors the leases lapse instead
 * (stalled recovery requeues the jobs). */
void ln__worker_release(ln_worker *w, ln_job **jobs, size_t n) {
    if (n == 0) return;
    for (size_t i = 0; i < n; i++) {
        w->refs[i] = jobs[i]->t.ref;
        atomic_store_explicit(&jobs[i]->canceled, 1, memory_order_relaxed);
    }
    int err = ln__store_release(w->jobs, w->queue, w->refs, w->rcs, n);
    pthread_mutex_lock(&w->mu);
    w->stats.released += err == 0 ? n : 0;
    pthread_mutex_unlock(&w->mu);
}

/* A taken job without memory for its ln_job: back to the store at once. */
static void give_back_taken(ln_worker *w, ln__job_taken *t) {
    w->refs[0] = t->ref; /* borrows t's id: free t after the release */
    (void)ln__store_release(w->jobs, w->queue, w->refs, w->rcs, 1);
    ln__job_taken_free(t);
}

/* BullMQ's maxStartedAttempts: a job taken more often than that fails for
 * good without running. It goes straight to unrecorded[], as collect()
 * puts a finished one (no handler ever refers to it); 1 if so. */
static int started_too_often(ln_worker *w, ln_job *job) {
    unsigned max = w->opts.max_started_attempts;
    if (max == 0 || job->t.attempts_started <= 0 || (unsigned)job->t.attempts_started <= max)
        return 0;
    job->reason = ln__strdup("job started more than allowable limit"); /* NULL: rc's text */
    job->rc = LN_EINVAL;
    job->unrecoverable = 1;
    job->collected = 1;
    LN_ASSERT(w->nunrecorded < w->opts.concurrency);
    w->unrecorded[w->nunrecorded++] = job;
    return 1;
}

void ln__worker_start_taken(ln_worker *w, ln__job_taken *taken, size_t n) {
    size_t nfailed = 0; /* collected in renewing[], free scratch here */
    for (size_t i = 0; i < n; i++) {
        ln_job *job = ln__calloc(1, sizeof *job);
        if (job == NULL) {
            give_back_taken(w, &taken[i]);
            continue;
        }
        job->w = w;
        job->t = taken[i];
        job->timeout_ms = job->t.timeout_ms > 0 ? job->t.timeout_ms : w->opts.timeout_ms;
        if (job->timeout_ms > 0) {
            job->deadline = ln__now_ns() + (uint64_t)job->timeout_ms * LN__MS;
            if (job->deadline < w->next_timeout) w->next_timeout = job->deadline;
        }
        job->slot = w->nslots;
        LN_ASSERT(w->nslots < w->opts.concurrency);
        w->slots[w->nslots++] = job;
        if (started_too_often(w, job)) continue; /* recorded failed, never run */
        /* relaxed: the submit publishes the job; only the count matters */
        atomic_fetch_add_explicit(&w->tasks, 1, memory_order_relaxed);
        if (ln_submit(w->pool, w->opts.lane, ln__worker_run_job, job, NULL) != 0) {
            atomic_fetch_sub_explicit(&w->tasks, 1, memory_order_relaxed);
            w->renewing[nfailed++] = job;
        }
    }
    if (nfailed == 0) return;
    ln__worker_release(w, w->renewing, nfailed);
    for (size_t i = 0; i < nfailed; i++) {
        ln__worker_slot_remove(w, w->renewing[i]);
        ln__worker_job_free(w->renewing[i]);
    }
}

void ln__worker_abandon(ln_worker *w, int err) {
    ln__steps_drain(w); /* no step in flight may refer to a freed job */
    /* Given up for a full disk: the store still answers, and a release
     * needs almost no room (SQLite's reserve keeps some for it), so every
     * job held goes back at once (a handler still running is canceled, as
     * at the end of a graceful stop's grace), an outcome not stored with
     * it: the job runs again. Its lease would strand it active meanwhile,
     * and stalled recovery would count that as a stall. */
    if (err == LN_ENOSPC && w->nslots > 0 && ln__jobs_enter(w->jobs) == 0) {
        char why[LN__JOBS_ERRMSG_MAX]; /* the run's error, which the release's must not hide */
        snprintf(why, sizeof why, "%s", ln_jobs_errmsg(w->jobs));
        ln__jobs_leave(w->jobs, 0);
        for (size_t i = 0; i < w->nslots; i++) w->renewing[i] = w->slots[i];
        ln__worker_release(w, w->renewing, w->nslots);
        if (ln__jobs_enter(w->jobs) == 0) {
            ln__jobs_err(w->jobs, err, "%s", why);
            ln__jobs_leave(w->jobs, err);
        }
    }
    for (size_t i = 0; i < w->nunrecorded; i++) /* given up: the lease lapses */
        ln__worker_outcome_done(w, w->unrecorded[i]);
    w->nunrecorded = 0;
    LN_ASSERT(w->nhung_out == 0);
    for (size_t i = 0; i < w->nslots; i++)
        atomic_store_explicit(&w->slots[i]->canceled, 1, memory_order_relaxed);
    /* Every job left is running: collect() frees each when it returns. */
    while (w->nslots > 0) {
        ln__worker_collect(w);
        if (w->nslots > 0) (void)ln__worker_sleep(w, ln__now_ns() + 100 * LN__MS, -1);
    }
}
