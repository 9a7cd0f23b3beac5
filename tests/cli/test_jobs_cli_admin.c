/* test_jobs_cli_admin.c - `lanes jobs URL <sub>` end to end: the real
 * binary (LANES_BIN), its output, --json, --help, exit codes, bad input,
 * job data on stdin without a shell, dedup, metrics, rate limits. */
#include "jobs/jobs_cli_test.h"

#include <signal.h>
#include <sqlite3.h>

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
    /* obliterate: the queue and everything of it, another queue untouched */
    CHECK_EQ(LANES(out, "jobs", url, "add", "q", "last", "{}", "--delay", "60000"), 0);
    CHECK_EQ(LANES(out, "jobs", url, "add", "q2", "other", "{}"), 0);
    CHECK_EQ(LANES(out, "jobs", url, "obliterate"), 2);
    CHECK_EQ(LANES(out, "jobs", url, "obliterate", "q", "--json"), 0);
    j = parse(out);
    CHECK_EQ(json_integer_value(json_object_get(j, "count")), 1);
    json_decref(j);
    CHECK_EQ(counts_of(url, "q", "delayed"), 0);
    CHECK_EQ(counts_of(url, "q2", "waiting"), 1);
    CHECK_EQ(LANES(out, "jobs", url, "obliterate", "q", "--force"), 0);
    CHECK(strcmp(out, "0\n") == 0);
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
    CHECK_EQ(LANES(out, "jobs", url, "add", "q", "n", "{}", "--backoff", "linear"), 2);
    CHECK_EQ(LANES(out, "jobs", url, "add", "q", "n", "{}", "--backoff", "fixed:5:2"), 2);
    CHECK_EQ(LANES(out, "jobs", url, "frobnicate", "q"), 2);
    CHECK_EQ(LANES(out, "jobs", url, "list", "q", "sleeping"), 2);
    /* Oversized: a 2 MiB JSON string on stdin, past --max-data-size (the
     * default limit is 16 MiB). */
    FILE *f = fopen(jt_path("big.json"), "w");
    fputc('"', f);
    for (int i = 0; i < (2 << 20); i++) fputc('a', f);
    fputc('"', f);
    fclose(f);
    stdin_path = jt_path("big.json");
    CHECK_EQ(LANES(out, "jobs", url, "add", "q", "n", "-", "--max-data-size", "1048576"), 2);
    CHECK_EQ(LANES(out, "jobs", url, "--max-data-size", "1", "add", "q", "n", "-"), 2);
    CHECK_EQ(LANES(out, "jobs", url, "add", "q", "n", "-", "--max-data-size", "4194304"), 0);
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
    CHECK_EQ(counts_of(url, "q", "waiting"), 2); /* big.json's under 4 MiB, small.json's */
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

/* ---- a command line that talks (docs/cli.md) */

TEST(jobs_help_on_every_subcommand) {
    char url[512], out[8192];
    snprintf(url, sizeof url, "%s", jt_url("h"));
    const char *cmds[] = {"add",    "counts", "list",  "get",    "logs",  "retry",
                          "remove", "clean",  "pause", "resume", "drain", "obliterate"};
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

/* The notice's --after CURSOR gives the next page, which costs the same at
 * any depth; --after and --offset together are a usage error. */
TEST(jobs_list_pages_by_cursor) {
    char url[512], out[8192], err[4096], ids[3][64];
    snprintf(url, sizeof url, "%s", jt_url("a"));
    for (int i = 0; i < 3; i++) {
        CHECK_EQ(LANES(out, "jobs", url, "add", "q", "n", "{}"), 0);
        snprintf(ids[i], sizeof ids[i], "%.*s", (int)strcspn(out, "\n"), out);
    }
    stderr_path = jt_path("stderr.txt");
    CHECK_EQ(LANES(out, "jobs", url, "list", "q", "waiting", "--limit", "2", "--json"), 0);
    json_t *v = parse(err_text(err, sizeof err));
    const char *cursor = json_string_value(json_object_get(v, "next_after"));
    CHECK(cursor != NULL && cursor[0] != '\0');
    char after[256];
    snprintf(after, sizeof after, "%s", cursor);
    json_decref(v);
    CHECK_EQ(LANES(out, "jobs", url, "list", "q", "waiting", "--after", after, "--json"), 0);
    CHECK(err_text(err, sizeof err)[0] == '\0'); /* the last page */
    v = parse(out);
    CHECK_EQ(json_array_size(v), 1);
    CHECK(strcmp(json_string_value(json_object_get(json_array_get(v, 0), "id")), ids[2]) == 0);
    json_decref(v);
    CHECK_EQ(LANES(out, "jobs", url, "list", "q", "waiting", "--after", after, "--offset", "1"), 2);
    CHECK_EQ(LANES(out, "jobs", url, "list", "q", "waiting", "--after", "nonsense"), 2);
    CHECK(strstr(err_text(err, sizeof err), "bad cursor") != NULL);
    CHECK_EQ(LANES(out, "jobs", url, "check"), 0);
    CHECK(strcmp(out, "ok\n") == 0);
    CHECK_EQ(LANES(out, "jobs", url, "check", "--full", "--json"), 0);
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

/* Every subcommand parses its options the same way: --help, an unknown
 * option, an option of another subcommand, a missing value, each as text
 * (with the hint to its --help) and as JSON under --json; and its own
 * complaint about missing arguments carries the same hint. */
struct opt_case {
    const char *cmd, *pos[3]; /* the subcommand and a valid set of positionals */
    const char *other;        /* an option it does not take (NULL: none) */
    const char *valued;       /* an option of its own that takes a value (NULL: none) */
};

static const struct opt_case opt_cases[] = {
    {"add", {"q", "n"}, "--limit", "--delay"},
    {"counts", {"q"}, "--limit", NULL},
    {"list", {"q", "waiting"}, "--delay", "--limit"},
    {"get", {"q", "1"}, "--limit", NULL},
    {"logs", {"q", "1"}, "--limit", NULL},
    {"retry", {"q", "1"}, "--limit", NULL},
    {"remove", {"q", "1"}, "--limit", NULL},
    {"clean", {"q", "failed"}, "--limit", "--age"},
    {"pause", {"q"}, "--limit", NULL},
    {"resume", {"q"}, "--limit", NULL},
    {"drain", {"q"}, "--limit", NULL},
    {"obliterate", {"q"}, "--limit", NULL},
    {"wait", {"q", "1"}, "--limit", "--timeout"},
    {"events", {"q"}, "--limit", "--from"},
    {"workers", {"q"}, "--limit", NULL},
    {"metrics", {"q"}, "--limit", "--type"},
    {"cancel", {"q", "1"}, "--limit", NULL},
    {"flow", {"f.json"}, "--limit", NULL},
    {"rate-limit", {"q"}, NULL, "--for"},
    {"concurrency", {"q"}, "--for", NULL},
    {"schedule", {"q", "s", "n"}, "--offset", "--every"},
    {"unschedule", {"q", "s"}, "--limit", NULL},
    {"schedules", {"q"}, "--every", "--limit"},
};

/* Run `lanes jobs url c->cmd POS... extra...` (extra NULL-terminated);
 * check it exits 2 with msg: as text with the hint, or (json) as one JSON
 * error object. */
static void opt_error(const char *url, const struct opt_case *c, const char *const *extra, int json,
                      const char *msg) {
    const char *args[16] = {"jobs", url, c->cmd};
    int n = 3;
    for (int i = 0; i < 3 && c->pos[i] != NULL; i++) args[n++] = c->pos[i];
    if (json) args[n++] = "--json";
    for (int i = 0; extra[i] != NULL; i++) args[n++] = extra[i];
    args[n] = NULL;
    char out[4096], err[4096], want[256];
    int rc = run_lanes(out, sizeof out, args);
    err_text(err, sizeof err);
    if (json) {
        json_t *v = parse(err);
        json_t *e = json_object_get(v, "error");
        const char *m = json_string_value(json_object_get(e, "message"));
        if (rc != 2 || m == NULL || strcmp(m, msg) != 0)
            fprintf(stderr, "%s (json) exited %d: %s (wanted %s)\n", c->cmd, rc, err, msg);
        CHECK(m != NULL && strcmp(m, msg) == 0);
        CHECK(strcmp(json_string_value(json_object_get(e, "code")), "LN_EINVAL") == 0);
        json_decref(v);
    } else {
        snprintf(want, sizeof want, "lanes jobs %s: %s\n(see 'lanes jobs %s --help')\n", c->cmd,
                 msg, c->cmd);
        if (rc != 2 || strcmp(err, want) != 0)
            fprintf(stderr, "%s exited %d: %s(wanted %s)\n", c->cmd, rc, err, want);
        CHECK(strcmp(err, want) == 0);
    }
    CHECK_EQ(rc, 2);
    CHECK(out[0] == '\0');
}

TEST(jobs_option_errors_on_every_subcommand) {
    char url[512], out[8192], msg[128];
    snprintf(url, sizeof url, "%s", jt_url("opts"));
    CHECK_EQ(LANES(out, "jobs", url, "add", "q", "n"), 0);
    stderr_path = jt_path("stderr.txt");
    for (size_t i = 0; i < sizeof opt_cases / sizeof opt_cases[0]; i++) {
        const struct opt_case *c = &opt_cases[i];
        char want[64];
        snprintf(want, sizeof want, "usage: lanes jobs URL %s ", c->cmd);
        CHECK_EQ(LANES(out, "jobs", url, c->cmd, "--help"), 0);
        CHECK(strncmp(out, want, strlen(want)) == 0);
        /* No positional argument: its own message, the same hint. */
        CHECK_EQ(LANES(out, "jobs", url, c->cmd), 2);
        char err[1024], hint[96];
        snprintf(want, sizeof want, "lanes jobs %s: ", c->cmd);
        snprintf(hint, sizeof hint, "\n(see 'lanes jobs %s --help')\n", c->cmd);
        err_text(err, sizeof err);
        if (strncmp(err, want, strlen(want)) != 0 || strlen(err) < strlen(hint) ||
            strcmp(err + strlen(err) - strlen(hint), hint) != 0)
            fprintf(stderr, "%s without arguments: %s\n", c->cmd, err);
        CHECK(strncmp(err, want, strlen(want)) == 0 && strlen(err) >= strlen(hint) &&
              strcmp(err + strlen(err) - strlen(hint), hint) == 0);
        for (int json = 0; json <= 1; json++) {
            opt_error(url, c, (const char *[]){"--bogus", NULL}, json, "unknown option '--bogus'");
            if (c->other != NULL) {
                snprintf(msg, sizeof msg, "option '%s' does not apply to '%s'", c->other, c->cmd);
                opt_error(url, c, (const char *[]){c->other, "1", NULL}, json, msg);
            }
            if (c->valued != NULL) {
                snprintf(msg, sizeof msg, "%s needs a value", c->valued);
                opt_error(url, c, (const char *[]){c->valued, NULL}, json, msg);
            }
        }
    }
    stderr_path = NULL;
    CHECK_EQ(counts_of(url, "q", "waiting"), 1); /* nothing refused ran */
    jt_cleanup();
}

/* A store that cannot be opened is named with its password hidden, as
 * the worker and the dashboard show it: a program run by `lanes worker
 * --exec` calling `lanes jobs "$LANES_STORE_URL" ...` would otherwise
 * put the password in its stderr, whose tail becomes the job's failure
 * reason, stored and shown. */
TEST(jobs_open_error_hides_password) {
    char out[4096], err[4096];
    stderr_path = jt_path("stderr.txt");
    const char *url = "redis://user:s3cret@127.0.0.1:1/0?bogus=1";
    CHECK(LANES(out, "jobs", url, "counts", "q") != 0);
    err_text(err, sizeof err);
    if (strstr(err, "s3cret") != NULL) fprintf(stderr, "%s", err);
    CHECK(strstr(err, "s3cret") == NULL);
    CHECK(strstr(err, "cannot open 'redis://user:***@127.0.0.1:1/0?bogus=1'") != NULL);
    CHECK(LANES(out, "jobs", url, "counts", "q", "--json") != 0);
    err_text(err, sizeof err);
    CHECK(strstr(err, "s3cret") == NULL);
    stderr_path = NULL;
    jt_cleanup();
}

/* A store that cannot be opened, and a library error, read alike in every
 * subcommand: "PROG: cannot open 'URL': LN_X: WHY", "PROG: LN_X: WHY". */
TEST(jobs_store_errors_read_alike) {
    char url[512], bad[600], out[4096], err[4096], want[700];
    snprintf(url, sizeof url, "%s", jt_url("e"));
    CHECK_EQ(LANES(out, "jobs", url, "add", "q", "n"), 0);
    snprintf(bad, sizeof bad, "%s?sync=bogus", url);
    stderr_path = jt_path("stderr.txt");
    const char *cmds[][3] = {{"counts", "q"},     {"schedules", "q"},   {"unschedule", "q", "s"},
                             {"rate-limit", "q"}, {"concurrency", "q"}, {"flow", "-"}};
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        CHECK_EQ(LANES(out, "jobs", bad, cmds[i][0], cmds[i][1], cmds[i][2]), 2);
        snprintf(want, sizeof want, "lanes jobs %s: cannot open '%s': LN_EINVAL: ", cmds[i][0],
                 bad);
        if (strncmp(err_text(err, sizeof err), want, strlen(want)) != 0)
            fprintf(stderr, "%s: %s", cmds[i][0], err);
        CHECK(strncmp(err, want, strlen(want)) == 0);
    }
    char in[512];
    snprintf(in, sizeof in, "%s", jt_path("flow.json"));
    stderr_path = jt_path("stderr.txt"); /* jt_path's one buffer */
    stdin_path = in;
    FILE *f = fopen(in, "w");
    CHECK(f != NULL);
    fputs("{\"name\":\"x\",\"queueName\":\"q\",\"opts\":{\"jobId\":\"1\"}}", f);
    fclose(f);
    CHECK_EQ(LANES(out, "jobs", url, "flow", "-"), 2); /* an integer id is refused */
    const char *flow_want = "lanes jobs flow: LN_EINVAL: ";
    if (strncmp(err_text(err, sizeof err), flow_want, strlen(flow_want)) != 0)
        fprintf(stderr, "flow: %s", err);
    CHECK(strncmp(err, flow_want, strlen(flow_want)) == 0);
    stdin_path = NULL;
    stderr_path = NULL;
    jt_cleanup();
}

/* A job id or name that is not UTF-8 (BullMQ's scripts can store one cut
 * inside a character; lanes refuses such names at add, so the test writes
 * them into the store) comes out of --json with every other field kept
 * and each stray byte as U+FFFD; the text output keeps the bytes. */
TEST(jobs_json_of_text_that_is_not_utf8) {
    char url[512], out[8192];
    snprintf(url, sizeof url, "%s", jt_url("u"));
    const char *id = "a\xff"
                     "b\xe2\x82\xac";
    CHECK_EQ(LANES(out, "jobs", url, "add", "q", "n", "{}", "--id", "plain"), 0);
    sqlite3 *db = NULL;
    CHECK_EQ(sqlite3_open(jt_path("u.db"), &db), SQLITE_OK);
    sqlite3_busy_timeout(db, 5000);
    CHECK_EQ(sqlite3_exec(db,
                          "UPDATE lanes_jobs SET cid = CAST(X'61ff62e282ac' AS TEXT),"
                          " name = CAST(X'6ec3' AS TEXT) WHERE cid = 'plain'",
                          NULL, NULL, NULL),
             SQLITE_OK);
    CHECK_EQ(sqlite3_changes(db), 1);
    sqlite3_close(db);
    CHECK_EQ(LANES(out, "jobs", url, "get", "q", id, "--json"), 0);
    json_t *j = parse(out);
    CHECK(j != NULL);
    CHECK(strcmp(json_string_value(json_object_get(j, "id")), "a\xef\xbf\xbd"
                                                              "b\xe2\x82\xac") == 0);
    CHECK(strcmp(json_string_value(json_object_get(j, "name")), "n\xef\xbf\xbd") == 0);
    CHECK(strcmp(json_string_value(json_object_get(j, "state")), "waiting") == 0);
    json_decref(j);
    CHECK_EQ(LANES(out, "jobs", url, "list", "q", "waiting", "--json"), 0);
    j = parse(out);
    CHECK_EQ(json_array_size(j), 1);
    CHECK(json_string_value(json_object_get(json_array_get(j, 0), "id")) != NULL);
    json_decref(j);
    jt_cleanup();
}

/* --backoff TYPE:MS[:JITTER] on add and schedule: builtin and custom
 * types, a jitter, get shows them; a bad jitter exits 2. */
TEST(jobs_backoff_option) {
    char url[512], out[4096];
    snprintf(url, sizeof url, "%s", jt_url("bo"));
    CHECK_EQ(LANES(out, "jobs", url, "add", "q", "n", "{}", "--backoff", "exponential:100:0.5"), 0);
    CHECK_EQ(LANES(out, "jobs", url, "get", "q", "1"), 0);
    CHECK(strstr(out, "backoff      exponential 100 ms, jitter 0.5\n") != NULL);
    CHECK_EQ(LANES(out, "jobs", url, "add", "q", "n", "{}", "--backoff", "linear:7"), 0);
    CHECK_EQ(LANES(out, "jobs", url, "get", "q", "2"), 0);
    CHECK(strstr(out, "backoff      linear 7 ms, jitter 0\n") != NULL);
    CHECK_EQ(LANES(out, "jobs", url, "add", "q", "n", "{}", "--backoff", "fixed:7:-0.5"), 2);
    CHECK_EQ(LANES(out, "jobs", url, "schedule", "q", "s", "--every", "3600000", "--backoff",
                   "step:9:0.25", "tick"),
             0);
    char id[128];
    snprintf(id, sizeof id, "%.*s", (int)strcspn(out, "\n"), out);
    CHECK_EQ(LANES(out, "jobs", url, "get", "q", id), 0);
    CHECK(strstr(out, "backoff      step 9 ms, jitter 0.25\n") != NULL);
    /* get --json: the same as keys backoff, backoff_ms, backoff_jitter
     * (a job added without --backoff: fixed 0 ms, jitter 0). */
    CHECK_EQ(LANES(out, "jobs", url, "add", "q", "n", "{}"), 0);
    char plain[128];
    snprintf(plain, sizeof plain, "%.*s", (int)strcspn(out, "\n"), out);
    const char *ids[] = {"1", "2", id, plain},
               *types[] = {"exponential", "linear", "step", "fixed"};
    const long long ms[] = {100, 7, 9, 0};
    const double jitter[] = {0.5, 0, 0.25, 0};
    for (int i = 0; i < 4; i++) {
        json_t *j = get_job(url, "q", ids[i]);
        CHECK(strcmp(json_string_value(json_object_get(j, "backoff")), types[i]) == 0);
        CHECK_EQ(json_integer_value(json_object_get(j, "backoff_ms")), ms[i]);
        CHECK(json_is_number(json_object_get(j, "backoff_jitter")));
        CHECK(json_number_value(json_object_get(j, "backoff_jitter")) == jitter[i]);
        json_decref(j);
    }
    CHECK_EQ(LANES(out, "jobs", url, "list", "q", "waiting", "--json"), 0);
    CHECK(strstr(out, "\"backoff\":\"linear\",\"backoff_ms\":7,\"backoff_jitter\":0.0,") != NULL);
    jt_cleanup();
}

/* retry --state completed: a completed job (or, with --all, every one
 * finished at or before --before) runs again; bad states and a --before
 * without --all or of no number are usage errors, and a job in the other
 * state is refused as bad input (LN_EINVAL): exit 2 each. */
TEST(jobs_retry_completed) {
    char url[512], out[4096], err[4096];
    snprintf(url, sizeof url, "%s", jt_url("rc"));
    CHECK_EQ(LANES(out, "jobs", url, "add", "q", "n", "{}", "--id", "a"), 0);
    CHECK_EQ(LANES(out, "jobs", url, "add", "q", "n", "{}", "--id", "b"), 0);
    CHECK_EQ(LANES(out, "worker", url, "q", "--exit-when-empty", "--exec", "true"), 0);
    CHECK_EQ(counts_of(url, "q", "completed"), 2);
    stderr_path = jt_path("stderr.txt");
    CHECK_EQ(LANES(out, "jobs", url, "retry", "q", "a"), 2); /* completed, not failed */
    CHECK(strstr(err_text(err, sizeof err), "job 'a' is completed, not failed") != NULL);
    CHECK_EQ(LANES(out, "jobs", url, "retry", "q", "a", "--state", "active"), 2);
    CHECK(strstr(err_text(err, sizeof err), "must be completed or failed") != NULL);
    CHECK_EQ(LANES(out, "jobs", url, "retry", "q", "a", "--state", "completed", "--before", "5"),
             2);
    CHECK_EQ(LANES(out, "jobs", url, "retry", "q", "--all", "--before", "soon"), 2);
    CHECK_EQ(LANES(out, "jobs", url, "retry", "q", "--all", "--before", "-1"), 2);
    stderr_path = NULL;
    CHECK_EQ(LANES(out, "jobs", url, "retry", "q", "a", "--state", "completed"), 0);
    CHECK_EQ(strcmp(out, "1\n"), 0);
    CHECK_EQ(
        LANES(out, "jobs", url, "retry", "q", "--all", "--state", "completed", "--before", "0"), 0);
    CHECK_EQ(strcmp(out, "0\n"), 0); /* b finished after the epoch */
    CHECK_EQ(LANES(out, "jobs", url, "retry", "q", "--all", "--state", "completed", "--json"), 0);
    CHECK(strstr(out, "\"count\":1") != NULL);
    CHECK_EQ(counts_of(url, "q", "waiting"), 2);
    CHECK_EQ(LANES(out, "worker", url, "q", "--exit-when-empty", "--exec", "true"), 0);
    CHECK_EQ(counts_of(url, "q", "completed"), 2);
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
                                        TESTCASE(jobs_list_pages_by_cursor),
                                        TESTCASE(jobs_options_that_do_not_apply_are_errors),
                                        TESTCASE(jobs_option_errors_on_every_subcommand),
                                        TESTCASE(jobs_store_errors_read_alike),
                                        TESTCASE(jobs_remove_on_complete_says_what_is_removed),
                                        TESTCASE(jobs_no_store_is_created_on_a_mistyped_path),
                                        TESTCASE(jobs_stdin_keeps_no_trailing_newline),
                                        TESTCASE(jobs_add_dedup),
                                        TESTCASE(jobs_metrics_after_a_worker),
                                        TESTCASE(jobs_rate_limit_concurrency_and_exit_77),
                                        TESTCASE(jobs_json_of_text_that_is_not_utf8),
                                        TESTCASE(jobs_backoff_option),
                                        TESTCASE(jobs_open_error_hides_password),
                                        TESTCASE(jobs_retry_completed),
                                        {0}});
}
