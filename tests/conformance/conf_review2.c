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
void case_wait_gone_reads_pending_outcome(conf_ctx *c) {
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

/* Holds a run until released; the first attempt then fails, a later one
 * completes. */
static int hold_then(ln_job *job, void *ctx) {
    conf_hold *h = ctx;
    atomic_fetch_add(&h->entered, 1);
    int64_t end = conf_deadline(5000);
    while (!atomic_load(&h->release) && conf_now_ms() < end) ln_test_sleep_ms(1);
    if (ln_job_attempt(job) == 1 && strcmp(ln_job_name(job), "retried") == 0)
        return ln_job_fail(job, "once");
    return ln_job_set_result(job, "1");
}

/* A worker in the background whose first job is running in hold_then. */
static conf_bg *start_holding(conf_ctx *c, conf_hold *hold) {
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    conf_bg *w = conf_bg_start(c->jobs, c->queue, hold_then, hold, &wo);
    conf_hold_wait(hold, 1);
    return w;
}

static void add_kl(conf_ctx *c, const char *name, ln_job_opts *o, char *id) {
    o->dedup_id = "kl2";
    o->dedup_keep_last_if_active = 1;
    SAYS(c->jobs, 0, ln_jobs_add(c->jobs, c->queue, name, "{}", o, id, LN_JOB_ID_MAX));
}

/* The kept add keeps its own options when it becomes a job: a custom id,
 * a delay, a priority, its attempts; the holder removed by its retention
 * as it completes still adds it; the job added holds the id. */
void case_dedup_next_kept_options(conf_ctx *c) {
    char h[LN_JOB_ID_MAX], a[LN_JOB_ID_MAX];
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.remove_on_complete.mode = LN_KEEP_NONE;
    add_kl(c, "first", &o, h);
    conf_hold hold = {0};
    conf_bg *w = start_holding(c, &hold);
    ln_job_opts_init(&o);
    o.job_id = "nxt";
    o.delay_ms = 3600000;
    o.priority = 5;
    o.attempts = 3;
    add_kl(c, "kept", &o, a);
    CONF_CHECK_STR(a, h);
    atomic_store(&hold.release, 1);
    ln_job_info info;
    int64_t end = conf_deadline(5000); /* the kept job is delayed: stop the worker */
    while (ln_jobs_get(c->jobs, c->queue, "nxt", &info) != 0 && conf_now_ms() < end)
        ln_test_sleep_ms(2);
    ln_job_info_clear(&info);
    ln_worker_stop(conf_bg_worker(w));
    CHECK_EQ(conf_bg_join(w, NULL), 0);
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, h, &info), LN_ENOENT);
    SAYS(c->jobs, 0, ln_jobs_get(c->jobs, c->queue, "nxt", &info));
    CHECK_EQ(info.state, LN_JOB_DELAYED);
    CHECK_EQ(info.priority, 5);
    CHECK_EQ(info.attempts, 3);
    CONF_CHECK_STR(info.name, "kept");
    ln_job_info_clear(&info);
    CHECK_EQ(conf_total(c, c->queue), 1);
    conf_check_counts(c, c->queue);
    ln_job_opts_init(&o);
    add_kl(c, "later", &o, a); /* held by the kept job now */
    CONF_CHECK_STR(a, "nxt");
    CHECK_EQ(conf_total(c, c->queue), 1);
}

/* A holder whose run fails with attempts left is retried, not finished:
 * the kept add waits until the retry completes, then is added once. */
void case_dedup_next_retried_holder(conf_ctx *c) {
    char h[LN_JOB_ID_MAX], a[LN_JOB_ID_MAX];
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.attempts = 2;
    add_kl(c, "retried", &o, h);
    conf_hold hold = {0};
    conf_bg *w = start_holding(c, &hold);
    ln_job_opts_init(&o);
    add_kl(c, "kept", &o, a);
    CONF_CHECK_STR(a, h);
    atomic_store(&hold.release, 1);
    CHECK_EQ(conf_bg_join(w, NULL), 0);
    CHECK_EQ(atomic_load(&hold.entered), 3); /* holder twice, the kept job once */
    CHECK_EQ(conf_total(c, c->queue), 2);
    CHECK_EQ(conf_state(c, c->queue, h), LN_JOB_COMPLETED);
    conf_check_counts(c, c->queue);
}

/* Removing a job that carries the dedup id but no longer holds it (its
 * TTL ran out and a keep-last add took the id) leaves the next job kept
 * for the holder, as BullMQ's removal (it drops the next job only when the
 * key names the removed job). The SQLite store's trigger dropped it for
 * any unfinished job of that dedup id, so the holder's finish added
 * nothing there while Redis added it. */
void case_dedup_next_remove_other_job(conf_ctx *c) {
    char old[LN_JOB_ID_MAX], h[LN_JOB_ID_MAX], a[LN_JOB_ID_MAX];
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.dedup_id = "kl2";
    o.dedup_ttl_ms = 30;
    o.delay_ms = 3600000;
    SAYS(c->jobs, 0, ln_jobs_add(c->jobs, c->queue, "old", "{}", &o, old, sizeof old));
    ln_test_sleep_ms(60); /* its TTL is over: the id is free */
    ln_job_opts_init(&o);
    add_kl(c, "holder", &o, h);
    CHECK(strcmp(h, old) != 0);
    conf_hold hold = {0};
    conf_bg *w = start_holding(c, &hold);
    add_kl(c, "kept", &o, a);
    CONF_CHECK_STR(a, h);
    SAYS(c->jobs, 0, ln_jobs_remove(c->jobs, c->queue, old));
    atomic_store(&hold.release, 1);
    CHECK_EQ(conf_bg_join(w, NULL), 0);
    CHECK_EQ(atomic_load(&hold.entered), 2); /* the holder, then the kept job */
    CHECK_EQ(conf_total(c, c->queue), 2);
    conf_check_counts(c, c->queue);
}

/* Removing the holder itself (delayed for a retry after a failed run,
 * its next job kept) drops the next job, as BullMQ's removal: a later
 * holder's finish adds only what was kept for it. */
static void remove_holder(conf_ctx *c, int drain) {
    char h[LN_JOB_ID_MAX], a[LN_JOB_ID_MAX];
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.attempts = 2;
    o.backoff_ms = 3600000;
    add_kl(c, "retried", &o, h);
    conf_hold hold = {0};
    conf_bg *w = start_holding(c, &hold);
    ln_job_opts_init(&o);
    add_kl(c, "kept", &o, a);
    CONF_CHECK_STR(a, h);
    atomic_store(&hold.release, 1);
    conf_wait_state(c, c->queue, h, LN_JOB_DELAYED, 5000);
    ln_worker_stop(conf_bg_worker(w));
    CHECK_EQ(conf_bg_join(w, NULL), 0);
    if (drain)
        SAYS(c->jobs, 0, ln_jobs_drain(c->jobs, c->queue, NULL));
    else
        SAYS(c->jobs, 0, ln_jobs_remove(c->jobs, c->queue, h));
    CHECK_EQ(conf_total(c, c->queue), 0);
    add_kl(c, "fresh", &o, a); /* the id is free: a new holder */
    CHECK(strcmp(a, h) != 0);
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    (void)conf_run(c, c->queue, conf_handler_by_name, NULL, &wo);
    CHECK_EQ(conf_total(c, c->queue), 1); /* not the dropped "kept" */
    CHECK_EQ(conf_state(c, c->queue, a), LN_JOB_COMPLETED);
}

void case_dedup_next_remove_holder(conf_ctx *c) {
    remove_holder(c, 0);
}

void case_dedup_next_drain_holder(conf_ctx *c) {
    remove_holder(c, 1); /* the drain takes delayed jobs too */
}
