/* worker_cancel.c - how a worker learns that a job it runs was canceled
 * from another process (ln_jobs_cancel): the maintain phase asks the store
 * every LN_JOBS_CANCEL_POLL_MS, while handlers run, which of their jobs
 * are no longer active with this worker's lease, and marks those canceled
 * (ln_job_canceled() turns 1; `lanes worker --exec` then kills the
 * program). Their outcomes are refused by the store as for a lost lease,
 * so the job stays as the cancel left it. Dispatcher only;
 * docs/internals/cancel.md.
 *
 * Cost: one small store call every LN_JOBS_CANCEL_POLL_MS while jobs run,
 * none while idle; on Redis one GET in a script while nothing was canceled
 * (the store's cancel mark, r->cancel_mark, has not moved).
 */
#include "worker_int.h"

void ln__worker_cancels(ln__run *r) {
    ln_worker *w = r->w;
    /* The first poll comes a period after handlers start running: a job
     * canceled is seen within about LN_JOBS_CANCEL_POLL_MS of its start
     * or of the cancel, and a worker of short jobs rarely polls at all. */
    if (r->rd.running == 0) r->next_cancel = r->now + (uint64_t)LN_JOBS_CANCEL_POLL_MS * LN__MS;
    if (r->rd.running == 0 || r->now < r->next_cancel) return;
    r->next_cancel = r->now + (uint64_t)LN_JOBS_CANCEL_POLL_MS * LN__MS;
    /* refs[], renewing[] and rcs[] are free scratch outside the stop
     * phase (which releases through them); each has 'concurrency' entries,
     * and slots[] holds at most that many jobs. */
    LN_ASSERT(w->nslots <= w->opts.concurrency);
    size_t n = 0;
    int skipped = 0;
    for (size_t i = 0; i < w->nslots; i++) {
        ln_job *job = w->slots[i];
        if (job->collected || atomic_load_explicit(&job->canceled, memory_order_relaxed)) continue;
        /* A step in flight renews it: a canceled job is freed as soon as
         * its handler returns, so it must not be one a step refers to
         * (docs/internals/worker-loop.md). The next poll looks at it. */
        if (job->renew_sent) {
            skipped = 1;
            continue;
        }
        w->renewing[n] = job;
        w->refs[n++] = job->t.ref;
    }
    if (n == 0) return;
    /* With a job skipped, the mark stays: the next poll sees it changed
     * and looks at every job again, the skipped one too. */
    int64_t mark = r->cancel_mark;
    /* A failure is not the run's: the poll is advisory, the next one (or
     * the lease renewal) finds the cancel. */
    if (ln__store_cancel_poll(w->jobs, w->queue, &mark, w->refs, w->rcs, n) != 0) return;
    if (!skipped) r->cancel_mark = mark;
    uint64_t gone = 0;
    for (size_t i = 0; i < n; i++) {
        if (!w->rcs[i]) continue;
        LN_ASSERT(!w->renewing[i]->renew_sent);
        atomic_store_explicit(&w->renewing[i]->canceled, 1, memory_order_relaxed);
        gone += (uint64_t)ln__worker_lost(w->renewing[i]);
    }
    if (gone == 0) return;
    pthread_mutex_lock(&w->mu); /* lost leases, as a renewal counts them */
    w->stats.stale += gone;
    pthread_mutex_unlock(&w->mu);
}
