/* trace.h - W3C trace context and spans written as OTLP/JSON lines.
 *
 * A request (or a worker job) collects its spans in one wp_trace, a small
 * fixed buffer owned by the thread handling it; wp_trace_flush() writes them
 * as ONE line of OTLP/JSON ({"resourceSpans":[...]}) with one write(2) on a
 * file opened O_APPEND, so the service and the worker process can share a
 * trace file without interleaving lines.
 *
 * Span ids are random; times are CLOCK_REALTIME (nanoseconds since the Unix
 * epoch) so spans of different processes line up on one time axis.
 *
 * Thread rules: a wp_tracer is shared (its file descriptor is only written
 * with single write(2) calls); a wp_trace and its spans belong to one thread
 * at a time.
 */
#ifndef WP_TRACE_H
#define WP_TRACE_H

#include <stddef.h>
#include <stdint.h>

/* A span's identity as carried by a W3C traceparent header. */
typedef struct wp_span_ctx {
    uint8_t trace_id[16];
    uint8_t span_id[8];
    uint8_t flags; /* bit 0: sampled */
} wp_span_ctx;

#define WP_TRACEPARENT_LEN 55 /* "00-<32 hex>-<16 hex>-<2 hex>" */

/* Parse a version-00 traceparent ("00-" 32 hex "-" 16 hex "-" 2 hex, lower
 * case; all-zero ids invalid; later versions accepted by their first 55
 * characters as the spec asks). 0, or -1 when s is not valid. */
int wp_traceparent_parse(const char *s, wp_span_ctx *out);
/* Write ctx as a traceparent into out (WP_TRACEPARENT_LEN + 1 bytes). */
void wp_traceparent_format(const wp_span_ctx *ctx, char *out);
/* Lower-case hex of n bytes into out (2n + 1 bytes). */
void wp_hex(const uint8_t *bytes, size_t n, char *out);

/* OTLP span kinds. */
enum {
    WP_KIND_INTERNAL = 1,
    WP_KIND_SERVER = 2,
    WP_KIND_CLIENT = 3,
    WP_KIND_PRODUCER = 4,
    WP_KIND_CONSUMER = 5
};

#define WP_SPAN_ATTRS 4
#define WP_TRACE_SPANS 24

typedef struct wp_span {
    wp_span_ctx ctx;
    uint8_t parent_id[8]; /* all zero for a root span */
    const char *name;     /* static string */
    int kind;
    int error; /* 1: status ERROR */
    uint64_t start_ns, end_ns;
    int nattrs;
    struct {
        const char *key; /* static string */
        const char *str; /* static string, or NULL for the integer */
        int64_t num;
    } attrs[WP_SPAN_ATTRS];
} wp_span;

/* The spans of one request or job. recording = 0 (not sampled, or no
 * tracer): spans still get ids, so context propagates, but nothing is kept. */
typedef struct wp_trace {
    int recording;
    int n;
    wp_span spans[WP_TRACE_SPANS];
    wp_span spare; /* handed out when spans[] is full; never written */
} wp_trace;

typedef struct wp_tracer wp_tracer;

/* Open (create, append) the trace file at path for the named service.
 * 0, or -1 with errno set. */
int wp_tracer_open(wp_tracer **out, const char *path, const char *service);
/* Close; NULL is a no-op. */
void wp_tracer_close(wp_tracer *t);

/* Start a trace for a unit of work. parent: the incoming context (NULL for a
 * new trace). A new trace is sampled when the tracer exists and the sampler
 * says so (1 in sample_every requests); a continued trace keeps its parent's
 * sampled flag. */
void wp_trace_begin(wp_trace *tr, const wp_tracer *t, const wp_span_ctx *parent,
                    unsigned sample_every);

/* Start a span: a child of parent, or of ctx when parent is NULL (a span
 * continuing a remote context), or a root when both are NULL. Never NULL. */
wp_span *wp_span_start(wp_trace *tr, const wp_span *parent, const wp_span_ctx *ctx,
                       const char *name, int kind);
void wp_span_end(wp_span *s);
/* Attributes: key and str must be static strings. Silently dropped beyond
 * WP_SPAN_ATTRS. */
void wp_span_str(wp_span *s, const char *key, const char *str);
void wp_span_int(wp_span *s, const char *key, int64_t num);

/* Write the recorded, ended spans of tr as one OTLP/JSON line and forget
 * them. 0, or -1 (write error; the spans are dropped). No-op without a
 * tracer or when tr is not recording. */
int wp_trace_flush(wp_trace *tr, wp_tracer *t);

/* Wall-clock time in ns since the epoch (CLOCK_REALTIME). */
uint64_t wp_now_ns(void);

#endif
