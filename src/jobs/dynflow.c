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

/* ------------------------------------------------------ handler side */

int ln_job_wait_children(ln_job *job) {
    if (job == NULL) return LN_EINVAL;
    ln_jobs *jobs = job->w->jobs;
    int err = ln__jobs_enter(jobs);
    if (err != 0) return err;
    ln__jobs_be *be = jobs->be;
    if (job->waited) /* moved already: not held by this run any more */
        return ln__jobs_leave(
            jobs,
            ln__jobs_be_err(be, LN_ESTALE, "job %s waits for its children already", job->t.ref.id));
    if (be->methods->version < 15 || be->methods->wait_children == NULL)
        return ln__jobs_leave(jobs,
                              ln__jobs_be_err(be, LN_ENOTSUP, "store '%s' cannot wait for children",
                                              be->methods->name));
    err = ln__jobs_leave(jobs, be->methods->wait_children(be, job->w->queue, &job->t.ref));
    /* Handler thread; published to the dispatcher by the release push of
     * ln__worker_run_job, as the job's other outcome fields. */
    if (err == 1) job->waited = 1;
    return err;
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
