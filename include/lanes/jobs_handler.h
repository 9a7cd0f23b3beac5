/* lanes/jobs_handler.h - part of <lanes/jobs.h>: what a job handler
 * (ln_job_handler, run by ln_worker_run) calls on its job: the job's id,
 * name, data and attempt, its result or failure, a delay or rate limit
 * instead of an outcome, progress and log lines, and whether the worker
 * gave it up. Include <lanes/jobs.h>, which includes this header; its
 * conventions (errors, threads, names, who owns what) hold here too. */
#ifndef LANES_JOBS_HANDLER_H
#define LANES_JOBS_HANDLER_H

#include <lanes/jobs.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Inside a handler (the job's thread only, until the handler returns)       */

/* The job's whole id (any length), its name and queue; owned by the job. */
LN_EXTERN const char *ln_job_id(const ln_job *job);
LN_EXTERN const char *ln_job_name(const ln_job *job);
LN_EXTERN const char *ln_job_queue(const ln_job *job);
/* The data JSON text; owned by the job. */
LN_EXTERN const char *ln_job_data(const ln_job *job);
/* 1 on the first run, counting every run started (retries and stalls). */
LN_EXTERN int ln_job_attempt(const ln_job *job);
/* The traceparent / tracestate given at add, or NULL. */
LN_EXTERN const char *ln_job_traceparent(const ln_job *job);
LN_EXTERN const char *ln_job_tracestate(const ln_job *job);

/* Store json (valid JSON, at most the handle's max_data_size bytes) as
 * the job's return value when the handler returns 0. Copies it. 0,
 * LN_EINVAL (not JSON, too large, or bad argument), LN_ENOMEM. A refusal
 * is never silent: unless a later call is accepted, the run fails (if the
 * handler returns 0) with the reason "ln_job_set_result refused the
 * result: result is larger than the limit of N bytes" (or why else it was
 * refused), retried while attempts remain, instead of completing the job
 * without its result. */
LN_EXTERN int ln_job_set_result(ln_job *job, const char *json);

/* Record why the job failed (copied; NULL = "failed") and return
 * LN_EFAILED, so a handler can `return ln_job_fail(job, "no such user");`. */
LN_EXTERN int ln_job_fail(ln_job *job, const char *reason);

/* Like ln_job_fail, and the failure is final: when the handler returns
 * non-zero (as it does returning this), the job goes to failed after this
 * run whatever attempts remain (BullMQ's UnrecoverableError). Returns
 * LN_EFAILED, so a handler can `return ln_job_fail_unrecoverable(job,
 * "bad input");`. */
LN_EXTERN int ln_job_fail_unrecoverable(ln_job *job, const char *reason);

/* When the handler returns, put the job back to delayed until at_ms (ms
 * since the Unix epoch, on the store's clock: SQLite's, the Redis
 * server's; a time already past makes it due at once) instead of
 * recording an outcome: no attempt is used (attempts_made stays, the
 * started run still counts in attempts_started), no result or reason is
 * stored, and the lease is released; the job runs again once due (BullMQ's
 * job.moveToDelayed + DelayedError). What the handler returns changes
 * nothing, and a later call replaces the time. Overridden by a timeout
 * (see "Timeouts") or a lost lease like any outcome. 0, or LN_EINVAL
 * (job NULL, at_ms < 0). */
LN_EXTERN int ln_job_delay_until(ln_job *job, int64_t at_ms);

/* When the handler returns, put the job back at the front of waiting (the
 * head of its priority) instead of recording an outcome, without using an
 * attempt, and, for ms > 0, rate limit the queue for ms from then (BullMQ's
 * queue.rateLimit(ms) + Worker.RateLimitError): the store's limiter is set
 * full for ms, so no worker taking with a rate limit (its own rate_max or
 * the queue's global one) takes a job until it expires. This worker takes
 * nothing until the limiter's time is over (at most 30 s, then it looks
 * again). ms = 0 only puts the job back and waits out the limiter as it
 * is. What the handler returns changes nothing; a timeout or a lost lease
 * overrides it like any outcome; a later call replaces ms, and it wins over
 * ln_job_delay_until. 0, or LN_EINVAL (job NULL, ms outside 0..2^31-1). */
LN_EXTERN int ln_job_rate_limited(ln_job *job, int64_t ms);

/* Store a progress value (JSON) now, visible to ln_jobs_get. 0,
 * LN_EINVAL (not JSON or too large), LN_ESTALE (the lease was lost), LN_EBACKEND. */
LN_EXTERN int ln_job_progress(ln_job *job, const char *json);

/* Append a log line (<= 64 KiB) to the job now. Errors as ln_job_progress. */
LN_EXTERN int ln_job_log(ln_job *job, const char *line);

/* 1 once the worker gave the job up (stopped past its grace period, the
 * lease was lost, the run timed out: see "Timeouts", or the job was
 * canceled: see ln_jobs_cancel): the handler should return soon; its
 * outcome is ignored. */
LN_EXTERN int ln_job_canceled(const ln_job *job);

#ifdef __cplusplus
}
#endif

#endif /* LANES_JOBS_HANDLER_H */
