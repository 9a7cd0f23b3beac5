/* test_jobs_crash.c - reliability of the SQLite job store under process
 * failure: kill -9 of workers mid-run and of producers mid-batch, a worker
 * frozen past its lease (SIGSTOP), a poison job that crashes its worker,
 * many processes adding and taking at once, and a full disk. After each
 * run the per-state counters must still equal a COUNT(*) of the jobs. */
#include "jobs/jobs_test.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

/* ---------------------------------------------------------- worker children */

typedef struct wcfg {
    const char *url, *queue;
    unsigned concurrency, lease_ms, stalled_interval_ms, max_stalled;
    int exit_when_empty;
    int logfd;          /* side-effect log: one "id\n" per run, or -1 */
    unsigned sleep_us;  /* handler run time */
    const char *result; /* result JSON, or NULL */
    int startfd;        /* write 's' here when a job starts, or -1 */
} wcfg;

/* A SIGTERM may arrive before the worker exists: remember it. */
static ln_worker *volatile g_worker;
static volatile sig_atomic_t g_term;

static void on_term(int sig) {
    (void)sig;
    g_term = 1;
    ln_worker_stop(g_worker); /* NULL: no-op */
}

static int crash_handler(ln_job *job, void *ctx) {
    const wcfg *c = ctx;
    if (strcmp(ln_job_name(job), "poison") == 0) raise(SIGSEGV);
    if (c->startfd >= 0 && write(c->startfd, "s", 1) != 1) abort();
    char line[160];
    int n = snprintf(line, sizeof line, "%s\n", ln_job_id(job));
    if (c->logfd >= 0 && write(c->logfd, line, (size_t)n) != n) abort();
    if (c->sleep_us) usleep(c->sleep_us);
    return c->result ? ln_job_set_result(job, c->result) : 0;
}

/* Run a worker in a child process; it exits 0 when ln_worker_run returned
 * 0, and writes its stats to statsfd (if >= 0) first. */
static pid_t spawn_worker(const wcfg *c, int statsfd) {
    /* SIGTERM stays blocked until the child's handler is in place, so a
     * stop sent right after the fork is not fatal. */
    sigset_t term, old;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    sigprocmask(SIG_BLOCK, &term, &old);
    pid_t parent = getpid();
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid != 0) {
        sigprocmask(SIG_SETMASK, &old, NULL);
        return pid;
    }
    /* If the test case dies (a failed CHECK), its workers die with it. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(9);
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core); /* the poison job crashes us */
    struct sigaction sa = {.sa_handler = on_term};
    sigaction(SIGTERM, &sa, NULL);
    sigprocmask(SIG_SETMASK, &old, NULL);
    ln_jobs *jobs;
    if (ln_jobs_open(&jobs, c->url) != 0) _exit(2);
    ln_worker_opts o;
    ln_worker_opts_init(&o);
    o.concurrency = c->concurrency;
    o.lease_ms = c->lease_ms;
    o.stalled_interval_ms = c->stalled_interval_ms;
    o.max_stalled = c->max_stalled;
    o.exit_when_empty = c->exit_when_empty;
    o.poll_ms = 20;
    ln_worker *w;
    if (ln_worker_create(&w, jobs, c->queue, crash_handler, (void *)c, &o)) _exit(2);
    g_worker = w;
    if (g_term) ln_worker_stop(w);
    int rc = ln_worker_run(w);
    if (statsfd >= 0) {
        ln_worker_stats st;
        ln_worker_get_stats(w, &st);
        if (write(statsfd, &st, sizeof st) != sizeof st) _exit(3);
    }
    _exit(rc == 0 ? 0 : 1);
}

static int wait_exit(pid_t pid) {
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void check_integrity(const char *path) {
    sqlite3 *db;
    CHECK_EQ(sqlite3_open(path, &db), SQLITE_OK);
    sqlite3_stmt *s;
    CHECK_EQ(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &s, NULL), SQLITE_OK);
    CHECK_EQ(sqlite3_step(s), SQLITE_ROW);
    CHECK(strcmp((const char *)sqlite3_column_text(s, 0), "ok") == 0);
    sqlite3_finalize(s);
    sqlite3_close(db);
}

static long long sql_int(const char *path, const char *sql) {
    sqlite3 *db;
    CHECK_EQ(sqlite3_open(path, &db), SQLITE_OK);
    sqlite3_stmt *s;
    CHECK_EQ(sqlite3_prepare_v2(db, sql, -1, &s, NULL), SQLITE_OK);
    CHECK_EQ(sqlite3_step(s), SQLITE_ROW);
    long long v = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    sqlite3_close(db);
    return v;
}

/* ------------------------------------------------------------------ tests */

#define NJOBS 2000
#define NWORKERS 2
#define CONC 4

/* kill -9 workers at random moments during a 2,000-job run, restarting
 * them: every job ends completed exactly once in the store, every job ran
 * at least once, and re-runs are bounded by what the kills can explain
 * (each kill loses at most the CONC jobs its worker held). */
TEST(kill9_workers_lose_nothing) {
    const char *url = jt_url("k");
    ln_jobs *jobs = jt_open(url);
    static ln_job_spec specs[NJOBS];
    for (int i = 0; i < NJOBS; i++) specs[i] = (ln_job_spec){"n", "{}", NULL};
    CHECK_EQ(ln_jobs_add_bulk(jobs, "q", specs, NJOBS, NULL, 0), 0);
    int logfd = open(jt_path("runs.log"), O_WRONLY | O_CREAT | O_APPEND, 0644);
    CHECK(logfd >= 0);
    wcfg c = {.url = url,
              .queue = "q",
              .concurrency = CONC,
              .lease_ms = 300,
              .stalled_interval_ms = 100,
              .max_stalled = 1000000,
              .logfd = logfd,
              .sleep_us = 3000,
              .startfd = -1};
    pid_t w[NWORKERS];
    for (int i = 0; i < NWORKERS; i++) w[i] = spawn_worker(&c, -1);
    uint64_t seed = 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid();
    int kills = 0;
    ln_job_counts cnt = {0};
    uint64_t t0 = ln_now_ns();
    while (ln_now_ns() - t0 < 90000000000ull) {
        CHECK_EQ(ln_jobs_counts(jobs, "q", &cnt), 0);
        if (cnt.completed == NJOBS) break;
        ln_test_sleep_ms(20 + (unsigned)(ln_test_rand(&seed) % 120));
        if (kills < 25) {
            int k = (int)(ln_test_rand(&seed) % NWORKERS);
            kill(w[k], SIGKILL);
            wait_exit(w[k]);
            kills++;
            w[k] = spawn_worker(&c, -1);
        }
    }
    for (int i = 0; i < NWORKERS; i++) {
        kill(w[i], SIGTERM);
        CHECK_EQ(wait_exit(w[i]), 0);
    }
    close(logfd);
    CHECK_EQ(ln_jobs_counts(jobs, "q", &cnt), 0);
    CHECK_EQ(cnt.completed, NJOBS);
    CHECK_EQ(cnt.waiting + cnt.active + cnt.delayed + cnt.failed, 0);
    ln_jobs_close(jobs);
    char db[400];
    snprintf(db, sizeof db, "%s", jt_path("k.db"));
    check_integrity(db);
    CHECK_EQ(sql_int(db, "SELECT count(*) FROM lanes_jobs"), NJOBS);
    CHECK_EQ(sql_int(db, SQ_COUNTS_AUDIT_SQL), 0);
    /* The side-effect log: each job at least once, few extra runs. */
    static int runs[NJOBS + 1];
    FILE *f = fopen(jt_path("runs.log"), "r");
    CHECK(f != NULL);
    int id, total = 0;
    while (fscanf(f, "%d", &id) == 1) {
        CHECK(id >= 1 && id <= NJOBS);
        runs[id]++;
        total++;
    }
    fclose(f);
    for (int i = 1; i <= NJOBS; i++) CHECK(runs[i] >= 1);
    printf("  %d kills, %d runs for %d jobs (%d extra, bound %d)\n", kills, total, NJOBS,
           total - NJOBS, kills * CONC);
    CHECK(kills >= 3);
    CHECK(total - NJOBS <= kills * CONC);
    jt_cleanup();
}

/* kill -9 a producer in the middle of batch adds: each batch is stored
 * whole or not at all, and every batch whose add returned is there. */
TEST(kill9_producer_batches_are_atomic) {
    const char *url = jt_url("p");
    char db[400];
    snprintf(db, sizeof db, "%s", jt_path("p.db"));
    ln_jobs_close(jt_open(url)); /* create the schema once */
    uint64_t seed = 12345 ^ (uint64_t)getpid();
    static int acked[20000];
    int nacked = 0;
    for (int round = 0; round < 6; round++) {
        int p[2];
        CHECK_EQ(pipe(p), 0);
        pid_t pid = fork();
        if (pid == 0) {
            close(p[0]);
            ln_jobs *jobs;
            if (ln_jobs_open(&jobs, url) != 0) _exit(2);
            static char data[50][64];
            ln_job_spec specs[50];
            for (int k = 0;; k++) {
                int batch = round * 100000 + k;
                for (int i = 0; i < 50; i++) {
                    snprintf(data[i], sizeof data[i], "{\"batch\":%d,\"i\":%d}", batch, i);
                    specs[i] = (ln_job_spec){"n", data[i], NULL};
                }
                if (ln_jobs_add_bulk(jobs, "q", specs, 50, NULL, 0) != 0) _exit(3);
                if (write(p[1], &batch, sizeof batch) != sizeof batch) _exit(4);
            }
        }
        close(p[1]);
        ln_test_sleep_ms(15 + (unsigned)(ln_test_rand(&seed) % 60));
        kill(pid, SIGKILL);
        CHECK_EQ(wait_exit(pid), 128 + SIGKILL);
        int batch;
        while (read(p[0], &batch, sizeof batch) == sizeof batch && nacked < 20000)
            acked[nacked++] = batch; /* in order: batches only grow */
        close(p[0]);
    }
    check_integrity(db);
    /* Every stored batch is whole; every acknowledged one is stored. */
    sqlite3 *h;
    CHECK_EQ(sqlite3_open(db, &h), SQLITE_OK);
    sqlite3_stmt *s;
    CHECK_EQ(sqlite3_prepare_v2(h,
                                "SELECT json_extract(data, '$.batch') b, "
                                "count(*) FROM lanes_jobs GROUP BY b ORDER BY b",
                                -1, &s, NULL),
             SQLITE_OK);
    int stored = 0, next = 0;
    while (sqlite3_step(s) == SQLITE_ROW) {
        int b = sqlite3_column_int(s, 0);
        CHECK_EQ(sqlite3_column_int(s, 1), 50);
        if (next < nacked && acked[next] == b) next++;
        stored++;
    }
    sqlite3_finalize(s);
    sqlite3_close(h);
    CHECK_EQ(next, nacked);
    CHECK_EQ(sql_int(db, SQ_COUNTS_AUDIT_SQL), 0);
    CHECK_EQ(sql_int(db, "SELECT n FROM lanes_counts WHERE queue = 'q' AND "
                         "state = 0"),
             stored * 50);
    printf("  %d acknowledged batches, %d batches stored\n", nacked, stored);
    CHECK(nacked > 0);
    jt_cleanup();
}

/* A worker frozen past its lease loses the job to another worker; when it
 * thaws, its completion is rejected by the token check. */
TEST(sigstop_past_lease_stale_completion_rejected) {
    const char *url = jt_url("s");
    ln_jobs *jobs = jt_open(url);
    CHECK_EQ(ln_jobs_add(jobs, "q", "n", "{}", NULL, NULL, 0), 0);
    int start[2], stats[2];
    CHECK_EQ(pipe(start), 0);
    CHECK_EQ(pipe(stats), 0);
    wcfg a = {.url = url,
              .queue = "q",
              .concurrency = 1,
              .lease_ms = 300,
              .stalled_interval_ms = 100,
              .max_stalled = 5,
              .exit_when_empty = 1,
              .logfd = -1,
              .sleep_us = 600000,
              .result = "\"A\"",
              .startfd = start[1]};
    pid_t pa = spawn_worker(&a, stats[1]);
    char ch;
    CHECK_EQ(read(start[0], &ch, 1), 1);
    kill(pa, SIGSTOP);
    ln_test_sleep_ms(500); /* A's lease (300 ms) lapses */
    wcfg b = a;
    b.sleep_us = 0;
    b.result = "\"B\"";
    b.startfd = -1;
    pid_t pb = spawn_worker(&b, -1);
    CHECK_EQ(wait_exit(pb), 0);
    kill(pa, SIGCONT);
    CHECK_EQ(wait_exit(pa), 0);
    ln_worker_stats st;
    CHECK_EQ(read(stats[0], &st, sizeof st), (ssize_t)sizeof st);
    CHECK_EQ(st.completed, 0);
    CHECK(st.stale >= 1);
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(jobs, "q", "1", &info), 0);
    CHECK_EQ(info.state, LN_JOB_COMPLETED);
    CHECK(strcmp(info.result, "\"B\"") == 0);
    CHECK_EQ(info.stalled, 1);
    ln_job_info_clear(&info);
    ln_jobs_close(jobs);
    jt_cleanup();
}

/* A job whose handler crashes the worker process ends failed after
 * max_stalled + 1 crashes; the supervisor's restarts stop there. (With
 * concurrency > 1 the jobs running beside it lose their lease in each crash
 * too and are counted as stalled, so this runs one job at a time.) */
TEST(poison_job_fails_without_crash_loop) {
    const char *url = jt_url("x");
    ln_jobs *jobs = jt_open(url);
    CHECK_EQ(ln_jobs_add(jobs, "q", "poison", "{}", NULL, NULL, 0), 0);
    for (int i = 0; i < 20; i++) CHECK_EQ(ln_jobs_add(jobs, "q", "n", "{}", NULL, NULL, 0), 0);
    wcfg c = {.url = url,
              .queue = "q",
              .concurrency = 1,
              .lease_ms = 200,
              .stalled_interval_ms = 50,
              .max_stalled = 1,
              .exit_when_empty = 1,
              .logfd = -1,
              .startfd = -1};
    int crashes = 0, rc;
    while ((rc = wait_exit(spawn_worker(&c, -1))) != 0 && crashes < 10) {
        CHECK_EQ(rc, 128 + SIGSEGV);
        crashes++;
    }
    CHECK_EQ(rc, 0);
    CHECK_EQ(crashes, 2); /* first crash: stalled once; second: too many */
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(jobs, "q", "1", &info), 0);
    CHECK_EQ(info.state, LN_JOB_FAILED);
    CHECK(strstr(info.failed_reason, "stalled") != NULL);
    ln_job_info_clear(&info);
    ln_job_counts cnt;
    CHECK_EQ(ln_jobs_counts(jobs, "q", &cnt), 0);
    CHECK_EQ(cnt.completed, 20);
    ln_jobs_close(jobs);
    jt_cleanup();
}

/* Producers and workers in many processes at once on one file. */
TEST(many_processes_keep_the_store_consistent) {
    const char *url = jt_url("m");
    ln_jobs *jobs = jt_open(url);
    wcfg c = {.url = url,
              .queue = "q",
              .concurrency = 4,
              .lease_ms = 5000,
              .stalled_interval_ms = 1000,
              .max_stalled = 1,
              .logfd = -1,
              .startfd = -1};
    pid_t w[3];
    for (int i = 0; i < 3; i++) w[i] = spawn_worker(&c, -1);
    pid_t prod[4];
    for (int i = 0; i < 4; i++) {
        if ((prod[i] = fork()) == 0) {
            ln_jobs *j;
            if (ln_jobs_open(&j, url) != 0) _exit(2);
            ln_job_spec specs[10];
            for (int k = 0; k < 10; k++) specs[k] = (ln_job_spec){"b", "[]", NULL};
            for (int k = 0; k < 150; k++) /* 150 single adds, 15 batches */
                if (ln_jobs_add(j, "q", "s", "{}", NULL, NULL, 0) != 0 ||
                    (k % 10 == 0 && ln_jobs_add_bulk(j, "q", specs, 10, NULL, 0) != 0))
                    _exit(3);
            ln_jobs_close(j);
            _exit(0);
        }
    }
    for (int i = 0; i < 4; i++) CHECK_EQ(wait_exit(prod[i]), 0);
    const uint64_t total = 4 * (150 + 15 * 10);
    ln_job_counts cnt;
    uint64_t t0 = ln_now_ns();
    do {
        ln_test_sleep_ms(20);
        CHECK_EQ(ln_jobs_counts(jobs, "q", &cnt), 0);
    } while (cnt.completed < total && ln_now_ns() - t0 < 60000000000ull);
    for (int i = 0; i < 3; i++) {
        kill(w[i], SIGTERM);
        CHECK_EQ(wait_exit(w[i]), 0);
    }
    CHECK_EQ(ln_jobs_counts(jobs, "q", &cnt), 0);
    CHECK_EQ(cnt.completed, total);
    CHECK_EQ(jt_total(jobs, "q"), total);
    ln_jobs_close(jobs);
    char db[400];
    snprintf(db, sizeof db, "%s", jt_path("m.db"));
    check_integrity(db);
    CHECK_EQ(sql_int(db, SQ_COUNTS_AUDIT_SQL), 0);
    jt_cleanup();
}

/* Several processes opening the same NEW store at once: each open
 * succeeds (switching a new file to WAL once failed at once with "database
 * is locked" for the losers, without waiting) and the schema is made once. */
TEST(concurrent_first_opens_all_succeed) {
    for (int round = 0; round < 50; round++) {
        char name[32];
        snprintf(name, sizeof name, "first%d", round);
        const char *url = jt_url(name);
        pid_t p[6];
        for (int i = 0; i < 6; i++) {
            if ((p[i] = fork()) == 0) {
                ln_jobs *j;
                if (ln_jobs_open(&j, url) != 0) _exit(2);
                if (ln_jobs_add(j, "q", "n", "{}", NULL, NULL, 0) != 0) _exit(3);
                ln_jobs_close(j);
                _exit(0);
            }
        }
        for (int i = 0; i < 6; i++) CHECK_EQ(wait_exit(p[i]), 0);
        ln_jobs *jobs = jt_open(url);
        CHECK_EQ(jt_total(jobs, "q"), 6);
        ln_jobs_close(jobs);
    }
    jt_cleanup();
}

/* A full disk (a small tmpfs; needs root, else skipped): adds fail with
 * LN_ENOSPC and store nothing, the jobs already stored still run to the end
 * (the store's space reserve), and adds work again once space returns. */
TEST(disk_full_fails_adds_and_finishes_jobs) {
    if (geteuid() != 0) {
        LN_SKIP("disk-full", "mounting a small tmpfs needs root");
    }
    char mnt[400], url[500], db[500];
    snprintf(mnt, sizeof mnt, "%s", jt_path("mnt"));
    CHECK_EQ(mkdir(mnt, 0755), 0);
    /* A private mount namespace: the tmpfs vanishes with this process even
     * if a CHECK fails before the umount. */
    if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
        mount("tmpfs", mnt, "tmpfs", 0, "size=3m") != 0) {
        const char *why = strerror(errno);
        jt_cleanup();
        LN_SKIP("disk-full", "cannot mount tmpfs: %s", why);
    }
    snprintf(url, sizeof url, "sqlite:%s/q.db?reserve=524288", mnt);
    snprintf(db, sizeof db, "%s/q.db", mnt);
    ln_jobs *jobs = jt_open(url);
    char data[2100];
    memset(data, 'x', sizeof data);
    data[0] = '"';
    data[sizeof data - 2] = '"';
    data[sizeof data - 1] = '\0';
    int added = 0, rc = 0;
    while (added < 100000 && (rc = ln_jobs_add(jobs, "q", "n", data, NULL, NULL, 0)) == 0) added++;
    printf("  %d jobs added, then %s: %s\n", added, ln_err_name(rc), ln_jobs_errmsg(jobs));
    CHECK_EQ(rc, LN_ENOSPC);
    CHECK(added > 100);
    CHECK_EQ(jt_total(jobs, "q"), (uint64_t)added); /* nothing half-stored */
    ln_job_spec specs[3] = {{"n", "1", NULL}, {"n", data, NULL}, {"n", "2", NULL}};
    CHECK_EQ(ln_jobs_add_bulk(jobs, "q", specs, 3, NULL, 0), LN_ENOSPC);
    CHECK_EQ(jt_total(jobs, "q"), (uint64_t)added);
    /* The stored jobs run to the end on the full disk. */
    wcfg c = {.url = url,
              .queue = "q",
              .concurrency = 4,
              .lease_ms = 2000,
              .stalled_interval_ms = 1000,
              .max_stalled = 1,
              .exit_when_empty = 1,
              .logfd = -1,
              .startfd = -1,
              .result = "{\"done\":true}"};
    CHECK_EQ(wait_exit(spawn_worker(&c, -1)), 0);
    ln_job_counts cnt;
    CHECK_EQ(ln_jobs_counts(jobs, "q", &cnt), 0);
    CHECK_EQ(cnt.completed, (uint64_t)added);
    CHECK_EQ(ln_jobs_add(jobs, "q", "n", "{}", NULL, NULL, 0), LN_ENOSPC);
    check_integrity(db);
    /* Space returns: adds work again. */
    CHECK_EQ(mount("tmpfs", mnt, "tmpfs", MS_REMOUNT, "size=16m"), 0);
    CHECK_EQ(ln_jobs_add(jobs, "q", "n", data, NULL, NULL, 0), 0);
    ln_jobs_close(jobs);
    check_integrity(db);
    umount2(mnt, MNT_DETACH);
    jt_cleanup();
}

int main(int argc, char **argv) {
    return ln_test_run(argc, argv,
                       (ln_test_case[]){TESTCASE(kill9_workers_lose_nothing),
                                        TESTCASE(kill9_producer_batches_are_atomic),
                                        TESTCASE(sigstop_past_lease_stale_completion_rejected),
                                        TESTCASE(poison_job_fails_without_crash_loop),
                                        TESTCASE(many_processes_keep_the_store_consistent),
                                        TESTCASE(concurrent_first_opens_all_succeed),
                                        TESTCASE(disk_full_fails_adds_and_finishes_jobs),
                                        {0}});
}
