/* test_jobs_cli_exit.c - the exit codes of `lanes jobs`: one contract for
 * every subcommand, with and without --json (docs/cli.md): 2 for input
 * the library refuses, 3 for a store that opens but cannot be used, 4 for
 * no such job (or scheduler), and the special cases the subcommands
 * document (wait's 1 and 124, cancel's 2 for a finished job); `lanes
 * worker` and `lanes dash` by the same table. Every
 * subcommand goes down every path that applies to it, so a file that maps
 * an error its own way fails here. */
#include "jobs/jobs_cli_test.h"

#include <signal.h>

/* A command line after URL: "@Q" stands for the queue and "@ID" for a job
 * (or scheduler) id. lookup: the command looks an id up, so a missing one
 * is "no such job". */
typedef struct subcmd {
    const char *argv[8];
    int lookup;
} subcmd;

static const subcmd subs[] = {
    {{"add", "@Q", "n", "{}"}, 0},
    {{"counts", "@Q"}, 0},
    {{"list", "@Q", "waiting"}, 0},
    {{"get", "@Q", "@ID"}, 1},
    {{"logs", "@Q", "@ID"}, 1},
    {{"retry", "@Q", "@ID"}, 1},
    {{"retry", "@Q", "--all"}, 0},
    {{"remove", "@Q", "@ID"}, 1},
    {{"remove", "@Q", "@ID", "--children"}, 1},
    {{"clean", "@Q", "completed"}, 0},
    {{"pause", "@Q"}, 0},
    {{"resume", "@Q"}, 0},
    {{"drain", "@Q"}, 0},
    {{"wait", "@Q", "@ID", "--timeout", "5"}, 1},
    {{"events", "@Q"}, 0},
    {{"workers", "@Q"}, 0},
    {{"metrics", "@Q"}, 0},
    {{"metrics", "@Q", "--type", "failed"}, 0},
    {{"cancel", "@Q", "@ID"}, 1},
    {{"flow", "-"}, 0}, /* stdin: a root job in @Q (run_sub writes it) */
    {{"schedule", "@Q", "s", "--every", "60000", "n"}, 0},
    {{"unschedule", "@Q", "@ID"}, 1},
    {{"schedules", "@Q"}, 0},
    {{"rate-limit", "@Q"}, 0},
    {{"rate-limit", "@Q", "5/1000"}, 0},
    {{"rate-limit", "@Q", "--for", "100"}, 0},
    {{"concurrency", "@Q"}, 0},
    {{"concurrency", "@Q", "3"}, 0},
};

#define NSUBS (sizeof subs / sizeof subs[0])

static char err_path[400], flow_path[400];
static int mismatches;

/* The last line of text (its trailing newline dropped), in place. */
static char *last_line(char *text) {
    size_t n = strlen(text);
    while (n > 0 && text[n - 1] == '\n') text[--n] = '\0';
    char *nl = strrchr(text, '\n');
    return nl != NULL ? nl + 1 : text;
}

/* Whether what s wrote on stderr is its error `code`: "lanes jobs CMD:
 * CODE: WHY" as text, {"error":{"code":CODE,...}} under --json. */
static int reads_as(const subcmd *s, const char *code, int json, char *err) {
    if (!json) {
        char want[128];
        snprintf(want, sizeof want, "lanes jobs %s: %s: ", s->argv[0], code);
        return strncmp(err, want, strlen(want)) == 0;
    }
    json_t *v = json_loads(last_line(err), 0, NULL);
    const char *got = json_string_value(json_object_get(json_object_get(v, "error"), "code"));
    int ok = got != NULL && strcmp(got, code) == 0;
    json_decref(v);
    return ok;
}

/* Run s on url with queue q and id, as text and with --json: both must
 * exit want and, if code is not NULL, report the error code. A mismatch is
 * printed and counted (the case checks the count), so one run shows all. */
static void expect(const char *url, const subcmd *s, const char *q, const char *id, int want,
                   const char *code) {
    FILE *f = fopen(flow_path, "w");
    CHECK(f != NULL);
    fprintf(f, "{\"name\":\"n\",\"queueName\":\"%s\"}", q);
    fclose(f);
    for (int json = 0; json <= 1; json++) {
        const char *args[16] = {"jobs", url};
        int n = 2;
        char line[256] = "";
        for (int i = 0; s->argv[i] != NULL; i++) {
            const char *a = s->argv[i];
            args[n++] = strcmp(a, "@Q") == 0 ? q : strcmp(a, "@ID") == 0 ? id : a;
            snprintf(line + strlen(line), sizeof line - strlen(line), " '%s'", args[n - 1]);
        }
        if (json) args[n++] = "--json";
        args[n] = NULL;
        stdin_path = flow_path;
        stderr_path = err_path;
        char out[8192], err[4096];
        int rc = run_lanes(out, sizeof out, args);
        err_text(err, sizeof err);
        stdin_path = NULL;
        stderr_path = NULL;
        if (rc == want && (code == NULL || reads_as(s, code, json, err))) continue;
        fprintf(stderr, "  %s%s: exit %d, want %d (%s): %s\n", line, json ? " --json" : "", rc,
                want, code != NULL ? code : "-", last_line(err));
        mismatches++;
    }
}

/* A new sqlite store with job "1" in queue q; the paths expect uses. */
static const char *fresh_store(char *url, size_t size) {
    snprintf(url, size, "%s", jt_url("exit"));
    snprintf(err_path, sizeof err_path, "%s", jt_path("stderr.txt"));
    snprintf(flow_path, sizeof flow_path, "%s", jt_path("flow.json"));
    char out[256];
    CHECK_EQ(LANES(out, "jobs", url, "add", "q", "n", "{}"), 0);
    CHECK(strcmp(out, "1\n") == 0);
    mismatches = 0;
    return url;
}

TEST(exit_2_for_input_the_library_refuses) {
    char url[512];
    fresh_store(url, sizeof url);
    /* The command line is well formed; the library refuses the queue name
     * ("queue name must not be empty"), so this is its LN_EINVAL. */
    for (size_t i = 0; i < NSUBS; i++) expect(url, &subs[i], "", "1", 2, "LN_EINVAL");
    CHECK_EQ(mismatches, 0);
    jt_cleanup();
}

TEST(exit_4_for_no_such_job) {
    char url[512];
    fresh_store(url, sizeof url);
    int lookups = 0;
    for (size_t i = 0; i < NSUBS; i++) {
        if (!subs[i].lookup) continue;
        expect(url, &subs[i], "q", "nope", 4, "LN_ENOENT");
        lookups++;
    }
    CHECK_EQ(lookups, 8);
    CHECK_EQ(mismatches, 0);
    jt_cleanup();
}

/* A user of the test's Redis who may connect but touch no key and list no
 * client: the store opens, then the server refuses every command of a
 * subcommand (NOPERM: LN_EACCES). Its URL in url; 0, or -1 without a Redis
 * the command can use. */
static int denied_redis(char *url, size_t size, char *user, size_t usize) {
    const char *base = getenv("LANES_TEST_REDIS_URL");
    if (base == NULL || strncmp(base, "redis://", 8) != 0 || strchr(base, '@') != NULL) return -1;
    char out[1024], cmd[1024];
    if (LANES(out, "jobs", base, "counts", "q") != 0) return -1; /* no Redis in this build */
    snprintf(user, usize, "lanes-exit-%d", (int)getpid());
    snprintf(cmd, sizeof cmd,
             "redis-cli -u '%s' ACL SETUSER %s on '>pw' '+@all' '-client' '~lanes-exit-none:*' "
             ">/dev/null",
             base, user);
    CHECK_EQ(system(cmd), 0);
    snprintf(url, size, "redis://%s:pw@%s", user, base + 8);
    return 0;
}

TEST(exit_3_for_a_store_that_cannot_be_used) {
    char url[512], denied[600], user[64];
    fresh_store(url, sizeof url);
    if (denied_redis(denied, sizeof denied, user, sizeof user) != 0) {
        jt_cleanup();
        LN_SKIP("redis", "LANES_TEST_REDIS_URL not set (or no Redis in this build)");
    }
    /* Not "cannot open": the text must be the subcommand's own error. */
    for (size_t i = 0; i < NSUBS; i++) expect(denied, &subs[i], "q", "1", 3, "LN_EACCES");
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "redis-cli -u '%s' ACL DELUSER %s >/dev/null",
             getenv("LANES_TEST_REDIS_URL"), user);
    CHECK_EQ(system(cmd), 0);
    CHECK_EQ(mismatches, 0);
    jt_cleanup();
}

/* What subcommands say of themselves: wait exits 124 when its timeout
 * passed and 1 for a failed job; cancel exits 2 for a finished job. */
TEST(documented_special_cases) {
    char url[512];
    fresh_store(url, sizeof url);
    const subcmd wait_briefly = {{"wait", "@Q", "@ID", "--timeout", "0.05"}, 1};
    const subcmd *cancel = NULL, *wait = NULL;
    for (size_t i = 0; i < NSUBS; i++) {
        if (strcmp(subs[i].argv[0], "cancel") == 0) cancel = &subs[i];
        if (strcmp(subs[i].argv[0], "wait") == 0) wait = &subs[i];
    }
    expect(url, &wait_briefly, "q", "1", 124, "LN_ETIMEDOUT");
    char out[256];
    CHECK_EQ(LANES(out, "jobs", url, "cancel", "q", "1"), 0);
    expect(url, cancel, "q", "1", 2, "LN_EINVAL"); /* failed "canceled" now */
    expect(url, wait, "q", "1", 1, NULL);
    CHECK_EQ(mismatches, 0);
    jt_cleanup();
}

/* `lanes worker` and `lanes dash` share the table (docs/cli.md): a store
 * they cannot open exits as it does for `lanes jobs` (2 for a bad URL or
 * no store at a sqlite: PATH, 3 when its directory is missing too or the
 * store cannot be reached), and a worker whose store refuses its commands
 * mid-run stops with 3. */
TEST(worker_and_dash_exit_like_jobs) {
    char url[512], missing[600], denied[600], user[64], out[4096];
    fresh_store(url, sizeof url);
    snprintf(missing, sizeof missing, "%s-none", url);
    const struct {
        const char *url;
        int want;
    } opens[] = {
        {"redis://127.0.0.1:1", 3},                /* nothing listens: LN_ECONNREFUSED */
        {"redis://127.0.0.1:1/?nosuch=1", 2},      /* LN_EINVAL */
        {"nosuch:x", 2},                           /* LN_EINVAL */
        {missing, 2},                              /* no store at PATH */
        {"sqlite:/nonexistent-lanes-dir/x.db", 3}, /* nor its directory */
    };
    for (size_t i = 0; i < sizeof opens / sizeof opens[0]; i++) {
        const char *u = opens[i].url;
        int rc[3] = {
            LANES(out, "jobs", u, "counts", "q"),
            LANES(out, "worker", u, "q", "--fail-fast", "--exit-when-empty", "--exec", "true"),
            LANES(out, "dash", u, "--listen", "127.0.0.1:0")};
        for (int k = 0; k < 3; k++) {
            if (rc[k] == opens[i].want) continue;
            fprintf(stderr, "  %s on %s: exit %d, want %d\n",
                    k == 0   ? "jobs counts"
                    : k == 1 ? "worker"
                             : "dash",
                    u, rc[k], opens[i].want);
            mismatches++;
        }
    }
    int no_redis = denied_redis(denied, sizeof denied, user, sizeof user) != 0;
    if (!no_redis) {
        CHECK_EQ(LANES(out, "worker", denied, "q", "--exit-when-empty", "--exec", "true"), 3);
        char cmd[1024];
        snprintf(cmd, sizeof cmd, "redis-cli -u '%s' ACL DELUSER %s >/dev/null",
                 getenv("LANES_TEST_REDIS_URL"), user);
        CHECK_EQ(system(cmd), 0);
    }
    CHECK_EQ(mismatches, 0);
    jt_cleanup();
    if (no_redis)
        LN_SKIP("redis", "LANES_TEST_REDIS_URL not set (or no Redis in this build): the rest "
                         "passed, the worker's mid-run exit 3 did not run");
}

int main(int argc, char **argv) {
    signal(SIGPIPE, SIG_IGN);
    return ln_test_run(argc, argv,
                       (ln_test_case[]){TESTCASE(exit_2_for_input_the_library_refuses),
                                        TESTCASE(exit_4_for_no_such_job),
                                        TESTCASE(exit_3_for_a_store_that_cannot_be_used),
                                        TESTCASE(documented_special_cases),
                                        TESTCASE(worker_and_dash_exit_like_jobs),
                                        {0}});
}
