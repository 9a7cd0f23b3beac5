/* trace.c - W3C traceparent parsing and OTLP/JSON span lines (see trace.h). */
#include "trace.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

struct wp_tracer {
    int fd;
    char *service;
};

uint64_t wp_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ------------------------------------------------------------ random ids */

/* xorshift64* per thread, seeded once from getrandom(); ids need to be
 * unique, not unpredictable. */
static _Thread_local uint64_t rng_state;

static uint64_t rng_next(void) {
    if (rng_state == 0) {
        uint64_t seed = 0;
        if (getrandom(&seed, sizeof seed, 0) != (ssize_t)sizeof seed)
            seed = wp_now_ns() ^ (uint64_t)(uintptr_t)&seed;
        rng_state = seed | 1;
    }
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1DULL;
}

static void random_id(uint8_t *out, size_t n) {
    for (;;) {
        int nonzero = 0;
        for (size_t i = 0; i < n; i += 8) {
            uint64_t r = rng_next();
            size_t k = n - i < 8 ? n - i : 8;
            memcpy(out + i, &r, k);
        }
        for (size_t i = 0; i < n; i++) nonzero |= out[i];
        if (nonzero) return; /* all-zero ids are invalid */
    }
}

/* ------------------------------------------------------------ traceparent */

static int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1; /* upper case is invalid in traceparent */
}

static int parse_hex(const char *s, uint8_t *out, size_t n) {
    int nonzero = 0;
    for (size_t i = 0; i < n; i++) {
        int hi = hexval(s[2 * i]), lo = hexval(s[2 * i + 1]);
        if (hi < 0 || lo < 0) return -1;
        out[i] = (uint8_t)(hi << 4 | lo);
        nonzero |= out[i];
    }
    return nonzero ? 0 : -2;
}

int wp_traceparent_parse(const char *s, wp_span_ctx *out) {
    uint8_t version;
    wp_span_ctx c;
    if (!s || strlen(s) < WP_TRACEPARENT_LEN) return -1;
    if (parse_hex(s, &version, 1) == -1 || version == 0xff) return -1;
    if (version == 0 && s[WP_TRACEPARENT_LEN] != '\0') return -1;
    if (version != 0 && s[WP_TRACEPARENT_LEN] != '\0' && s[WP_TRACEPARENT_LEN] != '-') return -1;
    if (s[2] != '-' || s[35] != '-' || s[52] != '-') return -1;
    if (parse_hex(s + 3, c.trace_id, 16) != 0) return -1;
    if (parse_hex(s + 36, c.span_id, 8) != 0) return -1;
    if (parse_hex(s + 53, &c.flags, 1) == -1) return -1;
    *out = c;
    return 0;
}

void wp_hex(const uint8_t *bytes, size_t n, char *out) {
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[bytes[i] >> 4];
        out[2 * i + 1] = digits[bytes[i] & 15];
    }
    out[2 * n] = '\0';
}

void wp_traceparent_format(const wp_span_ctx *ctx, char *out) {
    char tid[33], sid[17];
    wp_hex(ctx->trace_id, 16, tid);
    wp_hex(ctx->span_id, 8, sid);
    snprintf(out, WP_TRACEPARENT_LEN + 1, "00-%s-%s-%02x", tid, sid, (unsigned)ctx->flags);
}

/* ------------------------------------------------------------ spans */

int wp_tracer_open(wp_tracer **out, const char *path, const char *service) {
    wp_tracer *t = calloc(1, sizeof *t);
    if (!t) return -1;
    t->fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    t->service = strdup(service);
    if (t->fd < 0 || !t->service) {
        int e = t->fd < 0 ? errno : ENOMEM;
        if (t->fd >= 0) close(t->fd);
        free(t->service);
        free(t);
        errno = e;
        return -1;
    }
    *out = t;
    return 0;
}

void wp_tracer_close(wp_tracer *t) {
    if (!t) return;
    close(t->fd);
    free(t->service);
    free(t);
}

void wp_trace_begin(wp_trace *tr, const wp_tracer *t, const wp_span_ctx *parent,
                    unsigned sample_every) {
    tr->n = 0;
    if (!t)
        tr->recording = 0;
    else if (parent)
        tr->recording = parent->flags & 1;
    else
        tr->recording = sample_every <= 1 || rng_next() % sample_every == 0;
}

wp_span *wp_span_start(wp_trace *tr, const wp_span *parent, const wp_span_ctx *ctx,
                       const char *name, int kind) {
    wp_span *s = tr->n < WP_TRACE_SPANS ? &tr->spans[tr->n++] : &tr->spare;
    memset(s, 0, sizeof *s);
    const wp_span_ctx *from = parent ? &parent->ctx : ctx;
    if (from) {
        memcpy(s->ctx.trace_id, from->trace_id, 16);
        memcpy(s->parent_id, from->span_id, 8);
    } else {
        random_id(s->ctx.trace_id, 16);
    }
    random_id(s->ctx.span_id, 8);
    s->ctx.flags = tr->recording ? 1 : 0;
    s->name = name;
    s->kind = kind;
    s->start_ns = wp_now_ns();
    return s;
}

void wp_span_end(wp_span *s) {
    s->end_ns = wp_now_ns();
}

void wp_span_str(wp_span *s, const char *key, const char *str) {
    if (s->nattrs == WP_SPAN_ATTRS) return;
    s->attrs[s->nattrs].key = key;
    s->attrs[s->nattrs].str = str;
    s->nattrs++;
}

void wp_span_int(wp_span *s, const char *key, int64_t num) {
    if (s->nattrs == WP_SPAN_ATTRS) return;
    s->attrs[s->nattrs].key = key;
    s->attrs[s->nattrs].str = NULL;
    s->attrs[s->nattrs].num = num;
    s->nattrs++;
}

/* OTLP/JSON encodes 64-bit integers as decimal strings. */
static json_t *u64_string(uint64_t v) {
    char buf[24];
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
    return json_string(buf);
}

static json_t *span_json(const wp_span *s) {
    char tid[33], sid[17], pid[17];
    static const uint8_t zero[8];
    wp_hex(s->ctx.trace_id, 16, tid);
    wp_hex(s->ctx.span_id, 8, sid);
    json_t *attrs = json_array();
    for (int i = 0; i < s->nattrs; i++) {
        json_t *v = s->attrs[i].str
                        ? json_pack("{s:s}", "stringValue", s->attrs[i].str)
                        : json_pack("{s:o}", "intValue", u64_string((uint64_t)s->attrs[i].num));
        json_array_append_new(attrs, json_pack("{s:s,s:o}", "key", s->attrs[i].key, "value", v));
    }
    json_t *j = json_pack("{s:s,s:s,s:s,s:i,s:o,s:o,s:o,s:{s:i}}", "traceId", tid, "spanId", sid,
                          "name", s->name, "kind", s->kind, "startTimeUnixNano",
                          u64_string(s->start_ns), "endTimeUnixNano", u64_string(s->end_ns),
                          "attributes", attrs, "status", "code", s->error ? 2 : 0);
    if (j && memcmp(s->parent_id, zero, 8) != 0) {
        wp_hex(s->parent_id, 8, pid);
        json_object_set_new(j, "parentSpanId", json_string(pid));
    }
    return j;
}

int wp_trace_flush(wp_trace *tr, wp_tracer *t) {
    int n = tr->n;
    tr->n = 0;
    if (!t || !tr->recording || n == 0) return 0;
    json_t *spans = json_array();
    for (int i = 0; i < n; i++)
        if (tr->spans[i].end_ns) json_array_append_new(spans, span_json(&tr->spans[i]));
    json_t *line =
        json_pack("{s:[{s:{s:[{s:s,s:{s:s}}]},s:[{s:{s:s},s:o}]}]}", "resourceSpans", "resource",
                  "attributes", "key", "service.name", "value", "stringValue", t->service,
                  "scopeSpans", "scope", "name", "lanes.writepath", "spans", spans);
    char *text = line ? json_dumps(line, JSON_COMPACT) : NULL;
    json_decref(line);
    if (!text) return -1;
    size_t len = strlen(text);
    text[len] = '\n'; /* replaces the terminator; len + 1 bytes are written */
    ssize_t w = write(t->fd, text, len + 1);
    free(text);
    return w == (ssize_t)(len + 1) ? 0 : -1;
}
