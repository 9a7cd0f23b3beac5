/* metrics.h - the metrics arithmetic the stores share (metrics_record.c,
 * sqlite_metrics.c). Not API. */
#ifndef LN_JOBS_METRICS_H
#define LN_JOBS_METRICS_H

#include <stdint.h>

/* The points start..end of a list of npoints by Redis LRANGE's rule
 * (negative: from the end; out-of-range ends clamped), at most
 * LN_JOB_METRICS_POINTS_MAX of them: 1 and the indexes [*lo, *hi], or 0
 * when the range is empty. */
int ln__metrics_range(uint64_t npoints, int64_t start, int64_t end, uint64_t *lo, uint64_t *hi);

#endif
