/* redis_cancel.c - cancelling jobs on the Redis backend (store methods
 * version 7): cancel.lua fails the job and, for an active one, deletes its
 * lock and gives the queue's lanes:cancel mark a new value;
 * cancel_poll.lua tells a worker which of its jobs lost their lock,
 * reading only the mark while it has not changed.
 * docs/internals/cancel.md has the design. */
#include "redis_cancel.h"

#include "internal.h"
#include "redis_codes.h"
#include "redis_scripts.h"
#include "redis_view.h"

#include <stdlib.h>
#include <string.h>

/* Once open, a lost or unreachable server is LN_EBACKEND (redis.c). */
static int public_rc(int rc) {
    return ln__redis_conn_lost(rc) ? LN_EBACKEND : rc;
}

static int bad_reply(ln__jobs_be *be, redisReply *rep, const char *what) {
    if (rep) freeReplyObject(rep);
    return ln__jobs_be_err(be, LN_EBACKEND, "redis: unexpected reply to %s", what);
}

int ln__redis_cancel(ln__redis_conn *c, const char *base, ln__jobs_be *be, const char *queue,
                     const char *id, const char *reason) {
    const char *argv[] = {id, reason};
    int rc = 0;
    redisReply *rep = ln__redis_eval(c, LN__RS_CANCEL, base, 2, argv, NULL, &rc);
    if (!rep) return public_rc(rc);
    int err = 0;
    if (rep->type == REDIS_REPLY_INTEGER && rep->integer == 0)
        err = 0;
    else if (rep->type == REDIS_REPLY_INTEGER && rep->integer == LN__RC_JOB_NOT_EXIST)
        err = ln__jobs_be_err(be, LN_ENOENT, "queue '%s' has no job '%s'", queue, id);
    else if (rep->type == REDIS_REPLY_INTEGER && rep->integer == LN__RC_SCHEDULED)
        err = ln__jobs_be_err(be, LN_EINVAL,
                              "job '%s' is its job scheduler's current iteration: remove the "
                              "scheduler instead",
                              id);
    else if (rep->type == REDIS_REPLY_STRING)
        err = ln__jobs_be_err(
            be, LN_EINVAL,
            "job '%s' is %s: only a waiting, prioritized, delayed or active job can be canceled",
            id, rep->str);
    else
        return bad_reply(be, rep, "cancel");
    freeReplyObject(rep);
    return err;
}

int ln__redis_cancel_poll(ln__redis_conn *c, const char *base, ln__jobs_be *be, int64_t *mark,
                          const ln__job_ref *refs, int *gone, size_t n) {
    ln__redis_args a = {0};
    ln__redis_args_i64(&a, *mark);
    for (size_t i = 0; i < n; i++) {
        ln__redis_args_str(&a, refs[i].id);
        ln__redis_args_str(&a, refs[i].token);
    }
    if (a.oom) {
        ln__redis_args_free(&a);
        return ln__jobs_be_err(be, LN_ENOMEM, "out of memory");
    }
    int rc = 0;
    redisReply *rep = ln__redis_eval(c, LN__RS_CANCEL_POLL, base, (int)a.n, a.v, a.len, &rc);
    ln__redis_args_free(&a);
    if (!rep) return public_rc(rc);
    if (rep->type != REDIS_REPLY_ARRAY || (rep->elements != 1 && rep->elements != n + 1) ||
        rep->element[0]->type != REDIS_REPLY_STRING)
        return bad_reply(be, rep, "cancel_poll");
    for (size_t i = 1; i < rep->elements; i++) gone[i - 1] = ln__redis_int_at(rep, i) != 0;
    *mark = strtoll(rep->element[0]->str, NULL, 10);
    freeReplyObject(rep);
    return 0;
}
