/* rails_load.h - the E2 "rails" workload (docs/experiments.md; chunked Promise.all vs a
 * promise pool), shared by bench/bench_rails.c and `lanes bench rails`.
 *
 * A plan is N task durations drawn from a fixed seed. It is run three ways,
 * each returning the wall time of the scheduled work only (loop, pool and
 * timer setup stay outside the span):
 *   chunked  N/C chunks of C timers on a libuv loop, each chunk waiting for
 *            its slowest task (the claim's `for (chunk) await Promise.all`);
 *   limiter  the same timers through an ln_limiter of concurrency C: each
 *            start arms a uv_timer, the timer callback calls ln_done, which
 *            starts the next queued task at once (the claim's PromisePool);
 *   map      ln_map with concurrency C on a pool lane of C threads, each
 *            item a nanosleep of its duration (blocking work on threads).
 * and compared with figures computed from the same durations: the lower
 * bound max(sum/C, max), the makespan of the ideal in-order greedy schedule
 * (each task, in index order, takes the rail that frees first), and the
 * ideal chunked makespan (sum over chunks of the chunk's maximum).
 *
 * Durations. E2's source (docs/experiments.md#e2) draws
 * getRandomTime(500, 2000) ms per task. Here a splitmix64 generator
 * (Steele, Lea, Flood 2014; constants of Vigna's reference code) seeded with
 * opts.seed yields u in [0, 1) from its top 53 bits; the task's nominal
 * duration is 500 + floor(u * 1501) ms (500..2000 inclusive), then it is
 * multiplied by time_scale and rounded to whole milliseconds (at least 1),
 * the resolution of libuv timers, so that every variant and every computed
 * figure uses identical durations.
 *
 * The overhead workloads measure the cost per item of the two APIs with
 * work that takes no time: ln_limiter with operations that call ln_done
 * inside start, and ln_map with a function that returns 0.
 *
 * All functions return 0 or a negative LN_E* code; LN_ENOTSUP for the libuv
 * variants when lanes was built without libuv. Not thread-safe with each
 * other (they time themselves; run one at a time).
 */
#ifndef BENCH_RAILS_LOAD_H
#define BENCH_RAILS_LOAD_H

#include <stddef.h>
#include <stdint.h>

#define BENCH_RAILS_SEED 0x5eed0002u /* spells "seed 002": E2, docs/experiments.md#e2 */

typedef struct bench_rails_opts {
    unsigned tasks;       /* 1000 */
    unsigned concurrency; /* 50: the chunk size and the number of rails */
    unsigned min_ms;      /* 500: nominal, before scaling */
    unsigned max_ms;      /* 2000 */
    double time_scale;    /* 0.01: 500-2000 ms become 5-20 ms */
    uint64_t seed;        /* BENCH_RAILS_SEED */
} bench_rails_opts;

void bench_rails_opts_init(bench_rails_opts *opts);

/* The durations of one workload, in scaled whole milliseconds. */
typedef struct bench_rails_plan {
    unsigned tasks, concurrency;
    uint32_t *ms; /* tasks entries, owned by the plan */
} bench_rails_plan;

/* Draw the durations. 0, LN_EINVAL (tasks or concurrency 0, min > max,
 * scale <= 0), LN_ENOMEM. Free with bench_rails_plan_free. */
int bench_rails_plan_make(bench_rails_plan *plan, const bench_rails_opts *opts);
void bench_rails_plan_free(bench_rails_plan *plan);

/* Figures computed from the plan, in ms. */
typedef struct bench_rails_bounds {
    double sum_ms;           /* all durations */
    double max_ms;           /* the longest */
    double lower_bound_ms;   /* max(sum / C, max) */
    double greedy_ms;        /* ideal in-order greedy makespan on C rails */
    double chunked_ideal_ms; /* sum of each chunk's longest */
} bench_rails_bounds;

void bench_rails_bounds_of(const bench_rails_plan *plan, bench_rails_bounds *out);

/* Measured runs: *ms is the wall time of the scheduled work. */
int bench_rails_run_chunked(const bench_rails_plan *plan, double *ms);
int bench_rails_run_limiter(const bench_rails_plan *plan, double *ms);
int bench_rails_run_map(const bench_rails_plan *plan, double *ms);

/* One repeat of everything E2 reports. */
typedef struct bench_rails_result {
    bench_rails_bounds bounds;
    double chunked_ms, limiter_ms, map_ms; /* measured */
} bench_rails_result;

int bench_rails_run_all(const bench_rails_plan *plan, bench_rails_result *out);

/* Overhead: ops operations that finish inside start, through an ln_limiter
 * of the given concurrency (E2 measures 1,000,000 at 1,000). */
int bench_rails_limiter_overhead(size_t ops, unsigned concurrency, double *ns_per_op);

/* Overhead: items no-op items through ln_map on the CPU lane of a default
 * pool (concurrency 0 = the lane's threads), codes collected per index. */
int bench_rails_map_overhead(size_t items, double *ns_per_item);

#endif
