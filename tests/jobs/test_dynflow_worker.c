/* test_dynflow_worker.c - the dispatcher's side of ln_job_wait_children
 * (src/jobs/worker/worker_waited.c) without a store: a job whose handler
 * moved it to waiting-children is freed by collect with nothing recorded, at
 * once or, while a step in flight still renews its lease, only by the sweep
 * ln__steps_recv makes after that step was received. The worker is a bare
 * struct whose slots and
 * finished stack the test fills, as ln__worker_start_taken and
 * ln__worker_run_job would. */
#include "testutil.h"

#include "jobs/worker/worker_int.h"

#include <stdlib.h>
#include <string.h>

#define NSLOTS 4

typedef struct fake {
    ln_worker w;
    ln_job *slots[NSLOTS];
    ln_job *unrecorded[NSLOTS];
} fake;

static void fake_init(fake *f) {
    memset(f, 0, sizeof *f);
    f->w.opts.concurrency = NSLOTS;
    f->w.slots = f->slots;
    f->w.unrecorded = f->unrecorded;
    pthread_mutex_init(&f->w.mu, NULL);
}

/* A job taken into a slot; its handler "returns" with finish(). */
static ln_job *take(fake *f) {
    ln_job *job = ln__calloc(1, sizeof *job);
    CHECK(job != NULL);
    job->w = &f->w;
    job->slot = f->w.nslots;
    f->slots[f->w.nslots++] = job;
    return job;
}

static void finish(fake *f, ln_job *job) {
    job->next_finished = atomic_load(&f->w.finished);
    atomic_store(&f->w.finished, job);
}

TEST(waited_job_is_freed_unrecorded) {
    fake f;
    fake_init(&f);
    ln_job *a = take(&f), *b = take(&f);
    a->waited = 1; /* ln_job_wait_children returned 1 */
    finish(&f, a);
    finish(&f, b); /* an ordinary outcome */
    ln__worker_collect(&f.w);
    CHECK_EQ(f.w.nslots, 1);
    CHECK(f.slots[0] == b);
    CHECK_EQ(f.w.nunrecorded, 1); /* only b's outcome is to be recorded */
    CHECK(f.unrecorded[0] == b);
    CHECK_EQ(f.w.stats.waited, 1);
    CHECK_EQ(f.w.nwaited, 0);
    CHECK_EQ(ln__worker_running(&f.w), 0);
    ln__worker_outcome_done(&f.w, b);
    CHECK_EQ(f.w.nslots, 0);
}

TEST(waited_job_with_renewal_in_flight_waits_for_it) {
    fake f;
    fake_init(&f);
    ln_job *a = take(&f), *busy = take(&f);
    a->renew_sent = 1; /* a step in flight renews its lease */
    a->waited = 1;
    finish(&f, a);
    ln__worker_collect(&f.w);
    CHECK_EQ(f.w.nslots, 2); /* kept: the step refers to it */
    CHECK_EQ(f.w.nwaited, 1);
    CHECK(a->collected);
    CHECK(atomic_load(&a->canceled)); /* no renewal, timeout or poll again */
    CHECK_EQ(f.w.nunrecorded, 0);
    ln__worker_waited_sweep(&f.w); /* another step received: still kept */
    CHECK_EQ(f.w.nslots, 2);
    a->renew_sent = 0; /* its step was received: ln__steps_recv sweeps */
    ln__worker_waited_sweep(&f.w);
    CHECK_EQ(f.w.nslots, 1);
    CHECK(f.slots[0] == busy); /* a running job is left alone */
    CHECK_EQ(f.w.nwaited, 0);
    CHECK_EQ(f.w.stats.waited, 1);
    finish(&f, busy);
    ln__worker_collect(&f.w);
    CHECK_EQ(f.w.nunrecorded, 1);
    ln__worker_outcome_done(&f.w, busy);
    CHECK_EQ(f.w.nslots, 0);
}

TEST(waited_job_seen_gone_by_a_poll_counts_as_waited) {
    fake f;
    fake_init(&f);
    ln_job *a = take(&f);
    a->waited = 1;
    atomic_store(&a->canceled, 1); /* a cancel poll found it no longer active */
    finish(&f, a);
    ln__worker_collect(&f.w);
    CHECK_EQ(f.w.nslots, 0);
    CHECK_EQ(f.w.stats.waited, 1);
}

TEST(timed_out_job_keeps_its_timeout) {
    fake f;
    fake_init(&f);
    ln_job *a = take(&f);
    /* the timeout fired first (fire_timeout): its failure is the outcome */
    a->timed_out = a->collected = 1;
    atomic_store(&a->canceled, 1);
    f.unrecorded[f.w.nunrecorded++] = a;
    f.w.nhung_out = 1;
    a->waited = 1; /* then the handler waited and returned */
    finish(&f, a);
    ln__worker_collect(&f.w);
    CHECK_EQ(f.w.stats.waited, 0);
    CHECK_EQ(f.w.nslots, 1); /* freed once the failure is stored */
    ln__worker_outcome_done(&f.w, a);
    CHECK_EQ(f.w.nslots, 0);
}

int main(int argc, char **argv) {
    static const ln_test_case cases[] = {TESTCASE(waited_job_is_freed_unrecorded),
                                         TESTCASE(waited_job_with_renewal_in_flight_waits_for_it),
                                         TESTCASE(waited_job_seen_gone_by_a_poll_counts_as_waited),
                                         TESTCASE(timed_out_job_keeps_its_timeout),
                                         {0}};
    return ln_test_run(argc, argv, cases);
}
