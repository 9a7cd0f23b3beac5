/* events.c - the front of a queue's events (ln_jobs_events_*) and of
 * waiting for a job's outcome (ln_jobs_wait), for every store.
 *
 * A follower is a backend object with a connection of its own (backend.h's
 * events methods): opening it runs under the handle's mutex like any op;
 * reading it does not, so a follower blocked in its wait never holds up
 * the handle's other users.
 *
 * ln_jobs_wait has no lost wake-up: it opens the follower first (its
 * cursor fixed at "after the newest event now"), then reads the job. An
 * outcome committed before the read shows in the job; one committed after
 * it comes after the cursor, so the follower returns it.
 */
#include "front.h"

#include "internal.h"

#include <jansson.h>

#include <stdio.h>
#include <string.h>
#include <time.h>

struct ln_jobs_events {
    ln__jobs_events *be; /* the backend's follower */
};

void ln_job_event_clear(ln_job_event *event) {
    if (event == NULL) return;
    ln__free(event->fields);
    ln__free(event->job_id);
    memset(event, 0, sizeof *event);
}

/* An event id given as 'from': NULL, "$", or printable and short. */
static int check_from(const char *from) {
    if (from == NULL) return 0;
    size_t n = strlen(from);
    if (n == 0 || n >= sizeof(((ln_job_event *)0)->id)) return LN_EINVAL;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)from[i] <= ' ' || from[i] == 0x7f) return LN_EINVAL;
    return 0;
}

int ln_jobs_events_open(ln_jobs *jobs, const char *queue, const char *from, ln_jobs_events **out) {
    char msg[LN__JOBS_ERRMSG_MAX];
    int code = out == NULL ? LN_EINVAL : ln__jobs_check_queue(queue, msg, sizeof msg);
    if (out == NULL) snprintf(msg, sizeof msg, "out is NULL");
    if (code == 0 && check_from(from) != 0) {
        code = LN_EINVAL;
        snprintf(msg, sizeof msg, "from: not an event id");
    }
    int err = ln__jobs_enter(jobs);
    if (err != 0) return err;
    if (code != 0) return ln__jobs_leave(jobs, ln__jobs_err(jobs, code, "%s", msg));
    jobs->errmsg[0] = '\0';
    if (jobs->be->methods->events_open == NULL)
        return ln__jobs_leave(jobs, ln__jobs_err(jobs, LN_ENOTSUP, "the %s store has no events",
                                                 jobs->be->methods->name));
    ln_jobs_events *ev = ln__calloc(1, sizeof *ev);
    if (ev == NULL) return ln__jobs_leave(jobs, ln__jobs_err(jobs, LN_ENOMEM, "out of memory"));
    err = jobs->be->methods->events_open(jobs->be, queue, from, &ev->be);
    if (err != 0) {
        ln__free(ev);
        return ln__jobs_leave(jobs, err);
    }
    *out = ev;
    return ln__jobs_leave(jobs, 0);
}

int ln_jobs_events_next(ln_jobs_events *ev, int64_t timeout_ms, ln_job_event *event) {
    if (ev == NULL || event == NULL) return LN_EINVAL;
    memset(event, 0, sizeof *event);
    ev->be->errmsg[0] = '\0';
    int err = ev->be->methods->next(ev->be, timeout_ms, event);
    if (err == 0 && event->job_id == NULL && (event->job_id = ln__strdup("")) == NULL)
        err = LN_ENOMEM; /* jobs.h: "" when none, never NULL */
    if (err != 0) ln_job_event_clear(event);
    return err;
}

const char *ln_jobs_events_errmsg(const ln_jobs_events *ev) {
    return ev != NULL ? ev->be->errmsg : "";
}

void ln_jobs_events_close(ln_jobs_events *ev) {
    if (ev == NULL) return;
    ev->be->methods->close(ev->be);
    ln__free(ev);
}

/* ------------------------------------------------------------ waiting */

static int64_t mono_ms(void) {
    return (int64_t)(ln__now_ns() / 1000000u);
}

static int finished(int state) {
    return state == LN_JOB_COMPLETED || state == LN_JOB_FAILED;
}

/* *info from a completed / failed event, for a job gone by the time it
 * is read (removed by its retention as it finished). */
static int info_from_event(const ln_job_event *e, const char *id, ln_job_info *info) {
    memset(info, 0, sizeof *info);
    if ((info->id = ln__strdup(id)) == NULL) return LN_ENOMEM;
    int done = strcmp(e->name, "completed") == 0;
    info->state = done ? LN_JOB_COMPLETED : LN_JOB_FAILED;
    info->finished_ms = e->at_ms;
    json_t *f = json_loads(e->fields != NULL ? e->fields : "{}", 0, NULL);
    const char *v = json_string_value(json_object_get(f, done ? "returnvalue" : "failedReason"));
    char *copy = ln__strdup(v != NULL ? v : done ? "null" : "failed");
    json_decref(f);
    if (copy == NULL) {
        ln_job_info_clear(info);
        return LN_ENOMEM;
    }
    if (done)
        info->result = copy;
    else
        info->failed_reason = copy;
    return 0;
}

/* Set the handle's message for a wait's own outcome (no op ran). */
static int wait_err(ln_jobs *jobs, int code, const char *fmt, const char *a, const char *b) {
    if (ln__jobs_enter(jobs) != 0) return code;
    ln__jobs_err(jobs, code, fmt, a, b);
    pthread_mutex_unlock(&jobs->mu);
    return code;
}

/* While it waits, the job is read back now and then, for a removal that
 * writes no event of the job (a drain, as BullMQ's; a store whose events
 * setting leaves "removed" out): after 50 ms, then twice as long each
 * time up to once a second, so a short wait sees a removal at once and a
 * long one costs one read of the job a second. */
#define RECHECK_FIRST_MS 50
#define RECHECK_MAX_MS 1000

static int64_t recheck_next_step(int64_t step) {
    return step >= RECHECK_MAX_MS / 2 ? RECHECK_MAX_MS : 2 * step;
}

/* Events read at most, once job id is found gone, for the outcome it may
 * have written before it went: bounded, as a busy queue goes on writing
 * events while they are read. */
#define GONE_READ_MAX 100000

int ln__jobs_wait_gone(ln_jobs *jobs, ln_jobs_events *ev, const char *queue, const char *id,
                       ln_job_info *info) {
    for (int n = 0; n < GONE_READ_MAX; n++) {
        ln_job_event e;
        if (ln_jobs_events_next(ev, 0, &e) != 0) break; /* none pending (or the follower's error) */
        int ours = strcmp(e.job_id, id) == 0;
        int done = ours && (strcmp(e.name, "completed") == 0 || strcmp(e.name, "failed") == 0);
        int removed = ours && strcmp(e.name, "removed") == 0;
        int err = done ? info_from_event(&e, id, info) : 0;
        ln_job_event_clear(&e);
        if (done) return err;
        if (removed) break;
    }
    return wait_err(jobs, LN_ENOENT, "job '%s' of queue '%s' was removed", id, queue);
}

/* Read job id back: 1 while it waits on, 0 finished (*info filled),
 * LN_ENOENT once it is gone without an outcome (a completion or failure
 * written before its retention removed it, which the follower has not
 * handed out yet, is that outcome: ln__jobs_wait_gone). A store error
 * leaves the wait to the follower, which reports its own. */
static int recheck(ln_jobs *jobs, ln_jobs_events *ev, const char *queue, const char *id,
                   ln_job_info *info) {
    int err = ln_jobs_get(jobs, queue, id, info);
    if (err == LN_ENOENT) return ln__jobs_wait_gone(jobs, ev, queue, id, info);
    if (err == 0 && finished(info->state)) return 0;
    if (err == 0) ln_job_info_clear(info);
    return 1;
}

/* The outcome event e of job id: the job read back, for the fields only
 * the job has; the event's fields stand in when the job is gone. */
static int outcome(ln_jobs *jobs, const char *queue, const char *id, const ln_job_event *e,
                   ln_job_info *info) {
    int err = ln_jobs_get(jobs, queue, id, info);
    if (err == 0 && !finished(info->state)) ln_job_info_clear(info);
    if (err == LN_ENOENT || (err == 0 && !finished(info->state)))
        err = info_from_event(e, id, info);
    return err;
}

/* Read events until job id's outcome, its removal or the deadline (-1:
 * none), reading the job back between them (recheck). */
static int wait_events(ln_jobs *jobs, ln_jobs_events *ev, const char *queue, const char *id,
                       int64_t deadline, ln_job_info *info) {
    int64_t step = RECHECK_FIRST_MS, check_at = mono_ms() + step;
    for (;;) {
        int64_t now = mono_ms();
        if (now >= check_at) {
            int err = recheck(jobs, ev, queue, id, info);
            if (err <= 0) return err;
            step = recheck_next_step(step);
            check_at = now + step;
        }
        int64_t left = check_at - now;
        if (deadline >= 0 && deadline - now < left) left = deadline - now < 0 ? 0 : deadline - now;
        ln_job_event e;
        int err = ln_jobs_events_next(ev, left, &e);
        if (err == LN_ETIMEDOUT && deadline >= 0 && mono_ms() >= deadline)
            return wait_err(jobs, err, "job '%s' of queue '%s' did not finish in time", id, queue);
        if (err == LN_ETIMEDOUT) continue;
        if (err != 0)
            return wait_err(jobs, err, "%s (queue '%s')", ln_jobs_events_errmsg(ev), queue);
        int ours = strcmp(e.job_id, id) == 0;
        if (ours && strcmp(e.name, "removed") == 0) {
            ln_job_event_clear(&e);
            return wait_err(jobs, LN_ENOENT, "job '%s' of queue '%s' was removed", id, queue);
        }
        if (ours && (strcmp(e.name, "completed") == 0 || strcmp(e.name, "failed") == 0)) {
            err = outcome(jobs, queue, id, &e, info);
            ln_job_event_clear(&e);
            return err;
        }
        ln_job_event_clear(&e);
    }
}

int ln_jobs_wait(ln_jobs *jobs, const char *queue, const char *id, int64_t timeout_ms,
                 ln_job_info *info) {
    if (info == NULL) return wait_err(jobs, LN_EINVAL, "%s%s", "info is NULL", "");
    memset(info, 0, sizeof *info);
    int64_t deadline = timeout_ms < 0 ? -1 : mono_ms() + timeout_ms;
    ln_jobs_events *ev = NULL;
    int err = ln_jobs_events_open(jobs, queue, NULL, &ev); /* first: see above */
    if (err != 0) return err;
    err = ln_jobs_get(jobs, queue, id, info);
    if (err == LN_ENOENT) /* it may have finished and gone since the open */
        err = ln__jobs_wait_gone(jobs, ev, queue, id, info);
    if (err == 0 && !finished(info->state)) {
        ln_job_info_clear(info);
        err = wait_events(jobs, ev, queue, id, deadline, info);
    }
    ln_jobs_events_close(ev);
    return err;
}
