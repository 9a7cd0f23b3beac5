/* front.h - private to the jobs front (front.c, store.c, validate.c and
 * the worker, worker*.c): the handle, its locking, and the checks shared
 * by add and the worker. */
#ifndef LN_JOBS_FRONT_H
#define LN_JOBS_FRONT_H

#include "backend.h"

#include <pthread.h>
#include <sys/types.h>

/* The handle. Every backend op runs with mu held (backend.h's "one op at a
 * time"); errmsg is written only with mu held, except the LN_EFORK message
 * in a forked child, which is single-threaded and must not take mu. */
struct ln_jobs {
    ln__jobs_be *be;
    pthread_mutex_t mu;
    pid_t pid; /* process that opened it (fork detection) */
    ln_jobs_opts opts;
    char errmsg[LN__JOBS_ERRMSG_MAX];
    char warning[LN__JOBS_ERRMSG_MAX]; /* from the backend's open; then
                                          read-only (ln_jobs_warning) */
};

/* Lock the handle for one operation: LN_EINVAL for NULL, LN_EFORK in a
 * child after fork() (with errmsg), else 0 with mu held. */
int ln__jobs_enter(ln_jobs *jobs);
/* Unlock; if err < 0 and the backend wrote a detail, copy it to errmsg
 * (a detail the front wrote itself is kept). Returns err. */
int ln__jobs_leave(ln_jobs *jobs, int err);
/* printf into jobs->errmsg (mu held) and return code. */
int ln__jobs_err(ln_jobs *jobs, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Validation (validate.c). Each returns 0 or a code, writing the reason
 * (prefixed by 'what', e.g. "job 3: ") to errmsg/errsize. */
/* A name (queue, job name, custom id, scheduler id, ...) of < max bytes,
 * not empty, without control characters, in UTF-8. max = SIZE_MAX is a
 * lookup of a job by its id: any length and any bytes but control
 * characters, UTF-8 or not (an id another program stored, even one cut
 * inside a character, stays reachable). */
int ln__jobs_check_name(const char *s, size_t max, const char *what, char *err, size_t errsize);

/* The longest log line a job takes (ln_job_log, ln_jobs_add_log), in bytes. */
#define LN__JOB_LOG_LINE_MAX 65536
/* A queue name: a name of < LN_JOB_QUEUE_MAX bytes without ':' (jobs.h). */
int ln__jobs_check_queue(const char *queue, char *err, size_t errsize);
/* A caller's job id at add: a name, not an integer, and ':' only in the
 * three-part form (jobs.h's rule, BullMQ's). */
int ln__jobs_check_id(const char *id, char *err, size_t errsize);
/* data must be JSON (any value) of at most max bytes, else LN_EINVAL with
 * the reason in err. *len gets strlen(data). */
int ln__jobs_check_json(const char *data, size_t max, size_t *len, const char *what, char *err,
                        size_t errsize);
int ln__jobs_check_opts(const ln_job_opts *o, char *err, size_t errsize);
int ln__jobs_check_traceparent(const char *tp);

/* ln_jobs_wait (events.c) read job id as gone: its completed / failed
 * event may still be unread in the follower ev (written before a
 * retention removed the job, after the follower's last read). Reads what
 * ev has pending, without waiting: 0 with *info from that outcome, else
 * LN_ENOENT with the handle's message set. */
int ln__jobs_wait_gone(ln_jobs *jobs, ln_jobs_events *ev, const char *queue, const char *id,
                       ln_job_info *info);

#endif
