/* experiment.h - what an experiment of `lanes bench` declares (the
 * experiments E1-E6 are described in docs/experiments.md).
 *
 * Names: this interface and the experiments take `exp_`/`EXP_` (exp_ctx,
 * exp_put, EXP_REGISTER), one file per experiment named exp_<name>.c; the
 * workloads they share with the bench programs take `bench_`/`BENCH_`
 * (bench/workloads/<name>_load.c); the runner in cli/ takes `cli_`. None of
 * them uses the library's `ln_`.
 *
 * An experiment is one file in bench/experiments/ that defines one
 * `static const exp_experiment` and registers it with EXP_REGISTER(). The
 * declaration says which published claim it re-tests (quote, url, numbers),
 * the hypothesis and conditions, the variants that run once per repeat
 * (lanes functions in C, or Node.js peer scripts from bench/peers/ or the
 * peer's own directory), the figures they yield, the comparisons to report,
 * the limits of those comparisons in plain words, and the chart; optionally
 * a setup and teardown around all runs (a server both sides use). The runner
 * (cli/bench_*.c) does the rest: warm-up, repeats alternating lanes and peer,
 * medians, min/max, ratios and their spread, the environment, the result JSON
 * (docs/experiments.md#schema), the SVG chart and the Markdown report.
 *
 * Tables are fixed-capacity arrays ended by their first all-zero entry, so
 * a declaration lists its rows and nothing else.
 *
 * Timing rule: a lanes run function times only the work the claim is about
 * (ln_now_ns() around it); pool creation, worker start and checks stay
 * outside the span. Peer scripts do the same with performance.now().
 */
#ifndef BENCH_EXPERIMENT_H
#define BENCH_EXPERIMENT_H

#include <stddef.h>

#define EXP_MAX_TEXTS 12  /* conditions, limits */
#define EXP_MAX_NUMBERS 8 /* claim numbers */
#define EXP_MAX_PARAMS 6
#define EXP_MAX_VARIANTS 16
#define EXP_MAX_FIGURES 48
#define EXP_MAX_COMPARES 12
#define EXP_MAX_SERIES 8
#define EXP_MAX_PANELS 8
#define EXP_MAX_ARGS 4
#define EXP_MAX_FILES 4

/* A label in the two languages of the reports (Korean, English). */
typedef struct exp_text {
    const char *ko;
    const char *en;
} exp_text;

typedef enum exp_better { EXP_LOWER_IS_BETTER, EXP_HIGHER_IS_BETTER } exp_better;

/* A scale parameter with its full and --quick values. The runner passes it
 * to lanes run functions (exp_param) and to every peer script as
 * `--<name>=<value>`, so both sides always run the same workload size. */
typedef struct exp_scale {
    const char *name; /* e.g. "tasks" */
    long full;
    long quick;
} exp_scale;

/* The runner's state for one run of one variant (opaque). */
typedef struct exp_ctx exp_ctx;

/* Value of params[index] for this run (full or quick). */
long exp_param(const exp_ctx *ctx, size_t index);

/* Record one measured value of the running variant under name (the
 * `value` of its figures). A name no figure declares is ignored. */
void exp_put(exp_ctx *ctx, const char *name, double value);

/* Record why the run failed; returns -1 so a run function can
 * `return exp_fail(ctx, "...", ...);`. */
int exp_fail(exp_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A lanes run: does one measured run, puts its values, returns 0 or the
 * result of exp_fail(). Runs on the runner's (main) thread. */
typedef int (*exp_run_fn)(exp_ctx *ctx, const void *arg);

/* Something that runs once per repeat: a lanes function (run != NULL) or a
 * peer script (`node <peers dir>/<script> <args...> --<param>=<value>...`
 * with env added to the environment; it prints one JSON object of values
 * as its last line of output). */
typedef struct exp_variant {
    const char *id;   /* unique within the experiment, e.g. "lanes-ring-1" */
    const char *what; /* plain words, for progress lines and the report */
    exp_run_fn run;
    const void *arg;
    const char *script;
    const char *args[EXP_MAX_ARGS];
    const char *env; /* one "NAME=value", or NULL */
} exp_variant;

/* Table rows for the two kinds of variant (designated initializers, so the
 * fields a row leaves out are zero without a warning):
 *   EXP_LANES("id", "what", run_fn, &arg)
 *   EXP_PEER("id", "what", "NAME=value" or NULL, "script.mjs", "arg", ...) */
/* clang-format off */
#define EXP_LANES(id_, what_, fn_, arg_) \
    {.id = (id_), .what = (what_), .run = (fn_), .arg = (arg_)}
#define EXP_PEER(id_, what_, env_, script_, ...) \
    {.id = (id_), .what = (what_), .env = (env_), .script = (script_), .args = {__VA_ARGS__}}
/* clang-format on */

/* A measured figure: the JSON key of runs[] and summary, its unit, which
 * direction is better, and where it comes from (a variant's named value). */
typedef struct exp_figure {
    const char *key;
    const char *unit;
    exp_better better;
    const char *variant;
    const char *value;
} exp_figure;

/* What a comparison of two figures answers. */
typedef enum exp_cmp_kind {
    EXP_CMP_CLAIM = 1,   /* the claim, rerun with the original library */
    EXP_CMP_COUNTERPART, /* the same question asked of lanes */
    EXP_CMP_VERSUS,      /* lanes against the original library, same work */
    EXP_CMP_BOUND,       /* a measured figure against its theoretical bound */
    EXP_CMP_TARGET       /* a measured figure against a figure it is required to reach,
                           or to beat by published_ratio (e.g. 3: three times) */
} exp_cmp_kind;

/* A ratio to report: baseline over target for lower-is-better figures
 * (target over baseline otherwise), so > 1 always means "target better".
 * The runner gives the ratio of the medians and the spread of the
 * per-repeat ratios (both figures come from the same repeat). */
typedef struct exp_compare {
    exp_cmp_kind kind;
    const char *target;     /* figure key */
    const char *baseline;   /* figure key */
    const char *what;       /* plain words */
    const char *published;  /* the claim's figure in words, or NULL */
    double published_ratio; /* the same as a ratio (> 1: target better), 0 = none;
                               for EXP_CMP_TARGET the ratio required (0: 1) */
} exp_compare;

typedef struct exp_series {
    const char *id;
    const char *role; /* "target" (lanes), "baseline" (the peer), or
                         "reference" (computed, e.g. a lower bound) */
    exp_text label;
    exp_text shortl; /* JSON "short" */
} exp_series;

typedef struct exp_panel {
    exp_text title;
    const char *unit;
    const char *kind; /* "time", ... */
    exp_better better;
    struct {
        const char *series;
        const char *figure;
    } keys[EXP_MAX_SERIES];
} exp_panel;

/* The original library an experiment runs beside lanes. */
typedef struct exp_peer {
    const char *name;                 /* "Piscina" */
    const char *repo;                 /* "piscinajs/piscina" */
    const char *package;              /* npm package checked in node_modules, or NULL */
    const char *version;              /* the version pinned in its package.json */
    const char *files[EXP_MAX_FILES]; /* scripts that run, in dir */
    /* Where the scripts are, relative to the source tree; NULL: the peers
     * directory (bench/peers, or $LANES_PEERS_DIR). */
    const char *dir;
    /* Whose node_modules/ holds package, relative to the source tree; NULL:
     * the scripts' directory. */
    const char *modules;
} exp_peer;

typedef struct exp_experiment {
    const char *name;  /* command-line name and result slug: "fixedqueue" */
    const char *title; /* one line, plain words */
    const char *seeds; /* numbers of the source documents whose claims are
                          re-tested (JSON experiment.seeds), e.g. "000, 001" */
    unsigned order;    /* listing order (E number) */
    struct {
        const char *quote;       /* verbatim, in the source's language */
        const char *translation; /* English gloss of a non-English quote, or NULL */
        const char *source;      /* who said it, where, when */
        const char *url;         /* "" when the seed gives none */
        double numbers[EXP_MAX_NUMBERS];
        size_t nnumbers;
    } claim;
    const char *hypothesis;
    const char *conditions[EXP_MAX_TEXTS];
    const char *limits[EXP_MAX_TEXTS];
    /* The lanes code that runs, relative to the source tree; hashed into
     * scriptSha256 and copied into "script". */
    const char *sources[EXP_MAX_FILES];
    int no_warmup; /* 1: skip the runner's untimed warm-up of lanes variants */
    exp_scale params[EXP_MAX_PARAMS];
    exp_variant variants[EXP_MAX_VARIANTS];
    exp_figure figures[EXP_MAX_FIGURES];
    /* The first comparison whose figures were measured is the headline:
     * summary.speedup in the JSON. */
    exp_compare compares[EXP_MAX_COMPARES];
    struct {
        exp_text title;
        exp_series series[EXP_MAX_SERIES];
        exp_panel panels[EXP_MAX_PANELS];
    } chart;
    exp_peer peer; /* name NULL: lanes only */
    /* Optional, around all runs of the experiment (warm-up included), on
     * the runner's thread, e.g. to start a server both sides use. setup
     * returns 0, or -1 with the reason in why: then nothing runs and the
     * reason is the experiment's error. teardown runs after the last run
     * whenever setup returned 0. */
    int (*setup)(char *why, size_t whysize);
    void (*teardown)(void);
} exp_experiment;

/* Add exp to the list `lanes bench` knows. Called by EXP_REGISTER before
 * main() runs; exp must have static storage. */
void exp_register(const exp_experiment *exp);

/* Register `var` (a static const exp_experiment) at program start. */
#define EXP_REGISTER(var)                                                                          \
    static void exp_register_##var(void) __attribute__((constructor));                             \
    static void exp_register_##var(void) {                                                         \
        exp_register(&var);                                                                        \
    }

#endif
