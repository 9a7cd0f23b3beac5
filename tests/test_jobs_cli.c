/* test_jobs_cli.c - `lanes jobs` and `lanes worker --exec` end to end: the
 * real binary (LANES_BIN), its output, --json, exit codes, bad input, job
 * data on stdin without a shell, results, failures, timeouts, SIGTERM. */
#include "jobs/jobs_test.h"

#include <dirent.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

/* File given to the next run_lanes as stdin (NULL: /dev/null). */
static const char *stdin_path;
/* File the next run_lanes writes its stderr to (NULL: the test's). */
static const char *stderr_path;

/* Run LANES_BIN with args (NULL-terminated); stdout into out. Returns the
 * exit code (128 + signal if killed). */
static int run_lanes(char *out, size_t outsz, const char *const *args) {
    int p[2];
    CHECK_EQ(pipe(p), 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        const char *argv[32] = {LANES_BIN};
        for (int i = 0; args[i] != NULL && i < 30; i++) argv[i + 1] = args[i];
        dup2(p[1], 1);
        close(p[0]), close(p[1]);
        int in = open(stdin_path ? stdin_path : "/dev/null", O_RDONLY);
        dup2(in, 0);
        if (stderr_path != NULL) {
            int e = open(stderr_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
            dup2(e, 2);
        }
        execv(LANES_BIN, (char *const *)argv);
        _exit(127);
    }
    close(p[1]);
    size_t len = 0;
    ssize_t r;
    char sink[4096];
    while ((r = read(p[0], len + 1 < outsz ? out + len : sink,
                     len + 1 < outsz ? outsz - len - 1 : sizeof sink)) > 0)
        if (len + 1 < outsz) len += (size_t)r;
    out[len] = '\0';
    close(p[0]);
    int status;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

#define LANES(out, ...) run_lanes(out, sizeof out, (const char *const[]){__VA_ARGS__, NULL})

/* The contents of path (at most size - 1 bytes) as a string in buf. */
static const char *slurp(const char *path, char *buf, size_t size) {
    FILE *f = fopen(path, "rb");
    CHECK(f != NULL);
    size_t n = fread(buf, 1, size - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

static json_t *parse(const char *text) {
    json_error_t e;
    json_t *v = json_loads(text, JSON_DECODE_ANY, &e);
    if (v == NULL) fprintf(stderr, "not JSON: %s\n", text);
    CHECK(v != NULL);
    return v;
}

static long long counts_of(const char *url, const char *queue, const char *state) {
    char out[1024];
    CHECK_EQ(LANES(out, "jobs", url, "counts", queue, "--json"), 0);
    json_t *v = parse(out);
    long long n = json_integer_value(json_object_get(v, state));
    json_decref(v);
    return n;
}

static json_t *get_job(const char *url, const char *queue, const char *id) {
    char out[8192];
    CHECK_EQ(LANES(out, "jobs", url, "get", queue, id, "--json"), 0);
    return parse(out);
}

TEST(admin_commands_and_json) {
    char url[512], out[8192];
    snprintf(url, sizeof url, "%s", jt_url("a"));
    CHECK_EQ(LANES(out, "jobs", url, "add", "q", "mail", "{\"to\":1}"), 0);
    CHECK(strcmp(out, "1\n") == 0);
    CHECK_EQ(LANES(out, "jobs", url, "add", "q", "mail", "[]", "--priority", "2", "--json"), 0);
    CHECK(strcmp(out, "{\"id\":\"2\"}\n") == 0);
    CHECK_EQ(LANES(out, "jobs", url, "add", "q", "mail", "{}", "--id", "k-1", "--delay", "60000",
                   "--attempts", "3", "--backoff", "exponential:100"),
             0);
    CHECK(strcmp(out, "k-1\n") == 0);
    CHECK_EQ(LANES(out, "jobs", url, "add", "q", "mail", "{}", "--id", "k-1"), 0);
    CHECK(strcmp(out, "k-1\n") == 0); /* dedup */
    CHECK_EQ(counts_of(url, "q", "waiting"), 1);
    CHECK_EQ(counts_of(url, "q", "prioritized"), 1);
    CHECK_EQ(counts_of(url, "q", "delayed"), 1);
    json_t *j = get_job(url, "q", "k-1");
    CHECK(strcmp(json_string_value(json_object_get(j, "state")), "delayed") == 0);
    CHECK_EQ(json_integer_value(json_object_get(j, "attempts")), 3);
    json_decref(j);
    CHECK_EQ(LANES(out, "jobs", url, "list", "q", "waiting", "--json"), 0);
    j = parse(out);
    CHECK_EQ(json_array_size(j), 1);
    CHECK(json_integer_value(
              json_object_get(json_object_get(json_array_get(j, 0), "data"), "to")) == 1);
    json_decref(j);
    CHECK_EQ(LANES(out, "jobs", url, "pause", "q"), 0);
    CHECK_EQ(counts_of(url, "q", "paused"), 2);
    CHECK_EQ(LANES(out, "jobs", url, "resume", "q"), 0);
    CHECK_EQ(LANES(out, "jobs", url, "remove", "q", "2"), 0);
    CHECK_EQ(LANES(out, "jobs", url, "remove", "q", "2"), 4);
    CHECK_EQ(LANES(out, "jobs", url, "get", "q", "nope"), 4);
    CHECK_EQ(LANES(out, "jobs", url, "drain", "q", "--json"), 0);
    j = parse(out);
    CHECK_EQ(json_integer_value(json_object_get(j, "count")), 2);
    json_decref(j);
    CHECK_EQ(LANES(out, "jobs", url, "clean", "q", "completed", "--keep", "5"), 0);
    CHECK_EQ(LANES(out, "jobs", "--help"), 0);
    CHECK(strstr(out, "exit codes") != NULL);
    jt_cleanup();
}

TEST(bad_input_gives_clear_exit_codes) {
    char url[512], out[4096];
    snprintf(url, sizeof url, "%s", jt_url("b"));
    CHECK_EQ(LANES(out, "jobs", url, "add", "q", "n", "{not json"), 2);
    CHECK_EQ(LANES(out, "jobs", url, "add", "q", "n", "{}", "--delay", "-1"), 2);
    CHECK_EQ(LANES(out, "jobs", url, "add", "q", "n", "{}", "--delay", "x"), 2);
    CHECK_EQ(LANES(out, "jobs", url, "add", "q", "n", "{}", "--colour", "r"), 2);
    CHECK_EQ(LANES(out, "jobs", url, "add", "q", "n", "{}", "--backoff", "linear:5"), 2);
    CHECK_EQ(LANES(out, "jobs", url, "frobnicate", "q"), 2);
    CHECK_EQ(LANES(out, "jobs", url, "list", "q", "sleeping"), 2);
    /* Oversized: a 2 MiB JSON string on stdin (default limit 1 MiB). */
    FILE *f = fopen(jt_path("big.json"), "w");
    fputc('"', f);
    for (int i = 0; i < (2 << 20); i++) fputc('a', f);
    fputc('"', f);
    fclose(f);
    stdin_path = jt_path("big.json");
    CHECK_EQ(LANES(out, "jobs", url, "add", "q", "n", "-"), 2);
    f = fopen(jt_path("small.json"), "w");
    fputs("{\"from\":\"stdin\"}\n", f);
    fclose(f);
    stdin_path = jt_path("small.json");
    CHECK_EQ(LANES(out, "jobs", url, "add", "q", "n", "-"), 0);
    /* A NUL byte on stdin is refused, not a cut at it ({"a":1} stored). */
    static const char with_nul[] = "{\"a\":1}\0{\"evil\":2}";
    f = fopen(jt_path("nul.json"), "wb");
    CHECK_EQ(fwrite(with_nul, 1, sizeof with_nul - 1, f), sizeof with_nul - 1);
    fclose(f);
    stdin_path = jt_path("nul.json");
    CHECK_EQ(LANES(out, "jobs", url, "add", "q", "n", "-"), 2);
    CHECK_EQ(counts_of(url, "q", "waiting"), 1); /* small.json's only */
    stdin_path = NULL;
    CHECK_EQ(LANES(out, "jobs", url, "drain", "q"), 0);
    CHECK_EQ(counts_of(url, "q", "waiting"), 0);
    CHECK_EQ(LANES(out, "jobs", "sqlite:/nonexistent-lanes/x.db", "counts", "q"), 3);
    f = fopen(jt_path("junk.db"), "w");
    for (int i = 0; i < 5000; i++) fputc('z', f);
    fclose(f);
    snprintf(url, sizeof url, "sqlite:%s", jt_path("junk.db"));
    CHECK_EQ(LANES(out, "jobs", url, "counts", "q"), 3);
    CHECK_EQ(LANES(out, "jobs", "sqlite:x.db?mode=wild", "counts", "q"), 2);
    CHECK_EQ(LANES(out, "worker", jt_url("b"), "q"), 2); /* no --exec */
    CHECK_EQ(LANES(out, "worker", jt_url("b"), "q", "--concurrency", "0", "--exec", "true"), 2);
    jt_cleanup();
}

/* --dedup ID prints the holder's id for a deduplicated add. */
TEST(jobs_add_dedup) {
    char url[512], out[8192];
    snprintf(url, sizeof url, "%s", jt_url("dd"));
    CHECK_EQ(LANES(out, "jobs", url, "add", "q", "n", "{}", "--dedup", "k"), 0);
    CHECK(strcmp(out, "1\n") == 0);
    CHECK_EQ(LANES(out, "jobs", url, "add", "q", "n", "{}", "--dedup", "k"), 0);
    CHECK(strcmp(out, "1\n") == 0);
    CHECK_EQ(
        LANES(out, "jobs", url, "add", "q", "n", "{}", "--dedup", "a:b:60000", "--dedup-extend"),
        0);
    char first[8192];
    snprintf(first, sizeof first, "%s", out);
    CHECK(strcmp(first, "1\n") != 0);
    CHECK_EQ(LANES(out, "jobs", url, "add", "q", "n", "{}", "--dedup", "a:b:60000"), 0);
    CHECK(strcmp(out, first) == 0);
    CHECK_EQ(LANES(out, "jobs", url, "add", "q", "n", "{}", "--dedup-extend"), 2);
    CHECK_EQ(LANES(out, "jobs", url, "add", "q", "n", "{}", "--dedup", "k:x"), 2);
    jt_cleanup();
}

/* lanes worker --metrics-points counts; lanes jobs metrics prints the
 * counts as text and JSON, one type with --type, and refuses a bad one. */
TEST(jobs_metrics_after_a_worker) {
    char url[512], out[8192];
    snprintf(url, sizeof url, "%s", jt_url("mt"));
    const char *names[] = {"ok", "ok", "bad"};
    for (int i = 0; i < 3; i++) CHECK_EQ(LANES(out, "jobs", url, "add", "q", names[i], "{}"), 0);
    CHECK_EQ(LANES(out, "worker", url, "q", "--exit-when-empty", "--metrics-points", "80641",
                   "--exec", "true"),
             2);
    char err[4096], text[8192];
    snprintf(err, sizeof err, "%s", jt_path("mt.err"));
    stderr_path = err;
    CHECK_EQ(LANES(out, "worker", url, "q", "--exit-when-empty", "--metrics-points", "60", "--exec",
                   "sh", "-c", "test \"$LANES_JOB_NAME\" != bad"),
             0);
    stderr_path = NULL;
    CHECK(strstr(slurp(err, text, sizeof text), ", per-minute metrics (60 points)") != NULL);
    CHECK_EQ(LANES(out, "jobs", url, "metrics", "q"), 0);
    CHECK(strstr(out, "completed: count 2, prevTS ") != NULL);
    CHECK(strstr(out, "failed: count 1, prevTS ") != NULL);
    CHECK_EQ(LANES(out, "jobs", url, "metrics", "q", "--json"), 0);
    json_t *v = parse(out);
    json_t *c = json_object_get(v, "completed");
    CHECK_EQ(json_integer_value(json_object_get(c, "count")), 2);
    CHECK(json_integer_value(json_object_get(c, "prevTS")) > 1000000000000LL);
    CHECK(json_is_array(json_object_get(c, "data")));
    CHECK_EQ(json_integer_value(json_object_get(json_object_get(v, "failed"), "count")), 1);
    json_decref(v);
    CHECK_EQ(LANES(out, "jobs", url, "metrics", "q", "--type", "failed", "--json"), 0);
    v = parse(out);
    CHECK(json_object_size(v) == 1 && json_object_get(v, "failed") != NULL);
    json_decref(v);
    CHECK_EQ(LANES(out, "jobs", url, "metrics", "q", "--type", "waiting"), 2);
    CHECK_EQ(LANES(out, "jobs", url, "metrics"), 2);
    jt_cleanup();
}

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

/* ---- a command line that talks (docs/cli.md) */

/* What the next LANES wrote on stderr (stderr_path must be set). */
static const char *err_text(char *buf, size_t size) {
    return slurp(stderr_path, buf, size);
}

TEST(jobs_help_on_every_subcommand) {
    char url[512], out[8192];
    snprintf(url, sizeof url, "%s", jt_url("h"));
    const char *cmds[] = {"add",    "counts", "list",  "get",    "logs", "retry",
                          "remove", "clean",  "pause", "resume", "drain"};
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        char want[64];
        snprintf(want, sizeof want, "usage: lanes jobs URL %s ", cmds[i]);
        CHECK_EQ(LANES(out, "jobs", url, cmds[i], "--help"), 0);
        if (strncmp(out, want, strlen(want)) != 0) fprintf(stderr, "%s --help: %s\n", cmds[i], out);
        CHECK(strncmp(out, want, strlen(want)) == 0);
        CHECK_EQ(LANES(out, "jobs", url, cmds[i], "q", "x", "-h"), 0);
        CHECK(strncmp(out, want, strlen(want)) == 0);
        CHECK_EQ(LANES(out, "jobs", cmds[i], "--help"), 0); /* no URL */
        CHECK(strncmp(out, want, strlen(want)) == 0);
    }
    CHECK_EQ(LANES(out, "jobs", url, "--help"), 0);
    CHECK(strstr(out, "exit codes") != NULL);
    CHECK_EQ(LANES(out, "--help"), 0);
    CHECK(strstr(out, "jobs") != NULL);
    CHECK_EQ(LANES(out, "worker", url, "q", "--help"), 0);
    CHECK(strncmp(out, "usage: lanes worker", 19) == 0);
    CHECK_EQ(LANES(out, "worker", url, "q", "--concurrency", "2", "-h"), 0);
    CHECK(strncmp(out, "usage: lanes worker", 19) == 0);
    CHECK_EQ(LANES(out, "help", "jobs"), 0);
    CHECK(strncmp(out, "usage: lanes jobs URL COMMAND", 29) == 0);
    CHECK_EQ(LANES(out, "help", "worker"), 0);
    CHECK(strncmp(out, "usage: lanes worker", 19) == 0);
    CHECK_EQ(LANES(out, "bench", "--help"), 0);
    CHECK(strncmp(out, "usage: lanes bench", 18) == 0);
    CHECK(access(url + 7, F_OK) != 0); /* --help opened no store */
    jt_cleanup();
}

TEST(jobs_errors_are_json_under_json) {
    char url[512], out[4096], err[4096];
    snprintf(url, sizeof url, "%s", jt_url("j"));
    stderr_path = jt_path("stderr.txt");
    struct {
        const char *args[8];
        int rc;
        const char *code;
    } cases[] = {
        {{"add", "q", "n", "{not json", "--json"}, 2, "LN_EINVAL"},
        {{"add", "q", "n", "{}", "--colour", "red", "--json"}, 2, "LN_EINVAL"},
        {{"get", "q", "nope", "--json"}, 4, "LN_ENOENT"},
        {{"frobnicate", "q", "--json"}, 2, "LN_EINVAL"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char **a = cases[i].args;
        CHECK_EQ(LANES(out, "jobs", url, a[0], a[1], a[2], a[3], a[4], a[5], a[6]), cases[i].rc);
        CHECK(out[0] == '\0'); /* stdout holds results only */
        json_t *v = parse(err_text(err, sizeof err));
        json_t *e = json_object_get(v, "error");
        CHECK(strcmp(json_string_value(json_object_get(e, "code")), cases[i].code) == 0);
        CHECK(strlen(json_string_value(json_object_get(e, "message"))) > 0);
        json_decref(v);
    }
    /* Without --json: text, and the same exit code. */
    CHECK_EQ(LANES(out, "jobs", url, "get", "q", "nope"), 4);
    CHECK(strncmp(err_text(err, sizeof err), "lanes jobs get: LN_ENOENT: ", 27) == 0);
    stderr_path = NULL;
    jt_cleanup();
}

TEST(jobs_list_says_when_more_follow) {
    char url[512], out[8192], err[4096];
    snprintf(url, sizeof url, "%s", jt_url("l"));
    for (int i = 0; i < 3; i++) CHECK_EQ(LANES(out, "jobs", url, "add", "q", "n", "{}"), 0);
    stderr_path = jt_path("stderr.txt");
    CHECK_EQ(LANES(out, "jobs", url, "list", "q", "waiting", "--limit", "2"), 0);
    if (strstr(err_text(err, sizeof err), "next page: --offset 2") == NULL)
        fprintf(stderr, "stderr: %s\n", err);
    CHECK(strstr(err, "2 jobs shown") != NULL && strstr(err, "next page: --offset 2") != NULL);
    CHECK_EQ(LANES(out, "jobs", url, "list", "q", "waiting", "--limit", "2", "--offset", "2"), 0);
    CHECK(err_text(err, sizeof err)[0] == '\0'); /* the last page */
    CHECK_EQ(LANES(out, "jobs", url, "list", "q", "waiting", "--limit", "3"), 0);
    CHECK(err_text(err, sizeof err)[0] == '\0'); /* full, but nothing follows */
    CHECK_EQ(LANES(out, "jobs", url, "list", "q", "waiting", "--limit", "2", "--json"), 0);
    json_t *v = parse(out);
    CHECK_EQ(json_array_size(v), 2); /* stdout stays the list */
    json_decref(v);
    v = parse(err_text(err, sizeof err));
    CHECK(json_is_true(json_object_get(v, "more")));
    CHECK_EQ(json_integer_value(json_object_get(v, "next_offset")), 2);
    json_decref(v);
    stderr_path = NULL;
    jt_cleanup();
}

TEST(jobs_options_that_do_not_apply_are_errors) {
    char url[512], out[4096], err[4096];
    snprintf(url, sizeof url, "%s", jt_url("o"));
    CHECK_EQ(LANES(out, "jobs", url, "add", "q", "n", "{}"), 0);
    stderr_path = jt_path("stderr.txt");
    CHECK_EQ(LANES(out, "jobs", url, "add", "q", "n", "{}", "--limit", "5"), 2);
    CHECK(strstr(err_text(err, sizeof err), "'--limit' does not apply to 'add'") != NULL);
    CHECK_EQ(LANES(out, "jobs", url, "counts", "q", "--all"), 2);
    CHECK_EQ(LANES(out, "jobs", url, "list", "q", "waiting", "--keep", "1"), 2);
    CHECK_EQ(LANES(out, "jobs", url, "get", "q", "1", "--delay", "5"), 2);
    CHECK_EQ(LANES(out, "jobs", url, "clean", "q", "failed", "--priority", "1"), 2);
    CHECK_EQ(LANES(out, "jobs", url, "retry", "q", "1", "--lifo"), 2);
    stderr_path = NULL;
    CHECK_EQ(counts_of(url, "q", "waiting"), 1); /* the refused add added nothing */
    jt_cleanup();
}

/* The value of --remove-on-complete / --remove-on-fail says which jobs go:
 * "none" keeps the job, "all" removes it. */
TEST(jobs_remove_on_complete_says_what_is_removed) {
    char url[512], out[4096];
    snprintf(url, sizeof url, "%s", jt_url("r"));
    CHECK_EQ(LANES(out, "jobs", url, "add", "ok", "n", "{}", "--id", "kept", "--remove-on-complete",
                   "none"),
             0);
    CHECK_EQ(LANES(out, "jobs", url, "add", "ok", "n", "{}", "--id", "gone", "--remove-on-complete",
                   "all"),
             0);
    CHECK_EQ(LANES(out, "worker", url, "ok", "--exit-when-empty", "--exec", "true"), 0);
    CHECK_EQ(LANES(out, "jobs", url, "get", "ok", "kept"), 0);
    CHECK_EQ(LANES(out, "jobs", url, "get", "ok", "gone"), 4);
    CHECK_EQ(LANES(out, "jobs", url, "add", "bad", "n", "{}", "--id", "kept", "--remove-on-fail",
                   "none"),
             0);
    CHECK_EQ(
        LANES(out, "jobs", url, "add", "bad", "n", "{}", "--id", "gone", "--remove-on-fail", "all"),
        0);
    CHECK_EQ(LANES(out, "worker", url, "bad", "--exit-when-empty", "--exec", "false"), 0);
    CHECK_EQ(LANES(out, "jobs", url, "get", "bad", "kept"), 0);
    CHECK_EQ(LANES(out, "jobs", url, "get", "bad", "gone"), 4);
    /* keep:N keeps the newest N */
    for (int i = 0; i < 3; i++)
        CHECK_EQ(LANES(out, "jobs", url, "add", "k", "n", "{}", "--remove-on-complete", "keep:1"),
                 0);
    CHECK_EQ(LANES(out, "worker", url, "k", "--exit-when-empty", "--exec", "true"), 0);
    CHECK_EQ(counts_of(url, "k", "completed"), 1);
    CHECK_EQ(LANES(out, "jobs", url, "add", "k", "n", "{}", "--remove-on-complete", "some"), 2);
    jt_cleanup();
}

TEST(jobs_no_store_is_created_on_a_mistyped_path) {
    char url[512], out[4096], err[4096], path[512];
    snprintf(url, sizeof url, "%s", jt_url("typo"));
    snprintf(path, sizeof path, "%s", url + 7);
    stderr_path = jt_path("stderr.txt");
    const char *cmds[][3] = {{"counts", "q", NULL}, {"list", "q", "waiting"},
                             {"get", "q", "1"},     {"pause", "q", NULL},
                             {"drain", "q", NULL},  {"clean", "q", "failed"}};
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        CHECK_EQ(LANES(out, "jobs", url, cmds[i][0], cmds[i][1], cmds[i][2]), 2);
        CHECK(access(path, F_OK) != 0);
        CHECK(strstr(err_text(err, sizeof err), "no store at") != NULL);
        CHECK(strstr(err, "--create") != NULL);
    }
    stderr_path = NULL;
    CHECK_EQ(LANES(out, "jobs", url, "counts", "q", "--create"), 0);
    CHECK(access(path, F_OK) == 0);
    CHECK_EQ(unlink(path), 0);
    CHECK_EQ(LANES(out, "jobs", url, "add", "q", "n", "{}"), 0); /* add makes one */
    CHECK_EQ(counts_of(url, "q", "waiting"), 1);
    jt_cleanup();
}

/* The data a job got from `lanes jobs URL add q n -` with this stdin. */
static char *added_from_stdin(const char *url, const char *text, size_t len) {
    char out[256];
    FILE *f = fopen(jt_path("in.json"), "wb");
    CHECK_EQ(fwrite(text, 1, len, f), len);
    fclose(f);
    stdin_path = jt_path("in.json");
    CHECK_EQ(LANES(out, "jobs", url, "add", "q", "n", "-"), 0);
    stdin_path = NULL;
    out[strcspn(out, "\n")] = '\0';
    ln_jobs *jobs = jt_open(url);
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(jobs, "q", out, &info), 0);
    char *data = strdup(info.data);
    ln_job_info_clear(&info);
    ln_jobs_close(jobs);
    return data;
}

TEST(jobs_stdin_keeps_no_trailing_newline) {
    char url[512];
    snprintf(url, sizeof url, "%s", jt_url("n"));
    static const struct {
        const char *in, *stored;
    } cases[] = {
        {"{\"a\":1}\n", "{\"a\":1}"},     {"{\"a\":1}\r\n", "{\"a\":1}"},
        {"{\"a\":1}", "{\"a\":1}"},       {"{\"a\":1}\n\n", "{\"a\":1}\n"}, /* exactly one */
        {"{\"a\":\n1}\n", "{\"a\":\n1}"}, /* an inner newline stays */
        {"[1,\r\n2]", "[1,\r\n2]"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *got = added_from_stdin(url, cases[i].in, strlen(cases[i].in));
        if (strcmp(got, cases[i].stored) != 0) fprintf(stderr, "case %zu: '%s'\n", i, got);
        CHECK(strcmp(got, cases[i].stored) == 0);
        free(got);
    }
    jt_cleanup();
}

/* ---- lanes worker talks (docs/cli.md, "lanes worker") */

/* The number of lines of text that contain needle. */
static int lines_with(const char *text, const char *needle) {
    int n = 0;
    for (const char *c = text; (c = strstr(c, needle)) != NULL; c++) n++;
    return n;
}

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
    CHECK(strstr(err, " ms: exit status 4: no") != NULL);
    CHECK(strstr(err, "stopped (max-jobs)") != NULL);
    /* A redis URL's password is never shown. */
    CHECK(LANES(out, "worker", "redis://me:s3cret@127.0.0.1:1/0", "q", "--store-retry", "0",
                "--exit-when-empty", "--exec", "true") != 0);
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
    stderr_path = NULL;
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
        printf("skip: no redis-server in PATH\n");
        return;
    }
    char url[128], port[16], err[16384], errf[512];
    snprintf(errf, sizeof errf, "%s", jt_path("worker.err")); /* the dir, before the fork */
    snprintf(port, sizeof port, "%d", 20000 + (int)(getpid() % 20000));
    snprintf(url, sizeof url, "redis://127.0.0.1:%s/0", port);
    pid_t rs = start_redis(port);
    if (!store_up(url)) {
        stop_child(rs, SIGKILL);
        printf("skip: no Redis store on port %s\n", port);
        return;
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

/* `lanes jobs URL rate-limit / concurrency` read, set and clear the limits;
 * bad values are usage errors; --exec exit 77 puts the job back without an
 * attempt and limits the queue (jobs.h "Rate limits and global
 * concurrency"). */
static const char limited_sh[] =
    "if [ \"$LANES_JOB_ATTEMPT\" = 1 ]; then echo '{\"rate_limit_ms\": 200}'; exit 77; fi\n"
    "echo '\"ran\"'\n";

TEST(jobs_rate_limit_concurrency_and_exit_77) {
    char url[512], out[4096];
    snprintf(url, sizeof url, "%s", jt_url("rl"));
    CHECK_EQ(LANES(out, "jobs", url, "add", "q", "n", "{}", "--attempts", "2"), 0);
    CHECK_EQ(LANES(out, "jobs", url, "rate-limit", "q"), 0);
    CHECK(strcmp(out, "none\n") == 0);
    CHECK_EQ(LANES(out, "jobs", url, "rate-limit", "q", "5/1000"), 0);
    CHECK_EQ(LANES(out, "jobs", url, "rate-limit", "q", "--json"), 0);
    CHECK(strcmp(out, "{\"max\":5,\"duration_ms\":1000,\"limited_ms\":0}\n") == 0);
    CHECK_EQ(LANES(out, "jobs", url, "rate-limit", "q", "--clear"), 0);
    CHECK_EQ(LANES(out, "jobs", url, "concurrency", "q", "3"), 0);
    CHECK_EQ(LANES(out, "jobs", url, "concurrency", "q"), 0);
    CHECK(strcmp(out, "3\n") == 0);
    CHECK_EQ(LANES(out, "jobs", url, "concurrency", "q", "--clear"), 0);
    CHECK_EQ(LANES(out, "jobs", url, "concurrency", "q", "--json"), 0);
    CHECK(strcmp(out, "{\"concurrency\":0}\n") == 0);
    const char *bad[][2] = {{"rate-limit", "5"},
                            {"rate-limit", "0/10"},
                            {"concurrency", "-1"},
                            {"concurrency", "--for"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK_EQ(LANES(out, "jobs", url, bad[i][0], "q", bad[i][1]), 2);
    CHECK_EQ(LANES(out, "worker", url, "q", "--rate-limit", "2", "--exec", "true"), 2);
    CHECK_EQ(LANES(out, "worker", url, "q", "--exit-when-empty", "--poll", "10", "--exec",
                   "/bin/sh", "-c", limited_sh, "handler"),
             0);
    json_t *j = get_job(url, "q", "1");
    CHECK(strcmp(json_string_value(json_object_get(j, "state")), "completed") == 0);
    CHECK_EQ(json_integer_value(json_object_get(j, "attempts_made")), 0);
    CHECK_EQ(json_integer_value(json_object_get(j, "attempts_started")), 2);
    json_decref(j);
    jt_cleanup();
}

int main(int argc, char **argv) {
    signal(SIGPIPE, SIG_IGN);
    return ln_test_run(argc, argv,
                       (ln_test_case[]){TESTCASE(admin_commands_and_json),
                                        TESTCASE(bad_input_gives_clear_exit_codes),
                                        TESTCASE(jobs_help_on_every_subcommand),
                                        TESTCASE(jobs_errors_are_json_under_json),
                                        TESTCASE(jobs_list_says_when_more_follow),
                                        TESTCASE(jobs_options_that_do_not_apply_are_errors),
                                        TESTCASE(jobs_remove_on_complete_says_what_is_removed),
                                        TESTCASE(jobs_no_store_is_created_on_a_mistyped_path),
                                        TESTCASE(jobs_stdin_keeps_no_trailing_newline),
                                        TESTCASE(worker_exec_results_and_failures),
                                        TESTCASE(worker_exec_delay_and_unrecoverable_exit_codes),
                                        TESTCASE(jobs_add_dedup),
                                        TESTCASE(jobs_metrics_after_a_worker),
                                        TESTCASE(worker_exec_never_uses_a_shell),
                                        TESTCASE(worker_exec_keeps_utf8_and_names_a_nul),
                                        TESTCASE(worker_exec_json_stdout_as_printed),
                                        TESTCASE(worker_exec_checks_the_program_first),
                                        TESTCASE(worker_exec_reports_a_streak_of_failures),
                                        TESTCASE(worker_sigterm_releases_running_jobs),
                                        TESTCASE(worker_exec_job_timeout_kills_the_group),
                                        TESTCASE(worker_says_when_it_starts_and_stops),
                                        TESTCASE(worker_log_format_json),
                                        TESTCASE(worker_refuses_a_missing_store_and_bad_options),
                                        TESTCASE(worker_fd3_progress_and_log),
                                        TESTCASE(worker_says_when_it_loses_and_regains_the_store),
                                        TESTCASE(jobs_rate_limit_concurrency_and_exit_77),
                                        {0}});
}
