/* spmc.c - the single-producer multi-consumer ring; see spmc.h. */
#include "spmc.h"

#include <sched.h>
#include <string.h>

#define MASK (LN_SPMC_SLOTS - 1)

void ln__spmc_init(ln__spmc *q) {
    atomic_init(&q->tail, 0);
    atomic_init(&q->head, 0);
    q->head_seen = 0;
    q->last_fn = NULL;
    q->last_owner = NULL;
    q->fn_since = q->owner_since = 0;
    memset(q->stamped, 0, sizeof q->stamped);
    for (size_t i = 0; i < LN_SPMC_SLOTS; i++) {
        atomic_init(&q->fn[i], NULL);
        atomic_init(&q->arg[i], NULL);
        atomic_init(&q->owner[i], NULL);
        atomic_init(&q->enq[i], 0);
    }
}

int ln__spmc_wait_room(ln__spmc *q, uint64_t max_idle_ns, uint64_t yield_after_ns) {
    size_t t = atomic_load_explicit(&q->tail, memory_order_relaxed); /* ours */
    size_t seen = q->head_seen;
    uint64_t since = ln__now_ns();
    for (unsigned k = 1;; k++) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
        if (ln__spmc_room(q, t) > 0) return 1;
        if (q->head_seen != seen) { /* progress, but not enough yet */
            seen = q->head_seen;
            since = ln__now_ns();
        } else if ((k & 63) == 0) {
            uint64_t idle = ln__now_ns() - since;
            if (idle >= max_idle_ns) return 0;
            if (idle >= yield_after_ns) sched_yield(); /* see spmc.h */
        }
    }
}

size_t ln__spmc_push_many(ln__spmc *q, ln_fn fn, void *const *args, void *owner, uint64_t enq_ns,
                          size_t n) {
    size_t t = atomic_load_explicit(&q->tail, memory_order_relaxed); /* ours */
    size_t k = ln__spmc_room(q, t);
    if (k > n) k = n;
    for (size_t i = 0; i < k; i++) ln__spmc_put(q, t + i, fn, args[i], owner, enq_ns);
    if (k > 0) atomic_store_explicit(&q->tail, t + k, memory_order_release); /* as in push */
    return k;
}

unsigned ln__spmc_pop(ln__spmc *q, ln_queue_item *out, unsigned max) {
    LN_ASSERT(max >= 1);
    size_t h = atomic_load_explicit(&q->head, memory_order_relaxed);
    for (;;) {
        /* acquire: pairs with the producer's release of tail, so the slots
         * before it hold their items for us. */
        size_t t = atomic_load_explicit(&q->tail, memory_order_acquire);
        size_t avail = t - h;
        if (avail == 0) return 0;
        unsigned n = avail < max ? (unsigned)avail : max;
        for (unsigned k = 0; k < n; k++) {
            size_t i = (h + k) & MASK;
            /* relaxed: valid once the claim below succeeds (spmc.h). */
            out[k].fn = atomic_load_explicit(&q->fn[i], memory_order_relaxed);
            out[k].arg = atomic_load_explicit(&q->arg[i], memory_order_relaxed);
            out[k].owner = atomic_load_explicit(&q->owner[i], memory_order_relaxed);
            out[k].enq_ns = atomic_load_explicit(&q->enq[i], memory_order_relaxed);
        }
        /* release on success: our reads above happen before the producer
         * (which acquires head) overwrites these slots. On failure h gets
         * the current head and we copy again. */
        if (atomic_compare_exchange_weak_explicit(&q->head, &h, h + n, memory_order_release,
                                                  memory_order_relaxed))
            return n;
    }
}

size_t ln__spmc_size(ln__spmc *q) {
    /* relaxed: a statistic; head first so the difference is never negative
     * (tail only grows, and head never passes it). */
    size_t head = atomic_load_explicit(&q->head, memory_order_relaxed);
    size_t tail = atomic_load_explicit(&q->tail, memory_order_relaxed);
    return tail - head;
}

size_t ln__spmc_pushed(ln__spmc *q) {
    /* acquire: callers compare it with the consumers' finished count. */
    return atomic_load_explicit(&q->tail, memory_order_acquire);
}

int ln__spmc_peek(ln__spmc *q) {
    /* relaxed: a hint to stop spinning; the pop that follows is exact. */
    return atomic_load_explicit(&q->head, memory_order_relaxed) !=
           atomic_load_explicit(&q->tail, memory_order_relaxed);
}

int ln__spmc_ready(ln__spmc *q) {
    /* seq_cst: as ln__mpmc_ready (the symmetric form of barrier.h). */
    return atomic_load_explicit(&q->head, memory_order_seq_cst) !=
           atomic_load_explicit(&q->tail, memory_order_seq_cst);
}
