/* lanes/jobs_events.h - part of <lanes/jobs.h>: following a queue's events,
 * and waiting for a job's outcome. Include <lanes/jobs.h>, which includes
 * this header; its conventions (errors, threads, names, who owns what) hold
 * here too. */
#ifndef LANES_JOBS_EVENTS_H
#define LANES_JOBS_EVENTS_H

#include <lanes/jobs.h>

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A queue's events, as BullMQ names them: "added", "waiting", "delayed",
 * "active", "progress", "completed", "failed", "stalled", "removed",
 * "duplicated", "cleaned", "drained", "paused", "resumed" (a Node process
 * may write others: "retries-exhausted", "waiting-children", ...). Fields
 * by event, as BullMQ writes them (every value a string; returnvalue,
 * data and the like hold JSON text):
 *   added {jobId, name}; waiting {jobId[, prev]}; delayed {jobId, delay
 *   (the due time, ms)}; active {jobId, prev}; progress {jobId, data};
 *   completed {jobId, returnvalue, prev}; failed {jobId, failedReason,
 *   prev}; stalled {jobId}; removed {jobId, prev}; duplicated {jobId};
 *   cleaned {count}; drained, paused, resumed {}.
 * A failed run that is retried writes "delayed" or "waiting", not
 * "failed": "failed" and "completed" are written once per job, when it
 * reaches its final state. "drained" is written as BullMQ's worker writes
 * it: by a worker's step that completed or failed for good some job, took
 * none, and left the queue (not paused, not rate limited) with nothing
 * waiting, prioritized, active or delayed; a run retried or delayed never
 * writes it, so a batch whose last job fails once and is retried gets one
 * "drained", after that job's final outcome.
 *
 * On SQLite a handle writes the events its URL's events= names: outcomes
 * (the default: every event above but added, waiting, delayed and active;
 * about a tenth of a worker's job rate), all (those
 * too: batched adds then run at about a third of their rate) or none
 * (no events: ln_jobs_wait then sees an outcome or a removal only by
 * reading the job back, within a second). On a full disk
 * (the reserve in use) SQLite writes no events.
 *
 * Where they live: on Redis, BullMQ's stream <prefix>:<queue>:events
 * (so lanes follows Node's events and Node's QueueEvents lanes'), capped
 * near opts.maxLenEvents (10000) entries; on SQLite, a table written in
 * the same transaction as the change it describes, keeping the newest
 * LN_JOBS_EVENTS_KEEP events of the store (all queues together). A
 * follower that falls further behind than that misses the oldest. */
#define LN_JOBS_EVENTS_KEEP 10000

typedef struct ln_jobs_events ln_jobs_events;

typedef struct ln_job_event {
    char id[48];   /* where it is in the queue's events: the stream id on
                      Redis ("1700000000000-0"), the sequence number on
                      SQLite ("42"); increasing; give it as 'from' to go on
                      after it */
    char name[64]; /* "completed", ...; longer names are cut */
    char *job_id;  /* the jobId field, whole (any length); "" when none.
                      Owned: freed by ln_job_event_clear */
    char *fields;  /* every field as a JSON object of strings, e.g.
                      {"jobId":"7","returnvalue":"{\"ok\":1}","prev":"active"} */
    int64_t at_ms; /* when it was written, ms since the Unix epoch */
} ln_job_event;

/* Free event->fields and event->job_id and zero *event. NULL is a no-op. */
LN_EXTERN void ln_job_event_clear(ln_job_event *event);

/* Follow queue's events on a connection of its own. from: NULL or "$" =
 * only events written after this call returns; "0" = from the oldest
 * kept; an event id = those after it. *out is used by one thread at a
 * time and must be closed before the handle. 0, LN_EINVAL, LN_ENOMEM,
 * LN_ENOTSUP (a store without events), LN_EFORK, or the store's
 * connection errors (LN_ECONNREFUSED, LN_EBACKEND, ...). */
LN_EXTERN int ln_jobs_events_open(ln_jobs *jobs, const char *queue, const char *from,
                                  ln_jobs_events **out);

/* The next event into *event (zeroed first; clear it afterwards), waiting
 * up to timeout_ms for one (0: do not wait; < 0: no limit). Without a
 * busy loop: Redis blocks in XREAD; SQLite sleeps 5 ms to 100 ms between
 * cheap looks at PRAGMA data_version (only another connection's commit
 * makes it read the table). 0, LN_ETIMEDOUT, LN_EINVAL, LN_ENOMEM, or a
 * store error (the follower may be used again: it reconnects). */
LN_EXTERN int ln_jobs_events_next(ln_jobs_events *ev, int64_t timeout_ms, ln_job_event *event);

/* The message of the follower's last failure ("" when none). */
LN_EXTERN const char *ln_jobs_events_errmsg(const ln_jobs_events *ev);

/* Close the follower. NULL is a no-op. */
LN_EXTERN void ln_jobs_events_close(ln_jobs_events *ev);

/* Trim queue's events to about its newest max_len (BullMQ's
 * queue.trimEvents): at least the newest max_len stay. Redis: XTRIM
 * MAXLEN ~ max_len on the stream, which drops whole stream nodes only, so
 * a short stream may keep more; SQLite: exactly the newest max_len of the
 * queue, but never the newest event of the store (its sequence must not
 * go back). *removed (may be NULL): how many went. Bounded: the events
 * kept are capped already (see above). */
LN_EXTERN int ln_jobs_trim_events(ln_jobs *jobs, const char *queue, size_t max_len,
                                  size_t *removed);

/* Wait until job id of queue completed or failed (BullMQ's
 * job.waitUntilFinished) and fill *info (clear it afterwards): state
 * LN_JOB_COMPLETED with result, or LN_JOB_FAILED with failed_reason.
 * Returns at once for a job already finished. It follows the queue's
 * events from before it reads the job, so an outcome written meanwhile
 * is not missed; when the job was removed by its retention as it
 * finished, *info has what the event told (id, state, result or reason).
 * A job can also go without an event of its own (ln_jobs_drain writes
 * none per job, as BullMQ's drain; a Node process may delete keys), so
 * while it waits it reads the job back (ln_jobs_get, on the handle's
 * connection): 50 ms after it starts, then at twice the last interval up
 * to once a second. A job gone returns LN_ENOENT within that interval of
 * its removal, not at the timeout; a job found finished returns as its
 * event would, and so does a job found gone whose outcome the follower
 * has not read yet (it finished, then its retention removed it). timeout_ms < 0: no limit. 0 (finished), LN_ETIMEDOUT,
 * LN_ENOENT (no such job, or it was removed or drained meanwhile),
 * LN_EINVAL, and the errors of ln_jobs_events_open. Any thread; uses a
 * connection of its own for the wait. */
LN_EXTERN int ln_jobs_wait(ln_jobs *jobs, const char *queue, const char *id, int64_t timeout_ms,
                           ln_job_info *info);

#ifdef __cplusplus
}
#endif
#endif /* LANES_JOBS_EVENTS_H */
