/* conf_stale_stats.c - ln_worker_stats.stale counts leases the worker
 * lost, not a job its own handler moved to waiting-children
 * (ln_job_wait_children): that one is counted as waited, also when a
 * lease renewal (or a cancel poll) that finds it no longer held goes out
 * before its handler returns. */
#include "conf.h"

typedef struct waiter {
    conf_ctx *c;
    const char *kids;
    int wait_rc, saw_cancel;
} waiter;

/* "p": add a child in another queue (so it stays pending), wait for it,
 * then return only once the worker, renewing the lease, found the job no
 * longer held (ln_job_canceled), at most 5 s. */
static int wait_then_hold(ln_job *job, void *ctx) {
    waiter *s = ctx;
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.parent_queue = ln_job_queue(job);
    o.parent_id = ln_job_id(job);
    if (ln_jobs_add(s->c->jobs, s->kids, "k", "1", &o, NULL, 0) != 0)
        return ln_job_fail(job, "add");
    s->wait_rc = ln_job_wait_children(job);
    int64_t end = conf_deadline(5000);
    while (!ln_job_canceled(job) && conf_now_ms() < end) ln_test_sleep_ms(5);
    s->saw_cancel = ln_job_canceled(job);
    return 0;
}

void case_stale_not_for_waited(conf_ctx *c) {
    waiter s = {.c = c, .kids = conf_queue(c, "kids")};
    conf_add(c, c->queue, "p", NULL, NULL, NULL);
    ln_worker_opts o;
    conf_worker_opts(&o);
    o.lease_ms = 200; /* renewed every ~100 ms while the handler runs */
    ln_worker_stats st = conf_run(c, c->queue, wait_then_hold, &s, &o);
    CHECK_EQ(s.wait_rc, 1);
    CHECK_EQ(s.saw_cancel, 1); /* a renewal or poll found it moved */
    CHECK_EQ(st.waited, 1);
    CHECK_EQ(st.stale, 0);
    CHECK_EQ(st.completed + st.failed + st.retried, 0);
    CHECK_EQ(conf_total(c, s.kids), 1);
}
