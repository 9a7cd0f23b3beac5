/* fuzz_url.c - store URLs (any bytes a user or a config file gives
 * `lanes jobs URL` or ln_jobs_open): the library's dispatch and its sqlite:
 * and redis:// / unix: parsers, and the CLI's checks of cli/store_url.c.
 *
 * Safe by construction: a sqlite: URL is opened with its path moved into a
 * private temporary directory (the query string kept as given), and
 * removed again; a redis:// or unix: URL is only parsed
 * (ln__redis_cfg_parse), never connected to. Checks: ln_jobs_open_ex gives
 * a store or an error code with a terminated message; the parsed Redis
 * config is consistent; the shown URL fits its buffer. */
#include "fuzz_common.h"
#include "lanes/jobs.h"
#include "store_url.h"
#ifdef LN_HAVE_REDIS
#include "jobs/redis/redis_conn.h"
#endif

#include <unistd.h>

static char tmpdir[64];

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/lanes-fuzz-url-XXXXXX");
    if (mkdtemp(tmpdir) == NULL) abort();
    return 0;
}

static void remove_store(const char *path) {
    static const char *const tails[] = {"", "-wal", "-shm", "-journal"};
    char p[512];
    for (size_t i = 0; i < sizeof tails / sizeof *tails; i++) {
        snprintf(p, sizeof p, "%s%s", path, tails[i]);
        unlink(p);
    }
}

/* "sqlite:[//]PATH[?QUERY]" opened as "sqlite:TMP/f_PATH'[?QUERY]" (PATH'
 * with its '/' made '_', cut to 100 bytes). */
static void open_sqlite(const char *url) {
    const char *p = url + 7;
    if (strncmp(p, "//", 2) == 0) p += 2;
    size_t n = strcspn(p, "?");
    char name[101];
    size_t k = n < 100 ? n : 100;
    for (size_t i = 0; i < k; i++) name[i] = p[i] == '/' ? '_' : p[i];
    name[k] = '\0';
    char path[256], *moved = malloc(strlen(url) + 256);
    if (moved == NULL) abort();
    snprintf(path, sizeof path, "%s/f_%s", tmpdir, name);
    sprintf(moved, "sqlite:%s%s%s", n == 0 ? "" : path, "", p + n);
    ln_jobs *jobs = NULL;
    char err[512];
    int rc = ln_jobs_open_ex(&jobs, moved, NULL, err, sizeof err);
    FUZZ_CHECK((rc == 0) == (jobs != NULL), "rc %d, jobs %p", rc, (void *)jobs);
    FUZZ_CHECK(rc == 0 || (rc < 0 && fuzz_terminated(err, sizeof err) && err[0] != '\0'),
               "rc %d without a message", rc);
    ln_jobs_close(jobs);
    if (n != 0) remove_store(path);
    free(moved);
}

static void parse_redis(const char *url) {
#ifdef LN_HAVE_REDIS
    ln__redis_cfg cfg;
    char err[512];
    int rc = ln__redis_cfg_parse(&cfg, url, err, sizeof err);
    FUZZ_CHECK(rc == 0 || rc == LN_EINVAL || rc == LN_ENOTSUP, "redis rc %d", rc);
    if (rc != 0) {
        FUZZ_CHECK(fuzz_terminated(err, sizeof err) && err[0] != '\0', "no message");
        return;
    }
    FUZZ_CHECK((cfg.host != NULL) != (cfg.path != NULL), "host xor path");
    FUZZ_CHECK(cfg.prefix != NULL && cfg.prefix[0] != '\0', "prefix");
    FUZZ_CHECK(cfg.port >= 1 && cfg.port <= 65535, "port %d", cfg.port);
    FUZZ_CHECK(cfg.timeout_ms >= 1, "timeout");
    ln__redis_cfg_free(&cfg);
#else
    (void)url;
#endif
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *url = fuzz_cstr(data, size);
    if (strncmp(url, "sqlite:", 7) == 0) {
        open_sqlite(url);
    } else if (strncmp(url, "redis://", 8) == 0 || strncmp(url, "rediss://", 9) == 0 ||
               strncmp(url, "unix:", 5) == 0) {
        parse_redis(url);
    } else if (strncmp(url, "postgres://", 11) == 0 || strncmp(url, "postgresql://", 13) == 0) {
        /* Not opened: opening connects (and may look a name up). Its query
         * string's reading is checked by test_pg_url. */
    } else {
        ln_jobs *jobs = NULL;
        char err[512];
        int rc = ln_jobs_open_ex(&jobs, url, NULL, err, sizeof err);
        FUZZ_CHECK(rc == LN_EINVAL && jobs == NULL, "rc %d for a URL of no store", rc);
    }
    parse_redis(url); /* whatever the scheme: an error, never a crash */
    /* The CLI's checks: the sqlite: existence check only stats paths. */
    (void)cli_check_store_exists("fuzz", url, "fuzz");
    char shown[64 + 4096], small[8];
    cli_store_url_shown(shown, sizeof shown, url);
    FUZZ_CHECK(fuzz_terminated(shown, sizeof shown), "shown");
    cli_store_url_shown(small, sizeof small, url);
    FUZZ_CHECK(fuzz_terminated(small, sizeof small), "small");
    free(url);
    return 0;
}
