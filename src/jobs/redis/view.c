/* view.c - reading jobs on Redis: get.lua, counts.lua, list.lua (by
 * offset or after a cursor), a job's logs list, and whether a queue has
 * work; and the job views the scripts return (job_view and taken_view in
 * lua/lib.lua) read into the front's structs (redis_view.h). */
#include "redis_view.h"

#include "internal.h"
#include "redis_backoff.h"
#include "redis_int.h"
#include "redis_scripts.h"

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
    /* as step.c reads a flat row: the worker adds 1 to atm */
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

/* ------------------------------------------------------ the store's reads */

int ln__redis_get(ln__jobs_be *be, const char *queue, const char *id, ln_job_info *info) {
    ln__redis_be *r = ln__redis_at(be, queue);
    int rc = 0;
    ln__redis_args a = {0};
    ln__redis_args_str(&a, id);
    redisReply *rep = ln__redis_run(r, LN__RS_GET, &a, &rc);
    ln__redis_args_free(&a);
    if (!rep) return rc;
    if (rep->type == REDIS_REPLY_ARRAY && rep->elements == 0) {
        freeReplyObject(rep);
        return ln__jobs_be_err(be, LN_ENOENT, "queue '%s' has no job '%s'", queue, id);
    }
    if (!ln__redis_is_view(rep)) return ln__redis_bad_reply(be, rep, "get");
    rc = ln__redis_view_info(rep, info);
    freeReplyObject(rep);
    return rc ? ln__jobs_be_err(be, rc, "out of memory") : 0;
}

int ln__redis_counts(ln__jobs_be *be, const char *queue, ln_job_counts *c) {
    ln__redis_be *r = ln__redis_at(be, queue);
    int rc = 0;
    ln__redis_args a = {0};
    redisReply *rep = ln__redis_run(r, LN__RS_COUNTS, &a, &rc);
    if (!rep) return rc;
    if (rep->type != REDIS_REPLY_ARRAY || rep->elements != 8)
        return ln__redis_bad_reply(be, rep, "counts");
    uint64_t *f[] = {&c->waiting,   &c->delayed, &c->prioritized, &c->active,
                     &c->completed, &c->failed,  &c->paused,      &c->waiting_children};
    for (size_t i = 0; i < 8; i++) *f[i] = (uint64_t)ln__redis_int_at(rep, i);
    freeReplyObject(rep);
    return 0;
}

/* list.lua's reply {views, positions}: each view with its position (an
 * integer or a score) for its cursor (ln__redis_cursor). */
static int page_shaped(const redisReply *rep) {
    if (rep->type != REDIS_REPLY_ARRAY || rep->elements != 2 ||
        rep->element[0]->type != REDIS_REPLY_ARRAY || rep->element[1]->type != REDIS_REPLY_ARRAY ||
        rep->element[0]->elements != rep->element[1]->elements)
        return 0;
    const redisReply *views = rep->element[0], *poss = rep->element[1];
    for (size_t i = 0; i < views->elements; i++)
        if (!ln__redis_is_view(views->element[i]) ||
            (poss->element[i]->type != REDIS_REPLY_STRING &&
             poss->element[i]->type != REDIS_REPLY_INTEGER))
            return 0;
    return 1;
}

static int page(ln__jobs_be *be, const char *queue, int state, size_t offset, const char *after,
                size_t limit, ln_job_info **out, size_t *n) {
    *out = NULL;
    *n = 0;
    int rc = 0;
    char pos[64];
    const char *after_id = NULL;
    if (after != NULL &&
        (rc = ln__redis_parse_cursor(be, after, state, pos, sizeof pos, &after_id)))
        return rc;
    ln__redis_be *r = ln__redis_at(be, queue);
    ln__redis_args a = {0};
    ln__redis_args_str(&a, ln_job_state_name(state));
    ln__redis_args_i64(&a, (int64_t)offset);
    ln__redis_args_i64(&a, (int64_t)limit);
    if (after_id != NULL) {
        ln__redis_args_str(&a, pos);
        ln__redis_args_str(&a, after_id);
    }
    redisReply *rep = ln__redis_run(r, LN__RS_LIST, &a, &rc);
    ln__redis_args_free(&a);
    if (!rep) return rc;
    if (!page_shaped(rep)) return ln__redis_bad_reply(be, rep, "list");
    const redisReply *views = rep->element[0], *poss = rep->element[1];
    size_t count = views->elements;
    ln_job_info *infos = count ? ln__calloc(count, sizeof *infos) : NULL;
    if (count && !infos) rc = LN_ENOMEM;
    for (size_t i = 0; !rc && i < count; i++) {
        if ((rc = ln__redis_view_info(views->element[i], &infos[i])) >= 0 &&
            (infos[i].cursor = ln__redis_cursor(state, poss->element[i], infos[i].id)) == NULL)
            rc = LN_ENOMEM;
        if (rc < 0) ln_job_info_free_array(infos, i + 1), infos = NULL;
    }
    freeReplyObject(rep);
    if (rc) return ln__jobs_be_err(be, rc, "out of memory");
    *out = infos;
    *n = count;
    return 0;
}

int ln__redis_list(ln__jobs_be *be, const char *queue, int state, size_t offset, size_t limit,
                   ln_job_info **out, size_t *n) {
    return page(be, queue, state, offset, NULL, limit, out, n);
}

int ln__redis_list_after(ln__jobs_be *be, const char *queue, int state, const char *after,
                         size_t limit, ln_job_info **out, size_t *n) {
    return page(be, queue, state, 0, after, limit, out, n);
}

/* The lines of LRANGE's reply rep (freed), ln__malloc'd. */
static int copy_lines(ln__jobs_be *be, redisReply *rep, const char *id, char ***lines, size_t *n) {
    if (rep->type != REDIS_REPLY_ARRAY) return ln__redis_bad_reply(be, rep, "LRANGE");
    char **out = rep->elements ? ln__calloc(rep->elements, sizeof *out) : NULL;
    int rc = rep->elements && !out ? LN_ENOMEM : 0;
    for (size_t i = 0; !rc && i < rep->elements; i++) {
        if ((rc = ln__redis_str_at(rep, i, &out[i])) == 0 && !out[i]) rc = LN_EBACKEND;
    }
    size_t count = rep->elements;
    freeReplyObject(rep);
    if (rc) {
        for (size_t i = 0; i < count; i++) ln__free(out[i]);
        ln__free(out);
        return ln__jobs_be_err(be, rc, "reading the logs of job '%s' failed", id);
    }
    *lines = out;
    *n = count;
    return 0;
}

int ln__redis_logs(ln__jobs_be *be, const char *queue, const char *id, char ***lines, size_t *n) {
    ln__redis_be *r = ln__redis_at(be, queue);
    *lines = NULL;
    *n = 0;
    int rc = 0;
    size_t klen = strlen(r->key) + strlen(id); /* the id: any length */
    char *jkey = ln__malloc(2 * klen + 7), *lkey = jkey + klen + 1;
    if (!jkey) return ln__jobs_be_err(be, LN_ENOMEM, "out of memory");
    snprintf(jkey, klen + 1, "%s%s", r->key, id);
    snprintf(lkey, klen + 6, "%s%s:logs", r->key, id);
    redisReply *rep = ln__redis_cmd(r, 2, (const char *[]){"EXISTS", jkey}, &rc);
    if (!rep) {
        ln__free(jkey);
        return rc;
    }
    int exists = rep->type == REDIS_REPLY_INTEGER && rep->integer == 1;
    freeReplyObject(rep);
    rep = exists ? ln__redis_cmd(r, 4, (const char *[]){"LRANGE", lkey, "0", "-1"}, &rc) : NULL;
    ln__free(jkey); /* and lkey, in the same block */
    if (!exists) return ln__jobs_be_err(be, LN_ENOENT, "queue '%s' has no job '%s'", queue, id);
    if (!rep) return rc;
    return copy_lines(be, rep, id, lines, n);
}

int ln__redis_pending(ln__jobs_be *be, const char *queue, int *pending) {
    ln__redis_be *r = ln__redis_at(be, queue);
    int rc = 0;
    static const char *const sets[] = {"wait", "prioritized", "delayed", "active"};
    char keys[4][LN__REDIS_BASE_MAX + 16];
    const char *argv[5] = {"EXISTS"};
    for (int i = 0; i < 4; i++) {
        snprintf(keys[i], sizeof keys[i], "%s%s", r->key, sets[i]);
        argv[i + 1] = keys[i];
    }
    redisReply *rep = ln__redis_cmd(r, 5, argv, &rc);
    if (!rep) return rc;
    *pending = rep->type == REDIS_REPLY_INTEGER && rep->integer > 0;
    freeReplyObject(rep);
    return 0;
}
