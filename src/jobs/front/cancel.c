/* cancel.c - the front of cancelling a job from any process: ln_jobs_cancel
 * (jobs.h) and the worker's look for cancels of the jobs it holds
 * (ln__store_cancel_poll, store.h). The design: docs/internals/cancel.md. */
#include "front.h"
#include "store.h"

#include <string.h>

int ln_jobs_cancel(ln_jobs *jobs, const char *queue, const char *id) {
    char msg[LN__JOBS_ERRMSG_MAX];
    int code = ln__jobs_check_queue(queue, msg, sizeof msg);
    if (code == 0) code = ln__jobs_check_name(id, SIZE_MAX, "job id", msg, sizeof msg);
    int err = ln__jobs_enter(jobs);
    if (err != 0) return err;
    if (code != 0) return ln__jobs_leave(jobs, ln__jobs_err(jobs, code, "%s", msg));
    if (jobs->be->methods->cancel == NULL)
        return ln__jobs_leave(jobs, ln__jobs_err(jobs, LN_ENOTSUP, "the store cannot cancel jobs"));
    return ln__jobs_leave(jobs,
                          jobs->be->methods->cancel(jobs->be, queue, id, LN_JOB_CANCELED_REASON));
}

int ln__store_cancel_poll(ln_jobs *jobs, const char *queue, int64_t *mark, const ln__job_ref *refs,
                          int *gone, size_t n) {
    memset(gone, 0, n * sizeof *gone);
    int err = ln__jobs_enter(jobs);
    if (err != 0) return err;
    if (jobs->be->methods->cancel_poll == NULL || n == 0) return ln__jobs_leave(jobs, 0);
    err = jobs->be->methods->cancel_poll(jobs->be, queue, mark, refs, gone, n);
    if (err != 0) { /* advisory: look again later; keep the run's own message */
        memset(gone, 0, n * sizeof *gone);
        jobs->be->errmsg[0] = '\0';
    }
    ln__jobs_leave(jobs, 0);
    return err;
}
