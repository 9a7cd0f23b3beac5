/* retry.c - finished jobs back to waiting on Redis (jobs.h's
 * ln_jobs_retry_finished): requeue.lua moves one job, or one step of at
 * most LN__RETRY_STEP jobs of a state that finished by a time, oldest
 * first, with attemptsMade reset, as BullMQ's retryJobs does. */
#include "redis_int.h"

#include "internal.h"
#include "redis_codes.h"
#include "redis_scripts.h"

#include <stdlib.h>

int ln__redis_retry(ln__jobs_be *be, const char *queue, const char *id, int state,
                    int64_t *before_ms, size_t *count) {
    ln__redis_be *r = ln__redis_at(be, queue);
    const char *want = ln_job_state_name(state);
    int rc = 0;
    *count = 0;
    ln__redis_args a = {0};
    ln__redis_args_str(&a, id ? id : "");
    ln__redis_args_i64(&a, LN__RETRY_STEP);
    ln__redis_args_str(&a, want);
    if (*before_ms >= 0)
        ln__redis_args_i64(&a, *before_ms);
    else
        ln__redis_args_str(&a, "");
    redisReply *rep = ln__redis_run(r, LN__RS_REQUEUE, &a, &rc);
    ln__redis_args_free(&a);
    if (!rep) return rc;
    int64_t code = rep->type == REDIS_REPLY_INTEGER ? rep->integer : 0;
    char *end = NULL;
    int ok = rep->type == REDIS_REPLY_ARRAY && rep->elements == 2 &&
             rep->element[0]->type == REDIS_REPLY_INTEGER && rep->element[0]->integer >= 0 &&
             rep->element[1]->type == REDIS_REPLY_STRING &&
             (*before_ms = strtoll(rep->element[1]->str, &end, 10)) >= 0 && *end == '\0';
    if (ok) *count = (size_t)rep->element[0]->integer;
    if (!ok && code != LN__RC_JOB_NOT_EXIST && code != LN__RC_JOB_NOT_IN_STATE)
        return ln__redis_bad_reply(be, rep, ln__redis_scripts[LN__RS_REQUEUE].name);
    freeReplyObject(rep);
    if (code == LN__RC_JOB_NOT_EXIST)
        return ln__jobs_be_err(be, LN_ENOENT, "queue '%s' has no job '%s'", queue, id);
    if (code == LN__RC_JOB_NOT_IN_STATE) {
        ln_job_info info = {0};
        rc = ln__redis_get(be, queue, id, &info);
        const char *now = rc ? "not in that state" : ln_job_state_name(info.state);
        ln_job_info_clear(&info);
        return ln__jobs_be_err(be, LN_EINVAL, "job '%s' is %s, not %s", id, now, want);
    }
    return 0;
}
