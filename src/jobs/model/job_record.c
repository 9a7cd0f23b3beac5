/* job_record.c - job records: state names, the ln_job_info helpers of
 * jobs.h, the one destructor of a taken job, and the backend error helper.
 * A leaf: it calls nothing of the jobs layer but the allocator, so the
 * front and every backend may call it without a cycle. */
#include "job_record.h"

#include "internal.h"

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

void ln_job_opts_init(ln_job_opts *opts) {
    if (opts == NULL) return;
    memset(opts, 0, sizeof *opts);
    opts->attempts = 1;
    opts->backoff = LN_BACKOFF_FIXED;
    opts->remove_on_complete.mode = LN_KEEP_ALL;
    opts->remove_on_fail.mode = LN_KEEP_ALL;
}

int ln__job_flow_flags(const ln_job_opts *o) {
    return (o->fail_parent_on_failure ? LN__FLOW_FPOF : 0) |
           (o->continue_parent_on_failure ? LN__FLOW_CPOF : 0) |
           (o->ignore_dependency_on_failure ? LN__FLOW_IDOF : 0) |
           (o->remove_dependency_on_failure ? LN__FLOW_RDOF : 0);
}
