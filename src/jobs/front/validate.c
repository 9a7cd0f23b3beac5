/* validate.c - checks of everything a caller hands the job queue: names,
 * ids, JSON (with jansson and SQLite's json_valid), options and W3C trace context. Nothing invalid
 * reaches a backend. */
#include "flow_parent.h"
#include "front.h"
#include "utf8.h"

#include <jansson.h>
#include <limits.h>
#include <stdint.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

/* 100 years in ms: the bound on delays and backoffs, so now + delay and
 * backoff * 2^n stay far from int64 overflow. */
#define MAX_SPAN_MS (100LL * 366 * 24 * 3600 * 1000)
#define MAX_ATTEMPTS 1000000
#define TRACESTATE_MAX 512

static int has_control(const char *s) {
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p < 0x20 || *p == 0x7f) return 1;
    return 0;
}

/* The offset of the first byte of s that starts no well-formed UTF-8
 * sequence, or -1 when all of s is UTF-8. */
static long bad_utf8_at(const char *s) {
    const unsigned char *p = (const unsigned char *)s;
    size_t left = strlen(s);
    for (size_t i = 0; i < left;) {
        size_t n = p[i] < 0x80 ? 1 : ln__utf8_seq(p + i, left - i);
        if (n == 0) return (long)i;
        i += n;
    }
    return -1;
}

/* Every name, id and queue name the API takes passes here (the adds, the
 * flows, the schedulers and every call that names a queue): names are
 * JSON strings in the dashboard, in events and for BullMQ, so they must be
 * UTF-8. A lookup by job id (max SIZE_MAX, front.h) takes any bytes. */
int ln__jobs_check_name(const char *s, size_t max, const char *what, char *err, size_t errsize) {
    if (s == NULL || *s == '\0') {
        snprintf(err, errsize, "%s must not be empty", what);
        return LN_EINVAL;
    }
    if (strnlen(s, max) >= max) {
        snprintf(err, errsize, "%s is longer than %zu bytes", what, max - 1);
        return LN_EINVAL;
    }
    if (has_control(s)) {
        snprintf(err, errsize, "%s contains a control character", what);
        return LN_EINVAL;
    }
    long bad = max == SIZE_MAX ? -1 : bad_utf8_at(s);
    if (bad >= 0) {
        snprintf(err, errsize, "%s is not valid UTF-8 (byte 0x%02x at offset %ld)", what,
                 (unsigned)(unsigned char)s[bad], bad);
        return LN_EINVAL;
    }
    return 0;
}

int ln__jobs_check_queue(const char *queue, char *err, size_t errsize) {
    int rc = ln__jobs_check_name(queue, LN_JOB_QUEUE_MAX, "queue name", err, errsize);
    if (rc == 0 && strchr(queue, ':') != NULL) {
        snprintf(err, errsize,
                 "queue name '%s' contains ':' (BullMQ forbids it: it would "
                 "make the store's keys ambiguous)",
                 queue);
        return LN_EINVAL;
    }
    return rc;
}

/* BullMQ's test is `${parseInt(id, 10)}` === id: an optional '-' and
 * decimal digits without a leading zero. Ids made only of digits are
 * refused whatever their zeros: those are the store's own numbers. */
static int is_integer(const char *id) {
    const char *d = id[0] == '-' ? id + 1 : id;
    size_t nd = strspn(d, "0123456789");
    if (nd == 0 || d[nd] != '\0') return 0;
    return d == id || d[0] != '0' || nd == 1;
}

/* BullMQ's rule for ':' in custom ids: none, unless the id has exactly
 * three ':'-separated parts (the shape of job-scheduler ids), and never
 * starting with "0:" (BullMQ's Queue refuses those). */
static const char *colon_problem(const char *id) {
    const char *c1 = strchr(id, ':');
    if (c1 == NULL) return NULL;
    const char *c2 = strchr(c1 + 1, ':');
    if (c2 == NULL || strchr(c2 + 1, ':') != NULL)
        return "contains ':' (allowed only in the three-part form a:b:c)";
    if (strncmp(id, "0:", 2) == 0) return "starts with '0:'";
    return NULL;
}

int ln__jobs_check_id(const char *id, char *err, size_t errsize) {
    int rc = ln__jobs_check_name(id, LN_JOB_CUSTOM_ID_MAX, "job id", err, errsize);
    if (rc != 0) return rc;
    if (is_integer(id)) {
        snprintf(err, errsize,
                 "job id '%s' is an integer (the store numbers its own jobs "
                 "so, and BullMQ refuses them): use a prefix, e.g. 'order-%s'",
                 id, id);
        return LN_EINVAL;
    }
    const char *why = colon_problem(id);
    if (why != NULL) {
        snprintf(err, errsize, "job id '%s' %s", id, why);
        return LN_EINVAL;
    }
    return 0;
}

/* SQLite's json_valid() follows RFC 8259's grammar alone: it does not
 * convert numbers or decode escapes, so it takes what jansson cannot hold
 * (integers past 64 bits, 1e400, lone surrogate escapes). It checks no
 * UTF-8, which jansson's json_stringn() does. It is the slow path (a
 * private in-memory connection per call, ~13 us): only texts jansson
 * refused get here. data holds no NUL byte (the callers see to it).
 * 1 = valid, 0 = not, -1 = SQLite failed. */
static int rfc8259_valid(const char *data, size_t n) {
    json_t *utf8 = json_stringn(data, n);
    if (utf8 == NULL) return 0;
    json_decref(utf8);
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    int valid = -1;
    if (n <= INT_MAX &&
        sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_MEMORY, NULL) ==
            SQLITE_OK &&
        sqlite3_prepare_v2(db, "SELECT json_valid(?1)", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_bind_text(st, 1, data, (int)n, SQLITE_STATIC) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        valid = sqlite3_column_int(st, 0) != 0;
    sqlite3_finalize(st);
    sqlite3_close(db);
    return valid;
}

/* A JSON text is what JSON.parse takes, in UTF-8 (RFC 8259): any value at
 * top level, whitespace around it, numbers of any size, any escape. It is
 * stored as given; nothing here converts it. jansson decides first (fast,
 * and what it takes is valid); what it refuses gets rfc8259_valid(). Both
 * bound the nesting (2000 levels and more; 1000 is always taken). */
int ln__jobs_check_json(const char *data, size_t max, size_t *len, const char *what, char *err,
                        size_t errsize) {
    size_t n = strnlen(data, max + 1);
    if (n > max) {
        snprintf(err, errsize, "%s is larger than the limit of %zu bytes", what, max);
        return LN_EINVAL;
    }
    json_error_t jerr;
    json_t *v = json_loadb(data, n, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
    if (v == NULL && rfc8259_valid(data, n) != 1) {
        snprintf(err, errsize, "%s is not valid JSON: %s (line %d, column %d)", what, jerr.text,
                 jerr.line, jerr.column);
        return LN_EINVAL;
    }
    json_decref(v);
    *len = n;
    return 0;
}

/* A NUL byte is never part of a JSON text (both libraries would stop at
 * it and take the text before). */
int ln_jobs_json_valid(const char *text, size_t len) {
    if (text == NULL || memchr(text, '\0', len) != NULL) return 0;
    json_t *v = json_loadb(text, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
    int ok = v != NULL || rfc8259_valid(text, len) == 1;
    json_decref(v);
    return ok;
}

static int hex_field(const char *p, size_t n, int *all_zero) {
    *all_zero = 1;
    for (size_t i = 0; i < n; i++) {
        char c = p[i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return 0;
        if (c != '0') *all_zero = 0;
    }
    return 1;
}

int ln__jobs_check_traceparent(const char *tp) {
    /* version "-" trace-id(32) "-" parent-id(16) "-" flags(2), lowercase */
    int z1, z2, z3;
    return strlen(tp) == 55 && strncmp(tp, "00-", 3) == 0 && tp[35] == '-' && tp[52] == '-' &&
           hex_field(tp + 3, 32, &z1) && !z1 && hex_field(tp + 36, 16, &z2) && !z2 &&
           hex_field(tp + 53, 2, &z3);
}

static int check_keep(const ln_job_keep *k, const char *what, char *err, size_t errsize) {
    if (k->mode < LN_KEEP_ALL || k->mode > LN_KEEP_ALWAYS) {
        snprintf(err, errsize, "%s: unknown mode %d", what, k->mode);
        return LN_EINVAL;
    }
    if (k->value < 0) {
        snprintf(err, errsize, "%s: value must be >= 0 (got %lld)", what, (long long)k->value);
        return LN_EINVAL;
    }
    return 0;
}

/* The deduplication options (jobs.h ln_job_opts.dedup_*). */
static int check_dedup(const ln_job_opts *o, char *err, size_t errsize) {
    if (o->dedup_id == NULL) {
        if (o->dedup_ttl_ms == 0 && !o->dedup_extend && !o->dedup_replace &&
            !o->dedup_keep_last_if_active && !o->dedup_reschedule)
            return 0;
        snprintf(err, errsize,
                 "dedup_ttl_ms, dedup_extend, dedup_replace, dedup_keep_last_if_active and "
                 "dedup_reschedule need a dedup_id");
        return LN_EINVAL;
    }
    size_t len = strnlen(o->dedup_id, LN_JOB_CUSTOM_ID_MAX);
    if (len == 0 || len >= LN_JOB_CUSTOM_ID_MAX || has_control(o->dedup_id)) {
        snprintf(err, errsize, "dedup_id must be 1..%d bytes without control characters",
                 LN_JOB_CUSTOM_ID_MAX - 1);
        return LN_EINVAL;
    }
    int rc = ln__jobs_check_name(o->dedup_id, LN_JOB_CUSTOM_ID_MAX, "dedup_id", err, errsize);
    if (rc != 0) return rc; /* not UTF-8 */
    if (o->dedup_ttl_ms < 0 || o->dedup_ttl_ms > INT32_MAX) {
        snprintf(err, errsize, "dedup_ttl_ms must be 0..%d (got %lld)", INT32_MAX,
                 (long long)o->dedup_ttl_ms);
        return LN_EINVAL;
    }
    if ((o->dedup_extend != 0 && o->dedup_extend != 1) ||
        (o->dedup_replace != 0 && o->dedup_replace != 1) ||
        (o->dedup_keep_last_if_active != 0 && o->dedup_keep_last_if_active != 1) ||
        (o->dedup_reschedule != 0 && o->dedup_reschedule != 1)) {
        snprintf(err, errsize,
                 "dedup_extend, dedup_replace, dedup_keep_last_if_active and "
                 "dedup_reschedule must be 0 or 1");
        return LN_EINVAL;
    }
    if (o->dedup_extend && o->dedup_ttl_ms == 0) {
        snprintf(err, errsize, "dedup_extend needs a dedup_ttl_ms > 0");
        return LN_EINVAL;
    }
    return 0;
}

/* backoff_type: set exactly with LN_BACKOFF_CUSTOM, a name BullMQ would
 * not read as a builtin type. */
static int check_backoff_type(const ln_job_opts *o, char *err, size_t errsize) {
    const char *t = o->backoff_type;
    if (o->backoff != LN_BACKOFF_CUSTOM) {
        if (t == NULL) return 0;
        snprintf(err, errsize, "backoff_type '%.64s' needs backoff = LN_BACKOFF_CUSTOM", t);
        return LN_EINVAL;
    }
    size_t n = t != NULL ? strnlen(t, LN_BACKOFF_TYPE_MAX) : 0;
    if (n == 0 || n >= LN_BACKOFF_TYPE_MAX || has_control(t)) {
        snprintf(err, errsize,
                 "LN_BACKOFF_CUSTOM needs a backoff_type of 1..%d bytes without control "
                 "characters",
                 LN_BACKOFF_TYPE_MAX - 1);
        return LN_EINVAL;
    }
    if (strcmp(t, "fixed") == 0 || strcmp(t, "exponential") == 0) {
        snprintf(err, errsize, "backoff_type '%s' is builtin: use LN_BACKOFF_%s", t,
                 t[0] == 'f' ? "FIXED" : "EXPONENTIAL");
        return LN_EINVAL;
    }
    return 0;
}

int ln__jobs_check_opts(const ln_job_opts *o, char *err, size_t errsize) {
    if (o->delay_ms < 0 || o->delay_ms > MAX_SPAN_MS) {
        snprintf(err, errsize, "delay must be 0..%lld ms (got %lld)", MAX_SPAN_MS,
                 (long long)o->delay_ms);
        return LN_EINVAL;
    }
    if (o->priority < 0 || o->priority > LN_JOB_PRIORITY_MAX) {
        snprintf(err, errsize, "priority must be 0..%d (got %d)", LN_JOB_PRIORITY_MAX, o->priority);
        return LN_EINVAL;
    }
    if (o->attempts < 1 || o->attempts > MAX_ATTEMPTS) {
        snprintf(err, errsize, "attempts must be 1..%d (got %d)", MAX_ATTEMPTS, o->attempts);
        return LN_EINVAL;
    }
    if (o->backoff != LN_BACKOFF_FIXED && o->backoff != LN_BACKOFF_EXPONENTIAL &&
        o->backoff != LN_BACKOFF_CUSTOM) {
        snprintf(err, errsize, "unknown backoff type %d", o->backoff);
        return LN_EINVAL;
    }
    int brc = check_backoff_type(o, err, errsize);
    if (brc != 0) return brc;
    if (!(o->backoff_jitter >= 0 && o->backoff_jitter <= 1)) { /* NaN too */
        snprintf(err, errsize, "backoff jitter must be between 0 and 1 (got %g)",
                 o->backoff_jitter);
        return LN_EINVAL;
    }
    if (o->backoff_ms < 0 || o->backoff_ms > MAX_SPAN_MS) {
        snprintf(err, errsize, "backoff must be 0..%lld ms (got %lld)", MAX_SPAN_MS,
                 (long long)o->backoff_ms);
        return LN_EINVAL;
    }
    if (o->timeout_ms < 0 || o->timeout_ms > INT32_MAX) {
        snprintf(err, errsize, "timeout must be 0..%d ms (got %lld)", INT32_MAX,
                 (long long)o->timeout_ms);
        return LN_EINVAL;
    }
    if (o->lifo != 0 && o->lifo != 1) {
        snprintf(err, errsize, "lifo must be 0 or 1 (got %d)", o->lifo);
        return LN_EINVAL;
    }
    int rc;
    if (o->job_id != NULL && (rc = ln__jobs_check_id(o->job_id, err, errsize))) return rc;
    if ((rc = check_keep(&o->remove_on_complete, "remove_on_complete", err, errsize)) ||
        (rc = check_keep(&o->remove_on_fail, "remove_on_fail", err, errsize)))
        return rc;
    if ((rc = check_dedup(o, err, errsize)) != 0) return rc;
    if (o->traceparent != NULL && !ln__jobs_check_traceparent(o->traceparent)) {
        snprintf(err, errsize,
                 "traceparent is not a W3C version-00 traceparent "
                 "(00-<32 hex>-<16 hex>-<2 hex>, lowercase, ids not zero)");
        return LN_EINVAL;
    }
    if (o->tracestate != NULL && (strnlen(o->tracestate, TRACESTATE_MAX + 1) > TRACESTATE_MAX ||
                                  has_control(o->tracestate))) {
        snprintf(err, errsize, "tracestate must be at most %d printable bytes", TRACESTATE_MAX);
        return LN_EINVAL;
    }
    return ln__dynflow_check_opts(o, err, errsize); /* parent_* (flow_parent.c) */
}
