/* conf_retry_finished.c - ln_jobs_retry_finished and
 * ln_jobs_retry_all_finished (BullMQ's job.retry(state) with
 * resetAttemptsMade, and queue.retryJobs({state, timestamp})) on every
 * store: a completed job runs again with its result cleared, the 'waiting'
 * event says where it came from, the bound of a retry of all holds, steps
 * of 1,000 add up, a flow child's result goes back to pending, and bad
 * input is refused. */
#include "conf.h"

#include <stdlib.h>
#include <time.h>

#define MANY 1100 /* more than one retry step of 1,000 */

/* Completes with {"run":N}, N counting the handler's runs of the job's
 * queue (ctx, an atomic_int); the first run of a job named "flaky" fails
 * with reason "first". */
static int count_runs(ln_job *job, void *ctx) {
    int n = atomic_fetch_add((atomic_int *)ctx, 1) + 1;
    if (strcmp(ln_job_name(job), "flaky") == 0 && ln_job_attempt(job) == 1)
        return ln_job_fail(job, "first");
    char buf[32];
    snprintf(buf, sizeof buf, "{\"run\":%d}", n);
    return ln_job_set_result(job, buf);
}

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* A completed job goes back to waiting: result, started_ms and finished_ms
 * cleared, attempts_made 0, a failed_reason of an earlier attempt kept (as
 * BullMQ keeps failedReason); its 'waiting' event says prev "completed";
 * it runs again and completes with the new result. The other state, an
 * unknown job and a state other than completed or failed are refused. */
void case_retry_completed_runs_again(conf_ctx *c) {
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.attempts = 2;
    char id[LN_JOB_ID_MAX], waiting[LN_JOB_ID_MAX];
    conf_add(c, c->queue, "flaky", "{}", &o, id);
    atomic_int runs = 0;
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    conf_run(c, c->queue, count_runs, &runs, &wo);
    ln_job_info info;
    SAYS(c->jobs, 0, ln_jobs_get(c->jobs, c->queue, id, &info));
    CHECK_EQ(info.state, LN_JOB_COMPLETED);
    CONF_CHECK_STR(info.result, "{\"run\":2}");
    CHECK_EQ(info.attempts_made, 1); /* the failed run (jobs.h) */
    ln_job_info_clear(&info);

    SAYS(c->jobs, LN_EINVAL, ln_jobs_retry(c->jobs, c->queue, id)); /* completed, not failed */
    ln_jobs *all = conf_open_all_events(c);
    ln_jobs_events *ev = NULL;
    CHECK_EQ(ln_jobs_events_open(all, c->queue, "$", &ev), 0);
    SAYS(all, 0, ln_jobs_retry_finished(all, c->queue, id, LN_JOB_COMPLETED));
    SAYS(c->jobs, 0, ln_jobs_get(c->jobs, c->queue, id, &info));
    CHECK_EQ(info.state, LN_JOB_WAITING);
    CHECK(info.result == NULL);
    CONF_CHECK_STR(info.failed_reason, "first");
    CHECK_EQ(info.attempts_made, 0);
    CHECK_EQ(info.started_ms, 0);
    CHECK_EQ(info.finished_ms, 0);
    ln_job_info_clear(&info);
    ln_job_event e;
    conf_next_named(ev, "waiting", &e);
    CONF_CHECK_STR(e.job_id, id);
    CONF_CHECK_HAS(e.fields, "\"prev\":\"completed\"");
    ln_job_event_clear(&e);
    SAYS(c->jobs, LN_EINVAL, ln_jobs_retry_finished(c->jobs, c->queue, id, LN_JOB_COMPLETED));

    conf_run(c, c->queue, count_runs, &runs, &wo);
    SAYS(c->jobs, 0, ln_jobs_get(c->jobs, c->queue, id, &info));
    CHECK_EQ(info.state, LN_JOB_COMPLETED);
    CONF_CHECK_STR(info.result, "{\"run\":3}"); /* ran once more: attempt 1 of a fresh budget */
    ln_job_info_clear(&info);

    conf_add(c, c->queue, "plain", "{}", NULL, waiting);
    SAYS(c->jobs, LN_EINVAL, ln_jobs_retry_finished(c->jobs, c->queue, waiting, LN_JOB_COMPLETED));
    SAYS(c->jobs, LN_EINVAL, ln_jobs_retry_finished(c->jobs, c->queue, id, LN_JOB_FAILED));
    SAYS(c->jobs, LN_ENOENT,
         ln_jobs_retry_finished(c->jobs, c->queue, "no-such-job", LN_JOB_COMPLETED));
    SAYS(c->jobs, LN_EINVAL, ln_jobs_retry_finished(c->jobs, c->queue, id, LN_JOB_ACTIVE));
    SAYS(c->jobs, LN_EINVAL, ln_jobs_retry_finished(c->jobs, c->queue, id, 99));
    SAYS(c->jobs, LN_EINVAL, ln_jobs_retry_finished(c->jobs, c->queue, NULL, LN_JOB_COMPLETED));
    size_t n = 7;
    SAYS(c->jobs, LN_EINVAL, ln_jobs_retry_all_finished(c->jobs, c->queue, LN_JOB_WAITING, -1, &n));
    CHECK_EQ(n, 0);
    SAYS(c->jobs, LN_EINVAL, ln_jobs_retry_all_finished(c->jobs, "", LN_JOB_COMPLETED, -1, &n));
    CHECK_EQ(conf_state(c, c->queue, id), LN_JOB_COMPLETED);
    conf_check_counts(c, c->queue);
    ln_jobs_events_close(ev);
    ln_jobs_close(all);
}

/* The bound of a retry of all: only the jobs that finished at or before
 * before_ms go (the oldest first); the rest stay completed until a retry
 * without a bound. Failed jobs are not touched by a retry of completed
 * ones, nor completed ones by a retry of failed ones. */
void case_retry_all_completed_by_time(conf_ctx *c) {
    char early[LN_JOB_ID_MAX], late[LN_JOB_ID_MAX], bad[LN_JOB_ID_MAX];
    ln_job_opts once;
    ln_job_opts_init(&once);
    once.attempts = 1;
    conf_add(c, c->queue, "early", "{}", NULL, early);
    conf_add(c, c->queue, "bad", "{}", &once, bad);
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    conf_run(c, c->queue, conf_handler_by_name, NULL, &wo);
    ln_job_info info;
    SAYS(c->jobs, 0, ln_jobs_get(c->jobs, c->queue, early, &info));
    int64_t bound = info.finished_ms;
    ln_job_info_clear(&info);
    CHECK(bound > 0);
    sleep_ms(20); /* the next job finishes later on the store's clock */
    conf_add(c, c->queue, "late", "{}", NULL, late);
    conf_run(c, c->queue, conf_handler_by_name, NULL, &wo);
    SAYS(c->jobs, 0, ln_jobs_get(c->jobs, c->queue, late, &info));
    CHECK(info.finished_ms > bound);
    ln_job_info_clear(&info);

    size_t n = 99;
    SAYS(c->jobs, 0, ln_jobs_retry_all_finished(c->jobs, c->queue, LN_JOB_COMPLETED, bound, &n));
    CHECK_EQ(n, 1);
    CHECK_EQ(conf_state(c, c->queue, early), LN_JOB_WAITING);
    CHECK_EQ(conf_state(c, c->queue, late), LN_JOB_COMPLETED);
    CHECK_EQ(conf_state(c, c->queue, bad), LN_JOB_FAILED);
    SAYS(c->jobs, 0, ln_jobs_retry_all_finished(c->jobs, c->queue, LN_JOB_COMPLETED, -1, &n));
    CHECK_EQ(n, 1);
    CHECK_EQ(conf_state(c, c->queue, late), LN_JOB_WAITING);
    CHECK_EQ(conf_state(c, c->queue, bad), LN_JOB_FAILED);
    SAYS(c->jobs, 0, ln_jobs_retry_all_finished(c->jobs, c->queue, LN_JOB_COMPLETED, -1, NULL));
    SAYS(c->jobs, 0, ln_jobs_retry_all_finished(c->jobs, c->queue, LN_JOB_FAILED, 0, &n));
    CHECK_EQ(n, 0); /* it failed after the epoch */
    SAYS(c->jobs, 0, ln_jobs_retry_all_finished(c->jobs, c->queue, LN_JOB_FAILED, -1, &n));
    CHECK_EQ(n, 1);
    ln_job_counts k;
    SAYS(c->jobs, 0, ln_jobs_counts(c->jobs, c->queue, &k));
    CHECK_EQ(k.waiting, 3);
    CHECK_EQ(k.completed + k.failed, 0);
    conf_check_counts(c, c->queue);
}

/* More completed jobs than one step moves: every one goes back, in the
 * order they finished, and each runs again. */
void case_retry_all_completed_in_steps(conf_ctx *c) {
    static ln_job_spec specs[MANY];
    for (size_t i = 0; i < MANY; i++) specs[i] = (ln_job_spec){"job", "{}", NULL};
    SAYS(c->jobs, 0, ln_jobs_add_bulk(c->jobs, c->queue, specs, MANY, NULL, 0));
    atomic_int runs = 0;
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    wo.concurrency = 8;
    conf_run(c, c->queue, count_runs, &runs, &wo);
    CHECK_EQ(atomic_load(&runs), MANY);
    size_t n = 0;
    SAYS(c->jobs, 0, ln_jobs_retry_all_finished(c->jobs, c->queue, LN_JOB_COMPLETED, -1, &n));
    CHECK_EQ(n, MANY);
    ln_job_counts k;
    SAYS(c->jobs, 0, ln_jobs_counts(c->jobs, c->queue, &k));
    CHECK_EQ(k.waiting, MANY);
    CHECK_EQ(k.completed, 0);
    conf_run(c, c->queue, count_runs, &runs, &wo);
    CHECK_EQ(atomic_load(&runs), 2 * MANY);
    SAYS(c->jobs, 0, ln_jobs_counts(c->jobs, c->queue, &k));
    CHECK_EQ(k.completed, MANY);
    conf_check_counts(c, c->queue);
}

/* The status of child id among the children of parent r. */
static int child_status(conf_ctx *c, const char *child, char **value) {
    ln_job_children kids;
    SAYS(c->jobs, 0, ln_jobs_children(c->jobs, c->queue, "r", &kids));
    int status = -1;
    for (size_t i = 0; i < kids.n; i++) {
        if (strcmp(kids.children[i].id, child) != 0) continue;
        status = kids.children[i].status;
        if (value) *value = kids.children[i].value ? strdup(kids.children[i].value) : NULL;
    }
    ln_job_children_clear(&kids);
    return status;
}

/* A completed flow child retried is its parent's pending dependency again
 * (its recorded result gone) while the parent stays where it went (BullMQ
 * moves it back neither); run again, the child's new result is what the
 * parent holds. */
void case_retry_completed_child_pending_again(conf_ctx *c) {
    const char *kq = conf_queue(c, "kids");
    ln_flow_node kid = {kq, "leaf", "{}", NULL, 0, 0, 0, 0, NULL, 0};
    ln_flow_node root = {c->queue, "root", "{}", NULL, 0, 0, 0, 0, &kid, 1};
    ln_job_opts ro;
    ln_job_opts_init(&ro);
    ro.job_id = "r";
    root.opts = &ro;
    char ids[2][LN_JOB_ID_MAX];
    SAYS(c->jobs, 0, ln_jobs_add_flow(c->jobs, &root, ids[0], 2, LN_JOB_ID_MAX));
    atomic_int runs = 0;
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    conf_run(c, kq, count_runs, &runs, &wo);
    CHECK_EQ(conf_state(c, c->queue, "r"), LN_JOB_WAITING);
    char *value = NULL;
    CHECK_EQ(child_status(c, ids[1], &value), LN_CHILD_PROCESSED);
    CONF_CHECK_STR(value, "{\"run\":1}");
    free(value);

    SAYS(c->jobs, 0, ln_jobs_retry_finished(c->jobs, kq, ids[1], LN_JOB_COMPLETED));
    CHECK_EQ(child_status(c, ids[1], NULL), LN_CHILD_PENDING);
    CHECK_EQ(conf_state(c, c->queue, "r"), LN_JOB_WAITING);
    conf_run(c, kq, count_runs, &runs, &wo);
    CHECK_EQ(child_status(c, ids[1], &value), LN_CHILD_PROCESSED);
    CONF_CHECK_STR(value, "{\"run\":2}");
    free(value);
    CHECK_EQ(conf_state(c, c->queue, "r"), LN_JOB_WAITING);
    conf_check_counts(c, c->queue);
    conf_check_counts(c, kq);
}
