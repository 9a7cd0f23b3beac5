/* conf_args.c - the argument checks of every call, on every store: a NULL
 * handle anywhere, the handle's strings, bad arguments of events, waits,
 * children and schedulers, of the calls a handler makes, and the bounds of
 * a worker's options. Each is refused with a message and changes nothing.
 * (Bad values of names, data and options: conf_badinput.c.) */
#include "conf.h"

#include <stdlib.h>

/* Handle-level strings: no warning for a NULL handle, an empty message
 * before any failure, and the follower's own empty message. */
void case_spec_handle_strings(conf_ctx *c) {
    CHECK(ln_jobs_warning(NULL) == NULL);
    ln_jobs *j = conf_open(c, NULL);
    CONF_CHECK_STR(ln_jobs_errmsg(j), "");
    const char *w1 = ln_jobs_warning(j), *w2 = ln_jobs_warning(j);
    CHECK(w1 == w2);
    ln_jobs_events *ev;
    CHECK_EQ(ln_jobs_events_open(j, c->queue, "$", &ev), 0);
    CONF_CHECK_STR(ln_jobs_events_errmsg(ev), "");
    ln_jobs_events_close(ev);
    ln_jobs_close(j);
}

/* ln_jobs_schedule's argument checks the scheduler cases leave out: the
 * id's bounds, negative times and limits, the template's name, data and
 * the options a scheduler sets itself. Each refused with a message,
 * nothing stored; the longest id is taken. */
static int sched_try(conf_ctx *c, const char *id, const ln_job_schedule *s, const char *name,
                     const char *data, const ln_job_opts *o) {
    char jid[LN_JOB_ID_MAX];
    return ln_jobs_schedule(c->jobs, c->queue, id, s, name, data, o, jid, sizeof jid);
}

void case_spec_schedule_arg_checks(conf_ctx *c) {
    ln_job_schedule s;
    ln_job_schedule_init(&s);
    s.every_ms = 600000;
    char id101[102], id100[101];
    memset(id101, 's', 101);
    id101[101] = '\0';
    memcpy(id100, id101, 100);
    id100[100] = '\0';
    SAYS(c->jobs, LN_EINVAL, sched_try(c, id101, &s, "n", NULL, NULL));
    SAYS(c->jobs, LN_EINVAL, sched_try(c, "", &s, "n", NULL, NULL));
    SAYS(c->jobs, LN_EINVAL, sched_try(c, NULL, &s, "n", NULL, NULL));
    SAYS(c->jobs, LN_EINVAL, sched_try(c, "a\tb", &s, "n", NULL, NULL));
    SAYS(c->jobs, LN_EINVAL, sched_try(c, "s", NULL, "n", NULL, NULL));
    SAYS(c->jobs, LN_EINVAL, sched_try(c, "s", &s, NULL, NULL, NULL));
    SAYS(c->jobs, LN_EINVAL, sched_try(c, "s", &s, "", NULL, NULL));
    SAYS(c->jobs, LN_EINVAL, sched_try(c, "s", &s, "n", "{bad", NULL));
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.job_id = "mine";
    SAYS(c->jobs, LN_EINVAL, sched_try(c, "s", &s, "n", NULL, &o));
    ln_job_opts_init(&o);
    o.dedup_id = "d";
    SAYS(c->jobs, LN_EINVAL, sched_try(c, "s", &s, "n", NULL, &o));
    ln_job_opts_init(&o);
    o.attempts = 0;
    SAYS(c->jobs, LN_EINVAL, sched_try(c, "s", &s, "n", NULL, &o));
    ln_job_schedule b = s;
    b.every_ms = -5;
    SAYS(c->jobs, LN_EINVAL, sched_try(c, "s", &b, "n", NULL, NULL));
    b = s;
    b.limit = -1;
    SAYS(c->jobs, LN_EINVAL, sched_try(c, "s", &b, "n", NULL, NULL));
    b = s;
    b.start_ms = -1;
    SAYS(c->jobs, LN_EINVAL, sched_try(c, "s", &b, "n", NULL, NULL));
    b = s;
    b.end_ms = -1;
    SAYS(c->jobs, LN_EINVAL, sched_try(c, "s", &b, "n", NULL, NULL));
    b = s; /* past a JavaScript Date: refused, never an overflow later */
    b.start_ms = 8640000000000001;
    SAYS(c->jobs, LN_EINVAL, sched_try(c, "s", &b, "n", NULL, NULL));
    b = s;
    b.end_ms = INT64_MAX;
    SAYS(c->jobs, LN_EINVAL, sched_try(c, "s", &b, "n", NULL, NULL));
    SAYS(c->jobs, LN_EINVAL, ln_jobs_schedule(c->jobs, "", "s", &s, "n", NULL, NULL, NULL, 0));
    CHECK_EQ(conf_total(c, c->queue), 0);
    ln_job_scheduler *list = NULL;
    size_t n = 9;
    CHECK_EQ(ln_jobs_scheduler_list(c->jobs, c->queue, 0, 10, &list, &n), 0);
    CHECK_EQ(n, 0);
    ln_job_scheduler got;
    SAYS(c->jobs, LN_EINVAL, ln_jobs_scheduler_get(c->jobs, c->queue, "", &got));
    SAYS(c->jobs, LN_EINVAL, ln_jobs_unschedule(c->jobs, c->queue, ""));
    SAYS(c->jobs, LN_EINVAL, ln_jobs_unschedule(c->jobs, c->queue, NULL));
    /* The longest id, and job_id NULL. */
    CHECK_EQ(ln_jobs_schedule(c->jobs, c->queue, id100, &s, "n", NULL, NULL, NULL, 0), 0);
    CHECK_EQ(ln_jobs_scheduler_get(c->jobs, c->queue, id100, &got), 0);
    CONF_CHECK_STR(got.id, id100);
    CONF_CHECK_STR(got.data, "{}");
    ln_job_scheduler_clear(&got);
    CHECK_EQ(conf_total(c, c->queue), 1);
}

/* The worker options' bounds jobs.h states: concurrency 1..4096, poll_ms
 * >= 1, timeout_ms and the rate limit 0..2^31-1, metrics_max_points up to
 * LN_JOB_METRICS_POINTS_MAX; the edges themselves are taken. */
void case_spec_worker_option_bounds(conf_ctx *c) {
    ln_worker_opts o;
    ln_worker *w = NULL;
    for (int i = 0; i < 4; i++) {
        ln_worker_opts_init(&o);
        if (i == 0) o.concurrency = 4097;
        if (i == 1) o.metrics_max_points = LN_JOB_METRICS_POINTS_MAX + 1;
        if (i == 2) o.rate_max = 5;
        if (i == 3) o.rate_max = 1, o.rate_duration_ms = (unsigned)INT32_MAX + 1u;
        SAYS(c->jobs, LN_EINVAL,
             ln_worker_create(&w, c->jobs, c->queue, conf_handler_by_name, NULL, &o));
        CHECK(w == NULL);
    }
    ln_worker_opts_init(&o);
    o.concurrency = 4096;
    o.batch = 9999; /* more than concurrency: concurrency */
    o.poll_ms = 1;
    o.timeout_ms = INT32_MAX;
    o.metrics_max_points = LN_JOB_METRICS_POINTS_MAX;
    o.rate_max = INT32_MAX, o.rate_duration_ms = INT32_MAX;
    o.exit_when_empty = 1;
    int rc = ln_worker_create(&w, c->jobs, c->queue, conf_handler_by_name, NULL, &o);
    if (rc != 0) fprintf(stderr, "worker: %s\n", ln_jobs_errmsg(c->jobs));
    CHECK_EQ(rc, 0);
    conf_add(c, c->queue, "n", "1", NULL, NULL);
    CHECK_EQ(ln_worker_run(w), 0);
    ln_worker_stats st;
    ln_worker_get_stats(w, &st);
    CHECK_EQ(st.completed, 1);
    ln_worker_destroy(w);
}

/* Every call of the feature headers refuses a NULL handle (no crash), and
 * their output pointers NULL. */
void case_spec_null_handle_everywhere(conf_ctx *c) {
    const char *q = c->queue;
    int64_t a = 0, b = 0;
    ln_job_schedule s;
    ln_job_schedule_init(&s);
    s.every_ms = 1000;
    ln_job_scheduler sc, *scs;
    ln_job_children ch;
    ln_job_metrics m;
    ln_worker_info *wi;
    size_t n;
    ln_flow_node root = {q, "n", NULL, NULL, 0, 0, 0, 0, NULL, 0};
    CHECK_EQ(ln_jobs_cancel(NULL, q, "x"), LN_EINVAL);
    CHECK_EQ(ln_jobs_promote(NULL, q, "x"), LN_EINVAL);
    CHECK_EQ(ln_jobs_set_rate_limit(NULL, q, 1, 1), LN_EINVAL);
    CHECK_EQ(ln_jobs_get_rate_limit(NULL, q, &a, &b), LN_EINVAL);
    CHECK_EQ(ln_jobs_set_concurrency(NULL, q, 1), LN_EINVAL);
    CHECK_EQ(ln_jobs_get_concurrency(NULL, q, &a), LN_EINVAL);
    CHECK_EQ(ln_jobs_rate_limit(NULL, q, 1), LN_EINVAL);
    CHECK_EQ(ln_jobs_rate_limit_ttl(NULL, q, 0, &a), LN_EINVAL);
    CHECK_EQ(ln_jobs_workers(NULL, q, &wi, &n), LN_EINVAL);
    CHECK_EQ(ln_jobs_metrics(NULL, q, LN_JOB_COMPLETED, 0, -1, &m), LN_EINVAL);
    CHECK_EQ(ln_jobs_add_flow(NULL, &root, NULL, 0, 0), LN_EINVAL);
    CHECK_EQ(ln_jobs_children(NULL, q, "x", &ch), LN_EINVAL);
    CHECK_EQ(ln_jobs_schedule(NULL, q, "s", &s, "n", NULL, NULL, NULL, 0), LN_EINVAL);
    CHECK_EQ(ln_jobs_unschedule(NULL, q, "s"), LN_EINVAL);
    CHECK_EQ(ln_jobs_scheduler_get(NULL, q, "s", &sc), LN_EINVAL);
    CHECK_EQ(ln_jobs_scheduler_list(NULL, q, 0, 1, &scs, &n), LN_EINVAL);
    CHECK_EQ(ln_jobs_queues(NULL, NULL, NULL), LN_EINVAL);
    CHECK_EQ(ln_jobs_add_flow(c->jobs, NULL, NULL, 0, 0), LN_EINVAL);
    SAYS(c->jobs, LN_EINVAL, ln_jobs_get_rate_limit(c->jobs, q, NULL, &b));
    SAYS(c->jobs, LN_EINVAL, ln_jobs_get_rate_limit(c->jobs, q, &a, NULL));
    SAYS(c->jobs, LN_EINVAL, ln_jobs_get_concurrency(c->jobs, q, NULL));
    SAYS(c->jobs, LN_EINVAL, ln_jobs_metrics(c->jobs, q, LN_JOB_COMPLETED, 0, -1, NULL));
    SAYS(c->jobs, LN_EINVAL, ln_jobs_rate_limit(c->jobs, q, -1));
    SAYS(c->jobs, LN_EINVAL, ln_jobs_rate_limit(c->jobs, q, (int64_t)INT32_MAX + 1));
    SAYS(c->jobs, LN_EINVAL, ln_jobs_set_concurrency(c->jobs, q, -1));
    SAYS(c->jobs, LN_EINVAL, ln_jobs_set_concurrency(c->jobs, q, (int64_t)INT32_MAX + 1));
    SAYS(c->jobs, LN_EINVAL, ln_jobs_set_rate_limit(c->jobs, q, 1, 0));
    SAYS(c->jobs, LN_EINVAL, ln_jobs_set_rate_limit(c->jobs, q, 0, 1));
    SAYS(c->jobs, LN_EINVAL, ln_jobs_set_rate_limit(c->jobs, q, -1, -1));
    CHECK_EQ(ln_jobs_set_rate_limit(c->jobs, q, 0, 0), 0);
    CHECK_EQ(ln_jobs_set_concurrency(c->jobs, q, 0), 0);
    CHECK_EQ(ln_jobs_rate_limit(c->jobs, q, 0), 0);
    CHECK_EQ(ln_jobs_get_rate_limit(c->jobs, q, &a, &b), 0);
    CHECK(a == 0 && b == 0);
    CHECK_EQ(ln_jobs_get_concurrency(c->jobs, q, &a), 0);
    CHECK_EQ(a, 0);
}

/* The follower's and the wait's own argument checks and time limits. */
void case_spec_events_and_wait_args(conf_ctx *c) {
    ln_jobs_events *ev = NULL;
    SAYS(c->jobs, LN_EINVAL, ln_jobs_events_open(c->jobs, c->queue, "$", NULL));
    SAYS(c->jobs, LN_EINVAL, ln_jobs_events_open(c->jobs, "", "$", &ev));
    SAYS(c->jobs, LN_EINVAL, ln_jobs_events_open(c->jobs, NULL, "$", &ev));
    CHECK_EQ(ln_jobs_events_open(NULL, c->queue, "$", &ev), LN_EINVAL);
    CHECK(ev == NULL);
    CHECK_EQ(ln_jobs_events_open(c->jobs, c->queue, NULL, &ev), 0);
    ln_job_event e;
    CHECK_EQ(ln_jobs_events_next(ev, 0, &e), LN_ETIMEDOUT);
    CHECK_EQ(ln_jobs_events_next(ev, 0, NULL), LN_EINVAL);
    CHECK_EQ(ln_jobs_events_next(NULL, 0, &e), LN_EINVAL);
    ln_jobs_events_close(ev);
    ln_jobs_events_close(NULL);
    ln_job_event_clear(NULL);
    char id[LN_JOB_ID_MAX];
    conf_add(c, c->queue, "n", "{}", NULL, id);
    ln_job_info info;
    int64_t t0 = conf_now_ms();
    SAYS(c->jobs, LN_ETIMEDOUT, ln_jobs_wait(c->jobs, c->queue, id, 0, &info));
    SAYS(c->jobs, LN_ETIMEDOUT, ln_jobs_wait(c->jobs, c->queue, id, 50, &info));
    CHECK(conf_now_ms() - t0 < 2000);
    SAYS(c->jobs, LN_ENOENT, ln_jobs_wait(c->jobs, c->queue, "nope-2", 0, &info));
    SAYS(c->jobs, LN_EINVAL, ln_jobs_wait(c->jobs, c->queue, id, 0, NULL));
    SAYS(c->jobs, LN_EINVAL, ln_jobs_wait(c->jobs, c->queue, "", 0, &info));
    SAYS(c->jobs, LN_EINVAL, ln_jobs_wait(c->jobs, c->queue, NULL, 0, &info));
    SAYS(c->jobs, LN_EINVAL, ln_jobs_wait(c->jobs, "", id, 0, &info));
    CHECK_EQ(ln_jobs_wait(NULL, c->queue, id, 0, &info), LN_EINVAL);
}

/* ln_jobs_children and the scheduler reads: missing, NULL, bounds. */
void case_spec_children_and_sched_args(conf_ctx *c) {
    char id[LN_JOB_ID_MAX];
    conf_add(c, c->queue, "n", "{}", NULL, id);
    ln_job_children ch;
    SAYS(c->jobs, LN_ENOENT, ln_jobs_children(c->jobs, c->queue, "nope-3", &ch));
    SAYS(c->jobs, LN_EINVAL, ln_jobs_children(c->jobs, c->queue, id, NULL));
    SAYS(c->jobs, LN_EINVAL, ln_jobs_children(c->jobs, c->queue, "", &ch));
    SAYS(c->jobs, LN_EINVAL, ln_jobs_children(c->jobs, "", id, &ch));
    CHECK_EQ(ln_jobs_children(c->jobs, c->queue, id, &ch), 0);
    CHECK(ch.parent_key == NULL);
    CHECK_EQ(ch.n, 0);
    ln_job_children_clear(&ch);
    ln_job_children_clear(NULL);
    ln_job_scheduler s, *ss = NULL;
    size_t n = 0;
    SAYS(c->jobs, LN_ENOENT, ln_jobs_scheduler_get(c->jobs, c->queue, "nope", &s));
    SAYS(c->jobs, LN_ENOENT, ln_jobs_unschedule(c->jobs, c->queue, "nope"));
    SAYS(c->jobs, LN_EINVAL, ln_jobs_scheduler_get(c->jobs, c->queue, "nope", NULL));
    SAYS(c->jobs, LN_EINVAL, ln_jobs_scheduler_list(c->jobs, c->queue, 0, 0, &ss, &n));
    SAYS(c->jobs, LN_EINVAL, ln_jobs_scheduler_list(c->jobs, c->queue, 0, 1001, &ss, &n));
    SAYS(c->jobs, LN_EINVAL, ln_jobs_scheduler_list(c->jobs, c->queue, 0, 1, NULL, &n));
    SAYS(c->jobs, LN_EINVAL, ln_jobs_scheduler_list(c->jobs, c->queue, 0, 1, &ss, NULL));
    CHECK_EQ(ln_jobs_scheduler_list(c->jobs, c->queue, 0, 1000, &ss, &n), 0);
    CHECK_EQ(n, 0);
    CHECK(ss == NULL);
    ln_job_scheduler_clear(NULL);
    ln_job_scheduler_free_array(NULL, 0);
    int64_t ttl = -1;
    SAYS(c->jobs, LN_EINVAL, ln_jobs_rate_limit_ttl(c->jobs, c->queue, 0, NULL));
    SAYS(c->jobs, LN_EINVAL, ln_jobs_rate_limit_ttl(c->jobs, c->queue, -1, &ttl));
    CHECK_EQ(ln_jobs_rate_limit_ttl(c->jobs, c->queue, 0, &ttl), 0);
    CHECK_EQ(ttl, 0);
}

/* The argument checks of the calls a handler makes. */
typedef struct spec_rcs {
    int delay_neg, rl_neg, rl_big, log_big, log_null, result_ok;
} spec_rcs;

static int spec_handler_calls(ln_job *job, void *ctx) {
    spec_rcs *r = ctx;
    r->delay_neg = ln_job_delay_until(job, -1);
    r->rl_neg = ln_job_rate_limited(job, -1);
    r->rl_big = ln_job_rate_limited(job, (int64_t)1 << 31);
    char *big = malloc(64 * 1024 + 2);
    CHECK(big != NULL);
    memset(big, 'l', 64 * 1024 + 1);
    big[64 * 1024 + 1] = '\0';
    r->log_big = ln_job_log(job, big);
    big[64 * 1024] = '\0'; /* 64 KiB: the longest line */
    r->result_ok = ln_job_log(job, big);
    free(big);
    r->log_null = ln_job_log(job, NULL);
    return ln_job_fail(job, NULL);
}

void case_spec_handler_arg_checks(conf_ctx *c) {
    char id[LN_JOB_ID_MAX];
    conf_add(c, c->queue, "n", "{}", NULL, id);
    spec_rcs r;
    memset(&r, 0x55, sizeof r);
    ln_worker_opts o;
    conf_worker_opts(&o);
    conf_run(c, c->queue, spec_handler_calls, &r, &o);
    CHECK_EQ(r.delay_neg, LN_EINVAL);
    CHECK_EQ(r.rl_neg, LN_EINVAL);
    CHECK_EQ(r.rl_big, LN_EINVAL);
    CHECK_EQ(r.log_big, LN_EINVAL);
    CHECK_EQ(r.result_ok, 0);
    CHECK_EQ(r.log_null, LN_EINVAL);
    CHECK_EQ(ln_job_delay_until(NULL, 5), LN_EINVAL);
    CHECK_EQ(ln_job_rate_limited(NULL, 5), LN_EINVAL);
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, id, &info), 0);
    CHECK_EQ(info.state, LN_JOB_FAILED);
    CONF_CHECK_STR(info.failed_reason, "failed");
    CHECK_EQ(info.attempts_made, 1);
    ln_job_info_clear(&info);
    char **lines;
    size_t n;
    CHECK_EQ(ln_jobs_logs(c->jobs, c->queue, id, &lines, &n), 0);
    CHECK_EQ(n, 1);
    CHECK_EQ(strlen(lines[0]), 64 * 1024);
    ln_jobs_free_lines(lines, n);
}
