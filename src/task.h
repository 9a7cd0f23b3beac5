/* task.h - futures (task.c) and the owners of queue items. Not API. */
#ifndef LN_TASK_H
#define LN_TASK_H

#include "completion.h"
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
    LN_ASSERT(((uintptr_t)g & LN_OWNER_GROUP) == 0);
    return (void *)((uintptr_t)g | LN_OWNER_GROUP);
}
static inline ln_group *ln__as_group(void *owner) {
    return ((uintptr_t)owner & LN_OWNER_GROUP) ? (ln_group *)((uintptr_t)owner & ~LN_OWNER_GROUP)
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
    ln_pool *pool; /* where it was queued; compared, and used to post
                      the completion, never read after the pool is
                      gone (a handle may outlive its pool) */
    int lane;
    void *result;        /* written before state becomes DONE */
    ln_complete_fn done; /* ln_submit_cb completion, or NULL */
    void *done_arg;
    int done_status;     /* 0 or LN_ECANCELED, set before queuing done */
    ln__completion comp; /* runs done on the loop thread (completion.h) */
    pthread_mutex_t mu;  /* guards waiters; pairs with cv */
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

#endif
