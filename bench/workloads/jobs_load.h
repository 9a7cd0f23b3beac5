/* jobs_load.h - the job-queue workloads of E5 (docs/experiments.md), shared by bench/bench_jobs.c
 * and `lanes bench jobs` (bench/experiments/exp_jobs.c).
 *
 * Each function makes a fresh SQLite store (sqlite:DIR/...?sync=MODE),
 * runs one measured workload on it through the public API of
 * <lanes/jobs.h>, checks that every job arrived where it should, removes
 * the store's files and fills *out. Throughput is jobs / wall time of the
 * measured span only: opening stores, creating workers, the jobs a 'run'
 * adds before it starts and the checks afterwards stay outside it. Every
 * job is ("bench", {"n":1}) in queue "bench"; handlers do nothing.
 *
 * All return 0 or a negative LN_E* code with a sentence in out->errmsg.
 * They are not thread-safe with each other (run one at a time: they time
 * themselves and share the machine's two cores).
 */
#ifndef BENCH_JOBS_LOAD_H
#define BENCH_JOBS_LOAD_H

#include <stddef.h>

#define BENCH_JOBS_BATCH 1000 /* jobs per ln_jobs_add_bulk call */

typedef struct bench_jobs_opts {
    size_t jobs;      /* jobs per run, >= 1; default 100000 */
    const char *dir;  /* where stores are made; default $TMPDIR or /tmp */
    const char *sync; /* "normal" (default) or "full" */
} bench_jobs_opts;

void bench_jobs_opts_init(bench_jobs_opts *opts);

typedef struct bench_jobs_result {
    double jobs_per_sec;
    /* Latency percentiles, -1 where a workload has none: for add, of one
     * call (one add or one batch) in us; for run, from take to completion
     * in ms, from the store's own (millisecond) timestamps. */
    double p50, p99, mean;
    char errmsg[256];
} bench_jobs_result;

/* Add opts->jobs jobs, 'batch' (1..BENCH_JOBS_BATCH) per call: batch 1
 * uses ln_jobs_add (one transaction per job), larger ones
 * ln_jobs_add_bulk. */
int bench_jobs_add(const bench_jobs_opts *opts, size_t batch, bench_jobs_result *out);

/* Add opts->jobs jobs (untimed), then run them all with no-op handlers:
 * 'procs' (1..8) worker processes (1: in this process, more: forked
 * children, each with its own handle) of 'concurrency' handlers each, with
 * exit_when_empty. */
int bench_jobs_run(const bench_jobs_opts *opts, unsigned concurrency, unsigned procs,
                   bench_jobs_result *out);

/* End to end, "add + process + complete with batching": a
 * producer thread (its own handle) adds opts->jobs jobs in batches of
 * BENCH_JOBS_BATCH while a worker of 'concurrency' no-op handlers in
 * this process runs them, from the first add to the last completion. The
 * worker has exit_when_empty set; a delayed placeholder job, added before
 * and removed by the producer after its last batch, keeps the queue from
 * looking empty while the producer is still adding. */
int bench_jobs_e2e(const bench_jobs_opts *opts, unsigned concurrency, bench_jobs_result *out);

#endif
