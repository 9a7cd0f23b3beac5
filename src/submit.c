/* submit.c - the submit paths (ln_submit, ln_submit_ex, ln_submit_cb,
 * and the item and batch paths behind them and ln_group_submit*, which
 * are in group_submit.c) and the owner-ring submit policy.
 *
 * DESIGN
 * A fixed lane (lane.h) takes submits without its mutex: the lane's owner
 * thread pushes into its own single-producer ring, every other thread into
 * the shared MPMC ring, then one read of the sleeper count decides whether
 * to wake anyone. Other lanes, and fixed lanes with a backlog, take the
 * lane's mutex once: push into the queue, count, wake or grow
 * (ln__lane_queued_locked).
 *
 * The owner's policy: when its ring is full, or a backlog exists, the owner
 * waits a bounded time for the workers to make room (owned_wait_room) or
 * to drain the backlog (owned_wait_backlog) rather than push into the
 * backlog under the mutex; after one wait without progress it joins the
 * backlog until that is empty (policy.gave_up). The reasons for the
 * patience and the yield threshold are in docs/internals/wakeup.md.
 */
#include "submit.h"

#include "group.h"
#include "task.h"

#include <sched.h>

/* The owner's patience: how long it waits for room in its full ring, or
 * for the backlog to drain, while no worker takes anything, before it
 * joins the backlog: short while a worker is inside a batch (a long task
 * may hold it), longer while none is (they sleep or were preempted and
 * will be back). wakeup.md, "the owner's waits", says why. */
#define LN_ROOM_WAIT_NS 200000u
#define LN_ROOM_WAKE_NS 3000000u
/* After this long without progress a waiting owner yields the CPU every 64
 * pauses: the worker it waits for may be waiting for this very CPU. Both
 * of the owner's waits use it (the ring's through ln__spmc_wait_room). */
#define LN_OWNER_YIELD_NS 20000u

/* The patience above for lane l now. relaxed: a hint; the cost of a wrong
 * guess is a backlog. */
static uint64_t owner_patience(ln__lane *l) {
    return atomic_load_explicit(&l->nbusy, memory_order_relaxed) > 0 ? LN_ROOM_WAIT_NS
                                                                     : LN_ROOM_WAKE_NS;
}

/* The lane has a backlog (hint > 0). Its owner may have items in it, so
 * it cannot use its ring again until the backlog is empty; instead of
 * joining it, the owner waits while the workers drain it (hint falling),
 * with the patience of owned_wait_room (wakeup.md). 1 when the backlog is
 * empty: the ring may be used. Other threads (and the owner, after a wait
 * without progress) join the backlog. */
static int owned_wait_backlog(ln__lane *l) {
    if (l->owned == NULL || atomic_load_explicit(&l->owner, memory_order_relaxed) != ln__self_id())
        return 0;
    /* relaxed loads: hints; the backlog's state is decided under mu. */
    size_t last = atomic_load_explicit(&l->hint, memory_order_relaxed);
    if (l->policy.gave_up) { /* waited in vain once: join until it drains */
        if (last != 0) return 0;
        l->policy.gave_up = 0;
        return 1;
    }
    uint64_t since = ln__now_ns();
    for (unsigned k = 1;; k++) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
        size_t h = atomic_load_explicit(&l->hint, memory_order_relaxed);
        if (h == 0) return 1;
        if (atomic_load_explicit(&l->stop_hint, memory_order_relaxed)) return 0;
        if (h < last) { /* progress */
            last = h;
            since = ln__now_ns();
        } else if ((k & 63) == 0) {
            uint64_t idle = ln__now_ns() - since;
            if (idle >= owner_patience(l)) {
                l->policy.gave_up = 1;
                return 0;
            }
            if (idle >= LN_OWNER_YIELD_NS) sched_yield();
        }
    }
}

/* May a submit to l use the lock-free rings? Only on a fixed lane that is
 * not stopping and has no backlog (then the item must join the backlog,
 * behind the older ones) -- except that its owner waits for the backlog
 * to drain (owned_wait_backlog). relaxed loads: hints, see lane.h; a stale
 * 0 backlog only reorders concurrent submits, which have no order anyway. */
static int lockfree_ok(ln__lane *l) {
    if (l->ring == NULL || atomic_load_explicit(&l->stop_hint, memory_order_relaxed)) return 0;
    if (atomic_load_explicit(&l->hint, memory_order_relaxed) != 0) return owned_wait_backlog(l);
    if (atomic_load_explicit(&l->owner, memory_order_relaxed) == ln__self_id())
        l->policy.gave_up = 0; /* no backlog: the owner may wait again */
    return 1;
}

static int owned_wait_room(ln__lane *l, ln__spmc *mine) {
    for (uint64_t waited = 0;; waited += LN_ROOM_WAIT_NS) {
        if (ln__spmc_wait_room(mine, LN_ROOM_WAIT_NS, LN_OWNER_YIELD_NS)) return 1;
        if (waited + LN_ROOM_WAIT_NS >= owner_patience(l)) {
            l->policy.gave_up = 1; /* the item goes to the backlog */
            return 0;
        }
    }
}

/* The calling thread's ring on fixed lane l: 'owned' if it owns the lane
 * (claiming it if nobody has), else NULL (use 'ring'). */
static ln__spmc *owned_ring(ln__lane *l) {
    uint64_t me = ln__self_id();
    /* relaxed: see 'owner' in lane.h. */
    uint64_t cur = atomic_load_explicit(&l->owner, memory_order_relaxed);
    if (cur == me) return l->owned;
    if (cur == 0 && atomic_compare_exchange_strong_explicit(
                        &l->owner, &cur, me, memory_order_relaxed, memory_order_relaxed))
        return l->owned;
    return NULL;
}

int ln__submit_item(ln_pool *pool, int lane, ln_fn fn, void *arg, void *owner, unsigned flags) {
    LN_ASSERT(lane >= 0 && (unsigned)lane < pool->nlanes); /* checked by the callers */
    ln__lane *l = &pool->lanes[lane];
    /* Stamp outside the lock: the wait histogram measures queue time. */
    ln_queue_item it = {fn, arg, owner, ln__enq_stamp(pool, l)};

    /* Fixed lanes: lock-free, unless a backlog exists or the ring is full
     * (lockfree_ok, owned_wait_room). */
    if (lockfree_ok(l)) {
        ln__spmc *mine = owned_ring(l);
        /* A full owned ring whose consumer is busy taking batches has room
         * again within a batch: wait for it (owned_wait_room) rather than
         * start a backlog, which would move every later submit and take
         * under the lane's mutex. */
        if (mine != NULL
                ? ln__spmc_push(mine, &it) || (owned_wait_room(l, mine) && ln__spmc_push(mine, &it))
                : ln__mpmc_push(l->ring, &it)) {
            ln__lane_after_lockfree_push(l);
            return 0;
        }
    }

    pthread_mutex_lock(&l->mu);
    if (l->stopping) goto shutdown;
    if (l->max_queue != 0) {
        while (l->qops->size(l->q) >= l->max_queue) {
            int block = flags == LN_SUBMIT_WAIT ||
                        (flags == LN_SUBMIT_DEFAULT && pool->when_full == LN_FULL_BLOCK);
            /* A worker blocking on its own full lane could wait forever
             * (every worker might do the same): it gets LN_EAGAIN. */
            if (!block || (ln__current_pool() == pool && ln__current_lane() == lane)) {
                pthread_mutex_unlock(&l->mu);
                return LN_EAGAIN;
            }
            l->room_waiters++;
            pthread_cond_wait(&l->room_cv, &l->mu);
            l->room_waiters--;
            if (l->stopping) {
                if (l->room_waiters == 0) pthread_cond_broadcast(&l->idle_cv);
                goto shutdown;
            }
        }
    }
    /* A lane without threads (min_threads 0) must get one before the item
     * is accepted: if none can start, the submit fails and nothing is queued. */
    int rc;
    if (l->nthreads == 0 && (rc = ln__lane_spawn(l)) != 0) {
        pthread_mutex_unlock(&l->mu);
        return rc;
    }
    rc = l->qops->push(l->q, &it);
    if (rc != 0) {
        pthread_mutex_unlock(&l->mu);
        return rc < 0 ? rc : LN_ENOMEM;
    }
    ln__lane_queued_locked(l, 1);
    pthread_mutex_unlock(&l->mu);
    return 0;
shutdown:
    pthread_mutex_unlock(&l->mu);
    return LN_ESHUTDOWN;
}

int ln__submit_batch(ln_pool *pool, int lane, ln_fn fn, void *const *args, size_t n, void *owner,
                     unsigned flags, size_t *queued) {
    LN_ASSERT(lane >= 0 && (unsigned)lane < pool->nlanes);
    ln__lane *l = &pool->lanes[lane];
    size_t done = 0;
    /* Fixed lanes: fill the ring many slots at a time (one claim per
     * chunk, one clock read for the whole batch); the owner waits for room
     * while a worker takes, as single submits do. The rest, if the ring
     * stays full, goes through the ordinary path into the backlog, in
     * order. While a lane samples its timing (lane.h), one item in
     * sample_mask + 1 carries the stamp, as if submitted one by one. */
    if (lockfree_ok(l)) {
        ln__spmc *mine = owned_ring(l);
        const int timed = pool->timing != LN_TIMING_OFF;
        uint64_t stamp = timed ? ln__now_ns() : 0;
        while (done < n) {
            size_t want = n - done;
            uint64_t s = stamp;
            /* relaxed: a sampling hint (see lane.h), reread every chunk of
             * 64: the workers start sampling once they see short tasks. */
            size_t every =
                timed ? (size_t)atomic_load_explicit(&l->sample_mask, memory_order_relaxed) + 1 : 0;
            if (every == 1 && want > 64) want = 64;
            if (every > 1) {
                size_t pos = done % every; /* 0: the stamped one */
                if (pos == 0)
                    want = 1;
                else if (want > every - pos)
                    want = every - pos;
                if (pos != 0) s = 0;
            }
            size_t k = mine != NULL ? ln__spmc_push_many(mine, fn, args + done, owner, s, want)
                                    : ln__mpmc_push_many(l->ring, fn, args + done, owner, s, want);
            if (k > 0) {
                done += k;
                continue;
            }
            ln__lane_after_lockfree_push(l); /* a sleeping worker must make the room */
            if (mine == NULL || !owned_wait_room(l, mine)) break;
        }
        if (done > 0) ln__lane_after_lockfree_push(l);
    }
    int rc = 0;
    if (l->ring != NULL && done < n) {
        /* The ring is full (or a backlog exists): the rest joins the
         * backlog under one lock. Fixed lanes are unbounded: no room wait. */
        ln_queue_item it = {fn, NULL, owner, ln__enq_stamp(pool, l)};
        pthread_mutex_lock(&l->mu);
        if (l->stopping) rc = LN_ESHUTDOWN;
        size_t before = done;
        while (rc == 0 && done < n) {
            it.arg = args[done];
            rc = l->qops->push(l->q, &it);
            if (rc == 0)
                done++;
            else if (rc > 0)
                rc = LN_ENOMEM;
        }
        if (done > before) ln__lane_queued_locked(l, done - before);
        pthread_mutex_unlock(&l->mu);
    }
    while (rc == 0 && done < n &&
           (rc = ln__submit_item(pool, lane, fn, args[done], owner, flags)) == 0)
        done++;
    *queued = done;
    return rc;
}

static int check_submit(ln_pool *pool, int lane, ln_fn fn, unsigned flags) {
    if (pool == NULL || fn == NULL) return LN_EINVAL;
    if (lane < 0 || (unsigned)lane >= pool->nlanes) return LN_EINVAL;
    if (flags > LN_SUBMIT_WAIT) return LN_EINVAL;
    return 0;
}

int ln_submit_ex(ln_pool *pool, int lane, ln_fn fn, void *arg, unsigned flags, ln_task **task) {
    int rc = check_submit(pool, lane, fn, flags);
    if (rc != 0) return rc;
    if (task == NULL) {
        if (ln__submit_owned(pool, lane, fn, arg, NULL)) return 0;
        return ln__submit_item(pool, lane, fn, arg, NULL, flags);
    }
    ln_task *t = ln__task_new(pool, lane, NULL, NULL);
    if (t == NULL) return LN_ENOMEM;
    rc = ln__submit_item(pool, lane, fn, arg, t, flags);
    if (rc != 0) {
        ln__task_unref(t); /* the queue's reference */
        ln__task_unref(t); /* the handle's */
        return rc;
    }
    *task = t;
    return 0;
}

int ln_submit(ln_pool *pool, int lane, ln_fn fn, void *arg, ln_task **task) {
    return ln_submit_ex(pool, lane, fn, arg, LN_SUBMIT_DEFAULT, task);
}

int ln_submit_cb(ln_pool *pool, int lane, ln_fn fn, void *arg, ln_complete_fn done,
                 ln_task **task) {
    int rc = check_submit(pool, lane, fn, LN_SUBMIT_DEFAULT);
    if (rc != 0 || done == NULL) return LN_EINVAL;
    ln_task *t = ln__task_new(pool, lane, done, arg);
    if (t == NULL) return LN_ENOMEM;
    rc = ln__submit_item(pool, lane, fn, arg, t, LN_SUBMIT_DEFAULT);
    if (rc != 0) {
        ln__task_unref(t);
        ln__task_unref(t);
        return rc;
    }
    if (task != NULL)
        *task = t;
    else
        ln__task_unref(t);
    return 0;
}
