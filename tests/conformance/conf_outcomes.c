/* conf_outcomes.c - outcomes beyond complete and fail (jobs.h):
 * ln_job_fail_unrecoverable fails the job for good whatever attempts
 * remain; ln_job_delay_until puts it back to delayed until a time without
 * using an attempt, and it runs again once due. */
#include "conf.h"

#include <time.h>

/* Wall-clock ms since the epoch: the stores' clock (the SQLite store
 * reads the system clock, the Redis store the server's, on this machine). */
static int64_t wall_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The job's name is its script: the character at ln_job_attempt() - 1
 * says what that run does: 'c' completes, 'f' fails (ln_job_fail), 'u'
 * fails unrecoverably, 'd' delays 40 ms, 'D' delays 60 s (then the time
 * asked goes to *(int64_t *)ctx), 'z' delays and returns a failure code
 * (the delay wins). Past the end: completes. */
static int script_handler(ln_job *job, void *ctx) {
    const char *script = ln_job_name(job);
    int n = ln_job_attempt(job);
    char act = n >= 1 && (size_t)n <= strlen(script) ? script[n - 1] : 'c';
    switch (act) {
    case 'f':
        return ln_job_fail(job, "plain failure");
    case 'u':
        return ln_job_fail_unrecoverable(job, "cannot ever work");
    case 'd':
        return ln_job_delay_until(job, wall_ms() + 40);
    case 'z':
        (void)ln_job_delay_until(job, wall_ms() + 40);
        return ln_job_fail(job, "ignored");
    case 'D': {
        int64_t at = wall_ms() + 60000;
        if (ctx != NULL) *(int64_t *)ctx = at;
        return ln_job_delay_until(job, at);
    }
    default:
        return ln_job_set_result(job, "\"done\"");
    }
}

static void get_job(conf_ctx *c, const char *id, ln_job_info *info) {
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, id, info), 0);
}

static void add_script(conf_ctx *c, const char *script, int attempts, char *id) {
    ln_job_opts jo;
    ln_job_opts_init(&jo);
    jo.attempts = attempts;
    conf_add(c, c->queue, script, NULL, &jo, id);
}

/* An unrecoverable failure on the first run fails the job at once, with
 * four attempts left unused. */
void case_unrecoverable_fails_after_one_attempt(conf_ctx *c) {
    char id[LN_JOB_ID_MAX];
    add_script(c, "u", 5, id);
    ln_worker_opts o;
    conf_worker_opts(&o);
    ln_worker_stats st = conf_run(c, c->queue, script_handler, NULL, &o);
    CHECK_EQ(st.failed, 1);
    CHECK_EQ(st.retried, 0);
    CHECK_EQ(st.taken, 1);
    ln_job_info info;
    get_job(c, id, &info);
    CHECK_EQ(info.state, LN_JOB_FAILED);
    CONF_CHECK_STR(info.failed_reason, "cannot ever work");
    CHECK_EQ(info.attempts_made, 1);
    CHECK_EQ(info.attempts_started, 1);
    ln_job_info_clear(&info);
}

/* Under retries: a plain failure is retried, the unrecoverable one that
 * follows ends the job with attempts still left. */
void case_unrecoverable_after_a_retry(conf_ctx *c) {
    char id[LN_JOB_ID_MAX];
    add_script(c, "fuc", 5, id);
    ln_worker_opts o;
    conf_worker_opts(&o);
    ln_worker_stats st = conf_run(c, c->queue, script_handler, NULL, &o);
    CHECK_EQ(st.retried, 1);
    CHECK_EQ(st.failed, 1);
    CHECK_EQ(st.completed, 0);
    ln_job_info info;
    get_job(c, id, &info);
    CHECK_EQ(info.state, LN_JOB_FAILED);
    CONF_CHECK_STR(info.failed_reason, "cannot ever work");
    CHECK_EQ(info.attempts_made, 2);
    ln_job_info_clear(&info);
}

/* delay_until: the job is delayed until the time asked, with no attempt
 * used, no reason or result stored and its lease released (a remove
 * works, which refuses active jobs). */
void case_delay_until_goes_to_delayed(conf_ctx *c) {
    char id[LN_JOB_ID_MAX];
    add_script(c, "D", 1, id);
    int64_t at = 0;
    ln_worker_opts o;
    conf_worker_opts(&o);
    o.max_jobs = 1; /* the job stays delayed: exit_when_empty would wait */
    ln_worker_stats st = conf_run(c, c->queue, script_handler, &at, &o);
    CHECK_EQ(st.delayed, 1);
    CHECK_EQ(st.completed + st.failed + st.retried + st.stale, 0);
    CHECK(at > 0);
    ln_job_info info;
    get_job(c, id, &info);
    CHECK_EQ(info.state, LN_JOB_DELAYED);
    CHECK_EQ(info.run_at_ms, at);
    CHECK_EQ(info.attempts_made, 0);
    CHECK_EQ(info.attempts_started, 1);
    CHECK(info.failed_reason == NULL);
    CHECK(info.result == NULL);
    ln_job_info_clear(&info);
    ln_job_counts n;
    CHECK_EQ(ln_jobs_counts(c->jobs, c->queue, &n), 0);
    CHECK_EQ(n.delayed, 1);
    CHECK_EQ(n.active, 0);
    conf_check_counts(c, c->queue);
    CHECK_EQ(ln_jobs_remove(c->jobs, c->queue, id), 0);
}

/* A delayed job runs again once due, and with attempts = 1 it still
 * completes: the delay used no attempt. Its return code is ignored. */
void case_delay_until_runs_again(conf_ctx *c) {
    char id[LN_JOB_ID_MAX], id2[LN_JOB_ID_MAX];
    add_script(c, "dc", 1, id);
    add_script(c, "zc", 1, id2);
    ln_worker_opts o;
    conf_worker_opts(&o);
    ln_worker_stats st = conf_run(c, c->queue, script_handler, NULL, &o);
    CHECK_EQ(st.delayed, 2);
    CHECK_EQ(st.completed, 2);
    CHECK_EQ(st.failed + st.retried, 0);
    const char *ids[2] = {id, id2};
    for (int i = 0; i < 2; i++) {
        ln_job_info info;
        get_job(c, ids[i], &info);
        CHECK_EQ(info.state, LN_JOB_COMPLETED);
        CONF_CHECK_STR(info.result, "\"done\"");
        CHECK_EQ(info.attempts_made, 0);
        CHECK_EQ(info.attempts_started, 2);
        ln_job_info_clear(&info);
    }
}

/* Under retries: fail, delay, fail, complete with attempts = 3 is four
 * runs; the delay between the failures counted no attempt. */
void case_delay_until_under_retries(conf_ctx *c) {
    char id[LN_JOB_ID_MAX];
    add_script(c, "fdfc", 3, id);
    ln_worker_opts o;
    conf_worker_opts(&o);
    ln_worker_stats st = conf_run(c, c->queue, script_handler, NULL, &o);
    CHECK_EQ(st.retried, 2);
    CHECK_EQ(st.delayed, 1);
    CHECK_EQ(st.completed, 1);
    CHECK_EQ(st.failed, 0);
    ln_job_info info;
    get_job(c, id, &info);
    CHECK_EQ(info.state, LN_JOB_COMPLETED);
    CHECK_EQ(info.attempts_made, 2);
    CHECK_EQ(info.attempts_started, 4);
    ln_job_info_clear(&info);
    conf_check_counts(c, c->queue);
}
