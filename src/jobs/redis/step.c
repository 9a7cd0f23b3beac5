/* step.c - the worker round trip on Redis: one step.lua call records
 * the outcomes, renews the leases, promotes due delayed jobs and takes new
 * ones, atomically; its arguments and reply (redis_step.h) are shared with
 * the pipelined steps (pipe.c). A job held under a lease also gets its
 * progress and log lines here (touch.lua). */
#include "redis_step.h"

#include "backoff.h"
#include "internal.h"
#include "redis_codes.h"
#include "redis_int.h"
#include "redis_replicas.h"
#include "redis_scripts.h"
#include "redis_view.h"
#include "utf8.h"

#include <jansson.h>

#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The finish hint a take leaves in ref.key for the step that completes the
 * job, the same number lib.lua's finish_hint makes for the views of its
 * take_jobs: 1 + 2 * atm + HINT_ATM * (removeOnComplete count + 2), atm the
 * job's attemptsMade at take, or 0 when the completion needs step.lua's
 * full path (lib.lua's finish_job: a deduplication id, a removeOnComplete
 * with an age, numbers out of range). */
#define HINT_ATM 2097152 /* 2^21 */
#define HINT_ATM_MAX 1048576
#define HINT_COUNT_MAX 1073741822

void ln__redis_step_tokens(const char *base, uint64_t *seq, ln__redis_token *tokens, size_t n) {
    for (size_t i = 0; i < n; i++)
        snprintf(tokens[i], sizeof tokens[i], "%s:%" PRIu64, base, ++*seq);
}

/* The removeOnComplete count a planned completion sends: the job's own,
 * or for a job without one (-2) the worker's retention as a count (-1
 * keeps all), or INT64_MIN when only the full path can apply it (an age). */
static int64_t planned_keep(int64_t own, const ln_job_keep *worker) {
    if (own != -2) return own;
    switch (worker->mode) {
    case LN_KEEP_NONE:
        return 0;
    case LN_KEEP_COUNT:
        return worker->value < HINT_COUNT_MAX ? worker->value : INT64_MIN;
    case LN_KEEP_AGE:
        return INT64_MIN;
    default:
        return -1;
    }
}

/* A worker's retention as step.lua's count and age ms ("-1" none). */
static void push_worker_keep(ln__redis_args *a, const ln_job_keep *k) {
    ln__redis_args_i64(a, k->mode == LN_KEEP_NONE ? 0 : k->mode == LN_KEEP_COUNT ? k->value : -1);
    ln__redis_args_i64(a, k->mode == LN_KEEP_AGE ? k->value : -1);
}

void ln__redis_step_args(ln__redis_args *a, const ln__jobs_step *st, const char *worker,
                         const ln__redis_token *tokens) {
    ln__redis_args_i64(a, st->lease_ms);
    ln__redis_args_str(a, worker); /* stored as 'pb', BullMQ's processedBy */
    ln__redis_args_i64(a, (int64_t)st->ndone);
    ln__redis_args_i64(a, (int64_t)st->nrenew);
    ln__redis_args_i64(a, (int64_t)st->want);
    ln__redis_args_i64(a, st->rate_max); /* the worker's rate limit, 0 = none */
    ln__redis_args_i64(a, st->rate_duration_ms);
    ln__redis_args_str(a, st->no_active_event ? "0" : "1"); /* the 'active' event */
    for (size_t i = 0; i < st->ndone; i++) {
        const ln__job_done *d = &st->done[i];
        ln__redis_args_str(a, d->ref.id);
        ln__redis_args_str(a, d->ref.token);
        ln__redis_args_str(a, d->kind == LN__DONE_COMPLETE  ? "c"
                              : d->kind == LN__DONE_RETRY   ? "r"
                              : d->kind == LN__DONE_DELAY   ? "d"
                              : d->kind == LN__DONE_LIMITED ? "l"
                                                            : "f");
        ln__redis_args_str(a, d->kind == LN__DONE_COMPLETE ? (d->result ? d->result : "null")
                              : d->kind == LN__DONE_DELAY || d->kind == LN__DONE_LIMITED
                                  ? ""
                                  : d->reason);
        int64_t keep = d->kind == LN__DONE_COMPLETE && d->ref.key > 0
                           ? planned_keep((int64_t)(d->ref.key / HINT_ATM) - 2, &st->keep_complete)
                           : INT64_MIN;
        if (keep != INT64_MIN) {
            /* planned at take: the removeOnComplete count, the new atm */
            ln__redis_args_i64(a, keep);
            ln__redis_args_i64(a, (int64_t)(d->ref.key % HINT_ATM / 2) + 1);
        } else { /* the full path: the delay (0 for a completion), no atm */
            ln__redis_args_i64(a, d->kind == LN__DONE_RETRY || d->kind == LN__DONE_LIMITED
                                      ? d->delay_ms
                                  : d->kind == LN__DONE_DELAY ? d->run_at_ms
                                                              : 0);
            ln__redis_args_str(a, "");
        }
    }
    for (size_t i = 0; i < st->nrenew; i++) {
        ln__redis_args_str(a, st->renew[i].id);
        ln__redis_args_str(a, st->renew[i].token);
    }
    for (size_t i = 0; i < st->want; i++) ln__redis_args_str(a, tokens[i]);
    ln__redis_args_i64(a, st->metrics_max_points); /* lib.lua collect_step_metrics */
    push_worker_keep(a, &st->keep_complete);       /* last 4: lib.lua's worker_keep */
    push_worker_keep(a, &st->keep_fail);
}

/* ---------------------------------------------- the jobs a step took */

/* What a job's opts say to a worker, parsed here rather than in the script
 * (cjson per job was a third of the script's time). Kept for the next row
 * while its opts text is the same (jobs added together share it). */
typedef struct opts_plan {
    const char *raw; /* the reply's opts text this plan is of, or NULL */
    size_t len;
    int attempts; /* max(1, opts.attempts) */
    int backoff;  /* LN_BACKOFF_* */
    int64_t backoff_ms;
    double backoff_jitter;          /* opts.backoff.jitter, 0..1 */
    char *backoff_type;             /* LN_BACKOFF_CUSTOM: opts.backoff.type */
    char *traceparent, *tracestate; /* from opts.tm, or NULL */
    int64_t keep;       /* removeOnComplete as a count (-1 all), or INT64_MIN: full path */
    int64_t timeout_ms; /* opts.lanesTimeout (jobs.h ln_job_opts.timeout_ms), 0 = none */
} opts_plan;

static void plan_clear(opts_plan *p) {
    ln__free(p->traceparent);
    ln__free(p->tracestate);
    ln__free(p->backoff_type);
    memset(p, 0, sizeof *p);
}

/* Lua's math.floor(tonumber(v) or 0) for a decoded JSON value; *ok 0 when
 * tonumber would give nil. */
static double lua_num(const json_t *v, int *ok) {
    *ok = 1;
    if (json_is_number(v)) return floor(json_number_value(v));
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        char *end;
        double d = strtod(s, &end);
        if (end != s && *end == '\0') return floor(d);
    }
    *ok = 0;
    return 0;
}

/* lib.lua's keep_spec for removeOnComplete, as a count, for the plain
 * cases only: absent (-2: the worker's retention applies, see
 * planned_keep), false (-1), true (0), a whole number, {count: N} without
 * an age. Anything else: INT64_MIN (the script decides). */
static int64_t keep_count(const json_t *v) {
    int ok;
    double c;
    if (!v) return -2;
    if (json_is_false(v) || json_is_null(v) || json_is_string(v)) return -1;
    if (json_is_true(v)) return 0;
    if (json_is_number(v)) {
        c = json_number_value(v);
    } else if (json_is_object(v) && !json_object_get(v, "age")) {
        const json_t *n = json_object_get(v, "count");
        c = n ? lua_num(n, &ok) : -1;
        if (n && !ok) c = -1;
    } else {
        return INT64_MIN;
    }
    if (c != floor(c) || c < -1 || c >= HINT_COUNT_MAX) return INT64_MIN;
    return (int64_t)c;
}

/* BullMQ's telemetry carrier in opts.tm: a JSON text {"traceparent": ...}. */
static int plan_trace(opts_plan *p, const json_t *tm) {
    if (!json_is_string(tm)) return 0;
    json_t *c = json_loads(json_string_value(tm), JSON_DECODE_ANY, NULL);
    const json_t *tp = json_object_get(c, "traceparent"), *ts = json_object_get(c, "tracestate");
    int rc = 0;
    if (json_is_string(tp) && !(p->traceparent = ln__strdup(json_string_value(tp)))) rc = LN_ENOMEM;
    if (json_is_string(ts) && !(p->tracestate = ln__strdup(json_string_value(ts)))) rc = LN_ENOMEM;
    json_decref(c);
    return rc;
}

/* opts text that jansson refused, read again from a copy where what Lua's
 * cjson takes and jansson does not is replaced: a byte outside UTF-8 by
 * '?' (BullMQ's scripts store a lone surrogate of a job id as ED A0 BD)
 * and a \uD800..\uDFFF escape by \ufffd. Only numbers and flags are read
 * from it. NULL: still refused, or out of memory. */
static json_t *load_repaired(const char *s, size_t n) {
    char *t = ln__malloc(n + 1);
    if (t == NULL) return NULL;
    memcpy(t, s, n);
    for (size_t i = 0; i < n;) {
        if (t[i] == '\\' && i + 1 < n) {
            if (t[i + 1] == 'u' && i + 5 < n && (t[i + 2] | 0x20) == 'd' && t[i + 3] != '\0' &&
                strchr("89abcdefABCDEF", t[i + 3]) != NULL)
                memcpy(t + i + 2, "fffd", 4);
            i += 2;
            continue;
        }
        size_t len = ln__utf8_seq((const unsigned char *)t + i, n - i);
        if (len == 0) t[i] = '?';
        i += len ? len : 1;
    }
    json_t *o = json_loadb(t, n, JSON_DECODE_INT_AS_REAL | JSON_ALLOW_NUL, NULL);
    ln__free(t);
    return o;
}

/* d as an integer for a field another program wrote (a Lua or JavaScript
 * number: any double): cut to -max..max, NaN 0, so no cast is undefined. */
static int64_t clamp_whole(double d, double max) {
    return d != d ? 0 : d > max ? (int64_t)max : d < -max ? -(int64_t)max : (int64_t)d;
}

/* Most ms a delay or timeout read from opts can be: JavaScript's Date
 * range, beyond which BullMQ's own arithmetic has no meaning either. */
#define OPTS_MS_MAX 8.64e15

/* An object opts.backoff into p, as lib.lua's backoff_of reads it: a
 * string type other than fixed and exponential is a custom one (a type
 * that is no string reads as fixed), a number jitter is cut to 0..1.
 * 0 or LN_ENOMEM. */
static int plan_backoff(opts_plan *p, const json_t *b) {
    int ok;
    const json_t *type = json_object_get(b, "type"), *jitter = json_object_get(b, "jitter");
    const char *t = json_is_string(type) ? json_string_value(type) : "fixed";
    p->backoff = !strcmp(t, "exponential") ? LN_BACKOFF_EXPONENTIAL
                 : !strcmp(t, "fixed")     ? LN_BACKOFF_FIXED
                                           : LN_BACKOFF_CUSTOM;
    p->backoff_ms = clamp_whole(lua_num(json_object_get(b, "delay"), &ok), OPTS_MS_MAX);
    if (json_is_number(jitter))
        p->backoff_jitter = ln__backoff_clamp_jitter(json_number_value(jitter));
    if (p->backoff == LN_BACKOFF_CUSTOM && (p->backoff_type = ln__strdup(t)) == NULL)
        return LN_ENOMEM;
    return 0;
}

/* Parse a job's opts text into p, as lib.lua's decode_opts, backoff_of,
 * trace_of and keep_spec read it (bad JSON reads as {}). */
static int plan_opts(opts_plan *p, const redisReply *raw) {
    plan_clear(p);
    p->attempts = 1;
    p->backoff = LN_BACKOFF_FIXED;
    p->keep = -2; /* no opts, or bad JSON: no removeOnComplete of its own */
    p->timeout_ms = 0;
    if (raw->type == REDIS_REPLY_INTEGER) return LN_EBACKEND; /* "same" with no row before */
    if (raw->type != REDIS_REPLY_STRING) return 0;
    p->raw = raw->str;
    p->len = raw->len;
    json_t *o = json_loadb(raw->str, raw->len, JSON_DECODE_INT_AS_REAL, NULL); /* Lua numbers */
    if (o == NULL) o = load_repaired(raw->str, raw->len);
    if (!json_is_object(o)) {
        json_decref(o);
        return 0;
    }
    int ok;
    double n = lua_num(json_object_get(o, "attempts"), &ok);
    p->attempts = n > 1 ? (n < INT32_MAX ? (int)n : INT32_MAX) : 1;
    const json_t *b = json_object_get(o, "backoff");
    if (json_is_object(b)) {
        if (plan_backoff(p, b) != 0) {
            json_decref(o);
            return LN_ENOMEM;
        }
    } else if (json_is_number(b)) {
        p->backoff_ms = clamp_whole(lua_num(b, &ok), OPTS_MS_MAX);
    }
    p->keep = keep_count(json_object_get(o, "removeOnComplete"));
    if (json_object_get(o, "parent")) p->keep = INT64_MIN; /* a flow child: lib_flow.lua */
    /* jobs.h's range of a job's timeout, which the worker's deadline in ns holds */
    p->timeout_ms = clamp_whole(lua_num(json_object_get(o, "lanesTimeout"), &ok), INT32_MAX);
    int rc = plan_trace(p, json_object_get(o, "tm"));
    json_decref(o);
    return rc;
}

/* step.lua's batch take: R_COUNT values per job, flat in the reply after
 * its 3 heads; R_ATM is an array {atm} when the job has a deduplication id. */
enum { R_ID, R_NAME, R_DATA, R_OPTS, R_ATS, R_ATM, R_COUNT };

/* The R_COUNT values from v->element[at] as a row of their own (a
 * redisReply array borrowing them), or 0 when they are not a row. */
static int flat_row(const redisReply *v, size_t at, redisReply *row) {
    if (at + R_COUNT > v->elements || v->element[at + R_ID]->type != REDIS_REPLY_STRING) return 0;
    memset(row, 0, sizeof *row);
    row->type = REDIS_REPLY_ARRAY;
    row->elements = R_COUNT;
    row->element = v->element + at;
    return 1;
}

/* Is the plan of the previous row valid for this one's opts? true (an
 * integer 1) says "the same as the previous row's" (step.lua's
 * take_popped); a text is compared in case. */
static int same_text(const opts_plan *p, const redisReply *raw) {
    if (raw->type == REDIS_REPLY_INTEGER) return p->attempts != 0; /* some row planned */
    return raw->type == REDIS_REPLY_STRING
               ? p->raw && p->len == raw->len && !memcmp(p->raw, raw->str, raw->len)
               : p->raw == NULL && p->attempts; /* planned, no opts */
}

/* The job's name: its text, or the previous row's (*prev) when true. */
static int row_name(const redisReply *v, const char **prev, char **out) {
    const redisReply *e = v->element[R_NAME];
    if (e->type == REDIS_REPLY_STRING)
        *prev = e->str;
    else if (e->type != REDIS_REPLY_INTEGER || !*prev)
        return LN_EBACKEND;
    return (*out = ln__strdup(*prev)) ? 0 : LN_ENOMEM;
}

/* Fill *t from row v of a job taken under token; plan caches the opts,
 * *prev_name the previous row's name. 0, LN_EBACKEND (a malformed row) or
 * LN_ENOMEM, with *t cleared. */
static int taken_of_row(const redisReply *v, const char *token, opts_plan *plan,
                        const char **prev_name, ln__job_taken *t) {
    memset(t, 0, sizeof *t);
    int rc = same_text(plan, v->element[R_OPTS]) ? 0 : plan_opts(plan, v->element[R_OPTS]);
    if (!rc) rc = row_name(v, prev_name, &t->name);
    snprintf(t->ref.token, sizeof t->ref.token, "%s", token);
    const redisReply *atm = v->element[R_ATM];
    int deid = atm->type == REDIS_REPLY_ARRAY;
    if (deid && atm->elements == 1) atm = atm->element[0];
    double made = atm->type == REDIS_REPLY_STRING ? floor(strtod(atm->str, NULL)) : 0;
    int64_t ats = ln__redis_int_at(v, R_ATS);
    t->attempts_started = ats < 0 ? 0 : ats > INT_MAX ? INT_MAX : (int)ats;
    t->attempts_made = (int)clamp_whole(made, INT_MAX - 1); /* the worker adds the failed run */
    t->attempts = plan->attempts;
    t->backoff = plan->backoff;
    t->backoff_ms = plan->backoff_ms;
    t->backoff_jitter = plan->backoff_jitter;
    t->timeout_ms = plan->timeout_ms;
    if (plan->keep != INT64_MIN && !deid && made >= 0 && made < HINT_ATM_MAX)
        t->ref.key = 1 + 2 * (uint64_t)made + (uint64_t)HINT_ATM * (uint64_t)(plan->keep + 2);
    if (!rc && (ln__redis_str_at(v, R_ID, &t->ref.id) || ln__redis_str_at(v, R_DATA, &t->data) ||
                (plan->traceparent && !(t->traceparent = ln__strdup(plan->traceparent))) ||
                (plan->tracestate && !(t->tracestate = ln__strdup(plan->tracestate))) ||
                (plan->backoff_type && !(t->backoff_type = ln__strdup(plan->backoff_type)))))
        rc = LN_ENOMEM;
    if (rc) ln__job_taken_free(t);
    return rc;
}

/* 0, or a leave_active code (LN__RC_*, redis_codes.h): not ours any more. */
static int stale_or_ok(int64_t code) {
    if (code == LN__RC_PENDING_DEPS) return LN__DONE_PENDING_DEPS; /* the worker fails it */
    return code == 0 ? 0 : LN_ESTALE;
}

int ln__redis_step_reply(const redisReply *rep, ln__jobs_step *st, const ln__redis_token *tokens,
                         char *err, size_t err_size) {
    st->ntaken = 0;
    st->next_due_ms = -1;
    st->limited_ms = 0;
    /* {done codes..., renew codes..., next due, taken...}; the taken jobs
     * flat rows (step.lua's batch take) or views (take_jobs) */
    size_t h = st->ndone + st->nrenew; /* the next due's index */
    int shaped = rep->type == REDIS_REPLY_ARRAY && rep->elements > h;
    int flat = shaped && rep->elements > h + 1 && rep->element[h + 1]->type == REDIS_REPLY_STRING;
    size_t ntaken = !shaped ? 0 : flat ? (rep->elements - h - 1) / R_COUNT : rep->elements - h - 1;
    for (size_t i = 0; shaped && i < h; i++)
        if (rep->element[i]->type != REDIS_REPLY_INTEGER) shaped = 0;
    if (!shaped || (flat && (rep->elements - h - 1) % R_COUNT != 0) || ntaken > st->want) {
        snprintf(err, err_size, "redis: unexpected reply to step");
        return LN_EBACKEND;
    }
    for (size_t i = 0; i < st->ndone; i++) st->done[i].rc = stale_or_ok(ln__redis_int_at(rep, i));
    for (size_t i = 0; i < st->nrenew; i++)
        st->renew_rc[i] = ln__redis_int_at(rep, st->ndone + i) == 1 ? 0 : LN_ESTALE;
    const redisReply *due = rep->element[h]; /* {ms}: rate limited */
    if (due->type == REDIS_REPLY_ARRAY && due->elements == 1)
        st->limited_ms = ln__redis_int_at(due, 0);
    else
        st->next_due_ms = ln__redis_int_at(rep, h);
    int rc = 0;
    opts_plan plan = {0};
    const char *prev_name = NULL;
    for (size_t i = 0; i < ntaken && !rc; i++) {
        ln__job_taken *t = &st->taken[st->ntaken];
        redisReply row;
        if (flat)
            rc = flat_row(rep, h + 1 + i * R_COUNT, &row)
                     ? taken_of_row(&row, tokens[i], &plan, &prev_name, t)
                     : LN_EBACKEND;
        else if (ln__redis_is_taken_view(rep->element[h + 1 + i])) /* lib.lua's take_jobs */
            rc = ln__redis_view_taken(rep->element[h + 1 + i], tokens[i], t);
        else
            rc = LN_EBACKEND;
        if (rc == 0)
            st->ntaken++;
        else
            snprintf(err, err_size,
                     rc == LN_ENOMEM ? "out of memory" : "redis: unexpected reply to step");
    }
    plan_clear(&plan);
    if (rc) {
        for (size_t i = 0; i < st->ntaken; i++) ln__job_taken_free(&st->taken[i]);
        st->ntaken = 0;
    }
    return rc;
}

/* ----------------------------------------------------- the store's step */

int ln__redis_step(ln__jobs_be *be, const char *queue, ln__jobs_step *st) {
    ln__redis_be *r = ln__redis_at(be, queue);
    st->ntaken = 0;
    st->next_due_ms = -1;
    int rc = 0;
    ln__redis_token *tokens = st->want ? ln__malloc(st->want * sizeof *tokens) : NULL;
    if (st->want && !tokens) return ln__jobs_be_err(be, LN_ENOMEM, "out of memory");
    ln__redis_step_tokens(r->token_base, &r->token_seq, tokens, st->want);
    ln__redis_args a = {0};
    ln__redis_step_args(&a, st, r->worker, tokens);
    redisReply *rep = ln__redis_run(r, LN__RS_STEP, &a, &rc);
    ln__redis_args_free(&a);
    if (rep) {
        rc = ln__redis_step_reply(rep, st, tokens, be->errmsg, sizeof be->errmsg);
        freeReplyObject(rep);
        if (rc == 0) ln__redis_wait_step(&r->conn, st); /* wait_replicas */
    }
    ln__free(tokens);
    return rc;
}

/* touch.lua: what ("progress" or "log") of a job held with ref's token. */
static int touch(ln__jobs_be *be, const char *queue, const ln__job_ref *ref, const char *what,
                 const char *value) {
    ln__redis_be *r = ln__redis_at(be, queue);
    int rc = 0;
    ln__redis_args a = {0};
    ln__redis_args_str(&a, ref->id);
    ln__redis_args_str(&a, ref->token);
    ln__redis_args_str(&a, what);
    ln__redis_args_str(&a, value);
    int64_t res = 0;
    if ((rc = ln__redis_run_int(r, LN__RS_TOUCH, &a, &res)) < 0) return rc;
    if (res < 0)
        return ln__jobs_be_err(be, LN_ESTALE, "job '%s': lock lost (%s)", ref->id,
                               res == LN__RC_JOB_NOT_EXIST    ? "job removed"
                               : res == LN__RC_LOCK_NOT_EXIST ? "lock expired"
                                                              : "another worker holds it");
    return 0;
}

int ln__redis_progress(ln__jobs_be *be, const char *queue, const ln__job_ref *ref,
                       const char *json) {
    return touch(be, queue, ref, "progress", json);
}

int ln__redis_log(ln__jobs_be *be, const char *queue, const ln__job_ref *ref, const char *line) {
    return touch(be, queue, ref, "log", line);
}
