/* edit.c - the front of jobs_edit.h: changing a waiting job's
 * priority, delay or data, and reading or releasing a deduplication id.
 * Each call checks its arguments (the rules of ln_jobs_add), then runs the
 * store's edit method with the handle's mutex
 * held (ln_jobs_promote_all: for each of its steps, not between them).
 * docs/internals/edit.md has the design. */
#include "front.h"

#include "internal.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* As ln_jobs_add's delay limit (validate.c). */
#define EDIT_SPAN_MS (100LL * 366 * 24 * 3600 * 1000)

/* Check queue and the id named what (what NULL: no id), then enter; with
 * a message for code when code != 0. */
static int enter_edit(ln_jobs *jobs, const char *queue, const char *id, const char *what, int code,
                      const char *msg) {
    char m[LN__JOBS_ERRMSG_MAX];
    snprintf(m, sizeof m, "%s", msg != NULL ? msg : "");
    if (code == 0) code = ln__jobs_check_queue(queue, m, sizeof m);
    /* no upper bound: another program may have stored a longer id */
    if (code == 0 && what != NULL && id != NULL)
        code = ln__jobs_check_name(id, SIZE_MAX, what, m, sizeof m);
    if (code == 0 && what != NULL && id == NULL) {
        code = LN_EINVAL;
        snprintf(m, sizeof m, "%s must not be NULL", what);
    }
    int err = ln__jobs_enter(jobs);
    if (err != 0) return err;
    if (code != 0) {
        ln__jobs_err(jobs, code, "%s", m);
        pthread_mutex_unlock(&jobs->mu);
    }
    return code;
}

/* Run e on the store (entered), refusing a store without edit. */
static int run_edit(ln_jobs *jobs, const char *queue, ln__jobs_edit *e) {
    const ln__store_methods *m = jobs->be->methods;
    if (m->edit == NULL)
        return ln__jobs_leave(
            jobs, ln__jobs_err(jobs, LN_ENOTSUP, "the %s store cannot edit jobs", m->name));
    return ln__jobs_leave(jobs, m->edit(jobs->be, queue, e));
}

int ln_jobs_change_priority(ln_jobs *jobs, const char *queue, const char *id, int priority,
                            int lifo) {
    char msg[LN__JOBS_ERRMSG_MAX] = "";
    int code = 0;
    if (priority < 0 || priority > LN_JOB_PRIORITY_MAX) {
        code = LN_EINVAL;
        snprintf(msg, sizeof msg, "priority must be 0..%d (got %d)", LN_JOB_PRIORITY_MAX, priority);
    } else if (lifo != 0 && lifo != 1) {
        code = LN_EINVAL;
        snprintf(msg, sizeof msg, "lifo must be 0 or 1 (got %d)", lifo);
    }
    int err = enter_edit(jobs, queue, id, "job id", code, msg);
    if (err != 0) return err;
    ln__jobs_edit e = {.op = LN__EDIT_PRIORITY, .id = id, .priority = priority, .lifo = lifo};
    return run_edit(jobs, queue, &e);
}

int ln_jobs_change_delay(ln_jobs *jobs, const char *queue, const char *id, int64_t delay_ms) {
    char msg[LN__JOBS_ERRMSG_MAX] = "";
    int code = 0;
    if (delay_ms < 0 || delay_ms > EDIT_SPAN_MS) {
        code = LN_EINVAL;
        snprintf(msg, sizeof msg, "delay must be 0..%lld ms (got %lld)", EDIT_SPAN_MS,
                 (long long)delay_ms);
    }
    int err = enter_edit(jobs, queue, id, "job id", code, msg);
    if (err != 0) return err;
    ln__jobs_edit e = {.op = LN__EDIT_DELAY, .id = id, .delay_ms = delay_ms};
    return run_edit(jobs, queue, &e);
}

int ln_jobs_update_data(ln_jobs *jobs, const char *queue, const char *id, const char *data_json) {
    char msg[LN__JOBS_ERRMSG_MAX] = "";
    size_t len = 0;
    int code = 0;
    if (data_json == NULL) {
        code = LN_EINVAL;
        snprintf(msg, sizeof msg, "data must not be NULL");
    } else if (jobs != NULL) {
        /* opts is fixed at open: reading it without the mutex is safe */
        code =
            ln__jobs_check_json(data_json, jobs->opts.max_data_size, &len, "data", msg, sizeof msg);
    }
    int err = enter_edit(jobs, queue, id, "job id", code, msg);
    if (err != 0) return err;
    ln__jobs_edit e = {.op = LN__EDIT_DATA, .id = id, .data = data_json, .data_len = len};
    return run_edit(jobs, queue, &e);
}

int ln_jobs_dedup_job(ln_jobs *jobs, const char *queue, const char *dedup_id, char *job_id,
                      size_t job_id_size) {
    int code = 0;
    const char *msg = NULL;
    if (job_id == NULL || job_id_size == 0) {
        code = LN_EINVAL;
        msg = "job_id must be a buffer of at least 1 byte";
    } else {
        job_id[0] = '\0';
    }
    int err = enter_edit(jobs, queue, dedup_id, "dedup id", code, msg);
    if (err != 0) return err;
    ln__jobs_edit e = {.op = LN__EDIT_DEDUP_GET, .dedup_id = dedup_id};
    err = run_edit(jobs, queue, &e);
    if (err == 0 && e.job_id == NULL) err = LN_ENOENT; /* a store that said 0 with none */
    if (err == 0) {
        size_t l = strlen(e.job_id);
        if (l < job_id_size)
            memcpy(job_id, e.job_id, l + 1);
        else
            err = LN_ERANGE;
    }
    ln__free(e.job_id);
    if (err == LN_ERANGE && ln__jobs_enter(jobs) == 0)
        err = ln__jobs_leave(jobs, ln__jobs_err(jobs, LN_ERANGE,
                                                "the holder's job id does not fit in %zu bytes",
                                                job_id_size));
    return err;
}

int ln_jobs_dedup_remove(ln_jobs *jobs, const char *queue, const char *dedup_id, int *removed) {
    if (removed != NULL) *removed = 0;
    int err = enter_edit(jobs, queue, dedup_id, "dedup id", 0, NULL);
    if (err != 0) return err;
    ln__jobs_edit e = {.op = LN__EDIT_DEDUP_REMOVE, .dedup_id = dedup_id};
    err = run_edit(jobs, queue, &e);
    if (err == 0 && removed != NULL) *removed = e.removed;
    return err;
}

int ln_jobs_promote_all(ln_jobs *jobs, const char *queue, size_t *promoted) {
    size_t total = 0;
    if (promoted != NULL) *promoted = 0;
    int err = enter_edit(jobs, queue, NULL, NULL, 0, NULL);
    /* Steps until one finds fewer than a step's worth: each is one store
     * call of bounded work under a hold of the mutex of its own, so the
     * handle's other threads get it between steps. Entered at the top of
     * each turn, never at its end: run_edit leaves. */
    while (err == 0) {
        ln__jobs_edit e = {.op = LN__EDIT_PROMOTE_SOME, .max = LN_JOBS_PROMOTE_STEP};
        if ((err = run_edit(jobs, queue, &e)) != 0) break;
        LN_ASSERT(e.count <= LN_JOBS_PROMOTE_STEP);
        total += e.count;
        if (e.count < LN_JOBS_PROMOTE_STEP) break;
        err = ln__jobs_enter(jobs);
    }
    if (promoted != NULL) *promoted = total;
    return err;
}

int ln_jobs_counts_per_priority(ln_jobs *jobs, const char *queue, const int *priorities, size_t n,
                                uint64_t *counts) {
    char msg[LN__JOBS_ERRMSG_MAX] = "";
    int code = 0;
    if (priorities == NULL || counts == NULL || n == 0 || n > LN_JOBS_PRIORITY_COUNTS_MAX) {
        code = LN_EINVAL;
        snprintf(msg, sizeof msg, "priorities and counts must hold 1..%d entries",
                 LN_JOBS_PRIORITY_COUNTS_MAX);
    }
    for (size_t i = 0; code == 0 && i < n; i++)
        if (priorities[i] < 0 || priorities[i] > LN_JOB_PRIORITY_MAX) {
            code = LN_EINVAL;
            snprintf(msg, sizeof msg, "priority %zu must be 0..%d (got %d)", i, LN_JOB_PRIORITY_MAX,
                     priorities[i]);
        }
    if (code == 0) memset(counts, 0, n * sizeof *counts);
    int err = enter_edit(jobs, queue, NULL, NULL, code, msg);
    if (err != 0) return err;
    ln__jobs_edit e = {
        .op = LN__EDIT_PRIORITY_COUNTS, .priorities = priorities, .n = n, .counts = counts};
    return run_edit(jobs, queue, &e);
}

int ln_jobs_trim_events(ln_jobs *jobs, const char *queue, size_t max_len, size_t *removed) {
    if (removed != NULL) *removed = 0;
    int err = enter_edit(jobs, queue, NULL, NULL, 0, NULL);
    if (err != 0) return err;
    ln__jobs_edit e = {.op = LN__EDIT_TRIM_EVENTS, .max = max_len};
    err = run_edit(jobs, queue, &e);
    if (err == 0 && removed != NULL) *removed = e.count;
    return err;
}

int ln_jobs_add_log(ln_jobs *jobs, const char *queue, const char *id, const char *line, size_t keep,
                    size_t *count) {
    if (count != NULL) *count = 0;
    int code = 0;
    const char *msg = NULL;
    size_t len = line != NULL ? strnlen(line, LN__JOB_LOG_LINE_MAX + 1) : 0;
    if (line == NULL || len > LN__JOB_LOG_LINE_MAX) {
        code = LN_EINVAL;
        msg = line == NULL ? "line must not be NULL" : "a log line is at most 65536 bytes";
    }
    int err = enter_edit(jobs, queue, id, "job id", code, msg);
    if (err != 0) return err;
    ln__jobs_edit e = {
        .op = LN__EDIT_ADD_LOG, .id = id, .data = line, .data_len = len, .max = keep};
    err = run_edit(jobs, queue, &e);
    if (err == 0 && count != NULL) *count = e.count;
    return err;
}

int ln_jobs_clear_logs(ln_jobs *jobs, const char *queue, const char *id, size_t keep) {
    int err = enter_edit(jobs, queue, id, "job id", 0, NULL);
    if (err != 0) return err;
    ln__jobs_edit e = {.op = LN__EDIT_CLEAR_LOGS, .id = id, .max = keep};
    return run_edit(jobs, queue, &e);
}

int ln_jobs_remove_child_dependency(ln_jobs *jobs, const char *queue, const char *id,
                                    int *removed) {
    if (removed != NULL) *removed = 0;
    int err = enter_edit(jobs, queue, id, "job id", 0, NULL);
    if (err != 0) return err;
    ln__jobs_edit e = {.op = LN__EDIT_DETACH, .id = id};
    err = run_edit(jobs, queue, &e);
    if (err == 0 && removed != NULL) *removed = e.removed;
    return err;
}
