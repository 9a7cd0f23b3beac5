/* conf_worker.c - ln_worker: every job run once, what a handler sees,
 * results and failure reasons, retries with fixed and exponential backoff,
 * failing after the attempts, delayed / prioritized / LIFO order, progress
 * and logs, retention (remove_on_complete / remove_on_fail by count and
 * age), max_jobs on a caller's pool, exit_when_empty. */
#include "conf.h"

#include <stdlib.h>

/* ------------------------------------------------------------- running */

typedef struct once {
    atomic_int runs[300];
    atomic_int bad_attempt;
} once;

static int count_once(ln_job *job, void *ctx) {
    once *o = ctx;
    int i = -1;
    if (sscanf(ln_job_data(job), "{\"i\":%d}", &i) != 1 || i < 0 || i >= 300)
        return ln_job_fail(job, "bad data");
    atomic_fetch_add(&o->runs[i], 1);
    if (ln_job_attempt(job) != 1) atomic_fetch_add(&o->bad_attempt, 1);
    char buf[64];
    snprintf(buf, sizeof buf, "{\"i\":%d,\"attempt\":%d}", i, ln_job_attempt(job));
    return ln_job_set_result(job, buf);
}

/* 300 jobs, 8 at once: each runs exactly once and records its result. */
void case_worker_runs_every_job_once(conf_ctx *c) {
    static ln_job_spec specs[300];
    static char data[300][16];
    static char ids[300][LN_JOB_ID_MAX];
    for (int i = 0; i < 300; i++) {
        snprintf(data[i], sizeof data[i], "{\"i\":%d}", i);
        specs[i] = (ln_job_spec){"n", data[i], NULL};
    }
    CHECK_EQ(ln_jobs_add_bulk(c->jobs, c->queue, specs, 300, ids[0], LN_JOB_ID_MAX), 0);
    static once o;
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    wo.concurrency = 8;
    ln_worker_stats st = conf_run(c, c->queue, count_once, &o, &wo);
    for (int i = 0; i < 300; i++) CHECK_EQ(atomic_load(&o.runs[i]), 1);
    CHECK_EQ(atomic_load(&o.bad_attempt), 0);
    CHECK_EQ(st.taken, 300);
    CHECK_EQ(st.completed, 300);
    CHECK_EQ(st.failed + st.retried + st.stale + st.released, 0);
    ln_job_counts k;
    CHECK_EQ(ln_jobs_counts(c->jobs, c->queue, &k), 0);
    CHECK_EQ(k.completed, 300);
    CHECK_EQ(k.waiting + k.active, 0);
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, ids[123], &info), 0);
    CHECK_EQ(info.state, LN_JOB_COMPLETED);
    CONF_CHECK_STR(info.result, "{\"i\":123,\"attempt\":1}");
    CHECK_EQ(info.attempts_started, 1);
    CHECK_EQ(info.attempts_made, 0);
    CHECK(info.started_ms >= info.created_ms);
    CHECK(info.finished_ms >= info.started_ms);
    ln_job_info_clear(&info);
    /* Completed jobs are listed newest finished first. */
    ln_job_info *infos;
    size_t n;
    CHECK_EQ(ln_jobs_list(c->jobs, c->queue, LN_JOB_COMPLETED, 0, 300, &infos, &n), 0);
    CHECK_EQ(n, 300);
    for (size_t i = 1; i < n; i++) CHECK(infos[i - 1].finished_ms >= infos[i].finished_ms);
    CHECK(infos[0].result != NULL);
    ln_job_info_free_array(infos, n);
    conf_check_counts(c, c->queue);
}

typedef struct seen {
    char id[LN_JOB_ID_MAX], name[64], queue[LN_JOB_QUEUE_MAX], data[64];
    char traceparent[64], tracestate[64];
    int attempt;
} seen;

static int record_job(ln_job *job, void *ctx) {
    seen *s = ctx;
    snprintf(s->id, sizeof s->id, "%s", ln_job_id(job));
    snprintf(s->name, sizeof s->name, "%s", ln_job_name(job));
    snprintf(s->queue, sizeof s->queue, "%s", ln_job_queue(job));
    snprintf(s->data, sizeof s->data, "%s", ln_job_data(job));
    const char *tp = ln_job_traceparent(job), *ts = ln_job_tracestate(job);
    snprintf(s->traceparent, sizeof s->traceparent, "%s", tp ? tp : "-");
    snprintf(s->tracestate, sizeof s->tracestate, "%s", ts ? ts : "-");
    s->attempt = ln_job_attempt(job);
    CHECK_EQ(ln_job_canceled(job), 0);
    return 0;
}

/* A handler sees the job as it was added. */
void case_worker_handler_sees_the_job(conf_ctx *c) {
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    o.tracestate = "k=v";
    char id[LN_JOB_ID_MAX];
    conf_add(c, c->queue, "mail", "[\"x\",1]", &o, id);
    seen s;
    memset(&s, 0, sizeof s);
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    conf_run(c, c->queue, record_job, &s, &wo);
    CONF_CHECK_STR(s.id, id);
    CONF_CHECK_STR(s.name, "mail");
    CONF_CHECK_STR(s.queue, c->queue);
    CONF_CHECK_STR(s.data, "[\"x\",1]");
    CONF_CHECK_STR(s.traceparent, o.traceparent);
    CONF_CHECK_STR(s.tracestate, "k=v");
    CHECK_EQ(s.attempt, 1);
    /* Without trace context the handler sees NULL. */
    conf_add(c, c->queue, "plain", NULL, NULL, id);
    conf_run(c, c->queue, record_job, &s, &wo);
    CONF_CHECK_STR(s.traceparent, "-");
    CONF_CHECK_STR(s.tracestate, "-");
    CONF_CHECK_STR(s.data, "{}");
}

/* No result stored is null; a failure without ln_job_fail has
 * ln_strerror(code) as its reason; ln_job_fail(NULL reason) is "failed". */
static int fail_null_reason(ln_job *job, void *ctx) {
    (void)ctx;
    return ln_job_fail(job, NULL);
}

void case_worker_results_and_reasons(conf_ctx *c) {
    char ok[LN_JOB_ID_MAX], plain[LN_JOB_ID_MAX], bad[LN_JOB_ID_MAX];
    char code[LN_JOB_ID_MAX];
    conf_add(c, c->queue, "ok", "{\"a\":1}", NULL, ok);
    conf_add(c, c->queue, "plain", "{}", NULL, plain);
    conf_add(c, c->queue, "bad", "{}", NULL, bad);
    conf_add(c, c->queue, "code", "{}", NULL, code);
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    ln_worker_stats st = conf_run(c, c->queue, conf_handler_by_name, NULL, &wo);
    CHECK_EQ(st.completed, 2);
    CHECK_EQ(st.failed, 2);
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, ok, &info), 0);
    CONF_CHECK_STR(info.result, "{\"ok\":{\"a\":1}}");
    CHECK(info.failed_reason == NULL);
    ln_job_info_clear(&info);
    CHECK_EQ(conf_state(c, c->queue, plain), LN_JOB_COMPLETED);
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, bad, &info), 0);
    CHECK_EQ(info.state, LN_JOB_FAILED);
    CONF_CHECK_STR(info.failed_reason, "nope");
    CHECK(info.result == NULL);
    CHECK_EQ(info.attempts_made, 1);
    CHECK(info.finished_ms >= info.started_ms && info.started_ms > 0);
    ln_job_info_clear(&info);
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, code, &info), 0);
    CHECK_EQ(info.state, LN_JOB_FAILED);
    CONF_CHECK_STR(info.failed_reason, ln_strerror(LN_EIO));
    ln_job_info_clear(&info);

    const char *q2 = conf_queue(c, "null");
    conf_add(c, q2, "n", "{}", NULL, bad);
    conf_run(c, q2, fail_null_reason, NULL, &wo);
    CHECK_EQ(ln_jobs_get(c->jobs, q2, bad, &info), 0);
    CONF_CHECK_STR(info.failed_reason, "failed");
    ln_job_info_clear(&info);
    conf_check_counts(c, c->queue);
}

/* A handler that returns 0 without ln_job_set_result completed with the
 * result null (the JSON value): "the result is what ln_job_set_result
 * stored, else null". */
void case_worker_result_null_without_set_result(conf_ctx *c) {
    char id[LN_JOB_ID_MAX];
    conf_add(c, c->queue, "plain", "{}", NULL, id);
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    conf_run(c, c->queue, conf_handler_by_name, NULL, &wo);
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, id, &info), 0);
    CHECK_EQ(info.state, LN_JOB_COMPLETED);
    CONF_CHECK_STR(info.result, "null");
    ln_job_info_clear(&info);
}

/* ------------------------------------------------------------- retries */

/* Fails until attempt succeed_at (0 = never), noting when each started. */
typedef struct flaky {
    int succeed_at;
    int runs;
    int64_t start_ms[8];
} flaky;

static int flaky_handler(ln_job *job, void *ctx) {
    flaky *f = ctx; /* concurrency 1: one handler at a time */
    if (f->runs < 8) f->start_ms[f->runs] = conf_now_ms();
    f->runs++;
    if (f->succeed_at != 0 && ln_job_attempt(job) >= f->succeed_at) return 0;
    return ln_job_fail(job, "flaky");
}

/* Fixed backoff: each retry waits backoff_ms; success on attempt 3 of 3.
 * The reason of the last failure stays. */
void case_worker_retry_fixed_backoff(conf_ctx *c) {
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.attempts = 3;
    o.backoff = LN_BACKOFF_FIXED;
    o.backoff_ms = 40;
    char id[LN_JOB_ID_MAX];
    conf_add(c, c->queue, "n", "{}", &o, id);
    flaky f = {.succeed_at = 3};
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    ln_worker_stats st = conf_run(c, c->queue, flaky_handler, &f, &wo);
    CHECK_EQ(f.runs, 3);
    CHECK(f.start_ms[1] - f.start_ms[0] >= 35); /* >= backoff, clock slack */
    CHECK(f.start_ms[2] - f.start_ms[1] >= 35);
    CHECK_EQ(st.retried, 2);
    CHECK_EQ(st.completed, 1);
    CHECK_EQ(st.failed, 0);
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, id, &info), 0);
    CHECK_EQ(info.state, LN_JOB_COMPLETED);
    CHECK_EQ(info.attempts_made, 2);
    CHECK_EQ(info.attempts_started, 3);
    CONF_CHECK_STR(info.failed_reason, "flaky");
    ln_job_info_clear(&info);
}

/* Exponential backoff doubles: backoff_ms, then 2 * backoff_ms; out of
 * attempts the job fails with the last reason. */
void case_worker_retry_exponential_backoff(conf_ctx *c) {
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.attempts = 3;
    o.backoff = LN_BACKOFF_EXPONENTIAL;
    o.backoff_ms = 30;
    char id[LN_JOB_ID_MAX];
    conf_add(c, c->queue, "n", "{}", &o, id);
    flaky f = {.succeed_at = 0};
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    ln_worker_stats st = conf_run(c, c->queue, flaky_handler, &f, &wo);
    CHECK_EQ(f.runs, 3);
    CHECK(f.start_ms[1] - f.start_ms[0] >= 25);
    CHECK(f.start_ms[2] - f.start_ms[1] >= 55);
    CHECK_EQ(st.retried, 2);
    CHECK_EQ(st.failed, 1);
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, id, &info), 0);
    CHECK_EQ(info.state, LN_JOB_FAILED);
    CHECK_EQ(info.attempts_made, 3);
    CHECK_EQ(info.attempts_started, 3);
    CONF_CHECK_STR(info.failed_reason, "flaky");
    ln_job_info_clear(&info);
    conf_check_counts(c, c->queue);
}

/* While it waits for its retry, the job is delayed (then runs again). */
void case_worker_retry_waits_delayed(conf_ctx *c) {
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.attempts = 2;
    o.backoff_ms = 600000;
    char id[LN_JOB_ID_MAX];
    conf_add(c, c->queue, "bad", "{}", &o, id);
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    wo.max_jobs = 1;
    ln_worker_stats st = conf_run(c, c->queue, conf_handler_by_name, NULL, &wo);
    CHECK_EQ(st.retried, 1);
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, id, &info), 0);
    CHECK_EQ(info.state, LN_JOB_DELAYED);
    CHECK_EQ(info.attempts_made, 1);
    CHECK(info.run_at_ms - info.started_ms >= 600000 - 1000);
    CONF_CHECK_STR(info.failed_reason, "nope");
    ln_job_info_clear(&info);
    /* Without a backoff a retry is waiting at once. */
    const char *q2 = conf_queue(c, "now");
    o.backoff_ms = 0;
    conf_add(c, q2, "bad", "{}", &o, id);
    conf_run(c, q2, conf_handler_by_name, NULL, &wo);
    CHECK_EQ(conf_state(c, q2, id), LN_JOB_WAITING);
    conf_check_counts(c, c->queue);
}

/* ------------------------------------------------------------- ordering */

typedef struct order_log {
    char names[64];
} order_log;

static int record_order(ln_job *job, void *ctx) {
    order_log *l = ctx;
    strncat(l->names, ln_job_name(job), sizeof l->names - strlen(l->names) - 1);
    return 0;
}

/* One at a time: LIFO first, FIFO, then by priority (FIFO within one). */
void case_worker_priority_and_lifo_order(conf_ctx *c) {
    const struct {
        const char *name;
        int prio, lifo;
    } add[] = {
        {"a", 0, 0}, {"b", 3, 0}, {"c", 1, 0}, {"d", 0, 0}, {"e", 0, 1}, {"f", 1, 0}, {"g", 1, 1},
    };
    for (size_t i = 0; i < CONF_NELEM(add); i++) {
        ln_job_opts o;
        ln_job_opts_init(&o);
        o.priority = add[i].prio;
        o.lifo = add[i].lifo;
        conf_add(c, c->queue, add[i].name, "{}", &o, NULL);
    }
    order_log l = {""};
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    wo.batch = 1;
    conf_run(c, c->queue, record_order, &l, &wo);
    CONF_CHECK_STR(l.names, "eadgcfb");
}

/* A delayed job runs once due, after the ready one. */
void case_worker_delayed_runs_when_due(conf_ctx *c) {
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.delay_ms = 80;
    char later[LN_JOB_ID_MAX];
    conf_add(c, c->queue, "later", "{}", &o, later);
    conf_add(c, c->queue, "now", "{}", NULL, NULL);
    CHECK_EQ(conf_state(c, c->queue, later), LN_JOB_DELAYED);
    order_log l = {""};
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    conf_run(c, c->queue, record_order, &l, &wo); /* waits for "later" */
    CONF_CHECK_STR(l.names, "nowlater");
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, later, &info), 0);
    CHECK_EQ(info.state, LN_JOB_COMPLETED);
    CHECK(info.started_ms - info.created_ms >= 80);
    ln_job_info_clear(&info);
}

/* run_at_ms is "when it becomes (or became) runnable": after a delayed
 * job ran, still its due time, not the time it was added. */
void case_delayed_run_at_kept_after_run(conf_ctx *c) {
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.delay_ms = 50;
    char id[LN_JOB_ID_MAX];
    conf_add(c, c->queue, "later", "{}", &o, id);
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, id, &info), 0);
    int64_t due = info.run_at_ms;
    CHECK(due - info.created_ms >= 50);
    ln_job_info_clear(&info);
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    conf_run(c, c->queue, conf_handler_by_name, NULL, &wo);
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, id, &info), 0);
    CHECK_EQ(info.state, LN_JOB_COMPLETED);
    if (info.run_at_ms != due)
        fprintf(stderr, "run_at_ms was created_ms + %lld, now + %lld\n",
                (long long)(due - info.created_ms), (long long)(info.run_at_ms - info.created_ms));
    CHECK_EQ(info.run_at_ms, due);
    ln_job_info_clear(&info);
}

/* --------------------------------------------------- progress and logs */

typedef struct watch {
    ln_jobs *other; /* a second handle, to look from outside */
    const char *queue;
    int state, attempts_started, listed;
    int64_t started_ms;
    char progress[64];
    size_t nlogs;
    int bad_progress, bad_log, big_log;
} watch;

static int progress_handler(ln_job *job, void *ctx) {
    watch *w = ctx;
    CHECK_EQ(ln_job_progress(job, "{\"pct\":50}"), 0);
    CHECK_EQ(ln_job_log(job, "first line"), 0);
    CHECK_EQ(ln_job_log(job, "second line"), 0);
    w->bad_progress = ln_job_progress(job, "{half");
    w->bad_log = ln_job_log(job, NULL);
    char *big = malloc(65538);
    CHECK(big != NULL);
    memset(big, 'x', 65537);
    big[65537] = '\0';
    w->big_log = ln_job_log(job, big);
    big[65536] = '\0'; /* exactly 64 KiB is allowed */
    CHECK_EQ(ln_job_log(job, big), 0);
    free(big);
    /* Seen from outside while it runs: active, with its progress. */
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(w->other, w->queue, ln_job_id(job), &info), 0);
    w->state = info.state;
    w->attempts_started = info.attempts_started;
    w->started_ms = info.started_ms;
    snprintf(w->progress, sizeof w->progress, "%s", info.progress ? info.progress : "(null)");
    ln_job_info_clear(&info);
    char **lines;
    CHECK_EQ(ln_jobs_logs(w->other, w->queue, ln_job_id(job), &lines, &w->nlogs), 0);
    ln_jobs_free_lines(lines, w->nlogs);
    ln_job_info *infos;
    size_t n;
    CHECK_EQ(ln_jobs_list(w->other, w->queue, LN_JOB_ACTIVE, 0, 10, &infos, &n), 0);
    w->listed = n == 1 && strcmp(infos[0].id, ln_job_id(job)) == 0;
    ln_job_info_free_array(infos, n);
    CHECK_EQ(ln_job_progress(job, "[1,2,3]"), 0); /* the last one stays */
    return 0;
}

void case_worker_progress_and_logs(conf_ctx *c) {
    char id[LN_JOB_ID_MAX];
    conf_add(c, c->queue, "n", "{}", NULL, id);
    watch w;
    memset(&w, 0, sizeof w);
    w.other = conf_open(c, NULL);
    w.queue = c->queue;
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    conf_run(c, c->queue, progress_handler, &w, &wo);
    CHECK_EQ(w.state, LN_JOB_ACTIVE);
    CHECK_EQ(w.attempts_started, 1);
    CHECK(w.started_ms > 0);
    CONF_CHECK_STR(w.progress, "{\"pct\":50}");
    CHECK_EQ(w.nlogs, 3);
    CHECK(w.listed);
    CHECK_EQ(w.bad_progress, LN_EINVAL);
    CHECK_EQ(w.bad_log, LN_EINVAL);
    CHECK_EQ(w.big_log, LN_EINVAL);
    ln_jobs_close(w.other);
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, id, &info), 0);
    CHECK_EQ(info.state, LN_JOB_COMPLETED);
    CONF_CHECK_STR(info.progress, "[1,2,3]");
    ln_job_info_clear(&info);
    char **lines;
    size_t n;
    CHECK_EQ(ln_jobs_logs(c->jobs, c->queue, id, &lines, &n), 0);
    CHECK_EQ(n, 3);
    CONF_CHECK_STR(lines[0], "first line");
    CONF_CHECK_STR(lines[1], "second line");
    CHECK_EQ(strlen(lines[2]), 65536);
    ln_jobs_free_lines(lines, n);
}

/* ------------------------------------------------------------ retention */

/* The by-name handler, 2 ms slow: jobs run one by one finish in distinct
 * milliseconds of the store clock, so "newest" is never a tie. */
static int spaced_handler(ln_job *job, void *ctx) {
    ln_test_sleep_ms(2);
    return conf_handler_by_name(job, ctx);
}

/* Add n jobs named 'name' with the given retention, run them one by one;
 * their ids go to ids (in finishing order). */
static void add_run(conf_ctx *c, const char *queue, const char *name, int n,
                    const ln_job_keep *on_complete, const ln_job_keep *on_fail,
                    char (*ids)[LN_JOB_ID_MAX]) {
    ln_job_opts o;
    ln_job_opts_init(&o);
    if (on_complete) o.remove_on_complete = *on_complete;
    if (on_fail) o.remove_on_fail = *on_fail;
    for (int i = 0; i < n; i++) conf_add(c, queue, name, "{}", &o, ids[i]);
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    wo.batch = 1;
    conf_run(c, queue, spaced_handler, NULL, &wo);
}

/* remove_on_complete / remove_on_fail by count keep the newest. */
void case_retention_by_count(conf_ctx *c) {
    char ids[10][LN_JOB_ID_MAX];
    ln_job_keep keep3 = {LN_KEEP_COUNT, 3};
    add_run(c, c->queue, "ok", 10, &keep3, NULL, ids);
    ln_job_counts k;
    CHECK_EQ(ln_jobs_counts(c->jobs, c->queue, &k), 0);
    CHECK_EQ(k.completed, 3);
    for (int i = 0; i < 7; i++) CHECK_EQ(conf_state(c, c->queue, ids[i]), LN_ENOENT);
    for (int i = 7; i < 10; i++) CHECK_EQ(conf_state(c, c->queue, ids[i]), LN_JOB_COMPLETED);

    const char *q2 = conf_queue(c, "fail");
    ln_job_keep keep2 = {LN_KEEP_COUNT, 2};
    add_run(c, q2, "bad", 5, NULL, &keep2, ids);
    CHECK_EQ(ln_jobs_counts(c->jobs, q2, &k), 0);
    CHECK_EQ(k.failed, 2);
    CHECK_EQ(conf_state(c, q2, ids[2]), LN_ENOENT);
    CHECK_EQ(conf_state(c, q2, ids[4]), LN_JOB_FAILED);
    /* The rule of the finishing job applies: keep-all jobs stay. */
    add_run(c, q2, "ok", 2, NULL, &keep2, ids);
    CHECK_EQ(ln_jobs_counts(c->jobs, q2, &k), 0);
    CHECK_EQ(k.completed, 2);
    conf_check_counts(c, c->queue);
    conf_check_counts(c, q2);
}

/* LN_KEEP_NONE removes a job (and its logs) as it finishes. */
void case_retention_keep_none(conf_ctx *c) {
    char ok[1][LN_JOB_ID_MAX], bad[1][LN_JOB_ID_MAX];
    ln_job_keep none = {LN_KEEP_NONE, 0};
    add_run(c, c->queue, "ok", 1, &none, NULL, ok);
    add_run(c, c->queue, "bad", 1, NULL, &none, bad);
    CHECK_EQ(conf_state(c, c->queue, ok[0]), LN_ENOENT);
    CHECK_EQ(conf_state(c, c->queue, bad[0]), LN_ENOENT);
    char **lines;
    size_t n;
    CHECK_EQ(ln_jobs_logs(c->jobs, c->queue, ok[0], &lines, &n), LN_ENOENT);
    CHECK_EQ(conf_total(c, c->queue), 0);
    /* A failure with attempts left is a retry, not an end: kept. */
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.attempts = 2;
    o.backoff_ms = 600000;
    o.remove_on_fail = none;
    conf_add(c, c->queue, "bad", "{}", &o, bad[0]);
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    wo.max_jobs = 1;
    conf_run(c, c->queue, conf_handler_by_name, NULL, &wo);
    CHECK_EQ(conf_state(c, c->queue, bad[0]), LN_JOB_DELAYED);
}

/* LN_KEEP_AGE: finished jobs older than value ms go when the next one
 * finishes; younger ones stay. */
void case_retention_by_age(conf_ctx *c) {
    char old[1][LN_JOB_ID_MAX], young[1][LN_JOB_ID_MAX];
    ln_job_keep age = {LN_KEEP_AGE, 40};
    add_run(c, c->queue, "ok", 1, &age, NULL, old);
    CHECK_EQ(conf_state(c, c->queue, old[0]), LN_JOB_COMPLETED);
    ln_test_sleep_ms(80);
    add_run(c, c->queue, "ok", 1, &age, NULL, young);
    CHECK_EQ(conf_state(c, c->queue, old[0]), LN_ENOENT);
    CHECK_EQ(conf_state(c, c->queue, young[0]), LN_JOB_COMPLETED);

    const char *q2 = conf_queue(c, "fail");
    add_run(c, q2, "bad", 1, NULL, &age, old);
    ln_test_sleep_ms(80);
    add_run(c, q2, "bad", 1, NULL, &age, young);
    CHECK_EQ(conf_state(c, q2, old[0]), LN_ENOENT);
    CHECK_EQ(conf_state(c, q2, young[0]), LN_JOB_FAILED);
    /* A long age keeps everything. */
    ln_job_keep hour = {LN_KEEP_AGE, 3600000};
    add_run(c, q2, "bad", 1, NULL, &hour, old);
    CHECK_EQ(conf_state(c, q2, young[0]), LN_JOB_FAILED);
    conf_check_counts(c, c->queue);
    conf_check_counts(c, q2);
}

/* LN_KEEP_AGE with value 0 keeps no finished job older than 0 ms: a job
 * that finished earlier goes when the next one finishes. */
void case_retention_age_zero(conf_ctx *c) {
    char old[1][LN_JOB_ID_MAX], young[1][LN_JOB_ID_MAX];
    ln_job_keep zero = {LN_KEEP_AGE, 0};
    add_run(c, c->queue, "ok", 1, &zero, NULL, old);
    ln_test_sleep_ms(20);
    add_run(c, c->queue, "ok", 1, &zero, NULL, young);
    CHECK_EQ(conf_state(c, c->queue, old[0]), LN_ENOENT);
}

/* ---------------------------------------------------- run and its ends */

/* max_jobs ends the run after that many, on a caller's pool lane. */
void case_worker_max_jobs_on_caller_pool(conf_ctx *c) {
    for (int i = 0; i < 20; i++) conf_add(c, c->queue, "ok", "{}", NULL, NULL);
    ln_pool *pool;
    CHECK_EQ(ln_pool_create(&pool, NULL), 0);
    atomic_int runs = 0;
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    wo.exit_when_empty = 0;
    wo.pool = pool;
    wo.lane = LN_LANE_IO;
    wo.concurrency = 3;
    wo.max_jobs = 7;
    ln_worker_stats st = conf_run(c, c->queue, conf_handler_by_name, &runs, &wo);
    CHECK_EQ(atomic_load(&runs), 7);
    CHECK_EQ(st.taken, 7);
    ln_job_counts k;
    CHECK_EQ(ln_jobs_counts(c->jobs, c->queue, &k), 0);
    CHECK_EQ(k.completed, 7);
    CHECK_EQ(k.waiting, 13);
    CHECK_EQ(k.active, 0);
    ln_pool_destroy(pool);
}

/* exit_when_empty: an empty queue ends the run at once; a paused queue
 * with waiting jobs is not empty. */
void case_worker_exit_when_empty(conf_ctx *c) {
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    ln_worker_stats st = conf_run(c, c->queue, conf_handler_by_name, NULL, &wo);
    CHECK_EQ(st.taken, 0);

    char id[LN_JOB_ID_MAX];
    conf_add(c, c->queue, "ok", "{}", NULL, id);
    CHECK_EQ(ln_jobs_pause(c->jobs, c->queue), 0);
    conf_bg *b = conf_bg_start(c->jobs, c->queue, conf_handler_by_name, NULL, &wo);
    ln_test_sleep_ms(60);
    CHECK(!conf_bg_done(b));
    CHECK_EQ(ln_jobs_resume(c->jobs, c->queue), 0);
    CHECK_EQ(conf_bg_join(b, &st), 0); /* ends by itself */
    CHECK_EQ(st.completed, 1);
    CHECK_EQ(conf_state(c, c->queue, id), LN_JOB_COMPLETED);

    /* A stop before the run makes it return at once, taking nothing. */
    conf_add(c, c->queue, "ok", "{}", NULL, id);
    ln_worker *w;
    CHECK_EQ(ln_worker_create(&w, c->jobs, c->queue, conf_handler_by_name, NULL, &wo), 0);
    ln_worker_stop(w);
    CHECK_EQ(ln_worker_run(w), 0);
    ln_worker_get_stats(w, &st);
    CHECK_EQ(st.taken, 0);
    ln_worker_destroy(w);
    CHECK_EQ(conf_state(c, c->queue, id), LN_JOB_WAITING);
}

/* Jobs held by a worker are active, listed in the order they started. */
void case_worker_active_jobs_listed(conf_ctx *c) {
    char ids[3][LN_JOB_ID_MAX];
    for (int i = 0; i < 3; i++) conf_add(c, c->queue, "hold", "{}", NULL, ids[i]);
    conf_hold h = {0};
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    wo.concurrency = 2;
    conf_bg *b = conf_bg_start(c->jobs, c->queue, conf_hold_handler, &h, &wo);
    conf_hold_wait(&h, 2);
    ln_job_counts k;
    CHECK_EQ(ln_jobs_counts(c->jobs, c->queue, &k), 0);
    CHECK_EQ(k.active, 2);
    CHECK_EQ(k.waiting, 1);
    char list[256];
    conf_list_ids(c, c->queue, LN_JOB_ACTIVE, 0, 10, list, sizeof list);
    char either[2][2 * LN_JOB_ID_MAX + 4];
    snprintf(either[0], sizeof either[0], "%s %s ", ids[0], ids[1]);
    snprintf(either[1], sizeof either[1], "%s %s ", ids[1], ids[0]);
    CHECK(strcmp(list, either[0]) == 0 || strcmp(list, either[1]) == 0);
    conf_check_counts(c, c->queue);
    atomic_store(&h.release, 1);
    CHECK_EQ(conf_bg_join(b, NULL), 0);
    CHECK_EQ(ln_jobs_counts(c->jobs, c->queue, &k), 0);
    CHECK_EQ(k.completed, 3);
}
