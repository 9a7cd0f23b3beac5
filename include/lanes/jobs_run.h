/* lanes/jobs_run.h - part of <lanes/jobs.h>: running a worker (ln_worker:
 * its options, create, run, stop, stats). Include <lanes/jobs.h>, which
 * includes this header; its conventions (errors, threads, names, who owns
 * what) hold here too. The calls a handler makes on its job are in
 * <lanes/jobs_handler.h>; the workers a store sees connected, in
 * <lanes/jobs_workers.h>. */
#ifndef LANES_JOBS_RUN_H
#define LANES_JOBS_RUN_H

#include <lanes/jobs.h>

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Runs one job. Return 0 (completed; the result is what ln_job_set_result
 * stored, else null) or a negative code (failed; the reason is what
 * ln_job_fail stored, else ln_strerror(code)). Called on a thread of the
 * worker's pool lane, several at once when concurrency > 1, never with a
 * lanes lock held. The job is valid until the handler returns. */
typedef int (*ln_job_handler)(ln_job *job, void *ctx);

typedef struct ln_worker_opts {
    unsigned concurrency;         /* jobs run at once, 1..4096; default 1 */
    ln_pool *pool;                /* run handlers on this pool (must outlive the
                                  worker); NULL = a private pool with one lane
                                  of 'concurrency' threads */
    int lane;                     /* lane of 'pool'; default LN_LANE_IO */
    unsigned lease_ms;            /* lease length, >= 100; renewed every
                                  lease_ms / 2 while the handler runs;
                                  default 30000 */
    unsigned max_stalled;         /* a job whose lease lapsed more than this many
                                  times fails; default 1. A job scheduler's
                                  iteration (of a scheduler that still
                                  exists) never fails so: it goes back to
                                  waiting however often it lapsed, as
                                  BullMQ's stalled check requeues a
                                  repeatable job */
    unsigned stalled_interval_ms; /* how often this worker looks for lapsed
                                  leases (of any worker); 0 (default) =
                                  every lease_ms */
    unsigned poll_ms;             /* >= 1. SQLite: longest sleep while the queue
                                  is empty. Redis: idle workers block on
                                  BullMQ's marker instead (woken at once
                                  by an add); poll_ms paces retries while
                                  Redis is unreachable and the emptiness
                                  checks of exit_when_empty. Default 100 */
    unsigned grace_ms;            /* on stop, how long running handlers may
                                  finish before their jobs are released;
                                  default 10000 */
    int exit_when_empty;          /* 1: ln_worker_run returns once the queue has
                                  no waiting, delayed, prioritized or active
                                  job and nothing runs here (a paused queue
                                  with waiting jobs is not empty) */
    uint64_t max_jobs;            /* stop after taking this many; 0 = no limit */
    unsigned batch;               /* most jobs taken per store transaction;
                                  0 (default) or more than concurrency =
                                  concurrency */
    unsigned timeout_ms;          /* longest run of a job, from its start,
                                  0..2^31-1; 0 (default) = none. A job's own
                                  ln_job_opts.timeout_ms overrides it. See
                                  "Timeouts" below */
    unsigned store_retry_ms;      /* how long ln_worker_run keeps retrying a
                                  store that fails transiently (unreachable,
                                  connection lost, I/O error, disk full), every
                                  poll_ms, before it gives up and returns the
                                  error; 0 (default) =
                                  LN_WORKER_STORE_RETRY_MS_DEFAULT (30 s),
                                  whatever the lease: long enough to ride
                                  out a Redis Cluster failover or a server
                                  restart (see that macro); a full disk
                                  (LN_ENOSPC) only up to lease_ms, so the
                                  worker gives its jobs back before their
                                  leases lapse. The error's
                                  message then says "gave up after N ms of
                                  store failures in a row" and the last
                                  failure */
    unsigned metrics_max_points;  /* 0 (default): off. 1..LN_JOB_METRICS_POINTS_MAX:
                                  count every job this worker completes or
                                  fails for good into the queue's per-minute
                                  metrics, keeping this many points (BullMQ's
                                  worker option metrics.maxDataPoints; see
                                  "Metrics" below) */
    /* Rate limit shared by every worker of the queue (BullMQ's worker
     * 'limiter'; see "Rate limits and global concurrency" below): at most
     * rate_max jobs taken per rate_duration_ms window, counted in the
     * store for all workers that take with a limit. Both 0 (default) =
     * none; else both 1..2^31-1. A global rate limit set on the queue
     * (ln_jobs_set_rate_limit) wins over rate_max, as in BullMQ. */
    unsigned rate_max;
    unsigned rate_duration_ms;
    /* 1: do not write the per-job 'active' event when a job is taken (the
     * Redis store's event stream; about 8% of its Redis CPU per job). A
     * BullMQ QueueEvents listener for 'active' then does not hear about
     * the jobs this worker runs; 'completed', 'failed', waitUntilFinished
     * and Bull Board do not need it. 0 (default): written, as BullMQ's
     * worker does. The SQLite store has no such stream: no effect there. */
    int no_active_event;
    /* Custom backoff types (BullMQ's worker settings.backoffStrategy):
     * called when a job whose backoff type is neither fixed nor
     * exponential (LN_BACKOFF_CUSTOM, or any other type a Node producer
     * wrote) fails and has attempts left. attempts_made counts the failed
     * runs including this one (1 on the first failure), type is the job's
     * type name, reason the failure's reason ("timed out after N ms" for
     * a timeout); job gives ln_job_id, _name, _queue, _data, _attempt,
     * _traceparent, _tracestate and nothing else may be called on it (the
     * handler has returned, or, after a timeout, may still run). It returns the delay in ms before the retry (0 =
     * at once; more than 100 years is cut to 100 years; another negative
     * value is taken as 0, as BullMQ's worker retries at once), or -1: no
     * more retries, the job fails for good with its reason. Called on the
     * worker's dispatcher thread (ln_worker_run's), one call at a time per
     * worker, never with a lanes lock held; it should be quick (no other
     * job's outcome is stored while it runs). NULL (default): a job with a
     * custom type that fails is not retried: it fails for good, the
     * reason followed by " (not retried: no backoff strategy for type
     * '<type>')" (BullMQ's worker throws "Unknown backoff strategy" and
     * leaves the job to stall). Fixed and exponential never call it. */
    int64_t (*backoff_strategy)(int attempts_made, const char *type, const char *reason,
                                const ln_job *job, void *user);
    void *backoff_user; /* handed to backoff_strategy */
    /* Retention of the jobs this worker completes / fails for good whose
     * own option is LN_KEEP_ALL (not set): BullMQ's worker options
     * removeOnComplete / removeOnFail, which a job's own option overrides
     * (LN_KEEP_ALWAYS keeps such a job). Default LN_KEEP_ALL: keep them.
     * LN_KEEP_NONE, _COUNT, _AGE as for a job; the queue-wide trims of
     * _COUNT and _AGE run as this worker records each outcome. Jobs
     * failed by the stalled check or a cancel keep their own option. A
     * flow parent that a fail-parent child's failure fails gets the
     * remove_on_fail of the worker that fails it: on Redis the one that
     * takes it (BullMQ's deferred failure), on SQLite, which fails it at
     * once, the one that recorded the child's failure if it runs the
     * parent's queue (none for a child failed by the stalled check or a
     * cancel: the parent keeps its own). */
    ln_job_keep remove_on_complete;
    ln_job_keep remove_on_fail;
    /* BullMQ's worker option maxStartedAttempts: 0 (default) = no limit.
     * Else a job this worker takes that has been started more than this
     * many times (ln_job_attempts_started, this take included: it kept
     * coming back, e.g. its runs stalled or delayed themselves) fails for
     * good without running, reason "job started more than allowable
     * limit", and a failed run of a job started this many times is not
     * retried, whatever attempts remain. */
    unsigned max_started_attempts;
} ln_worker_opts;

/* Timeouts. When a run's timeout (the job's timeout_ms, else the worker's)
 * passes before its handler returned, the worker at once
 *  - records the run as failed with the reason "timed out after N ms"
 *    (retried with the job's backoff while attempts remain, like any
 *    failure; a retry gets the full timeout again),
 *  - stops renewing the job's lease, and
 *  - sets ln_job_canceled() to 1 for the handler, which should return soon.
 * What the handler returns later (its result, ln_job_fail reason, return
 * code) is ignored: the recorded outcome stays. ln_job_progress and
 * ln_job_log may still be called until it returns; once the failure is
 * stored they return LN_ESTALE. A handler is never interrupted: until it returns, its pool
 * thread stays busy, the job's ln_job stays valid (freed only after the
 * return) and its place counts against concurrency, so a handler that never
 * returns takes one place for good, and ln_worker_run (on stop, or with
 * exit_when_empty) returns only once it has. `lanes worker --exec` kills the program's process group
 * (SIGTERM, then SIGKILL after a grace) when a run times out. */

LN_EXTERN void ln_worker_opts_init(ln_worker_opts *opts);

/* Create a worker for queue on jobs (which must outlive it). fn(job, ctx)
 * runs each job. opts NULL = defaults. 0, LN_EINVAL, LN_ENOMEM, LN_EAGAIN
 * (threads), LN_EFORK. Nothing runs until ln_worker_run. */
LN_EXTERN int ln_worker_create(ln_worker **out, ln_jobs *jobs, const char *queue, ln_job_handler fn,
                               void *ctx, const ln_worker_opts *opts);

/* Take and run jobs on the calling thread's behalf until ln_worker_stop, a
 * limit (max_jobs) or, with exit_when_empty, an empty queue. On stop it
 * takes nothing more, waits grace_ms for running handlers, then releases
 * the jobs still running back to waiting (their handlers see
 * ln_job_canceled() == 1 and their outcome is discarded) and returns once
 * every handler has returned. Returns 0, or the store error that ended the
 * run (LN_EBACKEND, LN_ENOSPC, ...; see ln_jobs_errmsg). Call from one
 * thread at a time; it may be called again after it returned. */
LN_EXTERN int ln_worker_run(ln_worker *w);

/* Ask ln_worker_run to stop (a stop before ln_worker_run makes it return
 * at once). Any thread; async-signal-safe (a SIGTERM handler may call it).
 * NULL is a no-op. */
LN_EXTERN void ln_worker_stop(ln_worker *w);

/* What the worker has done so far (over all its runs). */
typedef struct ln_worker_stats {
    uint64_t taken;         /* jobs taken from the store */
    uint64_t completed;     /* runs recorded as completed */
    uint64_t failed;        /* runs that failed for good (no attempts
                               left, or unrecoverable) */
    uint64_t retried;       /* failed runs put back for a retry */
    uint64_t stale;         /* outcomes or renewals refused, or running
                               jobs the cancel poll found no longer held:
                               lease lost, or canceled (ln_jobs_cancel);
                               a running job's once its handler returned,
                               and not one the handler moved to
                               waiting-children (that is waited); a take
                               counts once, also when both a renewal and
                               its outcome were refused */
    uint64_t stalled_found; /* lapsed leases this worker recovered */
    uint64_t released;      /* jobs given back at a graceful stop */
    /* The store's outages, as ln_worker_run retries them (store_retry_ms):
     * store_lost counts the streaks of transient failures that outlived
     * their first retry (one failed step the next one fixes, such as
     * Redis's NOSCRIPT on a fresh server, is not an outage), store_regained
     * the times a step then worked again. store_lost - store_regained is 1
     * while the worker is retrying a lost store (Redis unreachable, ...). */
    uint64_t store_lost;
    uint64_t store_regained;
    uint64_t delayed;      /* runs put back to delayed by
                               ln_job_delay_until */
    uint64_t rate_limited; /* runs put back to waiting by
                              ln_job_rate_limited */
    uint64_t waited;       /* runs that ended in waiting-children by
                              ln_job_wait_children (nothing recorded) */
    uint64_t unreplicated; /* Redis with ln_jobs_opts.wait_replicas:
                              outcomes recorded on the primary that WAIT
                              did not confirm on the replicas in time
                              (they stand; they may be lost if the
                              primary fails before it replicates them) */
} ln_worker_stats;

/* Copy the counters to *out. Any thread, also while the worker runs. */
LN_EXTERN void ln_worker_get_stats(const ln_worker *w, ln_worker_stats *out);

/* Free the worker (not while ln_worker_run runs). NULL is a no-op. */
LN_EXTERN void ln_worker_destroy(ln_worker *w);

#ifdef __cplusplus
}
#endif
#endif /* LANES_JOBS_RUN_H */
