/* group_submit.c - ln_group_submit*: count the group's submits (group.h),
 * then take the submit paths of submit.c. In a file of their own: in
 * submit.c the compiler's choices for the whole file cost the owner's
 * inline push ~4 ns per task (bench_pool, group path, 1 thread). */
#include "group.h"
#include "submit.h"
#include "task.h"

/* ---- group submits ------------------------------------------------------- */

int ln_group_submit_ex(ln_group *group, int lane, ln_fn fn, void *arg, unsigned flags) {
    if (group == NULL || fn == NULL || flags > LN_SUBMIT_WAIT) return LN_EINVAL;
    ln_pool *pool = group->pool;
    if (lane < 0 || (unsigned)lane >= pool->nlanes) return LN_EINVAL;
    /* Count first: a worker may finish the task before submit returns, and
     * finished must never overtake submitted. relaxed: see group.h. */
    ln__group_count(group, 1);
    ln__group_lane(group, lane);
    /* A worker submitting to its own fixed lane: its fork-join deque
     * (deque.h), newest first for it, oldest first for thieves. */
    if (ln__tl_worker != NULL && ln__lane_push_local(pool, lane, fn, arg, ln__owner_group(group)))
        return 0;
    if (ln__submit_owned(pool, lane, fn, arg, ln__owner_group(group))) return 0;
    int rc = ln__submit_item(pool, lane, fn, arg, ln__owner_group(group), flags);
    if (rc != 0) ln__group_uncount(group, 1);
    return rc;
}

int ln_group_submit_batch(ln_group *group, int lane, ln_fn fn, void *const *args, size_t n,
                          size_t *queued) {
    if (queued != NULL) *queued = 0;
    if (group == NULL || fn == NULL || (args == NULL && n > 0)) return LN_EINVAL;
    ln_pool *pool = group->pool;
    if (lane < 0 || (unsigned)lane >= pool->nlanes) return LN_EINVAL;
    if (n == 0) return 0;
    /* Count all first (finished must never overtake submitted), then give
     * back what was not accepted. relaxed: see group.h. */
    ln__group_count(group, (int64_t)n);
    ln__group_lane(group, lane);
    size_t done = 0;
    int rc =
        ln__submit_batch(pool, lane, fn, args, n, ln__owner_group(group), LN_SUBMIT_DEFAULT, &done);
    if (done < n) ln__group_uncount(group, n - done);
    if (queued != NULL) *queued = done;
    return rc;
}

int ln_group_submit(ln_group *group, int lane, ln_fn fn, void *arg) {
    return ln_group_submit_ex(group, lane, fn, arg, LN_SUBMIT_DEFAULT);
}
