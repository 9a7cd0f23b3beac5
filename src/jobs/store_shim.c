/* TEMPORARY: replaced by the front's implementation at merge */
/* store_shim.c - store.h implemented over backend.h's ln__jobs_ops table,
 * so the worker builds and runs against it before the front provides it:
 * each store operation locks the handle (ln__jobs_enter / ln__jobs_leave),
 * and a store without pipe ops gets a synchronous pipe of depth 1. */
#include "store.h"

#include "front.h"

#include "../internal.h"

#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------ operations */

int ln__store_step(ln_jobs *jobs, const char *queue, ln__jobs_step *st) {
    int err = ln__jobs_enter(jobs);
    if (err != 0) return err;
    return ln__jobs_leave(jobs, jobs->be->ops->step(jobs->be, queue, st));
}

int ln__store_recover_stalled(ln_jobs *jobs, const char *queue, unsigned max_stalled,
                              const char *reason, size_t *requeued, size_t *failed) {
    int err = ln__jobs_enter(jobs);
    if (err != 0) return err;
    return ln__jobs_leave(jobs, jobs->be->ops->recover_stalled(jobs->be, queue, max_stalled, reason,
                                                               requeued, failed));
}

int ln__store_release(ln_jobs *jobs, const char *queue, const ln__job_ref *refs, int *rc,
                      size_t n) {
    int err = ln__jobs_enter(jobs);
    if (err != 0) return err;
    return ln__jobs_leave(jobs, jobs->be->ops->release(jobs->be, queue, refs, rc, n));
}

int ln__store_progress(ln_jobs *jobs, const char *queue, const ln__job_ref *ref, const char *json) {
    int err = ln__jobs_enter(jobs);
    if (err != 0) return err;
    return ln__jobs_leave(jobs, jobs->be->ops->progress(jobs->be, queue, ref, json));
}

int ln__store_log(ln_jobs *jobs, const char *queue, const ln__job_ref *ref, const char *line) {
    int err = ln__jobs_enter(jobs);
    if (err != 0) return err;
    return ln__jobs_leave(jobs, jobs->be->ops->log(jobs->be, queue, ref, line));
}

int ln__store_pending(ln_jobs *jobs, const char *queue, int *pending) {
    int err = ln__jobs_enter(jobs);
    if (err != 0) return err;
    return ln__jobs_leave(jobs, jobs->be->ops->pending(jobs->be, queue, pending));
}

/* ------------------------------------------------------------------ wait */

int ln__store_wait_open(ln_jobs *jobs, const char *queue, ln__jobs_wait **out) {
    if (jobs == NULL || jobs->be->ops->wait_open == NULL) return LN_ENOTSUP;
    int err = ln__jobs_enter(jobs);
    if (err != 0) return err;
    err = jobs->be->ops->wait_open(jobs->be, queue, out);
    ln__jobs_leave(jobs, 0); /* without one the worker polls */
    return err;
}

int ln__wait_arm(ln__jobs_wait *w, int64_t timeout_ms, int *fd, int64_t *limit_ms) {
    return w->ops->wait_arm(w, timeout_ms, fd, limit_ms);
}

int ln__wait_read(ln__jobs_wait *w, int64_t *due_in_ms) {
    return w->ops->wait_read(w, due_in_ms);
}

void ln__wait_cancel(ln__jobs_wait *w) {
    w->ops->wait_cancel(w);
}

void ln__wait_close(ln__jobs_wait *w) {
    if (w != NULL) w->ops->wait_close(w);
}

/* ------------------------------------------------- the synchronous pipe */

typedef struct sync_pipe {
    ln__jobs_pipe base;
    ln_jobs *jobs;
    char queue[LN_JOB_QUEUE_MAX];
    ln__jobs_step *st; /* the step sent, or NULL */
    int err;           /* its result */
} sync_pipe;

/* Run the step now (under the handle's mutex) and keep its result. */
static int sync_send(ln__jobs_pipe *p, ln__jobs_step *st) {
    sync_pipe *sp = (sync_pipe *)p;
    ln_jobs *jobs = sp->jobs;
    sp->st = st;
    sp->err = ln__jobs_enter(jobs);
    if (sp->err != 0) {
        snprintf(p->errmsg, sizeof p->errmsg, "%s", ln_strerror(sp->err));
        return 0;
    }
    sp->err = jobs->be->ops->step(jobs->be, sp->queue, st);
    if (sp->err != 0)
        snprintf(p->errmsg, sizeof p->errmsg, "%s",
                 jobs->be->errmsg[0] != '\0' ? jobs->be->errmsg : ln_strerror(sp->err));
    ln__jobs_leave(jobs, sp->err);
    return 0;
}

static int sync_recv(ln__jobs_pipe *p, ln__jobs_step *st) {
    sync_pipe *sp = (sync_pipe *)p;
    (void)st; /* the step sent: its outputs are already filled */
    sp->st = NULL;
    return sp->err;
}

static int sync_poll(ln__jobs_pipe *p, int *fd) {
    (void)p;
    *fd = -1;
    return 1;
}

static void sync_close(ln__jobs_pipe *p) {
    ln__free(p);
}

static const ln__jobs_ops sync_ops = {
    .version = LN__JOBS_BACKEND_VERSION,
    .name = "sync",
    .pipe_send = sync_send,
    .pipe_recv = sync_recv,
    .pipe_poll = sync_poll,
    .pipe_close = sync_close,
};

int ln__store_pipe_open(ln_jobs *jobs, const char *queue, ln__jobs_pipe **out) {
    if (jobs == NULL) return LN_EINVAL;
    if (jobs->be->ops->pipe_open != NULL && ln__jobs_enter(jobs) == 0) {
        int err = jobs->be->ops->pipe_open(jobs->be, queue, out);
        ln__jobs_leave(jobs, 0);
        if (err == 0) return 0; /* else steps are synchronous */
    }
    sync_pipe *sp = ln__calloc(1, sizeof *sp);
    if (sp == NULL) return LN_ENOMEM;
    sp->base.ops = &sync_ops;
    sp->jobs = jobs;
    snprintf(sp->queue, sizeof sp->queue, "%s", queue);
    *out = &sp->base;
    return 0;
}

unsigned ln__pipe_depth(const ln__jobs_pipe *p) {
    return p->ops == &sync_ops ? 1 : LN__PIPE_DEPTH;
}

int ln__pipe_send(ln__jobs_pipe *p, ln__jobs_step *st) {
    return p->ops->pipe_send(p, st);
}

int ln__pipe_recv(ln__jobs_pipe *p, ln__jobs_step *st) {
    return p->ops->pipe_recv(p, st);
}

int ln__pipe_poll(ln__jobs_pipe *p, int *fd) {
    return p->ops->pipe_poll(p, fd);
}

const char *ln__pipe_errmsg(const ln__jobs_pipe *p) {
    return p->errmsg;
}

void ln__pipe_close(ln__jobs_pipe *p) {
    if (p != NULL) p->ops->pipe_close(p);
}

/* ----------------------------------------------------------- job records */

void ln__job_taken_free(ln__job_taken *t) {
    ln__free(t->name);
    ln__free(t->data);
    ln__free(t->traceparent);
    ln__free(t->tracestate);
    t->name = t->data = t->traceparent = t->tracestate = NULL;
}
