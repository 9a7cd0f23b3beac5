/* test_jobs_cli_exec.c - `lanes worker --exec` end to end: results,
 * failures, exit codes, bytes and JSON on stdout (read whole, to its end),
 * no shell, timeouts that kill the process group, SIGTERM, the fd-3
 * channel, and exit 78's steps (waiting for children the program added;
 * also on Redis when LANES_TEST_REDIS_URL is set). */
#include "jobs/jobs_cli_test.h"

#include <dirent.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>

/* Exit 76 fails for good; exit 75 delays by what stdout says, using no
 * attempt, and without a delay on stdout is a plain failure. */
static const char outcome_sh[] =
    "case \"$LANES_JOB_NAME:$LANES_JOB_ATTEMPT\" in\n"
    "  unrec:*) echo \"no way\" >&2; exit 76 ;;\n"
    "  later:1) echo '{\"delay_ms\": 30}'; exit 75 ;;\n"
    "  until:1) echo \"{\\\"delay_until\\\": $(( $(date +%s) * 1000 ))}\"; exit 75 ;;\n"
    "  bare:*) exit 75 ;;\n"
    "  *) echo '\"ran\"' ;;\n"
    "esac\n";

TEST(worker_exec_delay_and_unrecoverable_exit_codes) {
    char url[512], out[8192];
    snprintf(url, sizeof url, "%s", jt_url("o"));
    CHECK_EQ(LANES(out, "jobs", url, "add", "q", "unrec", "{}", "--attempts", "3"), 0);
    CHECK_EQ(LANES(out, "jobs", url, "add", "q", "later", "{}"), 0);
    CHECK_EQ(LANES(out, "jobs", url, "add", "q", "until", "{}"), 0);
    CHECK_EQ(LANES(out, "jobs", url, "add", "q", "bare", "{}"), 0);
    CHECK_EQ(LANES(out, "worker", url, "q", "--exit-when-empty", "--poll", "10", "--json", "--exec",
                   "/bin/sh", "-c", outcome_sh, "handler"),
             0);
    json_t *j = get_job(url, "q", "1");
    CHECK(strcmp(json_string_value(json_object_get(j, "state")), "failed") == 0);
    CHECK(strcmp(json_string_value(json_object_get(j, "failed_reason")),
                 "exit status 76 (unrecoverable): no way") == 0);
    CHECK_EQ(json_integer_value(json_object_get(j, "attempts_made")), 1);
    json_decref(j);
    for (int i = 2; i <= 3; i++) {
        char id[8];
        snprintf(id, sizeof id, "%d", i);
        j = get_job(url, "q", id);
        CHECK(strcmp(json_string_value(json_object_get(j, "state")), "completed") == 0);
        CHECK(strcmp(json_string_value(json_object_get(j, "result")), "ran") == 0);
        CHECK_EQ(json_integer_value(json_object_get(j, "attempts_made")), 0);
        CHECK_EQ(json_integer_value(json_object_get(j, "attempts_started")), 2);
        json_decref(j);
    }
    j = get_job(url, "q", "4");
    CHECK(strcmp(json_string_value(json_object_get(j, "state")), "failed") == 0);
    CHECK(strstr(json_string_value(json_object_get(j, "failed_reason")),
                 "exit status 75 (delay) without") != NULL);
    json_decref(j);
    jt_cleanup();
}

/* A handler in sh: prints its environment and input as JSON, or fails. */
static const char handler_sh[] =
    "data=$(cat)\n"
    "case \"$LANES_JOB_NAME\" in\n"
    "  text) echo \"plain words\" ;;\n"
    "  fail) echo \"first\" >&2; echo \"boom\" >&2; exit 3 ;;\n"
    "  segv) kill -SEGV $$ ;;\n"
    "  slow) sleep 30 ;;\n"
    "  *) printf '{\"id\":\"%s\",\"name\":\"%s\",\"attempt\":%s,\"in\":%s}\\n'"
    " \"$LANES_JOB_ID\" \"$LANES_JOB_NAME\" \"$LANES_JOB_ATTEMPT\" \"$data\" ;;\n"
    "esac\n";

TEST(worker_exec_results_and_failures) {
    char url[512], out[8192];
    snprintf(url, sizeof url, "%s", jt_url("c"));
    CHECK_EQ(LANES(out, "jobs", url, "add", "q", "echo", "{\"x\":[1,2]}"), 0);
    CHECK_EQ(LANES(out, "jobs", url, "add", "q", "text", "{}"), 0);
    CHECK_EQ(LANES(out, "jobs", url, "add", "q", "fail", "{}", "--attempts", "2"), 0);
    CHECK_EQ(LANES(out, "jobs", url, "add", "q", "segv", "{}"), 0);
    CHECK_EQ(LANES(out, "jobs", url, "add", "q", "slow", "{}"), 0);
    CHECK_EQ(LANES(out, "worker", url, "q", "--concurrency", "3", "--exit-when-empty", "--timeout",
                   "1", "--json", "--exec", "/bin/sh", "-c", handler_sh, "handler"),
             0);
    json_t *st = parse(out);
    CHECK_EQ(json_integer_value(json_object_get(st, "completed")), 2);
    CHECK_EQ(json_integer_value(json_object_get(st, "failed")), 3);
    CHECK_EQ(json_integer_value(json_object_get(st, "retried")), 1);
    json_decref(st);
    json_t *j = get_job(url, "q", "1");
    json_t *r = json_object_get(j, "result");
    CHECK(strcmp(json_string_value(json_object_get(r, "id")), "1") == 0);
    CHECK(strcmp(json_string_value(json_object_get(r, "name")), "echo") == 0);
    CHECK_EQ(json_integer_value(json_object_get(r, "attempt")), 1);
    CHECK_EQ(json_integer_value(json_array_get(json_object_get(json_object_get(r, "in"), "x"), 1)),
             2);
    json_decref(j);
    j = get_job(url, "q", "2");
    CHECK(strcmp(json_string_value(json_object_get(j, "result")), "plain words") == 0);
    json_decref(j);
    j = get_job(url, "q", "3");
    CHECK(strcmp(json_string_value(json_object_get(j, "state")), "failed") == 0);
    CHECK(strcmp(json_string_value(json_object_get(j, "failed_reason")),
                 "exit status 3: first\nboom") == 0);
    CHECK_EQ(json_integer_value(json_object_get(j, "attempts_made")), 2);
    json_decref(j);
    j = get_job(url, "q", "4");
    CHECK(strstr(json_string_value(json_object_get(j, "failed_reason")), "killed by signal 11") !=
          NULL);
    json_decref(j);
    j = get_job(url, "q", "5");
    CHECK(strstr(json_string_value(json_object_get(j, "failed_reason")),
                 "timed out after 1000 ms") != NULL);
    json_decref(j);
    jt_cleanup();
}

TEST(worker_exec_never_uses_a_shell) {
    char url[512], out[8192], marker[400], data[1400];
    snprintf(url, sizeof url, "%s", jt_url("d"));
    snprintf(marker, sizeof marker, "%s", jt_path("pwned"));
    snprintf(data, sizeof data, "\"$(touch %s); `touch %s`; | touch %s\"", marker, marker, marker);
    CHECK_EQ(LANES(out, "jobs", url, "add", "q", "x; touch /tmp/nope", data), 0);
    CHECK_EQ(LANES(out, "worker", url, "q", "--exit-when-empty", "--exec", "cat"), 0);
    CHECK(access(marker, F_OK) != 0);
    json_t *j = get_job(url, "q", "1");
    json_t *in = parse(data);
    CHECK(json_equal(json_object_get(j, "result"), in));
    json_decref(in);
    json_decref(j);
    jt_cleanup();
}

/* What --exec makes of bytes: stdout with a NUL byte fails for that
 * reason; stderr (the failure reason) and non-UTF-8 stdout keep their
 * valid UTF-8 and only ill-formed sequences become U+FFFD. */
static const char bytes_sh[] =
    "case \"$LANES_JOB_NAME\" in\n"
    "  nul) echo a; head -c 1 /dev/zero; echo b ;;\n"
    "  utf8) printf 'Fehler \\303\\274 \\377 x \\342\\202y \\355\\240\\200z\\001\\n' >&2;"
    " exit 1 ;;\n"
    "  cut) i=0; while [ $i -lt 1500 ]; do printf '\\303\\274'; i=$((i+1)); done >&2;"
    " printf x >&2; exit 1 ;;\n"
    "  text) printf 'ok \\303\\274 \\377\\n' ;;\n"
    "esac\n";

#define FFFD "\xef\xbf\xbd"

TEST(worker_exec_keeps_utf8_and_names_a_nul) {
    char url[512], out[8192];
    snprintf(url, sizeof url, "%s", jt_url("u"));
    const char *names[] = {"nul", "utf8", "cut", "text"};
    for (int i = 0; i < 4; i++) CHECK_EQ(LANES(out, "jobs", url, "add", "q", names[i], "{}"), 0);
    CHECK_EQ(LANES(out, "worker", url, "q", "--exit-when-empty", "--exec", "/bin/sh", "-c",
                   bytes_sh, "bytes"),
             0);
    json_t *j = get_job(url, "q", "1");
    CHECK(strcmp(json_string_value(json_object_get(j, "failed_reason")),
                 "stdout contains a NUL byte") == 0);
    json_decref(j);
    j = get_job(url, "q", "2");
    const char *r = json_string_value(json_object_get(j, "failed_reason"));
    /* \377: one U+FFFD; \342\202 (a 3-byte sequence cut short): one;
     * \355\240\200 (a surrogate): three; \001: '?' as before. */
    CHECK(strcmp(r, "exit status 1: Fehler \xc3\xbc " FFFD " x " FFFD "y " FFFD FFFD FFFD "z?") ==
          0);
    json_decref(j);
    /* The tail of a long stderr does not start inside a character. */
    j = get_job(url, "q", "3");
    r = json_string_value(json_object_get(j, "failed_reason"));
    CHECK(strncmp(r, "exit status 1: \xc3\xbc", 17) == 0);
    CHECK(strstr(r, FFFD) == NULL);
    /* 2048 bytes cut one into a character: "exit status 1: ", 1023 x ü, "x" */
    CHECK_EQ(strlen(r), 15 + 1023 * 2 + 1);
    json_decref(j);
    j = get_job(url, "q", "4");
    CHECK(strcmp(json_string_value(json_object_get(j, "result")), "ok \xc3\xbc " FFFD) == 0);
    json_decref(j);
    jt_cleanup();
}

/* Stdout that is JSON (RFC 8259, as JSON.parse reads it) is the result as
 * printed, even where jansson cannot hold it: past 64 bits, 1e400, a lone
 * surrogate escape. Only other text becomes a JSON string. */
static const char json_sh[] =
    "case \"$LANES_JOB_NAME\" in\n"
    "  big) printf '{\"total\":100000000000000000000,\"ok\":true}\\n' ;;\n"
    "  huge) printf '[1e400, -0]' ;;\n"
    "  lone) printf '\"\\\\ud800\"' ;;\n"
    "  comma) printf '[1,]' ;;\n"
    "esac\n";

TEST(worker_exec_json_stdout_as_printed) {
    char url[512], out[4096];
    snprintf(url, sizeof url, "%s", jt_url("j"));
    const char *names[] = {"big", "huge", "lone", "comma"};
    const char *want[] = {"{\"total\":100000000000000000000,\"ok\":true}", "[1e400, -0]",
                          "\"\\ud800\"", "\"[1,]\""};
    for (int i = 0; i < 4; i++) CHECK_EQ(LANES(out, "jobs", url, "add", "q", names[i], "{}"), 0);
    CHECK_EQ(LANES(out, "worker", url, "q", "--exit-when-empty", "--exec", "/bin/sh", "-c", json_sh,
                   "json"),
             0);
    ln_jobs *jobs = jt_open(url);
    for (int i = 0; i < 4; i++) {
        char id[8];
        snprintf(id, sizeof id, "%d", i + 1);
        ln_job_info info;
        CHECK_EQ(ln_jobs_get(jobs, "q", id, &info), 0);
        CHECK_EQ(info.state, LN_JOB_COMPLETED);
        if (info.result == NULL || strcmp(info.result, want[i]) != 0)
            fprintf(stderr, "%s: result %s, expected %s\n", names[i],
                    info.result ? info.result : "NULL", want[i]);
        CHECK(info.result != NULL && strcmp(info.result, want[i]) == 0);
        ln_job_info_clear(&info);
    }
    ln_jobs_close(jobs);
    /* `lanes jobs get/list --json` hand the stored text back as it is. */
    CHECK_EQ(LANES(out, "jobs", url, "get", "q", "1", "--json"), 0);
    CHECK(strstr(out, ",\"result\":{\"total\":100000000000000000000,\"ok\":true}") != NULL);
    CHECK(ln_jobs_json_valid(out, strlen(out)));
    CHECK_EQ(LANES(out, "jobs", url, "list", "q", "completed", "--json"), 0);
    CHECK(ln_jobs_json_valid(out, strlen(out)));
    CHECK(strstr(out, ",\"result\":[1e400, -0],") != NULL);
    CHECK(strstr(out, ",\"result\":\"\\ud800\",") != NULL);
    CHECK(strstr(out, ",\"result\":\"[1,]\",") != NULL);
    jt_cleanup();
}

/* A program that cannot be run is refused before any job is taken: exit
 * 2 with the reason on stderr, and the queue is left as it was. */
TEST(worker_exec_checks_the_program_first) {
    char url[512], out[4096], err[4096], noexec[400], dir[400], path_env[900];
    snprintf(url, sizeof url, "%s", jt_url("p"));
    snprintf(noexec, sizeof noexec, "%s", jt_path("noexec.sh"));
    snprintf(dir, sizeof dir, "%s", jt_path("bin"));
    FILE *f = fopen(noexec, "w");
    fputs("#!/bin/sh\nexit 0\n", f);
    fclose(f);
    CHECK_EQ(chmod(noexec, 0644), 0);
    CHECK_EQ(mkdir(dir, 0755), 0);
    CHECK_EQ(LANES(out, "jobs", url, "add", "q", "n", "{}"), 0);
    stderr_path = jt_path("stderr.txt");
    const char *bad[][2] = {
        {"./hadnler.sh", "cannot run './hadnler.sh': No such file"},
        {"/nonexistent/prog", "cannot run '/nonexistent/prog': No such file"},
        {"lanes-no-such-program", "cannot run 'lanes-no-such-program': not found in PATH"},
        {noexec, "not executable"},
        {dir, "is a directory"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK_EQ(LANES(out, "worker", url, "q", "--exit-when-empty", "--exec", bad[i][0]), 2);
        slurp(stderr_path, err, sizeof err);
        if (strstr(err, bad[i][1]) == NULL) fprintf(stderr, "stderr: %s\n", err);
        CHECK(strstr(err, bad[i][1]) != NULL);
    }
    /* Found through PATH but not executable: refused too, like execvp. */
    const char *old_path = getenv("PATH");
    snprintf(path_env, sizeof path_env, "%s", old_path ? old_path : "");
    CHECK_EQ(setenv("PATH", jt_tmpdir(), 1), 0);
    int rc = LANES(out, "worker", url, "q", "--exit-when-empty", "--exec", "noexec.sh");
    CHECK_EQ(setenv("PATH", path_env, 1), 0);
    CHECK_EQ(rc, 2);
    CHECK(strstr(slurp(stderr_path, err, sizeof err), "not executable") != NULL);
    stderr_path = NULL;
    CHECK_EQ(counts_of(url, "q", "waiting"), 1);
    json_t *j = get_job(url, "q", "1");
    CHECK_EQ(json_integer_value(json_object_get(j, "attempts_made")), 0);
    json_decref(j);
    /* A name found in PATH still runs. */
    CHECK_EQ(LANES(out, "worker", url, "q", "--exit-when-empty", "--exec", "true"), 0);
    CHECK_EQ(counts_of(url, "q", "completed"), 1);
    jt_cleanup();
}

/* A worker whose runs all fail says so once on stderr, not once a job. */
TEST(worker_exec_reports_a_streak_of_failures) {
    char url[512], out[4096], err[8192];
    snprintf(url, sizeof url, "%s", jt_url("s"));
    for (int i = 0; i < 25; i++) CHECK_EQ(LANES(out, "jobs", url, "add", "q", "n", "{}"), 0);
    stderr_path = jt_path("stderr.txt");
    CHECK_EQ(LANES(out, "worker", url, "q", "--exit-when-empty", "--concurrency", "2", "--exec",
                   "/bin/sh", "-c", "echo broken >&2; exit 1"),
             0);
    stderr_path = NULL;
    slurp(jt_path("stderr.txt"), err, sizeof err);
    int lines = 0; /* the streak's lines (the start and stop lines are not) */
    for (const char *c = err; (c = strstr(c, "all failed")) != NULL; c++) lines++;
    if (lines != 1) fprintf(stderr, "stderr: %s\n", err);
    CHECK_EQ(lines, 1);
    CHECK(strstr(err, "the last 10 runs of '/bin/sh' all failed") != NULL);
    CHECK(strstr(err, "exit status 1: broken") != NULL);
    CHECK_EQ(counts_of(url, "q", "failed"), 25);
    jt_cleanup();
}

/* A program that never ends, run for jobs with a timeout of their own
 * (the worker has none): each run fails "timed out after 300 ms" and the
 * program's whole process group is gone, also when it ignores SIGTERM
 * (SIGKILL follows). Each run writes its group id to pg.<job id>. */
static const char forever_sh[] = "echo $$ > \"$0/pg.$LANES_JOB_ID\"\n"
                                 "[ \"$LANES_JOB_NAME\" = stubborn ] && trap '' TERM\n"
                                 "sleep 1000 &\n"
                                 "while :; do wait; done\n";

/* Live (not zombie) processes of process group pg, from /proc: an
 * orphan killed here may stay a zombie until init reaps it. */
static int group_alive(long pg) {
    DIR *d = opendir("/proc");
    CHECK(d != NULL);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        char path[300], text[1024];
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        FILE *f = fopen(path, "r");
        if (f == NULL) continue;
        size_t len = fread(text, 1, sizeof text - 1, f);
        fclose(f);
        text[len] = '\0';
        const char *p = strrchr(text, ')'); /* after "pid (comm)" */
        char state;
        long ppid, pgrp;
        if (p != NULL && sscanf(p + 1, " %c %ld %ld", &state, &ppid, &pgrp) == 3 && pgrp == pg &&
            state != 'Z')
            n++;
    }
    closedir(d);
    return n;
}

TEST(worker_exec_job_timeout_kills_the_group) {
    char url[512], out[8192], dir[512];
    snprintf(url, sizeof url, "%s", jt_url("t"));
    snprintf(dir, sizeof dir, "%s", jt_tmpdir());
    ln_jobs *jobs;
    CHECK_EQ(ln_jobs_open(&jobs, url), 0);
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.timeout_ms = 300;
    char ids[2][LN_JOB_ID_MAX];
    CHECK_EQ(ln_jobs_add(jobs, "q", "plain", "{}", &o, ids[0], sizeof ids[0]), 0);
    CHECK_EQ(ln_jobs_add(jobs, "q", "stubborn", "{}", &o, ids[1], sizeof ids[1]), 0);
    ln_jobs_close(jobs);
    uint64_t t0 = ln_now_ns();
    CHECK_EQ(LANES(out, "worker", url, "q", "--concurrency", "2", "--exit-when-empty", "--json",
                   "--exec", "/bin/sh", "-c", forever_sh, dir),
             0);
    CHECK(ln_now_ns() - t0 < 20000000000u); /* SIGKILL after 2 s */
    json_t *st = parse(out);
    CHECK_EQ(json_integer_value(json_object_get(st, "failed")), 2);
    json_decref(st);
    for (int i = 0; i < 2; i++) {
        json_t *j = get_job(url, "q", ids[i]);
        CHECK(strcmp(json_string_value(json_object_get(j, "state")), "failed") == 0);
        CHECK(strcmp(json_string_value(json_object_get(j, "failed_reason")),
                     "timed out after 300 ms") == 0);
        json_decref(j);
        char path[1024], text[64];
        snprintf(path, sizeof path, "%s/pg.%s", dir, ids[i]);
        long pg = atol(slurp(path, text, sizeof text));
        CHECK(pg > 1);
        for (int k = 0; k < 100 && group_alive(pg) > 0; k++) ln_test_sleep_ms(10);
        CHECK_EQ(group_alive(pg), 0); /* the group is gone */
    }
    jt_cleanup();
}

TEST(worker_sigterm_releases_running_jobs) {
    char url[512], out[1024];
    snprintf(url, sizeof url, "%s", jt_url("e"));
    CHECK_EQ(LANES(out, "jobs", url, "add", "q", "slow", "{}"), 0);
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* dies with a failed test case */
        int devnull = open("/dev/null", O_WRONLY);
        dup2(devnull, 1);
        execl(LANES_BIN, LANES_BIN, "worker", url, "q", "--grace", "1", "--exec", "/bin/sh", "-c",
              handler_sh, "h", (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 500 && counts_of(url, "q", "active") == 0; i++) ln_test_sleep_ms(10);
    CHECK_EQ(counts_of(url, "q", "active"), 1);
    uint64_t t0 = ln_now_ns();
    kill(pid, SIGTERM);
    int status;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK(ln_now_ns() - t0 < 10000000000u);      /* the job sleeps 30 s */
    CHECK_EQ(counts_of(url, "q", "waiting"), 1); /* released at once */
    CHECK_EQ(counts_of(url, "q", "failed"), 0);
    jt_cleanup();
}

/* The fd-3 channel: progress and log lines land on the job; malformed
 * lines are ignored and reported once per run; overlong lines too. */
static const char fd3_sh[] =
    "echo '{\"progress\":{\"done\":1,\"of\":2}}' >&3\n"
    "echo 'not json' >&3\n"
    "echo '[1,2]' >&3\n"
    "head -c 300000 /dev/zero | tr '\\0' a >&3; echo >&3\n"
    "echo '{\"log\":\"first line\"}' >&3\n"
    "printf '{\"log\":\"second \\\\u00e9\",\"progress\":50}' >&3\n"; /* no newline */

TEST(worker_fd3_progress_and_log) {
    char url[512], out[8192], err[16384];
    snprintf(url, sizeof url, "%s", jt_url("fd3"));
    CHECK_EQ(LANES(out, "jobs", url, "add", "q", "n", "{}", "--id", "a"), 0);
    CHECK_EQ(LANES(out, "jobs", url, "add", "q", "n", "{}", "--id", "b"), 0);
    stderr_path = jt_path("stderr.txt");
    CHECK_EQ(LANES(out, "worker", url, "q", "--exit-when-empty", "--concurrency", "2", "--exec",
                   "/bin/sh", "-c", fd3_sh),
             0);
    err_text(err, sizeof err);
    stderr_path = NULL;
    /* one report per run, naming the first malformed line */
    if (lines_with(err, "malformed line on fd 3") != 2) fprintf(stderr, "stderr: %s\n", err);
    CHECK_EQ(lines_with(err, "malformed line on fd 3"), 2);
    CHECK_EQ(lines_with(err, "not JSON"), 2);
    const char *ids[] = {"a", "b"};
    for (int i = 0; i < 2; i++) {
        json_t *j = get_job(url, "q", ids[i]);
        CHECK(strcmp(json_string_value(json_object_get(j, "state")), "completed") == 0);
        CHECK_EQ(json_integer_value(json_object_get(j, "progress")), 50); /* the last one */
        json_decref(j);
        CHECK_EQ(LANES(out, "jobs", url, "logs", "q", ids[i], "--json"), 0);
        json_t *logs = parse(out);
        CHECK_EQ(json_array_size(logs), 2);
        CHECK(strcmp(json_string_value(json_array_get(logs, 0)), "first line") == 0);
        CHECK(strcmp(json_string_value(json_array_get(logs, 1)), "second \xc3\xa9") == 0);
        json_decref(logs);
    }
    /* An object progress is stored as JSON. */
    CHECK_EQ(LANES(out, "jobs", url, "add", "q", "n", "{}", "--id", "c"), 0);
    CHECK_EQ(LANES(out, "worker", url, "q", "--exit-when-empty", "--exec", "/bin/sh", "-c",
                   "echo '{\"progress\":{\"done\":1,\"of\":2}}' >&3"),
             0);
    json_t *j = get_job(url, "q", "c");
    CHECK_EQ(json_integer_value(json_object_get(json_object_get(j, "progress"), "of")), 2);
    json_decref(j);
    jt_cleanup();
}

/* Exit 78, the "process in steps" pattern from sh ($0 is the lanes
 * binary): a first run adds children of its own job through
 * LANES_STORE_URL and exits 78; the job waits in waiting-children; once
 * its children are done the next run finds them in LANES_CHILDREN_FILE
 * and completes. "quick" attaches a child that completed already (no
 * child pending: the program runs again at once, in the same take);
 * "never" exits 78 with no child (it fails after 10 runs); "doomed"
 * waits for a child that failed with --parent-on-failure fail (it fails
 * for good). Each run appends a line to runs.<id> in $1. */
static const char steps_sh[] =
    "lanes=$0 dir=$1\n"
    "echo run >> \"$dir/runs.$LANES_JOB_ID\"\n"
    "add() { \"$lanes\" jobs \"$LANES_STORE_URL\" add --parent \"$LANES_JOB_QUEUE:$LANES_JOB_ID\""
    " \"$@\" >/dev/null || exit 1; }\n"
    "if [ -n \"${LANES_CHILDREN_FILE:-}\" ] && [ \"$LANES_JOB_NAME\" != never ]; then\n"
    "  cat \"$LANES_CHILDREN_FILE\"; exit 0\n"
    "fi\n"
    "case \"$LANES_JOB_NAME\" in\n"
    "  step) add \"$2\" part '{\"n\":1}'; add \"$2\" part '{\"n\":2}' ;;\n"
    "  quick) add \"$2\" part '{}' --id done-1 ;;\n"
    "  doomed) add \"$2-bad\" bad '{}' --parent-on-failure fail\n"
    "    \"$lanes\" worker \"$LANES_STORE_URL\" \"$2-bad\" --exit-when-empty --exec false"
    " 2>/dev/null ;;\n"
    "esac\n"
    "echo 'ignored' ; exit 78\n";

static int runs_of(const char *dir, const char *id) {
    char path[600], text[4096];
    snprintf(path, sizeof path, "%s/runs.%s", dir, id);
    return lines_with(slurp(path, text, sizeof text), "run");
}

static const char *state_of(json_t *j) {
    return json_string_value(json_object_get(j, "state"));
}

static void steps_on(const char *url, const char *tag) {
    char out[8192], q[64], kids[64], dir[512];
    snprintf(q, sizeof q, "steps-%s", tag);
    snprintf(kids, sizeof kids, "parts-%s", tag);
    snprintf(dir, sizeof dir, "%s", jt_tmpdir());
    CHECK_EQ(LANES(out, "jobs", url, "add", kids, "part", "{}", "--id", "done-1"), 0);
    CHECK_EQ(LANES(out, "worker", url, kids, "--exit-when-empty", "--exec", "true"), 0);
    const char *names[] = {"step", "quick", "never", "doomed"}, *ids[] = {"s", "k", "n", "d"};
    for (int i = 0; i < 4; i++)
        CHECK_EQ(
            LANES(out, "jobs", url, "add", q, names[i], "{}", "--id", ids[i], "--attempts", "3"),
            0);
    const char *w[] = {"worker",  url,  q,        "--exit-when-empty", "--json", "--exec",
                       "/bin/sh", "-c", steps_sh, LANES_BIN,           dir,      kids,
                       NULL};
    const char *wv[] = {"worker",
                        url,
                        q,
                        "--exit-when-empty",
                        "--json",
                        "--verbose",
                        "--log-format",
                        "json",
                        "--exec",
                        "/bin/sh",
                        "-c",
                        steps_sh,
                        LANES_BIN,
                        dir,
                        kids,
                        NULL};
    stderr_path = jt_path("stderr.txt");
    CHECK_EQ(run_lanes(out, sizeof out, wv), 0);
    static char err[65536];
    err_text(err, sizeof err);
    stderr_path = NULL;
    /* --verbose: s moved; k once and n 9 times a take ran again */
    CHECK_EQ(lines_with(err, "\"outcome\":\"waiting for children\""), 1);
    CHECK_EQ(lines_with(err, "\"outcome\":\"run again (no child pending)\""), 1 + 3 * 9);
    CHECK(strstr(err, "\"waited\":1") != NULL); /* the stop line */
    json_t *st = parse(out);
    CHECK_EQ(json_integer_value(json_object_get(st, "waited")), 1);    /* s */
    CHECK_EQ(json_integer_value(json_object_get(st, "completed")), 1); /* k */
    CHECK_EQ(json_integer_value(json_object_get(st, "failed")), 2);    /* n, d */
    CHECK_EQ(json_integer_value(json_object_get(st, "retried")), 2);   /* n, twice */
    json_decref(st);
    /* s waits for its two children: its run used no attempt. */
    json_t *j = get_job(url, q, "s");
    CHECK(strcmp(state_of(j), "waiting-children") == 0);
    CHECK_EQ(json_integer_value(json_object_get(j, "attempts_made")), 0);
    CHECK_EQ(json_integer_value(json_object_get(j, "attempts_started")), 1);
    CHECK_EQ(json_array_size(json_object_get(j, "children")), 2);
    json_decref(j);
    CHECK_EQ(runs_of(dir, "s"), 1);
    /* k's child was done already: run again at once, in the same take. */
    j = get_job(url, q, "k");
    CHECK(strcmp(state_of(j), "completed") == 0);
    CHECK_EQ(json_integer_value(json_object_get(j, "attempts_started")), 1);
    CHECK_EQ(json_object_size(json_object_get(json_object_get(j, "result"), "values")), 1);
    json_decref(j);
    CHECK_EQ(runs_of(dir, "k"), 2);
    /* n never adds a child: 10 runs a take, then a failure (retried). */
    j = get_job(url, q, "n");
    CHECK(strcmp(state_of(j), "failed") == 0);
    CHECK(strcmp(json_string_value(json_object_get(j, "failed_reason")),
                 "exit status 78 (wait for children) 10 runs in a row with no child pending") == 0);
    CHECK_EQ(json_integer_value(json_object_get(j, "attempts_made")), 3);
    json_decref(j);
    CHECK_EQ(runs_of(dir, "n"), 30);
    /* d's child failed with fail_parent_on_failure: failed for good. */
    j = get_job(url, q, "d");
    CHECK(strcmp(state_of(j), "failed") == 0);
    CHECK(strstr(json_string_value(json_object_get(j, "failed_reason")),
                 "exit status 78 (wait for children): a child failed with "
                 "fail_parent_on_failure") != NULL);
    CHECK_EQ(json_integer_value(json_object_get(j, "attempts_made")), 1);
    json_decref(j);
    /* The children run; s is waiting again, and its second step
     * completes with what its children returned. */
    CHECK_EQ(LANES(out, "worker", url, kids, "--exit-when-empty", "--exec", "cat"), 0);
    j = get_job(url, q, "s");
    CHECK(strcmp(state_of(j), "waiting") == 0);
    json_decref(j);
    CHECK_EQ(run_lanes(out, sizeof out, w), 0);
    j = get_job(url, q, "s");
    CHECK(strcmp(state_of(j), "completed") == 0);
    CHECK_EQ(json_integer_value(json_object_get(j, "attempts_made")), 0);
    CHECK_EQ(json_integer_value(json_object_get(j, "attempts_started")), 2);
    json_t *values = json_object_get(json_object_get(j, "result"), "values");
    CHECK_EQ(json_object_size(values), 2);
    const char *key;
    json_t *v;
    long long sum = 0;
    json_object_foreach(values, key, v) sum += json_integer_value(json_object_get(v, "n"));
    CHECK_EQ(sum, 3);
    CHECK_EQ(json_array_size(json_object_get(json_object_get(j, "result"), "pending")), 0);
    json_decref(j);
    CHECK_EQ(runs_of(dir, "s"), 2);
}

/* The timeout bounds a take of the job, not each run of CMD: the runs
 * again after exit 78 with no child pending are part of the take and
 * share its timeout (ln_job_opts.timeout_ms: the longest run of a job
 * from its start). Each run here takes 0.4 s and exits 78 with no child:
 * a 1000 ms timeout ends the take in its 2nd or 3rd run ("timed out
 * after 1000 ms"), where a timeout per run would let it reach the 10-run
 * bound. */
static const char rerun_sh[] = "echo run >> \"$0/runs.$LANES_JOB_ID\"\n"
                               "sleep 0.4\n"
                               "exit 78\n";

TEST(worker_exec_reruns_share_the_take_timeout) {
    char url[512], out[8192], dir[512], id[LN_JOB_ID_MAX];
    snprintf(url, sizeof url, "%s", jt_url("rt"));
    snprintf(dir, sizeof dir, "%s", jt_tmpdir());
    ln_jobs *jobs;
    CHECK_EQ(ln_jobs_open(&jobs, url), 0);
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.timeout_ms = 1000;
    CHECK_EQ(ln_jobs_add(jobs, "q", "again", "{}", &o, id, sizeof id), 0);
    ln_jobs_close(jobs);
    CHECK_EQ(LANES(out, "worker", url, "q", "--exit-when-empty", "--json", "--exec", "/bin/sh",
                   "-c", rerun_sh, dir),
             0);
    json_t *j = get_job(url, "q", id);
    CHECK(strcmp(state_of(j), "failed") == 0);
    CHECK(strcmp(json_string_value(json_object_get(j, "failed_reason")),
                 "timed out after 1000 ms") == 0);
    CHECK_EQ(json_integer_value(json_object_get(j, "attempts_started")), 1);
    json_decref(j);
    int runs = runs_of(dir, id);
    CHECK(runs >= 2 && runs <= 3);
    jt_cleanup();
}

TEST(worker_exec_waits_for_children) {
    steps_on(jt_url("steps"), "sqlite");
    const char *base = getenv("LANES_TEST_REDIS_URL");
    if (base == NULL || *base == '\0') {
        jt_cleanup();
        LN_SKIP("redis", "LANES_TEST_REDIS_URL not set: the sqlite half passed, the redis half "
                         "did not run");
    }
    char url[600], prefix[64], cmd[900];
    snprintf(prefix, sizeof prefix, "lexec%ld", (long)getpid());
    snprintf(url, sizeof url, "%s%sprefix=%s", base, strchr(base, '?') ? "&" : "?", prefix);
    jt_cleanup(); /* runs.* files of the sqlite pass: a new directory */
    jt_dir[0] = '\0';
    steps_on(url, "redis");
    snprintf(cmd, sizeof cmd,
             "redis-cli -u '%.400s' EVAL \"for _, k in ipairs(redis.call('KEYS', ARGV[1])) do "
             "redis.call('DEL', k) end\" 0 '%s:*' >/dev/null",
             base, prefix);
    if (system(cmd) != 0) fprintf(stderr, "cleanup of %s failed\n", prefix);
    jt_cleanup();
}

/* stdout is read to its end, not to the program's exit, and kept whole:
 * "big" prints a JSON string past several pipe buffers (four runs at
 * once), "late" exits at once while a background child of it still holds
 * stdout and writes the result 0.3 s later, "huge" prints past the
 * result limit (--max-data-size 1000000 here) and fails saying so. */
static const char stdout_sh[] =
    "case \"$LANES_JOB_NAME\" in\n"
    "  big) printf '\"%s:' \"$LANES_JOB_ID\"; head -c 300000 /dev/zero | tr '\\0' a;"
    " printf '\"\\n' ;;\n"
    "  late) (sleep 0.3; echo '{\"late\":1}') & ;;\n"
    "  huge) head -c 1100000 /dev/zero | tr '\\0' a ;;\n"
    "esac\n";

static void check_result(ln_jobs *jobs, const char *id, const char *state, const char *result) {
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(jobs, "q", id, &info), 0);
    if (strcmp(ln_job_state_name(info.state), state) != 0 ||
        (result != NULL) != (info.result != NULL) ||
        (result != NULL && strcmp(info.result, result) != 0))
        fprintf(stderr, "job %s: %s, result %.80s (%zu bytes), reason %s\n", id,
                ln_job_state_name(info.state), info.result ? info.result : "(none)",
                info.result ? strlen(info.result) : 0,
                info.failed_reason ? info.failed_reason : "(none)");
    CHECK(strcmp(ln_job_state_name(info.state), state) == 0);
    CHECK((result != NULL) == (info.result != NULL));
    CHECK(result == NULL || strcmp(info.result, result) == 0);
    if (result == NULL)
        CHECK(info.failed_reason != NULL &&
              strcmp(info.failed_reason, "stdout is larger than the result size limit of 1000000 "
                                         "bytes (--max-data-size)") == 0);
    ln_job_info_clear(&info);
}

TEST(worker_exec_reads_stdout_to_its_end) {
    char url[512], out[8192], ids[6][LN_JOB_ID_MAX];
    snprintf(url, sizeof url, "%s", jt_url("so"));
    ln_jobs *jobs;
    CHECK_EQ(ln_jobs_open(&jobs, url), 0);
    const char *names[] = {"big", "big", "big", "big", "late", "huge"};
    for (int i = 0; i < 6; i++)
        CHECK_EQ(ln_jobs_add(jobs, "q", names[i], "{}", NULL, ids[i], sizeof ids[i]), 0);
    CHECK_EQ(LANES(out, "worker", url, "q", "--concurrency", "4", "--exit-when-empty",
                   "--max-data-size", "1000000", "--exec", "/bin/sh", "-c", stdout_sh),
             0);
    static char want[300100];
    for (int i = 0; i < 4; i++) {
        int n = snprintf(want, sizeof want, "\"%s:", ids[i]);
        memset(want + n, 'a', 300000);
        memcpy(want + n + 300000, "\"", 2);
        check_result(jobs, ids[i], "completed", want);
    }
    check_result(jobs, ids[4], "completed", "{\"late\":1}");
    check_result(jobs, ids[5], "failed", NULL);
    ln_jobs_close(jobs);
    jt_cleanup();
}

/* Without --max-data-size the limit is the store's default, 16 MiB: 2 MiB
 * of stdout is a result, 17 MiB fails naming the limit. */
static const char sizes_sh[] = "case \"$LANES_JOB_NAME\" in\n"
                               "  two) head -c 2097152 /dev/zero | tr '\\0' a ;;\n"
                               "  past) head -c 17825792 /dev/zero | tr '\\0' a ;;\n"
                               "esac\n";

TEST(worker_exec_default_result_limit_is_16_mib) {
    char url[512], out[4096], ids[2][LN_JOB_ID_MAX];
    snprintf(url, sizeof url, "%s", jt_url("sz"));
    ln_jobs *jobs;
    CHECK_EQ(ln_jobs_open(&jobs, url), 0);
    CHECK_EQ(ln_jobs_add(jobs, "q", "two", "{}", NULL, ids[0], sizeof ids[0]), 0);
    CHECK_EQ(ln_jobs_add(jobs, "q", "past", "{}", NULL, ids[1], sizeof ids[1]), 0);
    CHECK_EQ(
        LANES(out, "worker", url, "q", "--exit-when-empty", "--exec", "/bin/sh", "-c", sizes_sh),
        0);
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(jobs, "q", ids[0], &info), 0);
    CHECK_EQ(info.state, LN_JOB_COMPLETED);
    CHECK(info.result != NULL && strlen(info.result) == 2097152 + 2); /* a JSON string */
    ln_job_info_clear(&info);
    CHECK_EQ(ln_jobs_get(jobs, "q", ids[1], &info), 0);
    CHECK_EQ(info.state, LN_JOB_FAILED);
    CHECK(info.failed_reason != NULL &&
          strcmp(info.failed_reason, "stdout is larger than the result size limit of 16777216 "
                                     "bytes (--max-data-size)") == 0);
    ln_job_info_clear(&info);
    ln_jobs_close(jobs);
    jt_cleanup();
}

int main(int argc, char **argv) {
    signal(SIGPIPE, SIG_IGN);
    return ln_test_run(argc, argv,
                       (ln_test_case[]){TESTCASE(worker_exec_results_and_failures),
                                        TESTCASE(worker_exec_delay_and_unrecoverable_exit_codes),
                                        TESTCASE(worker_exec_never_uses_a_shell),
                                        TESTCASE(worker_exec_keeps_utf8_and_names_a_nul),
                                        TESTCASE(worker_exec_json_stdout_as_printed),
                                        TESTCASE(worker_exec_checks_the_program_first),
                                        TESTCASE(worker_exec_reports_a_streak_of_failures),
                                        TESTCASE(worker_sigterm_releases_running_jobs),
                                        TESTCASE(worker_exec_job_timeout_kills_the_group),
                                        TESTCASE(worker_fd3_progress_and_log),
                                        TESTCASE(worker_exec_waits_for_children),
                                        TESTCASE(worker_exec_reruns_share_the_take_timeout),
                                        TESTCASE(worker_exec_reads_stdout_to_its_end),
                                        TESTCASE(worker_exec_default_result_limit_is_16_mib),
                                        {0}});
}
