/* conf_schedrec.c - a job scheduler outlives the death of the worker that
 * held its current iteration: once the stalled check failed that
 * iteration, the schedule still has exactly one pending iteration, one
 * interval after it, and the scheduler points at it.
 *
 * On SQLite the take and the next iteration are one transaction; on Redis
 * the take and the call making the next one are two, and a holder dying
 * between them is recovered by the stalled check (docs/internals/
 * schedules.md). The public API cannot stop a worker between those two
 * calls (the interop case schedrec_node_died makes that window with
 * BullMQ's own take), so this case holds the invariant on both stores:
 * whichever way the holder died, a stalled failure never ends a schedule
 * nor leaves two pending iterations. The holder is a forked child killed
 * with SIGKILL, forked before this process starts any thread. */
#include "conf.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static int started_fd = -1;

/* The child's handler: says it runs, then blocks until killed. */
static int hold_forever(ln_job *job, void *ctx) {
    (void)job, (void)ctx;
    if (write(started_fd, "s", 1) != 1) _exit(5);
    for (;;) pause();
    return 0;
}

/* A child worker (100 ms lease) that takes one job of queue and holds it;
 * returns once the handler runs. */
static pid_t holder_start(conf_ctx *c, const char *queue) {
    int p[2];
    CHECK_EQ(pipe(p), 0);
    fflush(NULL);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid != 0) {
        char b;
        CHECK_EQ(read(p[0], &b, 1), 1);
        close(p[0]), close(p[1]);
        return pid;
    }
    alarm(30); /* never outlive a failed case */
    started_fd = p[1];
    ln_jobs *jobs = NULL;
    if (ln_jobs_open(&jobs, c->url) != 0) _exit(2);
    ln_worker_opts o;
    ln_worker_opts_init(&o);
    o.lease_ms = 100;
    o.max_jobs = 1;
    ln_worker *w;
    if (ln_worker_create(&w, jobs, queue, hold_forever, NULL, &o) != 0) _exit(3);
    ln_worker_run(w);
    _exit(4);
}

/* "repeat:<sid>:<ms>": the ms, or -1. */
static long long iter_ms(const char *job_id, const char *sid) {
    char prefix[128];
    snprintf(prefix, sizeof prefix, "repeat:%s:", sid);
    if (strncmp(job_id, prefix, strlen(prefix)) != 0) return -1;
    return atoll(job_id + strlen(prefix));
}

/* An every-minute scheduler's first iteration is held by a worker that is
 * killed; a worker with max_stalled 0 fails it as stalled. Then: one
 * pending iteration, a minute after the failed one, the template's data,
 * iteration count 2. */
static void case_schedrec_stalled_failure_keeps_schedule(conf_ctx *c) {
    ln_job_schedule s;
    ln_job_schedule_init(&s);
    s.every_ms = 60000;
    char first[LN_JOB_ID_MAX];
    int rc = ln_jobs_schedule(c->jobs, c->queue, "sr", &s, "tick", "{\"k\":[1]}", NULL, first,
                              sizeof first);
    CHECK_EQ(rc, 0);
    long long m0 = iter_ms(first, "sr");
    CHECK(m0 > 0);
    pid_t pid = holder_start(c, c->queue);
    CHECK_EQ(conf_state(c, c->queue, first), LN_JOB_ACTIVE);
    kill(pid, SIGKILL);
    CHECK_EQ(waitpid(pid, NULL, 0), pid);

    ln_worker_opts o;
    conf_worker_opts(&o);
    o.exit_when_empty = 0;
    o.lease_ms = 10000;
    o.stalled_interval_ms = 20;
    o.max_stalled = 0;
    atomic_int runs = 0;
    conf_bg *b = conf_bg_start(c->jobs, c->queue, conf_handler_by_name, &runs, &o);
    for (int i = 0; i < 300 && conf_state(c, c->queue, first) != LN_JOB_FAILED; i++)
        ln_test_sleep_ms(10);
    ln_worker_stop(conf_bg_worker(b));
    ln_worker_stats st;
    CHECK_EQ(conf_bg_join(b, &st), 0);
    CHECK_EQ(st.stalled_found, 1);
    CHECK_EQ(atomic_load(&runs), 0); /* the next one is a minute away */

    ln_job_info info;
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, first, &info), 0);
    CHECK_EQ(info.state, LN_JOB_FAILED);
    CONF_CHECK_HAS(info.failed_reason, "stalled");
    ln_job_info_clear(&info);
    ln_job_counts k;
    CHECK_EQ(ln_jobs_counts(c->jobs, c->queue, &k), 0);
    CHECK_EQ(k.delayed + k.waiting + k.prioritized, 1); /* one, never two */
    CHECK_EQ(k.delayed, 1);
    ln_job_scheduler sc;
    CHECK_EQ(ln_jobs_scheduler_get(c->jobs, c->queue, "sr", &sc), 0);
    CHECK_EQ(sc.next_ms, m0 + 60000);
    CHECK_EQ(sc.iterations, 2);
    ln_job_scheduler_clear(&sc);
    char next[LN_JOB_ID_MAX];
    snprintf(next, sizeof next, "repeat:sr:%lld", m0 + 60000);
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, next, &info), 0);
    CHECK_EQ(info.state, LN_JOB_DELAYED);
    CHECK_EQ(info.run_at_ms, m0 + 60000);
    CONF_CHECK_STR(info.data, "{\"k\":[1]}");
    ln_job_info_clear(&info);
    conf_check_counts(c, c->queue);
}

const conf_case conf_schedrec_cases[] = {
    CONF_CASE(schedrec_stalled_failure_keeps_schedule),
    {0},
};
