/* waterfall.c - `writepath waterfall FILE TRACE_ID > out.svg`: one trace as
 * the waterfall of the original benchmark (docs/experiments.md#e3): one row
 * per span in start order, indented by depth, bars coloured by process
 * (service or worker), and the response boundary (the end of the request
 * span) as a dashed line. */
#include "service.h"
#include "spans.h"
#include "trace.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

enum { WIDTH = 980, LABEL_W = 270, RIGHT_PAD = 90, ROW_H = 22, TOP = 74, BOTTOM = 44 };

static void xml_text(FILE *out, const char *s) {
    for (; *s; s++) {
        switch (*s) {
        case '&':
            fputs("&amp;", out);
            break;
        case '<':
            fputs("&lt;", out);
            break;
        case '>':
            fputs("&gt;", out);
            break;
        case '"':
            fputs("&quot;", out);
            break;
        default:
            fputc(*s, out);
        }
    }
}

static int depth_of(const wp_rspan *spans, size_t n, size_t i) {
    int depth = 0;
    const char *parent = spans[i].parent_id;
    while (*parent && depth < 16) {
        size_t j = 0;
        while (j < n && strcmp(spans[j].span_id, parent)) j++;
        if (j == n) break;
        depth++;
        parent = spans[j].parent_id;
    }
    return depth;
}

/* A tick step of 1, 2 or 5 times a power of ten giving about 8 ticks. */
static double tick_step(double span_ms) {
    double raw = span_ms / 8, p = pow(10, floor(log10(raw > 0 ? raw : 1)));
    return raw <= p ? p : raw <= 2 * p ? 2 * p : raw <= 5 * p ? 5 * p : 10 * p;
}

static const char *colour(const wp_rspan *s, const char *root_service) {
    if (s->error) return "#d62728";
    return strcmp(s->service, root_service) == 0 ? "#4c78a8" : "#54a24b";
}

/* A duration for a label: microseconds below 0.1 ms, else ms. */
static void print_duration(FILE *out, double ms) {
    if (ms < 0.1)
        fprintf(out, "%.0f &#181;s", ms * 1000);
    else
        fprintf(out, "%.2f ms", ms);
}

static void draw(FILE *out, const wp_rspan *spans, size_t n, const wp_rspan *root) {
    uint64_t t0 = root->start_ns, t1 = root->end_ns;
    for (size_t i = 0; i < n; i++) {
        if (spans[i].start_ns < t0) t0 = spans[i].start_ns;
        if (spans[i].end_ns > t1) t1 = spans[i].end_ns;
    }
    double total_ms = (double)(t1 - t0) / 1e6;
    if (total_ms <= 0) total_ms = 1e-3;
    double chart_w = WIDTH - LABEL_W - RIGHT_PAD, px_per_ms = chart_w / total_ms;
    int height = TOP + (int)n * ROW_H + BOTTOM;
    double boundary_ms = (double)(root->end_ns - t0) / 1e6;
    double boundary_x = LABEL_W + boundary_ms * px_per_ms;

    fprintf(out,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
            "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n"
            "<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n",
            WIDTH, height, WIDTH, height);
    fprintf(out, "<text x=\"12\" y=\"22\" font-size=\"15\" font-weight=\"bold\">");
    xml_text(out, root->name);
    fprintf(out, " &#8212; response sent at %.1f ms, last span ends at %.1f ms</text>\n",
            boundary_ms, total_ms);
    fprintf(out, "<text x=\"12\" y=\"40\" fill=\"#555\">trace %s</text>\n", root->trace_id);

    /* Time axis with grid lines. */
    double step = tick_step(total_ms);
    for (double t = 0; t <= total_ms + 1e-9; t += step) {
        double x = LABEL_W + t * px_per_ms;
        fprintf(out,
                "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#e5e5e5\"/>\n"
                "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" fill=\"#555\">%g ms</text>\n",
                x, TOP - 8, x, TOP + (int)n * ROW_H, x, TOP - 12, t);
    }

    for (size_t i = 0; i < n; i++) {
        const wp_rspan *s = &spans[i];
        int y = TOP + (int)i * ROW_H;
        double x = LABEL_W + (double)(s->start_ns - t0) / 1e6 * px_per_ms;
        double ms = (double)(s->end_ns - s->start_ns) / 1e6;
        double w = ms * px_per_ms < 1.5 ? 1.5 : ms * px_per_ms;
        fprintf(out, "<text x=\"%d\" y=\"%d\">", 12 + 14 * depth_of(spans, n, i), y + 15);
        xml_text(out, s->name);
        fprintf(out,
                "</text>\n<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" "
                "rx=\"2\" fill=\"%s\"><title>",
                x, y + 4, w, ROW_H - 8, colour(s, root->service));
        xml_text(out, s->service);
        fprintf(out, ": ");
        xml_text(out, s->name);
        fprintf(out, " %.3f ms</title></rect>\n", ms);
        fprintf(out, "<text x=\"%.1f\" y=\"%d\" fill=\"#333\">", x + w + 4, y + 15);
        print_duration(out, ms);
        fprintf(out, "</text>\n");
    }

    /* The label goes right of the line, or left of it near the right edge. */
    int left = boundary_x > WIDTH - 170;
    fprintf(out,
            "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#000\" "
            "stroke-width=\"1.5\" stroke-dasharray=\"6,4\"/>\n"
            "<text x=\"%.1f\" y=\"%d\" text-anchor=\"%s\" font-weight=\"bold\">"
            "response sent %.1f ms</text>\n",
            boundary_x, TOP - 6, boundary_x, TOP + (int)n * ROW_H + 4,
            left ? boundary_x - 4 : boundary_x + 4, TOP + (int)n * ROW_H + 18,
            left ? "end" : "start", boundary_ms);

    int ly = height - 12, other = 0;
    for (size_t i = 0; i < n; i++) other |= strcmp(spans[i].service, root->service) != 0;
    fprintf(out,
            "<rect x=\"12\" y=\"%d\" width=\"12\" height=\"12\" fill=\"#4c78a8\"/>"
            "<text x=\"30\" y=\"%d\">%s (request path)</text>\n",
            ly - 10, ly, root->service);
    if (other)
        fprintf(out,
                "<rect x=\"250\" y=\"%d\" width=\"12\" height=\"12\" fill=\"#54a24b\"/>"
                "<text x=\"268\" y=\"%d\">other process (queue worker)</text>\n",
                ly - 10, ly);
    fprintf(out, "</svg>\n");
}

int wp_waterfall_main(int argc, char **argv) {
    if (argc != 3 || strlen(argv[2]) != 32) {
        fprintf(stderr, "usage: writepath waterfall FILE TRACE_ID > out.svg\n"
                        "  FILE: OTLP/JSON lines (serve/worker --trace); TRACE_ID: 32 hex\n");
        return 2;
    }
    wp_rspan *spans = NULL;
    size_t n = 0;
    if (wp_spans_load(argv[1], argv[2], &spans, &n)) {
        perror(argv[1]);
        return 1;
    }
    const wp_rspan *root = wp_spans_root(spans, n);
    if (!root) {
        fprintf(stderr, "writepath waterfall: no request span of trace %s in %s\n", argv[2],
                argv[1]);
        wp_spans_free(spans, n);
        return 1;
    }
    draw(stdout, spans, n, root);
    wp_spans_free(spans, n);
    return fflush(stdout) == 0 ? 0 : 1;
}
