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
    if (r->rd.running == 0 || r->now < r->next_cancel) return;
    r->next_cancel = r->now + (uint64_t)LN_JOBS_CANCEL_POLL_MS * LN__MS;
    /* refs[], renewing[] and rcs[] are free scratch outside the stop
     * phase (which releases through them); each has 'concurrency' entries,
     * and slots[] holds at most that many jobs. */
    LN_ASSERT(w->nslots <= w->opts.concurrency);
    size_t n = 0;
    for (size_t i = 0; i < w->nslots; i++) {
        ln_job *job = w->slots[i];
        if (job->collected || atomic_load_explicit(&job->canceled, memory_order_relaxed)) continue;
        w->renewing[n] = job;
        w->refs[n++] = job->t.ref;
    }
    if (n == 0) return;
    /* A failure is not the run's: the poll is advisory, the next one (or
     * the lease renewal) finds the cancel. */
    if (ln__store_cancel_poll(w->jobs, w->queue, &r->cancel_mark, w->refs, w->rcs, n) != 0) return;
    for (size_t i = 0; i < n; i++)
        if (w->rcs[i]) atomic_store_explicit(&w->renewing[i]->canceled, 1, memory_order_relaxed);
}
