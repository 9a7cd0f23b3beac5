/* sched_record.h - job schedulers between the front (sched.c) and the stores
 * (sqlite_sched.c, redis_sched.c). Not API: jobs.h's "Job schedulers" is.
 * docs/internals/schedules.md has the design. */
#ifndef LN_JOBS_SCHED_RECORD_H
#define LN_JOBS_SCHED_RECORD_H

#include "cron.h"
#include "job_record.h"

#include <lanes/jobs.h>

#include <stddef.h>
#include <stdint.h>

/* Longest scheduler id in bytes (without the NUL): its iteration ids
 * "repeat:<id>:<13+ digits>" stay below LN_JOB_ID_MAX. */
#define LN__SCHED_ID_MAX 100

/* An iteration's job id is "repeat:<scheduler id>:<ms>" (BullMQ 6.7's). */
#define LN__SCHED_ITER_PREFIX "repeat:"
#define LN__SCHED_ITER_PREFIX_LEN 7

/* A scheduler to create or replace, checked by the front. */
typedef struct ln__sched_new {
    const char *id;
    const char *name;
    const char *data; /* valid JSON */
    size_t data_len;
    ln_job_opts opts;         /* the template's, complete and checked (no delay,
                            job id or dedup) */
    int64_t every;            /* > 0, or 0 with pattern */
    const char *pattern;      /* NULL with every */
    ln__cron cron;            /* pattern parsed */
    const char *tz;           /* NULL = none (UTC) */
    int64_t start_ms, end_ms; /* 0 = none */
    int64_t limit;            /* < 0 = no limit */
    int immediately;
} ln__sched_new;

/* The next iteration of a scheduler whose current one (at prev_ms, the
 * count-th) was just taken, or the first one (count 0, prev_ms
 * LN__CRON_NONE) of s: ln__sched_next with s's options. */
int ln__sched_new_next(const ln__sched_new *s, int64_t count, int64_t prev_ms, int64_t now_ms,
                       int64_t offset, int64_t *next_ms, int64_t *offset_out, char *err,
                       size_t errsize);

/* "repeat:<scheduler id>:<ms>" into a new string (ln__malloc), or NULL. */
char *ln__sched_job_id(const char *sid, int64_t ms);

/* Split an iteration's job id: 1 with the scheduler id's bytes
 * [*sid, *sid + *sid_len) and *ms, 0 when id is not of that form. */
int ln__sched_parse_job_id(const char *id, const char **sid, size_t *sid_len, int64_t *ms);

#endif
