/* flow_parent.c - the front of children added to an existing parent
 * (ln_job_opts.parent_*): their checks and the removal of unprocessed
 * children (jobs_flows.h; docs/internals/flows.md "Adding to an existing
 * parent"). ln_job_wait_children is the worker's (worker_waited.c). */
#include "flow_parent.h"

#include "front.h"

#include <stdio.h>
#include <string.h>

static int bool_ok(int v) {
    return v == 0 || v == 1;
}

int ln__dynflow_check_opts(const ln_job_opts *o, char *err, size_t errsize) {
    if (!bool_ok(o->fail_parent_on_failure) || !bool_ok(o->continue_parent_on_failure) ||
        !bool_ok(o->ignore_dependency_on_failure) || !bool_ok(o->remove_dependency_on_failure)) {
        snprintf(err, errsize, "the parent failure options must be 0 or 1");
        return LN_EINVAL;
    }
    if (o->parent_queue == NULL && o->parent_id == NULL) {
        if (ln__job_flow_flags(o) == 0) return 0;
        snprintf(err, errsize,
                 "fail_parent_on_failure, continue_parent_on_failure, "
                 "ignore_dependency_on_failure and remove_dependency_on_failure need a parent");
        return LN_EINVAL;
    }
    if (o->parent_queue == NULL || o->parent_id == NULL) {
        snprintf(err, errsize, "parent_queue and parent_id go together (one is NULL)");
        return LN_EINVAL;
    }
    char sub[LN__JOBS_ERRMSG_MAX - 32];
    int rc = ln__jobs_check_queue(o->parent_queue, sub, sizeof sub);
    if (rc == 0) rc = ln__jobs_check_name(o->parent_id, SIZE_MAX, "job id", sub, sizeof sub);
    if (rc != 0) {
        snprintf(err, errsize, "parent: %s", sub);
        return rc;
    }
    if (o->dedup_id != NULL) {
        snprintf(err, errsize, "deduplication and a parent cannot be used together");
        return LN_EINVAL;
    }
    return 0;
}

int ln__dynflow_refuse(const ln_job_opts *o, const char *what, char *err, size_t errsize) {
    if (o->parent_queue == NULL && o->parent_id == NULL) return 0;
    snprintf(err, errsize, "%s cannot have parent_queue / parent_id", what);
    return LN_EINVAL;
}

/* The queue / id check of a call taking a job, message into msg. */
int ln__dynflow_check_qid(const char *what, const char *queue, const char *id, char *msg,
                          size_t msgsize) {
    char sub[LN__JOBS_ERRMSG_MAX - 32];
    int code = ln__jobs_check_queue(queue, sub, sizeof sub);
    /* no upper bound: another program may have stored a longer id */
    if (code == 0) code = ln__jobs_check_name(id, SIZE_MAX, "job id", sub, sizeof sub);
    if (code != 0) snprintf(msg, msgsize, "%s%s", what, sub);
    return code;
}

int ln_jobs_remove_unprocessed_children(ln_jobs *jobs, const char *queue, const char *id,
                                        size_t *removed) {
    char msg[LN__JOBS_ERRMSG_MAX] = "";
    size_t r = 0;
    if (removed != NULL) *removed = 0;
    int code = ln__dynflow_check_qid("", queue, id, msg, sizeof msg);
    int err = ln__jobs_enter(jobs);
    if (err != 0) return err;
    if (code != 0) return ln__jobs_leave(jobs, ln__jobs_err(jobs, code, "%s", msg));
    ln__jobs_be *be = jobs->be;
    if (be->methods->remove_unprocessed == NULL)
        return ln__jobs_leave(jobs, ln__jobs_be_err(be, LN_ENOTSUP,
                                                    "store '%s' cannot remove unprocessed children",
                                                    be->methods->name));
    err = be->methods->remove_unprocessed(be, queue, id, LN_JOBS_REMOVE_TREE_MAX, &r);
    err = ln__jobs_leave(jobs, err);
    if (removed != NULL) *removed = err == 0 ? r : 0;
    return err;
}
