/* test_jobs_cli_badname.c - `lanes jobs` refuses what the library refuses
 * at the front, with the bad-input exit code (2) and a message that says
 * why: names and ids that are not UTF-8 (a queue, a job name, --id, a
 * scheduler id), and a sqlite: store path that is not a regular file (a
 * FIFO, a directory, /dev/null), which is left with nothing beside it. */
#include "jobs/jobs_cli_test.h"

#include <sys/stat.h>

/* LANES exits 2 and its stderr (in err) holds 'want'. */
#define BAD_INPUT(want, ...)                                                                       \
    do {                                                                                           \
        char out_[4096], err_[4096];                                                               \
        stderr_path = jt_path("stderr");                                                           \
        int rc_ = LANES(out_, __VA_ARGS__);                                                        \
        stderr_path = NULL;                                                                        \
        read_file_into(jt_path("stderr"), err_, sizeof err_);                                      \
        if (rc_ != 2 || strstr(err_, (want)) == NULL)                                              \
            fprintf(stderr, "exit %d, stderr: %s\n", rc_, err_);                                   \
        CHECK_EQ(rc_, 2);                                                                          \
        CHECK(strstr(err_, (want)) != NULL);                                                       \
    } while (0)

static void read_file_into(const char *path, char *buf, size_t size) {
    FILE *f = fopen(path, "rb");
    size_t n = f != NULL ? fread(buf, 1, size - 1, f) : 0;
    buf[n] = '\0';
    if (f != NULL) fclose(f);
}

TEST(names_that_are_not_utf8_exit_2) {
    char url[512], out[4096];
    snprintf(url, sizeof url, "%s", jt_url("u"));
    CHECK_EQ(LANES(out, "jobs", url, "add", "q", "n", "{}"), 0); /* the store exists */
    const char *u = "not valid UTF-8";
    BAD_INPUT(u, "jobs", url, "add", "q\xff", "n", "{}");
    BAD_INPUT(u, "jobs", url, "add", "q", "n\xc3", "{}");
    BAD_INPUT(u, "jobs", url, "add", "q", "n", "{}", "--id", "id\xed\xa0\x80");
    BAD_INPUT(u, "jobs", url, "schedule", "q", "s\xff", "--every", "60000", "n");
    BAD_INPUT(u, "jobs", url, "counts", "q\xc0\xaf");
    BAD_INPUT(u, "jobs", url, "list", "q\xff", "waiting");
    BAD_INPUT(u, "jobs", url, "pause", "q\xff");
    CHECK_EQ(counts_of(url, "q", "waiting"), 1);
    CHECK_EQ(LANES(out, "jobs", url, "add", "caf\xc3\xa9", "n\xe2\x82\xac", "{}"), 0);
    jt_cleanup();
}

TEST(store_paths_that_are_not_files_exit_2) {
    char url[700];
    CHECK_EQ(mkfifo(jt_path("fifo.db"), 0600), 0);
    snprintf(url, sizeof url, "sqlite:%s", jt_path("fifo.db"));
    BAD_INPUT("is a FIFO, not a store file", "jobs", url, "add", "q", "n", "{}");
    BAD_INPUT("is a FIFO, not a store file", "jobs", url, "counts", "q");
    CHECK_EQ(mkdir(jt_path("dir.db"), 0700), 0);
    snprintf(url, sizeof url, "sqlite:%s", jt_path("dir.db"));
    BAD_INPUT("is a directory, not a store file", "jobs", url, "add", "q", "n", "{}");
    BAD_INPUT("is a character device", "jobs", "sqlite:/dev/null", "add", "q", "n", "{}");
    char side[700];
    for (int k = 0; k < 2; k++) {
        const char *suffix = k == 0 ? "-journal" : "-wal";
        snprintf(side, sizeof side, "%s%s", jt_path("fifo.db"), suffix);
        CHECK(access(side, F_OK) != 0);
        snprintf(side, sizeof side, "%s%s", jt_path("dir.db"), suffix);
        CHECK(access(side, F_OK) != 0);
    }
    jt_cleanup();
}

int main(int argc, char **argv) {
    return ln_test_run(argc, argv,
                       (ln_test_case[]){TESTCASE(names_that_are_not_utf8_exit_2),
                                        TESTCASE(store_paths_that_are_not_files_exit_2),
                                        {0}});
}
