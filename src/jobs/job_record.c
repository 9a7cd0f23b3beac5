/* job_record.c - job records: state names, the ln_job_info helpers of
 * jobs.h, the one destructor of a taken job, and the backend error helper.
 * A leaf: it calls nothing of the jobs layer but the allocator, so the
 * front and every backend may call it without a cycle. */
#include "backend.h"

#include "../internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const state_names[LN_JOB_NSTATES] = {
    [LN_JOB_WAITING] = "waiting",         [LN_JOB_DELAYED] = "delayed",
    [LN_JOB_PRIORITIZED] = "prioritized", [LN_JOB_ACTIVE] = "active",
    [LN_JOB_COMPLETED] = "completed",     [LN_JOB_FAILED] = "failed",
    [LN_JOB_PAUSED] = "paused",           [LN_JOB_WAITING_CHILDREN] = "waiting-children",
};

const char *ln_job_state_name(int state) {
    return state >= 0 && state < LN_JOB_NSTATES ? state_names[state] : "unknown";
}

int ln_job_state_parse(const char *s) {
    for (int i = 0; s != NULL && i < LN_JOB_NSTATES; i++)
        if (strcmp(s, state_names[i]) == 0) return i;
    return LN_EINVAL;
}

void ln_job_info_clear(ln_job_info *info) {
    if (info == NULL) return;
    ln__free(info->id);
    ln__free(info->name);
    ln__free(info->data);
    ln__free(info->result);
    ln__free(info->failed_reason);
    ln__free(info->progress);
    ln__free(info->traceparent);
    ln__free(info->tracestate);
    ln__free(info->backoff_type);
    ln__free(info->cursor);
    memset(info, 0, sizeof *info);
}

void ln_job_info_free_array(ln_job_info *infos, size_t n) {
    if (infos == NULL) return;
    for (size_t i = 0; i < n; i++) ln_job_info_clear(&infos[i]);
    ln__free(infos);
}

void ln_jobs_free_lines(char **lines, size_t n) {
    if (lines == NULL) return;
    for (size_t i = 0; i < n; i++) ln__free(lines[i]);
    ln__free(lines);
}

void ln__job_taken_free(ln__job_taken *t) {
    if (t == NULL) return;
    ln__free(t->ref.id);
    ln__free(t->name);
    ln__free(t->data);
    ln__free(t->traceparent);
    ln__free(t->tracestate);
    ln__free(t->backoff_type);
    memset(t, 0, sizeof *t);
}

int ln__jobs_be_err(ln__jobs_be *be, int code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(be->errmsg, sizeof be->errmsg, fmt, ap);
    va_end(ap);
    return code;
}
