/* pool.c - the pool and its lanes: options, create, submit, drain,
 * destroy and statistics. The worker threads live in worker.c.
 *
 * DESIGN
 * A pool is an array of independent lanes. Each lane owns a task queue
 * (ln_queue_ops), a mutex that guards the queue and the lane's counters,
 * and its own worker threads; lanes share nothing, so a long task on one
 * lane never delays the start of a task on another (the point of seed 004).
 *
 * Submitting to a fixed lane (pool.h) is lock-free: the lane's first
 * submitter pushes into a single-producer ring of its own (spmc.h: no
 * read-modify-write at all), every other thread into a shared MPMC ring
 * (mpmc.h: one CAS); then a compiler barrier and one read of the sleeper
 * count decide whether to wake anyone (barrier.h). Other lanes, and fixed
 * lanes with a backlog, take the lane's mutex once: push the item, count
 * it, and wake a sleeping worker only when one sleeps and no wake-up is
 * already on its way (pending_wakes) and no worker is spinning (a spinning
 * worker will see the item by itself). Workers take items in batches
 * (worker.c), so a stream of short tasks costs the consumer one claim (or
 * lock) per batch.
 *
 * Every accepted item ends exactly once: it runs, or it is canceled (by
 * ln_task_cancel before it started, or by ln_pool_destroy). Counting is
 * done where items leave the lane -- in the worker after a batch, or in
 * destroy when it purges the queue -- so submitted == finished exactly when
 * the lane holds nothing and runs nothing; ln_pool_drain waits for that.
 */
#include "pool.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static unsigned online_cpus(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1;
}

void ln_pool_opts_init(ln_pool_opts *opts) {
    if (opts == NULL) return;
    memset(opts, 0, sizeof *opts);
    unsigned cpu = online_cpus();
    /* LANES_THREADS is the counterpart of UV_THREADPOOL_SIZE. */
    const char *env = getenv("LANES_THREADS");
    if (env != NULL && *env != '\0') {
        char *end = NULL;
        long v = strtol(env, &end, 10);
        if (end != NULL && *end == '\0' && v >= 1 && v <= 1024) cpu = (unsigned)v;
    }
    opts->nlanes = 2;
    opts->lanes[LN_LANE_CPU] = (ln_lane_opts){"cpu", cpu, cpu, 10000, NULL, 0};
    opts->lanes[LN_LANE_IO] = (ln_lane_opts){"io", 1, 4, 10000, NULL, 0};
    for (unsigned i = 2; i < LN_MAX_LANES; i++)
        opts->lanes[i] = (ln_lane_opts){NULL, 1, 1, 10000, NULL, 0};
    opts->when_full = LN_FULL_FAIL;
    opts->timing = LN_TIMING_SAMPLED;
    opts->spin_us = 50;
}

static int check_queue_ops(const ln_queue_ops *q) {
    return q->version == LN_QUEUE_OPS_VERSION && q->create && q->destroy &&
           q->push && q->shift && q->size;
}

static int check_opts(const ln_pool_opts *o) {
    if (o->nlanes < 1 || o->nlanes > LN_MAX_LANES) return LN_EINVAL;
    if (o->when_full != LN_FULL_FAIL && o->when_full != LN_FULL_BLOCK) return LN_EINVAL;
    if (o->timing > LN_TIMING_ALL || o->spin_us > 1000000) return LN_EINVAL;
    for (unsigned i = 0; i < o->nlanes; i++) {
        const ln_lane_opts *l = &o->lanes[i];
        if (l->max_threads < 1 || l->max_threads > 4096) return LN_EINVAL;
        if (l->min_threads > l->max_threads) return LN_EINVAL;
        if (l->queue != NULL && !check_queue_ops(l->queue)) return LN_EINVAL;
        if (l->name != NULL && strlen(l->name) >= sizeof(((ln_lane *)0)->name))
            return LN_EINVAL;
    }
    return 0;
}

static void free_rings(ln_lane *l) {
    ln__free(l->ring);
    ln__free(l->owned);
    l->ring = NULL;
    l->owned = NULL;
}

static int lane_init(ln_pool *pool, int index, const ln_lane_opts *o) {
    ln_lane *l = &pool->lanes[index];
    l->pool = pool;
    l->index = index;
    if (o->name != NULL) snprintf(l->name, sizeof l->name, "%s", o->name);
    else snprintf(l->name, sizeof l->name, "lane%d", index);
    l->qops = o->queue != NULL ? o->queue : &ln_queue_ring;
    l->max_queue = o->max_queue;
    l->min_threads = o->min_threads;
    l->max_threads = o->max_threads;
    l->idle_timeout_ms = o->idle_timeout_ms;
    atomic_init(&l->hint, 0);
    atomic_init(&l->stop_hint, 0);
    atomic_init(&l->owner, 0);
    atomic_init(&l->sample_mask, 0);
    atomic_init(&l->nidle, 0);
    atomic_init(&l->finished, 0);
    atomic_init(&l->completed, 0);
    atomic_init(&l->canceled, 0);
    atomic_init(&l->peak, 0);
    atomic_init(&l->drain_waiters, 0);
    atomic_init(&l->nbusy, 0);
    /* The lock-free front keeps FIFO order, so it may only stand before a
     * FIFO queue: the built-in ones. A user queue defines its own order. */
    int fifo = l->qops == &ln_queue_ring || l->qops == &ln_queue_list;
    if (fifo && o->max_queue == 0 && o->min_threads == o->max_threads) {
        l->ring = ln__malloc(sizeof *l->ring);
        l->owned = ln__malloc(sizeof *l->owned);
        if (l->ring == NULL || l->owned == NULL) {
            free_rings(l);
            return LN_ENOMEM;
        }
        ln__mpmc_init(l->ring);
        ln__spmc_init(l->owned);
    }
    int rc = l->qops->create(&l->q);
    if (rc != 0) {
        free_rings(l);
        return rc < 0 ? rc : LN_ENOMEM;
    }
    pthread_mutexattr_t ma;
    pthread_mutexattr_init(&ma);
#ifdef PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP
    /* Hold times are tens of ns: spin briefly before sleeping in the kernel. */
    pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ADAPTIVE_NP);
#endif
    int mrc = pthread_mutex_init(&l->mu, &ma);
    pthread_mutexattr_destroy(&ma);
    if (mrc != 0) goto fail_q;
    if (ln__cond_init_monotonic(&l->work_cv) != 0) goto fail_mu;
    if (pthread_cond_init(&l->room_cv, NULL) != 0) goto fail_work;
    if (pthread_cond_init(&l->idle_cv, NULL) != 0) goto fail_room;
    return 0;
fail_room:
    pthread_cond_destroy(&l->room_cv);
fail_work:
    pthread_cond_destroy(&l->work_cv);
fail_mu:
    pthread_mutex_destroy(&l->mu);
fail_q:
    l->qops->destroy(l->q);
    l->q = NULL;
    free_rings(l);
    return LN_ENOMEM;
}

static void lane_fini(ln_lane *l) {
    if (l->q == NULL) return;
    pthread_cond_destroy(&l->idle_cv);
    pthread_cond_destroy(&l->room_cv);
    pthread_cond_destroy(&l->work_cv);
    pthread_mutex_destroy(&l->mu);
    l->qops->destroy(l->q);
    l->q = NULL;
    free_rings(l);
}

/* Cancel whatever the rings hold. Safe beside running workers: the rings
 * are multi-consumer. */
static void purge_ring(ln_lane *l) {
    ln_queue_item items[32];
    unsigned n;
    if (l->ring == NULL) return;
    while ((n = ln__mpmc_pop(l->ring, items, 32)) > 0 ||
           (n = ln__spmc_pop(l->owned, items, 32)) > 0) {
        for (unsigned i = 0; i < n; i++) ln__item_cancel(l->pool, &items[i]);
        ln__lane_account(l, n, 0);
    }
}

/* Stop a lane, first half: refuse new items, cancel what is queued, wake
 * everyone. Workers finish the task they are running and cancel the rest
 * of their batch (they read stop_hint between tasks). Every lane gets this
 * before any lane is waited for, so no queued task of one lane starts while
 * destroy waits for a running task of another. */
static void lane_begin_stop(ln_lane *l) {
    ln_queue_item it;
    pthread_mutex_lock(&l->mu);
    l->stopping = 1;
    /* relaxed: workers and fixed-lane submitters read it as a hint; the
     * authoritative 'stopping' is read under mu. */
    atomic_store_explicit(&l->stop_hint, 1, memory_order_relaxed);
    uint64_t purged = 0;
    /* Canceling under mu is allowed by the lock order (lane -> task/group/
     * completion) and runs no user code. */
    while (l->qops->shift(l->q, &it) == 1) {
        ln__item_cancel(l->pool, &it);
        purged++;
    }
    atomic_store_explicit(&l->hint, 0, memory_order_relaxed);
    pthread_cond_broadcast(&l->work_cv);
    pthread_cond_broadcast(&l->room_cv);
    pthread_mutex_unlock(&l->mu);
    ln__lane_account(l, purged, 0);
    purge_ring(l);
}

/* Second half: wait for blocked submitters to leave and every worker to
 * exit (both signal idle_cv when stopping), and join them. */
static void lane_finish_stop(ln_lane *l) {
    pthread_mutex_lock(&l->mu);
    while (l->room_waiters > 0 || l->nthreads > 0)
        pthread_cond_wait(&l->idle_cv, &l->mu);
    ln__lane_reap(l);
    pthread_mutex_unlock(&l->mu);
}

int ln_pool_create(ln_pool **out, const ln_pool_opts *opts) {
    if (out == NULL) return LN_EINVAL;
    ln_pool_opts defaults;
    if (opts == NULL) {
        ln_pool_opts_init(&defaults);
        opts = &defaults;
    }
    int rc = check_opts(opts);
    if (rc != 0) return rc;

    ln__barrier_init(); /* before any submit can use it (barrier.h) */
    ln_pool *pool = ln__calloc(1, sizeof *pool);
    if (pool == NULL) return LN_ENOMEM;
    pool->timing = (int)opts->timing;
    pool->spin_us = opts->spin_us;
    pool->when_full = opts->when_full;
    rc = ln__completions_init(pool);
    if (rc != 0) {
        ln__free(pool);
        return rc;
    }
    unsigned made = 0;
    for (; made < opts->nlanes; made++) {
        rc = lane_init(pool, (int)made, &opts->lanes[made]);
        if (rc != 0) break;
    }
    pool->nlanes = made;
    for (unsigned i = 0; rc == 0 && i < pool->nlanes; i++) {
        ln_lane *l = &pool->lanes[i];
        pthread_mutex_lock(&l->mu);
        while (rc == 0 && l->nthreads < l->min_threads) rc = ln__lane_spawn(l);
        pthread_mutex_unlock(&l->mu);
    }
    if (rc != 0) {
        ln_pool_destroy(pool);
        return rc;
    }
    *out = pool;
    return 0;
}

void ln_pool_destroy(ln_pool *pool) {
    if (pool == NULL) return;
    for (unsigned i = 0; i < pool->nlanes; i++) lane_begin_stop(&pool->lanes[i]);
    for (unsigned i = 0; i < pool->nlanes; i++) lane_finish_stop(&pool->lanes[i]);
    /* Only now is every worker of every lane joined: a task of one lane may
     * have pushed into another lane's ring past a stale stop_hint. */
    for (unsigned i = 0; i < pool->nlanes; i++) purge_ring(&pool->lanes[i]);
    /* Every item has ended; run the completions still pending so each
     * ln_submit_cb task gets exactly one. */
    ln_pool_run_completions(pool);
    for (unsigned i = 0; i < pool->nlanes; i++) lane_fini(&pool->lanes[i]);
    ln__completions_fini(pool);
    ln__free(pool);
}

int ln_pool_drain(ln_pool *pool) {
    if (pool == NULL) return LN_EINVAL;
    if (ln__current_pool() == pool) return LN_EBUSY;
    for (unsigned i = 0; i < pool->nlanes; i++) {
        ln_lane *l = &pool->lanes[i];
        pthread_mutex_lock(&l->mu);
        /* seq_cst with the workers' update of finished: see pool.h. */
        atomic_fetch_add_explicit(&l->drain_waiters, 1, memory_order_seq_cst);
        while (atomic_load_explicit(&l->finished, memory_order_seq_cst) !=
               ln__lane_submitted(l))
            pthread_cond_wait(&l->idle_cv, &l->mu);
        atomic_fetch_sub_explicit(&l->drain_waiters, 1, memory_order_relaxed);
        pthread_mutex_unlock(&l->mu);
    }
    return 0;
}

int ln_pool_lanes(const ln_pool *pool) {
    return pool == NULL ? LN_EINVAL : (int)pool->nlanes;
}

int ln_pool_lane_index(const ln_pool *pool, const char *name) {
    if (pool == NULL || name == NULL) return LN_EINVAL;
    for (unsigned i = 0; i < pool->nlanes; i++)
        if (strcmp(pool->lanes[i].name, name) == 0) return (int)i;
    return LN_ENOENT;
}

/* ---- submit ---------------------------------------------------------------- */

/* After n items were pushed into q (mu held): count them, publish the
 * hint, keep the peak, wake a sleeper not already woken, and if sleepers,
 * spinners and wake-ups on their way are fewer than the items waiting, grow
 * the lane (a failed start is harmless here: the lane has threads that will
 * get to it; fixed lanes never grow, they run max_threads already). */
static void queued_locked(ln_lane *l, uint64_t n) {
    l->slow_submitted += n;
    size_t size = l->qops->size(l->q);
    /* relaxed: a hint for spinners and submitters (see pool.h). */
    atomic_store_explicit(&l->hint, size, memory_order_relaxed);
    ln__lane_note_depth(l, size);
    unsigned nidle = atomic_load_explicit(&l->nidle, memory_order_relaxed);
    unsigned free_idle = nidle > l->pending_wakes ? nidle - l->pending_wakes : 0;
    if (l->nspinning == 0 && free_idle > 0) {
        l->pending_wakes++;
        pthread_cond_signal(&l->work_cv);
    } else if (size > (size_t)free_idle + l->nspinning && l->nthreads < l->max_threads) {
        (void)ln__lane_spawn(l);
    }
}

/* How long a submitter waits for room in its full owned ring while no
 * worker takes anything, before the lane starts a backlog (pool.h): short
 * when a worker is inside a batch (a long task may hold it), longer while
 * none is (they sleep, wake up -- a futex wake-up takes tens of us on a VM,
 * sometimes milliseconds -- or were preempted between batches and will be
 * back). A backlog costs every later submit and take the lane's mutex
 * until it drains, so it is worth a wait. */
#define LN_ROOM_WAIT_NS 200000u
#define LN_ROOM_WAKE_NS 3000000u

/* The patience above for lane l now. relaxed: a hint; the cost of a wrong
 * guess is a backlog. */
static uint64_t owner_patience(ln_lane *l) {
    return atomic_load_explicit(&l->nbusy, memory_order_relaxed) > 0 ? LN_ROOM_WAIT_NS
                                                                     : LN_ROOM_WAKE_NS;
}

/* The lane has a backlog (hint > 0). Its owner may have items in it, so
 * it cannot use its ring again until the backlog is empty -- and while it
 * pushes into the backlog under the mutex, the workers that drain it under
 * the same mutex barely outpace it: a burst that overflowed once would go
 * through the backlog to its end. Instead the owner waits while the
 * workers drain it (hint falling), with the patience of owned_wait_room.
 * 1 when the backlog is empty: the ring may be used. Other threads (and
 * the owner, after a wait without progress) join the backlog. */
static int owned_wait_backlog(ln_lane *l) {
    if (l->owned == NULL ||
        atomic_load_explicit(&l->owner, memory_order_relaxed) != ln__self_id())
        return 0;
    /* relaxed loads: hints; the backlog's state is decided under mu. */
    size_t last = atomic_load_explicit(&l->hint, memory_order_relaxed);
    if (l->owned->gave_up) { /* waited in vain once: join until it drains */
        if (last != 0) return 0;
        l->owned->gave_up = 0;
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
                l->owned->gave_up = 1;
                return 0;
            }
            if (idle >= LN_SPMC_YIELD_AFTER_NS) sched_yield(); /* see spmc.h */
        }
    }
}

/* May a submit to l use the lock-free rings? Only on a fixed lane that is
 * not stopping and has no backlog (then the item must join the backlog,
 * behind the older ones) -- except that its owner waits for the backlog
 * to drain (owned_wait_backlog). relaxed loads: hints, see pool.h; a stale
 * 0 backlog only reorders concurrent submits, which have no order anyway. */
static int lockfree_ok(ln_lane *l) {
    if (l->ring == NULL || atomic_load_explicit(&l->stop_hint, memory_order_relaxed)) return 0;
    if (atomic_load_explicit(&l->hint, memory_order_relaxed) != 0) return owned_wait_backlog(l);
    if (atomic_load_explicit(&l->owner, memory_order_relaxed) == ln__self_id())
        l->owned->gave_up = 0; /* no backlog: the owner may wait again */
    return 1;
}

static int owned_wait_room(ln_lane *l, ln_spmc *mine) {
    for (uint64_t waited = 0;; waited += LN_ROOM_WAIT_NS) {
        if (ln__spmc_wait_room(mine, LN_ROOM_WAIT_NS)) return 1;
        if (waited + LN_ROOM_WAIT_NS >= owner_patience(l)) {
            mine->gave_up = 1; /* the item goes to the backlog */
            return 0;
        }
    }
}

/* The calling thread's ring on fixed lane l: 'owned' if it owns the lane
 * (claiming it if nobody has), else NULL (use 'ring'). */
static ln_spmc *owned_ring(ln_lane *l) {
    uint64_t me = ln__self_id();
    /* relaxed: see 'owner' in pool.h. */
    uint64_t cur = atomic_load_explicit(&l->owner, memory_order_relaxed);
    if (cur == me) return l->owned;
    if (cur == 0 && atomic_compare_exchange_strong_explicit(&l->owner, &cur, me,
                                                            memory_order_relaxed,
                                                            memory_order_relaxed))
        return l->owned;
    return NULL;
}

int ln__pool_submit_item(ln_pool *pool, int lane, ln_fn fn, void *arg,
                         void *owner, unsigned flags) {
    ln_lane *l = &pool->lanes[lane];
    /* Stamp outside the lock: the wait histogram measures queue time. */
    ln_queue_item it = {fn, arg, owner, ln__enq_stamp(pool, l)};

    /* Fixed lanes: lock-free, unless a backlog exists or the ring is full
     * (lockfree_ok, owned_wait_room). */
    if (lockfree_ok(l)) {
        ln_spmc *mine = owned_ring(l);
        /* A full owned ring whose consumer is busy taking batches has room
         * again within a batch: wait for it (owned_wait_room) rather than
         * start a backlog, which would move every later submit and take
         * under the lane's mutex. */
        if (mine != NULL ? ln__spmc_push(mine, &it) ||
                               (owned_wait_room(l, mine) &&
                                ln__spmc_push(mine, &it))
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
    queued_locked(l, 1);
    pthread_mutex_unlock(&l->mu);
    return 0;
shutdown:
    pthread_mutex_unlock(&l->mu);
    return LN_ESHUTDOWN;
}

int ln__pool_submit_batch(ln_pool *pool, int lane, ln_fn fn, void *const *args, size_t n,
                          void *owner, unsigned flags, size_t *queued) {
    ln_lane *l = &pool->lanes[lane];
    size_t done = 0;
    /* Fixed lanes: fill the ring many slots at a time (one claim per
     * chunk, one clock read for the whole batch); the owner waits for room
     * while a worker takes, as single submits do. The rest, if the ring
     * stays full, goes through the ordinary path into the backlog, in
     * order. While a lane samples its timing (pool.h), one item in
     * sample_mask + 1 carries the stamp, as if submitted one by one. */
    if (lockfree_ok(l)) {
        ln_spmc *mine = owned_ring(l);
        const int timed = pool->timing != LN_TIMING_OFF;
        uint64_t stamp = timed ? ln__now_ns() : 0;
        while (done < n) {
            size_t want = n - done;
            uint64_t s = stamp;
            /* relaxed: a sampling hint (see pool.h), reread every chunk of
             * 64: the workers start sampling once they see short tasks. */
            size_t every = timed ? (size_t)atomic_load_explicit(&l->sample_mask,
                                                                memory_order_relaxed) + 1
                                 : 0;
            if (every == 1 && want > 64) want = 64;
            if (every > 1) {
                size_t pos = done % every; /* 0: the stamped one */
                if (pos == 0) want = 1;
                else if (want > every - pos) want = every - pos;
                if (pos != 0) s = 0;
            }
            size_t k = mine != NULL
                           ? ln__spmc_push_many(mine, fn, args + done, owner, s, want)
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
            if (rc == 0) done++;
            else if (rc > 0) rc = LN_ENOMEM;
        }
        if (done > before) queued_locked(l, done - before);
        pthread_mutex_unlock(&l->mu);
    }
    while (rc == 0 && done < n &&
           (rc = ln__pool_submit_item(pool, lane, fn, args[done], owner, flags)) == 0)
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

int ln_submit_ex(ln_pool *pool, int lane, ln_fn fn, void *arg, unsigned flags,
                 ln_task **task) {
    int rc = check_submit(pool, lane, fn, flags);
    if (rc != 0) return rc;
    if (task == NULL) {
        if (ln__pool_submit_owned(pool, lane, fn, arg, NULL)) return 0;
        return ln__pool_submit_item(pool, lane, fn, arg, NULL, flags);
    }
    ln_task *t = ln__task_new(pool, lane, NULL, NULL);
    if (t == NULL) return LN_ENOMEM;
    rc = ln__pool_submit_item(pool, lane, fn, arg, t, flags);
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

int ln_submit_cb(ln_pool *pool, int lane, ln_fn fn, void *arg,
                 ln_complete_fn done, ln_task **task) {
    int rc = check_submit(pool, lane, fn, LN_SUBMIT_DEFAULT);
    if (rc != 0 || done == NULL) return LN_EINVAL;
    ln_task *t = ln__task_new(pool, lane, done, arg);
    if (t == NULL) return LN_ENOMEM;
    rc = ln__pool_submit_item(pool, lane, fn, arg, t, LN_SUBMIT_DEFAULT);
    if (rc != 0) {
        ln__task_unref(t);
        ln__task_unref(t);
        return rc;
    }
    if (task != NULL) *task = t;
    else ln__task_unref(t);
    return 0;
}

/* ---- accounting and statistics ----------------------------------------------- */

uint64_t ln__lane_submitted(ln_lane *l) {
    if (l->ring == NULL) return l->slow_submitted;
    return l->slow_submitted + ln__mpmc_pushed(l->ring) + ln__spmc_pushed(l->owned);
}

void ln__lane_account(ln_lane *l, uint64_t taken, uint64_t ran) {
    if (taken == 0) return;
    /* relaxed: statistics. */
    if (ran > 0) atomic_fetch_add_explicit(&l->completed, ran, memory_order_relaxed);
    if (taken > ran) atomic_fetch_add_explicit(&l->canceled, taken - ran, memory_order_relaxed);
    /* seq_cst pair with drain_waiters: see pool.h. Also releases the
     * batch's effects to a drainer that acquires finished. */
    atomic_fetch_add_explicit(&l->finished, taken, memory_order_seq_cst);
    if (atomic_load_explicit(&l->drain_waiters, memory_order_seq_cst) > 0) {
        pthread_mutex_lock(&l->mu);
        pthread_cond_broadcast(&l->idle_cv);
        pthread_mutex_unlock(&l->mu);
    }
}

void ln__lane_wake_one(ln_lane *l) {
    pthread_mutex_lock(&l->mu);
    if (atomic_load_explicit(&l->nidle, memory_order_relaxed) > l->pending_wakes) {
        l->pending_wakes++;
        pthread_cond_signal(&l->work_cv);
    }
    pthread_mutex_unlock(&l->mu);
}

int ln_pool_stats(ln_pool *pool, int lane, ln_lane_stats *out) {
    if (pool == NULL || out == NULL || lane < 0 || (unsigned)lane >= pool->nlanes)
        return LN_EINVAL;
    ln_lane *l = &pool->lanes[lane];
    /* Merged histograms are big (2 x ~4 KiB): keep them off small stacks. */
    ln_hist *h = ln__calloc(2, sizeof *h);
    if (h == NULL) return LN_ENOMEM;
    memset(out, 0, sizeof *out);

    pthread_mutex_lock(&l->mu);
    /* After the lock: a thread born before we read 'now' is in the list. */
    uint64_t now = ln__now_ns();
    snprintf(out->name, sizeof out->name, "%s", l->name);
    out->threads = l->nthreads;
    out->busy = atomic_load_explicit(&l->nbusy, memory_order_relaxed);
    out->min_threads = l->min_threads;
    out->max_threads = l->max_threads;
    out->submitted = ln__lane_submitted(l);
    out->completed = atomic_load_explicit(&l->completed, memory_order_relaxed);
    out->canceled = atomic_load_explicit(&l->canceled, memory_order_relaxed);
    out->queued = l->qops->size(l->q);
    if (l->ring != NULL) out->queued += ln__mpmc_size(l->ring) + ln__spmc_size(l->owned);
    out->peak_queued = atomic_load_explicit(&l->peak, memory_order_relaxed);
    uint64_t busy = l->retired_busy_ns, alive = l->retired_alive_ns;
    ln__hist_merge(&h[0], &l->retired_wait);
    ln__hist_merge(&h[1], &l->retired_run);
    for (ln_thread *t = l->threads; t != NULL; t = t->next) {
        busy += atomic_load_explicit(&t->busy_ns, memory_order_relaxed);
        alive += now - t->born_ns;
        ln__hist_merge(&h[0], &t->wait);
        ln__hist_merge(&h[1], &t->run);
    }
    pthread_mutex_unlock(&l->mu);

    out->utilization = alive > 0 ? (double)busy / (double)alive : 0.0;
    if (out->utilization > 1.0) out->utilization = 1.0;
    ln__hist_summary(&h[0], &out->wait);
    ln__hist_summary(&h[1], &out->run);
    ln__free(h);
    return 0;
}
