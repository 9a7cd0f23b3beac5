/* pool.h - the pool's internal structures, shared by pool.c (lanes,
 * submit, drain, destroy, stats), worker.c (the worker threads), task.c
 * (futures), group.c and completion.c. Not API.
 *
 * Lock order (never take them the other way round):
 *     lane->mu  ->  task->mu | group->mu | pool->comp_mu
 *     task->mu  ->  pool->comp_mu
 * No lanes lock is ever held while user code (a task function, a
 * completion callback, a queue op excepted) runs.
 */
#ifndef LN_POOL_H
#define LN_POOL_H

#include "barrier.h"
#include "histogram.h"
#include "internal.h"
#include "mpmc.h"
#include "spmc.h"

#include <pthread.h>
#include <stdatomic.h>

/* ---- queue item owners ---------------------------------------------------
 * ln_queue_item.owner says who learns of the item's end:
 *   NULL                 fire-and-forget
 *   (ln_task *)          a future (ln_submit with a handle, ln_submit_cb)
 *   (ln_group *) | 1     a group member
 * Both structs are at least 8-byte aligned, so bit 0 is free for the tag. */
#define LN_OWNER_GROUP ((uintptr_t)1)

static inline void *ln__owner_group(ln_group *g) {
    return (void *)((uintptr_t)g | LN_OWNER_GROUP);
}
static inline ln_group *ln__as_group(void *owner) {
    return ((uintptr_t)owner & LN_OWNER_GROUP)
               ? (ln_group *)((uintptr_t)owner & ~LN_OWNER_GROUP)
               : NULL;
}
static inline ln_task *ln__as_task(void *owner) {
    return ((uintptr_t)owner & LN_OWNER_GROUP) ? NULL : (ln_task *)owner;
}

/* ---- tasks (task.c) ------------------------------------------------------ */

enum { LN_TASK_QUEUED, LN_TASK_RUNNING, LN_TASK_DONE, LN_TASK_CANCELED };

struct ln_task {
    /* QUEUED -> RUNNING -> DONE, or QUEUED -> CANCELED. Both transitions
     * out of QUEUED are CASes, so exactly one of "a worker starts it" and
     * "someone cancels it" wins. */
    _Atomic int state;
    /* References: the queue (until the worker or a canceller is done with
     * the item), the caller's handle (until ln_task_release), and the
     * completion list (until the completion ran). Freed at zero. */
    _Atomic int refs;
    ln_pool *pool;           /* where it was queued; compared, and used to post
                                the completion, never read after the pool is
                                gone (a handle may outlive its pool) */
    int lane;
    void *result;            /* written before state becomes DONE */
    ln_complete_fn done;     /* ln_submit_cb completion, or NULL */
    void *done_arg;
    int done_status;         /* 0 or LN_ECANCELED, set before queuing done */
    struct ln_task *next;    /* completion list link (pool->comp_mu) */
    pthread_mutex_t mu;      /* guards waiters; pairs with cv */
    pthread_cond_t cv;
    unsigned waiters;
};

ln_task *ln__task_new(ln_pool *pool, int lane, ln_complete_fn done, void *done_arg);
void ln__task_unref(ln_task *t);
/* The worker's side. start: QUEUED -> RUNNING, 0 if it lost to a cancel.
 * finish: store the result, -> DONE, wake waiters, queue the completion. */
int ln__task_start(ln_task *t);
void ln__task_finish(ln_task *t, void *result);
/* The worker lost the start to a cancel: wait until that canceller has
 * finished (it holds t->mu while posting) before dropping the reference. */
void ln__task_sync(ln_task *t);
/* Cancel an item that never started (destroy, or a worker stopping):
 * QUEUED -> CANCELED; 1 if this call did it, 0 if it was already canceled. */
int ln__task_cancel_queued(ln_task *t);

/* ---- groups (group.c) ---------------------------------------------------- */

/* Report n tasks of g finished, c of them canceled (one lock per batch). */
void ln__group_finished(ln_group *g, uint64_t n, uint64_t c);

/* ---- completions (completion.c) ------------------------------------------ */

int ln__completions_init(ln_pool *pool);
void ln__completions_fini(ln_pool *pool);
/* Hand a finished or canceled ln_submit_cb task to the loop thread. Takes
 * over one reference of t. */
void ln__completion_post(ln_pool *pool, ln_task *t);

/* ---- lanes and worker threads (pool.c, worker.c) ------------------------- */

typedef struct ln_thread {
    struct ln_thread *next; /* lane->threads or lane->zombies list */
    struct ln_lane *lane;
    pthread_t tid;
    uint64_t born_ns;
    _Atomic uint64_t busy_ns; /* single writer: this thread */
    ln_hist wait;             /* single writer: this thread */
    ln_hist run;
} ln_thread;

/* A lane. Two kinds share this struct:
 *  - fixed lanes (min_threads == max_threads, unbounded, with a built-in
 *    FIFO queue: the default CPU lane) have two lock-free rings in front of
 *    their queue: 'owned', into which only one thread (the first that
 *    submits to the lane, its 'owner') pushes, without any read-modify-
 *    write; and 'ring', shared by every other thread. Submit pushes
 *    without the mutex; the queue (ln_queue_ops) holds the backlog when a
 *    ring is full, and while it is non-empty submits go there too, so one
 *    producer's tasks stay in order (each producer uses one ring only).
 *  - other lanes (bounded, or growing and retiring threads) use the queue
 *    under the mutex for everything.
 * Counters that workers update after each batch are atomics, so a worker
 * of a fixed lane touches the mutex only to sleep or to use the backlog.
 *
 * The owner keeps its ring for the lane's life, even after it exits (its
 * items are still taken; later threads use 'ring'). Thread ids are never
 * reused (ln__self_id), so no other thread can pass for a dead owner. */
typedef struct ln_lane {
    ln_pool *pool;
    int index;
    char name[32];
    const ln_queue_ops *qops;
    void *q;
    struct ln_mpmc *ring;  /* fixed lanes only, else NULL: any producer */
    struct ln_spmc *owned; /* fixed lanes only, else NULL: the owner's */
    size_t max_queue;
    unsigned min_threads, max_threads, idle_timeout_ms;

    /* The fields above are read by every submit and never written after
     * create; the mutex below is written by every lock. Apart, or a
     * worker's lock (to spin, to sleep) would cost the next submit a miss. */
    char pad0_[LN_CACHE_LINE];

    /* Guarded by mu. */
    pthread_mutex_t mu;
    pthread_cond_t work_cv;  /* workers wait for items */
    pthread_cond_t room_cv;  /* LN_SUBMIT_WAIT submitters wait for room */
    pthread_cond_t idle_cv;  /* drain and destroy wait here */
    unsigned nthreads, nspinning, pending_wakes, room_waiters;
    int stopping;
    uint64_t slow_submitted; /* items accepted into q (the ring counts its own) */
    ln_thread *threads;      /* alive */
    ln_thread *zombies;      /* exited, not yet joined */
    ln_hist retired_wait;    /* merged from exited threads */
    ln_hist retired_run;
    uint64_t retired_busy_ns, retired_alive_ns;

    char pad_[LN_CACHE_LINE]; /* keeps the atomics below off mu's line */
    /* Workers sleeping on work_cv. Changed under mu; read without mu by
     * fixed-lane submitters after a lock-free push. A worker increments it
     * and calls ln__barrier_heavy before its last look at the rings; a
     * submitter publishes, calls ln__barrier_light and reads it: the
     * no-lost-wake-up protocol of barrier.h and mpmc.h. */
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
     * the ring it guards is published with the pool itself. */
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
} ln_lane;

/* Timing: 1 in (LN_SAMPLE_MASK + 1) tasks while a lane is busy with short
 * tasks (pool->timing == LN_TIMING_SAMPLED); every task otherwise. */
#define LN_SAMPLE_MASK 15u

struct ln_pool {
    unsigned nlanes;
    int timing; /* LN_TIMING_OFF, _SAMPLED or _ALL */
    unsigned spin_us;
    int when_full;
    ln_lane lanes[LN_MAX_LANES];

    /* Completions for ln_submit_cb tasks (completion.c). */
    pthread_mutex_t comp_mu;
    ln_task *comp_head, *comp_tail;
    int comp_fd; /* eventfd */
};

/* Queue one item (fn, arg, owner) on lane: the one submit path behind
 * ln_submit*, ln_group_submit* and ln_submit_cb. Arguments already checked.
 * 0, LN_EAGAIN, LN_ESHUTDOWN, LN_ENOMEM. */
int ln__pool_submit_item(ln_pool *pool, int lane, ln_fn fn, void *arg,
                         void *owner, unsigned flags);

/* Items accepted so far: the queue's (under mu) plus the ring's. */
uint64_t ln__lane_submitted(ln_lane *lane);
/* Account a batch that ended: taken items, of which ran ran (the rest were
 * canceled); wakes drainers when the lane becomes idle. No lock needed. */
void ln__lane_account(ln_lane *lane, uint64_t taken, uint64_t ran);
/* Raise the lane's peak queue depth to depth if higher (CAS; any thread). */
void ln__lane_note_depth(ln_lane *lane, size_t depth);
/* Wake one sleeping worker if none is already on its way. Takes mu. */
void ln__lane_wake_one(ln_lane *lane);

/* Queue n items (fn, args[i], owner) on lane; *queued gets how many were
 * accepted (in order, from args[0]) before an error. 0 when all were. */
int ln__pool_submit_batch(ln_pool *pool, int lane, ln_fn fn, void *const *args, size_t n,
                          void *owner, unsigned flags, size_t *queued);

/* Start one worker thread on lane (lane->mu held). 0 or LN_EAGAIN/ENOMEM. */
int ln__lane_spawn(ln_lane *lane);
/* Join the threads of lane->zombies (lane->mu held). */
void ln__lane_reap(ln_lane *lane);
/* Cancel one item that never ran: tell its owner. No lane lock held. */
void ln__item_cancel(ln_pool *pool, const ln_queue_item *item);

/* A nonzero id of the calling thread, unique in the process and never
 * reused (pthread_t values are): who owns a lane's ring, or a group's
 * submit counter. A thread-local read after the first call. */
#if defined(__GNUC__)
#define LN_TLS_FAST __attribute__((tls_model("initial-exec")))
#else
#define LN_TLS_FAST
#endif
extern _Thread_local uint64_t ln__tl_self_id LN_TLS_FAST;
uint64_t ln__self_id_assign(void);
static inline uint64_t ln__self_id(void) {
    uint64_t id = ln__tl_self_id;
    return id != 0 ? id : ln__self_id_assign();
}

/* The enqueue timestamp of an item about to be submitted on l: a clock
 * read for the items that are timed (sample_mask, above), else 0 ("not
 * timed": CLOCK_MONOTONIC is never 0 on a running system). */
extern _Thread_local unsigned ln__tl_submits LN_TLS_FAST;
static inline uint64_t ln__enq_stamp(const ln_pool *pool, ln_lane *l) {
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

/* After a lock-free push: wake a sleeping worker if there is one. The
 * light barrier orders the push before the read of nidle (barrier.h);
 * relaxed load: the barrier pair is what makes it current enough. */
static inline void ln__lane_after_lockfree_push(ln_lane *l) {
    ln__barrier_light();
    if (atomic_load_explicit(&l->nidle, memory_order_relaxed) > 0) ln__lane_wake_one(l);
}

/* The common case of ln__pool_submit_item, inline for its callers: the
 * lane's owner thread pushing into its own ring. 1 if the item is queued;
 * 0 if the caller must take ln__pool_submit_item (not a fixed lane, not
 * its owner yet, a backlog, stopping, or the ring full). relaxed loads:
 * the same hints as in ln__pool_submit_item. */
static inline int ln__pool_submit_owned(ln_pool *pool, int lane, ln_fn fn, void *arg,
                                        void *owner) {
    ln_lane *l = &pool->lanes[lane];
    if (l->owned == NULL ||
        atomic_load_explicit(&l->owner, memory_order_relaxed) != ln__self_id() ||
        atomic_load_explicit(&l->hint, memory_order_relaxed) != 0 ||
        atomic_load_explicit(&l->stop_hint, memory_order_relaxed))
        return 0;
    ln_queue_item it = {fn, arg, owner, ln__enq_stamp(pool, l)};
    if (!ln__spmc_push(l->owned, &it)) return 0;
    l->owned->gave_up = 0; /* no backlog now (pool.c, lockfree_ok) */
    ln__lane_after_lockfree_push(l);
    return 1;
}

/* The pool and lane of the calling worker thread, or NULL / -1. */
ln_pool *ln__current_pool(void);
int ln__current_lane(void);
void ln__set_current(ln_pool *pool, int lane);

#endif
