/* spans.c - read OTLP/JSON span lines back (see spans.h). */
#include "spans.h"

#include "trace.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void copy_hex(char *dst, size_t size, json_t *v) {
    const char *s = json_string_value(v);
    snprintf(dst, size, "%s", s ? s : "");
}

static const char *str_or(const char *s, const char *fallback) {
    return s ? s : fallback;
}

static uint64_t u64(json_t *v) {
    return json_is_string(v) ? strtoull(json_string_value(v), NULL, 10)
                             : (uint64_t)json_integer_value(v);
}

/* The resource's service.name, or "?" (static or owned by res). */
static const char *service_name(json_t *res) {
    json_t *attrs = json_object_get(json_object_get(res, "resource"), "attributes");
    size_t i;
    json_t *a;
    json_array_foreach(attrs, i, a) {
        if (!strcmp(str_or(json_string_value(json_object_get(a, "key")), ""), "service.name")) {
            const char *s =
                json_string_value(json_object_get(json_object_get(a, "value"), "stringValue"));
            if (s) return s;
        }
    }
    return "?";
}

static int push_span(wp_rspan **arr, size_t *n, size_t *cap, json_t *sp, const char *service) {
    if (*n == *cap) {
        size_t ncap = *cap ? *cap * 2 : 64;
        wp_rspan *grown = realloc(*arr, ncap * sizeof *grown);
        if (!grown) return -1;
        *arr = grown;
        *cap = ncap;
    }
    wp_rspan *r = &(*arr)[*n];
    memset(r, 0, sizeof *r);
    copy_hex(r->trace_id, sizeof r->trace_id, json_object_get(sp, "traceId"));
    copy_hex(r->span_id, sizeof r->span_id, json_object_get(sp, "spanId"));
    copy_hex(r->parent_id, sizeof r->parent_id, json_object_get(sp, "parentSpanId"));
    r->name = strdup(str_or(json_string_value(json_object_get(sp, "name")), "?"));
    r->service = strdup(service);
    r->kind = (int)json_integer_value(json_object_get(sp, "kind"));
    r->error = json_integer_value(json_object_get(json_object_get(sp, "status"), "code")) == 2;
    r->start_ns = u64(json_object_get(sp, "startTimeUnixNano"));
    r->end_ns = u64(json_object_get(sp, "endTimeUnixNano"));
    if (!r->name || !r->service) {
        free(r->name);
        free(r->service);
        return -1;
    }
    (*n)++;
    return 0;
}

static int by_start(const void *a, const void *b) {
    const wp_rspan *x = a, *y = b;
    return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

int wp_spans_load(const char *path, const char *trace_id, wp_rspan **out, size_t *n) {
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    wp_rspan *arr = NULL;
    size_t cap = 0, count = 0;
    char *line = NULL;
    size_t linecap = 0;
    int rc = 0;
    while (rc == 0 && getline(&line, &linecap, f) > 0) {
        /* Cheap filter before parsing: the trace id appears in the line. */
        if (trace_id && !strstr(line, trace_id)) continue;
        json_t *doc = json_loads(line, 0, NULL);
        size_t i, j, k;
        json_t *res, *scope, *sp;
        json_array_foreach(json_object_get(doc, "resourceSpans"), i, res) {
            const char *service = service_name(res);
            json_array_foreach(json_object_get(res, "scopeSpans"), j, scope) {
                json_array_foreach(json_object_get(scope, "spans"), k, sp) {
                    const char *tid = json_string_value(json_object_get(sp, "traceId"));
                    if (!tid || (trace_id && strcmp(tid, trace_id))) continue;
                    if (push_span(&arr, &count, &cap, sp, service)) rc = -1;
                }
            }
        }
        json_decref(doc);
    }
    free(line);
    fclose(f);
    if (rc) {
        wp_spans_free(arr, count);
        errno = ENOMEM;
        return -1;
    }
    if (count) qsort(arr, count, sizeof *arr, by_start);
    *out = arr;
    *n = count;
    return 0;
}

void wp_spans_free(wp_rspan *spans, size_t n) {
    for (size_t i = 0; i < n; i++) {
        free(spans[i].name);
        free(spans[i].service);
    }
    free(spans);
}

const wp_rspan *wp_spans_root(const wp_rspan *spans, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (spans[i].kind != WP_KIND_SERVER) continue;
        int local_parent = 0;
        for (size_t j = 0; j < n && spans[i].parent_id[0]; j++)
            if (!strcmp(spans[j].span_id, spans[i].parent_id)) local_parent = 1;
        if (!local_parent) return &spans[i];
    }
    return NULL;
}
