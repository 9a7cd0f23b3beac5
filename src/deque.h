/* deque.h - a worker's own stack of fork-join tasks: the tasks a worker of
 * a fixed lane submits to a group on its own lane (ln_group_submit*) go
 * here, not into the lane's rings. The owner pops the newest (LIFO: a
 * waiting task runs its own children first, depth first, so helping nests
 * as deep as the fork tree, not as wide); idle workers of the same lane,
 * and workers waiting in ln_group_wait / ln_task_wait, steal the oldest
 * (FIFO: the biggest pieces of work). No other lane ever looks at it.
 * Not API; lane_thread.c has the owner's and the thieves' loops.
 *
 * DESIGN
 * A growable circular array under a mutex of its own: the owner and a
 * thief touch it for tens of ns, and the mutex makes every operation
 * (including taking a given group's item out of the middle, which a wait
 * past the helping depth bound does) obviously exact. Two atomics are
 * readable without the mutex:
 *   size   - items held, stored under mu (relaxed). A peek for spinners
 *            and sleepers: a sleeper's last look reads it after its heavy
 *            barrier, the pusher stores it then calls ln__barrier_light
 *            and reads nidle (barrier.h): one of them sees the other,
 *            exactly as for the rings (docs/internals/wakeup.md).
 *   pushed - items ever accepted, stored under mu with release, read with
 *            acquire by ln__lane_submitted (drain compares it with the
 *            lane's finished count, like the rings' tail counters).
 */
#ifndef LN_DEQUE_H
#define LN_DEQUE_H

#include "internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#define LN_DEQUE_FIRST_CAP 64

typedef struct ln__deque {
    pthread_mutex_t mu;
    ln_queue_item *items;     /* cap slots (a power of two), under mu */
    size_t cap, head, tail;   /* under mu: items [head, tail), owner end tail */
    _Atomic size_t size;      /* tail - head; see DESIGN */
    _Atomic uint64_t pushed;  /* single writer (the owner), under mu */
    char pad_[LN_CACHE_LINE]; /* one deque per line: owners write theirs */
} ln__deque;

static inline int ln__deque_init(ln__deque *d) {
    memset(d, 0, sizeof *d);
    atomic_init(&d->size, 0);
    atomic_init(&d->pushed, 0);
    return pthread_mutex_init(&d->mu, NULL) == 0 ? 0 : LN_ENOMEM;
}

static inline void ln__deque_fini(ln__deque *d) {
    pthread_mutex_destroy(&d->mu);
    ln__free(d->items);
    d->items = NULL;
}

/* relaxed: a peek (see DESIGN); every take is exact under mu. */
static inline size_t ln__deque_size(ln__deque *d) {
    return atomic_load_explicit(&d->size, memory_order_relaxed);
}

/* seq_cst: a sleeper's last look, after its heavy barrier (as
 * ln__mpmc_ready: the symmetric form of the barrier wants the look itself
 * ordered after the fence). */
static inline int ln__deque_ready(ln__deque *d) {
    return atomic_load_explicit(&d->size, memory_order_seq_cst) != 0;
}

static inline uint64_t ln__deque_pushed(ln__deque *d) {
    return atomic_load_explicit(&d->pushed, memory_order_acquire); /* see DESIGN */
}

static inline void ln__deque_publish_locked(ln__deque *d) {
    atomic_store_explicit(&d->size, d->tail - d->head, memory_order_relaxed);
}

/* Double the array (mu held). 0 or LN_ENOMEM (nothing changed). */
static inline int ln__deque_grow_locked(ln__deque *d) {
    size_t cap = d->cap != 0 ? d->cap * 2 : LN_DEQUE_FIRST_CAP;
    ln_queue_item *items = ln__malloc(cap * sizeof *items);
    if (items == NULL) return LN_ENOMEM;
    for (size_t i = d->head; i != d->tail; i++) items[i - d->head] = d->items[i & (d->cap - 1)];
    ln__free(d->items);
    d->items = items;
    d->tail -= d->head;
    d->head = 0;
    d->cap = cap;
    return 0;
}

/* The owner only. 0 or LN_ENOMEM (nothing queued). */
static inline int ln__deque_push(ln__deque *d, const ln_queue_item *it) {
    pthread_mutex_lock(&d->mu);
    if (d->tail - d->head == d->cap && ln__deque_grow_locked(d) != 0) {
        pthread_mutex_unlock(&d->mu);
        return LN_ENOMEM;
    }
    d->items[d->tail++ & (d->cap - 1)] = *it;
    ln__deque_publish_locked(d);
    uint64_t p = atomic_load_explicit(&d->pushed, memory_order_relaxed); /* sole writer */
    atomic_store_explicit(&d->pushed, p + 1, memory_order_release);
    pthread_mutex_unlock(&d->mu);
    return 0;
}

/* The newest item (the owner) or the oldest (anyone): 1 if one was taken. */
static inline int ln__deque_take(ln__deque *d, int newest, ln_queue_item *out) {
    if (ln__deque_size(d) == 0) return 0;
    int got = 0;
    pthread_mutex_lock(&d->mu);
    if (d->tail != d->head) {
        *out = newest ? d->items[--d->tail & (d->cap - 1)] : d->items[d->head++ & (d->cap - 1)];
        ln__deque_publish_locked(d);
        got = 1;
    }
    pthread_mutex_unlock(&d->mu);
    return got;
}

/* The newest item whose owner word is owner, wherever it sits (a wait past
 * the helping depth bound runs only its own group's tasks): 1 if taken. */
static inline int ln__deque_take_owned(ln__deque *d, void *owner, ln_queue_item *out) {
    if (ln__deque_size(d) == 0) return 0;
    int got = 0;
    pthread_mutex_lock(&d->mu);
    for (size_t i = d->tail; i != d->head; i--) {
        if (d->items[(i - 1) & (d->cap - 1)].owner != owner) continue;
        *out = d->items[(i - 1) & (d->cap - 1)];
        for (size_t j = i; j != d->tail; j++) /* close the gap, order kept */
            d->items[(j - 1) & (d->cap - 1)] = d->items[j & (d->cap - 1)];
        d->tail--;
        ln__deque_publish_locked(d);
        got = 1;
        break;
    }
    pthread_mutex_unlock(&d->mu);
    return got;
}

#endif
