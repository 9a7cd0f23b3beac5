/* bench_runner.h - runs one experiment of bench/experiments/ (warm-up,
 * repeats alternating lanes and the Node.js peer) and keeps every figure of
 * every repeat, with the statistics the JSON, chart and report need.
 * Single-threaded: everything here runs on the command's main thread. */
#ifndef LN_CLI_BENCH_RUNNER_H
#define LN_CLI_BENCH_RUNNER_H

#include "bench_peer.h"
#include "bench_script.h"
#include "experiments/experiment.h"

#include <stddef.h>

/* The experiments linked into this program, in their declared order. */
size_t ln_experiment_count(void);
const ln_experiment *ln_experiment_at(size_t i);
const ln_experiment *ln_experiment_find(const char *name); /* NULL: unknown */

typedef struct ln_bench_opts {
    int quick;                  /* smaller workloads, fewer default repeats */
    unsigned repeats;           /* 0: 5, or 3 with quick */
    int progress;               /* draw a progress line on stderr */
    const ln_peer_env *peers;   /* NULL: lanes only ... */
    const char *no_peer_reason; /* ... and why, in plain words */
} ln_bench_opts;

typedef enum ln_peer_status {
    LN_PEER_NONE,    /* the experiment has no peer */
    LN_PEER_SKIPPED, /* not run: --no-peers, no node, no node_modules */
    LN_PEER_RAN,     /* every peer run succeeded */
    LN_PEER_FAILED   /* it ran, and at least one run failed */
} ln_peer_status;

typedef struct ln_bench_run {
    const ln_experiment *exp;
    int quick;
    unsigned repeats;
    long params[LN_EXP_MAX_PARAMS];
    size_t nparams, nfigures, ncompares;
    double *values;   /* [repeat * nfigures + figure]; NAN = not measured */
    double *wall_ms;  /* [repeat]: the whole repeat, every variant */
    ln_script script; /* the lanes code that ran */
    ln_peer_status peer_status;
    char peer_reason[512]; /* why it was skipped or failed */
    ln_peer_env peer_env;  /* where the peer's scripts and packages are */
    ln_script peer_script; /* the peer scripts that ran */
    char node_version[32]; /* "v20.20.2", or "" */
    char peer_version[32]; /* installed package version, or "" */
    char **errors;         /* every failure, in plain words */
    size_t nerrors;
    char created_at[32]; /* UTC, ISO 8601 */
} ln_bench_run;

/* Run exp with opts into *run (which the caller frees with
 * ln_bench_run_free, also on failure). Returns 0 if every run of every
 * variant succeeded, -1 if something failed (see run->errors) -- the
 * figures measured are kept either way. */
int ln_bench_run_experiment(const ln_experiment *exp, const ln_bench_opts *opts, ln_bench_run *run);
void ln_bench_run_free(ln_bench_run *run);

typedef struct ln_stats {
    size_t n; /* repeats that measured it; 0 = none (then the rest is NAN) */
    double median, min, max;
} ln_stats;

/* Index of figure key in exp->figures, or -1. */
int ln_bench_figure_index(const ln_experiment *exp, const char *key);

/* Median, min and max of figure f over the repeats. */
ln_stats ln_bench_figure_stats(const ln_bench_run *run, size_t f);

/* A comparison's ratio (> 1: target better, see ln_exp_compare): of the
 * medians, and median/min/max of the per-repeat ratios. Returns 0, or -1
 * when a figure was not measured in any repeat. */
typedef struct ln_ratio {
    double of_medians;
    ln_stats per_repeat;
} ln_ratio;
int ln_bench_compare(const ln_bench_run *run, const ln_exp_compare *cmp, ln_ratio *out);

#endif
