/* barrier.h - an asymmetric full barrier: a free one for the hot side (a
 * submitter, after publishing an item) and a costly one for the rare side
 * (a worker, before its last look before sleeping).
 *
 * DESIGN
 * The no-lost-wake-up protocol of a lane is a Dekker pattern:
 *     submitter: publish item;      [full barrier]; read the sleeper count
 *     worker:    sleepers += 1;     [full barrier]; look for items
 * so that one side sees the other. Invariant: ln__barrier_light on one side
 * and ln__barrier_heavy on the other together act as a full barrier pair.
 * Three forms, chosen once by ln__barrier_init: membarrier(2) on the heavy
 * side and a compiler barrier on the light one; seq_cst fences on both
 * (no membarrier, or LANES_NO_MEMBARRIER=1); a seq_cst RMW of one shared
 * word on both (TSan builds, which see neither). Why each is enough:
 * docs/internals/wakeup.md.
 *
 * ln__barrier_init must have returned before either barrier is used; pool
 * creation calls it, and every thread that submits got the pool from a
 * thread that created it, which orders the flag's one write before them.
 */
#ifndef LN_BARRIER_H
#define LN_BARRIER_H

#include <stdatomic.h>

#if defined(__SANITIZE_THREAD__)
#define LN_BARRIER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define LN_BARRIER_TSAN 1
#endif
#endif

/* The word both sides update in TSan builds (see DESIGN). */
extern _Atomic unsigned ln__barrier_word;

/* 1 when the heavy side uses membarrier (set once by ln__barrier_init). */
extern int ln__barrier_asymmetric;

/* Idempotent, thread-safe (pthread_once). LANES_NO_MEMBARRIER=1 in the
 * environment forces the symmetric form (for tests and comparisons). */
void ln__barrier_init(void);

/* The hot side. */
static inline void ln__barrier_light(void) {
#if defined(LN_BARRIER_TSAN)
    atomic_fetch_add_explicit(&ln__barrier_word, 0, memory_order_seq_cst);
#else
    if (ln__barrier_asymmetric)
        atomic_signal_fence(memory_order_seq_cst); /* compiler only */
    else
        atomic_thread_fence(memory_order_seq_cst);
#endif
}

/* The rare side: a membarrier system call, or a seq_cst fence. */
void ln__barrier_heavy(void);

#endif
