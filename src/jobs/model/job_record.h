/* job_record.h - the records a store and the front pass each other: a job
 * to add, a taken job, an outcome, and the helpers that make and free them
 * (job_record.c, a leaf: it calls nothing of the jobs layer). Not API.
 * docs/internals/backend.md describes the fields' contract. */
#ifndef LN_JOBS_JOB_RECORD_H
#define LN_JOBS_JOB_RECORD_H

#include <lanes.h>
#include <lanes/jobs.h>

#include <stddef.h>
#include <stdint.h>

#define LN__JOBS_ERRMSG_MAX 512
#define LN__JOBS_TOKEN_MAX 64

typedef struct ln__jobs_be ln__jobs_be; /* backend.h */

/* How a job is addressed after take: id, backend key, lease token. The
 * id (any length) is ln__malloc'd and owned by the ln__job_taken that
 * holds the ref (freed by ln__job_taken_free); a copy of the ref (a
 * renewal, an outcome, a release) borrows it and must not outlive it. */
typedef struct ln__job_ref {
    char *id;
    uint64_t key;                   /* backend-private; 0 = none */
    char token[LN__JOBS_TOKEN_MAX]; /* NUL-terminated lease token */
} ln__job_ref;

/* One job to add (validated by the front). */
typedef struct ln__job_new {
    const char *name;
    const char *data; /* valid JSON */
    size_t data_len;  /* strlen(data) */
    ln_job_opts opts; /* complete: defaults filled, checked; job_id,
                         traceparent, tracestate may be NULL */
    /* out */
    char *id;         /* the new or existing job's id (any length),
                    ln__malloc'd by the backend, freed by the
                    front (also after an error) */
    int existed;      /* 1 if opts.job_id already existed, or
                         opts.dedup_id is held (no-op) */
    int unreplicated; /* Redis: stored, but WAIT fell short (LN_EIO) */
} ln__job_new;

/* One job handed out by take. The backend fills every field; strings are
 * ln__malloc'd and owned by the front afterwards (tracestate/traceparent
 * may be NULL). Freed by ln__job_taken_free, and only by it. */
typedef struct ln__job_taken {
    ln__job_ref ref;
    char *name;
    char *data;
    char *traceparent;
    char *tracestate;
    int attempts_started; /* including this run: 1 on the first run */
    int attempts_made;    /* failed runs before this one */
    int attempts;         /* opts.attempts at add */
    int backoff;          /* LN_BACKOFF_* */
    int64_t backoff_ms;
    double backoff_jitter; /* 0..1, 0 = none */
    char *backoff_type;    /* LN_BACKOFF_CUSTOM: the type's name, else NULL */
    int64_t timeout_ms;    /* opts.timeout_ms at add; 0 = the worker's */
} ln__job_taken;

/* What the front decided for a finished run. */
enum {
    LN__DONE_COMPLETE = 0, /* -> completed, store result; apply
                              remove_on_complete */
    LN__DONE_RETRY = 1,    /* -> delayed for delay_ms (or waiting when 0),
                              attempts_made + 1, store reason */
    LN__DONE_FAIL = 2,     /* -> failed, attempts_made + 1, store reason;
                              apply remove_on_fail */
    LN__DONE_DELAY = 3,    /* -> delayed until run_at_ms (store clock; past
                              = due now), attempts_made, reason and result
                              unchanged (BullMQ's moveToDelayed with
                              skipAttempt) */
    LN__DONE_LIMITED = 4   /* -> the front of waiting (head of its
                              priority), attempts_made unchanged; for
                              delay_ms > 0 the queue's rate limiter is set
                              full for delay_ms (BullMQ's rateLimit +
                              RateLimitError); takes of this step stop */
};

typedef struct ln__job_done {
    ln__job_ref ref;
    int kind;           /* LN__DONE_* */
    const char *result; /* COMPLETE: JSON, or NULL for no result */
    const char *reason; /* RETRY / FAIL: non-NULL text */
    int64_t delay_ms;   /* RETRY, LIMITED: >= 0 */
    int64_t run_at_ms;  /* DELAY: >= 0, ms since the epoch */
    int rc;             /* out: 0, LN_ESTALE (job not active with that
                           token any more: nothing changed) or
                           LN__DONE_PENDING_DEPS */
} ln__job_done;

/* ln__job_done.rc of a COMPLETE its job's pending children refuse
 * (BullMQ's moveToFinished -4): nothing changed, the job is still active
 * and held; the worker records the run's failure instead, retried by its
 * backoff as any failure (docs/internals/flows.md). Positive: no LN_E*. */
#define LN__DONE_PENDING_DEPS 1

/* Free the strings of a taken job and zero it (NULL: no-op). */
void ln__job_taken_free(ln__job_taken *t);

/* A child's failure options (ln_flow_node), as BullMQ's parent JSON
 * spells them: fpof, cpof, idof, rdof. */
enum { LN__FLOW_FPOF = 1, LN__FLOW_CPOF = 2, LN__FLOW_IDOF = 4, LN__FLOW_RDOF = 8 };

/* LN__FLOW_* bits of o's four failure options. */
int ln__job_flow_flags(const ln_job_opts *o);

/* ln_job_state_name, ln_job_state_parse, ln_job_info_clear,
 * ln_job_info_free_array, ln_jobs_free_lines and ln_job_opts_init
 * (jobs.h) live in job_record.c too. */

#endif /* LN_JOBS_JOB_RECORD_H */
