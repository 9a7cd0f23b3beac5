/* spans.h - reading back the OTLP/JSON span lines trace.c writes (for the
 * waterfall and the response-boundary figures). */
#ifndef WP_SPANS_H
#define WP_SPANS_H

#include <stddef.h>
#include <stdint.h>

typedef struct wp_rspan {
    char trace_id[33], span_id[17], parent_id[17]; /* hex; parent "" for a root */
    char *name;
    char *service; /* resource attribute service.name */
    int kind;      /* OTLP span kind */
    int error;     /* status code ERROR */
    uint64_t start_ns, end_ns;
} wp_rspan;

/* Read every span of the file at path, or only those of trace_id (32 hex)
 * when it is not NULL, sorted by start time. Lines that are not OTLP/JSON
 * are skipped. 0 and a new array in *out (free with wp_spans_free), or -1
 * with errno set when the file cannot be read. */
int wp_spans_load(const char *path, const char *trace_id, wp_rspan **out, size_t *n);
void wp_spans_free(wp_rspan *spans, size_t n);

/* The request span of a trace: the SERVER span whose parent is not in the
 * trace (the first such by start time). NULL when there is none. spans[]
 * must hold one trace only. */
const wp_rspan *wp_spans_root(const wp_rspan *spans, size_t n);

#endif
