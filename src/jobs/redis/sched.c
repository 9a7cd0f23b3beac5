/* sched.c - job schedulers on Redis (lua/sched.lua): BullMQ 6.7's
 * keys and fields, so Node and C share schedules both ways. What is
 * computed here and what in the script follows BullMQ: a pattern's next
 * time in C (cron.c, as BullMQ's JavaScript does with cron-parser), an
 * every schedule's in the script (as BullMQ's Lua does). A worker that
 * takes an iteration calls ln__redis_sched_taken: "peek" (is it the
 * current iteration, and its opts.repeat), then "next" with the time.
 * docs/internals/schedules.md. */
#include "redis_int.h"

#include "internal.h"
#include "redis_backoff.h"
#include "redis_codes.h"
#include "redis_scripts.h"
#include "redis_view.h"

#include <jansson.h>

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int bad(ln__jobs_be *be, redisReply *rep, const char *what) {
    if (rep != NULL) freeReplyObject(rep);
    return ln__jobs_be_err(be, LN_EBACKEND, "redis: unexpected reply to %s", what);
}

static redisReply *run(ln__redis_be *r, ln__redis_args *a, int *rc) {
    return ln__redis_run(r, LN__RS_SCHED, a, rc);
}

/* The server's clock (TIME) in ms: the scripts' clock. */
static int server_now(ln__redis_be *r, int64_t *now) {
    ln__jobs_be *be = &r->base;
    int rc;
    redisReply *rep = ln__redis_cmd(r, 1, (const char *[]){"TIME"}, &rc);
    if (rep == NULL) return rc;
    if (rep->type != REDIS_REPLY_ARRAY || rep->elements != 2 ||
        rep->element[0]->type != REDIS_REPLY_STRING || rep->element[1]->type != REDIS_REPLY_STRING)
        return bad(be, rep, "TIME");
    *now = strtoll(rep->element[0]->str, NULL, 10) * 1000 +
           strtoll(rep->element[1]->str, NULL, 10) / 1000;
    freeReplyObject(rep);
    return 0;
}

/* jobs.h's ln_job_keep as BullMQ's removeOnComplete/removeOnFail. */
static json_t *keep_json(const ln_job_keep *k) {
    switch (k->mode) {
    case LN_KEEP_NONE:
        return json_true();
    case LN_KEEP_COUNT:
        return json_integer(k->value);
    case LN_KEEP_AGE:
        return json_pack("{s:f}", "age", (double)k->value / 1000.0);
    case LN_KEEP_ALWAYS:
        return json_false();
    default:
        return NULL;
    }
}

/* The template's options in BullMQ's stored form (add.lua's, but built
 * here): the text the scheduler hash keeps as 'opts'. */
static char *template_opts(const ln_job_opts *o) {
    json_t *j = json_pack("{s:i}", "attempts", o->attempts);
    if (j == NULL) return NULL;
    json_t *b = ln__redis_backoff_json(o); /* NULL: none */
    if (b != NULL) json_object_set_new(j, "backoff", b);
    if (o->priority > 0) json_object_set_new(j, "priority", json_integer(o->priority));
    if (o->lifo) json_object_set_new(j, "lifo", json_true());
    json_t *rc = keep_json(&o->remove_on_complete), *rf = keep_json(&o->remove_on_fail);
    if (rc != NULL) json_object_set_new(j, "removeOnComplete", rc);
    if (rf != NULL) json_object_set_new(j, "removeOnFail", rf);
    if (o->timeout_ms > 0) json_object_set_new(j, "lanesTimeout", json_integer(o->timeout_ms));
    char *text = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    char *copy = text != NULL ? ln__strdup(text) : NULL;
    free(text);
    return copy;
}

int ln__redis_sched_upsert(ln__jobs_be *be, const char *queue, const ln__sched_new *s,
                           char **job_id) {
    ln__redis_be *r = ln__redis_at(be, queue);
    int64_t now = 0, next, offset;
    *job_id = NULL;
    int rc = server_now(r, &now);
    if (rc != 0) return rc;
    rc = ln__sched_new_next(s, 0, LN__CRON_NONE, now, 0, &next, &offset, be->errmsg,
                            LN__JOBS_ERRMSG_MAX);
    if (rc != 0 || next == LN__CRON_NONE) return rc; /* makes none: nothing changes */
    char *topts = template_opts(&s->opts);
    if (topts == NULL) return ln__jobs_be_err(be, LN_ENOMEM, "out of memory");
    ln__redis_args a = {0};
    ln__redis_args_str(&a, "upsert");
    ln__redis_args_str(&a, s->id);
    ln__redis_args_i64(&a, next);
    ln__redis_args_str(&a, s->name);
    ln__redis_args_mem(&a, s->data, s->data_len);
    ln__redis_args_i64(&a, s->every);
    ln__redis_args_str(&a, s->pattern ? s->pattern : "");
    ln__redis_args_str(&a, s->tz ? s->tz : "");
    ln__redis_args_i64(&a, s->start_ms);
    ln__redis_args_i64(&a, s->end_ms);
    if (s->limit >= 0)
        ln__redis_args_i64(&a, s->limit);
    else
        ln__redis_args_str(&a, "");
    ln__redis_args_str(&a, topts);
    redisReply *rep = run(r, &a, &rc);
    ln__redis_args_free(&a);
    ln__free(topts);
    if (rep == NULL) return rc;
    if (rep->type == REDIS_REPLY_INTEGER && rep->integer == LN__RC_SCHEDULER_ID_TAKEN) {
        freeReplyObject(rep);
        return ln__jobs_be_err(
            be, LN_EEXIST, "scheduler '%s': the job of its next iteration exists already", s->id);
    }
    if (rep->type != REDIS_REPLY_ARRAY || rep->elements != 2 ||
        rep->element[0]->type != REDIS_REPLY_STRING)
        return bad(be, rep, "schedule");
    rc = ln__redis_str_at(rep, 0, job_id) ? ln__jobs_be_err(be, LN_ENOMEM, "out of memory") : 0;
    freeReplyObject(rep);
    return rc;
}

int ln__redis_sched_remove(ln__jobs_be *be, const char *queue, const char *id) {
    ln__redis_be *r = ln__redis_at(be, queue);
    int rc = 0;
    ln__redis_args a = {0};
    ln__redis_args_str(&a, "remove");
    ln__redis_args_str(&a, id);
    redisReply *rep = run(r, &a, &rc);
    ln__redis_args_free(&a);
    if (rep == NULL) return rc;
    if (rep->type != REDIS_REPLY_INTEGER) return bad(be, rep, "unschedule");
    int missing = rep->integer != 0;
    freeReplyObject(rep);
    return missing ? ln__jobs_be_err(be, LN_ENOENT, "no scheduler '%s'", id) : 0;
}

/* ------------------------------------------------------- reading them */

static int64_t num(const char *s) {
    return s != NULL ? strtoll(s, NULL, 10) : 0;
}

/* d as an integer when one holds it, else 0 (another program may have
 * stored anything: "inf", 1e300). */
static int64_t whole(double d, double max) {
    return d >= -max && d <= max ? (int64_t)d : 0;
}

/* Fill *o from scheduler id's ZSET score and hash (flat field list h). */
static int fill(ln_job_scheduler *o, const char *id, size_t id_len, const char *score,
                const redisReply *h) {
    memset(o, 0, sizeof *o);
    o->next_ms = whole(strtod(score, NULL), 9e18);
    o->attempts = 1;
    int rc = (o->id = ln__malloc(id_len + 1)) == NULL ? LN_ENOMEM : 0;
    if (rc == 0) {
        memcpy(o->id, id, id_len);
        o->id[id_len] = '\0';
    }
    for (size_t i = 0; rc == 0 && i + 1 < h->elements; i += 2) {
        const char *k = h->element[i]->str, *v = h->element[i + 1]->str;
        if (k == NULL || v == NULL) continue;
        char **dst = !strcmp(k, "name")      ? &o->name
                     : !strcmp(k, "data")    ? &o->data
                     : !strcmp(k, "pattern") ? &o->pattern
                     : !strcmp(k, "tz")      ? &o->tz
                                             : NULL;
        if (dst != NULL && (*dst = ln__strdup(v)) == NULL) rc = LN_ENOMEM;
        if (!strcmp(k, "every")) o->every_ms = num(v);
        if (!strcmp(k, "offset")) o->offset_ms = num(v);
        if (!strcmp(k, "startDate")) o->start_ms = num(v);
        if (!strcmp(k, "endDate")) o->end_ms = num(v);
        if (!strcmp(k, "limit")) o->limit = num(v) > 0 ? num(v) : 0;
        if (!strcmp(k, "ic")) o->iterations = num(v);
        if (!strcmp(k, "opts")) {
            json_t *j = json_loads(v, 0, NULL);
            json_t *p = json_object_get(j, "priority"), *at = json_object_get(j, "attempts");
            if (json_is_number(p)) o->priority = (int)whole(json_number_value(p), INT_MAX);
            if (json_is_number(at) && json_number_value(at) >= 1)
                o->attempts =
                    json_number_value(at) < INT_MAX ? (int)json_number_value(at) : INT_MAX;
            json_decref(j);
        }
    }
    if (rc == 0 && o->name == NULL && (o->name = ln__strdup("")) == NULL) rc = LN_ENOMEM;
    if (rc == 0 && o->data == NULL && (o->data = ln__strdup("{}")) == NULL) rc = LN_ENOMEM;
    if (rc != 0) ln_job_scheduler_clear(o);
    return rc;
}

int ln__redis_sched_get(ln__jobs_be *be, const char *queue, const char *id, ln_job_scheduler *out) {
    ln__redis_be *r = ln__redis_at(be, queue);
    int rc = 0;
    ln__redis_args a = {0};
    ln__redis_args_str(&a, "get");
    ln__redis_args_str(&a, id);
    redisReply *rep = run(r, &a, &rc);
    ln__redis_args_free(&a);
    if (rep == NULL) return rc;
    if (rep->type == REDIS_REPLY_ARRAY && rep->elements == 0) {
        freeReplyObject(rep);
        return ln__jobs_be_err(be, LN_ENOENT, "no scheduler '%s'", id);
    }
    if (rep->type != REDIS_REPLY_ARRAY || rep->elements != 2 ||
        rep->element[0]->type != REDIS_REPLY_STRING || rep->element[1]->type != REDIS_REPLY_ARRAY)
        return bad(be, rep, "scheduler get");
    rc = fill(out, id, strlen(id), rep->element[0]->str, rep->element[1]);
    freeReplyObject(rep);
    return rc ? ln__jobs_be_err(be, rc, "out of memory") : 0;
}

int ln__redis_sched_list(ln__jobs_be *be, const char *queue, size_t offset, size_t limit,
                         ln_job_scheduler **out, size_t *n) {
    ln__redis_be *r = ln__redis_at(be, queue);
    int rc = 0;
    *out = NULL;
    *n = 0;
    ln__redis_args a = {0};
    ln__redis_args_str(&a, "list");
    ln__redis_args_i64(&a, offset > INT32_MAX ? INT32_MAX : (int64_t)offset);
    ln__redis_args_i64(&a, (int64_t)limit);
    redisReply *rep = run(r, &a, &rc);
    ln__redis_args_free(&a);
    if (rep == NULL) return rc;
    if (rep->type != REDIS_REPLY_ARRAY || rep->elements % 3 != 0 || rep->elements / 3 > limit)
        return bad(be, rep, "scheduler list");
    size_t k = 0, total = rep->elements / 3;
    ln_job_scheduler *arr = total > 0 ? ln__calloc(total, sizeof *arr) : NULL;
    if (total > 0 && arr == NULL) rc = LN_ENOMEM;
    for (size_t i = 0; rc == 0 && i < total; i++) {
        const redisReply *id = rep->element[3 * i], *sc = rep->element[3 * i + 1],
                         *h = rep->element[3 * i + 2];
        if (id->type != REDIS_REPLY_STRING || sc->type != REDIS_REPLY_STRING ||
            h->type != REDIS_REPLY_ARRAY) {
            ln_job_scheduler_free_array(arr, k);
            return bad(be, rep, "scheduler list");
        }
        if (h->elements == 0) continue; /* a legacy repeat entry: no hash */
        if ((rc = fill(&arr[k], id->str, id->len, sc->str, h)) == 0) k++;
    }
    freeReplyObject(rep);
    if (rc != 0 || k == 0) {
        ln_job_scheduler_free_array(arr, k);
        return rc ? ln__jobs_be_err(be, rc, "out of memory") : 0;
    }
    *out = arr;
    *n = k;
    return 0;
}

/* --------------------------------------------- the worker took one */

/* peek's reply (strings) as a scheduler and where it stands; 0, or -1 when
 * BullMQ would make no next iteration (no every and no valid pattern). */
static int peeked(const redisReply *r, ln__sched_new *s, int64_t *now, int64_t *count,
                  int64_t *prev) {
    const char *f[9];
    for (size_t i = 0; i < 9; i++) f[i] = r->element[i]->str;
    memset(s, 0, sizeof *s);
    *now = num(f[0]);
    s->every = num(f[8]) > 0 ? num(f[8]) : 0;
    s->pattern = f[1][0] ? f[1] : NULL;
    s->tz = f[2][0] ? f[2] : NULL;
    s->start_ms = num(f[3]) > 0 ? num(f[3]) : 0;
    s->end_ms = num(f[4]) > 0 ? num(f[4]) : 0;
    s->limit = num(f[5]) >= 0 ? num(f[5]) : -1;
    *count = num(f[6]) > 0 ? num(f[6]) : 0;
    *prev = num(f[7]) > 0 ? num(f[7]) : LN__CRON_NONE;
    char err[256];
    if (s->every > 0) return 0;
    if (s->pattern == NULL || ln__cron_parse(&s->cron, s->pattern, err, sizeof err) != 0) return -1;
    return 0;
}

/* Scheduler id's next iteration once its current one, job_id, was taken:
 * peek at it, then make the next one if it is still current. */
static int advance(ln__redis_be *r, const char *id, const char *job_id) {
    ln__jobs_be *be = &r->base;
    int64_t now = 0, count = 0, prev = 0, next, offset;
    int rc = 0;
    ln__redis_args a = {0};
    ln__redis_args_str(&a, "peek");
    ln__redis_args_str(&a, id);
    ln__redis_args_str(&a, job_id);
    redisReply *rep = run(r, &a, &rc);
    ln__redis_args_free(&a);
    if (rep == NULL) return rc;
    if (rep->type != REDIS_REPLY_ARRAY || (rep->elements != 0 && rep->elements != 9))
        return bad(be, rep, "scheduler peek");
    for (size_t i = 0; i < rep->elements; i++)
        if (rep->element[i]->type != REDIS_REPLY_STRING) return bad(be, rep, "scheduler peek");
    ln__sched_new s;
    char err[256];
    next = LN__CRON_NONE;
    if (rep->elements == 9 && peeked(rep, &s, &now, &count, &prev) == 0 &&
        ln__sched_new_next(&s, count, prev, now, 0, &next, &offset, err, sizeof err) != 0)
        next = LN__CRON_NONE; /* (cron-parser's throw: BullMQ makes none) */
    freeReplyObject(rep);
    if (next == LN__CRON_NONE) return 0; /* not current, or finished */
    a = (ln__redis_args){0};
    ln__redis_args_str(&a, "next");
    ln__redis_args_str(&a, id);
    ln__redis_args_i64(&a, next);
    ln__redis_args_str(&a, job_id);
    rep = run(r, &a, &rc);
    ln__redis_args_free(&a);
    if (rep == NULL) return rc;
    freeReplyObject(rep);
    return 0;
}

int ln__redis_sched_taken(ln__jobs_be *be, const char *queue, const char *job_id) {
    ln__redis_be *r = ln__redis_at(be, queue);
    const char *sid;
    size_t len;
    int64_t ms;
    if (!ln__sched_parse_job_id(job_id, &sid, &len, &ms)) return 0;
    /* A Node scheduler's id may be of any length (ours are at most
     * LN__SCHED_ID_MAX): a copy of it whole. */
    char *id = ln__malloc(len + 1);
    if (id == NULL) return ln__jobs_be_err(be, LN_ENOMEM, "out of memory");
    memcpy(id, sid, len);
    id[len] = '\0';
    int rc = advance(r, id, job_id);
    ln__free(id);
    return rc;
}
