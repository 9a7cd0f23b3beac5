/* lanes/jobs_schedulers.h - part of <lanes/jobs.h>: job schedulers, a job
 * every N ms or by a cron pattern. Include <lanes/jobs.h>, which includes
 * this header; its conventions (errors, threads, names, who owns what) hold
 * here too. */
#ifndef LANES_JOBS_SCHEDULERS_H
#define LANES_JOBS_SCHEDULERS_H

#include <lanes/jobs.h>

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A job scheduler makes one job of its template at a time: the next
 * iteration is created when a worker takes the current one (so a busy
 * queue runs a schedule less often than its interval, never two
 * iterations of one scheduler at once; BullMQ 6.7's upsertJobScheduler,
 * with its keys and fields on Redis, so Node and C workers advance each
 * other's schedules). Iteration job ids are "repeat:<scheduler id>:<ms>",
 * ms the iteration's time in ms since the epoch; such a job is an
 * ordinary delayed (or waiting) job until it runs, but that
 * ln_jobs_remove (LN_EBUSY) and ln_jobs_cancel (LN_EINVAL) refuse the
 * current one and ln_jobs_drain keeps it, as BullMQ does: the schedule would end
 * without it.
 *
 * Times: with every_ms, the first iteration runs at start_ms (or now),
 * then every every_ms after the previous one's time (missed slots are
 * skipped, not replayed); with a cron pattern, at the pattern's next time
 * after now (immediately: the first at once). Which iteration is the last:
 * none is made past 'limit' iterations, nor once now is past end_ms. What
 * the patterns accept and how time zones and DST are handled:
 * docs/jobs.md ("Job schedulers"). */
typedef struct ln_job_schedule {
    int64_t every_ms;    /* > 0: an iteration every every_ms ms; 0: pattern */
    const char *pattern; /* cron pattern (5 fields, or 6 with seconds first;
                            ranges, steps, lists, month and weekday names,
                            L, #, @daily...), NULL with every_ms */
    const char *tz;      /* IANA time zone of the pattern; NULL/"" = UTC */
    int64_t start_ms;    /* no iteration before this (ms since the epoch); 0 = none;
                            at most 8.64e15 (a JavaScript Date), as end_ms */
    int64_t end_ms;      /* none made once now is past it; 0 = none */
    int64_t limit;       /* most iterations; 0 = no limit */
    int immediately;     /* pattern: the first iteration runs now */
} ln_job_schedule;

/* Zero: no every, no pattern, no limits. */
LN_EXTERN void ln_job_schedule_init(ln_job_schedule *s);

/* Create or replace scheduler id of queue (id: 1..100 bytes, printable,
 * ':' allowed as in BullMQ 6.7). Exactly one of every_ms / pattern. The template: job name,
 * data_json (NULL = "{}") and opts (NULL = defaults; delay_ms, job_id and
 * the dedup_* options must be unset: the scheduler sets the delay and the
 * id). Replacing keeps the iteration count and replaces the pending
 * iteration if it has not started (an every schedule whose every_ms is
 * unchanged keeps its time). The first (or replacing) iteration's job id
 * goes to job_id (job_id_size >= LN_JOB_ID_MAX is enough; may be NULL);
 * "" when the schedule makes none (limit 0 left, now past end_ms, a
 * pattern without a next time): then nothing is stored or changed.
 * LN_EINVAL (bad pattern, unknown time zone, both or neither of every and
 * pattern, a bad option: ln_jobs_errmsg says which), LN_EEXIST (a job
 * with the next iteration's id exists already and is not pending),
 * LN_ERANGE (job_id_size too small), LN_EFORK, LN_EBACKEND. */
LN_EXTERN int ln_jobs_schedule(ln_jobs *jobs, const char *queue, const char *id,
                               const ln_job_schedule *sched, const char *name,
                               const char *data_json, const ln_job_opts *opts, char *job_id,
                               size_t job_id_size);

/* Remove scheduler id and its pending iteration if it is delayed (one
 * already waiting or running stays and runs; it makes no more).
 * LN_ENOENT: no such scheduler. */
LN_EXTERN int ln_jobs_unschedule(ln_jobs *jobs, const char *queue, const char *id);

/* One scheduler as stored. Strings owned by the struct
 * (ln_job_scheduler_clear); NULL where there is none. */
typedef struct ln_job_scheduler {
    char *id;
    char *name;                      /* template job name */
    char *data;                      /* template data JSON ("{}" when none) */
    char *pattern;                   /* NULL for every */
    char *tz;                        /* NULL when none */
    int64_t every_ms;                /* 0 for a pattern */
    int64_t offset_ms;               /* every: the slot offset the store keeps, else 0 */
    int64_t start_ms, end_ms, limit; /* 0 = none */
    int64_t iterations;              /* iterations made so far (the current included) */
    int64_t next_ms;                 /* time of the current (pending or last) iteration */
    int priority, attempts;          /* of the template's options */
} ln_job_scheduler;

LN_EXTERN void ln_job_scheduler_clear(ln_job_scheduler *s);
LN_EXTERN void ln_job_scheduler_free_array(ln_job_scheduler *s, size_t n);

/* Read scheduler id into *out (clear it afterwards). LN_ENOENT. */
LN_EXTERN int ln_jobs_scheduler_get(ln_jobs *jobs, const char *queue, const char *id,
                                    ln_job_scheduler *out);

/* Up to limit (1..1000) schedulers of queue after skipping offset, by
 * next_ms, earliest first; *out a new array of *n (free with
 * ln_job_scheduler_free_array), NULL when *n is 0. Bounded: each call
 * reads at most limit schedulers. */
LN_EXTERN int ln_jobs_scheduler_list(ln_jobs *jobs, const char *queue, size_t offset, size_t limit,
                                     ln_job_scheduler **out, size_t *n);

#ifdef __cplusplus
}
#endif
#endif /* LANES_JOBS_SCHEDULERS_H */
