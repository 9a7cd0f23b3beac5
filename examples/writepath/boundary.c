/* boundary.c - `writepath boundary FILE`: where the response boundary sits in
 * the traces of a file (the original benchmark's 61.7 ms naive vs 10.3 ms
 * async, docs/experiments.md#e3).
 *
 * For every trace with a request span: the boundary is the request span's
 * duration (first header byte to the response sent); 'done' is when the
 * trace's last span ends (the worker's, in async mode), from the same start.
 * Prints JSON: the number of traces, how many continue in another process,
 * median/min/max of both, the trace whose boundary is the median (to draw),
 * and the median duration of each span name with the share of those spans
 * that end before the boundary.
 */
#include "service.h"
#include "spans.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int by_trace(const void *a, const void *b) {
    const wp_rspan *x = a, *y = b;
    int c = strcmp(x->trace_id, y->trace_id);
    return c ? c : x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

static int by_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static json_t *stats(double *v, size_t n) {
    if (n == 0) return json_null();
    qsort(v, n, sizeof *v, by_double);
    double median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    return json_pack("{s:f,s:f,s:f,s:s}", "median", median, "min", v[0], "max", v[n - 1], "unit",
                     "ms");
}

/* Per span name: durations and how many ended before the boundary. */
typedef struct phase {
    const char *name;
    double *ms;
    size_t n, cap, before;
} phase;

static phase *phase_for(phase **ph, size_t *nph, const char *name) {
    for (size_t i = 0; i < *nph; i++)
        if (!strcmp((*ph)[i].name, name)) return &(*ph)[i];
    phase *grown = realloc(*ph, (*nph + 1) * sizeof *grown);
    if (!grown) return NULL;
    *ph = grown;
    phase *p = &grown[(*nph)++];
    memset(p, 0, sizeof *p);
    p->name = name;
    return p;
}

static int add(double **v, size_t *n, size_t *cap, double x) {
    if (*n == *cap) {
        size_t ncap = *cap ? *cap * 2 : 64;
        double *g = realloc(*v, ncap * sizeof *g);
        if (!g) return -1;
        *v = g;
        *cap = ncap;
    }
    (*v)[(*n)++] = x;
    return 0;
}

int wp_boundary_main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: writepath boundary FILE   (OTLP/JSON lines from --trace)\n");
        return 2;
    }
    wp_rspan *spans = NULL;
    size_t n = 0;
    if (wp_spans_load(argv[1], NULL, &spans, &n)) {
        perror(argv[1]);
        return 1;
    }
    qsort(spans, n, sizeof *spans, by_trace);

    double *bound = NULL, *done = NULL;
    size_t nb = 0, capb = 0, nd = 0, capd = 0, crossing = 0;
    phase *ph = NULL;
    size_t nph = 0;
    int oom = 0;
    for (size_t i = 0, j; i < n && !oom; i = j) {
        for (j = i; j < n && !strcmp(spans[j].trace_id, spans[i].trace_id); j++) {
        }
        const wp_rspan *root = wp_spans_root(spans + i, j - i);
        if (!root) continue;
        uint64_t last = root->end_ns;
        int other = 0;
        for (size_t k = i; k < j; k++) {
            if (spans[k].end_ns > last) last = spans[k].end_ns;
            if (strcmp(spans[k].service, root->service)) other = 1;
            if (&spans[k] == root) continue;
            phase *p = phase_for(&ph, &nph, spans[k].name);
            if (!p ||
                add(&p->ms, &p->n, &p->cap, (double)(spans[k].end_ns - spans[k].start_ns) / 1e6))
                oom = 1;
            else if (spans[k].end_ns <= root->end_ns)
                p->before++;
        }
        crossing += (size_t)other;
        if (add(&bound, &nb, &capb, (double)(root->end_ns - root->start_ns) / 1e6) ||
            add(&done, &nd, &capd, (double)(last - root->start_ns) / 1e6))
            oom = 1;
    }

    /* The trace whose boundary is the median one (the original benchmark drew that). */
    const char *median_trace = NULL;
    if (nb && !oom) {
        double *sorted = malloc(nb * sizeof *sorted);
        if (sorted) {
            memcpy(sorted, bound, nb * sizeof *sorted);
            qsort(sorted, nb, sizeof *sorted, by_double);
            double want = sorted[nb / 2];
            free(sorted);
            size_t t = 0;
            for (size_t i = 0, j; i < n && !median_trace; i = j) {
                for (j = i; j < n && !strcmp(spans[j].trace_id, spans[i].trace_id); j++) {
                }
                const wp_rspan *root = wp_spans_root(spans + i, j - i);
                if (root && bound[t++] == want) median_trace = root->trace_id;
            }
        }
    }

    json_t *phases = json_object();
    for (size_t i = 0; i < nph; i++) {
        json_t *s = stats(ph[i].ms, ph[i].n);
        json_object_set_new(s, "count", json_integer((json_int_t)ph[i].n));
        json_object_set_new(s, "before_boundary",
                            json_real(ph[i].n ? (double)ph[i].before / (double)ph[i].n : 0));
        json_object_set_new(phases, ph[i].name, s);
        free(ph[i].ms);
    }
    free(ph);
    json_t *out =
        json_pack("{s:I,s:I,s:o,s:o,s:s?,s:o}", "traces", (json_int_t)nb, "crossing_process",
                  (json_int_t)crossing, "boundary_ms", stats(bound, nb), "done_ms", stats(done, nd),
                  "median_trace", median_trace, "spans", phases);
    char *text = out ? json_dumps(out, JSON_COMPACT | JSON_REAL_PRECISION(6)) : NULL;
    if (text) puts(text);
    free(text);
    json_decref(out);
    free(bound);
    free(done);
    wp_spans_free(spans, n);
    return oom || !text ? 1 : 0;
}
