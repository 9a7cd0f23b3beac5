/* stalled.c - leases that ended without an outcome, on Redis: active jobs
 * whose lock lapsed go back to waiting, or fail past max_stalled
 * (recover.lua, BullMQ's moveStalledJobsToWait); a worker that stops
 * gracefully gives its jobs back at once (release.lua). */
#include "redis_int.h"

#include "internal.h"
#include "redis_scripts.h"
#include "redis_view.h"

int ln__redis_recover_stalled(ln__jobs_be *be, const char *queue, unsigned max_stalled,
                              const char *reason, size_t *requeued, size_t *failed) {
    ln__redis_be *r = ln__redis_at(be, queue);
    *requeued = *failed = 0;
    int rc = 0;
    ln__redis_args a = {0};
    ln__redis_args_i64(&a, max_stalled);
    ln__redis_args_str(&a, reason);
    redisReply *rep = ln__redis_run(r, LN__RS_RECOVER, &a, &rc);
    ln__redis_args_free(&a);
    if (!rep) return rc;
    if (rep->type != REDIS_REPLY_ARRAY || rep->elements != 2)
        return ln__redis_bad_reply(be, rep, "recover");
    *requeued = (size_t)ln__redis_int_at(rep, 0);
    *failed = (size_t)ln__redis_int_at(rep, 1);
    freeReplyObject(rep);
    return 0;
}

int ln__redis_release(ln__jobs_be *be, const char *queue, const ln__job_ref *refs, int *rcs,
                      size_t n) {
    ln__redis_be *r = ln__redis_at(be, queue);
    int rc = 0;
    ln__redis_args a = {0};
    for (size_t i = 0; i < n; i++) {
        ln__redis_args_str(&a, refs[i].id);
        ln__redis_args_str(&a, refs[i].token);
    }
    redisReply *rep = ln__redis_run(r, LN__RS_RELEASE, &a, &rc);
    ln__redis_args_free(&a);
    if (!rep) return rc;
    if (rep->type != REDIS_REPLY_ARRAY || rep->elements != n)
        return ln__redis_bad_reply(be, rep, "release");
    /* 0, or a leave_active code (LN__RC_*): not ours any more */
    for (size_t i = 0; i < n; i++) rcs[i] = ln__redis_int_at(rep, i) == 0 ? 0 : LN_ESTALE;
    freeReplyObject(rep);
    return 0;
}
