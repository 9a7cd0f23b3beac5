/* worker_beat.c - a worker run tells its store it is alive, so
 * ln_jobs_workers lists it (docs/internals/workers.md): the run registers
 * when it starts, beats every LN_JOB_WORKER_BEAT_MS from the maintenance
 * phase, and unregisters when it ends. A store that knows its workers
 * otherwise (Redis: the run's named connection) has no beat method: the
 * first call says so and the run stops beating. A beat that fails only delays the listing (the
 * steps see a failing store and deal with it), so its result is not the
 * run's. Dispatcher only. */
#include "worker_int.h"

/* Pure: is a beat due at now (monotonic ns)? next 0: the run just started. */
int ln__beat_due(uint64_t next, uint64_t now) {
    return next == 0 || now >= next;
}

void ln__beat_maintain(ln__run *r) {
    if (!ln__beat_due(r->next_beat, r->now)) return;
    if (ln__store_worker_beat(r->w->jobs, r->w->queue, &r->beat_id, 0) == LN_ENOTSUP) {
        r->next_beat = UINT64_MAX; /* never: no timer for the idle phase */
        return;
    }
    r->next_beat = r->now + (uint64_t)LN_JOB_WORKER_BEAT_MS * LN__MS;
    LN_ASSERT(r->next_beat > r->now);
}

void ln__beat_leave(ln__run *r) {
    if (r->beat_id != 0) (void)ln__store_worker_beat(r->w->jobs, r->w->queue, &r->beat_id, 1);
    r->beat_id = 0;
}
