/* jobs_cli_test.h - helpers shared by the tests/cli/test_jobs_cli_*.c programs:
 * run the `lanes` binary (LANES_BIN, set by tests/jobs.cmake) with its
 * stdin and stderr redirected, and read what it printed. */
#ifndef LN_JOBS_CLI_TEST_H
#define LN_JOBS_CLI_TEST_H

#include "jobs/jobs_test.h"

#include <fcntl.h>
#include <jansson.h>
#include <sys/wait.h>

/* File given to the next run_lanes as stdin (NULL: /dev/null). */
static const char *stdin_path;
/* File the next run_lanes writes its stderr to (NULL: the test's). */
static const char *stderr_path;

/* Run LANES_BIN with args (NULL-terminated); stdout into out. Returns the
 * exit code (128 + signal if killed). */
static inline int run_lanes(char *out, size_t outsz, const char *const *args) {
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
static inline const char *slurp(const char *path, char *buf, size_t size) {
    FILE *f = fopen(path, "rb");
    CHECK(f != NULL);
    size_t n = fread(buf, 1, size - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

static inline json_t *parse(const char *text) {
    json_error_t e;
    json_t *v = json_loads(text, JSON_DECODE_ANY, &e);
    if (v == NULL) fprintf(stderr, "not JSON: %s\n", text);
    CHECK(v != NULL);
    return v;
}

static inline long long counts_of(const char *url, const char *queue, const char *state) {
    char out[1024];
    CHECK_EQ(LANES(out, "jobs", url, "counts", queue, "--json"), 0);
    json_t *v = parse(out);
    long long n = json_integer_value(json_object_get(v, state));
    json_decref(v);
    return n;
}

static inline json_t *get_job(const char *url, const char *queue, const char *id) {
    char out[8192];
    CHECK_EQ(LANES(out, "jobs", url, "get", queue, id, "--json"), 0);
    return parse(out);
}

/* What the next LANES wrote on stderr (stderr_path must be set). */
static inline const char *err_text(char *buf, size_t size) {
    return slurp(stderr_path, buf, size);
}

/* The number of lines of text that contain needle. */
static inline int lines_with(const char *text, const char *needle) {
    int n = 0;
    for (const char *c = text; (c = strstr(c, needle)) != NULL; c++) n++;
    return n;
}

#endif
