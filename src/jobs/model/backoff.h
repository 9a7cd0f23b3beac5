/* backoff.h - the retry delay of a failed run (jobs.h "Backoff"): the
 * builtin types, the jitter, the random draw, and the names of the types
 * as BullMQ stores them. Not API; docs/internals/backoff.md. */
#ifndef LN_JOBS_BACKOFF_H
#define LN_JOBS_BACKOFF_H

#include <lanes/jobs.h>

#include <stdint.h>

/* 100 years in ms: the longest retry delay (the bound on delays in
 * validate.c), so now + delay stays far from int64 overflow. */
#define LN__BACKOFF_CAP_MS (100LL * 366 * 24 * 3600 * 1000)

/* D: the delay of a fixed (ms) or exponential (ms * 2^made, BullMQ's
 * round(2^(attemptsMade-1) * delay) for the run made + 1) backoff, capped
 * at LN__BACKOFF_CAP_MS. made: failed runs before the one that failed. */
int64_t ln__backoff_base(int type, int64_t ms, int made);

/* Pure: d with jitter j (0..1) for the draw r in [0, 1): BullMQ's
 * floor(r * d * j + d * (1 - j)), kept within [0, d]; d itself when j <= 0
 * (or not a number). */
int64_t ln__backoff_jittered(int64_t d, double jitter, double r);

/* A draw in [0, 1) from this thread's generator (xoshiro256**, seeded
 * from getrandom, else from the clock and the thread): thread-safe, no
 * lock, not rand(). */
double ln__backoff_random(void);

/* A value a custom strategy returned, made a delay: -1 stays (no retry),
 * another negative is 0 (retry at once), above the cap is the cap. */
int64_t ln__backoff_strategy_delay(int64_t v);

/* The jitter as Redis stores it (a JSON number), read back: a number
 * outside 0..1 is cut to the bound, anything else (NaN) is 0. */
double ln__backoff_clamp_jitter(double j);

#endif /* LN_JOBS_BACKOFF_H */
