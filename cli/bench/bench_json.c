/* bench_json.c - build and write the results JSON of one experiment. */
#include "bench_json.h"

#include <lanes.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

double cli_bench_round6(double x) {
    return round(x * 1e6) / 1e6;
}

static json_t *text(exp_text t) {
    return json_pack("{s:s, s:s}", "ko", t.ko ? t.ko : t.en, "en", t.en);
}

static json_t *str_or_null(const char *s) {
    return s ? json_string(s) : json_null();
}

static const char *better_name(exp_better b) {
    return b == EXP_HIGHER_IS_BETTER ? "higher" : "lower";
}

static const char *kind_name(exp_cmp_kind k) {
    switch (k) {
    case EXP_CMP_CLAIM:
        return "claim";
    case EXP_CMP_COUNTERPART:
        return "counterpart";
    case EXP_CMP_VERSUS:
        return "versus";
    case EXP_CMP_BOUND:
        return "bound";
    case EXP_CMP_TARGET:
        return "target";
    }
    return "unknown";
}

static const char *peer_status_name(cli_peer_status s) {
    switch (s) {
    case CLI_PEER_RAN:
        return "ran";
    case CLI_PEER_FAILED:
        return "failed";
    case CLI_PEER_SKIPPED:
        return "skipped";
    case CLI_PEER_NONE:
        break;
    }
    return "none";
}

static int measured(const cli_bench_run *run, const char *key) {
    int f = cli_bench_figure_index(run->exp, key);
    return f >= 0 && cli_bench_figure_stats(run, (size_t)f).n > 0;
}

static json_t *method(const cli_bench_run *run) {
    const exp_experiment *exp = run->exp;
    json_t *conds = json_array();
    for (size_t i = 0; i < EXP_MAX_TEXTS && exp->conditions[i]; i++)
        json_array_append_new(conds, json_string(exp->conditions[i]));
    char line[1024];
    int n = snprintf(line, sizeof line, "Scale:");
    for (size_t i = 0; i < run->nparams && n > 0 && (size_t)n < sizeof line; i++)
        n += snprintf(line + n, sizeof line - (size_t)n, "%s %s = %ld", i ? "," : "",
                      exp->params[i].name, run->params[i]);
    if (n > 0 && (size_t)n < sizeof line)
        snprintf(line + n, sizeof line - (size_t)n, "%s",
                 run->quick ? " (--quick: smaller than the claim's workload, so the "
                              "ratios only check the pipeline, not the claim)."
                            : " (full run).");
    json_array_append_new(conds, json_string(line));
    snprintf(line, sizeof line,
             "%u repeat%s; in each, every variant runs once and lanes and the peer "
             "take turns going first; %s",
             run->repeats, run->repeats == 1 ? "" : "s",
             exp->no_warmup ? "no untimed warm-up run: each run warms up what it needs."
                            : "the lanes variants ran once untimed before the repeats.");
    json_array_append_new(conds, json_string(line));
    if (run->script.missing[0]) {
        snprintf(line, sizeof line,
                 "The lanes source %.800s was not found, so \"script\" holds only what "
                 "could be read (set LANES_SOURCE_DIR).",
                 run->script.missing);
        json_array_append_new(conds, json_string(line));
    }
    if (run->peer_status == CLI_PEER_SKIPPED) {
        snprintf(line, sizeof line, "Peer %s not run: %s. Only lanes was measured.", exp->peer.name,
                 run->peer_reason);
        json_array_append_new(conds, json_string(line));
    }
    return json_pack("{s:s, s:o, s:I}", "hypothesis", exp->hypothesis, "conditions", conds,
                     "repeats", (json_int_t)run->repeats);
}

static json_t *runs(const cli_bench_run *run) {
    json_t *arr = json_array();
    for (unsigned r = 0; r < run->repeats; r++) {
        json_t *o = json_pack("{s:I}", "run", (json_int_t)r + 1);
        for (size_t f = 0; f < run->nfigures; f++) {
            double v = run->values[(size_t)r * run->nfigures + f];
            if (!isnan(v)) json_object_set_new(o, run->exp->figures[f].key, json_real(v));
        }
        json_object_set_new(o, "wallMs", json_real(run->wall_ms[r]));
        json_array_append_new(arr, o);
    }
    return arr;
}

/* {median, min, max}, rounded like the base schema's summary. */
static json_t *stats_json(cli_stats s) {
    return json_pack("{s:f, s:f, s:f}", "median", cli_bench_round6(s.median), "min",
                     cli_bench_round6(s.min), "max", cli_bench_round6(s.max));
}

/* One comparison. The first one measured is the headline: it sets
 * *headline_taken and *speedup. */
static json_t *comparison(const cli_bench_run *run, const exp_compare *c, int *headline_taken,
                          double *speedup) {
    cli_ratio r;
    int ok = cli_bench_compare(run, c, &r) == 0;
    json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:o, s:o}", "kind", kind_name(c->kind), "what",
                          c->what, "target", c->target, "baseline", c->baseline, "published",
                          str_or_null(c->published), "publishedRatio",
                          c->published_ratio > 0 ? json_real(cli_bench_round6(c->published_ratio))
                                                 : json_null());
    const char *direction = "not measured";
    if (ok) {
        int mixed = r.per_repeat.min < 1 && r.per_repeat.max > 1;
        if (c->kind == EXP_CMP_BOUND)
            direction = "bound";
        else if (c->kind == EXP_CMP_TARGET)
            direction = r.of_medians >= (c->published_ratio > 0 ? c->published_ratio : 1)
                            ? "target met"
                            : "target missed";
        else if (mixed)
            direction = "mixed";
        else if (c->published_ratio > 0)
            direction = (c->published_ratio > 1) == (r.of_medians > 1) ? "same" : "opposite";
        else
            direction = r.of_medians > 1 ? "target better" : "baseline better";
        json_object_set_new(o, "ratio", json_real(cli_bench_round6(r.of_medians)));
        json_t *per_repeat = stats_json(r.per_repeat);
        json_object_set_new(per_repeat, "n", json_integer((json_int_t)r.per_repeat.n));
        json_object_set_new(o, "perRepeat", per_repeat);
    } else {
        json_object_set_new(o, "ratio", json_null());
        json_object_set_new(o, "perRepeat", json_null());
    }
    json_object_set_new(o, "direction", json_string(direction));
    json_object_set_new(o, "headline", json_boolean(ok && !*headline_taken));
    if (ok && !*headline_taken) {
        *headline_taken = 1;
        *speedup = r.of_medians;
    }
    return o;
}

static json_t *summary(const cli_bench_run *run, json_t **comparisons) {
    json_t *sum = json_object();
    for (size_t f = 0; f < run->nfigures; f++) {
        cli_stats s = cli_bench_figure_stats(run, f);
        if (s.n == 0) continue;
        json_t *o = stats_json(s);
        json_object_set_new(o, "unit", json_string(run->exp->figures[f].unit));
        json_object_set_new(o, "better", json_string(better_name(run->exp->figures[f].better)));
        json_object_set_new(sum, run->exp->figures[f].key, o);
    }
    *comparisons = json_array();
    int taken = 0;
    double speedup = NAN;
    for (size_t i = 0; i < run->ncompares; i++)
        json_array_append_new(*comparisons,
                              comparison(run, &run->exp->compares[i], &taken, &speedup));
    json_object_set_new(sum, "speedup", taken ? json_real(cli_bench_round6(speedup)) : json_null());
    return sum;
}

/* The chart declaration, keeping only series and keys that were measured
 * so a reader can draw it from this file alone. */
static json_t *chart(const cli_bench_run *run) {
    const exp_experiment *exp = run->exp;
    json_t *panels = json_array();
    int used[EXP_MAX_SERIES] = {0};
    for (size_t p = 0; p < EXP_MAX_PANELS && exp->chart.panels[p].unit; p++) {
        const exp_panel *pn = &exp->chart.panels[p];
        json_t *keys = json_object();
        for (size_t k = 0; k < EXP_MAX_SERIES && pn->keys[k].series; k++) {
            if (!measured(run, pn->keys[k].figure)) continue;
            json_object_set_new(keys, pn->keys[k].series, json_string(pn->keys[k].figure));
            for (size_t s = 0; s < EXP_MAX_SERIES && exp->chart.series[s].id; s++)
                if (strcmp(exp->chart.series[s].id, pn->keys[k].series) == 0) used[s] = 1;
        }
        if (json_object_size(keys) == 0) {
            json_decref(keys);
            continue;
        }
        json_array_append_new(panels, json_pack("{s:o, s:s, s:s, s:s, s:o}", "title",
                                                text(pn->title), "unit", pn->unit, "kind", pn->kind,
                                                "better", better_name(pn->better), "keys", keys));
    }
    json_t *series = json_array();
    for (size_t s = 0; s < EXP_MAX_SERIES && exp->chart.series[s].id; s++) {
        const exp_series *se = &exp->chart.series[s];
        if (used[s])
            json_array_append_new(series,
                                  json_pack("{s:s, s:s, s:o, s:o}", "id", se->id, "role", se->role,
                                            "label", text(se->label), "short", text(se->shortl)));
    }
    return json_pack("{s:o, s:o, s:o}", "title", text(exp->chart.title), "series", series, "panels",
                     panels);
}

static json_t *peer(const cli_bench_run *run) {
    const exp_peer *p = &run->exp->peer;
    if (run->peer_status == CLI_PEER_NONE) return json_null();
    json_t *files = json_array();
    for (size_t i = 0; i < EXP_MAX_FILES && p->files[i]; i++)
        json_array_append_new(files, json_string(p->files[i]));
    int ran = run->peer_status == CLI_PEER_RAN || run->peer_status == CLI_PEER_FAILED;
    char runtime[128] = "";
    if (ran) snprintf(runtime, sizeof runtime, "Node.js %s", run->node_version);
    return json_pack("{s:s, s:s, s:o, s:o, s:s, s:o, s:s, s:o, s:s, s:s}", "name", p->name, "repo",
                     p->repo, "package", str_or_null(p->package), "version",
                     str_or_null(run->peer_version[0] ? run->peer_version : p->version), "status",
                     peer_status_name(run->peer_status), "reason",
                     run->peer_reason[0] ? json_string(run->peer_reason) : json_null(), "runtime",
                     runtime, "scripts", files, "script",
                     ran && run->peer_script.text ? run->peer_script.text : "", "scriptSha256",
                     ran ? run->peer_script.sha256 : "");
}

static json_t *environment(const cli_bench_run *run, const cli_bench_env *env) {
    char runtime[512];
    int n = snprintf(runtime, sizeof runtime, "C11 (%s) + lanes %s", env->compiler,
                     ln_version_string());
    int ran = run->peer_status == CLI_PEER_RAN || run->peer_status == CLI_PEER_FAILED;
    if (ran && n > 0 && (size_t)n < sizeof runtime) {
        if (run->exp->peer.package)
            snprintf(runtime + n, sizeof runtime - (size_t)n, "; Node.js %s + %s %s",
                     run->node_version, run->exp->peer.package, run->peer_version);
        else
            snprintf(runtime + n, sizeof runtime - (size_t)n, "; Node.js %s (%s)",
                     run->node_version, run->exp->peer.name);
    }
    return json_pack("{s:s, s:s, s:I, s:s, s:s}", "arch", env->arch, "cpu", env->cpu, "memMB",
                     (json_int_t)env->mem_mb, "os", env->os, "runtime", runtime);
}

/* obj[key] = value, stealing value; a NULL value (a failed json_pack or
 * allocation) or a NULL obj clears *ok. */
static void put(json_t *obj, const char *key, json_t *value, int *ok) {
    if (!obj || json_object_set_new(obj, key, value) != 0) *ok = 0;
}

json_t *cli_bench_json(const cli_bench_run *run, const cli_bench_env *env) {
    const exp_experiment *exp = run->exp;
    if (!run->values || !run->wall_ms) return NULL;
    json_t *numbers = json_array(), *limits = json_array(), *errors = json_array();
    json_t *params = json_object();
    for (size_t i = 0; i < exp->claim.nnumbers && i < EXP_MAX_NUMBERS; i++)
        json_array_append_new(numbers, json_real(exp->claim.numbers[i]));
    for (size_t i = 0; i < EXP_MAX_TEXTS && exp->limits[i]; i++)
        json_array_append_new(limits, json_string(exp->limits[i]));
    for (size_t i = 0; i < run->nerrors; i++)
        json_array_append_new(errors, json_string(run->errors[i]));
    for (size_t i = 0; i < run->nparams; i++)
        json_object_set_new(params, exp->params[i].name, json_integer(run->params[i]));

    json_t *comparisons = NULL;
    json_t *sum = summary(run, &comparisons);
    json_t *claim = json_pack("{s:s, s:s, s:o}", "quote", exp->claim.quote, "url",
                              exp->claim.url ? exp->claim.url : "", "numbers", numbers);
    if (claim && exp->claim.source)
        json_object_set_new(claim, "source", json_string(exp->claim.source));
    if (claim && exp->claim.translation)
        json_object_set_new(claim, "translation", json_string(exp->claim.translation));

    json_t *doc = json_object();
    int ok = doc != NULL;
    put(doc, "schemaVersion", json_integer(1), &ok);
    put(doc, "slug", json_string(exp->name), &ok);
    put(doc, "tool",
        json_pack("{s:s, s:s, s:s}", "name", "lanes", "repo", "lanes", "version",
                  ln_version_string()),
        &ok);
    put(doc, "environment", environment(run, env), &ok);
    put(doc, "method", method(run), &ok);
    put(doc, "script", json_string(run->script.text ? run->script.text : ""), &ok);
    put(doc, "scriptSha256", json_string(run->script.sha256), &ok);
    put(doc, "runs", runs(run), &ok);
    put(doc, "summary", sum, &ok);
    put(doc, "chart", chart(run), &ok);
    put(doc, "createdAt", json_string(run->created_at), &ok);
    put(doc, "claim", claim, &ok);
    put(doc, "experiment",
        json_pack("{s:s, s:s, s:s, s:b, s:o}", "name", exp->name, "title", exp->title, "seeds",
                  exp->seeds, "quick", run->quick, "params", params),
        &ok);
    put(doc, "peer", peer(run), &ok);
    put(doc, "lanesOnly",
        json_boolean(run->peer_status == CLI_PEER_SKIPPED || run->peer_status == CLI_PEER_NONE),
        &ok);
    put(doc, "comparisons", comparisons, &ok);
    put(doc, "limits", limits, &ok);
    put(doc, "errors", errors, &ok);
    if (!ok) {
        json_decref(doc);
        return NULL;
    }
    return doc;
}

int cli_bench_json_write(const json_t *doc, const char *path, char *why, size_t whysize) {
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    if (json_dump_file(doc, tmp, JSON_INDENT(2) | JSON_REAL_PRECISION(12)) != 0) {
        snprintf(why, whysize, "cannot write %s: %s", tmp, strerror(errno));
        remove(tmp);
        return -1;
    }
    if (rename(tmp, path) != 0) {
        snprintf(why, whysize, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
        remove(tmp);
        return -1;
    }
    return 0;
}
