/* metrics.c - the front of a queue's per-minute metrics (jobs.h
 * "Metrics"): the read call. The arithmetic is the model's
 * (metrics_record.c). */
#include "front.h"

#include "internal.h"

#include <stdio.h>
#include <string.h>

void ln_job_metrics_clear(ln_job_metrics *m) {
    if (m == NULL) return;
    ln__free(m->data);
    memset(m, 0, sizeof *m);
}

int ln_jobs_metrics(ln_jobs *jobs, const char *queue, int type, int64_t start, int64_t end,
                    ln_job_metrics *out) {
    char msg[LN__JOBS_ERRMSG_MAX] = "";
    int code = ln__jobs_check_queue(queue, msg, sizeof msg);
    if (code == 0 && out == NULL) {
        code = LN_EINVAL;
        snprintf(msg, sizeof msg, "out is NULL");
    } else if (code == 0 && type != LN_JOB_COMPLETED && type != LN_JOB_FAILED) {
        code = LN_EINVAL;
        snprintf(msg, sizeof msg, "metrics type must be completed or failed");
    }
    if (out != NULL) memset(out, 0, sizeof *out);
    int err = ln__jobs_enter(jobs);
    if (err != 0) return err;
    if (code != 0) return ln__jobs_leave(jobs, ln__jobs_err(jobs, code, "%s", msg));
    err = jobs->be->methods->metrics(jobs->be, queue, type, start, end, out);
    if (err != 0) ln_job_metrics_clear(out);
    return ln__jobs_leave(jobs, err);
}
