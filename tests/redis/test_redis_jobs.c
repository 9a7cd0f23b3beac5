/* test_redis_jobs.c - the Redis backend of lanes jobs through the public
 * API, with the stored layout checked key by key against BullMQ 6.7's
 * (docs/internals/redis-layout.md): hash fields, score encodings, list ends,
 * marker, events, locks; plus leases, retries, retention, administration
 * and global limits (the connection cases are in test_redis_conn.c).
 *
 * Needs LANES_TEST_REDIS_URL (exit 77 = skipped without it). Each case
 * uses its own key prefix, so cases and other tests can share the server.
 */
#include "jobs/redis_test.h"

#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>

TEST(layout_add) {
    ln_jobs *jobs = open_case("lay");
    const char *q = "q1";
    ln_job_opts o;
    char id[LN_JOB_ID_MAX];

    add(jobs, q, "A", "{\"a\":1}", NULL, id);
    CHECK(!strcmp(id, "1"));
    char *s = hget(q, "1", "name");
    CHECK(s && !strcmp(s, "A"));
    free(s);
    s = hget(q, "1", "data");
    CHECK(s && !strcmp(s, "{\"a\":1}"));
    free(s);
    s = hget(q, "1", "opts");
    CHECK(s && !strcmp(s, "{\"attempts\":1}"));
    free(s);
    CHECK_EQ(hget_ll(q, "1", "delay"), 0);
    CHECK_EQ(hget_ll(q, "1", "priority"), 0);
    long long ts = hget_ll(q, "1", "timestamp");
    CHECK(ts > 1600000000000LL);

    ln_job_opts_init(&o);
    o.delay_ms = 60000;
    add(jobs, q, "D", "[1]", &o, id);
    CHECK(!strcmp(id, "2"));
    long long ts2 = hget_ll(q, "2", "timestamp");
    CHECK_EQ(hget_ll(q, "2", "delay"), 60000);
    CHECK(zscore(q, "delayed", "2") == (double)(ts2 + 60000) * 4096);
    CHECK(fabs(zscore(q, "marker", "1") - (double)(ts2 + 60000)) < 1);

    ln_job_opts_init(&o);
    o.priority = 5;
    add(jobs, q, "P5", "1", &o, NULL);
    o.priority = 1;
    add(jobs, q, "P1", "2", &o, NULL);
    CHECK(zscore(q, "prioritized", "3") == 5 * 4294967296.0 + 1);
    CHECK(zscore(q, "prioritized", "4") == 1 * 4294967296.0 + 2);
    o.lifo = 1; /* lanes: newest first within its priority */
    add(jobs, q, "P1L", "3", &o, id);
    CHECK(zscore(q, "prioritized", id) == 1 * 4294967296.0 - 3);
    redisReply *first = cmd("ZRANGE %s:%s:prioritized 0 0", prefix, q);
    CHECK(!strcmp(first->element[0]->str, id));
    freeReplyObject(first);

    ln_job_opts_init(&o);
    o.lifo = 1;
    char lifo[LN_JOB_ID_MAX], last[LN_JOB_ID_MAX];
    add(jobs, q, "L", "\"s\"", &o, lifo); /* served next */
    add(jobs, q, "B", "{}", NULL, last);  /* served last */
    redisReply *r = cmd("LRANGE %s:%s:wait 0 -1", prefix, q);
    CHECK_EQ(r->elements, 3); /* BullMQ's orientation: head = last served */
    CHECK(!strcmp(r->element[0]->str, last) && !strcmp(r->element[1]->str, "1") &&
          !strcmp(r->element[2]->str, lifo));
    freeReplyObject(r);
    CHECK(zscore(q, "marker", "0") == 0);

    done(jobs);
}

TEST(layout_opts_and_events) {
    ln_jobs *jobs = open_case("opt");
    const char *q = "q";
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.job_id = "order-7";
    o.attempts = 3;
    o.backoff = LN_BACKOFF_EXPONENTIAL;
    o.backoff_ms = 1000;
    o.remove_on_complete.mode = LN_KEEP_NONE;
    o.remove_on_fail.mode = LN_KEEP_AGE;
    o.remove_on_fail.value = 3600000;
    o.traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    o.tracestate = "k=v";
    char id[LN_JOB_ID_MAX];
    add(jobs, q, "C", "{}", &o, id);
    add(jobs, q, "C2", "{\"x\":2}", &o, id);
    CHECK(!strcmp(id, "order-7"));
    char *s = hget(q, "order-7", "name");
    CHECK(s && !strcmp(s, "C"));
    free(s);
    redisReply *r = cmd("GET %s:%s:id", prefix, q);
    CHECK(r->type == REDIS_REPLY_STRING && !strcmp(r->str, "2"));
    freeReplyObject(r);
    /* opts in BullMQ's stored form (key order is cjson's). */
    s = hget(q, "order-7", "opts");
    CHECK(s != NULL);
    CHECK(strstr(s, "\"jobId\":\"order-7\""));
    CHECK(strstr(s, "\"attempts\":3"));
    CHECK(strstr(s, "\"type\":\"exponential\""));
    CHECK(strstr(s, "\"delay\":1000"));
    CHECK(strstr(s, "\"removeOnComplete\":true"));
    CHECK(strstr(s, "\"removeOnFail\":{\"age\":3600}"));
    CHECK(strstr(s, "\"tm\":\"{"));
    CHECK(strstr(s, "traceparent"));
    free(s);

    ln_job_info info;
    memset(&info, 0, sizeof info);
    CHECK_EQ(ln_jobs_get(jobs, q, "order-7", &info), 0);
    CHECK(!strcmp(info.traceparent, o.traceparent));
    CHECK(!strcmp(info.tracestate, "k=v"));
    CHECK_EQ(info.attempts, 3);
    CHECK_EQ(info.backoff, LN_BACKOFF_EXPONENTIAL);
    CHECK_EQ(info.backoff_ms, 1000);
    CHECK_EQ(info.state, LN_JOB_WAITING);
    ln_job_info_clear(&info);

    char names[256];
    event_names(q, names, sizeof names);
    CHECK(!strcmp(names, "added waiting duplicated"));
    r = cmd("HGET %s:%s:meta opts.maxLenEvents", prefix, q);
    CHECK(r->type == REDIS_REPLY_STRING && !strcmp(r->str, "10000"));
    freeReplyObject(r);

    /* Ids BullMQ's producer refuses, and queue names with ':'. */
    o.job_id = "-12";
    CHECK_EQ(ln_jobs_add(jobs, q, "x", "{}", &o, id, sizeof id), LN_EINVAL);
    o.job_id = "a:b";
    CHECK_EQ(ln_jobs_add(jobs, q, "x", "{}", &o, id, sizeof id), LN_EINVAL);
    o.job_id = "repeat:s:1";
    CHECK_EQ(ln_jobs_add(jobs, q, "x", "{}", &o, id, sizeof id), 0);
    CHECK_EQ(ln_jobs_add(jobs, "a:b", "x", "{}", NULL, id, sizeof id), LN_EINVAL);
    ln_job_opts_init(&o);
    o.priority = 2097152; /* BullMQ's limit is 2^21 - 1 */
    CHECK_EQ(ln_jobs_add(jobs, q, "x", "{}", &o, id, sizeof id), LN_EINVAL);
    o.priority = 2097151;
    CHECK_EQ(ln_jobs_add(jobs, q, "x", "{}", &o, id, sizeof id), 0);
    done(jobs);
}

TEST(delayed_same_ms_and_bulk) {
    ln_jobs *jobs = open_case("blk");
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.delay_ms = 50000;
    ln_job_spec specs[3] = {{"d1", "{}", &o}, {"d2", "{}", &o}, {"plain", "{}", NULL}};
    char ids[3][LN_JOB_ID_MAX];
    CHECK_EQ(ln_jobs_add_bulk(jobs, "q", specs, 3, ids[0], LN_JOB_ID_MAX), 0);
    /* One script, one "now": same due ms, FIFO by the low 12 bits. */
    double s1 = zscore("q", "delayed", ids[0]), s2 = zscore("q", "delayed", ids[1]);
    CHECK(s2 == s1 + 1);
    CHECK(fmod(s1, 4096) == 0);
    ln_job_counts c;
    CHECK_EQ(ln_jobs_counts(jobs, "q", &c), 0);
    CHECK_EQ(c.delayed, 2);
    CHECK_EQ(c.waiting, 1);
    done(jobs);
}

TEST(worker_complete_layout) {
    ln_jobs *jobs = open_case("wrk");
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.priority = 2;
    add(jobs, "q", "ok", "{\"n\":1}", NULL, NULL);
    add(jobs, "q", "ok", "[2]", &o, NULL);
    add(jobs, "q", "progress", "3", NULL, NULL);
    ln_worker_stats st = run_worker(jobs, "q", NULL, 0, 2);
    CHECK_EQ(st.completed, 3);
    CHECK_EQ(st.failed + st.stale + st.retried, 0);
    char *rv = hget("q", "2", "returnvalue");
    CHECK(rv && !strcmp(rv, "{\"ok\":[2]}"));
    free(rv);
    long long fin = hget_ll("q", "1", "finishedOn");
    CHECK(fin >= hget_ll("q", "1", "processedOn"));
    CHECK(zscore("q", "completed", "1") == (double)fin);
    CHECK_EQ(hget_ll("q", "1", "atm"), 1);
    CHECK_EQ(hget_ll("q", "1", "ats"), 1);
    CHECK_EQ(cmd_int("EXISTS %s:q:1:lock", prefix), 0);
    CHECK_EQ(cmd_int("LLEN %s:q:active", prefix), 0);
    /* A run names a connection like a BullMQ worker's of queue "q" (base64
     * "cQ==") only while it runs (conformance: workers_*): gone now. */
    redisReply *clients = cmd("CLIENT LIST");
    char name[128];
    snprintf(name, sizeof name, "name=%s:cQ==:w:lanes-", prefix);
    CHECK(strstr(clients->str, name) == NULL);
    freeReplyObject(clients);
    char *pb = hget("q", "1", "pb");
    CHECK(pb && !strncmp(pb, "lanes-", 6));
    free(pb);
    CHECK(has_event("q", "active", "1"));
    CHECK(has_event("q", "completed", "2"));
    CHECK(has_event("q", "progress", "3"));
    char *progress = hget("q", "3", "progress");
    CHECK(progress && !strcmp(progress, "{\"pct\":50}"));
    free(progress);
    char **lines;
    size_t n;
    CHECK_EQ(ln_jobs_logs(jobs, "q", "3", &lines, &n), 0);
    CHECK_EQ(n, 2);
    CHECK(!strcmp(lines[0], "line one") && !strcmp(lines[1], "line two"));
    ln_jobs_free_lines(lines, n);
    /* completed: newest finished first */
    ln_job_info *infos;
    CHECK_EQ(ln_jobs_list(jobs, "q", LN_JOB_COMPLETED, 0, 10, &infos, &n), 0);
    CHECK_EQ(n, 3);
    CHECK(infos[0].finished_ms >= infos[2].finished_ms);
    CHECK(infos[0].result != NULL);
    ln_job_info_free_array(infos, n);
    done(jobs);
}

TEST(worker_retry_and_fail) {
    ln_jobs *jobs = open_case("rty");
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.attempts = 3;
    o.backoff = LN_BACKOFF_EXPONENTIAL;
    o.backoff_ms = 20;
    add(jobs, "q", "flaky", "{}", &o, NULL); /* 1: fails twice, completes */
    add(jobs, "q", "bad", "{}", &o, NULL);   /* 2: fails three times */
    ln_job_opts_init(&o);
    add(jobs, "q", "bad", "{}", &o, NULL); /* 3: one attempt */
    ln_worker_stats st = run_worker(jobs, "q", NULL, 0, 1);
    CHECK_EQ(st.completed, 1);
    CHECK_EQ(st.failed, 2);
    CHECK_EQ(st.retried, 4);
    CHECK_EQ(hget_ll("q", "1", "atm"), 3); /* BullMQ counts the success too */
    ln_job_info info;
    memset(&info, 0, sizeof info);
    CHECK_EQ(ln_jobs_get(jobs, "q", "1", &info), 0);
    CHECK_EQ(info.state, LN_JOB_COMPLETED);
    CHECK_EQ(info.attempts_made, 2); /* lanes: failed runs */
    CHECK_EQ(info.attempts_started, 3);
    CHECK(info.result && !strcmp(info.result, "{\"ok\":{}}"));
    CHECK(info.failed_reason && !strcmp(info.failed_reason, "flaky"));
    ln_job_info_clear(&info);
    char *s = hget("q", "1", "failedReason"); /* kept after the success */
    CHECK(s && !strcmp(s, "flaky"));
    free(s);
    s = hget("q", "1", "stacktrace");
    CHECK(s && !strcmp(s, "[\"flaky\",\"flaky\"]"));
    free(s);
    s = hget("q", "2", "failedReason"); /* raw text, not JSON */
    CHECK(s && !strcmp(s, "bad \"input\""));
    free(s);
    CHECK(zscore("q", "failed", "2") > 0);
    CHECK(has_event("q", "delayed", "1"));
    CHECK(has_event("q", "retries-exhausted", "2"));
    CHECK(has_event("q", "failed", "3"));
    CHECK(!has_event("q", "failed", "1"));

    /* Retry by hand: a fresh attempt budget. */
    CHECK_EQ(ln_jobs_retry(jobs, "q", "1"), LN_EINVAL); /* completed */
    CHECK_EQ(ln_jobs_retry(jobs, "q", "nope"), LN_ENOENT);
    CHECK_EQ(ln_jobs_retry(jobs, "q", "3"), 0);
    CHECK_EQ(hget_ll("q", "3", "atm"), 0);
    CHECK_EQ(hget_ll("q", "3", "finishedOn"), -1);
    size_t count = 0;
    CHECK_EQ(ln_jobs_retry_all(jobs, "q", &count), 0);
    CHECK_EQ(count, 1);
    ln_job_counts c;
    CHECK_EQ(ln_jobs_counts(jobs, "q", &c), 0);
    CHECK_EQ(c.waiting, 2);
    CHECK_EQ(c.failed, 0);
    done(jobs);
}

TEST(retention) {
    ln_jobs *jobs = open_case("ret");
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.remove_on_complete.mode = LN_KEEP_COUNT;
    o.remove_on_complete.value = 2;
    for (int i = 0; i < 4; i++) add(jobs, "q", "ok", "{}", &o, NULL);
    ln_job_opts_init(&o);
    o.remove_on_fail.mode = LN_KEEP_NONE;
    add(jobs, "q", "bad", "{}", &o, NULL); /* 5 */
    run_worker(jobs, "q", NULL, 0, 1);
    CHECK_EQ(cmd_int("ZCARD %s:q:completed", prefix), 2);
    CHECK_EQ(cmd_int("EXISTS %s:q:1", prefix), 0);
    CHECK_EQ(cmd_int("EXISTS %s:q:4", prefix), 1);
    CHECK_EQ(cmd_int("EXISTS %s:q:5", prefix), 0);
    CHECK(has_event("q", "failed", "5"));

    /* clean: keep the newest one */
    size_t removed = 0;
    CHECK_EQ(ln_jobs_clean(jobs, "q", LN_JOB_COMPLETED, -1, 1, &removed), 0);
    CHECK_EQ(removed, 1);
    CHECK_EQ(cmd_int("EXISTS %s:q:4", prefix), 1);
    CHECK_EQ(ln_jobs_clean(jobs, "q", LN_JOB_COMPLETED, 3600000, 0, &removed), 0);
    CHECK_EQ(removed, 0); /* too young */
    done(jobs);
}

TEST(lost_lock_is_stale_then_recovered) {
    ln_jobs *jobs = open_case("stl");
    handler_ctx ctx = {.raw = raw, .queue = "q", .steal_once = 1};
    add(jobs, "q", "steal", "{}", NULL, NULL);
    ln_worker_stats st = run_worker(jobs, "q", &ctx, 300, 1);
    /* Attempt 1 lost its lock: its completion was refused, the stalled
     * check put the job back, attempt 2 completed it. */
    CHECK(st.stale >= 1);
    CHECK_EQ(st.completed, 1);
    CHECK(st.stalled_found >= 1);
    CHECK_EQ(hget_ll("q", "1", "stc"), 1);
    CHECK_EQ(hget_ll("q", "1", "ats"), 2);
    CHECK_EQ(hget_ll("q", "1", "atm"), 1);
    CHECK(has_event("q", "stalled", "1"));
    CHECK(zscore("q", "completed", "1") > 0);
    done(jobs);
}

TEST(admin) {
    ln_jobs *jobs = open_case("adm");
    add(jobs, "q", "ok", "{}", NULL, NULL);
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.priority = 3;
    add(jobs, "q", "ok", "{}", &o, NULL);
    ln_job_opts_init(&o);
    o.delay_ms = 100000;
    add(jobs, "q", "ok", "{}", &o, NULL);

    CHECK_EQ(ln_jobs_pause(jobs, "q"), 0);
    int paused = 0;
    CHECK_EQ(ln_jobs_is_paused(jobs, "q", &paused), 0);
    CHECK_EQ(paused, 1);
    CHECK_EQ(cmd_int("EXISTS %s:q:marker", prefix), 0);
    ln_job_counts c;
    CHECK_EQ(ln_jobs_counts(jobs, "q", &c), 0);
    CHECK_EQ(c.paused, 2);
    CHECK_EQ(c.waiting + c.prioritized, 0);
    ln_job_info info;
    memset(&info, 0, sizeof info);
    CHECK_EQ(ln_jobs_get(jobs, "q", "1", &info), 0);
    CHECK_EQ(info.state, LN_JOB_PAUSED);
    ln_job_info_clear(&info);
    ln_job_info *infos;
    size_t n;
    CHECK_EQ(ln_jobs_list(jobs, "q", LN_JOB_PAUSED, 0, 10, &infos, &n), 0);
    CHECK_EQ(n, 2);
    CHECK(!strcmp(infos[0].id, "1") && !strcmp(infos[1].id, "2"));
    ln_job_info_free_array(infos, n);
    CHECK_EQ(ln_jobs_resume(jobs, "q"), 0);
    CHECK(zscore("q", "marker", "0") == 0);
    char names[512];
    event_names("q", names, sizeof names);
    CHECK(strstr(names, "paused resumed"));

    CHECK_EQ(ln_jobs_remove(jobs, "q", "1"), 0);
    CHECK_EQ(ln_jobs_remove(jobs, "q", "1"), LN_ENOENT);
    CHECK(has_event("q", "removed", "1"));
    freeReplyObject(cmd("SET %s:q:2:lock tok", prefix));
    CHECK_EQ(ln_jobs_remove(jobs, "q", "2"), LN_EBUSY); /* a worker holds it */
    freeReplyObject(cmd("DEL %s:q:2:lock", prefix));
    size_t removed = 0;
    CHECK_EQ(ln_jobs_drain(jobs, "q", &removed), 0);
    CHECK_EQ(removed, 2);
    CHECK_EQ(ln_jobs_counts(jobs, "q", &c), 0);
    CHECK_EQ(c.waiting + c.prioritized + c.delayed + c.paused, 0);
    CHECK_EQ(cmd_int("EXISTS %s:q:3", prefix), 0);
    done(jobs);
}

/* A job BullMQ's stalled check marked with a deferred failure ('defa') is
 * failed by the next worker that takes it, without running, as a Node
 * worker does. */
static atomic_int defa_runs;

static int count_runs(ln_job *job, void *ctx) {
    (void)job;
    (void)ctx;
    atomic_fetch_add(&defa_runs, 1);
    return 0;
}

TEST(deferred_failure) {
    ln_jobs *jobs = open_case("dfa");
    add(jobs, "q", "x", "{}", NULL, NULL);
    add(jobs, "q", "y", "{}", NULL, NULL);
    freeReplyObject(cmd("HSET %s:q:1 defa %s", prefix, "job stalled more than allowable limit"));
    ln_worker_opts o;
    ln_worker_opts_init(&o);
    o.exit_when_empty = 1;
    ln_worker *w;
    CHECK_EQ(ln_worker_create(&w, jobs, "q", count_runs, NULL, &o), 0);
    CHECK_EQ(ln_worker_run(w), 0);
    ln_worker_destroy(w);
    CHECK_EQ(atomic_load(&defa_runs), 1); /* only job 2 ran */
    char *s = hget("q", "1", "failedReason");
    CHECK(s && !strcmp(s, "job stalled more than allowable limit"));
    free(s);
    CHECK_EQ(cmd_int("EXISTS %s:q:1:lock", prefix), 0);
    CHECK(zscore("q", "failed", "1") > 0);
    CHECK(zscore("q", "completed", "2") > 0);
    CHECK(has_event("q", "retries-exhausted", "1"));
    done(jobs);
}

/* BullMQ's global limits in meta are honoured: concurrency (at most that
 * many active jobs across all workers) and pause. */
static atomic_int in_flight, max_in_flight;

static int slow(ln_job *job, void *ctx) {
    (void)job;
    (void)ctx;
    int now = atomic_fetch_add(&in_flight, 1) + 1;
    int seen = atomic_load(&max_in_flight);
    while (now > seen && !atomic_compare_exchange_weak(&max_in_flight, &seen, now)) {
    }
    ln_test_sleep_ms(30);
    atomic_fetch_sub(&in_flight, 1);
    return 0;
}

TEST(global_concurrency_and_pause) {
    ln_jobs *jobs = open_case("glb");
    for (int i = 0; i < 6; i++) add(jobs, "q", "s", "{}", NULL, NULL);
    freeReplyObject(cmd("HSET %s:q:meta concurrency 1", prefix));
    ln_worker_opts o;
    ln_worker_opts_init(&o);
    o.concurrency = 4;
    o.exit_when_empty = 1;
    ln_worker *w;
    CHECK_EQ(ln_worker_create(&w, jobs, "q", slow, NULL, &o), 0);
    CHECK_EQ(ln_worker_run(w), 0);
    ln_worker_destroy(w);
    CHECK_EQ(cmd_int("ZCARD %s:q:completed", prefix), 6);
    CHECK_EQ(atomic_load(&max_in_flight), 1);

    /* paused: a worker takes nothing until resumed */
    CHECK_EQ(ln_jobs_pause(jobs, "q"), 0);
    add(jobs, "q", "s", "{}", NULL, NULL);
    o.exit_when_empty = 0;
    bg_worker b = {0};
    CHECK_EQ(ln_worker_create(&b.w, jobs, "q", slow, NULL, &o), 0);
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, bg_run, &b), 0);
    ln_test_sleep_ms(300);
    ln_worker_stats st;
    ln_worker_get_stats(b.w, &st);
    CHECK_EQ(st.taken, 0);
    CHECK_EQ(ln_jobs_resume(jobs, "q"), 0);
    for (int i = 0; i < 200 && cmd_int("ZCARD %s:q:completed", prefix) < 7; i++)
        ln_test_sleep_ms(20);
    CHECK_EQ(cmd_int("ZCARD %s:q:completed", prefix), 7);
    ln_worker_stop(b.w);
    pthread_join(t, NULL);
    CHECK_EQ(b.rc, 0);
    ln_worker_destroy(b.w);
    done(jobs);
}

/* A worker's steps write the events of their jobs without MAXLEN each and
 * trim the stream once per step: it still stays near meta's
 * opts.maxLenEvents (MAXLEN ~ removes whole stream nodes of 100 entries,
 * so up to about 100 more stay). Without the trim, 300 jobs would leave
 * 600 entries (active, completed). */
TEST(events_capped_by_steps) {
    ln_jobs *jobs = open_case("cap");
    ln_job_spec specs[400];
    for (size_t i = 0; i < 400; i++) specs[i] = (ln_job_spec){"ok", "1", NULL};
    CHECK_EQ(ln_jobs_add_bulk(jobs, "q", specs, 400, NULL, 0), 0);
    CHECK_EQ(cmd_int("HSET %s:q:meta opts.maxLenEvents 50", prefix), 0);
    CHECK(cmd_int("XTRIM %s:q:events MAXLEN 0", prefix) >= 400); /* the adds' events */
    /* 300 of them: the queue never drains, so no 'drained' event (whose
     * own XADD trims too) comes at the end. */
    ln_worker_opts o;
    ln_worker_opts_init(&o);
    o.concurrency = 50;
    o.max_jobs = 300;
    ln_worker *w;
    CHECK_EQ(ln_worker_create(&w, jobs, "q", handler, NULL, &o), 0);
    CHECK_EQ(ln_worker_run(w), 0);
    ln_worker_stats st;
    ln_worker_get_stats(w, &st);
    ln_worker_destroy(w);
    CHECK_EQ(st.completed, 300);
    long long len = cmd_int("XLEN %s:q:events", prefix);
    CHECK(len >= 50 && len <= 250);
    CHECK(has_event("q", "completed", "300"));
    done(jobs);
}

/* An event field another program wrote that is not UTF-8 (BullMQ's
 * scripts can cut a job id inside a character) reaches the reader with
 * its stray bytes as U+FFFD, not left out. */
TEST(event_field_not_utf8) {
    ln_jobs *jobs = open_case("ev8");
    redisReply *r = cmd("XADD %s:q:events * event failed jobId 7 failedReason %b", prefix,
                        "cut \xf0\x9f", (size_t)6);
    CHECK(r != NULL && r->type == REDIS_REPLY_STRING);
    freeReplyObject(r);
    ln_jobs_events *ev;
    CHECK_EQ(ln_jobs_events_open(jobs, "q", "0", &ev), 0);
    ln_job_event e;
    CHECK_EQ(ln_jobs_events_next(ev, 1000, &e), 0);
    CHECK(strcmp(e.name, "failed") == 0);
    CHECK(e.fields != NULL &&
          strstr(e.fields, "\"failedReason\":\"cut \xef\xbf\xbd\xef\xbf\xbd\"") != NULL);
    ln_job_event_clear(&e);
    ln_jobs_events_close(ev);
    done(jobs);
}

/* A scheduler another program left with numbers no C integer holds: read
 * back as unknown (0) or the largest count, never a cast out of range. */
TEST(scheduler_numbers_out_of_range) {
    ln_jobs *jobs = open_case("sch9");
    ln_job_schedule s = {.every_ms = 60000};
    CHECK_EQ(ln_jobs_schedule(jobs, "q", "s", &s, "n", NULL, NULL, NULL, 0), 0);
    redisReply *r = cmd("ZADD %s:q:repeat +inf s", prefix);
    CHECK(r != NULL && r->type == REDIS_REPLY_INTEGER);
    freeReplyObject(r);
    r = cmd("HSET %s:q:repeat:s opts {\"priority\":1e300,\"attempts\":1e300}", prefix);
    CHECK(r != NULL && r->type == REDIS_REPLY_INTEGER);
    freeReplyObject(r);
    ln_job_scheduler got;
    CHECK_EQ(ln_jobs_scheduler_get(jobs, "q", "s", &got), 0);
    CHECK(got.next_ms == 0 && got.priority == 0 && got.attempts == INT_MAX);
    ln_job_scheduler_clear(&got);
    done(jobs);
}

/* Job opts another program wrote with a delay no int64 holds: the retry
 * waits the longest backoff lanes gives, where the cast of 1e300 was
 * undefined (on x86 a negative delay: an at-once retry, so the job failed
 * for good within the run). */
TEST(opts_numbers_out_of_range) {
    ln_jobs *jobs = open_case("opt9");
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.attempts = 2;
    add(jobs, "q", "bad", "{}", &o, NULL);
    redisReply *r = cmd("HSET %s:q:1 opts {\"attempts\":2,\"backoff\":{\"type\":\"fixed\","
                        "\"delay\":1e300},\"lanesTimeout\":1e300}",
                        prefix);
    CHECK(r != NULL && r->type == REDIS_REPLY_INTEGER);
    freeReplyObject(r);
    ln_worker_opts wo;
    ln_worker_opts_init(&wo);
    bg_worker b = {0};
    CHECK_EQ(ln_worker_create(&b.w, jobs, "q", handler, NULL, &wo), 0);
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, bg_run, &b), 0);
    for (int i = 0;
         i < 250 &&
         cmd_int("ZCARD %s:q:delayed", prefix) + cmd_int("ZCARD %s:q:failed", prefix) == 0;
         i++)
        ln_test_sleep_ms(20);
    ln_worker_stop(b.w);
    pthread_join(t, NULL);
    CHECK_EQ(b.rc, 0);
    ln_worker_destroy(b.w);
    ln_job_info info;
    memset(&info, 0, sizeof info);
    CHECK_EQ(ln_jobs_get(jobs, "q", "1", &info), 0);
    CHECK_EQ(info.state, LN_JOB_DELAYED);
    CHECK(info.run_at_ms > (int64_t)3e12); /* the backoff cap, about 100 years on */
    ln_job_info_clear(&info);
    done(jobs);
}

int main(int argc, char **argv) {
    return redis_test_main(argc, argv,
                           (ln_test_case[]){TESTCASE(layout_add),
                                            TESTCASE(layout_opts_and_events),
                                            TESTCASE(delayed_same_ms_and_bulk),
                                            TESTCASE(worker_complete_layout),
                                            TESTCASE(worker_retry_and_fail),
                                            TESTCASE(retention),
                                            TESTCASE(lost_lock_is_stale_then_recovered),
                                            TESTCASE(admin),
                                            TESTCASE(global_concurrency_and_pause),
                                            TESTCASE(deferred_failure),
                                            TESTCASE(events_capped_by_steps),
                                            TESTCASE(event_field_not_utf8),
                                            TESTCASE(scheduler_numbers_out_of_range),
                                            TESTCASE(opts_numbers_out_of_range),
                                            {0}});
}
