/* conf_review2.c - the second review of wave 1 (dedup keep-last and
 * reschedule, `lanes worker --exec`, the dashboard) and ln_jobs_wait's
 * race with a retention: a job that finished and went (removed by its
 * own retention) between the follower's last read and the wait's read of
 * the job is that outcome, not LN_ENOENT. */
#include "conf.h"

#include "jobs/front.h" /* ln__jobs_wait_gone: the race's side, made at will */

static int finish(ln_job *job, void *ctx) {
    (void)ctx;
    if (strcmp(ln_job_name(job), "bad") == 0) return ln_job_fail(job, "broke");
    return ln_job_set_result(job, "{\"n\":7}");
}

/* A wait that finds its job gone reads the follower's pending events
 * first: a completion or final failure written before the retention
 * removed the job is the outcome; a job removed unfinished is LN_ENOENT.
 * Without that read, ln_jobs_wait answered LN_ENOENT for a job that
 * completed (and was removed by removeOnComplete) just after the
 * follower's last read. */
static void case_wait_gone_reads_pending_outcome(conf_ctx *c) {
    ln_jobs_events *ev = NULL, *ev2 = NULL; /* (the outcomes come in either order) */
    CHECK_EQ(ln_jobs_events_open(c->jobs, c->queue, NULL, &ev), 0);
    CHECK_EQ(ln_jobs_events_open(c->jobs, c->queue, NULL, &ev2), 0);
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.remove_on_complete.mode = LN_KEEP_NONE;
    o.remove_on_fail.mode = LN_KEEP_NONE;
    char ok[LN_JOB_ID_MAX], bad[LN_JOB_ID_MAX], gone[LN_JOB_ID_MAX];
    CHECK_EQ(ln_jobs_add(c->jobs, c->queue, "ok", "{}", &o, ok, sizeof ok), 0);
    CHECK_EQ(ln_jobs_add(c->jobs, c->queue, "bad", "{}", &o, bad, sizeof bad), 0);
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    (void)conf_run(c, c->queue, finish, NULL, &wo);
    o.delay_ms = 3600000;
    CHECK_EQ(ln_jobs_add(c->jobs, c->queue, "gone", "{}", &o, gone, sizeof gone), 0);
    SAYS(c->jobs, 0, ln_jobs_remove(c->jobs, c->queue, gone));
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, ok, &info), LN_ENOENT);

    CHECK_EQ(ln__jobs_wait_gone(c->jobs, ev, c->queue, ok, &info), 0);
    CHECK_EQ(info.state, LN_JOB_COMPLETED);
    CONF_CHECK_STR(info.result, "{\"n\":7}");
    ln_job_info_clear(&info);
    CHECK_EQ(ln__jobs_wait_gone(c->jobs, ev2, c->queue, bad, &info), 0);
    CHECK_EQ(info.state, LN_JOB_FAILED);
    CONF_CHECK_STR(info.failed_reason, "broke");
    ln_job_info_clear(&info);
    CHECK_EQ(ln__jobs_wait_gone(c->jobs, ev, c->queue, gone, &info), LN_ENOENT);
    CONF_CHECK_HAS(ln_jobs_errmsg(c->jobs), "was removed");
    ln_jobs_events_close(ev);
    ln_jobs_events_close(ev2);
    /* and a wait on a job long gone is still LN_ENOENT */
    CHECK_EQ(ln_jobs_wait(c->jobs, c->queue, ok, 0, &info), LN_ENOENT);
}

const conf_case conf_review2_cases[] = {
    CONF_CASE(wait_gone_reads_pending_outcome),
    {0},
};
