/* bullmq_load.h - the C side of E6 (docs/experiments.md), the speed figures, on lanes' Redis
 * backend (BullMQ 6.7's layout): a worker running no-op jobs, and jobs added one by one or in bulk.
 * Used by `lanes bench bullmq` (bench/experiments/exp_bullmq.c), whose Node.js side does the same
 * with stock BullMQ (bench/peers-bullmq/bench.mjs).
 *
 * Each function opens its own handle on url (a redis:// or unix: URL of
 * <lanes/jobs.h>), runs one measured workload on queue through the public
 * API, checks that every job arrived where it should, removes the queue's
 * jobs again (drain, clean), closes the handle and fills *out. Throughput
 * is jobs / wall time of the measured span only: opening the handle,
 * creating the worker, the jobs a worker run adds before it starts and the
 * checks afterwards stay outside it. Every job is (name "noop", data {}),
 * with default options.
 *
 * All return 0 or a negative LN_E* code with a sentence in out->errmsg
 * (LN_EINVAL for bad arguments). Call them from one thread at a time: they
 * time themselves and share the machine with the Redis server.
 */
#ifndef BENCH_BULLMQ_LOAD_H
#define BENCH_BULLMQ_LOAD_H

#include <stddef.h>

#define BENCH_BULLMQ_BATCH 1000 /* jobs per ln_jobs_add_bulk call */

typedef struct bench_bullmq_result {
    double jobs_per_sec;
    /* The server's side of the worker run (bench_bullmq_worker only), from
     * INFO cpu and INFO commandstats read before and after the timed span
     * on a connection of its own; < 0 when they could not be read (a
     * server without INFO, a build without hiredis). */
    double redis_cpu_us_per_job;  /* used_cpu_user + used_cpu_sys, in us */
    double redis_calls_per_job;   /* every command, script-inner ones too */
    double redis_scripts_per_job; /* EVALSHA + EVAL */
    /* The C side's own CPU over the timed span (bench_bullmq_worker only):
     * getrusage of this process, user + sys, in us per job (the worker's
     * threads and the library's; nothing else runs in the span). */
    double worker_cpu_us_per_job;
    char errmsg[256];
} bench_bullmq_result;

/* Add 'jobs' jobs in batches (untimed), then run them all with a worker of
 * 'concurrency' (1..1000) no-op handlers and exit_when_empty, timed from
 * ln_worker_run's start to its return. threads 0: the worker's own pool
 * (ln_worker_opts.pool NULL, the default: a lane that grows up to
 * concurrency threads); 1..64: a pool of its own with one fixed lane of
 * that many threads (ln_worker_opts.pool), as a Node worker runs its 50
 * handlers on one thread. no_active_event: ln_worker_opts.no_active_event.
 * Fails unless the worker completed exactly 'jobs' jobs. */
int bench_bullmq_worker(const char *url, const char *queue, size_t jobs, unsigned concurrency,
                        unsigned threads, int no_active_event, bench_bullmq_result *out);

/* Add 'jobs' jobs, 'batch' (1..BENCH_BULLMQ_BATCH) per call on one
 * connection: batch 1 is one awaited ln_jobs_add per job, larger ones
 * ln_jobs_add_bulk. Fails unless the queue then holds 'jobs' waiting jobs. */
int bench_bullmq_add(const char *url, const char *queue, size_t jobs, size_t batch,
                     bench_bullmq_result *out);

#endif
