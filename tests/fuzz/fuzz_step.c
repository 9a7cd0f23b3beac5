/* fuzz_step.c - the reply of the Redis worker's step (lua/step.lua) as
 * ln__redis_step_reply (src/jobs/redis/step.c) reads it: the jobs a step
 * took, each as flat fields (id, name, data, opts, ats, atm), their opts
 * JSON written by any program (BullMQ in Node, lanes, anyone with the
 * keys), read without a Redis connection from hiredis replies made here.
 *
 * Input: tab-separated fields, the first the "next due" head, then six per
 * job taken. A field is a bulk string, except ":N" (an integer reply),
 * "_" (nil), "*TEXT" (an array of one string, the atm of a job with a
 * deduplication id), "*" (an empty array) and "$TEXT" (the string TEXT,
 * for a text starting with one of those). An opts or name of ":1" is
 * step.lua's "the same as the previous row's". A second field "[" makes
 * the jobs views instead (lib.lua's take_jobs, step.lua's cold path): 14
 * fields each (id, name, data, traceparent, tracestate, ats, atm,
 * attempts, backoff, backoff ms, finish hint, timeout, jitter, type
 * name), the numbers integers as Redis gives a Lua number.
 *
 * Checks: no crash and no undefined behaviour (UBSan: numbers out of
 * range), rc 0 or LN_EBACKEND (never LN_ENOMEM), nothing taken after an
 * error, every job's fields in range (attempts >= 1, jitter 0..1, backoff
 * delays within a JavaScript Date's ms, a timeout of at most INT32_MAX ms
 * (jobs.h's range: the worker's deadline in ns holds it), atm below
 * INT_MAX (the worker adds the run it fails), the custom type iff
 * LN_BACKOFF_CUSTOM, the finish hint decoding to the job's atm; for a
 * view, what does not come from the script's own arithmetic), and each job read the same as
 * when its row comes alone, its "same as before" resolved: the opts cache
 * kept between rows changes nothing. */
#include "fuzz_common.h"
#include "internal.h"
#include "jobs/redis/redis_step.h"
#include "lanes/jobs.h"

#include <limits.h>
#include <math.h>

#define ROWS_MAX 16
#define FIELDS_MAX (1 + 6 * (ROWS_MAX + 1)) /* one row more than want: refused */
#define HINT_ATM 2097152                    /* redis/step.c's finish hint */
#define MS_MAX 8.64e15

typedef struct field {
    redisReply r, one, *ptr, *one_ptr;
} field;

/* Field text s (NUL-terminated in the input copy) into f. */
static void make_field(field *f, char *s) {
    memset(f, 0, sizeof *f);
    f->ptr = &f->r;
    if (s[0] == ':') {
        f->r.type = REDIS_REPLY_INTEGER;
        f->r.integer = strtoll(s + 1, NULL, 10);
    } else if (s[0] == '_' && s[1] == '\0') {
        f->r.type = REDIS_REPLY_NIL;
    } else if (s[0] == '*') {
        f->r.type = REDIS_REPLY_ARRAY;
        if (s[1] != '\0') {
            f->one.type = REDIS_REPLY_STRING;
            f->one.str = s + 1;
            f->one.len = strlen(s + 1);
            f->one_ptr = &f->one;
            f->r.elements = 1;
            f->r.element = &f->one_ptr;
        }
    } else {
        f->r.type = REDIS_REPLY_STRING;
        f->r.str = s + (s[0] == '$');
        f->r.len = strlen(f->r.str);
    }
}

static int same_str(const char *a, const char *b) {
    return a == NULL ? b == NULL : b != NULL && strcmp(a, b) == 0;
}

/* The fields of a taken job that must be in range whatever the reply. */
static void check_ranges(const ln__job_taken *t, const ln__redis_token token, int view) {
    /* (a view's name is the script's `h.name or ''`: a nil there is no view) */
    FUZZ_CHECK(t->ref.id != NULL && (view || t->name != NULL), "id/name");
    FUZZ_CHECK(strcmp(t->ref.token, token) == 0, "token %s", t->ref.token);
    FUZZ_CHECK(t->attempts >= 1, "attempts %d", t->attempts);
    FUZZ_CHECK(t->attempts_started >= 0, "ats %d", t->attempts_started);
    FUZZ_CHECK(t->backoff_jitter >= 0 && t->backoff_jitter <= 1, "jitter %g", t->backoff_jitter);
    if (!view) /* a view's delay is the script's, capped by backoff_of */
        FUZZ_CHECK(t->backoff_ms >= -(int64_t)MS_MAX && t->backoff_ms <= (int64_t)MS_MAX,
                   "backoff_ms %lld", (long long)t->backoff_ms);
    /* what jobs.h lets a job have, so the worker's deadline (uint64 ns) holds it */
    FUZZ_CHECK(t->timeout_ms <= INT32_MAX, "timeout_ms %lld", (long long)t->timeout_ms);
    FUZZ_CHECK(t->attempts_made < INT_MAX, "atm %d", t->attempts_made);
    FUZZ_CHECK((t->backoff == LN_BACKOFF_CUSTOM) == (t->backoff_type != NULL) &&
                   (t->backoff == LN_BACKOFF_FIXED || t->backoff == LN_BACKOFF_EXPONENTIAL ||
                    t->backoff == LN_BACKOFF_CUSTOM),
               "backoff %d type %s", t->backoff, t->backoff_type ? t->backoff_type : "(none)");
    /* 1 + 2 * atm + HINT_ATM * (keep + 2), keep >= -2 (-2: the job has no
     * removeOnComplete of its own, the worker's applies) */
    if (t->ref.key != 0 && !view)
        FUZZ_CHECK(t->ref.key % 2 == 1 && (int)(t->ref.key % HINT_ATM / 2) == t->attempts_made,
                   "hint %llu for atm %d", (unsigned long long)t->ref.key, t->attempts_made);
}

static void check_same(const ln__job_taken *a, const ln__job_taken *b, size_t row) {
    FUZZ_CHECK(same_str(a->ref.id, b->ref.id) && same_str(a->name, b->name) &&
                   same_str(a->data, b->data) && same_str(a->traceparent, b->traceparent) &&
                   same_str(a->tracestate, b->tracestate) &&
                   same_str(a->backoff_type, b->backoff_type) && a->ref.key == b->ref.key &&
                   a->attempts_started == b->attempts_started &&
                   a->attempts_made == b->attempts_made && a->attempts == b->attempts &&
                   a->backoff == b->backoff && a->backoff_ms == b->backoff_ms &&
                   a->backoff_jitter == b->backoff_jitter && a->timeout_ms == b->timeout_ms,
               "row %zu read otherwise alone", row);
}

/* Row `row` of fields (its six after the head) alone in a reply, its
 * "same as before" name and opts replaced by the rows' resolved ones. */
static void check_alone(field *fields, size_t row, redisReply **resolved,
                        const ln__job_taken *want_t, const ln__redis_token token) {
    redisReply *el[7];
    el[0] = fields[0].ptr;
    for (size_t j = 0; j < 6; j++) el[1 + j] = fields[1 + row * 6 + j].ptr;
    el[2] = resolved[row * 2];
    el[4] = resolved[row * 2 + 1];
    redisReply rep = {.type = REDIS_REPLY_ARRAY, .elements = 7, .element = el};
    ln__job_taken t;
    ln__jobs_step st = {.want = 1, .taken = &t};
    char err[128];
    int rc = ln__redis_step_reply(&rep, &st, (const ln__redis_token *)token, err, sizeof err);
    FUZZ_CHECK(rc == 0 && st.ntaken == 1, "row %zu alone: rc %d (%s)", row, rc, err);
    check_same(want_t, &t, row);
    ln__job_taken_free(&t);
}

/* The views of lib.lua's take_jobs (step.lua's cold path): after the head
 * and a "[" field, VIEW_FIELDS fields per job, each job an array reply. */
#define VIEW_FIELDS 14
static int views_of(field *fields, size_t n, redisReply **el, size_t *nel) {
    static redisReply views[ROWS_MAX + 1];
    static redisReply *members[FIELDS_MAX];
    size_t k = 0;
    el[0] = fields[0].ptr;
    for (size_t at = 2; at < n && k < ROWS_MAX + 1; at += VIEW_FIELDS, k++) {
        size_t m = n - at < VIEW_FIELDS ? n - at : VIEW_FIELDS;
        for (size_t j = 0; j < m; j++) members[at - 2 + j] = fields[at + j].ptr;
        memset(&views[k], 0, sizeof views[k]);
        views[k].type = REDIS_REPLY_ARRAY;
        views[k].elements = m;
        views[k].element = members + (at - 2);
        el[1 + k] = &views[k];
    }
    *nel = 1 + k;
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *buf = fuzz_cstr(data, size), *cur = buf, *s;
    static field fields[FIELDS_MAX];
    redisReply *el[FIELDS_MAX];
    size_t n = 0;
    while (n < FIELDS_MAX && (s = fuzz_field(&cur)) != NULL) {
        make_field(&fields[n], s);
        el[n] = fields[n].ptr;
        n++;
    }
    if (n == 0) {
        free(buf);
        return 0;
    }
    int view = n > 1 && fields[1].r.type == REDIS_REPLY_STRING && fields[1].r.len == 1 &&
               fields[1].r.str[0] == '[';
    size_t nel = n;
    if (view) views_of(fields, n, el, &nel);
    redisReply rep = {.type = REDIS_REPLY_ARRAY, .elements = nel, .element = el};
    static ln__redis_token tokens[ROWS_MAX];
    for (size_t i = 0; i < ROWS_MAX; i++) snprintf(tokens[i], sizeof tokens[i], "tok:%zu", i);
    ln__job_taken taken[ROWS_MAX];
    ln__jobs_step st = {.want = ROWS_MAX, .taken = taken};
    char err[128];
    int rc = ln__redis_step_reply(&rep, &st, tokens, err, sizeof err);
    FUZZ_CHECK(rc == 0 || rc == LN_EBACKEND, "rc %d", rc);
    FUZZ_CHECK(rc == 0 || (st.ntaken == 0 && fuzz_terminated(err, sizeof err)), "error, %zu taken",
               st.ntaken);
    FUZZ_CHECK(st.ntaken <= ROWS_MAX, "ntaken %zu", st.ntaken);
    /* each row's name and opts with "the same as before" resolved */
    redisReply *resolved[2 * ROWS_MAX];
    for (size_t i = 0; i < st.ntaken; i++) {
        check_ranges(&taken[i], tokens[i], view);
        if (view) continue; /* no opts cache: nothing to read alone */
        for (size_t k = 0; k < 2; k++) {
            redisReply *e = fields[1 + i * 6 + (k ? 3 : 1)].ptr;
            resolved[i * 2 + k] =
                e->type == REDIS_REPLY_INTEGER && i > 0 ? resolved[i * 2 - 2 + k] : e;
        }
        check_alone(fields, i, resolved, &taken[i], tokens[i]);
    }
    for (size_t i = 0; i < st.ntaken; i++) ln__job_taken_free(&taken[i]);
    free(buf);
    return 0;
}
