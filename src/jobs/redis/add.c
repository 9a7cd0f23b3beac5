/* add.c - adding jobs on Redis: one add.lua call for a batch, all or
 * nothing, with BullMQ 6.7's keys, fields and events; deduplication
 * (opts.dedup_*) and a parent of opts.parent_* (flow_parent.c) are
 * handled inside the script. With wait_replicas, WAIT confirms the add
 * on the replicas (replicas.c). */
#include "redis_int.h"

#include "internal.h"
#include "redis_backoff.h"
#include "redis_replicas.h"
#include "redis_scripts.h"
#include "redis_view.h"

static void push_keep(ln__redis_args *a, const ln_job_keep *k) {
    ln__redis_args_i64(a, k->mode);
    ln__redis_args_i64(a, k->value);
}

static void push_job(ln__redis_args *a, const ln__job_new *job) {
    const ln_job_opts *o = &job->opts;
    ln__redis_args_str(a, o->job_id ? o->job_id : "");
    ln__redis_args_str(a, job->name);
    ln__redis_args_mem(a, job->data, job->data_len);
    ln__redis_args_i64(a, o->delay_ms);
    ln__redis_args_i64(a, o->priority);
    ln__redis_args_i64(a, o->attempts);
    ln__redis_args_backoff(a, o); /* type, "<ms>[:<jitter>]" */
    ln__redis_args_str(a, o->lifo ? "1" : "0");
    push_keep(a, &o->remove_on_complete);
    push_keep(a, &o->remove_on_fail);
    ln__redis_args_str(a, o->traceparent ? o->traceparent : "");
    ln__redis_args_str(a, o->tracestate ? o->tracestate : "");
    ln__redis_args_i64(a, o->timeout_ms);
    ln__redis_args_str(a, o->dedup_id ? o->dedup_id : "");
    ln__redis_args_i64(a, o->dedup_ttl_ms);
    ln__redis_args_str(a, o->dedup_extend ? "1" : "0");
    ln__redis_args_str(a, o->dedup_replace ? "1" : "0");
    ln__redis_args_str(a, o->dedup_keep_last_if_active ? "1" : "0");
    ln__redis_args_str(a, o->dedup_reschedule ? "1" : "0");
}

int ln__redis_add(ln__jobs_be *be, const char *queue, ln__job_new *jobs, size_t n) {
    ln__redis_be *r = ln__redis_at(be, queue);
    int rc = 0;
    ln__redis_args a = {0};
    ln__redis_args_i64(&a, (int64_t)n);
    /* The front checked ids and priorities by BullMQ's rules (jobs.h);
     * LN_JOB_PRIORITY_MAX keeps the score exact below 2^53. */
    for (size_t i = 0; i < n; i++) push_job(&a, &jobs[i]);
    rc = ln__redis_parent_push(r, &a, jobs, n); /* parents (flow_parent.c) */
    redisReply *rep = rc == 0 ? ln__redis_run(r, LN__RS_ADD, &a, &rc) : NULL;
    ln__redis_args_free(&a);
    if (!rep) return rc;
    if ((rc = ln__redis_parent_refused(be, rep, jobs, n)) != 0) return rc;
    if (rep->type != REDIS_REPLY_ARRAY || rep->elements != 2 * n)
        return ln__redis_bad_reply(be, rep, "add");
    for (size_t i = 0; i < n; i++) {
        if (rep->element[2 * i]->type != REDIS_REPLY_STRING)
            return ln__redis_bad_reply(be, rep, "add");
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
