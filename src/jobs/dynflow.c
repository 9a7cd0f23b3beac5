/* dynflow.c - the front of children added to an existing parent
 * (ln_job_opts.parent_*) and of ln_job_wait_children, with the worker's
 * side of the latter (jobs_flows.h; docs/internals/flows.md "Adding to an
 * existing parent"). */
#include "dynflow.h"

#include "worker_int.h"

#include <stdio.h>
#include <string.h>

int ln__dynflow_flags(const ln_job_opts *o) {
    return (o->fail_parent_on_failure ? LN__FLOW_FPOF : 0) |
           (o->continue_parent_on_failure ? LN__FLOW_CPOF : 0) |
           (o->ignore_dependency_on_failure ? LN__FLOW_IDOF : 0) |
           (o->remove_dependency_on_failure ? LN__FLOW_RDOF : 0);
}

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
        if (ln__dynflow_flags(o) == 0) return 0;
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
static int check_qid(const char *what, const char *queue, const char *id, char *msg,
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
    int code = check_qid("", queue, id, msg, sizeof msg);
    int err = ln__jobs_enter(jobs);
    if (err != 0) return err;
    if (code != 0) return ln__jobs_leave(jobs, ln__jobs_err(jobs, code, "%s", msg));
    ln__jobs_be *be = jobs->be;
    if (be->methods->version < 16 || be->methods->remove_unprocessed == NULL)
        return ln__jobs_leave(jobs, ln__jobs_be_err(be, LN_ENOTSUP,
                                                    "store '%s' cannot remove unprocessed children",
                                                    be->methods->name));
    err = be->methods->remove_unprocessed(be, queue, id, LN_JOBS_REMOVE_TREE_MAX, &r);
    err = ln__jobs_leave(jobs, err);
    if (removed != NULL) *removed = err == 0 ? r : 0;
    return err;
}

/* ------------------------------------------------------ handler side */

/* ln_job_wait_children (child_queue NULL) or ln_job_wait_child. */
static int wait_for(ln_job *job, const char *child_queue, const char *child_id) {
    if (job == NULL) return LN_EINVAL;
    ln_jobs *jobs = job->w->jobs;
    char msg[LN__JOBS_ERRMSG_MAX] = "";
    int code = child_queue != NULL || child_id != NULL
                   ? check_qid("child: ", child_queue, child_id, msg, sizeof msg)
                   : 0;
    int err = ln__jobs_enter(jobs);
    if (err != 0) return err;
    ln__jobs_be *be = jobs->be;
    if (code != 0) return ln__jobs_leave(jobs, ln__jobs_be_err(be, code, "%s", msg));
    if (job->waited) /* moved already: not held by this run any more */
        return ln__jobs_leave(
            jobs,
            ln__jobs_be_err(be, LN_ESTALE, "job %s waits for its children already", job->t.ref.id));
    unsigned need = child_queue != NULL ? 16 : 15;
    if (be->methods->version < need || (child_queue != NULL ? be->methods->wait_child == NULL
                                                            : be->methods->wait_children == NULL))
        return ln__jobs_leave(jobs,
                              ln__jobs_be_err(be, LN_ENOTSUP, "store '%s' cannot wait for children",
                                              be->methods->name));
    err = child_queue != NULL
              ? be->methods->wait_child(be, job->w->queue, &job->t.ref, child_queue, child_id)
              : be->methods->wait_children(be, job->w->queue, &job->t.ref);
    err = ln__jobs_leave(jobs, err);
    /* Handler thread; published to the dispatcher by the release push of
     * ln__worker_run_job, as the job's other outcome fields. */
    if (err == 1) job->waited = 1;
    return err;
}

int ln_job_wait_children(ln_job *job) {
    return wait_for(job, NULL, NULL);
}

int ln_job_wait_child(ln_job *job, const char *child_queue, const char *child_id) {
    if (job != NULL && (child_queue == NULL || child_id == NULL)) {
        ln_jobs *jobs = job->w->jobs;
        int err = ln__jobs_enter(jobs);
        if (err != 0) return err;
        return ln__jobs_leave(
            jobs, ln__jobs_be_err(jobs->be, LN_EINVAL, "child: queue and id are required"));
    }
    return wait_for(job, child_queue, child_id);
}

/* ------------------------------------------------- dispatcher side */

static void waited_free(ln_worker *w, ln_job *job) {
    ln__worker_slot_remove(w, job);
    ln__worker_job_free(job);
}

void ln__worker_waited(ln_worker *w, ln_job *job) {
    LN_ASSERT(job->waited && !job->collected && !job->timed_out);
    pthread_mutex_lock(&w->mu);
    w->stats.waited++;
    pthread_mutex_unlock(&w->mu);
    /* Not held any more: no renewal, timeout or cancel poll looks at it
     * (each skips collected or canceled jobs). One the dispatcher gave up
     * already (canceled: a cancel poll or a refused renewal saw it gone)
     * has no renewal in flight: those set canceled only then. */
    atomic_store_explicit(&job->canceled, 1, memory_order_relaxed);
    job->collected = 1;
    if (!job->renew_sent) {
        waited_free(w, job);
        return;
    }
    w->nwaited++; /* a step in flight refers to it: freed once received */
}

void ln__worker_waited_sweep(ln_worker *w) {
    for (size_t i = w->nslots; i-- > 0 && w->nwaited > 0;) {
        ln_job *job = w->slots[i];
        /* collected and not timed out: its handler has returned, so
         * waited (the handler's) may be read */
        if (!job->collected || job->timed_out || job->renew_sent || !job->waited) continue;
        waited_free(w, job); /* moves slots[nslots - 1], already seen, to i */
        w->nwaited--;
    }
}
