/* task.c - futures: a task handle that can be waited on, canceled before
 * it starts, and released.
 *
 * DESIGN
 * A task's life is one atomic state: QUEUED -> RUNNING -> DONE, or
 * QUEUED -> CANCELED. The two ways out of QUEUED are compare-and-swaps, so
 * a worker starting it and a thread canceling it cannot both win: that is
 * what makes "finished or canceled exactly once" hold for every task.
 *
 * Waiting uses the task's own mutex and condition variable, but only when
 * the task is not final yet: the final state is published with a release
 * store and read with an acquire load, so a waiter that sees DONE also sees
 * the result written before it. Whoever makes the state final does so under
 * the task mutex when waiters may exist, so no wake-up is lost.
 *
 * A canceled task may still sit in its lane's queue (O(1) cancel leaves a
 * tombstone); the worker that reaches it drops it. References keep the
 * struct alive for the queue, the handle and a pending completion.
 */
#include "task.h"

#include "lane.h"
#include "thread_local.h"

#include <errno.h>

/* An ln_submit_cb task's completion, on the loop thread: call done, then
 * drop the list's reference. */
static void run_completion(ln__completion *c) {
    ln_task *t = (ln_task *)(void *)((char *)c - offsetof(ln_task, comp));
    t->done(t->done_arg, t->done_status == 0 ? t->result : NULL, t->done_status);
    ln__task_unref(t);
}

ln_task *ln__task_new(ln_pool *pool, int lane, ln_complete_fn done, void *done_arg) {
    ln_task *t = ln__calloc(1, sizeof *t);
    if (t == NULL) return NULL;
    if (pthread_mutex_init(&t->mu, NULL) != 0) {
        ln__free(t);
        return NULL;
    }
    if (ln__cond_init_monotonic(&t->cv) != 0) {
        pthread_mutex_destroy(&t->mu);
        ln__free(t);
        return NULL;
    }
    atomic_init(&t->state, LN_TASK_QUEUED);
    atomic_init(&t->refs, 2); /* the queue's and the handle's */
    t->pool = pool;
    t->lane = lane;
    t->done = done;
    t->done_arg = done_arg;
    t->comp.run = run_completion;
    return t;
}

void ln__task_unref(ln_task *t) {
    /* acq_rel: the last owner must see every write the others made to the
     * task before it frees it (release by each, acquire by the last). */
    int old = atomic_fetch_sub_explicit(&t->refs, 1, memory_order_acq_rel);
    LN_ASSERT(old >= 1);
    if (old != 1) return;
    pthread_cond_destroy(&t->cv);
    pthread_mutex_destroy(&t->mu);
    ln__free(t);
}

int ln__task_start(ln_task *t) {
    int expected = LN_TASK_QUEUED;
    /* acquire on success: pairs with nothing user-visible yet, but keeps the
     * run after the claim; relaxed on failure (canceled, nothing to read). */
    return atomic_compare_exchange_strong_explicit(&t->state, &expected, LN_TASK_RUNNING,
                                                   memory_order_acquire, memory_order_relaxed);
}

/* Publish a final state, wake waiters, queue the completion if any.
 * Called with t->mu held: a canceller that wins the CAS finishes posting
 * before anyone who lost to it (a worker, destroy's purge) can take t->mu
 * and go on to drop the queue's reference -- and destroy frees the pool
 * only after those. Lock order: t->mu -> pool->comp_mu. */
static void finalize_locked(ln_task *t, int state) {
    /* release: the result (and the task function's writes) happen-before any
     * thread that acquires the final state. */
    atomic_store_explicit(&t->state, state, memory_order_release);
    if (t->waiters > 0) pthread_cond_broadcast(&t->cv);
    if (t->done != NULL) {
        t->done_status = state == LN_TASK_DONE ? 0 : LN_ECANCELED;
        atomic_fetch_add_explicit(&t->refs, 1, memory_order_relaxed); /* the list's */
        ln__completion_post(t->pool, &t->comp);
    }
}

void ln__task_finish(ln_task *t, void *result) {
    pthread_mutex_lock(&t->mu);
    /* Only the worker that won ln__task_start finishes it. */
    LN_ASSERT(atomic_load_explicit(&t->state, memory_order_relaxed) == LN_TASK_RUNNING);
    t->result = result; /* published by finalize_locked's release store */
    finalize_locked(t, LN_TASK_DONE);
    pthread_mutex_unlock(&t->mu);
}

int ln__task_cancel_queued(ln_task *t) {
    int expected = LN_TASK_QUEUED;
    pthread_mutex_lock(&t->mu);
    /* relaxed: winning publishes nothing by itself (finalize_locked
     * releases); losing under t->mu means a winning canceller is done. */
    if (!atomic_compare_exchange_strong_explicit(&t->state, &expected, LN_TASK_CANCELED,
                                                 memory_order_relaxed, memory_order_relaxed)) {
        pthread_mutex_unlock(&t->mu);
        return 0;
    }
    finalize_locked(t, LN_TASK_CANCELED);
    pthread_mutex_unlock(&t->mu);
    return 1;
}

void ln__task_sync(ln_task *t) {
    pthread_mutex_lock(&t->mu);
    pthread_mutex_unlock(&t->mu);
}

int ln_task_cancel(ln_task *task) {
    if (task == NULL) return LN_EINVAL;
    if (ln__task_cancel_queued(task)) return 0;
    int s = atomic_load_explicit(&task->state, memory_order_acquire);
    return s == LN_TASK_CANCELED ? 0 : LN_EBUSY;
}

int ln_task_done(const ln_task *task) { /* 1, 0, or LN_EINVAL */
    if (task == NULL) return LN_EINVAL;
    int s = atomic_load_explicit(&((ln_task *)task)->state, memory_order_acquire);
    return s == LN_TASK_DONE || s == LN_TASK_CANCELED;
}

static int result_of(ln_task *t, int s, void **result) {
    if (s == LN_TASK_CANCELED) return LN_ECANCELED;
    if (result != NULL) *result = t->result;
    return 0;
}

static int task_final(void *ctx) {
    return ln_task_done(ctx) == 1;
}

/* A helping waiter's nap (ln__help_wait): until the task is final or
 * until_ns. */
static void task_block(void *ctx, uint64_t until_ns) {
    ln_task *t = ctx;
    pthread_mutex_lock(&t->mu);
    t->waiters++;
    if (!task_final(t)) (void)ln__cond_timedwait_ns(&t->cv, &t->mu, until_ns);
    t->waiters--;
    pthread_mutex_unlock(&t->mu);
}

static int wait_until(ln_task *t, uint64_t deadline_ns, void **result) {
    if (t == NULL) return LN_EINVAL;
    int s = atomic_load_explicit(&t->state, memory_order_acquire);
    if (s == LN_TASK_DONE || s == LN_TASK_CANCELED) return result_of(t, s, result);
    if (ln__current_pool() == t->pool && ln__current_lane() == t->lane) {
        /* A worker of the pool runs its lane's queued tasks meanwhile, so a
         * task waiting for one queued behind it on its own lane cannot
         * deadlock (forkjoin.md); past the depth bound it only naps. A task
         * of another lane runs there whatever this worker does: it blocks,
         * so no unrelated task runs under the locks its caller holds. */
        ln__waiter w = {task_final, task_block, t, NULL};
        if (ln__help_wait(&w, deadline_ns) == LN_ETIMEDOUT) return LN_ETIMEDOUT;
        s = atomic_load_explicit(&t->state, memory_order_acquire);
        return result_of(t, s, result);
    }
    pthread_mutex_lock(&t->mu);
    t->waiters++;
    for (;;) {
        s = atomic_load_explicit(&t->state, memory_order_acquire);
        if (s == LN_TASK_DONE || s == LN_TASK_CANCELED) break;
        if (deadline_ns == 0) {
            pthread_cond_wait(&t->cv, &t->mu);
        } else if (ln__cond_timedwait_ns(&t->cv, &t->mu, deadline_ns) == ETIMEDOUT) {
            s = atomic_load_explicit(&t->state, memory_order_acquire);
            if (s != LN_TASK_DONE && s != LN_TASK_CANCELED) {
                t->waiters--;
                pthread_mutex_unlock(&t->mu);
                return LN_ETIMEDOUT;
            }
            break;
        }
    }
    t->waiters--;
    pthread_mutex_unlock(&t->mu);
    return result_of(t, s, result);
}

int ln_task_wait(ln_task *task, void **result) {
    return wait_until(task, 0, result);
}

int ln_task_wait_for(ln_task *task, unsigned timeout_ms, void **result) {
    if (task == NULL) return LN_EINVAL;
    return wait_until(task, ln__now_ns() + (uint64_t)timeout_ms * 1000000u + 1, result);
}

void ln_task_release(ln_task *task) {
    if (task != NULL) ln__task_unref(task);
}
