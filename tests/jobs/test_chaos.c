/* test_chaos.c - what must hold while processes die, freeze and are told
 * to stop, on every store, checked through the public API only:
 *
 *   test_chaos STORE [CASE]     STORE: sqlite | redis | a store URL
 *
 *  - kill -9 of workers and producers mid-run: no job whose add was
 *    acknowledged is lost, and every stored job ends completed, once;
 *  - workers frozen (SIGSTOP) past their lease, then continued, and
 *    storms of SIGTERM: the late completions are refused (stale), and the
 *    completions the workers had accepted add up to exactly one per job.
 *
 * Each case runs a few seconds. Workers and producers are forked children
 * (forked before this process starts a thread); the checks run here after
 * they are gone. test_jobs_crash.c has the SQLite-only checks that need
 * the database itself (counters against COUNT(*), a full disk). */
#include "testutil.h"

#include <lanes.h>
#include <lanes/jobs.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifdef CHAOS_HAVE_HIREDIS
#include <hiredis/hiredis.h>
#endif

static char store_url[1024];
static char tmp_dir[512];     /* sqlite: the store's directory; also logs */
static char redis_prefix[64]; /* redis: this run's key prefix */
static char run_tag[32];

static int64_t now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* ------------------------------------------------------------ children */

typedef struct wcfg {
    const char *queue;
    unsigned concurrency, lease_ms, sleep_ms, grace_ms;
    int statsfd; /* the child writes its ln_worker_stats here at exit */
} wcfg;

/* A SIGTERM may come before the worker exists: remember it. */
static ln_worker *volatile g_worker;
static volatile sig_atomic_t g_term;

static void on_term(int sig) {
    (void)sig;
    g_term = 1;
    ln_worker_stop(g_worker); /* NULL: no-op */
}

static int chaos_handler(ln_job *job, void *ctx) {
    const wcfg *c = ctx;
    if (c->sleep_ms) ln_test_sleep_ms(c->sleep_ms);
    char res[64];
    snprintf(res, sizeof res, "{\"pid\":%d}", (int)getpid());
    return ln_job_set_result(job, res);
}

static void worker_opts(const wcfg *c, ln_worker_opts *o) {
    ln_worker_opts_init(o);
    o->concurrency = c->concurrency;
    o->lease_ms = c->lease_ms;
    o->stalled_interval_ms = 20;
    o->max_stalled = 1000; /* lapsed leases requeue, never fail, a job */
    o->poll_ms = 10;
    o->grace_ms = c->grace_ms;
}

/* A worker in a child: exits 0 if ln_worker_run returned 0, after writing
 * its stats to statsfd (one write, less than PIPE_BUF: atomic). */
static pid_t spawn_worker(const wcfg *c) {
    sigset_t term, old;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    sigprocmask(SIG_BLOCK, &term, &old); /* until the handler is set */
    fflush(NULL);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid != 0) {
        sigprocmask(SIG_SETMASK, &old, NULL);
        return pid;
    }
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    alarm(60);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_term;
    sigaction(SIGTERM, &sa, NULL);
    sigprocmask(SIG_SETMASK, &old, NULL);
    ln_jobs *jobs = NULL;
    if (ln_jobs_open(&jobs, store_url) != 0) _exit(2);
    ln_worker_opts o;
    worker_opts(c, &o);
    ln_worker *w = NULL;
    if (ln_worker_create(&w, jobs, c->queue, chaos_handler, (void *)c, &o) != 0) _exit(3);
    g_worker = w;
    if (g_term) ln_worker_stop(w);
    int rc = ln_worker_run(w);
    g_worker = NULL;
    ln_worker_stats st;
    ln_worker_get_stats(w, &st);
    if (c->statsfd >= 0 && write(c->statsfd, &st, sizeof st) != (ssize_t)sizeof st) _exit(5);
    ln_worker_destroy(w);
    ln_jobs_close(jobs);
    _exit(rc != 0 ? 4 : 0);
}

/* A producer in a child: adds up to 'count' jobs, appending the id of
 * each acknowledged one (ln_jobs_add returned 0) to ackfd (O_APPEND). */
static pid_t spawn_producer(const char *queue, int ackfd, int count) {
    fflush(NULL);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid != 0) return pid;
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    alarm(60);
    ln_jobs *jobs = NULL;
    if (ln_jobs_open(&jobs, store_url) != 0) _exit(2);
    for (int i = 0; i < count; i++) {
        char id[LN_JOB_ID_MAX], line[LN_JOB_ID_MAX + 2];
        if (ln_jobs_add(jobs, queue, "p", "{\"n\":1}", NULL, id, sizeof id) != 0) continue;
        int n = snprintf(line, sizeof line, "%s\n", id);
        if (write(ackfd, line, (size_t)n) != n) _exit(5);
        ln_test_sleep_ms(1);
    }
    ln_jobs_close(jobs);
    _exit(0);
}

static int reap(pid_t pid) {
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void kill9(pid_t pid) {
    kill(pid, SIGKILL);
    (void)reap(pid);
}

/* ------------------------------------------------------------- checks */

/* This case's queue: unique per run, so runs on a shared store never meet. */
static const char *case_queue(const char *name, char *buf, size_t size) {
    snprintf(buf, size, "chaos-%s-%s", name, run_tag);
    return buf;
}

/* Run the queue empty in this process (exit_when_empty): lapsed leases of
 * the dead are recovered, everything left runs. Its stats go to *st. */
static void drain(ln_jobs *jobs, const char *queue, ln_worker_stats *st) {
    wcfg c = {queue, 4, 300, 0, 1000, -1};
    ln_worker_opts o;
    worker_opts(&c, &o);
    o.exit_when_empty = 1;
    ln_worker *w = NULL;
    CHECK_EQ(ln_worker_create(&w, jobs, queue, chaos_handler, &c, &o), 0);
    int rc = ln_worker_run(w);
    if (rc != 0) fprintf(stderr, "drain: %s\n", ln_jobs_errmsg(jobs));
    CHECK_EQ(rc, 0);
    ln_worker_get_stats(w, st);
    ln_worker_destroy(w);
}

/* Every job of queue is completed, none in another state; their number. */
static uint64_t check_all_completed(ln_jobs *jobs, const char *queue) {
    ln_job_counts n;
    CHECK_EQ(ln_jobs_counts(jobs, queue, &n), 0);
    if (n.waiting + n.delayed + n.prioritized + n.active + n.paused + n.failed != 0)
        fprintf(stderr,
                "left: waiting %llu delayed %llu prioritized %llu active %llu "
                "paused %llu failed %llu\n",
                (unsigned long long)n.waiting, (unsigned long long)n.delayed,
                (unsigned long long)n.prioritized, (unsigned long long)n.active,
                (unsigned long long)n.paused, (unsigned long long)n.failed);
    CHECK_EQ(n.waiting + n.delayed + n.prioritized + n.active + n.paused + n.failed, 0);
    return n.completed;
}

/* --------------------------------------------------------------- cases */

/* Workers and producers are killed (-9) at random while jobs flow, and
 * started again. Afterwards every acknowledged job is there and
 * completed, and so is every other job stored. */
static void kill9_workers_and_producers(void) {
    char q[128], ackpath[700];
    case_queue("kill9", q, sizeof q);
    snprintf(ackpath, sizeof ackpath, "%s/acks-%s", tmp_dir, q);
    int ackfd = open(ackpath, O_WRONLY | O_CREAT | O_APPEND | O_TRUNC, 0600);
    CHECK(ackfd >= 0);
    enum { NW = 3, NP = 2 };
    wcfg c = {q, 4, 300, 2, 1000, -1};
    pid_t workers[NW], producers[NP];
    for (int i = 0; i < NW; i++) workers[i] = spawn_worker(&c);
    for (int i = 0; i < NP; i++) producers[i] = spawn_producer(q, ackfd, 400);
    srand((unsigned)getpid());
    int64_t end = now_ms() + 2000;
    for (int round = 0; now_ms() < end; round++) {
        ln_test_sleep_ms(60 + (unsigned)(rand() % 80));
        if (round % 2 == 0) {
            int i = rand() % NW;
            kill9(workers[i]);
            workers[i] = spawn_worker(&c);
        } else {
            int i = rand() % NP;
            kill9(producers[i]);
            producers[i] = spawn_producer(q, ackfd, 400);
        }
    }
    for (int i = 0; i < NP; i++) kill9(producers[i]);
    for (int i = 0; i < NW; i++) kill9(workers[i]);
    close(ackfd);

    ln_jobs *jobs = NULL;
    CHECK_EQ(ln_jobs_open(&jobs, store_url), 0);
    ln_worker_stats st;
    drain(jobs, q, &st);
    uint64_t completed = check_all_completed(jobs, q);
    FILE *f = fopen(ackpath, "r");
    CHECK(f != NULL);
    char line[LN_JOB_ID_MAX + 2];
    uint64_t acked = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        line[strcspn(line, "\n")] = '\0';
        ln_job_info info;
        int rc = ln_jobs_get(jobs, q, line, &info);
        if (rc != 0) fprintf(stderr, "acknowledged job %s: %s\n", line, ln_err_name(rc));
        CHECK_EQ(rc, 0);
        CHECK_EQ(info.state, LN_JOB_COMPLETED);
        CHECK(info.result != NULL && strncmp(info.result, "{\"pid\":", 7) == 0);
        ln_job_info_clear(&info);
        acked++;
    }
    fclose(f);
    printf("     %llu acknowledged, %llu completed, %llu recovered at the end\n",
           (unsigned long long)acked, (unsigned long long)completed,
           (unsigned long long)st.stalled_found);
    CHECK(acked > 0);
    CHECK(completed >= acked); /* a producer killed between add and ack */
    ln_jobs_close(jobs);
}

/* Jobs run while, in turn, one worker is frozen (SIGSTOP) for three
 * leases and continued, and every worker gets a storm of SIGTERMs and is
 * started again. Every worker ends cleanly and reports its stats: their
 * accepted completions are exactly one per job (a late completion taken
 * would make more), and the frozen workers' late ones were refused. */
static void sigstop_and_sigterm_storms(void) {
    char q[128];
    case_queue("stop", q, sizeof q);
    enum { NW = 3, NJOBS = 800 };
    ln_jobs *jobs = NULL;
    CHECK_EQ(ln_jobs_open(&jobs, store_url), 0);
    ln_job_spec specs[100];
    for (int i = 0; i < 100; i++) specs[i] = (ln_job_spec){"s", "{}", NULL};
    for (int k = 0; k < NJOBS / 100; k++)
        CHECK_EQ(ln_jobs_add_bulk(jobs, q, specs, 100, NULL, 0), 0);
    ln_jobs_close(jobs); /* no handle is held across the forks */

    int sp[2];
    CHECK_EQ(pipe(sp), 0);
    CHECK_EQ(fcntl(sp[0], F_SETFL, O_NONBLOCK), 0);
    wcfg c = {q, 2, 200, 15, 0, sp[1]}; /* grace 0: a stop releases at once */
    pid_t workers[NW];
    for (int i = 0; i < NW; i++) workers[i] = spawn_worker(&c);
    int bad_exits = 0;
    for (int round = 0; round < 3; round++) {
        pid_t frozen = workers[round % NW];
        ln_test_sleep_ms(150); /* the new workers hold jobs by now */
        kill(frozen, SIGSTOP);
        ln_test_sleep_ms(3 * c.lease_ms); /* its leases lapse; others recover */
        kill(frozen, SIGCONT);
        ln_test_sleep_ms(100);
        for (int k = 0; k < 5; k++) /* the storm */
            for (int i = 0; i < NW; i++) kill(workers[i], SIGTERM);
        for (int i = 0; i < NW; i++) {
            int rc = reap(workers[i]);
            if (rc != 0) fprintf(stderr, "worker exited %d\n", rc), bad_exits++;
            workers[i] = spawn_worker(&c);
        }
    }
    for (int i = 0; i < NW; i++) {
        kill(workers[i], SIGTERM);
        if (reap(workers[i]) != 0) bad_exits++;
    }
    CHECK_EQ(bad_exits, 0);

    CHECK_EQ(ln_jobs_open(&jobs, store_url), 0);
    ln_worker_stats sum = {0}, st;
    drain(jobs, q, &sum);
    int reports = 0;
    while (read(sp[0], &st, sizeof st) == (ssize_t)sizeof st) {
        sum.completed += st.completed;
        sum.failed += st.failed;
        sum.stale += st.stale;
        sum.released += st.released;
        reports++;
    }
    close(sp[0]);
    close(sp[1]);
    CHECK_EQ(reports, 4 * NW);
    printf("     completed %llu, stale %llu, released %llu\n", (unsigned long long)sum.completed,
           (unsigned long long)sum.stale, (unsigned long long)sum.released);
    CHECK_EQ(check_all_completed(jobs, q), NJOBS);
    CHECK_EQ(sum.completed, NJOBS); /* exactly one accepted completion each */
    CHECK_EQ(sum.failed, 0);
    CHECK(sum.stale >= 1); /* the frozen workers' late outcomes, refused */
    ln_jobs_close(jobs);
}

/* ---------------------------------------------------------------- main */

static int setup_store(const char *arg) {
    snprintf(run_tag, sizeof run_tag, "%x%lx", (unsigned)getpid(),
             (unsigned long)time(NULL) & 0xfffff);
    const char *t = getenv("TMPDIR");
    snprintf(tmp_dir, sizeof tmp_dir, "%s/lanes-chaos-XXXXXX", t != NULL && *t ? t : "/tmp");
    if (mkdtemp(tmp_dir) == NULL) {
        perror("mkdtemp");
        return 1;
    }
    if (strcmp(arg, "sqlite") == 0) {
        snprintf(store_url, sizeof store_url, "sqlite:%s/chaos.db", tmp_dir);
    } else if (strcmp(arg, "redis") == 0) {
        const char *base = getenv("LANES_TEST_REDIS_URL");
        if (base == NULL || *base == '\0') {
            printf("skipped [redis]: LANES_TEST_REDIS_URL not set\n");
            return 77;
        }
        snprintf(redis_prefix, sizeof redis_prefix, "lchaos%s", run_tag);
        snprintf(store_url, sizeof store_url, "%s%cprefix=%s", base, strchr(base, '?') ? '&' : '?',
                 redis_prefix);
    } else {
        snprintf(store_url, sizeof store_url, "%s", arg);
    }
    return 0;
}

/* The keys of this run (redis), the directory (logs, sqlite store). */
static void cleanup_store(void) {
#ifdef CHAOS_HAVE_HIREDIS
    const char *base = getenv("LANES_TEST_REDIS_URL");
    char host[256] = "127.0.0.1";
    int port = 6379;
    if (redis_prefix[0] != '\0' && sscanf(base, "redis://%255[^:/?]:%d", host, &port) >= 1) {
        const char *slash = strchr(base + 8, '/');
        redisContext *r = redisConnect(host, port);
        if (r != NULL && !r->err) {
            freeReplyObject(redisCommand(r, "SELECT %d", slash ? atoi(slash + 1) : 0));
            freeReplyObject(redisCommand(
                r, "EVAL %s 0 %s:*",
                "for _, k in ipairs(redis.call('KEYS', ARGV[1])) do redis.call('DEL', k) end",
                redis_prefix));
        }
        if (r != NULL) redisFree(r);
    }
#endif
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp_dir);
    if (system(cmd) != 0) fprintf(stderr, "cleanup of %s failed\n", tmp_dir);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: test_chaos sqlite|redis|URL [CASE]\n");
        return 2;
    }
    int rc = setup_store(argv[1]);
    if (rc != 0) {
        if (tmp_dir[0] != '\0') rmdir(tmp_dir);
        return rc;
    }
    signal(SIGPIPE, SIG_IGN);
    rc = ln_test_run(argc - 1, argv + 1,
                     (ln_test_case[]){TESTCASE(kill9_workers_and_producers),
                                      TESTCASE(sigstop_and_sigterm_storms),
                                      {0}});
    cleanup_store();
    return rc;
}
