/* bench_runner.h - runs one experiment of bench/experiments/ (warm-up,
 * repeats alternating lanes and the Node.js peer) and keeps every figure of
 * every repeat, with the statistics the JSON, chart and report need.
 * Single-threaded: everything here runs on the command's main thread. */
#ifndef CLI_BENCH_RUNNER_H
#define CLI_BENCH_RUNNER_H

#include "bench_peer.h"
#include "bench_script.h"
#include "experiments/experiment.h"

#include <stddef.h>

/* The experiments linked into this program, in their declared order. */
size_t exp_count(void);
const exp_experiment *exp_at(size_t i);
const exp_experiment *exp_find(const char *name); /* NULL: unknown */

typedef struct cli_bench_opts {
    int quick;                  /* smaller workloads, fewer default repeats */
    unsigned repeats;           /* 0: 5, or 3 with quick */
    int progress;               /* draw a progress line on stderr */
    const cli_peer_env *peers;  /* NULL: lanes only ... */
    const char *no_peer_reason; /* ... and why, in plain words */
} cli_bench_opts;

typedef enum cli_peer_status {
    CLI_PEER_NONE,    /* the experiment has no peer */
    CLI_PEER_SKIPPED, /* not run: --no-peers, no node, no node_modules */
    CLI_PEER_RAN,     /* every peer run succeeded */
    CLI_PEER_FAILED   /* it ran, and at least one run failed */
} cli_peer_status;

typedef struct cli_bench_run {
    const exp_experiment *exp;
    int quick;
    unsigned repeats;
    long params[EXP_MAX_PARAMS];
    size_t nparams, nfigures, ncompares;
    double *values;    /* [repeat * nfigures + figure]; NAN = not measured */
    double *wall_ms;   /* [repeat]: the whole repeat, every variant */
    cli_script script; /* the lanes code that ran */
    cli_peer_status peer_status;
    char peer_reason[512];  /* why it was skipped or failed */
    cli_peer_env peer_env;  /* where the peer's scripts and packages are */
    cli_script peer_script; /* the peer scripts that ran */
    char node_version[32];  /* "v20.20.2", or "" */
    char peer_version[32];  /* installed package version, or "" */
    char **errors;          /* every failure, in plain words */
    size_t nerrors;
    char created_at[32]; /* UTC, ISO 8601 */
} cli_bench_run;

/* Run exp with opts into *run (which the caller frees with
 * cli_bench_run_free, also on failure). Returns 0 if every run of every
 * variant succeeded, -1 if something failed (see run->errors) -- the
 * figures measured are kept either way. */
int cli_bench_run_experiment(const exp_experiment *exp, const cli_bench_opts *opts,
                             cli_bench_run *run);
void cli_bench_run_free(cli_bench_run *run);

typedef struct cli_stats {
    size_t n; /* repeats that measured it; 0 = none (then the rest is NAN) */
    double median, min, max;
} cli_stats;

/* Index of figure key in exp->figures, or -1. */
int cli_bench_figure_index(const exp_experiment *exp, const char *key);

/* Median, min and max of figure f over the repeats. */
cli_stats cli_bench_figure_stats(const cli_bench_run *run, size_t f);

/* A comparison's ratio (> 1: target better, see exp_compare): of the
 * medians, and median/min/max of the per-repeat ratios. Returns 0, or -1
 * when a figure was not measured in any repeat. */
typedef struct cli_ratio {
    double of_medians;
    cli_stats per_repeat;
} cli_ratio;
int cli_bench_compare(const cli_bench_run *run, const exp_compare *cmp, cli_ratio *out);

#endif
