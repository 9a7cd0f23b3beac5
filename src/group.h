/* group.h - a task group's struct and its submit counter, shared by
 * group.c (create, wait, destroy, the workers' reports) and submit.c
 * (ln_group_submit*, which count before they push). Not API.
 *
 * The submitted count is two atomics: 'own', written only by the thread
 * that created the group (a plain load and store, no read-modify-write:
 * the common "one thread submits 100,000 tasks" case pays no locked
 * instruction for counting), and 'others', which any other submitting
 * thread increments. Both relaxed: ordering with the wait comes from the
 * caller, who calls ln_group_wait after its submits return.
 */
#ifndef LN_GROUP_H
#define LN_GROUP_H

#include "internal.h"
#include "thread_local.h"

#include <pthread.h>
#include <stdatomic.h>

struct ln_group {
    ln_pool *pool;
    uint64_t creator;        /* ln__self_id of the creating thread */
    _Atomic uint64_t own;    /* submitted by the creator (its only writer) */
    _Atomic uint64_t others; /* submitted by any other thread */
    _Atomic uint64_t lanes;  /* bit l: a task was submitted to lane l
                                (bit 63: to lane 63 or above) */
    /* Padding, not _Alignas: the allocator hook promises only malloc's
     * alignment. It keeps submitters' and workers' cache lines apart. */
    char pad_[LN_CACHE_LINE];
    pthread_mutex_t mu; /* taken by workers once per batch */
    pthread_cond_t cv;
    uint64_t finished; /* ran or canceled; under mu */
    uint64_t canceled; /* under mu */
    uint64_t wake_at;  /* smallest target of a waiter, UINT64_MAX if none */
};

_Static_assert(LN_LINES_APART(struct ln_group, others, mu),
               "a group's submit counters share a line with its mutex");

/* Count n submits by the calling thread (negative: give them back). */
static inline void ln__group_count(ln_group *g, int64_t n) {
    if (ln__self_id() == g->creator) {
        /* relaxed load and store: this thread is the only writer. */
        uint64_t v = atomic_load_explicit(&g->own, memory_order_relaxed);
        atomic_store_explicit(&g->own, v + (uint64_t)n, memory_order_relaxed);
    } else {
        atomic_fetch_add_explicit(&g->others, (uint64_t)n, memory_order_relaxed);
    }
}

/* Note that g has work on lane (ln_group_wait helps only then). */
static inline void ln__group_lane(ln_group *g, int lane) {
    uint64_t bit = (uint64_t)1 << (lane < 63 ? lane : 63);
    if ((atomic_load_explicit(&g->lanes, memory_order_relaxed) & bit) == 0)
        atomic_fetch_or_explicit(&g->lanes, bit, memory_order_relaxed);
}

/* Give back n counted submits that failed (takes the group's mutex). */
void ln__group_uncount(ln_group *g, uint64_t n);

/* Report n tasks of g finished, c of them canceled (one lock per batch). */
void ln__group_finished(ln_group *g, uint64_t n, uint64_t c);

#endif
