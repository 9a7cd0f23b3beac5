/* conf_max_started.c - a worker's max_started_attempts (BullMQ's worker
 * option maxStartedAttempts): a failed run of a job started that many
 * times is not retried, and a job taken after more starts than that fails
 * for good without running. */
#include "conf.h"

typedef struct runs {
    atomic_int n;
} runs;

/* Delays its job to now on its first run (a start without an attempt
 * used: it comes back), fails on any later one. */
static int delay_once(ln_job *job, void *ctx) {
    runs *r = ctx;
    if (atomic_fetch_add(&r->n, 1) == 0) return ln_job_delay_until(job, 0);
    return ln_job_fail(job, "ran again");
}

static ln_worker_stats run_max(conf_ctx *c, unsigned max, ln_job_handler fn, void *ctx) {
    ln_worker_opts o;
    conf_worker_opts(&o);
    o.max_started_attempts = max;
    return conf_run(c, c->queue, fn, ctx, &o);
}

/* attempts 3, max 1: the first failure is final. */
void case_max_started_no_retry(conf_ctx *c) {
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.attempts = 3;
    o.job_id = "b";
    conf_add(c, c->queue, "bad", "{}", &o, NULL);
    ln_worker_stats st = run_max(c, 1, conf_handler_by_name, NULL);
    CHECK_EQ(st.failed, 1);
    CHECK_EQ(st.retried, 0);
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, "b", &info), 0);
    CHECK_EQ(info.state, LN_JOB_FAILED);
    CHECK_EQ(info.attempts_made, 1);
    ln_job_info_clear(&info);
}

/* max 1: the job's second take (it delayed itself) fails it unrun. */
void case_max_started_fails_unrun(conf_ctx *c) {
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.attempts = 5;
    o.job_id = "d";
    conf_add(c, c->queue, "n", "{}", &o, NULL);
    static runs r;
    atomic_store(&r.n, 0);
    ln_worker_stats st = run_max(c, 1, delay_once, &r);
    CHECK_EQ(atomic_load(&r.n), 1);
    CHECK_EQ(st.failed, 1);
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, "d", &info), 0);
    CHECK_EQ(info.state, LN_JOB_FAILED);
    CONF_CHECK_STR(info.failed_reason, "job started more than allowable limit");
    CHECK_EQ(info.attempts_started, 2);
    ln_job_info_clear(&info);
    conf_check_counts(c, c->queue);
}

/* 0, the default: no limit (the same job runs again and completes). */
static int delay_then_ok(ln_job *job, void *ctx) {
    runs *r = ctx;
    if (atomic_fetch_add(&r->n, 1) == 0) return ln_job_delay_until(job, 0);
    return 0;
}

void case_max_started_off(conf_ctx *c) {
    conf_add(c, c->queue, "n", "{}", NULL, NULL);
    static runs r;
    atomic_store(&r.n, 0);
    ln_worker_stats st = run_max(c, 0, delay_then_ok, &r);
    CHECK_EQ(atomic_load(&r.n), 2);
    CHECK_EQ(st.completed, 1);
}
