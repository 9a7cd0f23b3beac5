/* pool.h - the pool's internal structures, shared by pool.c (lanes,
 * submit, drain, destroy, stats), worker.c (the worker threads), task.c
 * (futures), group.c and completion.c. Not API.
 *
 * Lock order (never take them the other way round):
 *     lane->mu  ->  task->mu | group->mu | pool->comp_mu
 * No lanes lock is ever held while user code (a task function, a
 * completion callback, a queue op excepted) runs.
 */
#ifndef LN_POOL_H
#define LN_POOL_H

#include "histogram.h"
#include "internal.h"

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

typedef struct ln_lane {
    ln_pool *pool;
    int index;
    char name[32];
    const ln_queue_ops *qops;
    void *q;
    size_t max_queue;
    unsigned min_threads, max_threads, idle_timeout_ms;

    /* Producer and workers meet here. Everything below up to 'hint' is
     * guarded by mu. */
    pthread_mutex_t mu;
    pthread_cond_t work_cv;  /* workers wait for items */
    pthread_cond_t room_cv;  /* LN_SUBMIT_WAIT submitters wait for room */
    pthread_cond_t idle_cv;  /* drain waiters wait for finished==submitted */
    unsigned nthreads, nidle, nspinning, nbusy, pending_wakes;
    unsigned room_waiters, drain_waiters;
    int stopping;
    uint64_t submitted;      /* items accepted */
    uint64_t finished;       /* items that ran or were canceled */
    uint64_t completed;      /* items that ran */
    uint64_t canceled;       /* items canceled */
    uint64_t live;           /* queued and not canceled: the "queued" stat */
    uint64_t peak_live;
    ln_thread *threads;      /* alive */
    ln_thread *zombies;      /* exited, not yet joined */
    ln_hist retired_wait;    /* merged from exited threads */
    ln_hist retired_run;
    uint64_t retired_busy_ns, retired_alive_ns;

    /* Hint for spinning workers: the number of physical items in q. Stored
     * (relaxed) under mu by whoever changes the queue, read (relaxed)
     * without mu by spinners; the real check is always redone under mu. */
    char pad_[LN_CACHE_LINE]; /* keeps the hints off mu's cache line */
    _Atomic size_t hint;
    /* Set (relaxed) once under mu by destroy; read without mu by workers
     * between the tasks of a batch to cancel what they have not started. */
    _Atomic int stop_hint;
} ln_lane;

struct ln_pool {
    unsigned nlanes;
    int timing;
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

/* Start one worker thread on lane (lane->mu held). 0 or LN_EAGAIN/ENOMEM. */
int ln__lane_spawn(ln_lane *lane);
/* Join the threads of lane->zombies (lane->mu held). */
void ln__lane_reap(ln_lane *lane);
/* Item accounting when an item ends without running (lane->mu held). */
void ln__lane_count_canceled(ln_lane *lane, uint64_t n);
/* Cancel one item that never ran: tell its owner. No lane lock held. */
void ln__item_cancel(ln_pool *pool, const ln_queue_item *item);

/* The pool and lane of the calling worker thread, or NULL / -1. */
ln_pool *ln__current_pool(void);
int ln__current_lane(void);
void ln__set_current(ln_pool *pool, int lane);

#endif
