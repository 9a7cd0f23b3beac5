/* conf_timeout.c - run timeouts (jobs.h "Timeouts"): a run past the
 * worker's timeout_ms, or the job's own, fails with "timed out after N ms"
 * (retried while attempts remain), its handler sees ln_job_canceled() == 1,
 * and what the handler returns afterwards changes nothing; a handler that
 * returns in time is not affected; a handler that hangs keeps its place
 * (its pool thread is busy) while the other places go on.
 *
 * Leases are long (10 s) in every case, so a failure that comes is the
 * timeout's, never a lapsed lease's. */
#include "conf.h"

/* What the handlers of these cases share with the case. */
typedef struct tctx {
    ln_jobs *jobs;
    const char *queue;
    atomic_int runs;       /* handler calls */
    atomic_int canceled;   /* runs that saw ln_job_canceled() == 1 */
    atomic_int returned;   /* runs that returned */
    atomic_int release;    /* "hang": set by the case to let it return */
    atomic_int cancel_ms;  /* how long the first run waited for the cancel */
    atomic_int early_flag; /* ln_job_canceled() was 1 at a run's start */
    char seen_reason[128]; /* "retry": failed_reason seen by attempt 2 */
} tctx;

/* Wait up to 10 s (scaled) for the cancel; the ms waited, or -1. */
static int wait_canceled(ln_job *job) {
    int64_t t0 = conf_now_ms(), end = conf_deadline(10000);
    while (!ln_job_canceled(job) && conf_now_ms() < end) ln_test_sleep_ms(2);
    return ln_job_canceled(job) ? (int)(conf_now_ms() - t0) : -1;
}

/* By job name:
 *  "wait"   waits for the cancel, then completes late with a result;
 *  "retry"  like "wait" on attempt 1; attempt 2 reads its failed_reason
 *           and completes;
 *  "hang"   ignores the cancel: returns only once release is set;
 *  "sleepN" sleeps N ms and completes with {"slept":N}. */
static int timeout_handler(ln_job *job, void *ctx) {
    tctx *t = ctx;
    atomic_fetch_add(&t->runs, 1);
    if (ln_job_canceled(job)) atomic_store(&t->early_flag, 1);
    const char *name = ln_job_name(job);
    int rc = 0;
    if (strcmp(name, "retry") == 0 && ln_job_attempt(job) >= 2) {
        ln_job_info info;
        if (ln_jobs_get(t->jobs, t->queue, ln_job_id(job), &info) == 0) {
            snprintf(t->seen_reason, sizeof t->seen_reason, "%s",
                     info.failed_reason ? info.failed_reason : "(none)");
            ln_job_info_clear(&info);
        }
        rc = ln_job_set_result(job, "\"second\"");
    } else if (strcmp(name, "wait") == 0 || strcmp(name, "retry") == 0) {
        int ms = wait_canceled(job);
        if (ms >= 0) atomic_fetch_add(&t->canceled, 1);
        if (atomic_load(&t->cancel_ms) == 0) atomic_store(&t->cancel_ms, ms);
        /* A late outcome: a result and success. It must not count. */
        (void)ln_job_set_result(job, "\"late\"");
    } else if (strcmp(name, "hang") == 0) {
        int64_t end = conf_deadline(20000);
        while (!atomic_load(&t->release) && conf_now_ms() < end) ln_test_sleep_ms(2);
        if (ln_job_canceled(job)) atomic_fetch_add(&t->canceled, 1);
        (void)ln_job_set_result(job, "\"late\"");
    } else if (strncmp(name, "sleep", 5) == 0) {
        int ms = atoi(name + 5);
        ln_test_sleep_ms((unsigned)ms);
        char res[64];
        snprintf(res, sizeof res, "{\"slept\":%d}", ms);
        rc = ln_job_set_result(job, res);
    }
    atomic_fetch_add(&t->returned, 1);
    return rc;
}

static void timeout_opts(ln_worker_opts *o, unsigned timeout_ms) {
    conf_worker_opts(o);
    o->lease_ms = 10000;
    o->timeout_ms = timeout_ms;
}

static void check_job(conf_ctx *c, const char *id, int state, const char *result,
                      const char *reason, int attempts_made) {
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, id, &info), 0);
    if (info.state != state)
        fprintf(stderr, "job %s: %s (%s)\n", id, ln_job_state_name(info.state),
                info.failed_reason ? info.failed_reason : "-");
    CHECK_EQ(info.state, state);
    CONF_CHECK_STR(info.result, result);
    if (reason != NULL) CONF_CHECK_STR(info.failed_reason, reason);
    CHECK_EQ(info.attempts_made, attempts_made);
    ln_job_info_clear(&info);
}

/* The worker's timeout fails a run that does not return, and the job is
 * retried (attempt 2 sees the reason of attempt 1) and completes. */
void case_worker_timeout_fails_and_retries(conf_ctx *c) {
    tctx t = {.jobs = c->jobs, .queue = c->queue};
    ln_job_opts jo;
    ln_job_opts_init(&jo);
    jo.attempts = 2;
    char id[LN_JOB_ID_MAX];
    conf_add(c, c->queue, "retry", NULL, &jo, id);
    ln_worker_opts o;
    timeout_opts(&o, 200);
    ln_worker_stats st = conf_run(c, c->queue, timeout_handler, &t, &o);
    CHECK_EQ(st.retried, 1);
    CHECK_EQ(st.completed, 1);
    CHECK_EQ(st.failed, 0);
    CHECK_EQ(atomic_load(&t.runs), 2);
    CHECK_EQ(atomic_load(&t.canceled), 1);
    CONF_CHECK_STR(t.seen_reason, "timed out after 200 ms");
    check_job(c, id, LN_JOB_COMPLETED, "\"second\"", NULL, 1);
}

/* The job's own timeout_ms wins over the worker's: a shorter one fails a
 * run the worker alone would let finish, a longer one lets a run finish
 * that the worker's would fail, and one without a worker timeout works. */
void case_job_timeout_overrides_worker(conf_ctx *c) {
    tctx t = {.jobs = c->jobs, .queue = c->queue};
    ln_job_opts jo;
    ln_job_opts_init(&jo);
    char shorter[LN_JOB_ID_MAX], longer[LN_JOB_ID_MAX], plain[LN_JOB_ID_MAX];
    jo.timeout_ms = 150;
    conf_add(c, c->queue, "wait", NULL, &jo, shorter);
    jo.timeout_ms = 20000;
    conf_add(c, c->queue, "sleep400", NULL, &jo, longer);
    conf_add(c, c->queue, "sleep1", NULL, NULL, plain);
    ln_worker_opts o;
    timeout_opts(&o, 300);
    ln_worker_stats st = conf_run(c, c->queue, timeout_handler, &t, &o);
    CHECK_EQ(st.completed, 2);
    CHECK_EQ(st.failed, 1);
    check_job(c, shorter, LN_JOB_FAILED, NULL, "timed out after 150 ms", 1);
    check_job(c, longer, LN_JOB_COMPLETED, "{\"slept\":400}", NULL, 0);
    check_job(c, plain, LN_JOB_COMPLETED, "{\"slept\":1}", NULL, 0);

    /* A worker without a timeout applies the job's. */
    const char *q2 = conf_queue(c, "2");
    tctx t2 = {.jobs = c->jobs, .queue = q2};
    jo.timeout_ms = 100;
    char id[LN_JOB_ID_MAX];
    conf_add(c, q2, "wait", NULL, &jo, id);
    timeout_opts(&o, 0);
    st = conf_run(c, q2, timeout_handler, &t2, &o);
    CHECK_EQ(st.failed, 1);
    CHECK_EQ(atomic_load(&t2.canceled), 1);
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(c->jobs, q2, id, &info), 0);
    CHECK_EQ(info.state, LN_JOB_FAILED);
    CONF_CHECK_STR(info.failed_reason, "timed out after 100 ms");
    ln_job_info_clear(&info);
}

/* ln_job_canceled() is 0 while the run is in time and turns 1 when the
 * timeout passes: not before it, and long before the lease would lapse. */
void case_timeout_cancels_the_handler(conf_ctx *c) {
    tctx t = {.jobs = c->jobs, .queue = c->queue};
    char id[LN_JOB_ID_MAX];
    conf_add(c, c->queue, "wait", NULL, NULL, id);
    ln_worker_opts o;
    timeout_opts(&o, 250);
    ln_worker_stats st = conf_run(c, c->queue, timeout_handler, &t, &o);
    CHECK_EQ(st.failed, 1);
    CHECK_EQ(atomic_load(&t.early_flag), 0);
    CHECK_EQ(atomic_load(&t.canceled), 1);
    int ms = atomic_load(&t.cancel_ms);
    if (ms < 240 || ms > 5000) fprintf(stderr, "canceled after %d ms\n", ms);
    CHECK(ms >= 240);  /* the timeout counts from the run's start */
    CHECK(ms <= 5000); /* and the dispatcher fires it (lease: 10 s) */
}

/* A handler that returns in time is not affected: result and state as
 * without a timeout, nothing failed, the handler never saw a cancel. */
void case_in_time_is_unaffected(conf_ctx *c) {
    tctx t = {.jobs = c->jobs, .queue = c->queue};
    char ids[3][LN_JOB_ID_MAX];
    for (int i = 0; i < 3; i++) conf_add(c, c->queue, "sleep30", NULL, NULL, ids[i]);
    ln_worker_opts o;
    timeout_opts(&o, 3000);
    o.concurrency = 2;
    ln_worker_stats st = conf_run(c, c->queue, timeout_handler, &t, &o);
    CHECK_EQ(st.completed, 3);
    CHECK_EQ(st.failed + st.retried + st.stale, 0);
    CHECK_EQ(atomic_load(&t.early_flag), 0);
    for (int i = 0; i < 3; i++) check_job(c, ids[i], LN_JOB_COMPLETED, "{\"slept\":30}", NULL, 0);
}

/* What the handler does after its timeout (a result, success) does not
 * change the failure recorded when the timeout fired. */
void case_late_return_keeps_the_outcome(conf_ctx *c) {
    tctx t = {.jobs = c->jobs, .queue = c->queue};
    char id[LN_JOB_ID_MAX];
    conf_add(c, c->queue, "wait", NULL, NULL, id);
    ln_worker_opts o;
    timeout_opts(&o, 150);
    ln_worker_stats st = conf_run(c, c->queue, timeout_handler, &t, &o);
    CHECK_EQ(st.failed, 1);
    CHECK_EQ(st.completed, 0);
    CHECK_EQ(atomic_load(&t.returned), 1);
    check_job(c, id, LN_JOB_FAILED, NULL, "timed out after 150 ms", 1);
    conf_check_counts(c, c->queue);
}

/* A handler that ignores the cancel: its failure is recorded when the
 * timeout fires, not when it returns; it keeps its place (concurrency 2:
 * the other jobs run on the one left) until it returns, and the run ends
 * only after that. */
void case_hung_handler_keeps_its_place(conf_ctx *c) {
    tctx t = {.jobs = c->jobs, .queue = c->queue};
    char hang[LN_JOB_ID_MAX], ids[4][LN_JOB_ID_MAX];
    conf_add(c, c->queue, "hang", NULL, NULL, hang);
    for (int i = 0; i < 4; i++) conf_add(c, c->queue, "sleep20", NULL, NULL, ids[i]);
    ln_worker_opts o;
    timeout_opts(&o, 200);
    o.concurrency = 2;
    conf_bg *b = conf_bg_start(c->jobs, c->queue, timeout_handler, &t, &o);
    conf_wait_state(c, c->queue, hang, LN_JOB_FAILED, 5000);
    for (int i = 0; i < 4; i++) conf_wait_state(c, c->queue, ids[i], LN_JOB_COMPLETED, 5000);
    CHECK_EQ(atomic_load(&t.returned), 4); /* the hung one has not */
    CHECK(!conf_bg_done(b));               /* it waits for it */
    atomic_store(&t.release, 1);
    ln_worker_stats st;
    CHECK_EQ(conf_bg_join(b, &st), 0);
    CHECK_EQ(atomic_load(&t.returned), 5);
    CHECK_EQ(atomic_load(&t.canceled), 1);
    CHECK_EQ(st.completed, 4);
    CHECK_EQ(st.failed, 1);
    check_job(c, hang, LN_JOB_FAILED, NULL, "timed out after 200 ms", 1);
}

/* A timeout the stores cannot hold is refused. */
void case_timeout_bounds(conf_ctx *c) {
    ln_job_opts jo;
    ln_job_opts_init(&jo);
    jo.timeout_ms = -1;
    CHECK_EQ(ln_jobs_add(c->jobs, c->queue, "x", NULL, &jo, NULL, 0), LN_EINVAL);
    CONF_CHECK_HAS(ln_jobs_errmsg(c->jobs), "timeout");
    jo.timeout_ms = (int64_t)INT32_MAX + 1;
    CHECK_EQ(ln_jobs_add(c->jobs, c->queue, "x", NULL, &jo, NULL, 0), LN_EINVAL);
    CHECK_EQ(conf_total(c, c->queue), 0);
    ln_worker_opts o;
    timeout_opts(&o, (unsigned)INT32_MAX + 1u);
    ln_worker *w = NULL;
    CHECK_EQ(ln_worker_create(&w, c->jobs, c->queue, timeout_handler, NULL, &o), LN_EINVAL);
}
