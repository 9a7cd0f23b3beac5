/* limit.c - the front of rate limits and global concurrency (jobs.h
 * "Rate limits and global concurrency"): check the arguments, then run
 * the store's limits method with the handle's
 * mutex held. How the stores keep and apply them:
 * docs/internals/ratelimit.md. */
#include "front.h"

#include "internal.h"

#include <stdio.h>
#include <string.h>

#define LIMIT_MAX INT32_MAX /* every count and ms: 1..2^31-1 */

/* Check queue and (code, msg) of the caller's own checks, enter, run op. */
static int run_limits(ln_jobs *jobs, const char *queue, ln__jobs_limits *l, const char *bad) {
    char msg[LN__JOBS_ERRMSG_MAX] = "";
    int code = ln__jobs_check_queue(queue, msg, sizeof msg);
    if (code == 0 && bad != NULL) {
        snprintf(msg, sizeof msg, "%s", bad);
        code = LN_EINVAL;
    }
    int err = ln__jobs_enter(jobs);
    if (err != 0) return err;
    if (code != 0) {
        ln__jobs_err(jobs, code, "%s", msg);
        return ln__jobs_leave(jobs, code);
    }
    if (jobs->be->methods->limits == NULL)
        return ln__jobs_leave(jobs,
                              ln__jobs_err(jobs, LN_ENOTSUP, "the %s store has no rate limits",
                                           jobs->be->methods->name));
    return ln__jobs_leave(jobs, jobs->be->methods->limits(jobs->be, queue, l));
}

static int in_range(int64_t v, int64_t lo) {
    return v >= lo && v <= LIMIT_MAX;
}

int ln_jobs_set_rate_limit(ln_jobs *jobs, const char *queue, int64_t max, int64_t duration_ms) {
    ln__jobs_limits l = {.op = LN__LIMITS_SET_RATE, .max = max, .duration_ms = duration_ms};
    int clear = max == 0 && duration_ms == 0;
    const char *bad = clear || (in_range(max, 1) && in_range(duration_ms, 1))
                          ? NULL
                          : "rate limit: max and duration_ms must be 1..2147483647 (or both 0 "
                            "to clear it)";
    return run_limits(jobs, queue, &l, bad);
}

int ln_jobs_get_rate_limit(ln_jobs *jobs, const char *queue, int64_t *max, int64_t *duration_ms) {
    ln__jobs_limits l = {.op = LN__LIMITS_GET};
    int err = run_limits(jobs, queue, &l,
                         max == NULL || duration_ms == NULL ? "max and duration_ms must not be NULL"
                                                            : NULL);
    if (err == 0) {
        *max = l.max;
        *duration_ms = l.duration_ms;
    }
    return err;
}

int ln_jobs_set_concurrency(ln_jobs *jobs, const char *queue, int64_t n) {
    ln__jobs_limits l = {.op = LN__LIMITS_SET_CONCURRENCY, .concurrency = n};
    return run_limits(
        jobs, queue, &l,
        in_range(n, 0) ? NULL : "global concurrency must be 1..2147483647 (or 0 to clear it)");
}

int ln_jobs_get_concurrency(ln_jobs *jobs, const char *queue, int64_t *n) {
    ln__jobs_limits l = {.op = LN__LIMITS_GET};
    int err = run_limits(jobs, queue, &l, n == NULL ? "n must not be NULL" : NULL);
    if (err == 0) *n = l.concurrency;
    return err;
}

int ln_jobs_rate_limit(ln_jobs *jobs, const char *queue, int64_t ms) {
    ln__jobs_limits l = {.op = LN__LIMITS_MANUAL, .ttl_ms = ms};
    return run_limits(jobs, queue, &l,
                      in_range(ms, 0) ? NULL : "rate limit ms must be 0..2147483647");
}

int ln_jobs_rate_limit_ttl(ln_jobs *jobs, const char *queue, int64_t max, int64_t *ttl_ms) {
    ln__jobs_limits l = {.op = LN__LIMITS_TTL, .max = max};
    const char *bad = ttl_ms == NULL      ? "ttl_ms must not be NULL"
                      : !in_range(max, 0) ? "max must be 0..2147483647"
                                          : NULL;
    int err = run_limits(jobs, queue, &l, bad);
    if (err == 0) *ttl_ms = l.ttl_ms > 0 ? l.ttl_ms : 0;
    return err;
}
