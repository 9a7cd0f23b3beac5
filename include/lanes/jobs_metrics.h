/* lanes/jobs_metrics.h - part of <lanes/jobs.h>: per-minute counts of
 * completed and failed jobs. Include <lanes/jobs.h>, which includes this
 * header; its conventions (errors, threads, names, who owns what) hold here
 * too. */
#ifndef LANES_JOBS_METRICS_H
#define LANES_JOBS_METRICS_H

#include <lanes/jobs.h>

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Per-minute counts of a queue's jobs that completed and that failed for
 * good (a retried run is not counted), BullMQ's metrics: written by the
 * workers whose ln_worker_opts.metrics_max_points is > 0, read by
 * ln_jobs_metrics. Every worker of a queue should use the same
 * metrics_max_points (as BullMQ asks). Per queue and outcome the store
 * keeps:
 *  - count: the jobs counted so far;
 *  - prev_ts, prev_count: the store time (ms) of the job that last began a
 *    new minute, and count before it;
 *  - data points, newest first, at most metrics_max_points of them: when a
 *    job is counted in a later minute than prev_ts, the jobs counted since
 *    the last point (count - prev_count, before this job) are pushed as one
 *    point, then one 0 per minute between (at most metrics_max_points
 *    points in all); the oldest beyond metrics_max_points go. So data[i]
 *    is the jobs of the (i+1)-th minute before the minute of prev_ts
 *    (exact unless a gap was longer than metrics_max_points minutes).
 * On Redis this is BullMQ's layout exactly (the hash <prefix>:<queue>:
 * metrics:completed / metrics:failed with count, prevTS and prevCount, the
 * list <...>:metrics:<type>:data), so Node's queue.getMetrics and Bull
 * Board's chart count lanes' jobs and ln_jobs_metrics Node's; on SQLite
 * the same in two tables, written in the transaction that records the
 * outcome. A minute change costs one push of up to metrics_max_points
 * points; every other count one counter update per worker step. */
#define LN_JOB_METRICS_POINTS_MAX 80640 /* BullMQ's ONE_MONTH: 8 weeks of minutes */

typedef struct ln_job_metrics {
    uint64_t count;      /* jobs counted (BullMQ's meta.count) */
    int64_t prev_ts;     /* ms since the Unix epoch; 0 = no job yet */
    uint64_t prev_count; /* count when the newest point was pushed */
    uint64_t *data;      /* the points asked for, newest first (NULL if none) */
    size_t ndata;
    uint64_t npoints; /* points stored in all (BullMQ's count of points) */
} ln_job_metrics;

/* Read queue's metrics of type LN_JOB_COMPLETED or LN_JOB_FAILED into *out
 * (zeroed first; clear it afterwards): count, prev_ts, prev_count, npoints
 * and the points of index start..end (0 = the newest; negative counts from
 * the oldest, -1 = the oldest: Redis LRANGE's rule, BullMQ's getMetrics(type,
 * start, end)), at most LN_JOB_METRICS_POINTS_MAX of them (a wider range is
 * cut after that many). A queue without metrics gives zeros. 0,
 * LN_EINVAL (bad type, queue or out), LN_ENOMEM, LN_EFORK, LN_EBACKEND. */
LN_EXTERN int ln_jobs_metrics(ln_jobs *jobs, const char *queue, int type, int64_t start,
                              int64_t end, ln_job_metrics *out);

/* Free out->data and zero *out. NULL is a no-op. */
LN_EXTERN void ln_job_metrics_clear(ln_job_metrics *m);

/* The arithmetic both stores apply when n >= 1 jobs are counted at once at
 * store time now_ms, keeping max_points points (a pure function, for tests
 * and tools writing the same layout; any thread): adds n to m->count, and
 *  - with no job before (m->prev_ts 0): sets prev_ts = now_ms,
 *    prev_count = 0 and returns 0;
 *  - when now_ms is k > 0 minutes (of the Unix epoch) after prev_ts's:
 *    returns p = min(k, max_points), the points to push at the front of the
 *    data: first *first (count - prev_count before these n), then p - 1
 *    zeros (the data is then cut to max_points); prev_ts = now_ms,
 *    prev_count = count before these n;
 *  - else (the same minute, or a clock behind prev_ts) returns 0.
 * max_points 0 or n 0 change nothing and return 0. m->data is not used. */
LN_EXTERN unsigned ln_job_metrics_record(ln_job_metrics *m, uint64_t n, int64_t now_ms,
                                         unsigned max_points, uint64_t *first);

#ifdef __cplusplus
}
#endif
#endif /* LANES_JOBS_METRICS_H */
