/* store.c - store.h: the worker's calls into a store, through the front.
 * A store op locks the handle (fork check included), calls the store
 * method and copies the backend's error detail to the handle; a wait or
 * pipe call goes to the object's method table without the lock.
 *
 * The synchronous pipe. A store without pipe methods (SQLite), or whose
 * pipe could not be made, gets this one: depth 1, send runs the step
 * method under the handle's mutex and keeps its return code, recv hands
 * it back, poll always says the reply is in. So the worker has one path,
 * and a step's failure shows at recv as it does on a real pipe
 * (docs/internals/backend.md, "Pipelined steps").
 */
#include "store.h"

#include "front.h"

#include "internal.h"

#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------ store ops */

int ln__store_step(ln_jobs *jobs, const char *queue, ln__jobs_step *st) {
    st->ntaken = 0; /* also when the handle refuses (a forked child) */
    st->next_due_ms = -1;
    int err = ln__jobs_enter(jobs);
    if (err != 0) return err;
    return ln__jobs_leave(jobs, jobs->be->methods->step(jobs->be, queue, st));
}

int ln__store_recover_stalled(ln_jobs *jobs, const char *queue, unsigned max_stalled,
                              const char *reason, size_t *requeued, size_t *failed) {
    *requeued = *failed = 0;
    int err = ln__jobs_enter(jobs);
    if (err != 0) return err;
    ln__jobs_be *be = jobs->be;
    return ln__jobs_leave(
        jobs, be->methods->recover_stalled(be, queue, max_stalled, reason, requeued, failed));
}

int ln__store_release(ln_jobs *jobs, const char *queue, const ln__job_ref *refs, int *rc,
                      size_t n) {
    int err = ln__jobs_enter(jobs);
    if (err != 0) return err;
    return ln__jobs_leave(jobs, jobs->be->methods->release(jobs->be, queue, refs, rc, n));
}

int ln__store_progress(ln_jobs *jobs, const char *queue, const ln__job_ref *ref, const char *json) {
    int err = ln__jobs_enter(jobs);
    if (err != 0) return err;
    return ln__jobs_leave(jobs, jobs->be->methods->progress(jobs->be, queue, ref, json));
}

int ln__store_log(ln_jobs *jobs, const char *queue, const ln__job_ref *ref, const char *line) {
    int err = ln__jobs_enter(jobs);
    if (err != 0) return err;
    return ln__jobs_leave(jobs, jobs->be->methods->log(jobs->be, queue, ref, line));
}

int ln__store_pending(ln_jobs *jobs, const char *queue, int *pending) {
    int err = ln__jobs_enter(jobs);
    if (err != 0) return err;
    return ln__jobs_leave(jobs, jobs->be->methods->pending(jobs->be, queue, pending));
}

/* ------------------------------------------------------------------ wait */

int ln__store_wait_open(ln_jobs *jobs, const char *queue, ln__jobs_wait **out) {
    *out = NULL;
    int err = ln__jobs_enter(jobs);
    if (err != 0) return err;
    ln__jobs_be *be = jobs->be;
    if (be->methods->wait_open == NULL) { /* no blocking wait: the worker polls */
        ln__jobs_leave(jobs, 0);
        return LN_ENOTSUP;
    }
    err = be->methods->wait_open(be, queue, out);
    if (err != 0) *out = NULL;
    return ln__jobs_leave(jobs, err);
}

int ln__wait_arm(ln__jobs_wait *w, int64_t timeout_ms, int *fd, int64_t *limit_ms) {
    return w->methods->arm(w, timeout_ms, fd, limit_ms);
}

int ln__wait_read(ln__jobs_wait *w, int64_t *due_in_ms) {
    return w->methods->read(w, due_in_ms);
}

void ln__wait_cancel(ln__jobs_wait *w) {
    w->methods->cancel(w);
}

void ln__wait_close(ln__jobs_wait *w) {
    if (w != NULL) w->methods->close(w);
}

/* ---------------------------------------------------- the synchronous pipe */

typedef struct sync_pipe {
    ln__jobs_pipe base;
    ln_jobs *jobs;
    char queue[LN_JOB_QUEUE_MAX];
    int sent; /* a step was run and its rc not yet handed back */
    int rc;   /* that step's return code */
} sync_pipe;

static int sync_send(ln__jobs_pipe *p, ln__jobs_step *st) {
    sync_pipe *s = (sync_pipe *)p;
    if (s->sent) return LN_EINVAL; /* depth 1: the caller's bug */
    int err = ln__jobs_enter(s->jobs);
    if (err == 0) {
        ln__jobs_be *be = s->jobs->be;
        err = be->methods->step(be, s->queue, st);
        /* The detail, copied while the mutex guards be->errmsg. */
        if (err != 0)
            snprintf(p->errmsg, sizeof p->errmsg, "%s",
                     be->errmsg[0] != '\0' ? be->errmsg : ln_strerror(err));
        err = ln__jobs_leave(s->jobs, err);
    } else {
        snprintf(p->errmsg, sizeof p->errmsg, "%s", ln_strerror(err));
    }
    s->sent = 1;
    s->rc = err;
    return 0;
}

static int sync_recv(ln__jobs_pipe *p, ln__jobs_step *st) {
    sync_pipe *s = (sync_pipe *)p;
    if (!s->sent) return LN_EINVAL;
    s->sent = 0;
    if (s->rc != 0) st->ntaken = 0;
    return s->rc;
}

static int sync_poll(ln__jobs_pipe *p, int *fd) {
    LN_UNUSED(p);
    *fd = -1;
    return 1; /* the reply is always in */
}

static void sync_close(ln__jobs_pipe *p) {
    ln__free(p);
}

static const ln__pipe_methods sync_pipe_methods = {
    .version = LN__PIPE_METHODS_VERSION,
    .depth = 1,
    .send = sync_send,
    .recv = sync_recv,
    .poll = sync_poll,
    .close = sync_close,
};

static int sync_pipe_open(ln_jobs *jobs, const char *queue, ln__jobs_pipe **out) {
    sync_pipe *s = ln__calloc(1, sizeof *s);
    if (s == NULL) return LN_ENOMEM;
    s->base.methods = &sync_pipe_methods;
    s->jobs = jobs;
    snprintf(s->queue, sizeof s->queue, "%s", queue);
    *out = &s->base;
    return 0;
}

int ln__store_pipe_open(ln_jobs *jobs, const char *queue, ln__jobs_pipe **out) {
    *out = NULL;
    int err = ln__jobs_enter(jobs);
    if (err != 0) return err;
    ln__jobs_be *be = jobs->be;
    if (be->methods->pipe_open != NULL && be->methods->pipe_open(be, queue, out) != 0)
        *out = NULL; /* without one, steps are synchronous */
    ln__jobs_leave(jobs, 0);
    return *out != NULL ? 0 : sync_pipe_open(jobs, queue, out);
}

unsigned ln__pipe_depth(const ln__jobs_pipe *p) {
    return p->methods->depth;
}

int ln__pipe_send(ln__jobs_pipe *p, ln__jobs_step *st) {
    return p->methods->send(p, st);
}

int ln__pipe_recv(ln__jobs_pipe *p, ln__jobs_step *st) {
    return p->methods->recv(p, st);
}

int ln__pipe_poll(ln__jobs_pipe *p, int *fd) {
    return p->methods->poll(p, fd);
}

const char *ln__pipe_errmsg(const ln__jobs_pipe *p) {
    return p->errmsg;
}

void ln__pipe_close(ln__jobs_pipe *p) {
    if (p != NULL) p->methods->close(p);
}
