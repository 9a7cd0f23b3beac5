/* group.c - task groups: wait for a batch of tasks without a handle each.
 *
 * DESIGN
 * The submitted count is two atomics: 'own', written only by the thread
 * that created the group (a plain load and store, no read-modify-write:
 * the common "one thread submits 100,000 tasks" case pays no locked
 * instruction for counting), and 'others', which any other submitting
 * thread increments. Both relaxed: ordering with the wait comes from the
 * caller, who calls ln_group_wait after its submits return. Workers report
 * finished tasks once per batch
 * under the group mutex (ln__group_finished), so 100,000 tasks cost about
 * 100,000 / batch lock round trips, not one atomic per task.
 *
 * A waiter wants finished >= the submitted count it saw on entry. Waiters
 * publish the smallest such target in 'wake_at'; a worker broadcasts only
 * when finished reaches it, then resets it, and every waiter still short of
 * its own target registers again. The mutex is what makes the worker's
 * update and the waiter's check atomic with respect to each other, and the
 * destroy path takes it too, so a worker never touches a freed group: its
 * last access is the unlock of a report that destroy waits behind.
 */
#include "submit.h"
#include "task.h"
#include "thread_local.h"

#include <string.h>

struct ln_group {
    ln_pool *pool;
    uint64_t creator;       /* ln__self_id of the creating thread */
    _Atomic uint64_t own;    /* submitted by the creator (its only writer) */
    _Atomic uint64_t others; /* submitted by any other thread */
    /* Padding, not _Alignas: the allocator hook promises only malloc's
     * alignment. It keeps submitters' and workers' cache lines apart. */
    char pad_[LN_CACHE_LINE];
    pthread_mutex_t mu;         /* taken by workers once per batch */
    pthread_cond_t cv;
    uint64_t finished; /* ran or canceled; under mu */
    uint64_t canceled; /* under mu */
    uint64_t wake_at;  /* smallest target of a waiter, UINT64_MAX if none */
};

_Static_assert(LN_LINES_APART(struct ln_group, others, mu),
               "a group's submit counters share a line with its mutex");

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

/* Count n submits by the calling thread (negative: give them back). */
static inline void count(ln_group *g, int64_t n) {
    if (ln__self_id() == g->creator) {
        /* relaxed load and store: this thread is the only writer. */
        uint64_t v = atomic_load_explicit(&g->own, memory_order_relaxed);
        atomic_store_explicit(&g->own, v + (uint64_t)n, memory_order_relaxed);
    } else {
        atomic_fetch_add_explicit(&g->others, (uint64_t)n, memory_order_relaxed);
    }
}

static uint64_t submitted(ln_group *g) {
    /* relaxed: see DESIGN. */
    return atomic_load_explicit(&g->own, memory_order_relaxed) +
           atomic_load_explicit(&g->others, memory_order_relaxed);
}

/* Give back the count of submits that failed. A waiter that entered in
 * between took the inflated count as its target: wake it so it clamps its
 * target to the corrected count (see wait_for). */
static void uncount(ln_group *g, uint64_t n) {
    pthread_mutex_lock(&g->mu);
    count(g, -(int64_t)n); /* under mu: a waiter rereads it there */
    if (g->wake_at != UINT64_MAX) {
        g->wake_at = UINT64_MAX;
        pthread_cond_broadcast(&g->cv);
    }
    pthread_mutex_unlock(&g->mu);
}

int ln_group_submit_ex(ln_group *group, int lane, ln_fn fn, void *arg, unsigned flags) {
    if (group == NULL || fn == NULL || flags > LN_SUBMIT_WAIT) return LN_EINVAL;
    ln_pool *pool = group->pool;
    if (lane < 0 || (unsigned)lane >= pool->nlanes) return LN_EINVAL;
    /* Count first: a worker may finish the task before submit returns, and
     * finished must never overtake submitted. relaxed: see DESIGN. */
    count(group, 1);
    if (ln__submit_owned(pool, lane, fn, arg, ln__owner_group(group))) return 0;
    int rc = ln__submit_item(pool, lane, fn, arg, ln__owner_group(group), flags);
    if (rc != 0) uncount(group, 1);
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
     * back what was not accepted. relaxed: see DESIGN. */
    count(group, (int64_t)n);
    size_t done = 0;
    int rc = ln__submit_batch(pool, lane, fn, args, n, ln__owner_group(group),
                                   LN_SUBMIT_DEFAULT, &done);
    if (done < n) uncount(group, n - done);
    if (queued != NULL) *queued = done;
    return rc;
}

int ln_group_submit(ln_group *group, int lane, ln_fn fn, void *arg) {
    return ln_group_submit_ex(group, lane, fn, arg, LN_SUBMIT_DEFAULT);
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
