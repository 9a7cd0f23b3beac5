/* exp_ratelimit.c - the rate-limited variants of E5 (`lanes bench jobs`)
 * and E6 (`lanes bench bullmq`); see exp_ratelimit.h. */
#include "experiments/exp_ratelimit.h"

#include "workloads/ratelimit_load.h"

#include <lanes.h>

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define CONCURRENCY 32

static int put(exp_ctx *ctx, int err, const bench_ratelimit_result *r) {
    if (err != 0) return exp_fail(ctx, "lanes, rate limited: %s (%s)", r->errmsg, ln_strerror(err));
    exp_put(ctx, "limitedJobsPerSec", r->jobs_per_sec);
    exp_put(ctx, "limitBoundJobsPerSec", r->bound_per_sec);
    return 0;
}

int exp_ratelimit_sqlite(exp_ctx *ctx, const void *arg) {
    (void)arg;
    const char *tmp = getenv("TMPDIR");
    char dir[512], url[600], path[640];
    snprintf(dir, sizeof dir, "%s/lanes-bench-limit-XXXXXX",
             tmp != NULL && *tmp != '\0' ? tmp : "/tmp");
    if (mkdtemp(dir) == NULL) return exp_fail(ctx, "cannot make a directory in %s", dir);
    snprintf(url, sizeof url, "sqlite:%s/limit.db?sync=normal", dir);
    bench_ratelimit_result r;
    int err = bench_ratelimit_run(url, "bench", EXP_RATELIMIT_JOBS, CONCURRENCY, EXP_RATELIMIT_MAX,
                                  EXP_RATELIMIT_MS, &r);
    static const char *const files[] = {"", "-wal", "-shm", "-reserve"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(path, sizeof path, "%s/limit.db%s", dir, files[i]);
        unlink(path);
    }
    rmdir(dir);
    return put(ctx, err, &r);
}

int exp_ratelimit_redis(exp_ctx *ctx, const void *arg) {
    char queue[64];
    snprintf(queue, sizeof queue, "lanes-bench-c-%ld-limited", (long)getpid());
    bench_ratelimit_result r;
    int err = bench_ratelimit_run((const char *)arg, queue, EXP_RATELIMIT_JOBS, CONCURRENCY,
                                  EXP_RATELIMIT_MAX, EXP_RATELIMIT_MS, &r);
    return put(ctx, err, &r);
}
