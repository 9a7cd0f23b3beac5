/* metrics_record.c - the arithmetic of a queue's per-minute metrics (jobs.h
 * "Metrics"), which the SQLite store runs in C (sqlite_metrics.c) and the
 * Redis store in Lua (lib.lua's collect_metrics), the same steps: a count
 * recorded into its points, and LRANGE's rule for reading them.
 * docs/internals/metrics.md has the layout and why the counts of one step
 * may be counted at once. Part of the model. */
#include "metrics.h"

#include "internal.h"

#include <lanes/jobs.h>

#define MINUTE_MS 60000

unsigned ln_job_metrics_record(ln_job_metrics *m, uint64_t n, int64_t now_ms, unsigned max_points,
                               uint64_t *first) {
    if (first != NULL) *first = 0;
    if (m == NULL || n == 0 || max_points == 0) return 0;
    uint64_t before = m->count;
    m->count += n;
    if (m->prev_ts == 0) { /* the first job ever counted */
        m->prev_ts = now_ms;
        m->prev_count = 0;
        return 0;
    }
    /* Whole minutes of the epoch, as Lua's math.floor(ts / 60000). */
    int64_t now_min = now_ms >= 0 ? now_ms / MINUTE_MS : -((-now_ms + MINUTE_MS - 1) / MINUTE_MS);
    int64_t prev_min =
        m->prev_ts >= 0 ? m->prev_ts / MINUTE_MS : -((-m->prev_ts + MINUTE_MS - 1) / MINUTE_MS);
    int64_t k = now_min - prev_min;
    if (k <= 0) return 0;
    unsigned p = k < (int64_t)max_points ? (unsigned)k : max_points;
    if (first != NULL) *first = before - m->prev_count;
    m->prev_count = before;
    m->prev_ts = now_ms;
    LN_ASSERT(p >= 1 && p <= max_points);
    return p;
}

int ln__metrics_range(uint64_t npoints, int64_t start, int64_t end, uint64_t *lo, uint64_t *hi) {
    int64_t n = npoints > INT64_MAX / 2 ? INT64_MAX / 2 : (int64_t)npoints;
    if (start < 0) start = start < -n ? 0 : n + start;
    if (end < 0) end = end < -n ? -1 : n + end;
    if (end >= n) end = n - 1;
    if (start > end) return 0;
    if (end - start >= LN_JOB_METRICS_POINTS_MAX) end = start + LN_JOB_METRICS_POINTS_MAX - 1;
    *lo = (uint64_t)start;
    *hi = (uint64_t)end;
    return 1;
}
