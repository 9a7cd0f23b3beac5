/* lanes/jobs_limits.h - part of <lanes/jobs.h>: a queue's rate limit and
 * global concurrency. Include <lanes/jobs.h>, which includes this header;
 * its conventions (errors, threads, names, who owns what) hold here too. */
#ifndef LANES_JOBS_LIMITS_H
#define LANES_JOBS_LIMITS_H

#include <lanes/jobs.h>

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A queue's rate limit is a counter in the store (on Redis BullMQ's
 * '<queue>:limiter' key) of the jobs taken in the current window: the
 * first take of a window starts it (duration_ms long), each take of a
 * worker with a limit adds one, and a take finding the counter at the
 * limit takes nothing and tells the worker how long the window still
 * runs; the worker then sleeps that long (at most 30 s, then looks again)
 * without polling or waiting for new jobs. The check and the count are in
 * the same atomic take, so all workers of the queue (lanes and, on Redis,
 * BullMQ's) together never take more than max in a window. Which limit
 * applies to a take: the global one's max if set, else the worker's
 * rate_max; the worker's rate_duration_ms if it has one, else the global
 * duration (BullMQ's rule). A worker without rate_max on a queue without
 * a global limit ignores the counter. Jobs that fail at take for a lapsed
 * lease (a deferred failure) are not counted.
 *
 * Global concurrency: at most n jobs of the queue active at once, over all
 * workers (BullMQ's setGlobalConcurrency); each worker's concurrency stays
 * its own cap beneath it. A raised or cleared limit is seen by idle workers
 * at their next look (at most 5 s; at once when a job finishes or is added).
 *
 * On Redis these are BullMQ's fields of '<queue>:meta' ('max', 'duration',
 * 'concurrency'), so Node's setGlobalRateLimit / setGlobalConcurrency and
 * these calls set the same limits. */

/* Set queue's global rate limit to max jobs per duration_ms (both
 * 1..2^31-1), or clear it (max 0 and duration_ms 0). 0, LN_EINVAL,
 * LN_EFORK, LN_EBACKEND. */
LN_EXTERN int ln_jobs_set_rate_limit(ln_jobs *jobs, const char *queue, int64_t max,
                                     int64_t duration_ms);
/* The global rate limit: *max and *duration_ms (0 and 0 when none). */
LN_EXTERN int ln_jobs_get_rate_limit(ln_jobs *jobs, const char *queue, int64_t *max,
                                     int64_t *duration_ms);
/* Set queue's global concurrency to n (1..2^31-1), or clear it (n = 0). */
LN_EXTERN int ln_jobs_set_concurrency(ln_jobs *jobs, const char *queue, int64_t n);
/* The global concurrency into *n (0 when none). */
LN_EXTERN int ln_jobs_get_concurrency(ln_jobs *jobs, const char *queue, int64_t *n);
/* Rate limit queue for ms from now (BullMQ's queue.rateLimit): the counter
 * is set full (9007199254740991) for ms, whatever its window. ms = 0
 * deletes the counter instead (BullMQ's removeRateLimitKey): the window
 * ends now. ms 0..2^31-1. Workers already asleep on the limit wake when
 * their sleep ends. */
LN_EXTERN int ln_jobs_rate_limit(ln_jobs *jobs, const char *queue, int64_t ms);
/* ms until the queue's rate limit lets a take through, 0 when it would now
 * (BullMQ's getRateLimitTtl): with max > 0 for a limit of max jobs, with
 * max = 0 for the global limit; without a global limit, how long the
 * counter's window still runs (0 without a counter). 0, LN_EINVAL, ... */
LN_EXTERN int ln_jobs_rate_limit_ttl(ln_jobs *jobs, const char *queue, int64_t max,
                                     int64_t *ttl_ms);

#ifdef __cplusplus
}
#endif
#endif /* LANES_JOBS_LIMITS_H */
