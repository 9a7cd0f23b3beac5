/* workers.c - the workers connected to a queue (jobs.h "Workers
 * connected"): the public listing and the worker run's heartbeat, through
 * the store methods workers and worker_beat (backend.h). docs/internals/workers.md
 * has the design: how each store knows its workers. */
#include "front.h"
#include "store.h"

#include "internal.h"

#include <string.h>

int ln_jobs_workers(ln_jobs *jobs, const char *queue, ln_worker_info **out, size_t *n) {
    int err = ln__jobs_enter(jobs);
    if (err != 0) return err;
    if (out == NULL || n == NULL)
        return ln__jobs_leave(jobs, ln__jobs_err(jobs, LN_EINVAL, "out and n must not be NULL"));
    *out = NULL;
    *n = 0;
    char msg[LN__JOBS_ERRMSG_MAX];
    int code = ln__jobs_check_queue(queue, msg, sizeof msg);
    if (code != 0) return ln__jobs_leave(jobs, ln__jobs_err(jobs, code, "%s", msg));
    ln__jobs_be *be = jobs->be;
    if (be->methods->workers == NULL)
        return ln__jobs_leave(jobs, 0); /* a store that cannot tell: none */
    err = be->methods->workers(be, queue, LN_JOB_WORKERS_MAX, out, n);
    if (err != 0) {
        ln_jobs_workers_free(*out, *n);
        *out = NULL;
        *n = 0;
    }
    LN_ASSERT(*n <= LN_JOB_WORKERS_MAX && (*n == 0) == (*out == NULL));
    return ln__jobs_leave(jobs, err);
}

void ln_jobs_workers_free(ln_worker_info *workers, size_t n) {
    if (workers == NULL) return;
    for (size_t i = 0; i < n; i++) {
        ln__free(workers[i].id);
        ln__free(workers[i].name);
        ln__free(workers[i].addr);
        ln__free(workers[i].host);
    }
    ln__free(workers);
}

int ln__store_worker_beat(ln_jobs *jobs, const char *queue, int64_t *id, int leaving) {
    int err = ln__jobs_enter(jobs);
    if (err != 0) return err;
    ln__jobs_be *be = jobs->be;
    if (be->methods->worker_beat == NULL) {
        *id = 0;
        ln__jobs_leave(jobs, 0);
        return LN_ENOTSUP; /* the worker stops beating */
    }
    err = be->methods->worker_beat(be, queue, id, leaving);
    /* Best effort (a failed beat only delays the listing): its message
     * must not replace the one of the run's last real failure, e.g. the
     * full-disk report of a step, which the caller reads afterwards. */
    be->errmsg[0] = '\0';
    ln__jobs_leave(jobs, 0);
    return err;
}
