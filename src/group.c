/* group.c - task groups: wait for a batch of tasks without a handle each.
 *
 * DESIGN
 * The submitted count (group.h) is counted by the submitters before they
 * push (ln_group_submit*, in submit.c with the other submit paths).
 * Workers report finished tasks once per batch under the group mutex
 * (ln__group_finished), so 100,000 tasks cost about 100,000 / batch lock
 * round trips, not one atomic per task.
 *
 * A waiter wants finished >= the submitted count it saw on entry. Waiters
 * publish the smallest such target in 'wake_at'; a worker broadcasts only
 * when finished reaches it, then resets it, and every waiter still short of
 * its own target registers again. The mutex is what makes the worker's
 * update and the waiter's check atomic with respect to each other, and the
 * destroy path takes it too, so a worker never touches a freed group: its
 * last access is the unlock of a report that destroy waits behind.
 */
#include "group.h"

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
    if (pthread_cond_init(&g->cv, NULL) != 0) {
        pthread_mutex_destroy(&g->mu);
        ln__free(g);
        return LN_ENOMEM;
    }
    g->pool = pool;
    g->creator = ln__self_id();
    atomic_init(&g->own, 0);
    atomic_init(&g->others, 0);
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

static int wait_for(ln_group *g) {
    uint64_t target = submitted(g);
    pthread_mutex_lock(&g->mu);
    for (;;) {
        /* A failed submit may have lowered the count since we read it
         * (uncount runs under mu, so this read is current). */
        uint64_t now = submitted(g);
        if (now < target) target = now;
        if (g->finished >= target) break;
        if (target < g->wake_at) g->wake_at = target;
        pthread_cond_wait(&g->cv, &g->mu);
    }
    int rc = g->canceled > 0 ? LN_ECANCELED : 0;
    pthread_mutex_unlock(&g->mu);
    return rc;
}

int ln_group_wait(ln_group *group) {
    if (group == NULL) return LN_EINVAL;
    if (ln__current_pool() == group->pool) return LN_EBUSY;
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
    /* From a worker of the pool we cannot wait (it could be for ourselves);
     * the caller then must have waited already -- check and trust. */
    wait_for(group);
    pthread_cond_destroy(&group->cv);
    pthread_mutex_destroy(&group->mu);
    ln__free(group);
}
