/* conf_cancel.c - cancelling a job from another handle (jobs.h
 * ln_jobs_cancel): a running job's handler sees ln_job_canceled() == 1
 * within a second and the job ends failed "canceled" without a retry,
 * whatever the handler returns; a job not yet running is failed at once
 * and never runs; a finished job is refused (LN_EINVAL), an unknown one is
 * LN_ENOENT.
 *
 * Leases are long (10 s), so a cancel the handler sees is the cancel's,
 * never a lapsed lease's or a renewal's. */
#include "conf.h"

typedef struct cctx {
    atomic_int entered;   /* handler calls */
    atomic_int cancel_ms; /* ms from entering to seeing the cancel, or -1 */
} cctx;

/* Loops until its job is canceled (at most 10 s, scaled), then "succeeds"
 * with a result: an outcome that must change nothing. */
static int loop_handler(ln_job *job, void *ctx) {
    cctx *t = ctx;
    atomic_fetch_add(&t->entered, 1);
    int64_t t0 = conf_now_ms(), end = conf_deadline(10000);
    while (!ln_job_canceled(job) && conf_now_ms() < end) ln_test_sleep_ms(2);
    atomic_store(&t->cancel_ms, ln_job_canceled(job) ? (int)(conf_now_ms() - t0) : -1);
    (void)ln_job_set_result(job, "\"late\"");
    return 0;
}

static void wait_entered(cctx *t, int n) {
    int64_t end = conf_deadline(5000);
    while (atomic_load(&t->entered) < n && conf_now_ms() < end) ln_test_sleep_ms(1);
    CHECK(atomic_load(&t->entered) >= n);
}

/* The job is failed "canceled" with attempts_made failed runs. */
static void check_canceled(conf_ctx *c, const char *queue, const char *id, int attempts_made) {
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(c->jobs, queue, id, &info), 0);
    CHECK_EQ(info.state, LN_JOB_FAILED);
    CONF_CHECK_STR(info.failed_reason, LN_JOB_CANCELED_REASON);
    CHECK_EQ(info.attempts_made, attempts_made);
    CHECK(info.result == NULL);
    ln_job_info_clear(&info);
}

void case_cancel_running(conf_ctx *c) {
    ln_job_opts jo;
    ln_job_opts_init(&jo);
    jo.attempts = 3; /* a plain failure would be retried */
    char id[LN_JOB_ID_MAX];
    conf_add(c, c->queue, "loop", "{}", &jo, id);
    cctx t = {0};
    ln_worker_opts o;
    conf_worker_opts(&o);
    o.lease_ms = 10000;
    conf_bg *b = conf_bg_start(c->jobs, c->queue, loop_handler, &t, &o);
    wait_entered(&t, 1);
    CHECK_EQ(conf_state(c, c->queue, id), LN_JOB_ACTIVE);
    ln_jobs *other = conf_open(c, NULL); /* as another process would */
    int rc = ln_jobs_cancel(other, c->queue, id);
    if (rc != 0) fprintf(stderr, "cancel: %s\n", ln_jobs_errmsg(other));
    CHECK_EQ(rc, 0);
    /* Failed at once, before the handler even noticed. */
    check_canceled(c, c->queue, id, 1);
    ln_worker_stats st;
    CHECK_EQ(conf_bg_join(b, &st), 0);
    int ms = atomic_load(&t.cancel_ms);
    printf("handler saw the cancel after %d ms\n", ms);
    CHECK(ms >= 0);
    CHECK(ms < 1000 * (ln_test_sanitized() ? 8 : 1));
    /* One run only, no retry, and the late success changed nothing. */
    CHECK_EQ(atomic_load(&t.entered), 1);
    CHECK_EQ(st.taken, 1);
    CHECK_EQ(st.completed, 0);
    CHECK_EQ(st.retried, 0);
    check_canceled(c, c->queue, id, 1);
    /* A second cancel: the job is finished now. */
    CHECK_EQ(ln_jobs_cancel(other, c->queue, id), LN_EINVAL);
    /* The outcome is an event too: a wait returns it. */
    ln_job_info info;
    CHECK_EQ(ln_jobs_wait(other, c->queue, id, 1000, &info), 0);
    CHECK_EQ(info.state, LN_JOB_FAILED);
    CONF_CHECK_STR(info.failed_reason, LN_JOB_CANCELED_REASON);
    ln_job_info_clear(&info);
    ln_jobs_close(other);
    conf_check_counts(c, c->queue);
}

void case_cancel_waiting(conf_ctx *c) {
    ln_job_opts jo;
    ln_job_opts_init(&jo);
    jo.attempts = 3;
    char waiting[LN_JOB_ID_MAX], delayed[LN_JOB_ID_MAX], prio[LN_JOB_ID_MAX];
    conf_add(c, c->queue, "w", "{}", &jo, waiting);
    jo.delay_ms = 60000;
    conf_add(c, c->queue, "d", "{}", &jo, delayed);
    jo.delay_ms = 0;
    jo.priority = 5;
    conf_add(c, c->queue, "p", "{}", &jo, prio);
    CHECK_EQ(ln_jobs_cancel(c->jobs, c->queue, waiting), 0);
    CHECK_EQ(ln_jobs_cancel(c->jobs, c->queue, delayed), 0);
    CHECK_EQ(ln_jobs_cancel(c->jobs, c->queue, prio), 0);
    check_canceled(c, c->queue, waiting, 0); /* no run failed */
    check_canceled(c, c->queue, delayed, 0);
    check_canceled(c, c->queue, prio, 0);
    ln_job_counts n;
    CHECK_EQ(ln_jobs_counts(c->jobs, c->queue, &n), 0);
    CHECK_EQ(n.failed, 3);
    CHECK_EQ(n.waiting + n.delayed + n.prioritized + n.active, 0);
    conf_check_counts(c, c->queue);
    /* They never run. */
    cctx t = {0};
    ln_worker_opts o;
    conf_worker_opts(&o);
    ln_worker_stats st = conf_run(c, c->queue, loop_handler, &t, &o);
    CHECK_EQ(st.taken, 0);
    CHECK_EQ(atomic_load(&t.entered), 0);
    /* A paused queue's waiting job is canceled the same way. */
    conf_add(c, c->queue, "w2", "{}", NULL, waiting);
    CHECK_EQ(ln_jobs_pause(c->jobs, c->queue), 0);
    CHECK_EQ(ln_jobs_cancel(c->jobs, c->queue, waiting), 0);
    check_canceled(c, c->queue, waiting, 0);
    CHECK_EQ(ln_jobs_resume(c->jobs, c->queue), 0);
}

void case_cancel_unknown(conf_ctx *c) {
    CHECK_EQ(ln_jobs_cancel(c->jobs, c->queue, "no-such-job"), LN_ENOENT);
    CONF_CHECK_HAS(ln_jobs_errmsg(c->jobs), "no-such-job");
    CHECK_EQ(ln_jobs_cancel(c->jobs, c->queue, "987654321"), LN_ENOENT);
    CHECK_EQ(ln_jobs_cancel(c->jobs, c->queue, ""), LN_EINVAL);
    CHECK_EQ(ln_jobs_cancel(c->jobs, c->queue, NULL), LN_EINVAL);
    CHECK_EQ(ln_jobs_cancel(c->jobs, "bad:queue", "1"), LN_EINVAL);
    CHECK_EQ(ln_jobs_cancel(NULL, c->queue, "1"), LN_EINVAL);
    CHECK_EQ(conf_total(c, c->queue), 0);
}

void case_cancel_finished(conf_ctx *c) {
    char done[LN_JOB_ID_MAX], bad[LN_JOB_ID_MAX];
    conf_add(c, c->queue, "ok", "1", NULL, done);
    conf_add(c, c->queue, "bad", "1", NULL, bad);
    ln_worker_opts o;
    conf_worker_opts(&o);
    (void)conf_run(c, c->queue, conf_handler_by_name, NULL, &o);
    CHECK_EQ(ln_jobs_cancel(c->jobs, c->queue, done), LN_EINVAL);
    CONF_CHECK_HAS(ln_jobs_errmsg(c->jobs), "completed");
    CHECK_EQ(ln_jobs_cancel(c->jobs, c->queue, bad), LN_EINVAL);
    CONF_CHECK_HAS(ln_jobs_errmsg(c->jobs), "failed");
    /* Nothing changed. */
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, done, &info), 0);
    CHECK_EQ(info.state, LN_JOB_COMPLETED);
    ln_job_info_clear(&info);
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, bad, &info), 0);
    CHECK_EQ(info.state, LN_JOB_FAILED);
    CONF_CHECK_STR(info.failed_reason, "nope");
    ln_job_info_clear(&info);
}

/* remove_on_fail applies to a canceled job as to any failed one. */
void case_cancel_remove_on_fail(conf_ctx *c) {
    ln_job_opts jo;
    ln_job_opts_init(&jo);
    jo.remove_on_fail.mode = LN_KEEP_NONE;
    char id[LN_JOB_ID_MAX];
    conf_add(c, c->queue, "w", "{}", &jo, id);
    CHECK_EQ(ln_jobs_cancel(c->jobs, c->queue, id), 0);
    CHECK_EQ(conf_state(c, c->queue, id), LN_ENOENT);
    CHECK_EQ(conf_total(c, c->queue), 0);
}

/* Several running jobs of one worker, renewed often (lease 400 ms: a
 * renewal every 200 ms, so polls meet renewals in flight), and queued ones
 * behind them: each running handler sees its cancel, the queued ones
 * never run, every job ends failed "canceled". */
void case_cancel_many_running(conf_ctx *c) {
    enum { N = 8, CONC = 4 };
    char ids[N][LN_JOB_ID_MAX];
    for (int i = 0; i < N; i++) conf_add(c, c->queue, "loop", "{}", NULL, ids[i]);
    cctx t = {0};
    ln_worker_opts o;
    conf_worker_opts(&o);
    o.concurrency = CONC;
    o.lease_ms = 400;
    conf_bg *b = conf_bg_start(c->jobs, c->queue, loop_handler, &t, &o);
    wait_entered(&t, CONC);
    ln_test_sleep_ms(300); /* renewals and polls under way */
    ln_jobs *other = conf_open(c, NULL);
    int64_t t0 = conf_now_ms();
    for (int i = 0; i < N; i++) CHECK_EQ(ln_jobs_cancel(other, c->queue, ids[i]), 0);
    ln_worker_stats st;
    CHECK_EQ(conf_bg_join(b, &st), 0);
    int64_t ms = conf_now_ms() - t0;
    printf("%d running handlers saw their cancels; the worker ended %lld ms later\n", CONC,
           (long long)ms);
    CHECK(ms < 1500 * (ln_test_sanitized() ? 8 : 1));
    CHECK_EQ(atomic_load(&t.entered), CONC); /* the queued ones never ran */
    CHECK_EQ(st.taken, CONC);
    CHECK_EQ(st.completed, 0);
    for (int i = 0; i < N; i++) CHECK_EQ(conf_state(c, c->queue, ids[i]), LN_JOB_FAILED);
    ln_jobs_close(other);
    conf_check_counts(c, c->queue);
}
