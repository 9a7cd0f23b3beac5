/* bench_svg.c - the chart of one experiment, drawn from its JSON. */
#include "bench_svg.h"

#include "bench_report.h" /* cli_bench_fmt_value */

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* Layout, in SVG user units (px). */
#define WIDTH 900
#define LABEL_W 250 /* series labels, right-aligned before the plot */
#define VALUE_W 190 /* room right of the plot for "median [min-max]" */
#define PLOT_X LABEL_W
#define PLOT_W (WIDTH - LABEL_W - VALUE_W)
#define ROW_H 26
#define BAR_H 14
#define HEADER_H 92
#define PANEL_TOP 34 /* panel title to first bar */
#define AXIS_H 46    /* ticks, tick labels and the axis label */
#define PANEL_GAP 10
#define FOOTER_H 58

#define COLOR_TARGET "#2b6cb0"
#define COLOR_BASELINE "#c05621"
#define COLOR_REFERENCE "#718096"

/* XML-escaped s. */
static void put_text(FILE *f, const char *s) {
    for (; s && *s; s++) {
        switch (*s) {
        case '&':
            fputs("&amp;", f);
            break;
        case '<':
            fputs("&lt;", f);
            break;
        case '>':
            fputs("&gt;", f);
            break;
        case '"':
            fputs("&quot;", f);
            break;
        default:
            fputc(*s, f);
        }
    }
}

static const char *str_or(const json_t *s) {
    return json_string_value(s) ? json_string_value(s) : "";
}

static const char *en(const json_t *t) {
    return json_string_value(json_object_get(t, "en"));
}
static const char *ko(const json_t *t) {
    return json_string_value(json_object_get(t, "ko"));
}

/* The axis of one panel: linear from 0, or log10 over whole decades. */
typedef struct axis {
    int log;
    double lo, hi;
} axis;

static double nice_step(double range, int ticks) {
    double raw = range / ticks, mag = pow(10, floor(log10(raw)));
    double norm = raw / mag;
    return (norm <= 1 ? 1 : norm <= 2 ? 2 : norm <= 5 ? 5 : 10) * mag;
}

static axis make_axis(double vmin, double vmax) {
    axis a = {0, 0, 1};
    if (vmin > 0 && vmax / vmin > 30) {
        a.log = 1;
        a.lo = pow(10, floor(log10(vmin)));
        a.hi = pow(10, ceil(log10(vmax)));
        if (a.hi <= a.lo) a.hi = a.lo * 10;
    } else if (vmax > 0) {
        double step = nice_step(vmax * 1.05, 5);
        a.hi = ceil(vmax * 1.05 / step) * step;
    }
    return a;
}

static double xpos(const axis *a, double v) {
    double t = a->log
                   ? (log10(v > a->lo ? v : a->lo) - log10(a->lo)) / (log10(a->hi) - log10(a->lo))
                   : (v - a->lo) / (a->hi - a->lo);
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    return PLOT_X + t * PLOT_W;
}

/* The x axis at y: ticks, their values, and "<kind> (<unit>)" below. */
static void draw_axis(FILE *f, const axis *a, double y, const char *kind, const char *unit) {
    fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#444\"/>\n", PLOT_X, y,
            PLOT_X + PLOT_W, y);
    char label[64];
    if (a->log) {
        for (double v = a->lo; v <= a->hi * 1.0001; v *= 10) {
            double x = xpos(a, v);
            cli_bench_fmt_value(label, sizeof label, v);
            fprintf(f,
                    "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                    "stroke=\"#444\"/>\n<text x=\"%.1f\" y=\"%.1f\" "
                    "text-anchor=\"middle\" class=\"tick\">%s</text>\n",
                    x, y, x, y + 5, x, y + 17, label);
        }
    } else {
        double step = nice_step(a->hi - a->lo, 5);
        for (double v = a->lo; v <= a->hi + step / 1000; v += step) {
            double x = xpos(a, v);
            cli_bench_fmt_value(label, sizeof label, v);
            fprintf(f,
                    "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                    "stroke=\"#444\"/>\n<text x=\"%.1f\" y=\"%.1f\" "
                    "text-anchor=\"middle\" class=\"tick\">%s</text>\n",
                    x, y, x, y + 5, x, y + 17, label);
        }
    }
    fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"middle\" class=\"axis\">",
            PLOT_X + PLOT_W / 2, y + 36);
    put_text(f, kind);
    fputs(" (", f);
    put_text(f, unit);
    fputs(a->log ? ", log scale)</text>\n" : ")</text>\n", f);
}

static const char *role_color(const json_t *role) {
    const char *r = json_string_value(role);
    return !r                           ? COLOR_REFERENCE
           : strcmp(r, "target") == 0   ? COLOR_TARGET
           : strcmp(r, "baseline") == 0 ? COLOR_BASELINE
                                        : COLOR_REFERENCE;
}

static const json_t *find_series(const json_t *series, const char *id) {
    size_t i;
    const json_t *s;
    json_array_foreach(series, i, s) {
        const char *sid = json_string_value(json_object_get(s, "id"));
        if (sid && strcmp(sid, id) == 0) return s;
    }
    return NULL;
}

/* One series' row at row_y: its label, a bar to the median, the median
 * marked, a min-max whisker, and the numbers at the right. */
static void draw_row(FILE *f, const axis *a, double row_y, const char *label, const char *color,
                     const json_t *stats, const char *unit) {
    double med = json_number_value(json_object_get(stats, "median"));
    double mn = json_number_value(json_object_get(stats, "min"));
    double mx = json_number_value(json_object_get(stats, "max"));
    double cy = row_y + BAR_H / 2.0;
    double x0 = xpos(a, a->lo), xm = xpos(a, med), xl = xpos(a, mn), xh = xpos(a, mx);

    fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" class=\"label\">", PLOT_X - 8,
            cy + 4);
    put_text(f, label);
    fputs("</text>\n", f);
    fprintf(f,
            "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" fill=\"%s\" "
            "fill-opacity=\"0.35\"/>\n",
            x0, row_y, xm > x0 ? xm - x0 : 0, BAR_H, color);
    /* whisker: the min-max line and its two end caps */
    fprintf(f,
            "<path d=\"M%.1f %.1fH%.1fM%.1f %.1fV%.1fM%.1f %.1fV%.1f\" stroke=\"#222\" "
            "fill=\"none\"/>\n",
            xl, cy, xh, xl, cy - 4, cy + 4, xh, cy - 4, cy + 4);
    fprintf(f,
            "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
            "stroke-width=\"3\"/>\n",
            xm, row_y - 2, xm, row_y + BAR_H + 2, color);
    char vm[32], vl[32], vh[32];
    cli_bench_fmt_value(vm, sizeof vm, med);
    cli_bench_fmt_value(vl, sizeof vl, mn);
    cli_bench_fmt_value(vh, sizeof vh, mx);
    fprintf(f, "<text x=\"%d\" y=\"%.1f\" class=\"value\">%s [%s-%s] ", PLOT_X + PLOT_W + 8, cy + 4,
            vm, vl, vh);
    put_text(f, unit);
    fputs("</text>\n", f);
}

/* One panel at y: title, a row per series, the axis. Returns its height. */
static double draw_panel(FILE *f, const json_t *panel, const json_t *series, const json_t *summary,
                         double y) {
    const json_t *keys = json_object_get(panel, "keys");
    const char *unit = json_string_value(json_object_get(panel, "unit"));
    const json_t *title = json_object_get(panel, "title");
    double vmin = INFINITY, vmax = 0;
    const char *id;
    const json_t *fig;
    json_object_foreach((json_t *)keys, id, fig) {
        const json_t *st = json_object_get(summary, json_string_value(fig));
        double mn = json_number_value(json_object_get(st, "min"));
        double mx = json_number_value(json_object_get(st, "max"));
        vmin = mn > 0 && mn < vmin ? mn : vmin;
        vmax = mx > vmax ? mx : vmax;
    }
    axis a = make_axis(vmin, vmax);

    fprintf(f, "<text x=\"16\" y=\"%.1f\" class=\"panel\">", y + 18);
    put_text(f, en(title));
    fputs(" <tspan class=\"ko\">", f);
    put_text(f, ko(title));
    fputs("</tspan></text>\n", f);
    fprintf(f, "<text x=\"%d\" y=\"%.1f\" class=\"note\">%s is better</text>\n", WIDTH - 16, y + 18,
            strcmp(str_or(json_object_get(panel, "better")), "higher") == 0 ? "higher" : "lower");

    double row_y = y + PANEL_TOP;
    json_object_foreach((json_t *)keys, id, fig) {
        const json_t *se = find_series(series, id);
        draw_row(f, &a, row_y, se ? en(json_object_get(se, "label")) : id,
                 role_color(se ? json_object_get(se, "role") : NULL),
                 json_object_get(summary, json_string_value(fig)), unit);
        row_y += ROW_H;
    }
    draw_axis(f, &a, row_y + 2, str_or(json_object_get(panel, "kind")), unit);
    return (row_y - y) + AXIS_H;
}

static int write_svg(FILE *f, const json_t *doc) {
    const json_t *chart = json_object_get(doc, "chart");
    const json_t *series = json_object_get(chart, "series");
    const json_t *panels = json_object_get(chart, "panels");
    const json_t *summary = json_object_get(doc, "summary");
    const json_t *env = json_object_get(doc, "environment");
    const json_t *method = json_object_get(doc, "method");

    double height = HEADER_H + FOOTER_H;
    size_t i;
    const json_t *panel;
    json_array_foreach(panels, i, panel) {
        size_t rows = json_object_size(json_object_get(panel, "keys"));
        height += PANEL_TOP + ROW_H * (double)rows + AXIS_H + PANEL_GAP;
    }

    fprintf(f,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%.0f\" "
            "viewBox=\"0 0 %d %.0f\" font-family=\"sans-serif\">\n",
            WIDTH, height, WIDTH, height);
    fputs("<style>.title{font-size:18px;font-weight:bold}.ko{font-weight:normal;fill:#555}"
          ".panel{font-size:14px;font-weight:bold}.label,.value{font-size:12px}"
          ".tick{font-size:11px;fill:#333}.axis{font-size:12px;fill:#333}"
          ".note{font-size:11px;fill:#555;text-anchor:end}.foot{font-size:11px;fill:#555}"
          "</style>\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
          f);
    fputs("<text x=\"16\" y=\"28\" class=\"title\">", f);
    put_text(f, en(json_object_get(chart, "title")));
    fputs("</text>\n<text x=\"16\" y=\"48\" class=\"panel ko\">", f);
    put_text(f, ko(json_object_get(chart, "title")));
    long long repeats = json_integer_value(json_object_get(method, "repeats"));
    fprintf(f,
            "</text>\n<text x=\"16\" y=\"68\" class=\"foot\">Bar and thick mark: median "
            "of %lld repeat%s; whisker: min-max; right: median [min-max].</text>\n",
            repeats, repeats == 1 ? "" : "s");
    /* With a Node.js peer the roles are the two libraries; without one,
     * both series are lanes and the roles are the claim's own. */
    int has_peer = json_is_object(json_object_get(doc, "peer"));
    const struct {
        const char *role, *color, *words;
    } legend[] = {{"target", COLOR_TARGET, has_peer ? "lanes" : "target"},
                  {"baseline", COLOR_BASELINE, has_peer ? "original Node.js library" : "baseline"},
                  {"reference", COLOR_REFERENCE, "computed from the workload"}};
    double lx = 16;
    for (size_t k = 0; k < sizeof legend / sizeof legend[0]; k++) {
        int present = 0;
        const json_t *se;
        json_array_foreach(series, i, se) present |=
            strcmp(str_or(json_object_get(se, "role")), legend[k].role) == 0;
        if (!present) continue;
        fprintf(f,
                "<rect x=\"%.0f\" y=\"76\" width=\"12\" height=\"10\" fill=\"%s\" "
                "fill-opacity=\"0.6\"/><text x=\"%.0f\" y=\"85\" class=\"foot\">%s"
                "</text>\n",
                lx, legend[k].color, lx + 16, legend[k].words);
        lx += 16 + 7.0 * (double)strlen(legend[k].words) + 24;
    }

    double y = HEADER_H;
    json_array_foreach(panels, i, panel) {
        y += draw_panel(f, panel, series, summary, y) + PANEL_GAP;
    }

    fprintf(f, "<text x=\"16\" y=\"%.1f\" class=\"foot\">", y + 18);
    put_text(f, json_string_value(json_object_get(env, "cpu")));
    fputs(", ", f);
    put_text(f, json_string_value(json_object_get(env, "os")));
    fputs("; ", f);
    put_text(f, json_string_value(json_object_get(env, "runtime")));
    fprintf(f, "</text>\n<text x=\"16\" y=\"%.1f\" class=\"foot\">", y + 36);
    put_text(f, json_string_value(json_object_get(doc, "createdAt")));
    if (json_is_true(json_object_get(json_object_get(doc, "experiment"), "quick")))
        fputs(", quick run (smaller workload)", f);
    if (json_is_true(json_object_get(doc, "lanesOnly")) && has_peer) {
        fputs(", lanes only: the peer did not run (", f);
        put_text(f, json_string_value(json_object_get(json_object_get(doc, "peer"), "reason")));
        fputs(")", f);
    }
    fputs("</text>\n</svg>\n", f);
    return ferror(f) ? -1 : 0;
}

int cli_bench_svg_write(const json_t *doc, const char *path, char *why, size_t whysize) {
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        snprintf(why, whysize, "cannot write %s: %s", tmp, strerror(errno));
        return -1;
    }
    int rc = write_svg(f, doc);
    if (fclose(f) != 0 || rc != 0 || rename(tmp, path) != 0) {
        snprintf(why, whysize, "cannot write %s: %s", path, strerror(errno));
        remove(tmp);
        return -1;
    }
    return 0;
}
