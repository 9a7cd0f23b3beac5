/* edit.c - a job's changes on Redis: removing one (remove.lua),
 * promoting a delayed one (promote.lua), and jobs_edit.h, one script per
 * change (change_priority.lua, change_delay.lua, update_data.lua,
 * dedup_key.lua, promote_some.lua, priority_counts.lua, trim_events.lua,
 * job_logs.lua, detach.lua), each a bounded number of commands on BullMQ
 * 6.7's keys. docs/internals/edit.md has the design. */
#include "redis_int.h"

#include "internal.h"
#include "redis_codes.h"
#include "redis_scripts.h"

#include <stdint.h>
#include <string.h>

int ln__redis_remove_err(ln__jobs_be *be, const char *queue, const char *id, int64_t res) {
    if (res == LN__RC_JOB_NOT_EXIST)
        return ln__jobs_be_err(be, LN_ENOENT, "queue '%s' has no job '%s'", queue, id);
    if (res == LN__RC_SCHEDULED)
        return ln__jobs_be_err(be, LN_EBUSY,
                               "job '%s' is its job scheduler's current iteration: remove the "
                               "scheduler instead",
                               id);
    return ln__jobs_be_err(be, LN_EBACKEND, "redis: remove returned %lld", (long long)res);
}

int ln__redis_remove(ln__jobs_be *be, const char *queue, const char *id) {
    ln__redis_be *r = ln__redis_at(be, queue);
    int rc = 0;
    redisReply *rep = ln__redis_eval(&r->conn, LN__RS_REMOVE, r->key, 1, &id, NULL, &rc);
    if (!rep) return ln__redis_public_rc(rc);
    int64_t res = rep->type == REDIS_REPLY_INTEGER ? rep->integer : INT64_MIN;
    freeReplyObject(rep);
    if (res == 0) return 0;
    if (res == LN__RC_LOCKED)
        return ln__jobs_be_err(be, LN_EBUSY, "job '%s' is active (a worker holds its lock)", id);
    return ln__redis_remove_err(be, queue, id, res);
}

int ln__redis_promote(ln__jobs_be *be, const char *queue, const char *id) {
    ln__redis_be *r = ln__redis_at(be, queue);
    ln__redis_args a = {0};
    ln__redis_args_str(&a, id);
    int64_t res = 0;
    int rc = ln__redis_run_int(r, LN__RS_PROMOTE, &a, &res);
    if (rc < 0) return rc;
    if (res == LN__RC_JOB_NOT_EXIST)
        return ln__jobs_be_err(be, LN_ENOENT, "queue '%s' has no job '%s'", queue, id);
    if (res == LN__RC_JOB_NOT_IN_STATE)
        return ln__jobs_be_err(be, LN_EINVAL, "job '%s' is not delayed", id);
    return 0;
}

/* The reply of a change of job e->id: 0, or the code's error. */
static int job_reply(ln__jobs_be *be, redisReply *rep, const char *queue, const ln__jobs_edit *e,
                     const char *what) {
    int err;
    if (rep->type == REDIS_REPLY_INTEGER && rep->integer == 0)
        err = 0;
    else if (rep->type == REDIS_REPLY_INTEGER && rep->integer == LN__RC_JOB_NOT_EXIST)
        err = ln__jobs_be_err(be, LN_ENOENT, "queue '%s' has no job '%s'", queue, e->id);
    else if (rep->type == REDIS_REPLY_INTEGER && rep->integer == LN__RC_JOB_NOT_IN_STATE)
        err = ln__jobs_be_err(be, LN_EINVAL, "job '%s' is not delayed", e->id);
    else
        return ln__redis_bad_reply(be, rep, what);
    freeReplyObject(rep);
    return err;
}

static int dedup_reply(ln__jobs_be *be, redisReply *rep, const char *queue, ln__jobs_edit *e) {
    int err = 0;
    if (e->op == LN__EDIT_DEDUP_REMOVE && rep->type == REDIS_REPLY_INTEGER) {
        e->removed = rep->integer > 0;
    } else if (e->op == LN__EDIT_DEDUP_GET && rep->type == REDIS_REPLY_NIL) {
        err = ln__jobs_be_err(be, LN_ENOENT, "queue '%s': no job holds dedup id '%s'", queue,
                              e->dedup_id);
    } else if (e->op == LN__EDIT_DEDUP_GET && rep->type == REDIS_REPLY_STRING) {
        e->job_id = ln__malloc(rep->len + 1);
        if (e->job_id == NULL) {
            err = ln__jobs_be_err(be, LN_ENOMEM, "out of memory");
        } else {
            memcpy(e->job_id, rep->str, rep->len);
            e->job_id[rep->len] = '\0';
        }
    } else {
        return ln__redis_bad_reply(be, rep, "dedup_key");
    }
    freeReplyObject(rep);
    return err;
}

/* The reply of job_logs.lua: the job's line count, or no such job. */
static int logs_reply(ln__jobs_be *be, redisReply *rep, const char *queue, ln__jobs_edit *e) {
    if (rep->type != REDIS_REPLY_INTEGER ||
        (rep->integer < 0 && rep->integer != LN__RC_JOB_NOT_EXIST))
        return ln__redis_bad_reply(be, rep, "job_logs");
    int err = 0;
    if (rep->integer == LN__RC_JOB_NOT_EXIST)
        err = ln__jobs_be_err(be, LN_ENOENT, "queue '%s' has no job '%s'", queue, e->id);
    else
        e->count = (size_t)rep->integer;
    freeReplyObject(rep);
    return err;
}

/* The reply of detach.lua: 1 or 0 (removed), or an error code. */
static int detach_reply(ln__jobs_be *be, redisReply *rep, const char *queue, ln__jobs_edit *e) {
    int err = 0;
    if (rep->type == REDIS_REPLY_INTEGER && (rep->integer == 0 || rep->integer == 1))
        e->removed = (int)rep->integer;
    else if (rep->type == REDIS_REPLY_INTEGER && rep->integer == LN__RC_PARENT_MISSING)
        err = ln__jobs_be_err(be, LN_ENOENT, "the parent of job '%s' no longer exists", e->id);
    else if (rep->type == REDIS_REPLY_INTEGER && rep->integer == LN__RC_JOB_NOT_EXIST)
        err = ln__jobs_be_err(be, LN_ENOENT, "queue '%s' has no job '%s'", queue, e->id);
    else
        return ln__redis_bad_reply(be, rep, "detach");
    freeReplyObject(rep);
    return err;
}

/* The reply of a queue-wide call: a count, or one count per priority. */
static int queue_reply(ln__jobs_be *be, redisReply *rep, ln__jobs_edit *e) {
    if (e->op == LN__EDIT_PROMOTE_SOME && rep->type == REDIS_REPLY_INTEGER && rep->integer >= 0 &&
        (size_t)rep->integer <= e->max) {
        e->count = (size_t)rep->integer;
    } else if (e->op == LN__EDIT_TRIM_EVENTS && rep->type == REDIS_REPLY_INTEGER &&
               rep->integer >= 0) {
        e->count = (size_t)rep->integer;
    } else if (e->op == LN__EDIT_PRIORITY_COUNTS && rep->type == REDIS_REPLY_ARRAY &&
               rep->elements == e->n) {
        for (size_t i = 0; i < e->n; i++) {
            if (rep->element[i]->type != REDIS_REPLY_INTEGER || rep->element[i]->integer < 0)
                return ln__redis_bad_reply(be, rep, "priority_counts");
            e->counts[i] = (uint64_t)rep->element[i]->integer;
        }
    } else {
        return ln__redis_bad_reply(
            be, rep, e->op == LN__EDIT_PROMOTE_SOME ? "promote_some" : "priority_counts");
    }
    freeReplyObject(rep);
    return 0;
}

int ln__redis_edit(ln__jobs_be *be, const char *queue, ln__jobs_edit *e) {
    ln__redis_be *r = ln__redis_at(be, queue);
    ln__redis_args a = {0};
    int which;
    switch (e->op) {
    case LN__EDIT_PRIORITY:
        which = LN__RS_CHANGE_PRIORITY;
        ln__redis_args_str(&a, e->id);
        ln__redis_args_i64(&a, e->priority);
        ln__redis_args_str(&a, e->lifo ? "1" : "0");
        break;
    case LN__EDIT_DELAY:
        which = LN__RS_CHANGE_DELAY;
        ln__redis_args_str(&a, e->id);
        ln__redis_args_i64(&a, e->delay_ms);
        break;
    case LN__EDIT_DATA:
        which = LN__RS_UPDATE_DATA;
        ln__redis_args_str(&a, e->id);
        ln__redis_args_mem(&a, e->data, e->data_len);
        break;
    case LN__EDIT_DEDUP_GET:
    case LN__EDIT_DEDUP_REMOVE:
        which = LN__RS_DEDUP_KEY;
        ln__redis_args_str(&a, e->op == LN__EDIT_DEDUP_GET ? "get" : "remove");
        ln__redis_args_str(&a, e->dedup_id);
        break;
    case LN__EDIT_PROMOTE_SOME:
        which = LN__RS_PROMOTE_SOME;
        ln__redis_args_i64(&a, (int64_t)e->max);
        break;
    case LN__EDIT_PRIORITY_COUNTS:
        which = LN__RS_PRIORITY_COUNTS;
        for (size_t i = 0; i < e->n; i++) ln__redis_args_i64(&a, e->priorities[i]);
        break;
    case LN__EDIT_TRIM_EVENTS:
        which = LN__RS_TRIM_EVENTS;
        ln__redis_args_i64(&a, e->max > INT64_MAX ? INT64_MAX : (int64_t)e->max);
        break;
    case LN__EDIT_DETACH:
        which = LN__RS_DETACH;
        ln__redis_args_str(&a, e->id);
        break;
    case LN__EDIT_ADD_LOG:
    case LN__EDIT_CLEAR_LOGS:
        which = LN__RS_JOB_LOGS;
        ln__redis_args_str(&a, e->id);
        ln__redis_args_str(&a, e->op == LN__EDIT_ADD_LOG ? "add" : "clear");
        ln__redis_args_i64(&a, e->max > INT64_MAX ? INT64_MAX : (int64_t)e->max);
        if (e->op == LN__EDIT_ADD_LOG) ln__redis_args_mem(&a, e->data, e->data_len);
        break;
    default:
        return ln__jobs_be_err(be, LN_EINVAL, "unknown edit %d", e->op);
    }
    int rc = 0;
    redisReply *rep = ln__redis_run(r, which, &a, &rc);
    ln__redis_args_free(&a);
    if (!rep) return rc;
    if (which == LN__RS_DEDUP_KEY) return dedup_reply(be, rep, queue, e);
    if (which == LN__RS_JOB_LOGS) return logs_reply(be, rep, queue, e);
    if (which == LN__RS_DETACH) return detach_reply(be, rep, queue, e);
    if (which == LN__RS_PROMOTE_SOME || which == LN__RS_PRIORITY_COUNTS ||
        which == LN__RS_TRIM_EVENTS)
        return queue_reply(be, rep, e);
    return job_reply(be, rep, queue, e, ln__redis_scripts[which].name);
}
