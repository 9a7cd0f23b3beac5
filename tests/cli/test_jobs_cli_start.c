/* test_jobs_cli_start.c - `lanes worker --exec` when it cannot start its
 * program, the worker's fault and not the job's (cli/worker_gate.c): run
 * with 64 file descriptors and --concurrency 32, and with its program
 * removed while it runs (a deploy), it fails no job for good. When the
 * program comes back the worker resumes; when it does not, the worker
 * exits 5 after --start-retry with every job left to run. On SQLite, and
 * on Redis when LANES_TEST_REDIS_URL is set. */
#include "jobs/jobs_cli_test.h"

#include <dirent.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>

/* Start `lanes worker URL q ARGS...` with stderr to err and stdout to out
 * (files), at most nofile descriptors (0: as we have). Its pid. */
static pid_t start_worker(const char *const *args, rlim_t nofile, const char *out,
                          const char *err) {
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* dies with a failed test case */
        for (int fd = 3; fd < 1024; fd++) close(fd);
        int in = open("/dev/null", O_RDONLY);
        int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        dup2(in, 0), dup2(o, 1), dup2(e, 2);
        close(in), close(o), close(e);
        if (nofile != 0) {
            struct rlimit rl = {nofile, nofile};
            if (setrlimit(RLIMIT_NOFILE, &rl) != 0) _exit(126);
        }
        const char *argv[40] = {LANES_BIN};
        for (int i = 0; args[i] != NULL && i < 38; i++) argv[i + 1] = args[i];
        execv(LANES_BIN, (char *const *)argv);
        _exit(127);
    }
    return pid;
}

/* Its exit code, waiting at most bound_s seconds (then SIGKILL: -1). */
static int wait_worker(pid_t pid, int bound_s) {
    int status;
    for (int i = 0; i < bound_s * 100; i++) {
        if (waitpid(pid, &status, WNOHANG) == pid)
            return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        ln_test_sleep_ms(10);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return -1;
}

/* 1 once the worker exited (not reaped: wait_worker still gets it). */
static int exited(pid_t pid) {
    siginfo_t si;
    memset(&si, 0, sizeof si);
    return waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid;
}

static ln_job_counts counts(ln_jobs *jobs) {
    ln_job_counts c;
    CHECK_EQ(ln_jobs_counts(jobs, "q", &c), 0);
    return c;
}

/* Poll (10 ms) until the queue has at least n completed jobs, at most
 * bound_s seconds; a failed job or the worker's exit ends the wait. */
static void wait_completed(ln_jobs *jobs, pid_t pid, uint64_t n, int bound_s) {
    for (int i = 0; i < bound_s * 100; i++) {
        ln_job_counts c = counts(jobs);
        if (c.completed >= n || c.failed > 0 || exited(pid)) break;
        ln_test_sleep_ms(10);
    }
    ln_job_counts c = counts(jobs);
    CHECK_EQ(c.failed, 0);
    if (c.completed < n)
        fprintf(stderr, "completed %llu of %llu (failed %llu)\n", (unsigned long long)c.completed,
                (unsigned long long)n, (unsigned long long)c.failed);
    CHECK(c.completed >= n);
}

/* Poll until the file at path contains needle, at most bound_s seconds;
 * a failed job ends the wait. */
static void wait_text(ln_jobs *jobs, const char *path, const char *needle, int bound_s) {
    static char text[65536];
    for (int i = 0; i < bound_s * 100; i++) {
        if (strstr(slurp(path, text, sizeof text), needle) != NULL) return;
        CHECK_EQ(counts(jobs).failed, 0);
        ln_test_sleep_ms(10);
    }
    fprintf(stderr, "no '%s' in: %s\n", needle, text);
    CHECK(0);
}

static void add_jobs(ln_jobs *jobs, int n) {
    for (int i = 0; i < n; i++) CHECK_EQ(ln_jobs_add(jobs, "q", "n", "{}", NULL, NULL, 0), 0);
}

/* Write the program (a script: its interpreter opens it after the exec,
 * the case a deploy races with) and make it executable, atomically as a
 * deploy would (write aside, rename). */
static void deploy(const char *path) {
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s.new", path);
    FILE *f = fopen(tmp, "w");
    CHECK(f != NULL);
    fputs("#!/bin/sh\ncat >/dev/null\nsleep 0.05\necho '\"done\"'\n", f);
    fclose(f);
    CHECK_EQ(chmod(tmp, 0755), 0);
    CHECK_EQ(rename(tmp, path), 0);
}

static void fd_limit_on(const char *url) {
    ln_jobs *jobs = jt_open(url);
    add_jobs(jobs, 500);
    char out[600], err[600], text[65536];
    snprintf(out, sizeof out, "%s", jt_path("out.txt"));
    snprintf(err, sizeof err, "%s", jt_path("err.txt"));
    const char *args[] = {
        "worker", url,       "q",  "--concurrency",          "32", "--exit-when-empty", "--json",
        "--exec", "/bin/sh", "-c", "cat >/dev/null; echo 1", NULL};
    pid_t pid = start_worker(args, 64, out, err);
    int rc = wait_worker(pid, 120);
    slurp(err, text, sizeof text);
    ln_job_counts c = counts(jobs);
    if (rc != 0 || c.completed != 500) fprintf(stderr, "exit %d, stderr: %s\n", rc, text);
    CHECK_EQ(rc, 0);
    CHECK_EQ(c.failed, 0);
    CHECK_EQ(c.completed, 500);
    CHECK(lines_with(text, "cannot start '/bin/sh'") <= 1); /* one line, not one a job */
    ln_jobs_close(jobs);
}

/* The same limit under --max-started-attempts 2: a job that finds no
 * place or cannot start is held until it starts, not put back (each put
 * back was a new take, counted in attempts_started): none fails. */
static void max_started_on(const char *url) {
    ln_jobs *jobs = jt_open(url);
    add_jobs(jobs, 151);
    char out[600], err[600], text[65536];
    snprintf(out, sizeof out, "%s", jt_path("out.txt"));
    snprintf(err, sizeof err, "%s", jt_path("err.txt"));
    const char *args[] = {"worker", url,
                          "q",      "--concurrency",
                          "32",     "--max-started-attempts",
                          "2",      "--exit-when-empty",
                          "--exec", "/bin/sh",
                          "-c",     "cat >/dev/null; sleep 0.2; echo 1",
                          NULL};
    pid_t pid = start_worker(args, 64, out, err);
    int rc = wait_worker(pid, 120);
    slurp(err, text, sizeof text);
    ln_job_counts c = counts(jobs);
    if (rc != 0 || c.completed != 151) fprintf(stderr, "exit %d, stderr: %s\n", rc, text);
    CHECK_EQ(rc, 0);
    CHECK_EQ(c.failed, 0);
    CHECK_EQ(c.completed, 151);
    ln_jobs_close(jobs);
}

/* Entries in dir (the runs of CMD under way: each holds one). */
static int entries(const char *dir) {
    DIR *d = opendir(dir);
    CHECK(d != NULL);
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* Its soft limit of descriptors set to soft. */
static void set_nofile(pid_t pid, rlim_t soft) {
    struct rlimit rl;
    CHECK_EQ(prlimit(pid, RLIMIT_NOFILE, NULL, &rl), 0);
    rl.rlim_cur = soft < rl.rlim_max ? soft : rl.rlim_max;
    CHECK_EQ(prlimit(pid, RLIMIT_NOFILE, &rl, NULL), 0);
}

/* The worker runs out of descriptors (its limit lowered to 64 as it
 * runs), lowers how many it runs at once, and once descriptors are there
 * again (the limit raised back) climbs back toward --concurrency 32: 24
 * runs at once are seen (at 64 descriptors it ran at most about 13). */
static void limit_climbs_on(const char *url) {
    ln_jobs *jobs = jt_open(url);
    add_jobs(jobs, 1000);
    char runs[600], out[600], err[600];
    snprintf(runs, sizeof runs, "%s", jt_path("runs"));
    CHECK_EQ(mkdir(runs, 0700), 0);
    snprintf(out, sizeof out, "%s", jt_path("out.txt"));
    snprintf(err, sizeof err, "%s", jt_path("err.txt"));
    const char *script = "cat >/dev/null; mkdir \"$0/$$\"; sleep 1; rmdir \"$0/$$\"; echo 1";
    const char *args[] = {"worker", url,  "q", "--concurrency", "32", "--exec", "/bin/sh", "-c",
                          script,   runs, NULL};
    pid_t pid = start_worker(args, 0, out, err);
    set_nofile(pid, 64);
    for (int i = 0; i < 1000 && access(err, F_OK) != 0; i++) ln_test_sleep_ms(10);
    wait_text(jobs, err, "cannot start", 30);
    set_nofile(pid, 4096);
    int most = 0;
    for (int i = 0; i < 3000 && most < 24 && !exited(pid); i++) { /* 30 s */
        int n = entries(runs);
        most = n > most ? n : most;
        ln_test_sleep_ms(10);
    }
    kill(pid, SIGTERM);
    CHECK_EQ(wait_worker(pid, 30), 0);
    if (most < 24) fprintf(stderr, "at most %d runs at once\n", most);
    CHECK(most >= 24);
    CHECK_EQ(counts(jobs).failed, 0);
    ln_jobs_close(jobs);
}

/* The program goes while the worker runs and comes back 1 s later: the
 * worker says so once, puts the jobs back and resumes. */
static void comes_back_on(const char *url) {
    ln_jobs *jobs = jt_open(url);
    add_jobs(jobs, 200);
    char prog[600], out[600], err[600];
    snprintf(prog, sizeof prog, "%s", jt_path("prog.sh"));
    snprintf(out, sizeof out, "%s", jt_path("out.txt"));
    snprintf(err, sizeof err, "%s", jt_path("err.txt"));
    deploy(prog);
    const char *args[] = {"worker", url, "q", "--concurrency", "4", "--exec", prog, NULL};
    pid_t pid = start_worker(args, 0, out, err);
    wait_completed(jobs, pid, 10, 60);
    CHECK_EQ(unlink(prog), 0);
    wait_text(jobs, err, "cannot start", 30);
    ln_test_sleep_ms(1000);
    deploy(prog);
    wait_completed(jobs, pid, 200, 90);
    wait_text(jobs, err, "starts again", 10);
    kill(pid, SIGTERM);
    CHECK_EQ(wait_worker(pid, 30), 0);
    ln_job_counts c = counts(jobs);
    CHECK_EQ(c.failed, 0);
    CHECK_EQ(c.completed, 200);
    static char text[65536];
    CHECK_EQ(lines_with(slurp(err, text, sizeof text), "cannot start"), 1);
    ln_jobs_close(jobs);
}

/* The program goes for good: the worker gives up after --start-retry
 * (1.5 s) and exits 5; no job failed, every one not done is left to run
 * with no attempt used. */
static void never_back_on(const char *url) {
    ln_jobs *jobs = jt_open(url);
    add_jobs(jobs, 200);
    char prog[600], out[600], err[600];
    snprintf(prog, sizeof prog, "%s", jt_path("gone.sh"));
    snprintf(out, sizeof out, "%s", jt_path("out.txt"));
    snprintf(err, sizeof err, "%s", jt_path("err.txt"));
    deploy(prog);
    const char *args[] = {"worker", url,  "q", "--concurrency", "4", "--start-retry", "1500",
                          "--exec", prog, NULL};
    pid_t pid = start_worker(args, 0, out, err);
    wait_completed(jobs, pid, 10, 60);
    CHECK_EQ(unlink(prog), 0);
    int rc = wait_worker(pid, 60);
    static char text[65536];
    slurp(err, text, sizeof text);
    if (rc != 5) fprintf(stderr, "exit %d, stderr: %s\n", rc, text);
    CHECK_EQ(rc, 5);
    CHECK(strstr(text, "gave up: '") != NULL);
    ln_job_counts c = counts(jobs);
    CHECK_EQ(c.failed, 0);
    CHECK_EQ(c.active, 0);
    CHECK_EQ(c.completed + c.waiting + c.delayed, 200);
    CHECK(c.completed < 200);
    ln_jobs_close(jobs);
}

/* Run body on a fresh SQLite store, then on Redis when it is set. */
static void on_stores(void (*body)(const char *url), const char *name) {
    body(jt_url(name));
    jt_cleanup();
    const char *base = getenv("LANES_TEST_REDIS_URL");
    if (base == NULL || *base == '\0') {
        printf("skipped [redis]: LANES_TEST_REDIS_URL not set: the Redis half did not run\n");
        return;
    }
    char url[600], prefix[64], cmd[900];
    snprintf(prefix, sizeof prefix, "lstart%s%ld", name, (long)getpid());
    snprintf(url, sizeof url, "%s%sprefix=%s", base, strchr(base, '?') ? "&" : "?", prefix);
    jt_dir[0] = '\0'; /* a new directory for the program and the files */
    body(url);
    snprintf(cmd, sizeof cmd,
             "redis-cli -u '%.400s' EVAL \"for _, k in ipairs(redis.call('KEYS', ARGV[1])) do "
             "redis.call('DEL', k) end\" 0 '%s:*' >/dev/null",
             base, prefix);
    if (system(cmd) != 0) fprintf(stderr, "cleanup of %s failed\n", prefix);
    jt_cleanup();
}

TEST(worker_exec_at_64_fds_fails_no_job) {
    on_stores(fd_limit_on, "fd");
}

TEST(worker_exec_max_started_2_fails_no_job) {
    on_stores(max_started_on, "maxst");
}

TEST(worker_exec_start_limit_climbs_back) {
    on_stores(limit_climbs_on, "climb");
}

TEST(worker_exec_resumes_when_its_program_is_back) {
    on_stores(comes_back_on, "back");
}

TEST(worker_exec_exits_5_when_its_program_stays_gone) {
    on_stores(never_back_on, "gone");
}

int main(int argc, char **argv) {
    signal(SIGPIPE, SIG_IGN);
    return ln_test_run(argc, argv,
                       (ln_test_case[]){TESTCASE(worker_exec_at_64_fds_fails_no_job),
                                        TESTCASE(worker_exec_max_started_2_fails_no_job),
                                        TESTCASE(worker_exec_start_limit_climbs_back),
                                        TESTCASE(worker_exec_resumes_when_its_program_is_back),
                                        TESTCASE(worker_exec_exits_5_when_its_program_stays_gone),
                                        {0}});
}
