/* barrier.h - an asymmetric full barrier: a free one for the hot side (a
 * submitter, after publishing an item) and a costly one for the rare side
 * (a worker, before its last look before sleeping).
 *
 * DESIGN
 * The no-lost-wake-up protocol of a lane is a Dekker pattern:
 *     submitter: publish item;      [full barrier]; read the sleeper count
 *     worker:    sleepers += 1;     [full barrier]; look for items
 * Each side needs a StoreLoad barrier, which costs a locked instruction or
 * an mfence on x86 -- on every submit. Linux's membarrier(2) with
 * MEMBARRIER_CMD_PRIVATE_EXPEDITED makes every running thread of the
 * process execute a full barrier before it returns, so the worker side can
 * pay for both: the submitter then needs only a compiler barrier. Whatever
 * point of the submitter's instruction stream the forced barrier lands on,
 * either the submitter's publication is visible to the worker's look
 * (barrier after the publication) or the submitter's read comes after the
 * barrier and sees the worker's increment (barrier before the read).
 *
 * Where membarrier is not available (not Linux, too old, or filtered by a
 * seccomp profile) both sides use a seq_cst fence, the symmetric form of
 * the same protocol (C11 fence rule: of two seq_cst fences one precedes
 * the other in the total order S, and the load after the later one sees
 * the store before the earlier one). ThreadSanitizer sees neither
 * membarrier nor fences, so TSan builds use a seq_cst read-modify-write of
 * one shared word on both sides instead: RMWs of one location are totally
 * ordered and each reads from the one before, so whichever side comes
 * second synchronizes with the first and sees what it wrote before.
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
