/* bench_runner.c - run an experiment: its setup (if it has one), an
 * untimed warm-up of the lanes variants, then the repeats, each running
 * every variant once, with the lanes side and the peer side taking turns to
 * go first so slow drifts of a shared machine hit both alike, and its
 * teardown. The figures come from inside the variants (their own timed
 * spans); the runner only stores them. */
#include "bench_runner.h"

#include <lanes.h>

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_EXPERIMENTS 32
#define PEER_TIMEOUT_S 900 /* generous: a slow peer run takes tens of seconds */

/* ---------------------------------------------------------------- registry */

static const exp_experiment *registry[MAX_EXPERIMENTS];
static size_t registered;

void exp_register(const exp_experiment *exp) {
    if (registered == MAX_EXPERIMENTS) {
        fprintf(stderr, "lanes bench: more than %d experiments; %s ignored\n", MAX_EXPERIMENTS,
                exp->name);
        return;
    }
    /* Insertion sort by order: constructors run in link order. */
    size_t i = registered++;
    while (i > 0 && registry[i - 1]->order > exp->order) {
        registry[i] = registry[i - 1];
        i--;
    }
    registry[i] = exp;
}

size_t exp_count(void) {
    return registered;
}

const exp_experiment *exp_at(size_t i) {
    return i < registered ? registry[i] : NULL;
}

const exp_experiment *exp_find(const char *name) {
    for (size_t i = 0; i < registered; i++)
        if (strcmp(registry[i]->name, name) == 0) return registry[i];
    return NULL;
}

/* ------------------------------------------------- the experiment's side */

struct exp_ctx {
    const exp_experiment *exp;
    const exp_variant *variant;
    const long *params;
    double *row; /* this repeat's figures; NULL while warming up */
    char error[512];
    int failed;
};

long exp_param(const exp_ctx *ctx, size_t index) {
    return index < EXP_MAX_PARAMS ? ctx->params[index] : 0;
}

void exp_put(exp_ctx *ctx, const char *name, double value) {
    for (size_t f = 0; f < EXP_MAX_FIGURES && ctx->exp->figures[f].key; f++) {
        const exp_figure *fig = &ctx->exp->figures[f];
        if (ctx->row && strcmp(fig->variant, ctx->variant->id) == 0 &&
            strcmp(fig->value, name) == 0)
            ctx->row[f] = value;
    }
}

int exp_fail(exp_ctx *ctx, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ctx->error, sizeof ctx->error, fmt, ap);
    va_end(ap);
    ctx->failed = 1;
    return -1;
}

/* ------------------------------------------------------------- the runner */

static void add_error(cli_bench_run *run, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void add_error(cli_bench_run *run, const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    char **grown = realloc(run->errors, (run->nerrors + 1) * sizeof *grown);
    char *copy = malloc(strlen(msg) + 1);
    if (!grown || !copy) {
        free(copy);
        if (grown) run->errors = grown;
        return; /* out of memory: the failure is still counted by the caller */
    }
    strcpy(copy, msg);
    run->errors = grown;
    run->errors[run->nerrors++] = copy;
}

/* What the progress line shows. It is redrawn when a variant starts and,
 * while a peer runs, about once a second. */
typedef struct progress {
    const cli_bench_opts *opts;
    const exp_experiment *exp;
    unsigned repeat, repeats; /* repeat 0: the warm-up */
    const exp_variant *variant;
    uint64_t started_ns;
} progress;

static void progress_draw(void *arg) {
    const progress *p = arg;
    if (!p->opts->progress) return;
    double s = (double)(ln_now_ns() - p->started_ns) / 1e9;
    if (p->repeat == 0)
        fprintf(stderr, "\r\033[K%s: warm-up, %s  (%.1f s)", p->exp->name, p->variant->what, s);
    else
        fprintf(stderr, "\r\033[K%s: repeat %u of %u, %s  (%.1f s)", p->exp->name, p->repeat,
                p->repeats, p->variant->what, s);
    fflush(stderr);
}

static int is_peer(const exp_variant *v) {
    return v->script != NULL;
}

/* Run variant v once; its figures go to row (NULL: warm-up, dropped).
 * 0 or -1 (the error is recorded). */
static int run_variant(cli_bench_run *run, progress *pg, const exp_variant *v, double *row) {
    const exp_experiment *exp = run->exp;
    pg->variant = v;
    progress_draw(pg);
    if (!is_peer(v)) {
        exp_ctx ctx = {exp, v, run->params, row, "", 0};
        if (v->run(&ctx, v->arg) != 0 || ctx.failed) {
            add_error(run, "%s: %s", v->id, ctx.error[0] ? ctx.error : "failed");
            return -1;
        }
    } else {
        char why[1024] = "";
        cli_peer_tick tick = {progress_draw, pg};
        json_t *obj = cli_peer_run(&run->peer_env, v, exp->params, run->params, run->nparams,
                                   PEER_TIMEOUT_S, &tick, why, sizeof why);
        if (!obj) {
            add_error(run, "%s: %s", v->id, why);
            run->peer_status = CLI_PEER_FAILED;
            return -1;
        }
        for (size_t f = 0; f < run->nfigures; f++) {
            const exp_figure *fig = &exp->figures[f];
            json_t *val = json_object_get(obj, fig->value);
            if (strcmp(fig->variant, v->id) == 0 && json_is_number(val))
                row[f] = json_number_value(val);
        }
        json_decref(obj);
    }
    int rc = 0;
    for (size_t f = 0; row && f < run->nfigures; f++) {
        const exp_figure *fig = &exp->figures[f];
        if (strcmp(fig->variant, v->id) == 0 && isnan(row[f])) {
            add_error(run, "%s: yielded no value \"%s\" for %s", v->id, fig->value, fig->key);
            rc = -1;
        }
    }
    return rc;
}

/* Run every variant of one side (peer or not) once. */
static int run_side(cli_bench_run *run, progress *pg, int peer_side, double *row) {
    int rc = 0;
    for (size_t i = 0; i < EXP_MAX_VARIANTS && run->exp->variants[i].id; i++) {
        const exp_variant *v = &run->exp->variants[i];
        if (is_peer(v) == peer_side && run_variant(run, pg, v, row) != 0) rc = -1;
    }
    return rc;
}

static void setup_peer(cli_bench_run *run, const cli_bench_opts *opts) {
    const exp_peer *peer = &run->exp->peer;
    if (!peer->name) {
        run->peer_status = CLI_PEER_NONE;
        return;
    }
    run->peer_status = CLI_PEER_SKIPPED;
    if (!opts->peers) {
        snprintf(run->peer_reason, sizeof run->peer_reason, "%s",
                 opts->no_peer_reason ? opts->no_peer_reason : "peers disabled");
        return;
    }
    if (cli_peer_env_for(opts->peers, peer, &run->peer_env, run->peer_reason,
                         sizeof run->peer_reason) != 0 ||
        cli_peer_check(&run->peer_env, peer, run->peer_version, sizeof run->peer_version,
                       run->peer_reason, sizeof run->peer_reason) != 0)
        return;
    snprintf(run->node_version, sizeof run->node_version, "%s", opts->peers->node_version);
    cli_script_load(&run->peer_script, run->peer_env.dir, peer->files, EXP_MAX_FILES);
    run->peer_status = CLI_PEER_RAN;
}

int cli_bench_run_experiment(const exp_experiment *exp, const cli_bench_opts *opts,
                             cli_bench_run *run) {
    memset(run, 0, sizeof *run);
    run->exp = exp;
    run->quick = opts->quick;
    run->repeats = opts->repeats ? opts->repeats : opts->quick ? 3 : 5;
    while (run->nparams < EXP_MAX_PARAMS && exp->params[run->nparams].name) {
        const exp_scale *p = &exp->params[run->nparams];
        run->params[run->nparams++] = opts->quick ? p->quick : p->full;
    }
    while (run->nfigures < EXP_MAX_FIGURES && exp->figures[run->nfigures].key) run->nfigures++;
    while (run->ncompares < EXP_MAX_COMPARES && exp->compares[run->ncompares].target)
        run->ncompares++;
    time_t now = time(NULL);
    strftime(run->created_at, sizeof run->created_at, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));

    if (cli_script_load(&run->script, cli_source_dir(), exp->sources, EXP_MAX_FILES) != 0)
        fprintf(stderr,
                "lanes bench: %s: source %s not found; \"script\" left "
                "incomplete (set LANES_SOURCE_DIR)\n",
                exp->name, run->script.missing[0] ? run->script.missing : "?");
    setup_peer(run, opts);
    int with_peer = run->peer_status == CLI_PEER_RAN;

    size_t cells = (size_t)run->repeats * (run->nfigures ? run->nfigures : 1);
    run->values = malloc(cells * sizeof *run->values);
    run->wall_ms = calloc(run->repeats, sizeof *run->wall_ms);
    if (!run->values || !run->wall_ms) {
        add_error(run, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < cells; i++) run->values[i] = NAN;

    char why[1024] = "";
    if (exp->setup && exp->setup(why, sizeof why) != 0) {
        add_error(run, "%s", why[0] ? why : "setup failed");
        if (run->peer_status == CLI_PEER_RAN) {
            run->peer_status = CLI_PEER_SKIPPED;
            snprintf(run->peer_reason, sizeof run->peer_reason,
                     "the experiment's setup failed, so nothing ran; see errors");
        }
        return -1;
    }
    int rc = 0;
    progress pg = {opts, exp, 0, run->repeats, NULL, ln_now_ns()};
    if (!exp->no_warmup && run_side(run, &pg, 0, NULL) != 0) rc = -1;
    for (unsigned r = 0; r < run->repeats; r++) {
        double *row = run->values + (size_t)r * run->nfigures;
        uint64_t t0 = ln_now_ns();
        int peer_first = with_peer && r % 2 == 1;
        pg.repeat = r + 1;
        if (peer_first && run_side(run, &pg, 1, row) != 0) rc = -1;
        if (run_side(run, &pg, 0, row) != 0) rc = -1;
        if (with_peer && !peer_first && run_side(run, &pg, 1, row) != 0) rc = -1;
        run->wall_ms[r] = (double)(ln_now_ns() - t0) / 1e6;
    }
    if (exp->teardown) exp->teardown();
    if (opts->progress)
        fprintf(stderr, "\r\033[K%s: %u repeat%s in %.1f s\n", exp->name, run->repeats,
                run->repeats == 1 ? "" : "s", (double)(ln_now_ns() - pg.started_ns) / 1e9);
    if (run->peer_status == CLI_PEER_FAILED)
        snprintf(run->peer_reason, sizeof run->peer_reason,
                 "at least one peer run failed (see errors)");
    return rc;
}

void cli_bench_run_free(cli_bench_run *run) {
    if (!run) return;
    free(run->values);
    free(run->wall_ms);
    cli_script_free(&run->script);
    cli_script_free(&run->peer_script);
    for (size_t i = 0; i < run->nerrors; i++) free(run->errors[i]);
    free(run->errors);
    memset(run, 0, sizeof *run);
}

/* ------------------------------------------------------------- statistics */

int cli_bench_figure_index(const exp_experiment *exp, const char *key) {
    for (int f = 0; f < EXP_MAX_FIGURES && exp->figures[f].key; f++)
        if (strcmp(exp->figures[f].key, key) == 0) return f;
    return -1;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Stats of the n values of v that are not NaN; v is reordered. */
static cli_stats stats_of(double *v, size_t n) {
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!isnan(v[i])) v[k++] = v[i];
    cli_stats s = {k, NAN, NAN, NAN};
    if (k == 0) return s;
    qsort(v, k, sizeof *v, cmp_double);
    s.min = v[0];
    s.max = v[k - 1];
    s.median = k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2;
    return s;
}

cli_stats cli_bench_figure_stats(const cli_bench_run *run, size_t f) {
    double buf[1024];
    size_t n = run->repeats < 1024 ? run->repeats : 1024;
    for (size_t r = 0; r < n; r++) buf[r] = run->values[r * run->nfigures + f];
    return stats_of(buf, n);
}

/* "target better" ratio of one pair of values. */
static double ratio(const exp_figure *target, double t, double b) {
    return target->better == EXP_LOWER_IS_BETTER ? b / t : t / b;
}

int cli_bench_compare(const cli_bench_run *run, const exp_compare *cmp, cli_ratio *out) {
    int t = cli_bench_figure_index(run->exp, cmp->target);
    int b = cli_bench_figure_index(run->exp, cmp->baseline);
    if (t < 0 || b < 0) return -1;
    cli_stats st = cli_bench_figure_stats(run, (size_t)t);
    cli_stats sb = cli_bench_figure_stats(run, (size_t)b);
    if (st.n == 0 || sb.n == 0) return -1;
    const exp_figure *fig = &run->exp->figures[t];
    double buf[1024];
    size_t n = run->repeats < 1024 ? run->repeats : 1024;
    for (size_t r = 0; r < n; r++)
        buf[r] = ratio(fig, run->values[r * run->nfigures + (size_t)t],
                       run->values[r * run->nfigures + (size_t)b]);
    for (size_t r = 0; r < n; r++)
        if (!isfinite(buf[r])) buf[r] = NAN; /* a zero time: no ratio for that repeat */
    out->of_medians = ratio(fig, st.median, sb.median);
    out->per_repeat = stats_of(buf, n);
    return isfinite(out->of_medians) && out->per_repeat.n > 0 ? 0 : -1;
}
