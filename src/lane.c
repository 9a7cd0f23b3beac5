/* lane.c - everything done under a lane's mutex: init and fini, stop,
 * the worker threads' spawn, sleep, exit and reap, the wake-ups, and the
 * accounting that drain and the statistics read.
 *
 * DESIGN
 * Each lane owns a task queue (ln_queue_ops), a mutex that guards the queue
 * and the lane's counters, and its own worker threads; lanes share
 * nothing, so a long task on one lane never delays the start of a task on
 * another.
 *
 * A push into the queue (ln__lane_queued_locked) wakes a sleeping worker
 * only when one sleeps, no wake-up is already on its way (pending_wakes)
 * and no worker is spinning (a spinning worker will see the item by
 * itself). A lane of fixed size never grows; a growing lane grows only
 * when its queued work has waited on busy workers (see "growing lanes"
 * below). docs/internals/wakeup.md explains why no wake-up is lost.
 *
 * Every accepted item ends exactly once: it runs, or it is canceled (by
 * ln_task_cancel before it started, or by ln_pool_destroy). Counting is
 * done where items leave the lane -- in the worker after a batch, or in
 * stop when it purges the queue -- so submitted == finished exactly when
 * the lane holds nothing and runs nothing; ln__lane_wait_idle waits for
 * that.
 *
 * Exit: an exiting worker moves itself from 'threads' to 'zombies' under
 * the mutex and does not touch the lane afterwards; zombies are joined by
 * the next spawn or by stop, which waits for nthreads == 0 first.
 */
#include "lane.h"

#include "group.h"
#include "task.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* ---- life ---------------------------------------------------------------- */

static void free_rings(ln__lane *l) {
    for (unsigned i = 0; i < l->ndeques; i++) ln__deque_fini(&l->deques[i]);
    ln__free(l->deques);
    ln__free(l->ring);
    ln__free(l->owned);
    l->deques = NULL;
    l->ndeques = 0;
    l->ring = NULL;
    l->owned = NULL;
}

/* A fixed lane's fork-join deques, one per worker (deque.h). */
static int make_deques(ln__lane *l) {
    l->deques = ln__calloc(l->max_threads, sizeof *l->deques);
    if (l->deques == NULL) return LN_ENOMEM;
    for (; l->ndeques < l->max_threads; l->ndeques++)
        if (ln__deque_init(&l->deques[l->ndeques]) != 0) return LN_ENOMEM;
    return 0;
}

int ln__lane_init(ln__lane *l, ln_pool *pool, int index, const ln_lane_opts *o) {
    l->pool = pool;
    l->index = index;
    if (o->name != NULL)
        snprintf(l->name, sizeof l->name, "%s", o->name);
    else
        snprintf(l->name, sizeof l->name, "lane%d", index);
    l->qops = o->queue != NULL ? o->queue : &ln_queue_ring;
    l->max_queue = o->max_queue;
    l->min_threads = o->min_threads;
    l->max_threads = o->max_threads;
    l->idle_timeout_ms = o->idle_timeout_ms;
    l->grow = o->min_threads < o->max_threads;
    l->nstarting = l->nwatch = l->next_deque = 0;
    l->deques = NULL;
    l->ndeques = 0;
    l->watch_take = l->short_tasks = 0;
    l->watch_until = l->q_taken = l->mark_seq = l->mark_ns = l->last_take_ns = 0;
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
    l->policy.gave_up = 0;
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
        if (make_deques(l) != 0) {
            free_rings(l);
            return LN_ENOMEM;
        }
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
    if (ln__cond_init_monotonic(&l->watch_cv) != 0) goto fail_idle;
    return 0;
fail_idle:
    pthread_cond_destroy(&l->idle_cv);
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

void ln__lane_fini(ln__lane *l) {
    if (l->q == NULL) return;
    pthread_cond_destroy(&l->watch_cv);
    pthread_cond_destroy(&l->idle_cv);
    pthread_cond_destroy(&l->room_cv);
    pthread_cond_destroy(&l->work_cv);
    pthread_mutex_destroy(&l->mu);
    l->qops->destroy(l->q);
    l->q = NULL;
    free_rings(l);
}

int ln__lane_start(ln__lane *l) {
    int rc = 0;
    pthread_mutex_lock(&l->mu);
    while (rc == 0 && l->nthreads < l->min_threads) rc = ln__lane_spawn(l);
    pthread_mutex_unlock(&l->mu);
    return rc;
}

/* Cancel an item that will never run, telling its owner (no lane lock
 * needed; allowed under one by the lock order). */
static void item_cancel(const ln_queue_item *it) {
    ln_group *g = ln__as_group(it->owner);
    if (g != NULL) {
        ln__group_finished(g, 1, 1);
        return;
    }
    ln_task *t = ln__as_task(it->owner);
    if (t != NULL) {
        ln__task_cancel_queued(t);
        ln__task_unref(t); /* the queue's reference */
    }
}

/* Cancel whatever the rings and the deques hold. Safe beside running
 * workers: the rings are multi-consumer, the deques locked. */
void ln__lane_purge_rings(ln__lane *l) {
    ln_queue_item items[32];
    unsigned n;
    if (l->ring == NULL) return;
    while ((n = ln__mpmc_pop(l->ring, items, 32)) > 0 ||
           (n = ln__spmc_pop(l->owned, items, 32)) > 0) {
        for (unsigned i = 0; i < n; i++) item_cancel(&items[i]);
        ln__lane_account(l, n, 0);
    }
    for (unsigned i = 0; i < l->ndeques; i++) {
        while (ln__deque_take(&l->deques[i], 0, &items[0])) {
            item_cancel(&items[0]);
            ln__lane_account(l, 1, 0);
        }
    }
}

/* Stop a lane, first half: refuse new items, cancel what is queued, wake
 * everyone. Workers finish the task they are running and cancel the rest
 * of their batch (they read stop_hint between tasks). Every lane gets this
 * before any lane is waited for, so no queued task of one lane starts while
 * destroy waits for a running task of another. */
void ln__lane_begin_stop(ln__lane *l) {
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
        item_cancel(&it);
        purged++;
    }
    atomic_store_explicit(&l->hint, 0, memory_order_relaxed);
    pthread_cond_broadcast(&l->work_cv);
    pthread_cond_broadcast(&l->watch_cv);
    pthread_cond_broadcast(&l->room_cv);
    pthread_mutex_unlock(&l->mu);
    ln__lane_account(l, purged, 0);
    ln__lane_purge_rings(l);
}

/* Second half: wait for blocked submitters to leave and every worker to
 * exit (both signal idle_cv when stopping), and join them. */
void ln__lane_finish_stop(ln__lane *l) {
    pthread_mutex_lock(&l->mu);
    while (l->room_waiters > 0 || l->nthreads > 0) pthread_cond_wait(&l->idle_cv, &l->mu);
    ln__lane_reap(l);
    pthread_mutex_unlock(&l->mu);
}

void ln__lane_wait_idle(ln__lane *l) {
    pthread_mutex_lock(&l->mu);
    /* seq_cst with the workers' update of finished: see lane.h. */
    atomic_fetch_add_explicit(&l->drain_waiters, 1, memory_order_seq_cst);
    while (atomic_load_explicit(&l->finished, memory_order_seq_cst) != ln__lane_submitted(l))
        pthread_cond_wait(&l->idle_cv, &l->mu);
    atomic_fetch_sub_explicit(&l->drain_waiters, 1, memory_order_relaxed);
    pthread_mutex_unlock(&l->mu);
}

/* ---- growing lanes ----------------------------------------------------------
 *
 * A growing lane (min_threads < max_threads) adds a taker -- wakes a
 * sleeper, or starts a thread -- when its queued work waits on busy
 * workers (stalled_locked: the wait mark is LN_GROW_WAIT_NS old, nobody
 * took for as long, nobody is on the way), not because a burst of
 * submits outnumbers the threads awake: a burst of
 * short tasks then runs on the threads already awake, in batches, and a
 * task that blocks holds the ones queued behind it up for about
 * LN_GROW_WAIT_NS only. wakeup.md, "growing lanes", has the reasons.
 *
 * Who looks at the queue (all under mu): a push or a take that leaves q
 * non-empty (grow_policy_locked), and the watcher (watch_locked), an idle
 * thread that waits on watch_cv with a deadline while q is non-empty.
 * Invariant after every such decision point, while q is non-empty and
 * the lane can still grow: a spinner, a wake-up or a new thread is on its
 * way to q, or the watcher's deadline is at most 2 * LN_GROW_WAIT_NS after
 * the mark, or a thread was asked to take (watch_take) -- unless a thread
 * could not start (then the busy ones will come back). So queued work
 * waits at most about 2 * LN_GROW_WAIT_NS plus a wake-up per taker added
 * while every thread awake is busy, and at most one thread is added per
 * LN_GROW_WAIT_NS of waiting (each growth sets a new mark). */

/* How long queued work of a growing lane may wait before a taker is added. */
#define LN_GROW_WAIT_NS 100000u
_Static_assert(LN_GROW_WAIT_NS > 0 && LN_GROW_WAIT_NS < 1000000000u,
               "LN_GROW_WAIT_NS must be a positive fraction of a second");

static int spawn_locked(ln__lane *l, int watch_first);

/* Sleepers on work_cv that no signal is on its way to (mu held). */
static unsigned free_sleepers(const ln__lane *l) {
    /* relaxed: nidle changes only under mu, held here. */
    unsigned nidle = atomic_load_explicit(&l->nidle, memory_order_relaxed);
    return nidle > l->pending_wakes ? nidle - l->pending_wakes : 0;
}

/* Set the wait mark at the youngest item in q (mu held). */
static void mark_locked(ln__lane *l, uint64_t now) {
    l->mark_seq = l->slow_submitted;
    l->mark_ns = now;
    LN_ASSERT(l->q_taken <= l->mark_seq);
}

/* A spinner, a wake-up, a new thread or the watcher is on its way to q
 * (mu held). */
static int on_its_way(const ln__lane *l) {
    return l->nspinning > 0 || l->pending_wakes > 0 || l->nstarting > 0 || l->watch_take;
}

/* 1 if q's work waits on busy workers (mu held): the mark item is still
 * queued and has waited LN_GROW_WAIT_NS (then, FIFO, so has every item in
 * front of it); no taker is on its way (a wake-up late because the
 * machine is loaded is not a reason to add more); and either no worker
 * took from q for as long (every thread awake is inside a batch) or the
 * last taker runs tasks that are not short (batches of 1: more threads
 * run them in parallel). A stream of short tasks that outpaces the
 * threads awake is not a reason: more threads would only contend for mu. */
static int stalled_locked(const ln__lane *l, uint64_t now) {
    return l->q_taken < l->mark_seq && now > l->mark_ns && now - l->mark_ns >= LN_GROW_WAIT_NS &&
           (now - l->last_take_ns >= LN_GROW_WAIT_NS || !l->short_tasks) && !on_its_way(l);
}

/* Add a taker to a growing lane (mu held): a sleeper, else a new thread,
 * else (max_threads alive) the watcher itself. A new mark first, so the
 * next growth needs a new wait. A failed start is harmless: the lane has
 * threads that will get to the work. */
static void grow_one_locked(ln__lane *l, uint64_t now) {
    mark_locked(l, now);
    if (free_sleepers(l) > 0) {
        l->pending_wakes++;
        pthread_cond_signal(&l->work_cv);
    } else if (l->nthreads < l->max_threads) {
        (void)ln__lane_spawn(l);
    } else if (l->nwatch > 0) {
        l->watch_take = 1;
        pthread_cond_signal(&l->watch_cv);
    }
}

/* q is non-empty after a push or a take on a growing lane (mu held; now
 * is the time; the mark is live). Decide who gets to the work: nobody new
 * if one is on its way, or if a busy worker will come back for it and the
 * watcher's deadline covers it; else wake or start one. */
static void grow_policy_locked(ln__lane *l, uint64_t now) {
    LN_ASSERT(l->grow && l->q_taken < l->mark_seq);
    if (stalled_locked(l, now)) {
        grow_one_locked(l, now);
        return;
    }
    if (on_its_way(l)) return;
    /* relaxed: a hint. A stale 0 costs one wake-up; a stale non-zero only
     * defers to the watcher, whose deadline bounds the wait. */
    int busy = atomic_load_explicit(&l->nbusy, memory_order_relaxed) > 0;
    if (busy && l->nwatch > 0) {
        uint64_t due = l->mark_ns + LN_GROW_WAIT_NS;
        if (l->watch_until == 0 || l->watch_until > due + LN_GROW_WAIT_NS) {
            l->watch_until = due; /* one re-arm per mark is enough */
            pthread_cond_signal(&l->watch_cv);
        }
        return;
    }
    if (free_sleepers(l) > 0) {
        l->pending_wakes++;
        pthread_cond_signal(&l->work_cv);
    } else if (!busy && l->nwatch > 0) {
        l->watch_take = 1; /* nobody else is awake: the watcher takes */
        pthread_cond_signal(&l->watch_cv);
    } else if (l->nthreads < l->max_threads) {
        /* Every thread is busy and none watches: a new one, which starts
         * as the watcher (a taker only if the work then waits). */
        (void)spawn_locked(l, 1); /* a failure is harmless: the busy ones come back */
    }
}

/* The watcher's side (ln__lane_sleep on a growing lane, mu held, q empty,
 * no watcher yet). It waits on watch_cv: with a deadline at the mark plus
 * LN_GROW_WAIT_NS while q is non-empty, where it grows the lane if the
 * work is still there; without one while q is empty (or the idle timeout,
 * for a surplus thread). It leaves to take work when asked (watch_take).
 * Returns like ln__lane_sleep. */
static int watch_locked(ln__lane *l) {
    LN_ASSERT(l->grow && l->nwatch == 0);
    l->nwatch = 1; /* the only watcher until it leaves below */
    l->watch_take = 0;
    int rc = 0;
    uint64_t idle_since = ln__now_ns();
    for (;;) {
        LN_ASSERT(l->nwatch == 1);
        if (l->stopping) {
            rc = 1;
            break;
        }
        if (l->watch_take) break;
        uint64_t now = ln__now_ns();
        size_t size = l->qops->size(l->q);
        if (size > 0) {
            idle_since = now;
            if (stalled_locked(l, now)) grow_one_locked(l, now);
            if (l->watch_take) break; /* grow_one_locked asked the watcher itself */
            l->watch_until = l->mark_ns + LN_GROW_WAIT_NS;
            if (l->watch_until <= now) l->watch_until = now + LN_GROW_WAIT_NS;
            (void)ln__cond_timedwait_ns(&l->watch_cv, &l->mu, l->watch_until);
        } else if (l->nthreads > l->min_threads) {
            uint64_t idle_end = idle_since + (uint64_t)l->idle_timeout_ms * 1000000u;
            if (now >= idle_end) {
                rc = 1; /* a surplus thread idle for idle_timeout_ms retires */
                break;
            }
            l->watch_until = 0;
            (void)ln__cond_timedwait_ns(&l->watch_cv, &l->mu, idle_end);
        } else {
            l->watch_until = 0;
            pthread_cond_wait(&l->watch_cv, &l->mu);
        }
    }
    l->nwatch = 0;
    l->watch_take = 0;
    l->watch_until = 0;
    if (rc == 1) return 1; /* mu held */
    pthread_mutex_unlock(&l->mu);
    return 0;
}

/* ---- accounting and wake-ups ---------------------------------------------- */

/* After n items were pushed into q (mu held): count them, publish the
 * hint, keep the peak, wake a sleeper not already woken, and if sleepers,
 * spinners and wake-ups on their way are fewer than the items waiting, grow
 * the lane (a failed start is harmless here: the lane has threads that will
 * get to it; fixed lanes never grow, they run max_threads already). */
void ln__lane_queued_locked(ln__lane *l, uint64_t n) {
    int marked = l->q_taken < l->mark_seq;
    l->slow_submitted += n;
    size_t size = l->qops->size(l->q);
    /* relaxed: a hint for spinners and submitters (see lane.h). */
    atomic_store_explicit(&l->hint, size, memory_order_relaxed);
    ln__lane_note_depth(l, size);
    if (l->grow) {
        uint64_t now = ln__now_ns();
        if (!marked) mark_locked(l, now); /* q was empty, or its mark taken */
        grow_policy_locked(l, now);
        return;
    }
    unsigned nidle = atomic_load_explicit(&l->nidle, memory_order_relaxed);
    unsigned free_idle = nidle > l->pending_wakes ? nidle - l->pending_wakes : 0;
    if (l->nspinning == 0 && free_idle > 0) {
        l->pending_wakes++;
        pthread_cond_signal(&l->work_cv);
    } else if (size > (size_t)free_idle + l->nspinning && l->nthreads < l->max_threads) {
        (void)ln__lane_spawn(l);
    }
}

uint64_t ln__lane_submitted(ln__lane *l) {
    if (l->ring == NULL) return l->slow_submitted;
    uint64_t n = l->slow_submitted + ln__mpmc_pushed(l->ring) + ln__spmc_pushed(l->owned);
    for (unsigned i = 0; i < l->ndeques; i++) n += ln__deque_pushed(&l->deques[i]);
    return n;
}

int ln__lane_deques_peek(ln__lane *l) {
    for (unsigned i = 0; i < l->ndeques; i++)
        if (ln__deque_size(&l->deques[i]) > 0) return 1;
    return 0;
}

/* The sleeper's last look at the deques (deque.h, DESIGN). */
static int deques_ready(ln__lane *l) {
    for (unsigned i = 0; i < l->ndeques; i++)
        if (ln__deque_ready(&l->deques[i])) return 1;
    return 0;
}

void ln__lane_account(ln__lane *l, uint64_t taken, uint64_t ran) {
    LN_ASSERT(ran <= taken);
    if (taken == 0) return;
    /* relaxed: statistics. */
    if (ran > 0) atomic_fetch_add_explicit(&l->completed, ran, memory_order_relaxed);
    if (taken > ran) atomic_fetch_add_explicit(&l->canceled, taken - ran, memory_order_relaxed);
    /* seq_cst pair with drain_waiters: see lane.h. Also releases the
     * batch's effects to a drainer that acquires finished. */
    atomic_fetch_add_explicit(&l->finished, taken, memory_order_seq_cst);
    if (atomic_load_explicit(&l->drain_waiters, memory_order_seq_cst) > 0) {
        pthread_mutex_lock(&l->mu);
        pthread_cond_broadcast(&l->idle_cv);
        pthread_mutex_unlock(&l->mu);
    }
}

void ln__lane_wake_one(ln__lane *l) {
    pthread_mutex_lock(&l->mu);
    if (atomic_load_explicit(&l->nidle, memory_order_relaxed) > l->pending_wakes) {
        l->pending_wakes++;
        pthread_cond_signal(&l->work_cv);
    }
    pthread_mutex_unlock(&l->mu);
}

/* ---- statistics ------------------------------------------------------------ */

int ln__lane_stats(ln__lane *l, ln_lane_stats *out) {
    /* Merged histograms are big (2 x ~4 KiB): keep them off small stacks. */
    ln__hist *h = ln__calloc(2, sizeof *h);
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
    for (unsigned i = 0; i < l->ndeques; i++) out->queued += ln__deque_size(&l->deques[i]);
    out->peak_queued = atomic_load_explicit(&l->peak, memory_order_relaxed);
    uint64_t busy = l->retired_busy_ns, alive = l->retired_alive_ns;
    ln__hist_merge(&h[0], &l->retired_wait);
    ln__hist_merge(&h[1], &l->retired_run);
    for (ln__thread *t = l->threads; t != NULL; t = t->next) {
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

/* ---- threads ---------------------------------------------------------------- */

unsigned ln__lane_take_locked(ln__lane *l, ln_queue_item *b, unsigned want) {
    const unsigned asked = want; /* the caller's batch size */
    unsigned n = 0;
    pthread_mutex_lock(&l->mu);
    if (!l->stopping) {
        if (l->ring == NULL) {
            /* The caller's share: over the threads awake on a growing
             * lane (its sleepers are not coming), else over them all. */
            unsigned awake = l->max_threads;
            if (l->grow) {
                unsigned asleep = atomic_load_explicit(&l->nidle, memory_order_relaxed) + l->nwatch;
                awake = l->nthreads > asleep ? l->nthreads - asleep : 1;
            }
            size_t share = l->qops->size(l->q) / awake;
            if (share < want) want = share > 0 ? (unsigned)share : 1;
        }
        while (n < want && l->qops->shift(l->q, &b[n]) == 1) n++;
        size_t left = l->qops->size(l->q);
        atomic_store_explicit(&l->hint, left, memory_order_relaxed); /* see lane.h */
        /* relaxed: a statistic and a hint (grow_policy_locked); the caller
         * subtracts it after the batch. */
        if (n > 0) atomic_fetch_add_explicit(&l->nbusy, 1, memory_order_relaxed);
        if (n > 0 && l->room_waiters > 0) pthread_cond_broadcast(&l->room_cv);
        if (l->grow) {
            l->q_taken += n;
            if (n > 0) {
                l->last_take_ns = ln__now_ns();
                /* The caller's batch size says how short its tasks are
                 * (lane_thread.c: it doubles while they prove short). */
                l->short_tasks = asked >= 8;
            }
            LN_ASSERT(l->q_taken <= l->slow_submitted);
            if (left > 0) {
                uint64_t now = ln__now_ns();
                if (l->q_taken >= l->mark_seq) mark_locked(l, now); /* the mark was taken */
                grow_policy_locked(l, now);
            }
        } else if (left > 0 &&
                   atomic_load_explicit(&l->nidle, memory_order_relaxed) > l->pending_wakes) {
            /* Chain wake-up: more work than this worker takes. */
            l->pending_wakes++;
            pthread_cond_signal(&l->work_cv);
        }
    }
    pthread_mutex_unlock(&l->mu);
    return n;
}

int ln__lane_started(ln__lane *l, ln__thread *self) {
    pthread_mutex_lock(&l->mu);
    LN_ASSERT(l->nstarting > 0);
    l->nstarting--;
    if (self->watch_first && !l->stopping && l->nwatch == 0) return watch_locked(l);
    if (l->stopping) return 1;
    pthread_mutex_unlock(&l->mu);
    return 0;
}

void ln__lane_set_spinning(ln__lane *l, int on) {
    pthread_mutex_lock(&l->mu);
    if (on) {
        l->nspinning++;
    } else {
        LN_ASSERT(l->nspinning > 0);
        l->nspinning--;
    }
    pthread_mutex_unlock(&l->mu);
}

/* The worker's side of the no-lost-wake-up protocol (wakeup.md). */
int ln__lane_sleep(ln__lane *l) {
    pthread_mutex_lock(&l->mu);
    if (l->stopping) return 1;
    /* A growing lane keeps one idle thread as its watcher. */
    if (l->grow && l->nwatch == 0 && l->qops->size(l->q) == 0) return watch_locked(l);
    /* Announce ourselves before the last look at the rings: the
     * counterpart of the submitter's publish, light barrier, read of nidle
     * (barrier.h). Lanes without rings take every submit under mu. */
    atomic_fetch_add_explicit(&l->nidle, 1, memory_order_seq_cst);
    if (l->ring != NULL) ln__barrier_heavy();
    if ((l->ring != NULL &&
         (ln__mpmc_ready(l->ring) || ln__spmc_ready(l->owned) || deques_ready(l))) ||
        l->qops->size(l->q) > 0) {
        atomic_fetch_sub_explicit(&l->nidle, 1, memory_order_relaxed);
        pthread_mutex_unlock(&l->mu);
        return 0;
    }
    int timed_out = 0;
    if (l->nthreads > l->min_threads) {
        uint64_t deadline = ln__now_ns() + (uint64_t)l->idle_timeout_ms * 1000000u;
        timed_out = ln__cond_timedwait_ns(&l->work_cv, &l->mu, deadline) == ETIMEDOUT;
    } else {
        pthread_cond_wait(&l->work_cv, &l->mu);
    }
    LN_ASSERT(atomic_load_explicit(&l->nidle, memory_order_relaxed) > 0);
    atomic_fetch_sub_explicit(&l->nidle, 1, memory_order_relaxed);
    if (l->pending_wakes > 0) l->pending_wakes--;
    if (l->stopping) return 1;
    /* Surplus threads (never on fixed lanes) retire after an idle timeout. */
    if (timed_out && l->qops->size(l->q) == 0 && l->nthreads > l->min_threads) return 1;
    pthread_mutex_unlock(&l->mu);
    return 0;
}

void ln__lane_thread_exit(ln__lane *l, ln__thread *self) {
    /* Unlink from 'threads', fold statistics into the lane, become a zombie. */
    LN_ASSERT(l->nthreads > 0);
    ln__thread **pp = &l->threads;
    while (*pp != self) {
        LN_ASSERT(*pp != NULL); /* a live thread is on the list */
        pp = &(*pp)->next;
    }
    *pp = self->next;
    ln__hist_merge(&l->retired_wait, &self->wait);
    ln__hist_merge(&l->retired_run, &self->run);
    l->retired_busy_ns += atomic_load_explicit(&self->busy_ns, memory_order_relaxed);
    l->retired_alive_ns += ln__now_ns() - self->born_ns;
    self->next = l->zombies;
    l->zombies = self;
    l->nthreads--;
    if (l->stopping) pthread_cond_broadcast(&l->idle_cv);
    pthread_mutex_unlock(&l->mu);
}

void ln__lane_reap(ln__lane *l) {
    ln__thread *z = l->zombies;
    l->zombies = NULL;
    while (z != NULL) {
        ln__thread *next = z->next;
        /* The zombie released mu for the last time before we could take it
         * and touches nothing shared afterwards: joining under mu is safe. */
        pthread_join(z->tid, NULL);
        ln__free(z);
        z = next;
    }
}

int ln__lane_spawn(ln__lane *l) {
    return spawn_locked(l, 0);
}

static int spawn_locked(ln__lane *l, int watch_first) {
    ln__lane_reap(l);
    ln__thread *t = ln__calloc(1, sizeof *t);
    if (t == NULL) return LN_ENOMEM;
    t->lane = l;
    t->watch_first = watch_first;
    /* A fixed lane spawns its max_threads once: one deque each. */
    t->deque = l->next_deque < l->ndeques ? &l->deques[l->next_deque++] : NULL;
    t->born_ns = ln__now_ns();
    atomic_init(&t->busy_ns, 0);
    /* The thread blocks on mu (held by our caller) until we return, so it
     * is linked before it first looks at the lane. */
    t->next = l->threads;
    l->threads = t;
    l->nthreads++;
    l->nstarting++; /* until its ln__lane_started */
    int rc = pthread_create(&t->tid, NULL, ln__lane_thread_main, t);
    if (rc != 0) {
        l->threads = t->next;
        l->nthreads--;
        if (t->deque != NULL) l->next_deque--;
        l->nstarting--;
        ln__free(t);
        return rc == ENOMEM ? LN_ENOMEM : LN_EAGAIN;
    }
    return 0;
}
