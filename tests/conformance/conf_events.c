/* conf_events.c - a queue's events and waiting for a job's outcome
 * (jobs.h's "Events and waiting for a result"), on every store. SQLite
 * handles that write each job's added / waiting / active events are
 * opened with ?events=all (its default writes the outcomes only). */
#include "conf.h"

#include <pthread.h>

/* The next event of job id (others skipped), CHECKed to come in time. */
static void next_of(ln_jobs_events *ev, const char *id, ln_job_event *e) {
    for (;;) {
        int rc = ln_jobs_events_next(ev, 5000, e);
        if (rc != 0) fprintf(stderr, "events_next: %s\n", ln_jobs_events_errmsg(ev));
        CHECK_EQ(rc, 0);
        if (strcmp(e->job_id, id) == 0) return;
        ln_job_event_clear(e);
    }
}

static void case_event_order_of_one_job(conf_ctx *c) {
    ln_jobs *jobs = conf_open_all_events(c);
    ln_jobs_events *ev;
    CHECK_EQ(ln_jobs_events_open(jobs, c->queue, "$", &ev), 0);
    char id[LN_JOB_ID_MAX];
    CHECK_EQ(ln_jobs_add(jobs, c->queue, "n", "{\"a\":1}", NULL, id, sizeof id), 0);
    ln_worker_opts o;
    conf_worker_opts(&o);
    ln_worker *w;
    CHECK_EQ(ln_worker_create(&w, jobs, c->queue, conf_handler_by_name, NULL, &o), 0);
    CHECK_EQ(ln_worker_run(w), 0);
    ln_worker_destroy(w);
    const char *want[] = {"added", "waiting", "active", "completed"};
    char last[48] = "";
    for (size_t i = 0; i < CONF_NELEM(want); i++) {
        ln_job_event e;
        next_of(ev, id, &e);
        CONF_CHECK_STR(e.name, want[i]);
        CONF_CHECK_HAS(e.fields, "\"jobId\"");
        CHECK(e.at_ms > 0);
        CHECK(strcmp(e.id, last) != 0);
        snprintf(last, sizeof last, "%s", e.id);
        if (i == 3) CONF_CHECK_HAS(e.fields, "\"returnvalue\":\"{\\\"ok\\\":{\\\"a\\\":1}}\"");
        ln_job_event_clear(&e);
    }
    /* From an id: the events after it, and none left. */
    ln_jobs_events *again;
    CHECK_EQ(ln_jobs_events_open(jobs, c->queue, last, &again), 0);
    ln_job_event e; /* Redis may write "drained" after it */
    while (ln_jobs_events_next(again, 0, &e) == 0) {
        CHECK(strcmp(e.job_id, id) != 0);
        ln_job_event_clear(&e);
    }
    ln_jobs_events_close(again);
    ln_jobs_events_close(ev);
    ln_jobs_close(jobs);
}

typedef struct follow_arg {
    const char *url, *queue, *id;
    int completed;
} follow_arg;

static void *follow_thread(void *p) {
    follow_arg *a = p;
    ln_job_info info;
    ln_jobs *jobs = NULL;
    CHECK_EQ(ln_jobs_open(&jobs, a->url), 0);
    int rc = ln_jobs_wait(jobs, a->queue, a->id, 10000, &info);
    a->completed = rc == 0 && info.state == LN_JOB_COMPLETED;
    ln_job_info_clear(&info);
    ln_jobs_close(jobs);
    return NULL;
}

/* A waiter on another handle (and thread) sees a job another handle runs. */
static void case_wait_sees_another_handle(conf_ctx *c) {
    conf_add_id(c, c->queue, "w:1:x", 0, 0, 0);
    follow_arg a = {c->url, c->queue, "w:1:x", 0};
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, follow_thread, &a), 0);
    struct timespec ts = {0, 200 * 1000000L};
    nanosleep(&ts, NULL);
    ln_worker_opts o;
    conf_worker_opts(&o);
    conf_run(c, c->queue, conf_handler_by_name, NULL, &o);
    pthread_join(t, NULL);
    CHECK(a.completed);
}

static void case_wait_returns_outcomes(conf_ctx *c) {
    char ok[LN_JOB_ID_MAX], bad[LN_JOB_ID_MAX];
    conf_add(c, c->queue, "n", "7", NULL, ok);
    conf_add(c, c->queue, "bad", "{}", NULL, bad);
    ln_job_info info;
    /* Not finished yet: times out. */
    int64_t t0 = conf_now_ms();
    CHECK_EQ(ln_jobs_wait(c->jobs, c->queue, ok, 200, &info), LN_ETIMEDOUT);
    CHECK(conf_now_ms() - t0 >= 150);
    ln_worker_opts o;
    conf_worker_opts(&o);
    conf_run(c, c->queue, conf_handler_by_name, NULL, &o);
    /* Finished: at once. */
    t0 = conf_now_ms();
    CHECK_EQ(ln_jobs_wait(c->jobs, c->queue, ok, 5000, &info), 0);
    CHECK_EQ(info.state, LN_JOB_COMPLETED);
    CONF_CHECK_STR(info.result, "{\"ok\":7}");
    ln_job_info_clear(&info);
    CHECK_EQ(ln_jobs_wait(c->jobs, c->queue, bad, 5000, &info), 0);
    CHECK_EQ(info.state, LN_JOB_FAILED);
    CONF_CHECK_STR(info.failed_reason, "nope");
    ln_job_info_clear(&info);
    CHECK(conf_now_ms() - t0 < 1000);
    CHECK_EQ(ln_jobs_wait(c->jobs, c->queue, "no-such-job", 100, &info), LN_ENOENT);
}

/* Removed by its retention as it finishes: the wait still has the result. */
static void case_wait_for_a_job_removed_on_complete(conf_ctx *c) {
    ln_job_opts jo;
    ln_job_opts_init(&jo);
    jo.remove_on_complete.mode = LN_KEEP_NONE;
    jo.job_id = "gone:1:x";
    conf_add(c, c->queue, "n", "5", &jo, NULL);
    follow_arg a = {c->url, c->queue, "gone:1:x", 0};
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, follow_thread, &a), 0);
    struct timespec ts = {0, 200 * 1000000L};
    nanosleep(&ts, NULL);
    ln_worker_opts o;
    conf_worker_opts(&o);
    conf_run(c, c->queue, conf_handler_by_name, NULL, &o);
    pthread_join(t, NULL);
    CHECK(a.completed);
}

/* SQLite keeps the newest LN_JOBS_EVENTS_KEEP events (trimmed in chunks
 * of at most 512 as it goes). Redis caps its stream itself (MAXLEN ~). */
static void case_events_retention_is_bounded(conf_ctx *c) {
    if (strcmp(c->store, "sqlite") != 0) return;
    ln_jobs *jobs = conf_open_all_events(c);
    static ln_job_spec specs[1000];
    for (size_t i = 0; i < CONF_NELEM(specs); i++) specs[i] = (ln_job_spec){"n", "{}", NULL};
    for (int k = 0; k < 7; k++) /* 7,000 jobs: 14,000 events */
        CHECK_EQ(ln_jobs_add_bulk(jobs, c->queue, specs, CONF_NELEM(specs), NULL, 0), 0);
    ln_jobs_events *ev;
    CHECK_EQ(ln_jobs_events_open(jobs, c->queue, "0", &ev), 0);
    ln_job_event e;
    size_t n = 0;
    while (ln_jobs_events_next(ev, 0, &e) == 0) {
        n++;
        ln_job_event_clear(&e);
    }
    CHECK(n >= LN_JOBS_EVENTS_KEEP);
    CHECK(n <= LN_JOBS_EVENTS_KEEP + 512);
    ln_jobs_events_close(ev);
    ln_jobs_close(jobs);
}

const conf_case conf_events_cases[] = {
    CONF_CASE(events_retention_is_bounded),        CONF_CASE(event_order_of_one_job),
    CONF_CASE(wait_sees_another_handle),           CONF_CASE(wait_returns_outcomes),
    CONF_CASE(wait_for_a_job_removed_on_complete), {0},
};
