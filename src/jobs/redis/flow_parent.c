/* flow_parent.c - children added to an existing parent (BullMQ's add
 * with opts.parent: add.lua's parent section) and a running job that
 * waits for its children (moveToWaitingChildren: wait_children.lua) on
 * Redis; docs/internals/flows.md "Adding to an existing parent". */
#include "redis_int.h"

#include "internal.h"
#include "redis_cluster.h"
#include "redis_codes.h"
#include "redis_scripts.h"
#include "redis_view.h"

#include <stdio.h>
#include <string.h>

#define BASE_MAX LN__REDIS_BASE_MAX

int ln__redis_parent_push(ln__redis_be *r, ln__redis_args *a, const ln__job_new *jobs, size_t n) {
    const ln__redis_conn *c = &r->conn;
    const char *base = r->key;
    size_t i = 0;
    while (i < n && jobs[i].opts.parent_queue == NULL) i++;
    if (i == n) return 0; /* no parent: nothing more to send */
    unsigned slot = c->cfg->cluster ? ln__redis_slot(base, strlen(base)) : 0;
    ln__redis_args_str(a, c->cfg->prefix);
    for (i = 0; i < n; i++) {
        const ln_job_opts *o = &jobs[i].opts;
        ln__redis_args_str(a, o->parent_queue != NULL ? o->parent_queue : "");
        ln__redis_args_str(a, o->parent_queue != NULL ? o->parent_id : "");
        ln__redis_args_i64(a, ln__job_flow_flags(o));
        if (!c->cfg->cluster || o->parent_queue == NULL) continue;
        char pb[BASE_MAX];
        int len = snprintf(pb, sizeof pb, "%s:%s:", c->cfg->prefix, o->parent_queue);
        if (ln__redis_slot(pb, (size_t)len) == slot) continue;
        char what[32] = "";
        if (n > 1) snprintf(what, sizeof what, "job %zu: ", i);
        return ln__jobs_be_err(&r->base, LN_EINVAL,
                               "%son Redis Cluster a parent must hash to its child's slot (put "
                               "the hash tag in the prefix, like {bull}): '%s' and '%s' do not",
                               what, base, pb);
    }
    return 0;
}

int ln__redis_parent_refused(ln__jobs_be *be, redisReply *rep, const ln__job_new *jobs, size_t n) {
    if (rep->type != REDIS_REPLY_ARRAY || rep->elements != 2 ||
        rep->element[0]->type != REDIS_REPLY_INTEGER)
        return 0;
    int64_t code = ln__redis_int_at(rep, 0), at = ln__redis_int_at(rep, 1);
    freeReplyObject(rep);
    if (at < 1 || (size_t)at > n)
        return ln__jobs_be_err(be, LN_EBACKEND, "redis: unexpected reply to add");
    const ln_job_opts *o = &jobs[at - 1].opts;
    char what[32] = "";
    if (n > 1) snprintf(what, sizeof what, "job %lld: ", (long long)(at - 1));
    if (code == LN__RC_PARENT_MISSING)
        return ln__jobs_be_err(be, LN_ENOENT,
                               "%smissing key for parent job: queue '%s' has no job '%s'", what,
                               o->parent_queue, o->parent_id);
    if (code == LN__RC_PARENT_TAKEN)
        return ln__jobs_be_err(be, LN_EEXIST,
                               "%sjob '%s' is a child of another parent; the parent job %s:%s "
                               "cannot be replaced",
                               what, o->job_id ? o->job_id : "", o->parent_queue, o->parent_id);
    if (code == LN__RC_SELF_PARENT)
        return ln__jobs_be_err(be, LN_EINVAL, "%sjob '%s' cannot be its own parent", what,
                               o->job_id ? o->job_id : "");
    if (code == LN__RC_PARENT_CYCLE)
        return ln__jobs_be_err(be, LN_EINVAL,
                               "%sjob '%s' is an ancestor of the parent job %s:%s: each would "
                               "wait for the other for good",
                               what, o->job_id ? o->job_id : "", o->parent_queue, o->parent_id);
    if (code == LN__RC_CHILD_RUNNING)
        return ln__jobs_be_err(be, LN_EBUSY,
                               "%sjob '%s' is running; it can be made a child of %s:%s once it "
                               "is not",
                               what, o->job_id ? o->job_id : "", o->parent_queue, o->parent_id);
    return ln__jobs_be_err(be, LN_EBACKEND, "redis: unexpected code %lld from add",
                           (long long)code);
}

/* wait_children.lua for job ref: every pending child counts, or (child_queue
 * not NULL) only child child_id of child_queue. 1 moved, 0 none pending. */
static int wait_children(ln__jobs_be *be, const char *queue, const ln__job_ref *ref,
                         const char *child_queue, const char *child_id) {
    ln__redis_be *r = ln__redis_at(be, queue);
    ln__redis_conn *c = &r->conn;
    char *ckey = NULL;
    if (child_queue != NULL) {
        size_t klen = strlen(c->cfg->prefix) + strlen(child_queue) + strlen(child_id) + 3;
        if ((ckey = ln__malloc(klen)) == NULL)
            return ln__jobs_be_err(be, LN_ENOMEM, "out of memory");
        snprintf(ckey, klen, "%s:%s:%s", c->cfg->prefix, child_queue, child_id);
    }
    const char *argv[3] = {ref->id, ref->token, ckey};
    size_t lens[3] = {strlen(ref->id), strlen(ref->token), ckey ? strlen(ckey) : 0};
    int rc = 0;
    redisReply *rep =
        ln__redis_eval(c, LN__RS_WAIT_CHILDREN, r->key, ckey ? 3 : 2, argv, lens, &rc);
    ln__free(ckey);
    if (rep == NULL) return rc != 0 ? ln__redis_public_rc(rc) : LN_EBACKEND;
    if (rep->type != REDIS_REPLY_INTEGER) {
        freeReplyObject(rep);
        return ln__jobs_be_err(be, LN_EBACKEND, "redis: unexpected reply to wait_children");
    }
    long long code = rep->integer;
    freeReplyObject(rep);
    if (code == 0) return 1; /* moved (BullMQ's 0) */
    if (code == 1) return 0; /* no pending dependency */
    if (code == LN__RC_FAILED_CHILDREN)
        return ln__jobs_be_err(be, LN_EFAILED,
                               "Cannot complete job %s because it has at least one failed "
                               "child. moveToWaitingChildren",
                               ref->id);
    if (code == LN__RC_JOB_NOT_EXIST || code == LN__RC_LOCK_NOT_EXIST ||
        code == LN__RC_LOCK_MISMATCH || code == LN__RC_JOB_NOT_IN_STATE)
        return ln__jobs_be_err(be, LN_ESTALE,
                               "job %s is not active with this worker's lock (code %lld). "
                               "moveToWaitingChildren",
                               ref->id, code);
    return ln__jobs_be_err(be, LN_EBACKEND, "redis: unexpected code %lld from wait_children", code);
}

int ln__redis_wait_children(ln__jobs_be *be, const char *queue, const ln__job_ref *ref) {
    return wait_children(be, queue, ref, NULL, NULL);
}

int ln__redis_wait_child(ln__jobs_be *be, const char *queue, const ln__job_ref *ref,
                         const char *child_queue, const char *child_id) {
    return wait_children(be, queue, ref, child_queue, child_id);
}
