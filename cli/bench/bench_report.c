/* bench_report.c - results/README.md and the summary table, from the JSON. */
#include "bench_report.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *str(const json_t *o, const char *key) {
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

static double num(const json_t *o, const char *key) {
    const json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

void cli_bench_fmt_value(char *buf, size_t size, double v) {
    double a = fabs(v);
    if (isnan(v))
        snprintf(buf, size, "-");
    else if (a >= 100)
        snprintf(buf, size, "%.0f", v);
    else if (a >= 10)
        snprintf(buf, size, "%.1f", v);
    else if (a >= 1)
        snprintf(buf, size, "%.2f", v);
    else
        snprintf(buf, size, "%.3g", v);
}

static void fmt_ratio(char *buf, size_t size, double r) {
    if (isnan(r))
        snprintf(buf, size, "not measured");
    else
        snprintf(buf, size, r >= 1000 ? "%.0fx" : r >= 10 ? "%.1fx" : "%.2fx", r);
}

/* Text for a table cell: '|' and newlines would break the row. */
static void put_cell(FILE *f, const char *s) {
    for (; *s; s++) {
        if (*s == '|')
            fputs("\\|", f);
        else
            fputc(*s == '\n' ? ' ' : *s, f);
    }
}

/* Plain-words direction of comparison c of a document with summary. */
static void direction(char *buf, size_t size, const json_t *c, const json_t *summary) {
    const char *d = str(c, "direction");
    double ratio = num(c, "ratio");
    /* How far the measured figure is from the bound or target, in % of it:
     * the ratio is bound/measured for lower-is-better figures and
     * measured/bound for higher-is-better ones. */
    int lower = strcmp(str(json_object_get(summary, str(c, "target")), "better"), "higher") != 0;
    double off = (lower ? 1 / ratio - 1 : ratio - 1) * 100;
    /* A target that is a ratio (C >= 3x BullMQ) says which, and how much
     * of it was reached. */
    double need = strcmp(str(c, "kind"), "target") == 0 ? num(c, "publishedRatio") : NAN;
    char needs[32];
    fmt_ratio(needs, sizeof needs, need);
    if (need > 0 && need != 1 && strcmp(d, "target met") == 0)
        snprintf(buf, size, "meets the %s target", needs);
    else if (need > 0 && need != 1 && strcmp(d, "target missed") == 0 && ratio > 0)
        snprintf(buf, size, "MISSES the %s target (%.0f%% of it)", needs, ratio / need * 100);
    else if (strcmp(d, "bound") == 0 && ratio > 0)
        snprintf(buf, size, "%.1f%% %s the bound", fabs(off), off < 0 ? "below" : "above");
    else if (strcmp(d, "target met") == 0)
        snprintf(buf, size, "meets the target");
    else if (strcmp(d, "target missed") == 0 && ratio > 0)
        snprintf(buf, size, "MISSES the target by %.1f%%", fabs(off));
    else if (strcmp(d, "same") == 0)
        snprintf(buf, size, "same direction as published");
    else if (strcmp(d, "opposite") == 0)
        snprintf(buf, size, "OPPOSITE to published");
    else if (strcmp(d, "mixed") == 0)
        snprintf(buf, size, "mixed: repeats disagree");
    else if (strcmp(d, "target better") == 0)
        snprintf(buf, size, "first faster");
    else if (strcmp(d, "baseline better") == 0)
        snprintf(buf, size, "first SLOWER");
    else
        snprintf(buf, size, "%s", d);
}

static void spread(char *buf, size_t size, const json_t *c) {
    const json_t *pr = json_object_get(c, "perRepeat");
    if (!json_is_object(pr)) {
        snprintf(buf, size, "-");
        return;
    }
    char lo[24], hi[24];
    fmt_ratio(lo, sizeof lo, num(pr, "min"));
    fmt_ratio(hi, sizeof hi, num(pr, "max"));
    snprintf(buf, size, "%s - %s", lo, hi);
}

/* "5694 ms" for a figure of the summary. */
static void figure_cell(char *buf, size_t size, const json_t *summary, const char *key) {
    const json_t *s = json_object_get(summary, key);
    if (!s) {
        snprintf(buf, size, "not measured");
        return;
    }
    char v[32];
    cli_bench_fmt_value(v, sizeof v, num(s, "median"));
    snprintf(buf, size, "%s %s", v, str(s, "unit"));
}

static void put_list(FILE *f, const char *heading, const json_t *items) {
    if (json_array_size(items) == 0) return;
    fprintf(f, "**%s**\n\n", heading);
    size_t i;
    const json_t *it;
    json_array_foreach(items, i, it)
        fprintf(f, "- %s\n", json_string_value(it) ? json_string_value(it) : "");
    fputc('\n', f);
}

static void peer_line(FILE *f, const json_t *doc) {
    const json_t *peer = json_object_get(doc, "peer");
    if (!json_is_object(peer)) {
        fputs("No Node.js peer: every series is lanes.\n\n", f);
        return;
    }
    const char *status = str(peer, "status");
    if (strcmp(status, "ran") == 0 || strcmp(status, "failed") == 0)
        fprintf(f, "Peer: %s%s%s on %s%s.\n\n", str(peer, "name"), *str(peer, "version") ? " " : "",
                str(peer, "version"), str(peer, "runtime"),
                strcmp(status, "failed") == 0 ? " (some runs FAILED, see Errors)" : "");
    else
        fprintf(f,
                "**lanes only: the peer (%s) did not run: %s.** The peer's rows "
                "read \"not measured\".\n\n",
                str(peer, "name"), str(peer, "reason"));
}

static void section(FILE *f, const json_t *doc) {
    const json_t *exp = json_object_get(doc, "experiment");
    const json_t *claim = json_object_get(doc, "claim");
    const json_t *method = json_object_get(doc, "method");
    const json_t *summary = json_object_get(doc, "summary");
    const json_t *env = json_object_get(doc, "environment");
    const char *slug = str(doc, "slug");

    fprintf(f, "<a id=\"%s\"></a>\n\n## `%s`: %s\n\n", slug, slug, str(exp, "title"));
    long long repeats = json_integer_value(json_object_get(method, "repeats"));
    fprintf(f,
            "Seed %s. Run %s, %lld repeat%s, %s. Raw data: [%s.json](%s.json); "
            "chart: [%s.svg](%s.svg).\n\n",
            str(exp, "seeds"), str(doc, "createdAt"), repeats, repeats == 1 ? "" : "s",
            json_is_true(json_object_get(exp, "quick"))
                ? "**quick** (smaller workload: checks the pipeline, not the claim)"
                : "full size",
            slug, slug, slug, slug);
    peer_line(f, doc);
    fprintf(f, "> %s\n>\n> -- %s%s%s%s\n\n", str(claim, "quote"), str(claim, "source"),
            *str(claim, "url") ? " (" : "", str(claim, "url"), *str(claim, "url") ? ")" : "");
    if (*str(claim, "translation")) fprintf(f, "In English: %s\n\n", str(claim, "translation"));
    fprintf(f, "**Hypothesis.** %s\n\n", str(method, "hypothesis"));

    fputs("| Comparison (first vs second) | Published | First | Second | Ratio | "
          "Per repeat (min - max) | Direction |\n|---|---|---|---|---|---|---|\n",
          f);
    size_t i;
    const json_t *c;
    json_array_foreach(json_object_get(doc, "comparisons"), i, c) {
        char t[64], b[64], r[32], sp[64], dir[64];
        figure_cell(t, sizeof t, summary, str(c, "target"));
        figure_cell(b, sizeof b, summary, str(c, "baseline"));
        fmt_ratio(r, sizeof r, num(c, "ratio"));
        spread(sp, sizeof sp, c);
        direction(dir, sizeof dir, c, summary);
        fputs("| ", f);
        put_cell(f, str(c, "what"));
        fputs(json_is_true(json_object_get(c, "headline")) ? " (headline) | " : " | ", f);
        put_cell(f, *str(c, "published") ? str(c, "published") : "-");
        fprintf(f, " | %s | %s | %s | %s | %s |\n", t, b, r, sp, dir);
    }
    fputs("\nRatio: how many times faster the first is than the second (second's median "
          "time / first's, or first's median rate / second's), so > 1 means the first was "
          "faster.\n\n",
          f);

    fprintf(f, "<details><summary>Every figure (median, min, max over the repeats)"
               "</summary>\n\n| Figure | Median | Min | Max | Unit |\n|---|---|---|---|---|\n");
    const char *key;
    const json_t *st;
    json_object_foreach((json_t *)summary, key, st) {
        if (!json_is_object(st)) continue;
        char md[32], mn[32], mx[32];
        cli_bench_fmt_value(md, sizeof md, num(st, "median"));
        cli_bench_fmt_value(mn, sizeof mn, num(st, "min"));
        cli_bench_fmt_value(mx, sizeof mx, num(st, "max"));
        fprintf(f, "| %s | %s | %s | %s | %s |\n", key, md, mn, mx, str(st, "unit"));
    }
    fputs("\n</details>\n\n", f);

    put_list(f, "Conditions", json_object_get(method, "conditions"));
    put_list(f, "Limits of the comparison", json_object_get(doc, "limits"));
    put_list(f, "Errors", json_object_get(doc, "errors"));
    fprintf(f, "![%s](%s.svg)\n\nMachine: %s, %s, %lld MB, %s; %s.\n\n", slug, slug,
            str(env, "arch"), str(env, "cpu"),
            (long long)json_integer_value(json_object_get(env, "memMB")), str(env, "os"),
            str(env, "runtime"));
}

static const json_t *headline(const json_t *doc) {
    size_t i;
    const json_t *c;
    json_array_foreach(json_object_get(doc, "comparisons"), i, c) {
        if (json_is_true(json_object_get(c, "headline"))) return c;
    }
    return NULL;
}

static int write_report(FILE *f, json_t *const *docs, size_t n) {
    fputs("# lanes bench: the seed claims, rerun\n\n"
          "Written by `lanes bench` (`make bench` for a full run, `make demo` for a "
          "quick one); do not edit by hand. Every figure below comes from the JSON "
          "file beside this report (`<experiment>.json`, in the schema of seed 001: "
          "each repeat's raw figures, the machine, the exact code that ran and its "
          "SHA-256), and each chart (`<experiment>.svg`) is drawn from the same "
          "file. lanes and the original Node.js library ran in the same invocation, "
          "taking turns within each repeat. Rerun one experiment with "
          "`lanes bench NAME --out results`; `lanes bench --help` lists the options.\n\n"
          "## Summary\n\n"
          "| Experiment | Headline comparison (first vs second) | Published | Ratio | "
          "Per repeat (min - max) | Direction |\n|---|---|---|---|---|---|\n",
          f);
    for (size_t i = 0; i < n; i++) {
        const json_t *c = headline(docs[i]);
        const char *slug = str(docs[i], "slug");
        fprintf(f, "| [`%s`](#%s) | ", slug, slug);
        if (!c) {
            fputs("nothing measured | - | - | - | - |\n", f);
            continue;
        }
        char r[32], sp[64], dir[64];
        fmt_ratio(r, sizeof r, num(c, "ratio"));
        spread(sp, sizeof sp, c);
        direction(dir, sizeof dir, c, json_object_get(docs[i], "summary"));
        put_cell(f, str(c, "what"));
        fputs(" | ", f);
        put_cell(f, *str(c, "published") ? str(c, "published") : "-");
        fprintf(f, " | [%s](%s.json) | %s | %s |\n", r, slug, sp, dir);
    }
    fputc('\n', f);
    for (size_t i = 0; i < n; i++) section(f, docs[i]);
    return ferror(f) ? -1 : 0;
}

int cli_bench_report_write(json_t *const *docs, size_t n, const char *path, char *why,
                           size_t whysize) {
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        snprintf(why, whysize, "cannot write %s: %s", tmp, strerror(errno));
        return -1;
    }
    int rc = write_report(f, docs, n);
    if (fclose(f) != 0 || rc != 0 || rename(tmp, path) != 0) {
        snprintf(why, whysize, "cannot write %s: %s", path, strerror(errno));
        remove(tmp);
        return -1;
    }
    return 0;
}

void cli_bench_print_table(FILE *f, json_t *const *docs, size_t n) {
    fprintf(f, "%-12s %-9s %-19s %-36s %s\n", "EXPERIMENT", "RATIO", "PER REPEAT", "DIRECTION",
            "COMPARISON (first vs second; published)");
    for (size_t i = 0; i < n; i++) {
        const char *slug = str(docs[i], "slug");
        const json_t *peer = json_object_get(docs[i], "peer");
        if (json_is_true(json_object_get(docs[i], "lanesOnly")) && json_is_object(peer))
            fprintf(f, "%-12s lanes only: %s not run (%s)\n", slug, str(peer, "name"),
                    str(peer, "reason"));
        size_t k;
        const json_t *c;
        json_array_foreach(json_object_get(docs[i], "comparisons"), k, c) {
            if (json_is_null(json_object_get(c, "ratio"))) continue;
            char r[32], sp[64], dir[64];
            fmt_ratio(r, sizeof r, num(c, "ratio"));
            spread(sp, sizeof sp, c);
            direction(dir, sizeof dir, c, json_object_get(docs[i], "summary"));
            fprintf(f, "%-12s %-9s %-19s %-36s %s", slug, r, sp, dir, str(c, "what"));
            if (*str(c, "published")) fprintf(f, "; %s", str(c, "published"));
            /* the two medians themselves, e.g. both sides' Redis CPU per job */
            const json_t *sum = json_object_get(docs[i], "summary");
            const json_t *a = json_object_get(sum, str(c, "target"));
            const json_t *b = json_object_get(sum, str(c, "baseline"));
            if (a && b) {
                double va = num(a, "median"), vb = num(b, "median");
                fprintf(f, " [%.*f %s vs %.*f %s]", va >= 100 ? 0 : 2, va, str(a, "unit"),
                        vb >= 100 ? 0 : 2, vb, str(b, "unit"));
            }
            fputc('\n', f);
        }
    }
}
