/* submit.h - the submit paths behind ln_submit*, ln_group_submit* and
 * ln_submit_cb (submit.c), and their inline fast path: the lane's owner
 * pushing into its own ring. Not API. */
#ifndef LN_SUBMIT_H
#define LN_SUBMIT_H

#include "internal.h"
#include "lane.h"
#include "pool.h"
#include "thread_local.h"

#include <stdatomic.h>

/* Queue one item (fn, arg, owner) on lane: the one submit path behind
 * ln_submit*, ln_group_submit* and ln_submit_cb. Arguments already checked.
 * 0, LN_EAGAIN, LN_ESHUTDOWN, LN_ENOMEM. */
int ln__submit_item(ln_pool *pool, int lane, ln_fn fn, void *arg, void *owner, unsigned flags);

/* Queue n items (fn, args[i], owner) on lane; *queued gets how many were
 * accepted (in order, from args[0]) before an error. 0 when all were. */
int ln__submit_batch(ln_pool *pool, int lane, ln_fn fn, void *const *args, size_t n, void *owner,
                     unsigned flags, size_t *queued);

/* The enqueue timestamp of an item about to be submitted on l: a clock
 * read for the items that are timed (sample_mask, lane.h), else 0 ("not
 * timed": CLOCK_MONOTONIC is never 0 on a running system). */
static inline uint64_t ln__enq_stamp(const ln_pool *pool, ln__lane *l) {
    if (pool->timing == LN_TIMING_OFF) return 0;
    /* relaxed: sampling hints (see sample_mask). A deep backlog samples
     * too: its items will wait long anyway, and a worker held up (the
     * case that builds one) has not run batches to set the mask yet. */
    unsigned mask = atomic_load_explicit(&l->sample_mask, memory_order_relaxed);
    if (pool->timing == LN_TIMING_SAMPLED &&
        atomic_load_explicit(&l->hint, memory_order_relaxed) >= 64)
        mask = LN_SAMPLE_MASK;
    if ((ln__tl_submits++ & mask) != 0) return 0;
    return ln__now_ns();
}

/* The common case of ln__submit_item, inline for its callers: the
 * lane's owner thread pushing into its own ring. 1 if the item is queued;
 * 0 if the caller must take ln__submit_item (not a fixed lane, not
 * its owner yet, a backlog, stopping, or the ring full). relaxed loads:
 * the same hints as in ln__submit_item. */
static inline int ln__submit_owned(ln_pool *pool, int lane, ln_fn fn, void *arg, void *owner) {
    ln__lane *l = &pool->lanes[lane];
    if (l->owned == NULL ||
        atomic_load_explicit(&l->owner, memory_order_relaxed) != ln__self_id() ||
        atomic_load_explicit(&l->hint, memory_order_relaxed) != 0 ||
        atomic_load_explicit(&l->stop_hint, memory_order_relaxed))
        return 0;
    ln_queue_item it = {fn, arg, owner, ln__enq_stamp(pool, l)};
    if (!ln__spmc_push(l->owned, &it)) return 0;
    l->policy.gave_up = 0; /* no backlog now (submit.c, lockfree_ok) */
    ln__lane_after_lockfree_push(l);
    return 1;
}

#endif
