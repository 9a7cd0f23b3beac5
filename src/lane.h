/* lane.h - a lane: its queue, its rings, its mutex and counters, its worker
 * threads. lane.c does everything under the lane's mutex; lane_thread.c is
 * the worker threads' loop; submit.c pushes items. Not API.
 *
 * Two kinds of lane share this struct:
 *  - fixed lanes (min_threads == max_threads, unbounded, a built-in FIFO
 *    queue: the default CPU lane) have two lock-free rings in front of
 *    their queue: 'owned', into which only the lane's owner thread pushes
 *    (spmc.h), and 'ring', shared by every other thread (mpmc.h). The
 *    queue holds the backlog when a ring is full; while it is non-empty
 *    submits go there too, so one producer's tasks stay in order.
 *  - other lanes use the queue under the mutex for everything.
 * docs/internals/wakeup.md describes the rings, the owner and its submit
 * policy, and the no-lost-wake-up protocol between submitters and workers.
 *
 * Lock order: pool.h.
 */
#ifndef LN_LANE_H
#define LN_LANE_H

#include "barrier.h"
#include "deque.h"
#include "histogram.h"
#include "internal.h"
#include "mpmc.h"
#include "spmc.h"

#include <pthread.h>
#include <stdatomic.h>

/* A worker thread of a lane (lane_thread.c). */
typedef struct ln__thread {
    struct ln__thread *next; /* lane->threads or lane->zombies list */
    struct ln__lane *lane;
    pthread_t tid;
    uint64_t born_ns;
    int watch_first;          /* a growing lane's thread started to watch, not take */
    ln__deque *deque;         /* its fork-join stack (fixed lanes), else NULL */
    _Atomic uint64_t busy_ns; /* single writer: this thread */
    ln__hist wait;            /* single writer: this thread */
    ln__hist run;
} ln__thread;

/* The owner-ring submit policy's state (submit.c). Written only by the
 * lane's owner thread, on every push into its ring: it sits on a cache line
 * of its own, which stays in the owner's cache. */
typedef struct ln__owner_policy {
    /* 1 once the owner gave up waiting for room or for the backlog and
     * joined the backlog; it does not wait again until the backlog is
     * empty (docs/internals/wakeup.md, "the owner's waits"). */
    int gave_up;
} ln__owner_policy;

typedef struct ln__lane {
    ln_pool *pool;
    int index;
    char name[32];
    const ln_queue_ops *qops;
    void *q;
    struct ln__mpmc *ring;  /* fixed lanes only, else NULL: any producer */
    struct ln__spmc *owned; /* fixed lanes only, else NULL: the owner's */
    /* Fixed lanes only, else NULL: one fork-join deque per worker
     * (deque.h), ndeques == max_threads; a worker gets slot next_deque++
     * (under mu) when it is spawned. */
    ln__deque *deques;
    unsigned ndeques;
    size_t max_queue;
    /* 1 for a growing lane (min_threads < max_threads; never has rings):
     * it grows when queued work waits, not when submits outnumber idle
     * threads (lane.c, "growing lanes"; wakeup.md). */
    int grow;
    unsigned min_threads, max_threads, idle_timeout_ms;

    /* The fields above are read by every submit and never written after
     * create; the mutex below is written by every lock. Apart, or a
     * worker's lock (to spin, to sleep) would cost the next submit a miss. */
    char pad0_[LN_CACHE_LINE];

    /* Guarded by mu. */
    pthread_mutex_t mu;
    pthread_cond_t work_cv; /* workers wait for items */
    pthread_cond_t room_cv; /* LN_SUBMIT_WAIT submitters wait for room */
    pthread_cond_t idle_cv; /* drain and destroy wait here */
    /* pending_wakes: signals sent to work_cv and not yet consumed by a
     * waking worker; never more than nidle when sent (wakeup.md). */
    unsigned nthreads, nspinning, pending_wakes, room_waiters;
    /* Threads spawned that have not yet looked at the lane: like a
     * pending wake, one is on its way to the queue. */
    unsigned nstarting;
    unsigned next_deque; /* the next worker's slot in deques */
    int stopping;
    uint64_t slow_submitted; /* items accepted into q (the rings count their own) */
    ln__thread *threads;     /* alive */
    ln__thread *zombies;     /* exited, not yet joined */
    /* Growing lanes only (lane.c, "growing lanes"). The watcher: at most
     * one idle thread (nwatch 0 or 1) that waits on watch_cv, not
     * work_cv, so wake-ups for work never reach it; while q is non-empty
     * it waits with a deadline (watch_until, 0 = none) and grows the lane
     * when queued work has waited LN_GROW_WAIT_NS. watch_take asks it to
     * take work itself. It is not counted in nidle. */
    pthread_cond_t watch_cv;
    unsigned nwatch;
    int watch_take;
    uint64_t watch_until;
    /* The wait mark: q_taken counts items shifted from q by workers;
     * while q_taken < mark_seq the item pushed as number mark_seq (the
     * youngest in q when the mark was set) is still queued, and it has
     * been since at least mark_ns. Invariant: q non-empty implies
     * q_taken < mark_seq <= slow_submitted. */
    uint64_t q_taken, mark_seq, mark_ns;
    /* When a worker last took from q, and whether its tasks were short
     * (it asked for a batch of 8 or more); growing lanes. */
    uint64_t last_take_ns;
    int short_tasks;
    ln__hist retired_wait; /* merged from exited threads */
    ln__hist retired_run;
    uint64_t retired_busy_ns, retired_alive_ns;

    char pad_[LN_CACHE_LINE]; /* keeps the atomics below off mu's line */
    /* Workers sleeping on work_cv. Changed under mu; read without mu by
     * fixed-lane submitters after a lock-free push. A worker increments it
     * and calls ln__barrier_heavy before its last look at the rings; a
     * submitter publishes, calls ln__barrier_light and reads it: one of the
     * two sees the other (barrier.h, wakeup.md). */
    _Atomic unsigned nidle;
    /* Items in q, stored (relaxed) under mu whenever q changes; read
     * without mu as a hint (a spinner's "look now", a fixed-lane submitter's
     * "backlog exists, keep order"). Decisions are rechecked under mu. */
    _Atomic size_t hint;
    /* Set once under mu by destroy; read relaxed between tasks by workers
     * to cancel what they have not started. */
    _Atomic int stop_hint;
    /* The ln__self_id of the thread that owns 'owned', 0 until one claims
     * it (one CAS, ever). relaxed: the id is the only thing it carries;
     * the ring it guards is published with the pool itself. Thread ids are
     * never reused, so no other thread can pass for a dead owner. */
    _Atomic uint64_t owner;
    /* Which submits carry a timestamp: those whose per-thread sequence
     * number has (seq & sample_mask) == 0. 0 (all) while tasks are long or
     * rare; LN_SAMPLE_MASK while a worker runs batches of short tasks, so a
     * stream of tiny tasks pays for 1 clock read in 16, not 2 per task.
     * Written by workers only when it changes; relaxed: a hint. */
    _Atomic unsigned sample_mask;
    /* The fields above are read on every submit and rarely written; the
     * ones below are written after every batch. Apart, or each batch would
     * cost the next submit a cache miss. */
    char pad2_[LN_CACHE_LINE];
    /* Batch accounting by workers (and destroy). finished is seq_cst with
     * drain_waiters: a drainer increments drain_waiters then reads
     * finished, a worker adds to finished then reads drain_waiters, so one
     * of them sees the other and no drain sleeps through the last batch. */
    _Atomic uint64_t finished, completed, canceled, peak;
    _Atomic unsigned drain_waiters, nbusy;

    /* The owner's private line: apart from the workers' counters above
     * and from the next lane's read-mostly fields. */
    char pad3_[LN_CACHE_LINE];
    ln__owner_policy policy;
    char pad4_[LN_CACHE_LINE];
} ln__lane;

_Static_assert(LN_LINES_APART(ln__lane, idle_timeout_ms, mu),
               "read-mostly lane fields share a line with mu");
_Static_assert(LN_LINES_APART(ln__lane, retired_alive_ns, nidle),
               "mu-guarded lane fields share a line with the submit hints");
_Static_assert(LN_LINES_APART(ln__lane, sample_mask, finished),
               "submit hints share a line with the batch counters");
_Static_assert(LN_LINES_APART(ln__lane, nbusy, policy),
               "the owner's policy shares a line with the batch counters");
_Static_assert(sizeof(ln__lane) >=
                   offsetof(ln__lane, policy) + sizeof(ln__owner_policy) + LN_CACHE_LINE,
               "the owner's policy shares a line with the next lane");

/* Timing: 1 in (LN_SAMPLE_MASK + 1) tasks while a lane is busy with short
 * tasks (pool->timing == LN_TIMING_SAMPLED); every task otherwise. */
#define LN_SAMPLE_MASK 15u
_Static_assert(LN_IS_POW2(LN_SAMPLE_MASK + 1), "LN_SAMPLE_MASK + 1 must be a power of two");

/* ---- life (lane.c) -------------------------------------------------------- */

/* Set up lane index of pool from o (checked): queue, rings for a fixed
 * lane, mutex and condition variables. 0 or LN_ENOMEM (nothing to undo). */
int ln__lane_init(ln__lane *l, ln_pool *pool, int index, const ln_lane_opts *o);
/* Free what init made; a lane init never made or already finished is a
 * no-op. Every thread is joined and every item ended. */
void ln__lane_fini(ln__lane *l);
/* Start the lane's min_threads. 0 or LN_EAGAIN/LN_ENOMEM. */
int ln__lane_start(ln__lane *l);
/* Stop, first half: refuse new items, cancel what is queued, wake
 * everyone. Second half: wait for blocked submitters to leave and every
 * worker to exit, and join them. */
void ln__lane_begin_stop(ln__lane *l);
void ln__lane_finish_stop(ln__lane *l);
/* Cancel whatever the rings hold (beside running workers: the rings are
 * multi-consumer). */
void ln__lane_purge_rings(ln__lane *l);
/* Wait until the lane holds nothing and runs nothing (ln_pool_drain). */
void ln__lane_wait_idle(ln__lane *l);
/* Fill *out for ln_pool_stats. 0 or LN_ENOMEM (*out untouched). */
int ln__lane_stats(ln__lane *l, ln_lane_stats *out);

/* ---- accounting and wake-ups (lane.c) -------------------------------------- */

/* After n items were pushed into q (mu held): count them, publish the
 * hint, wake a worker or grow the lane. */
void ln__lane_queued_locked(ln__lane *l, uint64_t n);
/* Items accepted so far: the queue's (under mu) plus the rings'. */
uint64_t ln__lane_submitted(ln__lane *lane);
/* Account a batch that ended: taken items, of which ran ran (the rest were
 * canceled); wakes drainers when the lane becomes idle. No lock needed. */
void ln__lane_account(ln__lane *lane, uint64_t taken, uint64_t ran);
/* Raise the lane's peak queue depth to depth if higher. Several threads
 * may race: CAS. Inline: every take of a worker calls it. */
static inline void ln__lane_note_depth(ln__lane *l, size_t depth) {
    /* relaxed: a statistic. */
    uint64_t peak = atomic_load_explicit(&l->peak, memory_order_relaxed);
    while (depth > peak &&
           !atomic_compare_exchange_weak_explicit(&l->peak, &peak, depth, memory_order_relaxed,
                                                  memory_order_relaxed)) {
    }
}
/* Wake one sleeping worker if none is already on its way. Takes mu. */
void ln__lane_wake_one(ln__lane *lane);

/* After a lock-free push: wake a sleeping worker if there is one. The
 * light barrier orders the push before the read of nidle (barrier.h);
 * relaxed load: the barrier pair is what makes it current enough. */
static inline void ln__lane_after_lockfree_push(ln__lane *l) {
    ln__barrier_light();
    if (atomic_load_explicit(&l->nidle, memory_order_relaxed) > 0) ln__lane_wake_one(l);
}

/* ---- threads (lane.c, for lane_thread.c) ----------------------------------- */

/* Start one worker thread on lane (mu held). 0 or LN_EAGAIN/ENOMEM. */
int ln__lane_spawn(ln__lane *lane);
/* Join the threads of lane->zombies (mu held). */
void ln__lane_reap(ln__lane *lane);
/* Move up to want items from q into b under mu (nothing once stopping);
 * on a lane without rings no more than the caller's share of q (q's size
 * over the threads awake; over max_threads if the lane does not grow).
 * Passes a wake-up on when more are left (a growing lane: only when its
 * work waited, or nobody else would notice; lane.c). Counts the caller
 * in nbusy when it took something. The number taken. */
unsigned ln__lane_take_locked(ln__lane *l, ln_queue_item *b, unsigned want);
/* A new worker thread's first call: it is no longer on its way; one
 * started to watch (watch_first) watches first, if the lane has no
 * watcher. Returns 1 when the thread should exit, with mu held; else 0
 * with mu released. */
int ln__lane_started(ln__lane *l, ln__thread *self);
/* Count the caller among the spinning workers (on) or not (off). */
void ln__lane_set_spinning(ln__lane *l, int on);
/* Sleep until woken (or the idle timeout, for a surplus thread). Returns 1
 * when the thread should exit, with mu held; else 0 with mu released. */
int ln__lane_sleep(ln__lane *l);
/* The calling worker leaves (mu held, and released here): it is unlinked,
 * its statistics folded into the lane, and it becomes a zombie. */
void ln__lane_thread_exit(ln__lane *l, ln__thread *self);

/* The worker thread's body (lane_thread.c); p is its ln__thread. */
void *ln__lane_thread_main(void *p);

/* ---- fork-join (lane_thread.c) ---------------------------------------------
 * docs/internals/forkjoin.md. */

/* 1 if any worker's deque of l holds an item (relaxed peeks). */
int ln__lane_deques_peek(ln__lane *l);
/* Queue (fn, arg, owner) on the calling worker's own deque if it is a
 * worker of lane 'lane' of pool and that lane has deques: 1 if queued,
 * 0 if the caller must take the ordinary submit path. */
int ln__lane_push_local(ln_pool *pool, int lane, ln_fn fn, void *arg, void *owner);

/* How many helping waits may nest on one worker before a wait stops
 * running unrelated tasks (forkjoin.md, "depth"). */
#define LN_HELP_DEPTH 64

/* A wait by a worker of the pool: what it waits for. */
typedef struct ln__waiter {
    int (*done)(void *ctx); /* 1 once the wait is over */
    /* Sleep until woken by the event or until until_ns (monotonic),
     * unless done already. */
    void (*block)(void *ctx, uint64_t until_ns);
    void *ctx;
    /* Past LN_HELP_DEPTH: run only queued items whose owner word is this
     * (a group's tasks); NULL: run none. */
    void *own;
} ln__waiter;

/* Wait, as a worker of the pool, until w->done: run queued tasks of the
 * caller's own lane meanwhile (forkjoin.md). deadline_ns 0: none. 0, or
 * LN_ETIMEDOUT once deadline_ns has passed. */
int ln__help_wait(const ln__waiter *w, uint64_t deadline_ns);

#endif
