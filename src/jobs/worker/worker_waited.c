/* worker_waited.c - a running job's flow calls from its handler: waiting
 * for its children (ln_job_wait_children / ln_job_wait_child,
 * jobs_flows.h) with the dispatcher's side of it, and reading them
 * (ln_job_children_read). docs/internals/flows.md "Adding to an existing
 * parent". */
#include "worker_int.h"

#include "flow_parent.h"

#include <stdio.h>
#include <string.h>

/* ln_job_wait_children (child_queue NULL) or ln_job_wait_child. */
static int wait_for(ln_job *job, const char *child_queue, const char *child_id) {
    if (job == NULL) return LN_EINVAL;
    ln_jobs *jobs = job->w->jobs;
    char msg[LN__JOBS_ERRMSG_MAX] = "";
    int code = child_queue != NULL || child_id != NULL
                   ? ln__dynflow_check_qid("child: ", child_queue, child_id, msg, sizeof msg)
                   : 0;
    int err = ln__jobs_enter(jobs);
    if (err != 0) return err;
    ln__jobs_be *be = jobs->be;
    if (code != 0) return ln__jobs_leave(jobs, ln__jobs_be_err(be, code, "%s", msg));
    if (job->waited) /* moved already: not held by this run any more */
        return ln__jobs_leave(
            jobs,
            ln__jobs_be_err(be, LN_ESTALE, "job %s waits for its children already", job->t.ref.id));
    if (child_queue != NULL ? be->methods->wait_child == NULL : be->methods->wait_children == NULL)
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

int ln_job_children_read(ln_job *job, ln_job_children *out) {
    if (job == NULL) {
        if (out != NULL) memset(out, 0, sizeof *out);
        return LN_EINVAL;
    }
    return ln_jobs_children(job->w->jobs, job->w->queue, job->t.ref.id, out);
}
