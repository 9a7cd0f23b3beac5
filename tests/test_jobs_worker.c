/* test_jobs_worker.c - ln_worker on the SQLite store: concurrency, results,
 * retries with fixed and exponential backoff, delayed jobs, priorities,
 * lease renewal, stalled recovery after a worker dies, graceful stop with
 * release, max_jobs, and the worker on a caller's pool lane. Where jobs
 * move through many states, the store's per-state counters are checked
 * against a COUNT(*) of the jobs. */
#include "jobs/jobs_test.h"

#include <pthread.h>
#include <sqlite3.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/prctl.h>
#include <sys/wait.h>

static int store_result(ln_job *job, void *ctx) {
    atomic_int *calls = ctx;
    atomic_fetch_add(calls, 1);
    char buf[160];
    snprintf(buf, sizeof buf, "{\"id\":\"%s\",\"attempt\":%d}", ln_job_id(job),
             ln_job_attempt(job));
    return ln_job_set_result(job, buf);
}

static ln_worker *make_worker(ln_jobs *jobs, const char *queue,
                              ln_job_handler fn, void *ctx, unsigned conc,
                              int exit_when_empty) {
    ln_worker_opts o;
    ln_worker_opts_init(&o);
    o.concurrency = conc;
    o.exit_when_empty = exit_when_empty;
    ln_worker *w = NULL;
    CHECK_EQ(ln_worker_create(&w, jobs, queue, fn, ctx, &o), 0);
    return w;
}

TEST(runs_every_job_once_with_results) {
    ln_jobs *jobs = jt_open(jt_url("a"));
    ln_job_spec specs[300];
    for (int i = 0; i < 300; i++) specs[i] = (ln_job_spec){"n", "{}", NULL};
    CHECK_EQ(ln_jobs_add_bulk(jobs, "q", specs, 300, NULL, 0), 0);
    atomic_int calls = 0;
    ln_worker *w = make_worker(jobs, "q", store_result, &calls, 8, 1);
    CHECK_EQ(ln_worker_run(w), 0);
    CHECK_EQ(atomic_load(&calls), 300);
    ln_worker_stats st;
    ln_worker_get_stats(w, &st);
    CHECK_EQ(st.taken, 300);
    CHECK_EQ(st.completed, 300);
    CHECK_EQ(st.stale, 0);
    ln_job_counts c;
    CHECK_EQ(ln_jobs_counts(jobs, "q", &c), 0);
    CHECK_EQ(c.completed, 300);
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(jobs, "q", "123", &info), 0);
    CHECK(strcmp(info.result, "{\"id\":\"123\",\"attempt\":1}") == 0);
    ln_job_info_clear(&info);
    ln_worker_destroy(w);
    ln_jobs_close(jobs);
    jt_cleanup();
}

/* Fails until the given attempt, recording when each attempt started. */
typedef struct flaky {
    int succeed_at;        /* 0 = never */
    int64_t start_ms[8];   /* CLOCK_MONOTONIC */
    int runs;
} flaky;

static int flaky_handler(ln_job *job, void *ctx) {
    flaky *f = ctx;
    if (f->runs < 8) f->start_ms[f->runs] = (int64_t)(ln_now_ns() / 1000000);
    f->runs++;
    if (f->succeed_at != 0 && ln_job_attempt(job) >= f->succeed_at) return 0;
    return ln_job_fail(job, "flaky");
}

TEST(retries_with_fixed_and_exponential_backoff) {
    ln_jobs *jobs = jt_open(jt_url("b"));
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.attempts = 3;
    o.backoff = LN_BACKOFF_FIXED;
    o.backoff_ms = 60;
    CHECK_EQ(ln_jobs_add(jobs, "q", "n", "{}", &o, NULL, 0), 0);
    flaky f = {.succeed_at = 3};
    ln_worker *w = make_worker(jobs, "q", flaky_handler, &f, 1, 1);
    CHECK_EQ(ln_worker_run(w), 0);
    CHECK_EQ(f.runs, 3);
    CHECK(f.start_ms[1] - f.start_ms[0] >= 55); /* >= backoff, clock slack */
    CHECK(f.start_ms[2] - f.start_ms[1] >= 55);
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(jobs, "q", "1", &info), 0);
    CHECK_EQ(info.state, LN_JOB_COMPLETED);
    CHECK_EQ(info.attempts_made, 2);
    ln_job_info_clear(&info);
    ln_worker_destroy(w);

    /* Exponential: 40 ms, then 80 ms; then out of attempts -> failed. */
    o.backoff = LN_BACKOFF_EXPONENTIAL;
    o.backoff_ms = 40;
    CHECK_EQ(ln_jobs_add(jobs, "q2", "n", "{}", &o, NULL, 0), 0);
    flaky g = {.succeed_at = 0};
    w = make_worker(jobs, "q2", flaky_handler, &g, 1, 1);
    CHECK_EQ(ln_worker_run(w), 0);
    CHECK_EQ(g.runs, 3);
    CHECK(g.start_ms[1] - g.start_ms[0] >= 35);
    CHECK(g.start_ms[2] - g.start_ms[1] >= 75);
    CHECK_EQ(ln_jobs_get(jobs, "q2", "2", &info), 0);
    CHECK_EQ(info.state, LN_JOB_FAILED);
    CHECK_EQ(info.attempts_made, 3);
    CHECK(strcmp(info.failed_reason, "flaky") == 0);
    ln_job_info_clear(&info);
    ln_worker_stats st;
    ln_worker_get_stats(w, &st);
    CHECK_EQ(st.retried, 2);
    CHECK_EQ(st.failed, 1);
    ln_worker_destroy(w);
    ln_job_counts c;
    CHECK_EQ(ln_jobs_counts(jobs, "q2", &c), 0);
    CHECK_EQ(c.failed, 1);
    CHECK_EQ(jt_total(jobs, "q2"), 1);
    jt_check_counters("b");
    ln_jobs_close(jobs);
    jt_cleanup();
}

TEST(delayed_jobs_run_when_due) {
    ln_jobs *jobs = jt_open(jt_url("c"));
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.delay_ms = 200;
    CHECK_EQ(ln_jobs_add(jobs, "q", "later", "{}", &o, NULL, 0), 0);
    CHECK_EQ(ln_jobs_add(jobs, "q", "now", "{}", NULL, NULL, 0), 0);
    atomic_int calls = 0;
    ln_worker *w = make_worker(jobs, "q", store_result, &calls, 2, 1);
    CHECK_EQ(ln_worker_run(w), 0); /* waits for the delayed one */
    CHECK_EQ(atomic_load(&calls), 2);
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(jobs, "q", "1", &info), 0);
    CHECK_EQ(info.state, LN_JOB_COMPLETED);
    CHECK(info.started_ms - info.created_ms >= 200);
    ln_job_info_clear(&info);
    ln_worker_destroy(w);
    ln_jobs_close(jobs);
    jt_cleanup();
}

typedef struct order_log {
    char names[64];
} order_log;

static int record_order(ln_job *job, void *ctx) {
    order_log *l = ctx;
    strncat(l->names, ln_job_name(job), sizeof l->names - strlen(l->names) - 1);
    return 0;
}

TEST(priority_and_lifo_order) {
    ln_jobs *jobs = jt_open(jt_url("d"));
    const struct { const char *name; int prio, lifo; } add[] = {
        {"a", 0, 0}, {"b", 3, 0}, {"c", 1, 0}, {"d", 0, 0}, {"e", 0, 1},
        {"f", 1, 0},
    };
    for (size_t i = 0; i < sizeof add / sizeof add[0]; i++) {
        ln_job_opts o;
        ln_job_opts_init(&o);
        o.priority = add[i].prio;
        o.lifo = add[i].lifo;
        CHECK_EQ(ln_jobs_add(jobs, "q", add[i].name, "{}", &o, NULL, 0), 0);
    }
    order_log l = {""};
    ln_worker_opts o;
    ln_worker_opts_init(&o);
    o.exit_when_empty = 1;
    o.batch = 1;
    ln_worker *w;
    CHECK_EQ(ln_worker_create(&w, jobs, "q", record_order, &l, &o), 0);
    CHECK_EQ(ln_worker_run(w), 0);
    CHECK(strcmp(l.names, "eadcfb") == 0);
    ln_worker_destroy(w);
    ln_jobs_close(jobs);
    jt_cleanup();
}

static int slow_handler(ln_job *job, void *ctx) {
    unsigned ms = *(unsigned *)ctx;
    for (unsigned i = 0; i < ms / 10 && !ln_job_canceled(job); i++)
        ln_test_sleep_ms(10);
    return 0;
}

/* A job that runs for 3 leases is renewed, so an eager stalled check by a
 * second worker never takes it away. */
TEST(lease_is_renewed_while_handler_runs) {
    ln_jobs *jobs = jt_open(jt_url("e"));
    CHECK_EQ(ln_jobs_add(jobs, "q", "long", "{}", NULL, NULL, 0), 0);
    unsigned ms = 900;
    ln_worker_opts o;
    ln_worker_opts_init(&o);
    o.lease_ms = 300;
    o.stalled_interval_ms = 50;
    o.exit_when_empty = 1;
    /* A second worker, in a child forked before this process starts any
     * thread, checks for stalls every 50 ms. */
    pid_t pid = fork();
    if (pid == 0) {
        ln_jobs *j2 = jt_open(jt_url("e"));
        ln_worker *w2;
        unsigned zero = 0;
        o.exit_when_empty = 1;
        if (ln_worker_create(&w2, j2, "q", slow_handler, &zero, &o) != 0)
            _exit(2);
        int rc = ln_worker_run(w2);
        ln_worker_stats st;
        ln_worker_get_stats(w2, &st);
        ln_worker_destroy(w2);
        ln_jobs_close(j2);
        _exit(rc == 0 && st.stalled_found == 0 ? 0 : 1);
    }
    ln_worker *w;
    CHECK_EQ(ln_worker_create(&w, jobs, "q", slow_handler, &ms, &o), 0);
    CHECK_EQ(ln_worker_run(w), 0);
    int status;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(jobs, "q", "1", &info), 0);
    CHECK_EQ(info.state, LN_JOB_COMPLETED);
    CHECK_EQ(info.stalled, 0);
    CHECK_EQ(info.attempts_started, 1);
    ln_job_info_clear(&info);
    ln_worker_destroy(w);
    ln_jobs_close(jobs);
    jt_cleanup();
}

static int hang_handler(ln_job *job, void *ctx) {
    (void)job;
    int fd = *(int *)ctx;
    if (write(fd, "x", 1) != 1) abort();
    for (;;) pause();
}

/* A worker process dies holding a job: after its lease the next worker
 * recovers it (stalled = 1) and runs it; with max_stalled = 0 it fails. */
TEST(stalled_job_recovered_after_worker_dies) {
    ln_jobs *jobs = jt_open(jt_url("f"));
    CHECK_EQ(ln_jobs_add(jobs, "q", "n", "{}", NULL, NULL, 0), 0);
    CHECK_EQ(ln_jobs_add(jobs, "q0", "n", "{}", NULL, NULL, 0), 0);
    const char *queues[] = {"q", "q0"};
    for (int k = 0; k < 2; k++) {
        int p[2];
        CHECK_EQ(pipe(p), 0);
        pid_t pid = fork();
        if (pid == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL); /* dies with a failed case */
            ln_jobs *j2 = jt_open(jt_url("f"));
            ln_worker_opts o;
            ln_worker_opts_init(&o);
            o.lease_ms = 300;
            ln_worker *w2;
            if (ln_worker_create(&w2, j2, queues[k], hang_handler, &p[1], &o))
                _exit(2);
            ln_worker_run(w2);
            _exit(3);
        }
        char c;
        CHECK_EQ(read(p[0], &c, 1), 1); /* the job is running over there */
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        close(p[0]), close(p[1]);
    }
    atomic_int calls = 0;
    ln_worker_opts o;
    ln_worker_opts_init(&o);
    o.lease_ms = 300;
    o.stalled_interval_ms = 100;
    o.exit_when_empty = 1;
    ln_worker *w;
    CHECK_EQ(ln_worker_create(&w, jobs, "q", store_result, &calls, &o), 0);
    CHECK_EQ(ln_worker_run(w), 0);
    CHECK_EQ(atomic_load(&calls), 1);
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(jobs, "q", "1", &info), 0);
    CHECK_EQ(info.state, LN_JOB_COMPLETED);
    CHECK_EQ(info.stalled, 1);
    CHECK(strstr(info.result, "\"attempt\":2") != NULL);
    ln_job_info_clear(&info);
    ln_worker_destroy(w);
    o.max_stalled = 0;
    CHECK_EQ(ln_worker_create(&w, jobs, "q0", store_result, &calls, &o), 0);
    CHECK_EQ(ln_worker_run(w), 0);
    CHECK_EQ(atomic_load(&calls), 1); /* not run again */
    CHECK_EQ(ln_jobs_get(jobs, "q0", "2", &info), 0);
    CHECK_EQ(info.state, LN_JOB_FAILED);
    CHECK(strstr(info.failed_reason, "stalled more than allowable") != NULL);
    ln_job_info_clear(&info);
    ln_worker_destroy(w);
    jt_check_counters("f");
    ln_jobs_close(jobs);
    jt_cleanup();
}

typedef struct stopper {
    ln_worker *w;
    unsigned after_ms;
} stopper;

static void *stop_later(void *arg) {
    stopper *s = arg;
    ln_test_sleep_ms(s->after_ms);
    ln_worker_stop(s->w);
    return NULL;
}

TEST(graceful_stop_finishes_or_releases) {
    ln_jobs *jobs = jt_open(jt_url("g"));
    CHECK_EQ(ln_jobs_add(jobs, "q", "short", "{}", NULL, NULL, 0), 0);
    CHECK_EQ(ln_jobs_add(jobs, "q", "long", "{}", NULL, NULL, 0), 0);
    /* Within the grace period the running jobs finish. */
    unsigned ms = 200;
    ln_worker_opts o;
    ln_worker_opts_init(&o);
    o.concurrency = 2;
    o.grace_ms = 5000;
    ln_worker *w;
    CHECK_EQ(ln_worker_create(&w, jobs, "q", slow_handler, &ms, &o), 0);
    stopper s = {w, 50};
    pthread_t t;
    pthread_create(&t, NULL, stop_later, &s);
    CHECK_EQ(ln_worker_run(w), 0);
    pthread_join(t, NULL);
    ln_job_counts c;
    CHECK_EQ(ln_jobs_counts(jobs, "q", &c), 0);
    CHECK_EQ(c.completed, 2);
    ln_worker_destroy(w);

    /* Past the grace period they are released at once, not left to lapse. */
    CHECK_EQ(ln_jobs_add(jobs, "q", "long", "{}", NULL, NULL, 0), 0);
    ms = 20000;
    o.grace_ms = 100;
    CHECK_EQ(ln_worker_create(&w, jobs, "q", slow_handler, &ms, &o), 0);
    s.w = w;
    uint64_t t0 = ln_now_ns();
    pthread_create(&t, NULL, stop_later, &s);
    CHECK_EQ(ln_worker_run(w), 0);
    pthread_join(t, NULL);
    CHECK(ln_now_ns() - t0 < 5000000000u); /* far below the 20 s job */
    ln_worker_stats st;
    ln_worker_get_stats(w, &st);
    CHECK_EQ(st.released, 1);
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(jobs, "q", "3", &info), 0);
    CHECK_EQ(info.state, LN_JOB_WAITING);
    CHECK_EQ(info.attempts_started, 0);
    ln_job_info_clear(&info);
    ln_worker_destroy(w);
    ln_jobs_close(jobs);
    jt_cleanup();
}

TEST(max_jobs_and_caller_pool) {
    ln_jobs *jobs = jt_open(jt_url("h"));
    for (int i = 0; i < 20; i++)
        CHECK_EQ(ln_jobs_add(jobs, "q", "n", "{}", NULL, NULL, 0), 0);
    ln_pool *pool;
    CHECK_EQ(ln_pool_create(&pool, NULL), 0);
    atomic_int calls = 0;
    ln_worker_opts o;
    ln_worker_opts_init(&o);
    o.pool = pool;
    o.lane = LN_LANE_IO;
    o.concurrency = 3;
    o.max_jobs = 7;
    ln_worker *w;
    CHECK_EQ(ln_worker_create(&w, jobs, "q", store_result, &calls, &o), 0);
    CHECK_EQ(ln_worker_run(w), 0);
    CHECK_EQ(atomic_load(&calls), 7);
    ln_job_counts c;
    CHECK_EQ(ln_jobs_counts(jobs, "q", &c), 0);
    CHECK_EQ(c.completed, 7);
    CHECK_EQ(c.waiting, 13);
    ln_worker_destroy(w);
    o.lane = 9;
    CHECK_EQ(ln_worker_create(&w, jobs, "q", store_result, &calls, &o),
             LN_EINVAL);
    o.lane = LN_LANE_IO;
    o.concurrency = 0;
    CHECK_EQ(ln_worker_create(&w, jobs, "q", store_result, &calls, &o),
             LN_EINVAL);
    CHECK(strstr(ln_jobs_errmsg(jobs), "concurrency") != NULL);
    ln_pool_destroy(pool);
    ln_jobs_close(jobs);
    jt_cleanup();
}

int main(int argc, char **argv) {
    return ln_test_run(argc, argv, (ln_test_case[]){
        TESTCASE(runs_every_job_once_with_results),
        TESTCASE(retries_with_fixed_and_exponential_backoff),
        TESTCASE(delayed_jobs_run_when_due),
        TESTCASE(priority_and_lifo_order),
        TESTCASE(lease_is_renewed_while_handler_runs),
        TESTCASE(stalled_job_recovered_after_worker_dies),
        TESTCASE(graceful_stop_finishes_or_releases),
        TESTCASE(max_jobs_and_caller_pool),
        {0}});
}
