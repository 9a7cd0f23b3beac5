/* experiment.h - what an experiment of `lanes bench` declares.
 *
 * An experiment is one file in bench/experiments/ that defines one
 * `static const ln_experiment` and registers it with LN_EXPERIMENT(). The
 * declaration says which published claim it re-tests (quote, url, numbers),
 * the hypothesis and conditions, the variants that run once per repeat
 * (lanes functions in C, or Node.js peer scripts from bench/peers/ or the
 * peer's own directory), the figures they yield, the comparisons to report,
 * the limits of those comparisons in plain words, and the chart; optionally
 * a setup and teardown around all runs (a server both sides use). The
 * runner (cli/bench_*.c) does the rest: warm-up, repeats alternating lanes
 * and peer, medians, min/max, ratios and their spread, the environment, the
 * JSON of seed 001, the SVG chart and the Markdown report.
 *
 * Tables are fixed-capacity arrays ended by their first all-zero entry, so
 * a declaration lists its rows and nothing else.
 *
 * Timing rule: a lanes run function times only the work the claim is about
 * (ln_now_ns() around it); pool creation, worker start and checks stay
 * outside the span. Peer scripts do the same with performance.now().
 */
#ifndef LN_BENCH_EXPERIMENT_H
#define LN_BENCH_EXPERIMENT_H

#include <stddef.h>

#define LN_EXP_MAX_TEXTS 12  /* conditions, limits */
#define LN_EXP_MAX_NUMBERS 8 /* claim numbers */
#define LN_EXP_MAX_PARAMS 6
#define LN_EXP_MAX_VARIANTS 16
#define LN_EXP_MAX_FIGURES 48
#define LN_EXP_MAX_COMPARES 12
#define LN_EXP_MAX_SERIES 8
#define LN_EXP_MAX_PANELS 8
#define LN_EXP_MAX_ARGS 4
#define LN_EXP_MAX_FILES 4

/* A label in the two languages of the seed documents. */
typedef struct ln_text {
    const char *ko;
    const char *en;
} ln_text;

typedef enum ln_better { LN_LOWER_IS_BETTER, LN_HIGHER_IS_BETTER } ln_better;

/* A scale parameter with its full and --quick values. The runner passes it
 * to lanes run functions (ln_exp_param) and to every peer script as
 * `--<name>=<value>`, so both sides always run the same workload size. */
typedef struct ln_exp_scale {
    const char *name; /* e.g. "tasks" */
    long full;
    long quick;
} ln_exp_scale;

/* The runner's state for one run of one variant (opaque). */
typedef struct ln_exp_ctx ln_exp_ctx;

/* Value of params[index] for this run (full or quick). */
long ln_exp_param(const ln_exp_ctx *ctx, size_t index);

/* Record one measured value of the running variant under name (the
 * `value` of its figures). A name no figure declares is ignored. */
void ln_exp_put(ln_exp_ctx *ctx, const char *name, double value);

/* Record why the run failed; returns -1 so a run function can
 * `return ln_exp_fail(ctx, "...", ...);`. */
int ln_exp_fail(ln_exp_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A lanes run: does one measured run, puts its values, returns 0 or the
 * result of ln_exp_fail(). Runs on the runner's (main) thread. */
typedef int (*ln_exp_run_fn)(ln_exp_ctx *ctx, const void *arg);

/* Something that runs once per repeat: a lanes function (run != NULL) or a
 * peer script (`node <peers dir>/<script> <args...> --<param>=<value>...`
 * with env added to the environment; it prints one JSON object of values
 * as its last line of output). */
typedef struct ln_exp_variant {
    const char *id;   /* unique within the experiment, e.g. "lanes-ring-1" */
    const char *what; /* plain words, for progress lines and the report */
    ln_exp_run_fn run;
    const void *arg;
    const char *script;
    const char *args[LN_EXP_MAX_ARGS];
    const char *env; /* one "NAME=value", or NULL */
} ln_exp_variant;

/* Table rows for the two kinds of variant (designated initializers, so the
 * fields a row leaves out are zero without a warning):
 *   LN_EXP_LANES("id", "what", run_fn, &arg)
 *   LN_EXP_PEER("id", "what", "NAME=value" or NULL, "script.mjs", "arg", ...) */
/* clang-format off */
#define LN_EXP_LANES(id_, what_, fn_, arg_) \
    {.id = (id_), .what = (what_), .run = (fn_), .arg = (arg_)}
#define LN_EXP_PEER(id_, what_, env_, script_, ...) \
    {.id = (id_), .what = (what_), .env = (env_), .script = (script_), .args = {__VA_ARGS__}}
/* clang-format on */

/* A measured figure: the JSON key of runs[] and summary, its unit, which
 * direction is better, and where it comes from (a variant's named value). */
typedef struct ln_exp_figure {
    const char *key;
    const char *unit;
    ln_better better;
    const char *variant;
    const char *value;
} ln_exp_figure;

/* What a comparison of two figures answers. */
typedef enum ln_cmp_kind {
    LN_CMP_CLAIM = 1,   /* the claim, rerun with the original library */
    LN_CMP_COUNTERPART, /* the same question asked of lanes */
    LN_CMP_VERSUS,      /* lanes against the original library, same work */
    LN_CMP_BOUND,       /* a measured figure against its theoretical bound */
    LN_CMP_TARGET       /* a measured figure against a figure it is required to reach,
                           or to beat by published_ratio (e.g. 3: three times) */
} ln_cmp_kind;

/* A ratio to report: baseline over target for lower-is-better figures
 * (target over baseline otherwise), so > 1 always means "target better".
 * The runner gives the ratio of the medians and the spread of the
 * per-repeat ratios (both figures come from the same repeat). */
typedef struct ln_exp_compare {
    ln_cmp_kind kind;
    const char *target;     /* figure key */
    const char *baseline;   /* figure key */
    const char *what;       /* plain words */
    const char *published;  /* the claim's figure in words, or NULL */
    double published_ratio; /* the same as a ratio (> 1: target better), 0 = none;
                               for LN_CMP_TARGET the ratio required (0: 1) */
} ln_exp_compare;

typedef struct ln_exp_series {
    const char *id;
    const char *role; /* "target" (lanes), "baseline" (the peer), or
                         "reference" (computed, e.g. a lower bound) */
    ln_text label;
    ln_text shortl; /* JSON "short" */
} ln_exp_series;

typedef struct ln_exp_panel {
    ln_text title;
    const char *unit;
    const char *kind; /* "time", ... */
    ln_better better;
    struct {
        const char *series;
        const char *figure;
    } keys[LN_EXP_MAX_SERIES];
} ln_exp_panel;

/* The original library an experiment runs beside lanes. */
typedef struct ln_exp_peer {
    const char *name;                    /* "Piscina" */
    const char *repo;                    /* "piscinajs/piscina" */
    const char *package;                 /* npm package checked in node_modules, or NULL */
    const char *version;                 /* the version pinned in its package.json */
    const char *files[LN_EXP_MAX_FILES]; /* scripts that run, in dir */
    /* Where the scripts are, relative to the source tree; NULL: the peers
     * directory (bench/peers, or $LANES_PEERS_DIR). */
    const char *dir;
    /* Whose node_modules/ holds package, relative to the source tree; NULL:
     * the scripts' directory. */
    const char *modules;
} ln_exp_peer;

typedef struct ln_experiment {
    const char *name;  /* command-line name and result slug: "fixedqueue" */
    const char *title; /* one line, plain words */
    const char *seeds; /* seed documents re-tested, e.g. "000, 001" */
    unsigned order;    /* listing order (E number) */
    struct {
        const char *quote;       /* verbatim, in the source's language */
        const char *translation; /* English gloss of a non-English quote, or NULL */
        const char *source;      /* who said it, where, when */
        const char *url;         /* "" when the seed gives none */
        double numbers[LN_EXP_MAX_NUMBERS];
        size_t nnumbers;
    } claim;
    const char *hypothesis;
    const char *conditions[LN_EXP_MAX_TEXTS];
    const char *limits[LN_EXP_MAX_TEXTS];
    /* The lanes code that runs, relative to the source tree; hashed into
     * scriptSha256 and copied into "script". */
    const char *sources[LN_EXP_MAX_FILES];
    int no_warmup; /* 1: skip the runner's untimed warm-up of lanes variants */
    ln_exp_scale params[LN_EXP_MAX_PARAMS];
    ln_exp_variant variants[LN_EXP_MAX_VARIANTS];
    ln_exp_figure figures[LN_EXP_MAX_FIGURES];
    /* The first comparison whose figures were measured is the headline:
     * summary.speedup in the JSON. */
    ln_exp_compare compares[LN_EXP_MAX_COMPARES];
    struct {
        ln_text title;
        ln_exp_series series[LN_EXP_MAX_SERIES];
        ln_exp_panel panels[LN_EXP_MAX_PANELS];
    } chart;
    ln_exp_peer peer; /* name NULL: lanes only */
    /* Optional, around all runs of the experiment (warm-up included), on
     * the runner's thread, e.g. to start a server both sides use. setup
     * returns 0, or -1 with the reason in why: then nothing runs and the
     * reason is the experiment's error. teardown runs after the last run
     * whenever setup returned 0. */
    int (*setup)(char *why, size_t whysize);
    void (*teardown)(void);
} ln_experiment;

/* Add exp to the list `lanes bench` knows. Called by LN_EXPERIMENT before
 * main() runs; exp must have static storage. */
void ln_experiment_register(const ln_experiment *exp);

/* Register `var` (a static const ln_experiment) at program start. */
#define LN_EXPERIMENT(var)                                                                         \
    static void ln_register_##var(void) __attribute__((constructor));                              \
    static void ln_register_##var(void) {                                                          \
        ln_experiment_register(&var);                                                              \
    }

#endif
