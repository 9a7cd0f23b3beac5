/* exp_ratelimit.h - the rate-limited run that `lanes bench jobs` (SQLite)
 * and `lanes bench bullmq` (Redis) each declare as a variant
 * (exp_ratelimit.c, bench/workloads/ratelimit_load.h): a worker limited to
 * EXP_RATELIMIT_MAX jobs per EXP_RATELIMIT_MS ms runs EXP_RATELIMIT_JOBS
 * no-op jobs; it puts "limitedJobsPerSec" and "limitBoundJobsPerSec" (the
 * most the limit allows), whose ratio near 1 says the limit was met, and
 * fails when it was exceeded. */
#ifndef BENCH_EXP_RATELIMIT_H
#define BENCH_EXP_RATELIMIT_H

#include "experiments/experiment.h"

#define EXP_RATELIMIT_MAX 300
#define EXP_RATELIMIT_MS 100    /* 3,000 jobs/s, well under both stores' own rates */
#define EXP_RATELIMIT_JOBS 1800 /* six windows */

/* The SQLite run (arg unused: a fresh store in a temporary directory). */
int exp_ratelimit_sqlite(exp_ctx *ctx, const void *arg);
/* The Redis run; arg: the server's URL (a NUL-terminated string). */
int exp_ratelimit_redis(exp_ctx *ctx, const void *arg);

#endif
