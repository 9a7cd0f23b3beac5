/* cancel.c - cancelling jobs on Redis: cancel.lua fails the job and, for
 * an active one, deletes its lock and gives the queue's lanes:cancel mark
 * a new value; cancel_poll.lua tells a worker which of its jobs lost
 * their lock, reading only the mark while it has not changed.
 * docs/internals/cancel.md has the design. */
#include "redis_int.h"

#include "internal.h"
#include "redis_codes.h"
#include "redis_scripts.h"
#include "redis_view.h"

#include <stdlib.h>
#include <string.h>

int ln__redis_cancel(ln__jobs_be *be, const char *queue, const char *id, const char *reason) {
    ln__redis_be *r = ln__redis_at(be, queue);
    const char *argv[] = {id, reason};
    int rc = 0;
    redisReply *rep = ln__redis_eval(&r->conn, LN__RS_CANCEL, r->key, 2, argv, NULL, &rc);
    if (!rep) return ln__redis_public_rc(rc);
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
        return ln__redis_bad_reply(be, rep, "cancel");
    freeReplyObject(rep);
    return err;
}

int ln__redis_cancel_poll(ln__jobs_be *be, const char *queue, int64_t *mark,
                          const ln__job_ref *refs, int *gone, size_t n) {
    ln__redis_be *r = ln__redis_at(be, queue);
    ln__redis_args a = {0};
    ln__redis_args_i64(&a, *mark);
    for (size_t i = 0; i < n; i++) {
        ln__redis_args_str(&a, refs[i].id);
        ln__redis_args_str(&a, refs[i].token);
    }
    int rc = 0;
    redisReply *rep = ln__redis_run(r, LN__RS_CANCEL_POLL, &a, &rc);
    ln__redis_args_free(&a);
    if (!rep) return rc;
    if (rep->type != REDIS_REPLY_ARRAY || (rep->elements != 1 && rep->elements != n + 1) ||
        rep->element[0]->type != REDIS_REPLY_STRING)
        return ln__redis_bad_reply(be, rep, "cancel_poll");
    for (size_t i = 1; i < rep->elements; i++) gone[i - 1] = ln__redis_int_at(rep, i) != 0;
    *mark = strtoll(rep->element[0]->str, NULL, 10);
    freeReplyObject(rep);
    return 0;
}
