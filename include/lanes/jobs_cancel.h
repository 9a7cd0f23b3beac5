/* lanes/jobs_cancel.h - part of <lanes/jobs.h>: cancelling a job from any
 * process (ln_jobs_cancel). Include <lanes/jobs.h>, which includes this
 * header; its conventions (errors, threads, names, who owns what) hold here
 * too. */
#ifndef LANES_JOBS_CANCEL_H
#define LANES_JOBS_CANCEL_H

#include <lanes/jobs.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The failed_reason of a canceled job. */
#define LN_JOB_CANCELED_REASON "canceled"
/* How often a worker running jobs looks for cancels of them (ms). */
#define LN_JOBS_CANCEL_POLL_MS 250

/* Cancel job id of queue, from any process. The job ends failed with the
 * reason LN_JOB_CANCELED_REASON at once and for good: no retry, whatever
 * attempts remain; a "failed" event is written and remove_on_fail
 * applies (the job may be removed at once).
 *  - waiting, prioritized, paused or delayed: it is failed now and never
 *    runs; attempts_made is unchanged (no run failed).
 *  - active: it is failed now (attempts_made + 1: the run counts as a
 *    failed one) and the lease of the worker holding it is taken away, so
 *    whatever that worker reports later (result, failure, renewal,
 *    progress, log) is refused (LN_ESTALE) and the job stays failed. A
 *    lanes worker holding it sees the cancel within a second (it looks
 *    every LN_JOBS_CANCEL_POLL_MS while it runs handlers):
 *    ln_job_canceled() becomes 1 and the handler should return soon
 *    (what it returns is ignored); `lanes worker --exec` sends the
 *    program's process group SIGTERM, then SIGKILL after its --grace. A Node
 *    (BullMQ) worker holding the job on Redis cannot see the cancel: its
 *    processor runs on to its end, then BullMQ refuses its outcome
 *    ("Missing lock") and the worker goes on with other jobs.
 *  - completed or failed, or a flow parent waiting for its children
 *    (LN_JOB_WAITING_CHILDREN): LN_EINVAL, nothing changes.
 *  - a job scheduler's current iteration that has not run: LN_EINVAL,
 *    nothing changes (its take makes the next: the schedule would end;
 *    ln_jobs_remove refuses it too).
 * A canceled flow child's parent is told of it as of any final failure
 * of the child: its failure options (fail_parent_on_failure, ...; see
 * "Flows") apply, whether the child was running or not.
 * Cost: SQLite O(log n); Redis finds an active or waiting job in its
 * list (O(length), as removing a job does). 0, LN_ENOENT (no such
 * job), LN_EINVAL (bad queue or id, or the job is finished:
 * ln_jobs_errmsg says which), LN_EFORK, LN_EBACKEND. Any thread. */
LN_EXTERN int ln_jobs_cancel(ln_jobs *jobs, const char *queue, const char *id);

#ifdef __cplusplus
}
#endif
#endif /* LANES_JOBS_CANCEL_H */
