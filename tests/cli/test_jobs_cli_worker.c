/* test_jobs_cli_worker.c - what `lanes worker` says: start and stop,
 * --log-format json, refused stores and options, and a Redis store that
 * goes away and comes back. */
#include "jobs/jobs_cli_test.h"

#include <signal.h>
#include <sys/prctl.h>

/* ---- lanes worker talks (docs/cli.md, "lanes worker") */

TEST(worker_says_when_it_starts_and_stops) {
    char url[512], out[4096], err[16384];
    snprintf(url, sizeof url, "%s", jt_url("w"));
    CHECK_EQ(LANES(out, "jobs", url, "add", "q", "ok", "{}"), 0);
    CHECK_EQ(LANES(out, "jobs", url, "add", "q", "bad", "{}"), 0);
    stderr_path = jt_path("stderr.txt");
    CHECK_EQ(LANES(out, "worker", url, "q", "--exit-when-empty", "--concurrency", "2", "--timeout",
                   "5", "--exec", "/bin/sh", "-c", "[ \"$LANES_JOB_NAME\" = ok ]"),
             0);
    err_text(err, sizeof err);
    char want[700];
    snprintf(want, sizeof want,
             "lanes worker: started: store %s, queue q, concurrency 2, exec '/bin/sh', timeout 5 s",
             url);
    if (strstr(err, want) == NULL || strstr(err, "stopped (exit-when-empty)") == NULL)
        fprintf(stderr, "stderr: %s\n", err);
    CHECK(strstr(err, want) != NULL);
    CHECK(strstr(err, "stopped (exit-when-empty)") != NULL);
    CHECK(strstr(err, "1 jobs done, 1 failed") != NULL);
    CHECK_EQ(lines_with(err, "job "), 0); /* per job only with --verbose */
    /* --verbose: a line per run, with its outcome and time */
    CHECK_EQ(LANES(out, "jobs", url, "add", "q", "ok", "{}", "--id", "v1"), 0);
    CHECK_EQ(LANES(out, "jobs", url, "add", "q", "bad", "{}", "--id", "v2"), 0);
    CHECK_EQ(LANES(out, "worker", url, "q", "--exit-when-empty", "--verbose", "--max-jobs", "2",
                   "--exec", "/bin/sh", "-c",
                   "[ \"$LANES_JOB_NAME\" = ok ] || { echo no >&2; exit 4; }"),
             0);
    err_text(err, sizeof err);
    if (strstr(err, "job v1 (ok, attempt 1) completed in ") == NULL)
        fprintf(stderr, "stderr: %s\n", err);
    CHECK(strstr(err, "job v1 (ok, attempt 1) completed in ") != NULL);
    CHECK(strstr(err, "job v2 (bad, attempt 1) failed in ") != NULL);
    CHECK(strstr(err, " ms, for good: exit status 4: no") != NULL);
    CHECK(strstr(err, "stopped (max-jobs)") != NULL);
    /* A redis URL's password is never shown. */
    CHECK(LANES(out, "worker", "redis://me:s3cret@127.0.0.1:1/0", "q", "--store-retry", "0",
                "--fail-fast", "--exit-when-empty", "--exec", "true") != 0);
    err_text(err, sizeof err);
    CHECK(strstr(err, "s3cret") == NULL);
    stderr_path = NULL;
    jt_cleanup();
}

/* Every stderr line of --log-format json is one JSON object. */
static json_t *json_lines(const char *text) {
    json_t *all = json_array();
    char line[8192];
    for (const char *c = text; *c;) {
        const char *nl = strchr(c, '\n');
        size_t n = nl ? (size_t)(nl - c) : strlen(c);
        CHECK(n < sizeof line);
        memcpy(line, c, n);
        line[n] = '\0';
        json_t *v = parse(line);
        CHECK(json_is_object(v));
        CHECK(json_is_string(json_object_get(v, "ts")));
        CHECK(json_is_string(json_object_get(v, "level")));
        CHECK(json_is_string(json_object_get(v, "msg")));
        json_array_append_new(all, v);
        c += n + (nl != NULL);
    }
    return all;
}

/* The first line of lines whose "event" (or "outcome") is what. */
static json_t *line_of(json_t *lines, const char *key, const char *what) {
    size_t i;
    json_t *v;
    json_array_foreach(lines, i, v) {
        const char *e = json_string_value(json_object_get(v, key));
        if (e != NULL && strcmp(e, what) == 0) return v;
    }
    return NULL;
}

TEST(worker_log_format_json) {
    char url[512], out[4096], err[16384];
    snprintf(url, sizeof url, "%s", jt_url("lj"));
    CHECK_EQ(LANES(out, "jobs", url, "add", "q", "ok", "{}"), 0);
    CHECK_EQ(LANES(out, "jobs", url, "add", "q", "bad", "{}"), 0);
    stderr_path = jt_path("stderr.txt");
    CHECK_EQ(LANES(out, "worker", url, "q", "--exit-when-empty", "--verbose", "--log-format",
                   "json", "--exec", "/bin/sh", "-c",
                   "echo '{\"log\":' >&3; [ \"$LANES_JOB_NAME\" = ok ]"),
             0);
    json_t *lines = json_lines(err_text(err, sizeof err));
    CHECK(json_array_size(lines) >= 5); /* start, 2 malformed, 2 jobs, stop */
    json_t *v = line_of(lines, "event", "start");
    CHECK(v != NULL);
    CHECK(strcmp(json_string_value(json_object_get(v, "store")), url) == 0);
    CHECK(strcmp(json_string_value(json_object_get(v, "queue")), "q") == 0);
    CHECK_EQ(json_integer_value(json_object_get(v, "concurrency")), 1);
    CHECK(strcmp(json_string_value(json_object_get(v, "exec")), "/bin/sh") == 0);
    v = line_of(lines, "outcome", "completed");
    CHECK(v != NULL);
    CHECK(strcmp(json_string_value(json_object_get(v, "id")), "1") == 0);
    CHECK(json_is_integer(json_object_get(v, "ms")));
    v = line_of(lines, "outcome", "failed");
    CHECK(v != NULL && strcmp(json_string_value(json_object_get(v, "level")), "warn") == 0);
    CHECK(strcmp(json_string_value(json_object_get(v, "reason")), "exit status 1") == 0);
    v = line_of(lines, "event", "stop");
    CHECK(v != NULL);
    CHECK(strcmp(json_string_value(json_object_get(v, "why")), "exit-when-empty") == 0);
    CHECK_EQ(json_integer_value(json_object_get(v, "completed")), 1);
    CHECK_EQ(json_integer_value(json_object_get(v, "failed")), 1);
    json_decref(lines);
    /* Errors on the command line are JSON too, under --json or JSON logs. */
    CHECK_EQ(
        LANES(out, "worker", url, "q", "--log-format", "json", "--colour", "1", "--exec", "true"),
        2);
    v = parse(err_text(err, sizeof err));
    CHECK(strcmp(json_string_value(json_object_get(json_object_get(v, "error"), "code")),
                 "LN_EINVAL") == 0);
    json_decref(v);
    CHECK_EQ(LANES(out, "worker", url, "q", "--json", "--exec", "no-such-program-here"), 2);
    CHECK(out[0] == '\0');
    v = parse(err_text(err, sizeof err));
    CHECK(strstr(json_string_value(json_object_get(json_object_get(v, "error"), "message")),
                 "not found in PATH") != NULL);
    json_decref(v);
    stderr_path = NULL;
    jt_cleanup();
}

TEST(worker_refuses_a_missing_store_and_bad_options) {
    char url[512], out[4096], err[4096], path[512];
    snprintf(url, sizeof url, "%s", jt_url("typo"));
    snprintf(path, sizeof path, "%s", url + 7);
    stderr_path = jt_path("stderr.txt");
    CHECK_EQ(LANES(out, "worker", url, "q", "--exit-when-empty", "--exec", "true"), 2);
    CHECK(access(path, F_OK) != 0);
    CHECK(strstr(err_text(err, sizeof err), "no store at") != NULL);
    CHECK(strstr(err, "--create") != NULL);
    CHECK_EQ(LANES(out, "worker", url, "q", "--exit-when-empty", "--json", "--exec", "true"), 2);
    json_t *v = parse(err_text(err, sizeof err));
    CHECK(strcmp(json_string_value(json_object_get(json_object_get(v, "error"), "code")),
                 "LN_ENOENT") == 0);
    json_decref(v);
    CHECK(access(path, F_OK) != 0);
    CHECK_EQ(LANES(out, "worker", url, "q", "--exit-when-empty", "--create", "--exec", "true"), 0);
    CHECK(access(path, F_OK) == 0);
    /* Options that do not apply, or are given twice, are errors. */
    const char *bad[][4] = {
        {"--log-format", "xml", NULL, NULL},      {"--concurrency", "2", "--concurrency", "3"},
        {"--verbose", "--verbose", NULL, NULL},   {"--limit", "5", NULL, NULL},
        {"--metrics", "localhost:x", NULL, NULL}, {"--create", "--create", NULL, NULL},
        {"--start-retry", "-1", NULL, NULL},      {"--start-retry", "1", "--start-retry", "2"},
        {"--max-data-size", "1", NULL, NULL},     {"--max-data-size", "1073741825", NULL, NULL},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *a[12] = {"worker", url, "q"};
        int n = 3;
        for (int k = 0; k < 4 && bad[i][k] != NULL; k++) a[n++] = bad[i][k];
        a[n++] = "--exit-when-empty";
        a[n++] = "--exec";
        a[n++] = "true";
        a[n] = NULL;
        CHECK_EQ(run_lanes(out, sizeof out, a), 2);
    }
    /* Their good values are taken. */
    CHECK_EQ(LANES(out, "worker", url, "q", "--exit-when-empty", "--start-retry", "0",
                   "--max-data-size", "2", "--exec", "true"),
             0);
    stderr_path = NULL;
    jt_cleanup();
}

/* A redis-server of the test's own on port (a child of the test). */
static pid_t start_redis(const char *port) {
    pid_t rs = fork();
    CHECK(rs >= 0);
    if (rs == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* dies with a failed test case */
        int devnull = open("/dev/null", O_WRONLY);
        dup2(devnull, 1);
        execlp("redis-server", "redis-server", "--port", port, "--bind", "127.0.0.1", "--save", "",
               "--appendonly", "no", (char *)NULL);
        _exit(127);
    }
    return rs;
}

/* Whether the store at url answers within 5 s. */
static int store_up(const char *url) {
    char out[1024];
    int up = 0;
    stderr_path = "/dev/null"; /* "connection refused" until it is */
    for (int i = 0; i < 100 && !up; i++) {
        up = LANES(out, "jobs", url, "counts", "q") == 0;
        if (!up) ln_test_sleep_ms(50);
    }
    stderr_path = NULL;
    return up;
}

static void stop_child(pid_t pid, int sig) {
    kill(pid, sig);
    waitpid(pid, NULL, 0);
}

/* A worker whose Redis goes away says so, and says when it is back. Runs
 * its own redis-server (skipped when there is none in PATH, or lanes has
 * no Redis store). */
TEST(worker_says_when_it_loses_and_regains_the_store) {
    if (system("command -v redis-server >/dev/null 2>&1") != 0) {
        LN_SKIP("redis", "no redis-server in PATH");
    }
    char url[128], port[16], err[16384], errf[512];
    snprintf(errf, sizeof errf, "%s", jt_path("worker.err")); /* the dir, before the fork */
    snprintf(port, sizeof port, "%d", 20000 + (int)(getpid() % 20000));
    snprintf(url, sizeof url, "redis://127.0.0.1:%s/0", port);
    pid_t rs = start_redis(port);
    if (!store_up(url)) {
        stop_child(rs, SIGKILL);
        LN_SKIP("redis", "no Redis store on port %s (a redis-server of this test)", port);
    }
    pid_t w = fork();
    CHECK(w >= 0);
    if (w == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        int e = open(errf, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        dup2(e, 2);
        execl(LANES_BIN, LANES_BIN, "worker", url, "q", "--store-retry", "30000", "--poll", "50",
              "--exec", "true", (char *)NULL);
        _exit(127);
    }
    ln_test_sleep_ms(300);
    stop_child(rs, SIGKILL); /* the store goes away */
    ln_test_sleep_ms(600);   /* the worker retries meanwhile */
    rs = start_redis(port);
    CHECK(store_up(url));
    int said = 0;
    for (int i = 0; i < 200 && !said; i++) {
        ln_test_sleep_ms(50);
        said = strstr(slurp(errf, err, sizeof err), "the store is back") != NULL;
    }
    kill(w, SIGTERM);
    int status;
    waitpid(w, &status, 0);
    stop_child(rs, SIGKILL);
    slurp(errf, err, sizeof err);
    if (!said) fprintf(stderr, "stderr: %s\n", err);
    CHECK_EQ(lines_with(err, "lost the store; retrying for up to 30000 ms"), 1);
    CHECK_EQ(lines_with(err, "the store is back after "), 1);
    CHECK(strstr(err, "stopped (signal SIGTERM)") != NULL);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    jt_cleanup();
}

int main(int argc, char **argv) {
    signal(SIGPIPE, SIG_IGN);
    return ln_test_run(argc, argv,
                       (ln_test_case[]){TESTCASE(worker_says_when_it_starts_and_stops),
                                        TESTCASE(worker_log_format_json),
                                        TESTCASE(worker_refuses_a_missing_store_and_bad_options),
                                        TESTCASE(worker_says_when_it_loses_and_regains_the_store),
                                        {0}});
}
