/* conf_lease.c - leases: a lease that lapses (its worker died or froze)
 * is recovered by another worker, or fails the job past max_stalled; the
 * frozen holder's late outcome is refused (stale); a running handler's
 * lease is renewed; a graceful stop lets handlers finish within grace_ms
 * and releases the jobs still running after it.
 *
 * Dead and frozen workers are forked children (SIGKILL / SIGSTOP), forked
 * before this process starts any thread. Leases are short (the minimum,
 * 100 ms); nothing waits for an absolute time. */
#include "conf.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

/* A child process running a worker on queue with a 100 ms lease, whose
 * handler writes one byte to 'started' when it runs and then blocks until
 * a byte arrives on 'go' (or forever). With max_jobs = 1 the child exits
 * after that job: 0 if its outcome, progress and log were refused as
 * stale, 1 (outcome accepted) or 7 (progress or log accepted) if not. */
typedef struct child {
    pid_t pid;
    int started[2], go[2];
} child;

typedef struct child_ctx {
    int started_fd, go_fd;
} child_ctx;

static int late_writes_stale; /* the child's: progress and log refused */

static int child_handler(ln_job *job, void *ctx) {
    child_ctx *cc = ctx;
    if (write(cc->started_fd, "s", 1) != 1) _exit(5);
    char b;
    if (read(cc->go_fd, &b, 1) != 1) _exit(6);
    late_writes_stale =
        ln_job_progress(job, "{\"late\":1}") == LN_ESTALE && ln_job_log(job, "late") == LN_ESTALE;
    return ln_job_set_result(job, "\"from the frozen worker\"");
}

static void child_start(conf_ctx *c, const char *queue, child *ch) {
    CHECK_EQ(pipe(ch->started), 0);
    CHECK_EQ(pipe(ch->go), 0);
    fflush(NULL);
    ch->pid = fork();
    CHECK(ch->pid >= 0);
    if (ch->pid != 0) {
        char b;
        CHECK_EQ(read(ch->started[0], &b, 1), 1); /* it runs the job */
        return;
    }
    alarm(30); /* never outlive a failed case */
    ln_jobs *jobs = NULL;
    if (ln_jobs_open(&jobs, c->url) != 0) _exit(2);
    child_ctx cc = {ch->started[1], ch->go[0]};
    ln_worker_opts o;
    ln_worker_opts_init(&o);
    o.lease_ms = 100;
    o.max_jobs = 1;
    ln_worker *w;
    if (ln_worker_create(&w, jobs, queue, child_handler, &cc, &o) != 0) _exit(3);
    int rc = ln_worker_run(w);
    ln_worker_stats st;
    ln_worker_get_stats(w, &st);
    ln_worker_destroy(w);
    ln_jobs_close(jobs);
    _exit(rc != 0 ? 4 : st.stale < 1 ? 1 : !late_writes_stale ? 7 : 0);
}

/* A worker that finds lapsed leases (of others) quickly; its own lease is
 * long, so a slow machine never makes it lose one. */
static void recovering_opts(ln_worker_opts *o) {
    conf_worker_opts(o);
    o->lease_ms = 10000;
    o->stalled_interval_ms = 20;
}

/* The holder dies: after its lease lapses the job is recovered (stalled
 * once) and run again; with max_stalled = 0 it fails instead. */
void case_stalled_job_recovered(conf_ctx *c) {
    char id[LN_JOB_ID_MAX], id0[LN_JOB_ID_MAX];
    const char *q0 = conf_queue(c, "max0");
    conf_add(c, c->queue, "ok", "{}", NULL, id);
    conf_add(c, q0, "ok", "{}", NULL, id0);
    child a, b;
    child_start(c, c->queue, &a);
    child_start(c, q0, &b);
    CHECK_EQ(conf_state(c, c->queue, id), LN_JOB_ACTIVE);
    kill(a.pid, SIGKILL);
    kill(b.pid, SIGKILL);
    CHECK_EQ(waitpid(a.pid, NULL, 0), a.pid);
    CHECK_EQ(waitpid(b.pid, NULL, 0), b.pid);

    atomic_int runs = 0;
    ln_worker_opts o;
    recovering_opts(&o);
    ln_worker_stats st = conf_run(c, c->queue, conf_handler_by_name, &runs, &o);
    CHECK_EQ(atomic_load(&runs), 1);
    CHECK_EQ(st.stalled_found, 1);
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, id, &info), 0);
    CHECK_EQ(info.state, LN_JOB_COMPLETED);
    CHECK_EQ(info.stalled, 1);
    CHECK_EQ(info.attempts_started, 2);
    CONF_CHECK_STR(info.result, "{\"ok\":{}}");
    ln_job_info_clear(&info);

    o.max_stalled = 0;
    st = conf_run(c, q0, conf_handler_by_name, &runs, &o);
    CHECK_EQ(atomic_load(&runs), 1); /* not run again */
    CHECK_EQ(st.stalled_found, 1);
    CHECK_EQ(ln_jobs_get(c->jobs, q0, id0, &info), 0);
    CHECK_EQ(info.state, LN_JOB_FAILED);
    CONF_CHECK_HAS(info.failed_reason, "stalled");
    ln_job_info_clear(&info);
    conf_check_counts(c, c->queue);
    conf_check_counts(c, q0);
    close(a.started[0]), close(a.started[1]), close(a.go[0]), close(a.go[1]);
    close(b.started[0]), close(b.started[1]), close(b.go[0]), close(b.go[1]);
}

/* Two holders die one after the other (the second recovered the job from
 * the first): with the default max_stalled = 1 the second lapse fails
 * the job, which does not run again. */
void case_stalled_twice_fails(conf_ctx *c) {
    char id[LN_JOB_ID_MAX];
    conf_add(c, c->queue, "ok", "{}", NULL, id);
    child a, b;
    child_start(c, c->queue, &a);
    kill(a.pid, SIGKILL);
    CHECK_EQ(waitpid(a.pid, NULL, 0), a.pid);
    child_start(c, c->queue, &b); /* its worker recovers the job, runs it */
    kill(b.pid, SIGKILL);
    CHECK_EQ(waitpid(b.pid, NULL, 0), b.pid);
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, id, &info), 0);
    CHECK_EQ(info.stalled, 1);
    CHECK_EQ(info.attempts_started, 2);
    ln_job_info_clear(&info);

    atomic_int runs = 0;
    ln_worker_opts o;
    recovering_opts(&o);
    ln_worker_stats st = conf_run(c, c->queue, conf_handler_by_name, &runs, &o);
    CHECK_EQ(atomic_load(&runs), 0);
    CHECK_EQ(st.stalled_found, 1);
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, id, &info), 0);
    CHECK_EQ(info.state, LN_JOB_FAILED);
    CONF_CHECK_HAS(info.failed_reason, "stalled");
    ln_job_info_clear(&info);
    conf_check_counts(c, c->queue);
    close(a.started[0]), close(a.started[1]), close(a.go[0]), close(a.go[1]);
    close(b.started[0]), close(b.started[1]), close(b.go[0]), close(b.go[1]);
}

/* The holder freezes past its lease; another worker recovers and
 * completes the job; the holder, thawed, finishes its handler: its
 * outcome is refused (LN_ESTALE, counted as stale) and the job keeps the
 * other worker's result. */
void case_stale_completion_refused(conf_ctx *c) {
    char id[LN_JOB_ID_MAX];
    conf_add(c, c->queue, "ok", "{\"by\":\"second\"}", NULL, id);
    child a;
    child_start(c, c->queue, &a);
    CHECK_EQ(kill(a.pid, SIGSTOP), 0);

    ln_worker_opts o;
    recovering_opts(&o);
    ln_worker_stats st = conf_run(c, c->queue, conf_handler_by_name, NULL, &o);
    CHECK_EQ(st.completed, 1);
    CHECK_EQ(st.stalled_found, 1);

    CHECK_EQ(kill(a.pid, SIGCONT), 0);
    CHECK_EQ(write(a.go[1], "g", 1), 1);
    int status;
    CHECK_EQ(waitpid(a.pid, &status, 0), a.pid);
    CHECK(WIFEXITED(status));
    CHECK_EQ(WEXITSTATUS(status), 0); /* its outcome was stale */
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, id, &info), 0);
    CHECK_EQ(info.state, LN_JOB_COMPLETED);
    CONF_CHECK_STR(info.result, "{\"ok\":{\"by\":\"second\"}}");
    CHECK(info.progress == NULL);
    CHECK_EQ(info.stalled, 1);
    CHECK_EQ(info.attempts_started, 2);
    ln_job_info_clear(&info);
    conf_check_counts(c, c->queue);
    close(a.started[0]), close(a.started[1]), close(a.go[0]), close(a.go[1]);
}

static int sleep_handler(ln_job *job, void *ctx) {
    unsigned ms = *(unsigned *)ctx;
    for (unsigned i = 0; i < ms / 5 && !ln_job_canceled(job); i++) ln_test_sleep_ms(5);
    return 0;
}

/* A handler running for several leases keeps its job: another worker,
 * looking for lapsed leases every 20 ms, never takes it away. */
void case_lease_renewed_while_running(conf_ctx *c) {
    char id[LN_JOB_ID_MAX];
    conf_add(c, c->queue, "long", "{}", NULL, id);
    /* Renewed every lease / 2: a hiccup of the machine shorter than that
     * must not lose it. */
    unsigned lease = ln_test_sanitized() ? 600 : 300;
    unsigned ms = lease * 5 / 2;
    ln_worker_opts o;
    recovering_opts(&o);
    o.lease_ms = lease;
    conf_bg *first = conf_bg_start(c->jobs, c->queue, sleep_handler, &ms, &o);
    conf_wait_state(c, c->queue, id, LN_JOB_ACTIVE, 5000);
    ln_jobs *other = conf_open(c, NULL);
    unsigned zero = 0;
    conf_bg *second = conf_bg_start(other, c->queue, sleep_handler, &zero, &o);
    ln_worker_stats st1, st2;
    CHECK_EQ(conf_bg_join(first, &st1), 0);
    CHECK_EQ(conf_bg_join(second, &st2), 0);
    ln_jobs_close(other);
    if (st1.completed != 1 || st2.taken != 0)
        fprintf(stderr,
                "first: taken %llu completed %llu stale %llu; second: "
                "taken %llu stalled_found %llu\n",
                (unsigned long long)st1.taken, (unsigned long long)st1.completed,
                (unsigned long long)st1.stale, (unsigned long long)st2.taken,
                (unsigned long long)st2.stalled_found);
    CHECK_EQ(st1.completed, 1);
    CHECK_EQ(st1.stale, 0);
    CHECK_EQ(st2.stalled_found, 0);
    CHECK_EQ(st2.taken, 0);
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, id, &info), 0);
    CHECK_EQ(info.state, LN_JOB_COMPLETED);
    CHECK_EQ(info.stalled, 0);
    CHECK_EQ(info.attempts_started, 1);
    ln_job_info_clear(&info);
}

/* Stop within the grace period: the running jobs finish. */
void case_graceful_stop_finishes_within_grace(conf_ctx *c) {
    conf_add(c, c->queue, "a", "{}", NULL, NULL);
    conf_add(c, c->queue, "b", "{}", NULL, NULL);
    conf_add(c, c->queue, "c", "{}", NULL, NULL);
    conf_hold h = {0};
    ln_worker_opts o;
    conf_worker_opts(&o);
    o.exit_when_empty = 0;
    o.concurrency = 2;
    o.grace_ms = 10000;
    conf_bg *b = conf_bg_start(c->jobs, c->queue, conf_hold_handler, &h, &o);
    conf_hold_wait(&h, 2);
    ln_worker_stop(conf_bg_worker(b));
    ln_test_sleep_ms(20);
    CHECK(!conf_bg_done(b)); /* waits for its handlers */
    atomic_store(&h.release, 1);
    ln_worker_stats st;
    CHECK_EQ(conf_bg_join(b, &st), 0);
    CHECK_EQ(st.completed, 2);
    CHECK_EQ(st.released, 0);
    CHECK_EQ(atomic_load(&h.canceled), 0);
    ln_job_counts k;
    CHECK_EQ(ln_jobs_counts(c->jobs, c->queue, &k), 0);
    CHECK_EQ(k.completed, 2);
    CHECK_EQ(k.waiting, 1); /* the third was never taken */
    CHECK_EQ(k.active, 0);
}

/* Past the grace period the jobs still running are released to waiting
 * at once (not left to lapse), their handlers see ln_job_canceled() and
 * their outcome is discarded; the next worker runs them afresh. */
void case_graceful_stop_releases_after_grace(conf_ctx *c) {
    char id[LN_JOB_ID_MAX];
    conf_add(c, c->queue, "hold", "{}", NULL, id);
    conf_hold h = {0};
    ln_worker_opts o;
    conf_worker_opts(&o);
    o.exit_when_empty = 0;
    o.grace_ms = 20;
    conf_bg *b = conf_bg_start(c->jobs, c->queue, conf_hold_handler, &h, &o);
    conf_hold_wait(&h, 1);
    ln_worker_stop(conf_bg_worker(b));
    ln_worker_stats st;
    CHECK_EQ(conf_bg_join(b, &st), 0);
    CHECK_EQ(atomic_load(&h.canceled), 1);
    CHECK_EQ(st.released, 1);
    CHECK_EQ(st.completed, 0);
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, id, &info), 0);
    CHECK_EQ(info.state, LN_JOB_WAITING);
    CHECK_EQ(info.attempts_started, 0);
    CHECK_EQ(info.attempts_made, 0);
    CHECK(info.result == NULL);
    ln_job_info_clear(&info);
    conf_check_counts(c, c->queue);

    atomic_int runs = 0;
    conf_worker_opts(&o);
    conf_run(c, c->queue, conf_handler_by_name, &runs, &o);
    CHECK_EQ(atomic_load(&runs), 1);
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, id, &info), 0);
    CHECK_EQ(info.state, LN_JOB_COMPLETED);
    CHECK_EQ(info.attempts_started, 1);
    ln_job_info_clear(&info);
}
