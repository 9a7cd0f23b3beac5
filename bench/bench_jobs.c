/* bench_jobs.c - throughput and latency of the SQLite job queue.
 *
 *   bench_jobs [--jobs N] [--repeats R] [--dir DIR] [--sync normal|full]
 *              [--quick]
 *
 * Measures, each as the median (min..max) of R repeats on a fresh store,
 * with the workloads of bench/workloads/jobs_load.h (shared with `lanes bench
 * jobs`):
 *   add-1      N jobs added one by one (one transaction each): jobs/s and
 *              the latency of one ln_jobs_add (p50/p99);
 *   add-1000   N jobs added in batches of 1,000 (one transaction each);
 *   run cC pP  N pre-added jobs run by no-op handlers at concurrency C
 *              (1, 8, 50) in P processes (1, 2): jobs/s, and the
 *              take->complete latency from the store's own timestamps;
 *   e2e        a producer adding batches of 1,000 while a worker
 *              (concurrency 8) runs them: jobs/s from the first add to the
 *              last completion (E5 in docs/experiments.md).
 * --depth: what an open and first, middle and last pages cost as the store
 * grows, by offset and by cursor (jobs_depth.c has its options).
 * --quick: 5,000 jobs, 1 repeat. Figures depend on the machine and its
 * load; this program prints them and asserts nothing.
 */
#include "jobs_depth.h"
#include "workloads/jobs_load.h"

#include <lanes.h>

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_REPEATS 15

typedef enum { ADD, RUN, E2E } kind;

typedef struct bench_case {
    const char *name;
    kind kind;
    unsigned arg;         /* ADD: batch size; RUN, E2E: concurrency */
    unsigned procs;       /* RUN */
    const char *lat_unit; /* NULL: no latency to print */
} bench_case;

static const bench_case cases[] = {
    {"add-1", ADD, 1, 0, "add us"},
    {"add-1000", ADD, BENCH_JOBS_BATCH, 0, "batch us"},
    {"run c1 p1", RUN, 1, 1, "take->done ms"},
    {"run c8 p1", RUN, 8, 1, "take->done ms"},
    {"run c50 p1", RUN, 50, 1, "take->done ms"},
    {"run c1 p2", RUN, 1, 2, "take->done ms"},
    {"run c8 p2", RUN, 8, 2, "take->done ms"},
    {"run c50 p2", RUN, 50, 2, "take->done ms"},
    {"e2e", E2E, 8, 0, NULL},
};

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts v. */
static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int run_case(const bench_jobs_opts *o, const bench_case *c, bench_jobs_result *r) {
    switch (c->kind) {
    case ADD:
        return bench_jobs_add(o, c->arg, r);
    case RUN:
        return bench_jobs_run(o, c->arg, c->procs, r);
    default:
        return bench_jobs_e2e(o, c->arg, r);
    }
}

static void report(const bench_case *c, const bench_jobs_result *r, int n) {
    double rate[MAX_REPEATS], p50[MAX_REPEATS], p99[MAX_REPEATS], mean[MAX_REPEATS];
    for (int i = 0; i < n; i++) {
        rate[i] = r[i].jobs_per_sec;
        p50[i] = r[i].p50;
        p99[i] = r[i].p99;
        mean[i] = r[i].mean;
    }
    double m = median(rate, n); /* rate[] is sorted from here on */
    printf("%-14s %10.0f jobs/s  (min %.0f, max %.0f)", c->name, m, rate[0], rate[n - 1]);
    if (c->lat_unit != NULL)
        printf("   %s: p50 %.1f  p99 %.1f  mean %.2f", c->lat_unit, median(p50, n), median(p99, n),
               median(mean, n));
    printf("\n");
    fflush(stdout);
}

static int usage(void) {
    fprintf(stderr, "usage: bench_jobs [--jobs N] [--repeats R] [--dir DIR] "
                    "[--sync normal|full] [--quick]\n"
                    "       bench_jobs --depth [--sizes N,N,...] [--page P] [--repeats R] "
                    "[--dir DIR] [--redis URL]\n");
    return 2;
}

int main(int argc, char **argv) {
    bench_jobs_opts o;
    bench_jobs_opts_init(&o);
    int repeats = 3;
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--depth") == 0) return bench_jobs_depth(argc, argv);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) {
            o.jobs = 5000;
            repeats = 1;
        } else if (strcmp(argv[i], "--jobs") == 0 && i + 1 < argc) {
            o.jobs = (size_t)strtoul(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--repeats") == 0 && i + 1 < argc) {
            repeats = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc) {
            o.dir = argv[++i];
        } else if (strcmp(argv[i], "--sync") == 0 && i + 1 < argc) {
            o.sync = argv[++i];
        } else {
            return usage();
        }
    }
    if (o.jobs < 1000 || repeats < 1 || repeats > MAX_REPEATS) {
        fprintf(stderr, "bench_jobs: need --jobs >= 1000, 1 <= repeats <= %d\n", MAX_REPEATS);
        return 2;
    }
    printf("bench_jobs: %zu jobs, %d repeat(s), sync=%s, store in %s, %ld CPUs, "
           "lanes %s, SQLite %s\n",
           o.jobs, repeats, o.sync, o.dir, sysconf(_SC_NPROCESSORS_ONLN), ln_version_string(),
           sqlite3_libversion());
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        bench_jobs_result r[MAX_REPEATS];
        for (int i = 0; i < repeats; i++) {
            int err = run_case(&o, &cases[k], &r[i]);
            if (err != 0) {
                fprintf(stderr, "bench_jobs: %s: %s (%s)\n", cases[k].name, r[i].errmsg,
                        ln_strerror(err));
                return 1;
            }
        }
        report(&cases[k], r, repeats);
    }
    return 0;
}
