/* redis.c - the Redis backend of lanes jobs, wire-compatible with BullMQ 6.7:
 * the same keys, job hash fields, scores and events, so BullMQ producers,
 * workers and dashboards share queues with lanes (docs/internals/redis-layout.md).
 *
 * DESIGN
 * Every op is one Lua script (src/jobs/lua/, embedded by
 * scripts/embed-lua.sh into redis_scripts.c) run with EVALSHA on the
 * instance's connection, so each move is atomic on the server and the
 * lock-token check sits in the same script as the move out of 'active'.
 * Scripts read the time with TIME, so leases and due times use the
 * server's clock (backend.h). A queue's keys are "<prefix>:<queue>:<suffix>"
 * (prefix "bull" unless the URL says ?prefix=); the scripts get the queue
 * base as KEYS[1] and build the rest from it.
 *
 * Leases are BullMQ locks: the key <id>:lock holds the token with a PX
 * expiry. A token is "<128 random bits in hex>:<per-instance counter>", so
 * it is unique for every take ever. Once a lock lapsed, its holder can no
 * longer finish the job (LN_ESTALE, BullMQ's "Missing lock").
 *
 * Connection failures: a dropped, killed or timed-out connection costs the
 * op in flight (LN_EBACKEND) and a later op reconnects, with backoff
 * (redis_conn.c), so ops fail fast while the server is down and the worker
 * loop, which treats LN_EBACKEND as transient, rides out a restart. A step
 * repeated after a lost reply is safe but not exact: outcomes it had
 * already recorded report LN_ESTALE the second time, and jobs it had taken
 * stay active until their lease lapses and the stalled check puts them
 * back (at least once, never lost).
 *
 * Workers: a worker run gets two connections of its own besides the
 * instance's: its steps go through a pipe (redis_pipe.c: up to two steps
 * in flight, so Redis runs one while the worker starts the jobs of the
 * last), and when idle it blocks in BZPOPMIN on BullMQ's marker
 * (redis_wait.c) instead of polling, as BullMQ's Node workers do. The
 * pipe's connection is named as BullMQ names a worker's for as long as
 * the run lasts, so dashboards list the run (redis_workers.c).
 *
 * Threads: the front serialises ops on an instance (backend.h), so the
 * instance needs no lock of its own; wait and pipe objects share only the
 * instance's read-only configuration.
 */
#include "backend.h"
#include "internal.h"
#include "redis_admin.h"
#include "redis_cancel.h"
#include "redis_edit.h"
#include "redis_codes.h"
#include "redis_conn.h"
#include "redis_pipe.h"
#include "redis_replicas.h"
#include "redis_sched.h"
#include "redis_scripts.h"
#include "redis_step.h"
#include "redis_backoff.h"
#include "redis_view.h"
#include "redis_events.h"
#include "redis_metrics.h"
#include "redis_limit.h"
#include "redis_flow.h"
#include "redis_dynflow.h"
#include "redis_wait.h"
#include "redis_workers.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#define PREFIX_MAX 256
#define BASE_MAX (PREFIX_MAX + LN_JOB_QUEUE_MAX + 2)
#define BATCH 1000 /* jobs per script call of clean */

typedef struct redis_be {
    ln__jobs_be base;
    ln__redis_cfg cfg;
    ln__redis_conn conn;
    char token_base[33]; /* hex of 16 random bytes */
    uint64_t token_seq;  /* lock tokens are "<token_base>:<seq>" */
    char key[BASE_MAX];  /* "<prefix>:<queue>:" of the op running */
    char worker[24];     /* "lanes-<pid>": processedBy, and a worker
                            run's client name (redis_workers.c) */
} redis_be;

static redis_be *rbe(ln__jobs_be *be) {
    return (redis_be *)be;
}

/* Once open, a lost or unreachable server is LN_EBACKEND, which the
 * worker treats as transient (backend.h). */
static int public_rc(int rc) {
    return ln__redis_conn_lost(rc) ? LN_EBACKEND : rc;
}

/* The queue base "<prefix>:<queue>:" into r->key. The front refuses ':'
 * in queue names for every store (it would make these keys ambiguous). */
static void set_queue(redis_be *r, const char *queue) {
    snprintf(r->key, sizeof r->key, "%s:%s:", r->cfg.prefix, queue);
    ln__redis_route(&r->conn, r->key); /* Redis Cluster: the queue's slot */
}

static redisReply *script(redis_be *r, int which, ln__redis_args *a, int *rc) {
    if (a->oom) {
        *rc = ln__jobs_be_err(&r->base, LN_ENOMEM, "out of memory");
        return NULL;
    }
    return ln__redis_eval(&r->conn, which, r->key, (int)a->n, a->v, a->len, rc);
}

static redisReply *command(redis_be *r, int argc, const char **argv, int *rc) {
    return ln__redis_command(&r->conn, argc, argv, NULL, rc);
}

static int bad_reply(redis_be *r, redisReply *rep, const char *what) {
    if (rep) freeReplyObject(rep);
    return ln__jobs_be_err(&r->base, LN_EBACKEND, "redis: unexpected reply to %s", what);
}

/* ------------------------------------------------------------------ add */

static void push_keep(ln__redis_args *a, const ln_job_keep *k) {
    ln__redis_args_i64(a, k->mode);
    ln__redis_args_i64(a, k->value);
}

static int redis_add(ln__jobs_be *be, const char *queue, ln__job_new *jobs, size_t n) {
    redis_be *r = rbe(be);
    int rc = 0;
    set_queue(r, queue);
    ln__redis_args a = {0};
    ln__redis_args_i64(&a, (int64_t)n);
    /* The front checked ids and priorities by BullMQ's rules (jobs.h);
     * LN_JOB_PRIORITY_MAX keeps the score exact below 2^53. */
    for (size_t i = 0; i < n; i++) {
        const ln_job_opts *o = &jobs[i].opts;
        ln__redis_args_str(&a, o->job_id ? o->job_id : "");
        ln__redis_args_str(&a, jobs[i].name);
        ln__redis_args_mem(&a, jobs[i].data, jobs[i].data_len);
        ln__redis_args_i64(&a, o->delay_ms);
        ln__redis_args_i64(&a, o->priority);
        ln__redis_args_i64(&a, o->attempts);
        ln__redis_args_backoff(&a, o); /* type, "<ms>[:<jitter>]" */
        ln__redis_args_str(&a, o->lifo ? "1" : "0");
        push_keep(&a, &o->remove_on_complete);
        push_keep(&a, &o->remove_on_fail);
        ln__redis_args_str(&a, o->traceparent ? o->traceparent : "");
        ln__redis_args_str(&a, o->tracestate ? o->tracestate : "");
        ln__redis_args_i64(&a, o->timeout_ms);
        ln__redis_args_str(&a, o->dedup_id ? o->dedup_id : "");
        ln__redis_args_i64(&a, o->dedup_ttl_ms);
        ln__redis_args_str(&a, o->dedup_extend ? "1" : "0");
        ln__redis_args_str(&a, o->dedup_replace ? "1" : "0");
        ln__redis_args_str(&a, o->dedup_keep_last_if_active ? "1" : "0");
        ln__redis_args_str(&a, o->dedup_reschedule ? "1" : "0");
    }
    rc = ln__redis_dynflow_push(&r->conn, be, &a, r->key, jobs, n); /* parents (redis_dynflow.c) */
    redisReply *rep = rc == 0 ? script(r, LN__RS_ADD, &a, &rc) : NULL;
    ln__redis_args_free(&a);
    if (!rep) return public_rc(rc);
    if ((rc = ln__redis_dynflow_refused(be, rep, jobs, n)) != 0) return rc;
    if (rep->type != REDIS_REPLY_ARRAY || rep->elements != 2 * n) return bad_reply(r, rep, "add");
    for (size_t i = 0; i < n; i++) {
        if (rep->element[2 * i]->type != REDIS_REPLY_STRING) return bad_reply(r, rep, "add");
        if (ln__redis_str_at(rep, 2 * i, &jobs[i].id)) {
            freeReplyObject(rep);
            return ln__jobs_be_err(be, LN_ENOMEM, "out of memory");
        }
        jobs[i].existed = ln__redis_int_at(rep, 2 * i + 1) != 0;
    }
    freeReplyObject(rep);
    rc = ln__redis_wait_added(&r->conn, be, &jobs[0], n);               /* wait_replicas */
    for (size_t i = 0; i < n && rc != 0; i++) jobs[i].unreplicated = 1; /* the ids are out */
    return rc;
}

/* -------------------------------------------------------------- reading */

static int redis_get(ln__jobs_be *be, const char *queue, const char *id, ln_job_info *info) {
    redis_be *r = rbe(be);
    int rc = 0;
    set_queue(r, queue);
    ln__redis_args a = {0};
    ln__redis_args_str(&a, id);
    redisReply *rep = script(r, LN__RS_GET, &a, &rc);
    ln__redis_args_free(&a);
    if (!rep) return public_rc(rc);
    if (rep->type == REDIS_REPLY_ARRAY && rep->elements == 0) {
        freeReplyObject(rep);
        return ln__jobs_be_err(be, LN_ENOENT, "queue '%s' has no job '%s'", queue, id);
    }
    if (!ln__redis_is_view(rep)) return bad_reply(r, rep, "get");
    rc = ln__redis_view_info(rep, info);
    freeReplyObject(rep);
    return rc ? ln__jobs_be_err(be, rc, "out of memory") : 0;
}

static int redis_counts(ln__jobs_be *be, const char *queue, ln_job_counts *c) {
    redis_be *r = rbe(be);
    int rc = 0;
    set_queue(r, queue);
    ln__redis_args a = {0};
    redisReply *rep = script(r, LN__RS_COUNTS, &a, &rc);
    if (!rep) return public_rc(rc);
    if (rep->type != REDIS_REPLY_ARRAY || rep->elements != 8) return bad_reply(r, rep, "counts");
    uint64_t *f[] = {&c->waiting,   &c->delayed, &c->prioritized, &c->active,
                     &c->completed, &c->failed,  &c->paused,      &c->waiting_children};
    for (size_t i = 0; i < 8; i++) *f[i] = (uint64_t)ln__redis_int_at(rep, i);
    freeReplyObject(rep);
    return 0;
}

static int redis_page(ln__jobs_be *be, const char *queue, int state, size_t offset,
                      const char *after, size_t limit, ln_job_info **out, size_t *n) {
    redis_be *r = rbe(be);
    *out = NULL;
    *n = 0;
    int rc = 0;
    char pos[64];
    const char *after_id = NULL;
    if (after != NULL &&
        (rc = ln__redis_parse_cursor(be, after, state, pos, sizeof pos, &after_id)))
        return rc;
    set_queue(r, queue);
    ln__redis_args a = {0};
    ln__redis_args_str(&a, ln_job_state_name(state));
    ln__redis_args_i64(&a, (int64_t)offset);
    ln__redis_args_i64(&a, (int64_t)limit);
    if (after_id != NULL) {
        ln__redis_args_str(&a, pos);
        ln__redis_args_str(&a, after_id);
    }
    redisReply *rep = script(r, LN__RS_LIST, &a, &rc);
    ln__redis_args_free(&a);
    if (!rep) return public_rc(rc);
    if (rep->type != REDIS_REPLY_ARRAY || rep->elements != 2 ||
        rep->element[0]->type != REDIS_REPLY_ARRAY || rep->element[1]->type != REDIS_REPLY_ARRAY ||
        rep->element[0]->elements != rep->element[1]->elements)
        return bad_reply(r, rep, "list");
    const redisReply *views = rep->element[0], *poss = rep->element[1];
    for (size_t i = 0; i < views->elements; i++) /* a position: ln__redis_cursor */
        if (!ln__redis_is_view(views->element[i]) ||
            (poss->element[i]->type != REDIS_REPLY_STRING &&
             poss->element[i]->type != REDIS_REPLY_INTEGER))
            return bad_reply(r, rep, "list");
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

static int redis_list(ln__jobs_be *be, const char *queue, int state, size_t offset, size_t limit,
                      ln_job_info **out, size_t *n) {
    return redis_page(be, queue, state, offset, NULL, limit, out, n);
}

static int redis_list_after(ln__jobs_be *be, const char *queue, int state, const char *after,
                            size_t limit, ln_job_info **out, size_t *n) {
    return redis_page(be, queue, state, 0, after, limit, out, n);
}

/* Redis keeps its own data's structure: nothing to check from here. */
static int redis_check(ln__jobs_be *be, int thorough) {
    (void)be;
    (void)thorough;
    return 0;
}

static int redis_logs(ln__jobs_be *be, const char *queue, const char *id, char ***lines,
                      size_t *n) {
    redis_be *r = rbe(be);
    *lines = NULL;
    *n = 0;
    int rc = 0;
    set_queue(r, queue);
    size_t klen = strlen(r->key) + strlen(id); /* the id: any length */
    char *jkey = ln__malloc(2 * klen + 7), *lkey = jkey + klen + 1;
    if (!jkey) return ln__jobs_be_err(be, LN_ENOMEM, "out of memory");
    snprintf(jkey, klen + 1, "%s%s", r->key, id);
    snprintf(lkey, klen + 6, "%s%s:logs", r->key, id);
    redisReply *rep = command(r, 2, (const char *[]){"EXISTS", jkey}, &rc);
    if (!rep) {
        ln__free(jkey);
        return public_rc(rc);
    }
    int exists = rep->type == REDIS_REPLY_INTEGER && rep->integer == 1;
    freeReplyObject(rep);
    rep = exists ? command(r, 4, (const char *[]){"LRANGE", lkey, "0", "-1"}, &rc) : NULL;
    ln__free(jkey); /* and lkey, in the same block */
    if (!exists) return ln__jobs_be_err(be, LN_ENOENT, "queue '%s' has no job '%s'", queue, id);
    if (!rep) return public_rc(rc);
    if (rep->type != REDIS_REPLY_ARRAY) return bad_reply(r, rep, "LRANGE");
    char **out = rep->elements ? ln__calloc(rep->elements, sizeof *out) : NULL;
    rc = rep->elements && !out ? LN_ENOMEM : 0;
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

static int redis_is_paused(ln__jobs_be *be, const char *queue, int *paused) {
    redis_be *r = rbe(be);
    int rc = 0;
    set_queue(r, queue);
    char meta[BASE_MAX + 8];
    snprintf(meta, sizeof meta, "%smeta", r->key);
    redisReply *rep = command(r, 3, (const char *[]){"HEXISTS", meta, "paused"}, &rc);
    if (!rep) return public_rc(rc);
    *paused = rep->type == REDIS_REPLY_INTEGER && rep->integer == 1;
    freeReplyObject(rep);
    return 0;
}

static int redis_pending(ln__jobs_be *be, const char *queue, int *pending) {
    redis_be *r = rbe(be);
    int rc = 0;
    set_queue(r, queue);
    static const char *const sets[] = {"wait", "prioritized", "delayed", "active"};
    char keys[4][BASE_MAX + 16];
    const char *argv[5] = {"EXISTS"};
    for (int i = 0; i < 4; i++) {
        snprintf(keys[i], sizeof keys[i], "%s%s", r->key, sets[i]);
        argv[i + 1] = keys[i];
    }
    redisReply *rep = command(r, 5, argv, &rc);
    if (!rep) return public_rc(rc);
    *pending = rep->type == REDIS_REPLY_INTEGER && rep->integer > 0;
    freeReplyObject(rep);
    return 0;
}

/* ------------------------------------------------------- administration */

/* A script that returns one integer. */
static int script_int(redis_be *r, int which, ln__redis_args *a, int64_t *out) {
    int rc;
    redisReply *rep = script(r, which, a, &rc);
    ln__redis_args_free(a);
    if (!rep) return public_rc(rc);
    if (rep->type != REDIS_REPLY_INTEGER) return bad_reply(r, rep, ln__redis_scripts[which].name);
    *out = rep->integer;
    freeReplyObject(rep);
    return 0;
}

static int redis_retry(ln__jobs_be *be, const char *queue, const char *id, int state,
                       int64_t *before_ms, size_t *count) {
    redis_be *r = rbe(be);
    const char *want = ln_job_state_name(state);
    int rc = 0;
    set_queue(r, queue);
    *count = 0;
    ln__redis_args a = {0};
    ln__redis_args_str(&a, id ? id : "");
    ln__redis_args_i64(&a, LN__RETRY_STEP);
    ln__redis_args_str(&a, want);
    if (*before_ms >= 0)
        ln__redis_args_i64(&a, *before_ms);
    else
        ln__redis_args_str(&a, "");
    redisReply *rep = script(r, LN__RS_REQUEUE, &a, &rc);
    ln__redis_args_free(&a);
    if (!rep) return public_rc(rc);
    int64_t code = rep->type == REDIS_REPLY_INTEGER ? rep->integer : 0;
    char *end = NULL;
    int ok = rep->type == REDIS_REPLY_ARRAY && rep->elements == 2 &&
             rep->element[0]->type == REDIS_REPLY_INTEGER && rep->element[0]->integer >= 0 &&
             rep->element[1]->type == REDIS_REPLY_STRING &&
             (*before_ms = strtoll(rep->element[1]->str, &end, 10)) >= 0 && *end == '\0';
    if (ok) *count = (size_t)rep->element[0]->integer;
    if (!ok && code != LN__RC_JOB_NOT_EXIST && code != LN__RC_JOB_NOT_IN_STATE)
        return bad_reply(r, rep, ln__redis_scripts[LN__RS_REQUEUE].name);
    freeReplyObject(rep);
    if (code == LN__RC_JOB_NOT_EXIST)
        return ln__jobs_be_err(be, LN_ENOENT, "queue '%s' has no job '%s'", queue, id);
    if (code == LN__RC_JOB_NOT_IN_STATE) {
        ln_job_info info = {0};
        rc = redis_get(be, queue, id, &info);
        const char *now = rc ? "not in that state" : ln_job_state_name(info.state);
        ln_job_info_clear(&info);
        return ln__jobs_be_err(be, LN_EINVAL, "job '%s' is %s, not %s", id, now, want);
    }
    return 0;
}

static int redis_remove(ln__jobs_be *be, const char *queue, const char *id) {
    set_queue(rbe(be), queue);
    return ln__redis_remove(&rbe(be)->conn, rbe(be)->key, be, queue, id);
}

/* Store methods version 14 (redis_admin.c). */
static int redis_remove_tree(ln__jobs_be *be, const char *queue, const char *id, size_t max,
                             size_t *removed) {
    set_queue(rbe(be), queue);
    return ln__redis_remove_tree(&rbe(be)->conn, rbe(be)->key, be, queue, id, max, removed);
}

static int redis_clean(ln__jobs_be *be, const char *queue, int state, int64_t age_ms, uint64_t keep,
                       size_t *removed) {
    redis_be *r = rbe(be);
    int rc = 0;
    set_queue(r, queue);
    *removed = 0;
    int64_t n = 0;
    do {
        ln__redis_args a = {0};
        ln__redis_args_str(&a, ln_job_state_name(state));
        ln__redis_args_i64(&a, age_ms < 0 ? -1 : age_ms);
        ln__redis_args_i64(&a, keep > INT64_MAX ? INT64_MAX : (int64_t)keep);
        ln__redis_args_i64(&a, BATCH);
        if ((rc = script_int(r, LN__RS_CLEAN, &a, &n)) < 0) return rc;
        *removed += (size_t)n;
    } while (n == BATCH);
    return 0;
}

static int redis_pause(ln__jobs_be *be, const char *queue, int paused) {
    redis_be *r = rbe(be);
    set_queue(r, queue);
    ln__redis_args a = {0};
    ln__redis_args_str(&a, paused ? "1" : "0");
    int64_t ignored = 0;
    return script_int(r, LN__RS_PAUSE, &a, &ignored);
}

/* One obliterate.lua call (redis_admin.c). */
static int redis_obliterate(ln__jobs_be *be, const char *queue, int force, int64_t *left,
                            size_t *removed, int *more) {
    redis_be *r = rbe(be);
    set_queue(r, queue);
    return ln__redis_obliterate(&r->conn, r->key, be, queue, force, left, removed, more);
}

/* drain.lua in steps (redis_admin.c). */
static int redis_drain(ln__jobs_be *be, const char *queue, size_t *removed) {
    redis_be *r = rbe(be);
    set_queue(r, queue);
    return ln__redis_drain(&r->conn, r->key, be, removed);
}

/* -------------------------------------------------------------- workers */

/* 0, or a leave_active code (LN__RC_*): not ours any more. */
static int stale_or_ok(int64_t code) {
    return code == 0 ? 0 : LN_ESTALE;
}

static int redis_step(ln__jobs_be *be, const char *queue, ln__jobs_step *st) {
    redis_be *r = rbe(be);
    st->ntaken = 0;
    st->next_due_ms = -1;
    int rc = 0;
    set_queue(r, queue);
    ln__redis_token *tokens = st->want ? ln__malloc(st->want * sizeof *tokens) : NULL;
    if (st->want && !tokens) return ln__jobs_be_err(be, LN_ENOMEM, "out of memory");
    ln__redis_step_tokens(r->token_base, &r->token_seq, tokens, st->want);
    ln__redis_args a = {0};
    ln__redis_step_args(&a, st, r->worker, tokens);
    redisReply *rep = script(r, LN__RS_STEP, &a, &rc);
    ln__redis_args_free(&a);
    if (rep) {
        rc = ln__redis_step_reply(rep, st, tokens, be->errmsg, sizeof be->errmsg);
        freeReplyObject(rep);
        if (rc == 0) ln__redis_wait_step(&r->conn, st); /* wait_replicas */
    } else {
        rc = public_rc(rc);
    }
    ln__free(tokens);
    return rc;
}

static int redis_recover_stalled(ln__jobs_be *be, const char *queue, unsigned max_stalled,
                                 const char *reason, size_t *requeued, size_t *failed) {
    redis_be *r = rbe(be);
    *requeued = *failed = 0;
    int rc = 0;
    set_queue(r, queue);
    ln__redis_args a = {0};
    ln__redis_args_i64(&a, max_stalled);
    ln__redis_args_str(&a, reason);
    redisReply *rep = script(r, LN__RS_RECOVER, &a, &rc);
    ln__redis_args_free(&a);
    if (!rep) return public_rc(rc);
    if (rep->type != REDIS_REPLY_ARRAY || rep->elements != 2) return bad_reply(r, rep, "recover");
    *requeued = (size_t)ln__redis_int_at(rep, 0);
    *failed = (size_t)ln__redis_int_at(rep, 1);
    freeReplyObject(rep);
    return 0;
}

static int redis_release(ln__jobs_be *be, const char *queue, const ln__job_ref *refs, int *rcs,
                         size_t n) {
    redis_be *r = rbe(be);
    int rc = 0;
    set_queue(r, queue);
    ln__redis_args a = {0};
    for (size_t i = 0; i < n; i++) {
        ln__redis_args_str(&a, refs[i].id);
        ln__redis_args_str(&a, refs[i].token);
    }
    redisReply *rep = script(r, LN__RS_RELEASE, &a, &rc);
    ln__redis_args_free(&a);
    if (!rep) return public_rc(rc);
    if (rep->type != REDIS_REPLY_ARRAY || rep->elements != n) return bad_reply(r, rep, "release");
    for (size_t i = 0; i < n; i++) rcs[i] = stale_or_ok(ln__redis_int_at(rep, i));
    freeReplyObject(rep);
    return 0;
}

static int touch(ln__jobs_be *be, const char *queue, const ln__job_ref *ref, const char *what,
                 const char *value) {
    redis_be *r = rbe(be);
    int rc = 0;
    set_queue(r, queue);
    ln__redis_args a = {0};
    ln__redis_args_str(&a, ref->id);
    ln__redis_args_str(&a, ref->token);
    ln__redis_args_str(&a, what);
    ln__redis_args_str(&a, value);
    int64_t res = 0;
    if ((rc = script_int(r, LN__RS_TOUCH, &a, &res)) < 0) return rc;
    if (res < 0)
        return ln__jobs_be_err(be, LN_ESTALE, "job '%s': lock lost (%s)", ref->id,
                               res == LN__RC_JOB_NOT_EXIST    ? "job removed"
                               : res == LN__RC_LOCK_NOT_EXIST ? "lock expired"
                                                              : "another worker holds it");
    return 0;
}

static int redis_progress(ln__jobs_be *be, const char *queue, const ln__job_ref *ref,
                          const char *json) {
    return touch(be, queue, ref, "progress", json);
}

static int redis_log(ln__jobs_be *be, const char *queue, const ln__job_ref *ref, const char *line) {
    return touch(be, queue, ref, "log", line);
}

/* The blocking wait (redis_wait.c) of a worker on queue. */
static int redis_events_open(ln__jobs_be *be, const char *queue, const char *from,
                             ln__jobs_events **out) {
    redis_be *r = rbe(be);
    set_queue(r, queue);
    return ln__redis_events_open(&r->cfg, r->key, from, out, be->errmsg, sizeof be->errmsg);
}

static int redis_wait_open(ln__jobs_be *be, const char *queue, ln__jobs_wait **out) {
    redis_be *r = rbe(be);
    int rc = 0;
    set_queue(r, queue);
    if ((rc = ln__redis_wait_open(&r->cfg, r->key, out)) < 0)
        return ln__jobs_be_err(be, rc, "out of memory");
    return 0;
}

/* The pipelined steps (redis_pipe.c) of a worker on queue, on a
 * connection of their own that carries the run's worker name
 * (redis_workers.c) while the run lasts. */
static int redis_pipe_open(ln__jobs_be *be, const char *queue, ln__jobs_pipe **out) {
    redis_be *r = rbe(be);
    int rc = 0;
    set_queue(r, queue);
    if ((rc = ln__redis_pipe_open(&r->cfg, r->key, r->worker, out)) < 0)
        return ln__jobs_be_err(be, rc, "cannot make a step pipe: %s", ln_strerror(rc));
    return 0;
}

/* ----------------------------------------------------------- open/close */

static void redis_close(ln__jobs_be *be, int forked) {
    redis_be *r = rbe(be);
    if (!r) return;
    /* redisFree only closes the socket (no QUIT), so the child of a fork
     * leaves the parent's connection alone either way. */
    LN_UNUSED(forked);
    ln__redis_conn_free(&r->conn);
    ln__redis_cfg_free(&r->cfg);
    ln__free(r);
}

/* Store methods version 7: flows (redis_flow.c). */
static int redis_add_flow(ln__jobs_be *be, ln__flow_new *nodes, size_t n) {
    redis_be *r = rbe(be);
    set_queue(r, nodes[0].queue);
    int rc = public_rc(ln__redis_flow_add(&r->conn, be, nodes, n));
    return rc != 0 ? rc : ln__redis_wait_added(&r->conn, be, &nodes[0].job, n);
}

/* Store methods version 15 (redis_dynflow.c). */
static int redis_wait_children(ln__jobs_be *be, const char *queue, const ln__job_ref *ref) {
    redis_be *r = rbe(be);
    set_queue(r, queue);
    return public_rc(ln__redis_wait_children(&r->conn, be, r->key, ref, NULL, NULL));
}

/* Store methods version 16 (redis_dynflow.c, redis_admin.c). */
static int redis_wait_child(ln__jobs_be *be, const char *queue, const ln__job_ref *ref,
                            const char *child_queue, const char *child_id) {
    redis_be *r = rbe(be);
    set_queue(r, queue);
    return public_rc(ln__redis_wait_children(&r->conn, be, r->key, ref, child_queue, child_id));
}

static int redis_remove_unprocessed(ln__jobs_be *be, const char *queue, const char *id, size_t max,
                                    size_t *removed) {
    set_queue(rbe(be), queue);
    return ln__redis_remove_unprocessed(&rbe(be)->conn, rbe(be)->key, be, queue, id, max, removed);
}

static int redis_children(ln__jobs_be *be, const char *queue, const char *id,
                          ln_job_children *out) {
    redis_be *r = rbe(be);
    set_queue(r, queue);
    return public_rc(ln__redis_flow_children(&r->conn, be, r->key, id, out));
}

/* Store methods version 4: the queue list (redis_admin.c) and promote. */
static int redis_queues(ln__jobs_be *be, size_t max, char ***names, size_t *n) {
    redis_be *r = rbe(be);
    return public_rc(ln__redis_queues(&r->conn, r->cfg.prefix, be, max, names, n));
}

static int redis_promote(ln__jobs_be *be, const char *queue, const char *id) {
    redis_be *r = rbe(be);
    set_queue(r, queue);
    ln__redis_args a = {0};
    ln__redis_args_str(&a, id);
    int64_t res = 0;
    int rc = script_int(r, LN__RS_PROMOTE, &a, &res);
    if (rc < 0) return rc;
    if (res == LN__RC_JOB_NOT_EXIST)
        return ln__jobs_be_err(be, LN_ENOENT, "queue '%s' has no job '%s'", queue, id);
    if (res == LN__RC_JOB_NOT_IN_STATE)
        return ln__jobs_be_err(be, LN_EINVAL, "job '%s' is not delayed", id);
    return 0;
}

static int redis_workers(ln__jobs_be *be, const char *queue, size_t max, ln_worker_info **out,
                         size_t *n) {
    redis_be *r = rbe(be);
    set_queue(r, queue); /* Redis Cluster: the node serving the queue */
    return public_rc(ln__redis_workers(&r->conn, r->cfg.prefix, queue, be, max, out, n));
}

static int redis_metrics(ln__jobs_be *be, const char *queue, int type, int64_t start, int64_t end,
                         ln_job_metrics *out) {
    redis_be *r = rbe(be);
    set_queue(r, queue);
    return public_rc(ln__redis_metrics(&r->conn, r->key, be, type, start, end, out));
}

/* Store methods version 9: cancel (redis_cancel.c). */
static int redis_cancel(ln__jobs_be *be, const char *queue, const char *id, const char *reason) {
    redis_be *r = rbe(be);
    set_queue(r, queue);
    return ln__redis_cancel(&r->conn, r->key, be, queue, id, reason);
}

static int redis_cancel_poll(ln__jobs_be *be, const char *queue, int64_t *mark,
                             const ln__job_ref *refs, int *gone, size_t n) {
    redis_be *r = rbe(be);
    set_queue(r, queue);
    return ln__redis_cancel_poll(&r->conn, r->key, be, mark, refs, gone, n);
}

/* Job schedulers: redis_sched.c on the instance's connection. */
static int redis_sched_upsert(ln__jobs_be *be, const char *queue, const ln__sched_new *s,
                              char **job_id) {
    set_queue(rbe(be), queue);
    return public_rc(ln__redis_sched_upsert(&rbe(be)->conn, rbe(be)->key, be, s, job_id));
}

static int redis_sched_remove(ln__jobs_be *be, const char *queue, const char *id) {
    set_queue(rbe(be), queue);
    return public_rc(ln__redis_sched_remove(&rbe(be)->conn, rbe(be)->key, be, id));
}

static int redis_sched_get(ln__jobs_be *be, const char *queue, const char *id,
                           ln_job_scheduler *out) {
    set_queue(rbe(be), queue);
    return public_rc(ln__redis_sched_get(&rbe(be)->conn, rbe(be)->key, be, id, out));
}

static int redis_sched_list(ln__jobs_be *be, const char *queue, size_t offset, size_t limit,
                            ln_job_scheduler **out, size_t *n) {
    set_queue(rbe(be), queue);
    return public_rc(ln__redis_sched_list(&rbe(be)->conn, rbe(be)->key, be, offset, limit, out, n));
}

static int redis_sched_taken(ln__jobs_be *be, const char *queue, const char *job_id) {
    set_queue(rbe(be), queue);
    return public_rc(ln__redis_sched_taken(&rbe(be)->conn, rbe(be)->key, be, job_id));
}

/* Store methods version 11: rate limits and global concurrency. */
static int redis_limits(ln__jobs_be *be, const char *queue, ln__jobs_limits *l) {
    redis_be *r = rbe(be);
    set_queue(r, queue);
    return public_rc(ln__redis_limits(&r->conn, r->key, be, l));
}

/* Store methods version 17: jobs_edit.h (redis_edit.c). */
static int redis_edit(ln__jobs_be *be, const char *queue, ln__jobs_edit *e) {
    set_queue(rbe(be), queue);
    return ln__redis_edit(&rbe(be)->conn, rbe(be)->key, be, queue, e);
}

static const ln__store_methods redis_methods = {
    .version = LN__STORE_METHODS_VERSION,
    .name = "redis",
    .close = redis_close,
    .add = redis_add,
    .get = redis_get,
    .counts = redis_counts,
    .list = redis_list,
    .logs = redis_logs,
    .retry = redis_retry,
    .remove = redis_remove,
    .clean = redis_clean,
    .pause = redis_pause,
    .is_paused = redis_is_paused,
    .drain = redis_drain,
    .step = redis_step,
    .recover_stalled = redis_recover_stalled,
    .release = redis_release,
    .progress = redis_progress,
    .log = redis_log,
    .pending = redis_pending,
    .wait_open = redis_wait_open,
    .pipe_open = redis_pipe_open,
    .queues = redis_queues,
    .promote = redis_promote,
    .events_open = redis_events_open,
    .workers = redis_workers,
    .metrics = redis_metrics,
    .cancel = redis_cancel,
    .cancel_poll = redis_cancel_poll,
    .sched_upsert = redis_sched_upsert,
    .sched_remove = redis_sched_remove,
    .sched_get = redis_sched_get,
    .sched_list = redis_sched_list,
    .sched_taken = redis_sched_taken,
    .limits = redis_limits,
    .add_flow = redis_add_flow,
    .children = redis_children,
    .remove_tree = redis_remove_tree,
    .wait_children = redis_wait_children,
    .remove_unprocessed = redis_remove_unprocessed,
    .wait_child = redis_wait_child,
    .edit = redis_edit,
    .obliterate = redis_obliterate,
    .list_after = redis_list_after,
    .check = redis_check,
};

/* BullMQ's requirements: Redis >= 6.0.6 for our scripts (LPOS), and
 * maxmemory-policy noeviction (evicting a lock or job key corrupts a queue),
 * which only earns a warning (r->base.warning, ln_jobs_warning) since
 * hosted Redis may hide the setting. */
static int check_server(redis_be *r) {
    int rc;
    redisReply *rep = command(r, 2, (const char *[]){"INFO", "server"}, &rc);
    if (!rep) return public_rc(rc);
    const char *v = rep->type == REDIS_REPLY_STRING ? strstr(rep->str, "redis_version:") : NULL;
    int major = 0, minor = 0, patch = 0;
    if (v) sscanf(v + 14, "%d.%d.%d", &major, &minor, &patch);
    freeReplyObject(rep);
    if (major * 10000 + minor * 100 + patch < 60006)
        return ln__jobs_be_err(&r->base, LN_ENOTSUP,
                               "redis %d.%d.%d is too old: lanes needs 6.0.6 or newer", major,
                               minor, patch);
    rep = command(r, 3, (const char *[]){"CONFIG", "GET", "maxmemory-policy"}, &rc);
    if (!rep) return ln__redis_conn_lost(rc) ? public_rc(rc) : 0; /* CONFIG may be disabled */
    if (rep->type == REDIS_REPLY_ARRAY && rep->elements == 2 &&
        rep->element[1]->type == REDIS_REPLY_STRING && strcmp(rep->element[1]->str, "noeviction"))
        snprintf(r->base.warning, sizeof r->base.warning,
                 "redis maxmemory-policy is '%s'; it should be 'noeviction' (an evicted job "
                 "or lock key corrupts a queue)",
                 rep->element[1]->str);
    freeReplyObject(rep);
    return 0;
}

int ln__jobs_redis_open(ln__jobs_be **out, const char *url, const ln_jobs_opts *opts, char *errmsg,
                        size_t errmsg_size) {
    redis_be *r = ln__calloc(1, sizeof *r);
    if (!r) {
        snprintf(errmsg, errmsg_size, "out of memory");
        return LN_ENOMEM;
    }
    r->base.methods = &redis_methods;
    int rc = ln__redis_cfg_parse(&r->cfg, url, errmsg, errmsg_size);
    if (rc) {
        ln__free(r);
        return rc;
    }
    if ((rc = ln__redis_wait_settle(&r->cfg, opts, errmsg, errmsg_size)) != 0) goto fail;
    if (strlen(r->cfg.prefix) >= PREFIX_MAX) {
        snprintf(errmsg, errmsg_size, "redis key prefix longer than %d bytes", PREFIX_MAX - 1);
        rc = LN_EINVAL;
        goto fail;
    }
    unsigned char rnd[16];
    if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd) {
        char ebuf[128];
        snprintf(errmsg, errmsg_size, "getrandom failed: %s", strerror_r(errno, ebuf, sizeof ebuf));
        rc = LN_EBACKEND;
        goto fail;
    }
    for (int i = 0; i < 16; i++) snprintf(r->token_base + 2 * i, 3, "%02x", rnd[i]);
    snprintf(r->worker, sizeof r->worker, "lanes-%d", (int)getpid());
    r->conn.cfg = &r->cfg;
    r->conn.err = r->base.errmsg;
    r->conn.err_size = sizeof r->base.errmsg;
    if ((rc = ln__redis_connect(&r->conn)) < 0 ||
        (rc = ln__redis_cluster_detect(&r->conn, &r->cfg)) < 0 || (rc = check_server(r)) < 0) {
        snprintf(errmsg, errmsg_size, "%s", r->base.errmsg);
        if (rc == LN_EIO) rc = LN_EBACKEND;
        goto fail;
    }
    *out = &r->base;
    return 0;
fail:
    redis_close(&r->base, 0);
    return rc;
}
