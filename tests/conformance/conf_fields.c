/* conf_fields.c - what the stores report about a job's fields and
 * retention where they once disagreed: keep-by-age 0, empty or lone trace
 * context, started_ms after a manual retry, run_at_ms after a run. */
#include "conf.h"

/* Run every job of queue once, one per store transaction. */
static void run_all(conf_ctx *c, const char *queue) {
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    wo.batch = 1;
    conf_run(c, queue, conf_handler_by_name, NULL, &wo);
}

/* LN_KEEP_AGE keeps finished jobs younger than 'value' ms (BullMQ's {age}):
 * with 0 none is, not even the job that just finished. */
void case_retention_age_zero_keeps_none(conf_ctx *c) {
    ln_job_keep zero = {LN_KEEP_AGE, 0}, hour = {LN_KEEP_AGE, 3600000};
    char gone_ok[LN_JOB_ID_MAX], gone_bad[LN_JOB_ID_MAX], kept[LN_JOB_ID_MAX];
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.remove_on_complete = hour;
    conf_add(c, c->queue, "ok", "{}", &o, kept);
    run_all(c, c->queue);
    o.remove_on_complete = zero;
    o.remove_on_fail = zero;
    conf_add(c, c->queue, "ok", "{}", &o, gone_ok);
    conf_add(c, c->queue, "bad", "{}", &o, gone_bad);
    run_all(c, c->queue);
    CHECK_EQ(conf_state(c, c->queue, gone_ok), LN_ENOENT);
    CHECK_EQ(conf_state(c, c->queue, gone_bad), LN_ENOENT);
    /* the age-0 finish trimmed the older completed job too */
    CHECK_EQ(conf_state(c, c->queue, kept), LN_ENOENT);
    conf_check_counts(c, c->queue);
}

/* run_at_ms of a job that left delayed is when it was first due, created_ms
 * + its delay_ms, also after a retry waited out its backoff. */
static atomic_int fail_first_runs;
static int fail_first(ln_job *job, void *ctx) {
    (void)ctx;
    if (ln_job_attempt(job) == 1) {
        atomic_fetch_add(&fail_first_runs, 1);
        return ln_job_fail(job, "first run fails");
    }
    return 0;
}

void case_run_at_first_due_after_retry(conf_ctx *c) {
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.delay_ms = 30;
    o.attempts = 2;
    o.backoff_ms = 60;
    char id[LN_JOB_ID_MAX];
    conf_add(c, c->queue, "n", "{}", &o, id);
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, id, &info), 0);
    int64_t first_due = info.run_at_ms;
    CHECK(first_due - info.created_ms >= 30);
    ln_job_info_clear(&info);
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    conf_run(c, c->queue, fail_first, NULL, &wo);
    CHECK_EQ(atomic_load(&fail_first_runs), 1);
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, id, &info), 0);
    CHECK_EQ(info.state, LN_JOB_COMPLETED);
    CHECK(info.started_ms - first_due >= 60); /* the retry waited */
    if (info.run_at_ms != first_due)
        fprintf(stderr, "run_at_ms: first due created + %lld, now created + %lld\n",
                (long long)(first_due - info.created_ms),
                (long long)(info.run_at_ms - info.created_ms));
    CHECK_EQ(info.run_at_ms, first_due);
    ln_job_info_clear(&info);
}

#define TP "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

/* What a handler saw of the trace context, by job name. */
typedef struct seen_trace {
    atomic_int runs, tp_null, ts_null;
    char ts[64];
} seen_trace;

static int trace_handler(ln_job *job, void *ctx) {
    seen_trace *st = ctx;
    const char *tp = ln_job_traceparent(job), *ts = ln_job_tracestate(job);
    if (tp == NULL) atomic_fetch_add(&st->tp_null, 1);
    if (ts == NULL)
        atomic_fetch_add(&st->ts_null, 1);
    else
        snprintf(st->ts, sizeof st->ts, "%s", ts);
    atomic_fetch_add(&st->runs, 1);
    return 0;
}

/* A tracestate travels with a traceparent only, and an empty one is none:
 * NULL in ln_jobs_get and in the handler, on every store. */
void case_tracestate_empty_or_alone_is_none(conf_ctx *c) {
    struct {
        const char *tp, *ts;
    } cases[] = {{TP, ""}, {NULL, "k=v"}, {NULL, ""}};
    for (size_t i = 0; i < CONF_NELEM(cases); i++) {
        ln_job_opts o;
        ln_job_opts_init(&o);
        o.traceparent = cases[i].tp;
        o.tracestate = cases[i].ts;
        char id[LN_JOB_ID_MAX];
        conf_add(c, c->queue, "n", "{}", &o, id);
        ln_job_info info;
        CHECK_EQ(ln_jobs_get(c->jobs, c->queue, id, &info), 0);
        CONF_CHECK_STR(info.traceparent, cases[i].tp);
        CONF_CHECK_STR(info.tracestate, NULL);
        ln_job_info_clear(&info);
        seen_trace st = {0};
        ln_worker_opts wo;
        conf_worker_opts(&wo);
        conf_run(c, c->queue, trace_handler, &st, &wo);
        CHECK_EQ(atomic_load(&st.runs), 1);
        CHECK_EQ(atomic_load(&st.tp_null), cases[i].tp == NULL);
        if (atomic_load(&st.ts_null) != 1)
            fprintf(stderr, "case %zu: handler saw tracestate '%s'\n", i, st.ts);
        CHECK_EQ(atomic_load(&st.ts_null), 1);
    }
    /* a tracestate with its traceparent comes back as given */
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.traceparent = TP;
    o.tracestate = "k=v";
    char id[LN_JOB_ID_MAX];
    conf_add(c, c->queue, "n", "{}", &o, id);
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, id, &info), 0);
    CONF_CHECK_STR(info.tracestate, "k=v");
    ln_job_info_clear(&info);
}

/* ln_jobs_retry starts the job afresh: started_ms and finished_ms are 0
 * again (BullMQ's job.retry deletes processedOn and finishedOn), the
 * failed reason goes; attempts_started keeps counting. */
void case_retry_clears_started_ms(conf_ctx *c) {
    char id[LN_JOB_ID_MAX];
    conf_add(c, c->queue, "bad", "{}", NULL, id);
    run_all(c, c->queue);
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, id, &info), 0);
    CHECK_EQ(info.state, LN_JOB_FAILED);
    CHECK(info.started_ms > 0);
    CHECK(info.finished_ms > 0);
    ln_job_info_clear(&info);
    CHECK_EQ(ln_jobs_retry(c->jobs, c->queue, id), 0);
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, id, &info), 0);
    CHECK_EQ(info.state, LN_JOB_WAITING);
    CHECK_EQ(info.started_ms, 0);
    CHECK_EQ(info.finished_ms, 0);
    CHECK(info.failed_reason == NULL);
    CHECK_EQ(info.attempts_made, 0);
    CHECK_EQ(info.attempts_started, 1);
    ln_job_info_clear(&info);
    /* the same through ln_jobs_retry_all */
    run_all(c, c->queue);
    size_t n = 0;
    CHECK_EQ(ln_jobs_retry_all(c->jobs, c->queue, &n), 0);
    CHECK_EQ(n, 1);
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, id, &info), 0);
    CHECK_EQ(info.started_ms, 0);
    CHECK_EQ(info.attempts_started, 2);
    ln_job_info_clear(&info);
}
