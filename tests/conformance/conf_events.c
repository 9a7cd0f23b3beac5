/* conf_events.c - a queue's events and waiting for a job's outcome
 * (jobs.h's "Events and waiting for a result"), on every store. SQLite
 * handles that write each job's added / waiting / active events are
 * opened with ?events=all (its default writes the outcomes only). The
 * events of the administering calls with BullMQ's fields (removed's prev,
 * cleaned, progress, a retry's); a wait that finds its job gone reads the
 * outcome its follower has pending, and a wait for a removed job ends. */
#include "conf.h"

#include "jobs/front/front.h" /* ln__jobs_wait_gone: the race's side, made at will */

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

void case_event_order_of_one_job(conf_ctx *c) {
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
void case_wait_sees_another_handle(conf_ctx *c) {
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

void case_wait_returns_outcomes(conf_ctx *c) {
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
void case_wait_for_a_job_removed_on_complete(conf_ctx *c) {
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
void case_events_retention_is_bounded(conf_ctx *c) {
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

/* Fails its first two runs, completes the third. */
static int flaky_handler(ln_job *job, void *ctx) {
    (void)ctx;
    if (ln_job_attempt(job) < 3) return ln_job_fail(job, "not yet");
    return ln_job_set_result(job, "1");
}

/* The names of every event of c->queue from its oldest, space-separated. */
static void event_names(conf_ctx *c, char *out, size_t size) {
    ln_jobs_events *ev;
    CHECK_EQ(ln_jobs_events_open(c->jobs, c->queue, "0", &ev), 0);
    ln_job_event e;
    size_t n = 0;
    out[0] = '\0';
    while (ln_jobs_events_next(ev, 0, &e) == 0) {
        int k = snprintf(out + n, size - n, "%s ", e.name);
        CHECK(k > 0 && (size_t)k < size - n);
        n += (size_t)k;
        ln_job_event_clear(&e);
    }
    ln_jobs_events_close(ev);
}

/* 'drained' once, as the last event, and after "completed". */
static void check_one_drained_last(const char *names) {
    static const char word[] = "drained ";
    int n = 0;
    for (const char *p = strstr(names, word); p != NULL; p = strstr(p + 1, word)) n++;
    size_t len = strlen(names), wlen = sizeof word - 1;
    int last = len >= wlen && strcmp(names + len - wlen, word) == 0;
    int completed = strstr(names, "completed ") != NULL;
    if (n != 1 || !last || !completed) fprintf(stderr, "events: %s\n", names);
    CHECK_EQ(n, 1);
    CHECK(last);
    CHECK(completed);
}

/* BullMQ writes 'drained' only when a completion or a final failure leaves
 * nothing waiting, prioritized, active or delayed (moveToFinished); a run
 * that fails with attempts left and goes to delayed writes none. */
void case_drained_not_after_a_retry(conf_ctx *c) {
    ln_job_opts jo;
    ln_job_opts_init(&jo);
    jo.attempts = 3;
    jo.backoff = LN_BACKOFF_FIXED;
    jo.backoff_ms = 50;
    conf_add(c, c->queue, "flaky", "{}", &jo, NULL);
    ln_worker_opts o;
    conf_worker_opts(&o);
    ln_worker_stats st = conf_run(c, c->queue, flaky_handler, NULL, &o);
    CHECK_EQ(st.completed, 1);
    char names[1024];
    event_names(c, names, sizeof names);
    check_one_drained_last(names);
}

/* A completion while a delayed job waits is not 'drained' (BullMQ's
 * fetchNextJob returns that job's due time instead); the completion of the
 * delayed job, the last one, is. */
void case_drained_waits_for_delayed_jobs(conf_ctx *c) {
    conf_add(c, c->queue, "n", "1", NULL, NULL);
    ln_job_opts jo;
    ln_job_opts_init(&jo);
    jo.delay_ms = 300;
    conf_add(c, c->queue, "n", "2", &jo, NULL);
    ln_worker_opts o;
    conf_worker_opts(&o);
    ln_worker_stats st = conf_run(c, c->queue, conf_handler_by_name, NULL, &o);
    CHECK_EQ(st.completed, 2);
    char names[1024];
    event_names(c, names, sizeof names);
    check_one_drained_last(names);
}

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

/* The "removed" event's prev names the state the job was in. */
void case_spec_removed_prev(conf_ctx *c) {
    ln_jobs *jobs = conf_open_all_events(c);
    ln_jobs_events *ev;
    CHECK_EQ(ln_jobs_events_open(jobs, c->queue, "$", &ev), 0);
    conf_add_id(c, c->queue, "rp", 3, 0, 0);
    ln_flow_node child = {NULL, "k", "{}", NULL, 0, 0, 0, 0, NULL, 0};
    ln_flow_node root = {c->queue, "parent", "{}", NULL, 0, 0, 0, 0, &child, 1};
    char ids[2][LN_JOB_ID_MAX];
    CHECK_EQ(ln_jobs_add_flow(c->jobs, &root, ids[0], 2, LN_JOB_ID_MAX), 0);
    CHECK_EQ(ln_jobs_remove(jobs, c->queue, "rp"), 0);
    CHECK_EQ(ln_jobs_remove(jobs, c->queue, ids[0]), 0);
    ln_job_event e;
    conf_next_named(ev, "removed", &e);
    CONF_CHECK_STR(e.job_id, "rp");
    CONF_CHECK_HAS(e.fields, "\"prev\":\"prioritized\"");
    ln_job_event_clear(&e);
    conf_next_named(ev, "removed", &e);
    CONF_CHECK_STR(e.job_id, ids[0]);
    CONF_CHECK_HAS(e.fields, "\"prev\":\"waiting-children\"");
    ln_job_event_clear(&e);
    ln_jobs_events_close(ev);
    ln_jobs_close(jobs);
}

/* A failed run that is retried writes "waiting" or "delayed", never
 * "failed"; "failed" comes once, at the final failure. */
static int spec_fail_always(ln_job *job, void *ctx) {
    (void)ctx;
    return ln_job_fail(job, "again");
}

void case_spec_retry_events(conf_ctx *c) {
    ln_jobs *jobs = conf_open_all_events(c);
    ln_jobs_events *ev;
    CHECK_EQ(ln_jobs_events_open(jobs, c->queue, "$", &ev), 0);
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.attempts = 3;
    o.backoff_ms = 0;
    char id[LN_JOB_ID_MAX];
    CHECK_EQ(ln_jobs_add(jobs, c->queue, "n", "1", &o, id, sizeof id), 0);
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    ln_worker *w;
    CHECK_EQ(ln_worker_create(&w, jobs, c->queue, spec_fail_always, NULL, &wo), 0);
    CHECK_EQ(ln_worker_run(w), 0);
    ln_worker_destroy(w);
    int failed = 0, retried = 0, active = 0;
    ln_job_event e;
    while (ln_jobs_events_next(ev, 200, &e) == 0) {
        if (strcmp(e.job_id, id) == 0) {
            if (strcmp(e.name, "failed") == 0) {
                failed++;
                CONF_CHECK_HAS(e.fields, "\"failedReason\":\"again\"");
                CONF_CHECK_HAS(e.fields, "\"prev\":\"active\"");
            }
            if (strcmp(e.name, "active") == 0) active++;
            if (active > 0 && (strcmp(e.name, "waiting") == 0 || strcmp(e.name, "delayed") == 0))
                retried++;
        }
        ln_job_event_clear(&e);
    }
    CHECK_EQ(failed, 1);
    CHECK_EQ(active, 3);
    CHECK_EQ(retried, 2);
    ln_jobs_events_close(ev);
    ln_jobs_close(jobs);
}

/* ln_jobs_wait on a job removed meanwhile: LN_ENOENT at once (the
 * "removed" event, which every events= setting but none writes). */
typedef struct spec_wait {
    const char *url, *queue, *id;
    int rc;
    int64_t ms;
} spec_wait;

static void *spec_wait_thread(void *p) {
    spec_wait *a = p;
    ln_jobs *jobs = NULL;
    CHECK_EQ(ln_jobs_open(&jobs, a->url), 0);
    ln_job_info info;
    int64_t t0 = conf_now_ms();
    a->rc = ln_jobs_wait(jobs, a->queue, a->id, 5000, &info);
    a->ms = conf_now_ms() - t0;
    ln_job_info_clear(&info);
    ln_jobs_close(jobs);
    return NULL;
}

void case_spec_wait_for_a_removed_job(conf_ctx *c) {
    char id[LN_JOB_ID_MAX];
    conf_add(c, c->queue, "n", "{}", NULL, id);
    spec_wait a = {c->url, c->queue, id, 1, 0};
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, spec_wait_thread, &a), 0);
    struct timespec ts = {0, 200000000}; /* the wait follows the events by then */
    nanosleep(&ts, NULL);
    CHECK_EQ(ln_jobs_remove(c->jobs, c->queue, id), 0);
    CHECK_EQ(pthread_join(t, NULL), 0);
    CHECK_EQ(a.rc, LN_ENOENT);
    CHECK(a.ms < 3000);
}

/* The events of the administering calls, with BullMQ's fields. */
void case_spec_admin_events(conf_ctx *c) {
    ln_jobs *jobs = conf_open_all_events(c);
    ln_jobs_events *ev;
    CHECK_EQ(ln_jobs_events_open(jobs, c->queue, "$", &ev), 0);
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.job_id = "e1";
    CHECK_EQ(ln_jobs_add(jobs, c->queue, "n", "{}", &o, NULL, 0), 0);
    CHECK_EQ(ln_jobs_add(jobs, c->queue, "n", "{}", &o, NULL, 0), 0); /* duplicated */
    CHECK_EQ(ln_jobs_pause(jobs, c->queue), 0);
    CHECK_EQ(ln_jobs_resume(jobs, c->queue), 0);
    CHECK_EQ(ln_jobs_remove(jobs, c->queue, "e1"), 0);
    ln_job_event e;
    conf_next_named(ev, "duplicated", &e);
    CONF_CHECK_STR(e.job_id, "e1");
    ln_job_event_clear(&e);
    conf_next_named(ev, "paused", &e);
    ln_job_event_clear(&e);
    conf_next_named(ev, "resumed", &e);
    ln_job_event_clear(&e);
    conf_next_named(ev, "removed", &e);
    CONF_CHECK_STR(e.job_id, "e1");
    CONF_CHECK_HAS(e.fields, "\"prev\":\"waiting\"");
    ln_job_event_clear(&e);
    ln_jobs_events_close(ev);
    ln_jobs_close(jobs);
}

/* "cleaned" {count} and "progress" {jobId, data}, written by a handle of
 * the default events= too. */
static int spec_progress_handler(ln_job *job, void *ctx) {
    (void)ctx;
    CHECK_EQ(ln_job_progress(job, "{\"p\":50}"), 0);
    return 0;
}

void case_spec_cleaned_and_progress_events(conf_ctx *c) {
    ln_jobs_events *ev;
    CHECK_EQ(ln_jobs_events_open(c->jobs, c->queue, "$", &ev), 0);
    char id[LN_JOB_ID_MAX];
    conf_add(c, c->queue, "n", "{}", NULL, id);
    conf_add(c, c->queue, "n", "{}", NULL, NULL);
    ln_worker_opts o;
    conf_worker_opts(&o);
    conf_run(c, c->queue, spec_progress_handler, NULL, &o);
    size_t removed = 0;
    CHECK_EQ(ln_jobs_clean(c->jobs, c->queue, LN_JOB_COMPLETED, -1, 1, &removed), 0);
    CHECK_EQ(removed, 1);
    ln_job_event e;
    conf_next_named(ev, "progress", &e);
    CONF_CHECK_STR(e.job_id, id);
    CONF_CHECK_HAS(e.fields, "\"data\":\"{\\\"p\\\":50}\"");
    ln_job_event_clear(&e);
    conf_next_named(ev, "cleaned", &e);
    CONF_CHECK_HAS(e.fields, "\"count\":\"1\"");
    ln_job_event_clear(&e);
    ln_jobs_events_close(ev);
}
