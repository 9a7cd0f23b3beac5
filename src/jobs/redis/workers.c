/* workers.c - the workers of a queue on Redis (jobs.h
 * ln_jobs_workers), as BullMQ knows them: Redis keeps no list of workers,
 * so a worker names its connection (CLIENT SETNAME) and a listing reads
 * the names back with CLIENT LIST, as Queue.getWorkers() does.
 *
 * Names. A BullMQ worker's blocking connection is "<prefix>:<b64>", or
 * "<prefix>:<b64>:w:<name>" when the worker has a name, with <b64> the
 * queue name in standard base64 (with '=' padding). A running
 * ln_worker_run names its pipe's connection (pipe.c, connected for
 * the whole run and closed when it returns) "<prefix>:<b64>:w:lanes-<pid>",
 * so each run shows exactly once while it runs, in Node's getWorkers()
 * and Bull Board as in this listing. A client name cannot hold spaces, so
 * the fields of CLIENT LIST stay separable.
 *
 * CLIENT LIST is one line per client, "k=v" fields separated by single
 * spaces ("id=7 addr=127.0.0.1:5000 ... name=x age=3 idle=0 ..."). The
 * parser walks the reply once, never reads past its length, takes the
 * first '=' of a field as the separator (a name may contain '='), skips
 * fields without one and lines without a name, and stops at max entries.
 * Lines are in the order of client ids, which is connection order: the
 * oldest worker first. Docs: docs/internals/workers.md. */
#include "redis_workers.h"

#include "internal.h"
#include "redis_int.h"

#include <stdio.h>
#include <string.h>

#define NUM_DIGITS_MAX 15 /* age, idle (s), pid: times 1000 still far below INT64_MAX */

static size_t base64(const char *in, size_t n, char *out) {
    static const char digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)(unsigned char)in[i] << 16;
        if (i + 1 < n) v |= (unsigned)(unsigned char)in[i + 1] << 8;
        if (i + 2 < n) v |= (unsigned char)in[i + 2];
        out[o++] = digits[v >> 18];
        out[o++] = digits[(v >> 12) & 63];
        out[o++] = i + 1 < n ? digits[(v >> 6) & 63] : '=';
        out[o++] = i + 2 < n ? digits[v & 63] : '=';
    }
    out[o] = '\0';
    return o;
}

/* "<prefix>:<base64(queue)>" into a new string; suffix appended. */
static char *client_base(const char *prefix, const char *queue, size_t qlen, const char *suffix) {
    size_t plen = strlen(prefix), slen = strlen(suffix);
    size_t size = plen + 1 + (qlen + 2) / 3 * 4 + slen + 1;
    char *s = ln__malloc(size);
    if (s == NULL) return NULL;
    memcpy(s, prefix, plen);
    s[plen] = ':';
    size_t b = base64(queue, qlen, s + plen + 1);
    memcpy(s + plen + 1 + b, suffix, slen + 1);
    return s;
}

char *ln__redis_worker_name(const char *prefix, const char *base, const char *worker) {
    size_t plen = strlen(prefix), blen = strlen(base);
    if (blen < plen + 3 || strncmp(base, prefix, plen) != 0 || base[plen] != ':' ||
        base[blen - 1] != ':')
        return NULL;
    size_t wlen = strlen(worker);
    char *suffix = ln__malloc(wlen + 4);
    if (suffix == NULL) return NULL;
    memcpy(suffix, ":w:", 3);
    memcpy(suffix + 3, worker, wlen + 1);
    char *name = client_base(prefix, base + plen + 1, blen - plen - 2, suffix);
    ln__free(suffix);
    return name;
}

/* ------------------------------------------------------------- parsing */

typedef struct span {
    const char *p;
    size_t n;
} span;

static int span_is(span s, const char *lit) {
    size_t n = strlen(lit);
    return s.n == n && memcmp(s.p, lit, n) == 0;
}

/* A decimal of 1..NUM_DIGITS_MAX digits, else -1. */
static int64_t span_num(span s) {
    if (s.n == 0 || s.n > NUM_DIGITS_MAX) return -1;
    int64_t v = 0;
    for (size_t i = 0; i < s.n; i++) {
        if (s.p[i] < '0' || s.p[i] > '9') return -1;
        v = v * 10 + (s.p[i] - '0');
    }
    return v;
}

static char *span_dup(span s) {
    char *d = ln__malloc(s.n + 1);
    if (d == NULL) return NULL;
    memcpy(d, s.p, s.n);
    d[s.n] = '\0';
    return d;
}

/* The fields of one client line lanes reads. */
typedef struct client_line {
    span id, addr, name, age, idle;
    int has_name;
} client_line;

static void parse_line(const char *p, size_t n, client_line *cl) {
    memset(cl, 0, sizeof *cl);
    size_t i = 0;
    while (i < n) {
        size_t start = i;
        while (i < n && p[i] != ' ') i++;
        span field = {p + start, i - start};
        i++; /* the space */
        const char *eq = memchr(field.p, '=', field.n);
        if (eq == NULL) continue;
        span key = {field.p, (size_t)(eq - field.p)};
        span val = {eq + 1, field.n - key.n - 1};
        if (span_is(key, "id"))
            cl->id = val;
        else if (span_is(key, "addr"))
            cl->addr = val;
        else if (span_is(key, "name"))
            cl->name = val, cl->has_name = 1;
        else if (span_is(key, "age"))
            cl->age = val;
        else if (span_is(key, "idle"))
            cl->idle = val;
    }
}

/* Whether name is a worker's of want: want itself (an unnamed BullMQ
 * worker) or want + ":w:" + a worker name (*wname). */
static int worker_of(span name, const char *want, size_t wlen, span *wname) {
    wname->p = NULL;
    wname->n = 0;
    if (name.n < wlen || memcmp(name.p, want, wlen) != 0) return 0;
    if (name.n == wlen) return 1;
    if (name.n < wlen + 3 || memcmp(name.p + wlen, ":w:", 3) != 0) return 0;
    wname->p = name.p + wlen + 3;
    wname->n = name.n - wlen - 3;
    return 2;
}

/* A lanes run names itself "lanes-<pid>". */
static int64_t lanes_pid(span wname) {
    if (wname.n < 7 || memcmp(wname.p, "lanes-", 6) != 0) return -1;
    span digits = {wname.p + 6, wname.n - 6};
    return span_num(digits);
}

static int add_entry(const client_line *cl, span wname, int kind, int64_t now_ms,
                     ln_worker_info *w) {
    memset(w, 0, sizeof *w);
    int64_t age = span_num(cl->age), idle = span_num(cl->idle);
    w->kind = kind == 2 && lanes_pid(wname) > 0 ? LN_WORKER_LANES : LN_WORKER_BULLMQ;
    w->pid = w->kind == LN_WORKER_LANES ? lanes_pid(wname) : 0;
    w->started_ms = age >= 0 ? now_ms - age * 1000 : 0;
    w->seen_ms = idle >= 0 ? now_ms - idle * 1000 : 0;
    w->id = span_dup(cl->id);
    w->addr = cl->addr.n ? span_dup(cl->addr) : NULL;
    w->name = wname.n ? span_dup(wname) : NULL;
    if (w->id == NULL || (cl->addr.n && w->addr == NULL) || (wname.n && w->name == NULL))
        return LN_ENOMEM;
    return 0;
}

static int grow(ln_worker_info **out, size_t n, size_t *cap) {
    if (n < *cap) return 0;
    size_t c = *cap ? *cap * 2 : 8;
    ln_worker_info *a = ln__realloc(*out, c * sizeof *a);
    if (a == NULL) return LN_ENOMEM;
    *out = a;
    *cap = c;
    return 0;
}

int ln__redis_parse_clients(const char *text, size_t len, const char *want, int64_t now_ms,
                            size_t max, ln_worker_info **out, size_t *n, size_t *cap) {
    size_t wlen = strlen(want), i = 0;
    while (i < len && *n < max) {
        size_t start = i;
        while (i < len && text[i] != '\n') i++;
        size_t end = i++;
        if (end > start && text[end - 1] == '\r') end--;
        client_line cl;
        parse_line(text + start, end - start, &cl);
        span wname;
        int kind = cl.has_name ? worker_of(cl.name, want, wlen, &wname) : 0;
        if (kind == 0 || cl.id.n == 0) continue;
        if (grow(out, *n, cap) != 0) return LN_ENOMEM;
        int err = add_entry(&cl, wname, kind, now_ms, &(*out)[*n]);
        (*n)++; /* even half-filled: the caller frees it */
        if (err != 0) return err;
    }
    return 0;
}

/* ------------------------------------------------------------- listing */

/* The server's clock in ms (TIME). */
static int server_ms(ln__redis_be *rb, int64_t *ms) {
    ln__jobs_be *be = &rb->base;
    int rc = 0;
    redisReply *r = ln__redis_cmd(rb, 1, (const char *[]){"TIME"}, &rc);
    if (r == NULL) return rc;
    int ok = r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
             r->element[0]->type == REDIS_REPLY_STRING && r->element[1]->type == REDIS_REPLY_STRING;
    if (ok)
        *ms = strtoll(r->element[0]->str, NULL, 10) * 1000 +
              strtoll(r->element[1]->str, NULL, 10) / 1000;
    freeReplyObject(r);
    return ok ? 0 : ln__jobs_be_err(be, LN_EBACKEND, "redis: unexpected reply to TIME");
}

int ln__redis_workers(ln__jobs_be *be, const char *queue, size_t max, ln_worker_info **out,
                      size_t *n) {
    ln__redis_be *rb = ln__redis_at(be, queue); /* Redis Cluster: the node serving the queue */
    const char *prefix = rb->cfg.prefix;
    int rc = 0;
    int64_t now = 0;
    redisReply *r = ln__redis_cmd(rb, 2, (const char *[]){"CLIENT", "LIST"}, &rc);
    if (r == NULL) return rc;
    if (r->type != REDIS_REPLY_STRING) {
        freeReplyObject(r);
        return ln__jobs_be_err(be, LN_EBACKEND, "redis: unexpected reply to CLIENT LIST");
    }
    char *want = client_base(prefix, queue, strlen(queue), "");
    if (want == NULL || (rc = server_ms(rb, &now)) != 0) {
        freeReplyObject(r);
        ln__free(want);
        return want == NULL ? ln__jobs_be_err(be, LN_ENOMEM, "out of memory") : rc;
    }
    size_t cap = 0;
    rc = ln__redis_parse_clients(r->str, r->len, want, now, max, out, n, &cap);
    freeReplyObject(r);
    ln__free(want);
    if (rc != 0) return ln__jobs_be_err(be, rc, "out of memory");
    return 0;
}
