/* sched.c - the front of job schedulers (jobs.h "Job schedulers"): the
 * checks every store shares, the calls into the store methods, and the
 * worker's hook that advances a scheduler when its iteration is taken.
 * docs/internals/schedules.md. */
#include "flow_parent.h"
#include "front.h"
#include "sched_record.h"
#include "store.h"

#include "internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SCHED_LIST_MAX 1000

/* ------------------------------------------------------------- checking */

/* Any printable id, ':' included, as BullMQ 6.7's: an iteration id
 * "repeat:<id>:<ms>" is read back by its last ':' (ln__sched_parse_job_id). */
static int check_sid(const char *id, char *err, size_t errsize) {
    return ln__jobs_check_name(id, LN__SCHED_ID_MAX + 1, "scheduler id", err, errsize);
}

static int check_schedule(const ln_job_schedule *sc, ln__sched_new *s, char *err, size_t errsize) {
    int has_pattern = sc->pattern != NULL && sc->pattern[0] != '\0';
    if ((sc->every_ms > 0) == has_pattern || sc->every_ms < 0) {
        snprintf(err, errsize, "a scheduler needs exactly one of every_ms > 0 and a pattern");
        return LN_EINVAL;
    }
    if (sc->every_ms > ((int64_t)1 << 40)) {
        snprintf(err, errsize, "every_ms must be at most 2^40");
        return LN_EINVAL;
    }
    if (sc->start_ms < 0 || sc->end_ms < 0 || sc->limit < 0) {
        snprintf(err, errsize, "start_ms, end_ms and limit must be >= 0 (0 = none)");
        return LN_EINVAL;
    }
    if (sc->start_ms > 8640000000000000 || sc->end_ms > 8640000000000000) {
        snprintf(err, errsize, "start_ms and end_ms must be at most 8.64e15 (a JavaScript Date)");
        return LN_EINVAL;
    }
    if (sc->immediately && sc->start_ms > 0) {
        snprintf(err, errsize, "immediately and start_ms exclude each other");
        return LN_EINVAL;
    }
    s->every = sc->every_ms;
    s->pattern = has_pattern ? sc->pattern : NULL;
    s->tz = sc->tz != NULL && sc->tz[0] != '\0' ? sc->tz : NULL;
    s->start_ms = sc->start_ms;
    s->end_ms = sc->end_ms;
    s->limit = sc->limit > 0 ? sc->limit : -1;
    s->immediately = sc->immediately != 0;
    int rc = 0;
    if (s->pattern != NULL) rc = ln__cron_parse(&s->cron, s->pattern, err, errsize);
    if (rc == 0 && s->tz != NULL) {
        rc = ln__jobs_check_name(s->tz, 256, "time zone", err, errsize);
        if (rc == 0) rc = ln__cron_check_tz(s->tz, err, errsize);
    }
    return rc;
}

static int check_template(const ln_jobs *jobs, const char *name, const char *data,
                          const ln_job_opts *opts, ln__sched_new *s, char *err, size_t errsize) {
    int rc = ln__jobs_check_name(name, LN_JOB_NAME_MAX, "job name", err, errsize);
    if (rc != 0) return rc;
    if (opts != NULL)
        s->opts = *opts;
    else
        ln_job_opts_init(&s->opts);
    if (s->opts.delay_ms != 0 || s->opts.job_id != NULL || s->opts.dedup_id != NULL) {
        snprintf(err, errsize,
                 "a scheduler's job options cannot set delay_ms, job_id or dedup_id "
                 "(the scheduler sets the delay and the id)");
        return LN_EINVAL;
    }
    if ((rc = ln__jobs_check_opts(&s->opts, err, errsize)) != 0) return rc;
    if ((rc = ln__dynflow_refuse(&s->opts, "a scheduler's job", err, errsize)) != 0) return rc;
    s->name = name;
    s->data = data != NULL ? data : "{}";
    return ln__jobs_check_json(s->data, jobs->opts.max_data_size, &s->data_len, "data", err,
                               errsize);
}

/* Enter, or fail with msg when code != 0 (front.c's enter_checked). */
static int enter_or(ln_jobs *jobs, int code, const char *msg) {
    int err = ln__jobs_enter(jobs);
    if (err != 0) return err;
    if (code != 0) {
        ln__jobs_err(jobs, code, "%s", msg);
        return ln__jobs_leave(jobs, code);
    }
    return 0;
}

/* LN_ENOTSUP for a store without schedulers (mu held; leaves). */
static int unsupported(ln_jobs *jobs) {
    ln__jobs_err(jobs, LN_ENOTSUP, "the %s store has no job schedulers", jobs->be->methods->name);
    return ln__jobs_leave(jobs, LN_ENOTSUP);
}

static int enter_qsid(ln_jobs *jobs, const char *queue, const char *id) {
    char msg[LN__JOBS_ERRMSG_MAX];
    int code = ln__jobs_check_queue(queue, msg, sizeof msg);
    if (code == 0) code = check_sid(id, msg, sizeof msg);
    return enter_or(jobs, code, msg);
}

/* ------------------------------------------------------------ the calls */

int ln_jobs_schedule(ln_jobs *jobs, const char *queue, const char *id, const ln_job_schedule *sched,
                     const char *name, const char *data_json, const ln_job_opts *opts, char *job_id,
                     size_t job_id_size) {
    if (jobs == NULL) return LN_EINVAL;
    char msg[LN__JOBS_ERRMSG_MAX] = "";
    ln__sched_new s;
    memset(&s, 0, sizeof s);
    s.id = id;
    int code = ln__jobs_check_queue(queue, msg, sizeof msg);
    if (code == 0) code = check_sid(id, msg, sizeof msg);
    if (code == 0 && sched == NULL) {
        snprintf(msg, sizeof msg, "sched must not be NULL");
        code = LN_EINVAL;
    }
    if (code == 0) code = check_schedule(sched, &s, msg, sizeof msg);
    if (code == 0) code = check_template(jobs, name, data_json, opts, &s, msg, sizeof msg);
    if (code == 0 && job_id != NULL && job_id_size < strlen(id) + LN__SCHED_ITER_PREFIX_LEN + 22) {
        snprintf(msg, sizeof msg, "job_id_size %zu is too small for an iteration id", job_id_size);
        code = LN_ERANGE;
    }
    int err = enter_or(jobs, code, msg);
    if (err != 0) return err;
    if (jobs->be->methods->sched_upsert == NULL) return unsupported(jobs);
    char *made = NULL;
    err = jobs->be->methods->sched_upsert(jobs->be, queue, &s, &made);
    if (err == 0 && job_id != NULL) snprintf(job_id, job_id_size, "%s", made ? made : "");
    ln__free(made);
    return ln__jobs_leave(jobs, err);
}

int ln_jobs_unschedule(ln_jobs *jobs, const char *queue, const char *id) {
    int err = enter_qsid(jobs, queue, id);
    if (err != 0) return err;
    if (jobs->be->methods->sched_remove == NULL) return unsupported(jobs);
    return ln__jobs_leave(jobs, jobs->be->methods->sched_remove(jobs->be, queue, id));
}

int ln_jobs_scheduler_get(ln_jobs *jobs, const char *queue, const char *id, ln_job_scheduler *out) {
    if (out == NULL) return enter_or(jobs, LN_EINVAL, "out is NULL");
    memset(out, 0, sizeof *out);
    int err = enter_qsid(jobs, queue, id);
    if (err != 0) return err;
    if (jobs->be->methods->sched_get == NULL) return unsupported(jobs);
    return ln__jobs_leave(jobs, jobs->be->methods->sched_get(jobs->be, queue, id, out));
}

int ln_jobs_scheduler_list(ln_jobs *jobs, const char *queue, size_t offset, size_t limit,
                           ln_job_scheduler **out, size_t *n) {
    if (out == NULL || n == NULL) return enter_or(jobs, LN_EINVAL, "out and n must not be NULL");
    *out = NULL;
    *n = 0;
    if (limit < 1 || limit > SCHED_LIST_MAX)
        return enter_or(jobs, LN_EINVAL, "limit must be 1..1000");
    char msg[LN__JOBS_ERRMSG_MAX];
    int err = enter_or(jobs, ln__jobs_check_queue(queue, msg, sizeof msg), msg);
    if (err != 0) return err;
    if (jobs->be->methods->sched_list == NULL) return unsupported(jobs);
    return ln__jobs_leave(jobs,
                          jobs->be->methods->sched_list(jobs->be, queue, offset, limit, out, n));
}

/* ----------------------------------------------------- the worker's hook */

void ln__store_sched_taken(ln_jobs *jobs, const char *queue, const ln__job_taken *taken, size_t n) {
    const char *sid;
    size_t sid_len;
    int64_t ms;
    if (jobs->be->methods->sched_taken == NULL) return; /* done by the take */
    for (size_t i = 0; i < n; i++) {
        if (!ln__sched_parse_job_id(taken[i].ref.id, &sid, &sid_len, &ms)) continue;
        if (ln__jobs_enter(jobs) != 0) return;
        /* As BullMQ's worker: a failure to schedule the next iteration
         * does not fail the job taken; the handle's errmsg keeps it. */
        (void)ln__jobs_leave(jobs,
                             jobs->be->methods->sched_taken(jobs->be, queue, taken[i].ref.id));
    }
}
