/* redis_view.c - job views from the Redis backend's scripts into the
 * front's structs (see redis_view.h). */
#include "redis_view.h"

#include "internal.h"
#include "redis_backoff.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A job as the scripts return it (job_view in lua/lib.lua). */
enum {
    V_ID,
    V_STATE,
    V_NAME,
    V_DATA,
    V_RESULT,
    V_REASON,
    V_PROGRESS,
    V_TRACEPARENT,
    V_TRACESTATE,
    V_PRIORITY,
    V_LIFO,
    V_ATTEMPTS,
    V_ATM,
    V_ATS,
    V_STC,
    V_BACKOFF,
    V_BACKOFF_MS,
    V_CREATED,
    V_RUN_AT,
    V_STARTED,
    V_FINISHED,
    V_BJITTER, /* opts.backoff.jitter as a text, or nil */
    V_BNAME,   /* a custom opts.backoff.type, or nil */
    V_COUNT
};

/* A job just taken (taken_view in lua/lib.lua). */
enum {
    T_ID,
    T_NAME,
    T_DATA,
    T_TRACEPARENT,
    T_TRACESTATE,
    T_ATS,
    T_ATM,
    T_ATTEMPTS,
    T_BACKOFF,
    T_BACKOFF_MS,
    T_HINT,    /* finish_hint: handed back in the step that completes the job */
    T_TIMEOUT, /* opts.lanesTimeout (ms), 0 = none */
    T_BJITTER, /* as V_BJITTER */
    T_BNAME,   /* as V_BNAME */
    T_COUNT
};

int64_t ln__redis_int_at(const redisReply *a, size_t i) {
    const redisReply *e = a->element[i];
    if (e->type == REDIS_REPLY_INTEGER) return e->integer;
    if (e->type == REDIS_REPLY_STRING) return strtoll(e->str, NULL, 10);
    return 0;
}

/* A copy of string element i in *out (NULL for nil). 0 or LN_ENOMEM. */
int ln__redis_str_at(const redisReply *a, size_t i, char **out) {
    const redisReply *e = a->element[i];
    *out = NULL;
    if (e->type != REDIS_REPLY_STRING) return 0;
    if (!(*out = ln__malloc(e->len + 1))) return LN_ENOMEM;
    memcpy(*out, e->str, e->len);
    (*out)[e->len] = '\0';
    return 0;
}

int ln__redis_is_view(const redisReply *v) {
    return v->type == REDIS_REPLY_ARRAY && v->elements == V_COUNT &&
           v->element[V_ID]->type == REDIS_REPLY_STRING;
}

/* The scripts spell states as ln_job_state_name does. */
static int state_of(const redisReply *v) {
    const redisReply *s = v->element[V_STATE];
    int state = s->type == REDIS_REPLY_STRING ? ln_job_state_parse(s->str) : LN_EINVAL;
    return state >= 0 ? state : LN_JOB_WAITING; /* "unknown": e.g. a BullMQ flow parent */
}

int ln__redis_view_info(const redisReply *v, ln_job_info *info) {
    memset(info, 0, sizeof *info);
    info->state = state_of(v);
    info->priority = (int)ln__redis_int_at(v, V_PRIORITY);
    info->lifo = (int)ln__redis_int_at(v, V_LIFO);
    info->attempts = (int)ln__redis_int_at(v, V_ATTEMPTS);
    info->attempts_made = (int)ln__redis_int_at(v, V_ATM);
    info->attempts_started = (int)ln__redis_int_at(v, V_ATS);
    info->stalled = (int)ln__redis_int_at(v, V_STC);
    info->backoff = ln__redis_int_at(v, V_BACKOFF) ? LN_BACKOFF_EXPONENTIAL : LN_BACKOFF_FIXED;
    info->backoff_ms = ln__redis_int_at(v, V_BACKOFF_MS);
    info->created_ms = ln__redis_int_at(v, V_CREATED);
    info->run_at_ms = ln__redis_int_at(v, V_RUN_AT);
    info->started_ms = ln__redis_int_at(v, V_STARTED);
    info->finished_ms = ln__redis_int_at(v, V_FINISHED);
    if (ln__redis_str_at(v, V_ID, &info->id) || ln__redis_str_at(v, V_NAME, &info->name) ||
        ln__redis_str_at(v, V_DATA, &info->data) || ln__redis_str_at(v, V_RESULT, &info->result) ||
        ln__redis_str_at(v, V_REASON, &info->failed_reason) ||
        ln__redis_str_at(v, V_PROGRESS, &info->progress) ||
        ln__redis_str_at(v, V_TRACEPARENT, &info->traceparent) ||
        ln__redis_str_at(v, V_TRACESTATE, &info->tracestate) ||
        ln__redis_backoff_view(v->element[V_BJITTER], v->element[V_BNAME], &info->backoff,
                               &info->backoff_jitter, &info->backoff_type)) {
        ln_job_info_clear(info);
        return LN_ENOMEM;
    }
    return 0;
}

int ln__redis_is_taken_view(const redisReply *v) {
    return v->type == REDIS_REPLY_ARRAY && v->elements == T_COUNT &&
           v->element[T_ID]->type == REDIS_REPLY_STRING;
}

/* Integer element i of a cut to lo..hi (numbers another program wrote). */
static int64_t int_in(const redisReply *a, size_t i, int64_t lo, int64_t hi) {
    int64_t v = ln__redis_int_at(a, i);
    return v < lo ? lo : v > hi ? hi : v;
}

int ln__redis_view_taken(const redisReply *v, const char *token, ln__job_taken *t) {
    memset(t, 0, sizeof *t);
    snprintf(t->ref.token, sizeof t->ref.token, "%s", token);
    /* as redis_step.c reads a flat row: the worker adds 1 to atm */
    t->attempts_started = (int)int_in(v, T_ATS, 0, INT_MAX);
    t->attempts_made = (int)int_in(v, T_ATM, -INT_MAX, INT_MAX - 1);
    t->attempts = (int)int_in(v, T_ATTEMPTS, 1, INT_MAX);
    t->backoff = ln__redis_int_at(v, T_BACKOFF) ? LN_BACKOFF_EXPONENTIAL : LN_BACKOFF_FIXED;
    t->backoff_ms = ln__redis_int_at(v, T_BACKOFF_MS);
    t->ref.key = (uint64_t)ln__redis_int_at(v, T_HINT);
    t->timeout_ms = int_in(v, T_TIMEOUT, -INT32_MAX, INT32_MAX);
    if (ln__redis_str_at(v, T_ID, &t->ref.id) || ln__redis_str_at(v, T_NAME, &t->name) ||
        ln__redis_str_at(v, T_DATA, &t->data) ||
        ln__redis_str_at(v, T_TRACEPARENT, &t->traceparent) ||
        ln__redis_str_at(v, T_TRACESTATE, &t->tracestate) ||
        ln__redis_backoff_view(v->element[T_BJITTER], v->element[T_BNAME], &t->backoff,
                               &t->backoff_jitter, &t->backoff_type)) {
        ln__job_taken_free(t);
        return LN_ENOMEM;
    }
    return 0;
}

/* A row's cursor: "r<state>.<position>:<id>" (list.lua's positions). */
char *ln__redis_cursor(int state, const redisReply *pos, const char *id) {
    if (pos->type != REDIS_REPLY_STRING && pos->type != REDIS_REPLY_INTEGER) return NULL;
    char p[64];
    if (pos->type == REDIS_REPLY_INTEGER)
        snprintf(p, sizeof p, "%lld", (long long)pos->integer);
    else
        snprintf(p, sizeof p, "%.*s", (int)pos->len, pos->str);
    size_t len = strlen(p) + strlen(id) + 16;
    char *c = ln__malloc(len);
    if (c != NULL) snprintf(c, len, "r%d.%s:%s", state, p, id);
    return c;
}

/* Split a cursor this store made for state into its position (a number:
 * a score or an offset) and id. 0 or LN_EINVAL. */
int ln__redis_parse_cursor(ln__jobs_be *be, const char *after, int state, char *pos,
                           size_t pos_size, const char **id) {
    int st = -1, used = 0;
    if (sscanf(after, "r%d.%n", &st, &used) == 1 && used > 0 && st != state)
        return ln__jobs_be_err(be, LN_EINVAL,
                               "cursor '%.64s' is from a listing of state %s, not %s", after,
                               ln_job_state_name(st), ln_job_state_name(state));
    const char *p = after + used, *colon = used > 0 ? strchr(p, ':') : NULL;
    if (colon != NULL && colon > p && (size_t)(colon - p) < pos_size && colon[1] != '\0') {
        char *end = NULL;
        memcpy(pos, p, (size_t)(colon - p));
        pos[colon - p] = '\0';
        double v = strtod(pos, &end);
        if (!isfinite(v)) end = NULL; /* "-nan", "1e400" */
        /* lists (waiting, active) and paused: a place, digits only, that
         * the script's numbers hold exactly */
        int place = state == LN_JOB_WAITING || state == LN_JOB_ACTIVE || state == LN_JOB_PAUSED;
        if (place && (strspn(pos, "0123456789") != strlen(pos) || v > 9007199254740991.0))
            end = NULL;
        if (end != NULL && *end == '\0' && (pos[0] == '-' || (pos[0] >= '0' && pos[0] <= '9'))) {
            *id = colon + 1;
            return 0;
        }
    }
    return ln__jobs_be_err(be, LN_EINVAL,
                           "bad cursor '%.64s' (give the cursor of a row a listing of this Redis "
                           "store returned)",
                           after);
}
