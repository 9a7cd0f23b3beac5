/* test_pg_url.c - a postgres:// URL's query string is read without
 * touching a byte past its end, whatever its shape: lanes takes its own
 * schema=NAME out of it in place and hands the rest to libpq. Each URL
 * points at a closed loopback port, so the open fails fast at the
 * connection (or at a bad parameter) and never reaches a server; under
 * ASan (asan/test_pg_url) a read past the copy of the URL fails the test,
 * as the fuzzer's input pg-query-end-overrun once did. */
#include <lanes/jobs.h>

#include "testutil.h"

#include <string.h>

static int open_code(const char *url, char *err, size_t errsize) {
    ln_jobs *jobs = NULL;
    int rc = ln_jobs_open_ex(&jobs, url, NULL, err, errsize);
    if (jobs != NULL) ln_jobs_close(jobs);
    return rc;
}

TEST(query_shapes_never_overrun) {
    static const char *const urls[] = {
        "postgresql://127.0.0.1:1/db?sync=f?p~",
        "postgresql://127.0.0.1:1/db?connect_timeout=1&",
        "postgresql://127.0.0.1:1/db?&&connect_timeout=1&&",
        "postgresql://127.0.0.1:1/db?schema=s&connect_timeout=1",
        "postgresql://127.0.0.1:1/db?connect_timeout=1&schema=s",
        "postgresql://127.0.0.1:1/db?schema=s",
        "postgresql://127.0.0.1:1/db?",
        "postgres://127.0.0.1:1/db?a=b?c=d&e",
    };
    for (size_t i = 0; i < sizeof urls / sizeof urls[0]; i++) {
        char err[512] = "";
        int rc = open_code(urls[i], err, sizeof err);
        CHECK(rc < 0);      /* nothing listens on port 1 */
        CHECK(err[0] != 0); /* and it says why */
    }
}

TEST(schema_checked) {
    char err[512] = "";
    CHECK_EQ(open_code("postgresql://127.0.0.1:1/db?schema=", err, sizeof err), LN_EINVAL);
    CHECK(strstr(err, "empty schema") != NULL);
    CHECK_EQ(open_code("postgresql://127.0.0.1:1/db?schema=a-b", err, sizeof err), LN_EINVAL);
    CHECK(strstr(err, "plain identifier") != NULL);
}

int main(int argc, char **argv) {
    static const ln_test_case cases[] = {
        TESTCASE(query_shapes_never_overrun), TESTCASE(schema_checked), {0}};
    return ln_test_run(argc, argv, cases);
}
