/* ratelimit_load.h - the rate-limited runs of `lanes bench jobs` (SQLite,
 * bench/experiments/exp_jobs.c) and `lanes bench bullmq` (Redis,
 * bench/experiments/exp_bullmq.c): a worker with a rate limit (ln_worker_opts
 * rate_max / rate_duration_ms) runs no-op jobs, and the run must meet the
 * limit without exceeding it.
 *
 * With a limit of max jobs per duration_ms, n jobs take k = ceil(n / max)
 * windows, the first starting at the first take: the run cannot end before
 * (k - 1) * duration_ms, so n / ((k - 1) * duration_ms) is the most the
 * limit allows (bound_per_sec). A run faster than that exceeded the limit
 * (LN_EFAILED); jobs_per_sec / bound_per_sec close to 1 means the limit was
 * met, i.e. the limit and not the queue set the pace.
 */
#ifndef BENCH_RATELIMIT_LOAD_H
#define BENCH_RATELIMIT_LOAD_H

#include <stddef.h>

typedef struct bench_ratelimit_result {
    double jobs_per_sec;  /* jobs / wall time of ln_worker_run */
    double bound_per_sec; /* the most the limit allows for these jobs */
    char errmsg[256];
} bench_ratelimit_result;

/* On url's queue (emptied of waiting and finished jobs first and after):
 * add 'jobs' (>= 2 * max) no-op jobs in batches (untimed), then run them
 * with a worker of 'concurrency' handlers limited to max per duration_ms,
 * exit_when_empty, timed from ln_worker_run to its return. 0 or LN_E*
 * (LN_EFAILED: not every job completed, or the limit was exceeded). */
int bench_ratelimit_run(const char *url, const char *queue, size_t jobs, unsigned concurrency,
                        unsigned max, unsigned duration_ms, bench_ratelimit_result *out);

#endif
