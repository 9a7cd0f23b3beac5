/* metrics.c - a queue's metrics on Redis (jobs.h "Metrics"): one
 * script (lua/metrics.lua: HMGET of BullMQ's metrics:<type> hash, LLEN and
 * LRANGE of its :data list), so the counters and points are read in one
 * consistent snapshot. Workers write them in step.lua (lib.lua's
 * collect_metrics); docs/internals/metrics.md has the layout. */
#include "redis_int.h"

#include "internal.h"
#include "redis_scripts.h"
#include "redis_view.h"

#include <stdlib.h>
#include <string.h>

/* A number field of the hash: 0 when absent (BullMQ's getMetrics reads
 * a missing field so). */
static int64_t field(const redisReply *rep, size_t i) {
    return rep->element[i]->type == REDIS_REPLY_NIL ? 0 : ln__redis_int_at(rep, i);
}

int ln__redis_metrics(ln__jobs_be *be, const char *queue, int type, int64_t start, int64_t end,
                      ln_job_metrics *out) {
    ln__redis_be *r = ln__redis_at(be, queue);
    ln__redis_args a = {0};
    ln__redis_args_str(&a, type == LN_JOB_COMPLETED ? "completed" : "failed");
    ln__redis_args_i64(&a, start);
    ln__redis_args_i64(&a, end);
    ln__redis_args_i64(&a, LN_JOB_METRICS_POINTS_MAX);
    int rc = 0;
    redisReply *rep = ln__redis_run(r, LN__RS_METRICS, &a, &rc);
    ln__redis_args_free(&a);
    if (rep == NULL) return rc;
    const redisReply *pts =
        rep->type == REDIS_REPLY_ARRAY && rep->elements == 5 ? rep->element[3] : NULL;
    if (pts == NULL || pts->type != REDIS_REPLY_ARRAY ||
        pts->elements > LN_JOB_METRICS_POINTS_MAX) {
        freeReplyObject(rep);
        return ln__jobs_be_err(be, LN_EBACKEND, "redis: unexpected reply to metrics");
    }
    out->count = (uint64_t)field(rep, 0);
    out->prev_ts = field(rep, 1);
    out->prev_count = (uint64_t)field(rep, 2);
    out->npoints = (uint64_t)field(rep, 4);
    if (pts->elements > 0 && (out->data = ln__malloc(pts->elements * sizeof *out->data)) == NULL) {
        freeReplyObject(rep);
        return ln__jobs_be_err(be, LN_ENOMEM, "out of memory");
    }
    /* BullMQ's getMetrics reads a point that is not a number as 0. */
    for (size_t i = 0; i < pts->elements; i++) {
        int64_t v = ln__redis_int_at(pts, i);
        out->data[out->ndata++] = v > 0 ? (uint64_t)v : 0;
    }
    freeReplyObject(rep);
    return 0;
}
