/* group.c - task groups: wait for a batch of tasks without a handle each.
 *
 * DESIGN
 * The submitted count (group.h) is counted by the submitters before they
 * push (ln_group_submit*, in submit.c with the other submit paths).
 * Workers report finished tasks once per batch under the group mutex
 * (ln__group_finished), so 100,000 tasks cost about 100,000 / batch lock
 * round trips, not one atomic per task.
 *
 * A waiter wants finished == submitted, both read under the mutex: the
 * group's unfinished count is zero (so the wait covers tasks its tasks
 * added to it meanwhile; lanes.h, ln_group_wait, has the memory-order
 * argument). Waiters publish the count they wait for in 'wake_at' (the
 * smallest of them); a worker broadcasts only when finished reaches it,
 * then resets it, and every waiter still short registers again with the
 * count it reads now. The mutex is what makes the worker's update and the
 * waiter's check atomic with respect to each other, and the destroy path
 * takes it too, so a worker never touches a freed group: its last access
 * is the unlock of a report that destroy waits behind.
 *
 * A worker of the group's pool does not sleep in the wait: it runs queued
 * tasks of its own lane meanwhile (ln__help_wait, forkjoin.md); its checks
 * and naps use the same mutex and wake_at.
 */
#include "group.h"

#include "lane.h"
#include "task.h"
#include "thread_local.h"

#include <string.h>

int ln_group_create(ln_group **out, ln_pool *pool) {
    if (out == NULL || pool == NULL) return LN_EINVAL;
    ln_group *g = ln__calloc(1, sizeof *g);
    if (g == NULL) return LN_ENOMEM;
    if (pthread_mutex_init(&g->mu, NULL) != 0) {
        ln__free(g);
        return LN_ENOMEM;
    }
    if (ln__cond_init_monotonic(&g->cv) != 0) { /* helpers nap with a deadline */
        pthread_mutex_destroy(&g->mu);
        ln__free(g);
        return LN_ENOMEM;
    }
    g->pool = pool;
    g->creator = ln__self_id();
    atomic_init(&g->own, 0);
    atomic_init(&g->others, 0);
    atomic_init(&g->lanes, 0);
    g->wake_at = UINT64_MAX;
    *out = g;
    return 0;
}

static uint64_t submitted(ln_group *g) {
    /* relaxed: see DESIGN. */
    return atomic_load_explicit(&g->own, memory_order_relaxed) +
           atomic_load_explicit(&g->others, memory_order_relaxed);
}

/* Give back the count of submits that failed. A waiter that entered in
 * between took the inflated count as its target: wake it so it clamps its
 * target to the corrected count (see wait_for). */
void ln__group_uncount(ln_group *g, uint64_t n) {
    pthread_mutex_lock(&g->mu);
    ln__group_count(g, -(int64_t)n); /* under mu: a waiter rereads it there */
    if (g->wake_at != UINT64_MAX) {
        g->wake_at = UINT64_MAX;
        pthread_cond_broadcast(&g->cv);
    }
    pthread_mutex_unlock(&g->mu);
}

void ln__group_finished(ln_group *g, uint64_t n, uint64_t c) {
    if (n == 0) return;
    pthread_mutex_lock(&g->mu);
    g->finished += n;
    g->canceled += c;
    /* Submitters count before they push (ln_group_submit_ex). */
    LN_ASSERT(c <= n && g->finished <= submitted(g));
    if (g->finished >= g->wake_at) {
        g->wake_at = UINT64_MAX;
        pthread_cond_broadcast(&g->cv);
    }
    pthread_mutex_unlock(&g->mu);
}

/* The group's unfinished count is zero (mu held). submitted(g) read under
 * mu sees every count made before a report this thread has seen (lanes.h,
 * ln_group_wait); a failed submit's uncount runs under mu too. */
static int idle_locked(ln_group *g) {
    LN_ASSERT(g->finished <= submitted(g));
    return g->finished >= submitted(g);
}

/* Ask the next report that reaches the count now submitted to wake us. */
static void want_wake_locked(ln_group *g) {
    uint64_t target = submitted(g);
    if (target < g->wake_at) g->wake_at = target;
}

static int group_done(void *ctx) {
    ln_group *g = ctx;
    pthread_mutex_lock(&g->mu);
    int done = idle_locked(g);
    pthread_mutex_unlock(&g->mu);
    return done;
}

static void group_block(void *ctx, uint64_t until_ns) {
    ln_group *g = ctx;
    pthread_mutex_lock(&g->mu);
    if (!idle_locked(g)) {
        want_wake_locked(g);
        (void)ln__cond_timedwait_ns(&g->cv, &g->mu, until_ns);
    }
    pthread_mutex_unlock(&g->mu);
}

static int wait_for(ln_group *g) {
    int lane = ln__current_lane();
    uint64_t bit = (uint64_t)1 << (lane >= 0 && lane < 63 ? lane : 63);
    if (ln__current_pool() == g->pool && lane >= 0 &&
        (atomic_load_explicit(&g->lanes, memory_order_relaxed) & bit) != 0 && !group_done(g)) {
        /* A worker of the pool helps its lane when the group has work on
         * it; past the depth bound it runs only this group's tasks
         * (forkjoin.md). A group whose work is all on other lanes runs
         * there whatever this worker does: it blocks. */
        ln__waiter w = {group_done, group_block, g, ln__owner_group(g)};
        (void)ln__help_wait(&w, 0);
    }
    pthread_mutex_lock(&g->mu);
    while (!idle_locked(g)) {
        want_wake_locked(g);
        pthread_cond_wait(&g->cv, &g->mu);
    }
    int rc = g->canceled > 0 ? LN_ECANCELED : 0;
    pthread_mutex_unlock(&g->mu);
    return rc;
}

int ln_group_wait(ln_group *group) {
    if (group == NULL) return LN_EINVAL;
    return wait_for(group);
}

int ln_group_counts(const ln_group *group, uint64_t *submitted_out, uint64_t *finished) {
    if (group == NULL) return LN_EINVAL;
    ln_group *g = (ln_group *)group;
    pthread_mutex_lock(&g->mu);
    if (submitted_out) *submitted_out = submitted(g);
    if (finished) *finished = g->finished;
    pthread_mutex_unlock(&g->mu);
    return 0;
}

void ln_group_destroy(ln_group *group) {
    if (group == NULL) return;
    /* From a worker of the pool this helps (wait_for), so a task that
     * destroys its own group without waiting first does not block. */
    wait_for(group);
    pthread_cond_destroy(&group->cv);
    pthread_mutex_destroy(&group->mu);
    ln__free(group);
}
