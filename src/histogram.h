/* histogram.h - log-linear latency histogram (HdrHistogram-like, 3
 * sub-bucket bits: every value is kept within 12.5% of its true size).
 *
 * Single writer, any readers: the owning worker thread updates counters
 * with relaxed load+store (no read-modify-write needed with one writer),
 * and readers load them relaxed. A reader may see a count and a sum from
 * slightly different moments; that is acceptable for statistics. */
#ifndef LN_HISTOGRAM_H
#define LN_HISTOGRAM_H

#include <lanes.h>

#include <stdatomic.h>
#include <stdint.h>

#define LN_HIST_SUB_BITS 3
#define LN_HIST_BUCKETS                                                                            \
    ((64 - LN_HIST_SUB_BITS) * (1 << LN_HIST_SUB_BITS) + (1 << LN_HIST_SUB_BITS))

typedef struct ln__hist {
    _Atomic uint64_t count;
    _Atomic uint64_t sum_ns;
    _Atomic uint64_t max_ns;
    _Atomic uint64_t buckets[LN_HIST_BUCKETS];
} ln__hist;

/* Single-writer record. */
void ln__hist_record(ln__hist *h, uint64_t ns);
/* dst += src (dst must not be written concurrently; src may be). */
void ln__hist_merge(ln__hist *dst, const ln__hist *src);
/* Percentiles of h into *out. */
void ln__hist_summary(const ln__hist *h, ln_latency *out);

/* Bucket index for a value, and the highest value of a bucket (exposed
 * for the unit test). */
unsigned ln__hist_index(uint64_t ns);
uint64_t ln__hist_upper(unsigned index);

#endif
