/* histogram.c - log-linear latency histogram; see histogram.h. */
#include "histogram.h"

#define SUB (1u << LN_HIST_SUB_BITS)

unsigned ln__hist_index(uint64_t v) {
    if (v < SUB) return (unsigned)v;
    unsigned msb = 63u - (unsigned)__builtin_clzll(v); /* >= SUB_BITS */
    unsigned shift = msb - LN_HIST_SUB_BITS;
    /* (v >> shift) is in [SUB, 2*SUB): its low bits pick the sub-bucket. */
    return (shift + 1) * SUB + (unsigned)((v >> shift) - SUB);
}

uint64_t ln__hist_upper(unsigned index) {
    if (index < SUB) return index;
    unsigned shift = index / SUB - 1;
    uint64_t sub = index % SUB + SUB;
    /* The largest v with (v >> shift) == sub. */
    return ((sub + 1) << shift) - 1;
}

/* Relaxed load+store: only the owning thread writes (see histogram.h). */
static inline void bump(_Atomic uint64_t *c, uint64_t by) {
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + by,
                          memory_order_relaxed);
}

void ln__hist_record(ln__hist *h, uint64_t ns) {
    bump(&h->buckets[ln__hist_index(ns)], 1);
    bump(&h->count, 1);
    bump(&h->sum_ns, ns);
    if (ns > atomic_load_explicit(&h->max_ns, memory_order_relaxed))
        atomic_store_explicit(&h->max_ns, ns, memory_order_relaxed);
}

void ln__hist_merge(ln__hist *dst, const ln__hist *src) {
    for (unsigned i = 0; i < LN_HIST_BUCKETS; i++) {
        uint64_t n = atomic_load_explicit(&src->buckets[i], memory_order_relaxed);
        if (n) bump(&dst->buckets[i], n);
    }
    bump(&dst->count, atomic_load_explicit(&src->count, memory_order_relaxed));
    bump(&dst->sum_ns, atomic_load_explicit(&src->sum_ns, memory_order_relaxed));
    uint64_t m = atomic_load_explicit(&src->max_ns, memory_order_relaxed);
    if (m > atomic_load_explicit(&dst->max_ns, memory_order_relaxed))
        atomic_store_explicit(&dst->max_ns, m, memory_order_relaxed);
}

static uint64_t percentile(const ln__hist *h, uint64_t total, double p) {
    uint64_t rank = (uint64_t)(p * (double)total + 0.999999);
    if (rank == 0) rank = 1;
    uint64_t seen = 0;
    for (unsigned i = 0; i < LN_HIST_BUCKETS; i++) {
        seen += atomic_load_explicit(&h->buckets[i], memory_order_relaxed);
        if (seen >= rank) return ln__hist_upper(i);
    }
    return atomic_load_explicit(&h->max_ns, memory_order_relaxed);
}

void ln__hist_summary(const ln__hist *h, ln_latency *out) {
    uint64_t total = 0;
    for (unsigned i = 0; i < LN_HIST_BUCKETS; i++)
        total += atomic_load_explicit(&h->buckets[i], memory_order_relaxed);
    out->count = total;
    out->max_ns = atomic_load_explicit(&h->max_ns, memory_order_relaxed);
    if (total == 0) {
        out->p50_ns = out->p90_ns = out->p99_ns = out->mean_ns = 0;
        return;
    }
    out->mean_ns = atomic_load_explicit(&h->sum_ns, memory_order_relaxed) / total;
    out->p50_ns = percentile(h, total, 0.50);
    out->p90_ns = percentile(h, total, 0.90);
    out->p99_ns = percentile(h, total, 0.99);
    /* A bucket's upper bound can exceed the true maximum: clamp. */
    if (out->p50_ns > out->max_ns) out->p50_ns = out->max_ns;
    if (out->p90_ns > out->max_ns) out->p90_ns = out->max_ns;
    if (out->p99_ns > out->max_ns) out->p99_ns = out->max_ns;
}
