/* limiter.c - ln_limiter: rolling concurrency for asynchronous operations.
 *
 * DESIGN
 * One atomic word, `state`, counts the operations that are outstanding
 * (submitted and not yet finished with ln_done: running ones plus queued
 * ones), shifted left by one; bit 0 (WAITER) says that a thread sleeps in
 * ln_limiter_wait. Every change of the count is a single read-modify-write,
 * so all of them are totally ordered and each one knows the exact count
 * before it:
 *
 *  - submit, count n < C (concurrency): the caller owns a free rail and calls
 *    start at once. This is the fast path: a load and one CAS, no lock.
 *  - submit, n >= C: under `mu`, the operation is appended to the pending
 *    ring *in the same critical section* as its increment, and the ring's
 *    room is secured before the increment, so a queued operation can never
 *    fail after it was counted.
 *  - ln_done, count n before the decrement: n <= C means no operation is
 *    queued and the rail simply becomes free; n > C means at least one is
 *    queued (running <= C always, so n - running >= 1), and this caller hands
 *    its rail to the oldest: it takes `mu`, pops it and starts it.
 *
 * Invariant: the rails in use (running operations plus hand-offs under
 * way) number min(count, C), and the rest of the count is in the ring or
 * about to be pushed by a submitter holding mu. Proof sketch: a fast-path
 * start requires count < C before it; a hand-off passes a rail on without
 * freeing it; a queued op is counted and pushed in one critical section, and
 * a hand-off pops under mu, so it always finds the op its decrement saw.
 *
 * Trampoline. A hand-off runs the next start on the finishing thread. If that
 * start calls ln_done itself, the hand-off would recurse, once per queued
 * operation (a million queued immediate operations would blow the stack).
 * Instead each thread keeps a chain of dispatch frames (thread-local, on its
 * stack): a hand-off for a limiter that already has a frame on this thread
 * only bumps that frame's `owed` count, and the frame's loop pops and starts
 * owed operations one after another. Stack depth stays constant.
 *
 * Tokens carry no per-operation state: ln_done needs only the limiter, so
 * every token of a limiter is the `token` member embedded in it. Nothing is
 * allocated per operation; queued operations cost one slot of a ring that
 * grows by doubling (bounded by max_pending when set).
 *
 * Waiting. The finisher that takes the count to zero wakes ln_limiter_wait
 * only if it saw WAITER in its own decrement, so the common path never locks.
 * A waiter registers WAITER with a CAS under mu and then sleeps until the
 * waking finisher bumps `gen` under mu; it returns only once it reads state
 * == 0 (count zero and no finisher that saw WAITER still on its way to mu), so
 * ln_limiter_destroy never frees the limiter under a finisher's feet.
 *
 * Lock order: only `mu`; no user code (start) ever runs with it held.
 * A start that submits to its own limiter with LN_FULL_BLOCK may deadlock:
 * the room it waits for can be owed to a frame further up its own stack.
 * Not allowed: ln_limiter_destroy concurrently with any other call on the
 * same limiter (submit, or ln_done of an operation submitted meanwhile).
 */
#include "internal.h"

#include <stdatomic.h>
#include <stdbool.h>

#define WAITER ((size_t)1) /* bit 0 of state */
#define ONE ((size_t)2)    /* one operation in state */

struct ln_done_token {
    ln_limiter *lim;
};

typedef struct pending_op {
    ln_start_fn start;
    void *arg;
} pending_op;

struct ln_limiter {
    ln_done_token token; /* every operation's token; token.lim == this */
    size_t concurrency;
    size_t max_pending; /* 0 = unbounded */
    int when_full;      /* LN_FULL_FAIL or LN_FULL_BLOCK */

    /* Hot: touched by every submit and ln_done. Padding (not _Alignas:
     * ln__malloc promises no 64-byte alignment) keeps it off the lines of
     * the read-only fields above and of mu below. */
    char pad0_[LN_CACHE_LINE];
    atomic_size_t state; /* count * ONE | WAITER */
    atomic_uint_fast64_t failed;
    char pad1_[LN_CACHE_LINE];

    /* Cold: the pending ring and the sleepers, all guarded by mu. */
    pthread_mutex_t mu;
    pthread_cond_t room;   /* a queued op was started: pending shrank */
    pthread_cond_t idle;   /* gen changed: the count reached zero */
    pending_op *ring;      /* capacity cap, a power of two (or 0) */
    size_t cap, head, len; /* ring[head .. head+len) mod cap */
    size_t blocked;        /* submitters sleeping on room */
    uint64_t gen;          /* bumped by each wake-up of idle */
};

_Static_assert(LN_LINES_APART(ln_limiter, when_full, state),
               "the limiter's hot word shares a line with its read-only fields");
_Static_assert(LN_LINES_APART(ln_limiter, failed, mu),
               "the limiter's hot word shares a line with its mutex");

/* A dispatch frame: this thread is running hand-offs for lim and owes
 * `owed` more of them. Frames live on the stack of handoff(). */
typedef struct frame {
    ln_limiter *lim;
    size_t owed;
    struct frame *prev;
} frame;

static _Thread_local frame *tls_frames;

void ln_limiter_opts_init(ln_limiter_opts *opts) {
    if (opts == NULL) return;
    opts->concurrency = 1;
    opts->max_pending = 0;
    opts->when_full = LN_FULL_FAIL;
}

int ln_limiter_create(ln_limiter **out, unsigned concurrency) {
    ln_limiter_opts o;
    ln_limiter_opts_init(&o);
    o.concurrency = concurrency;
    return ln_limiter_create_ex(out, &o);
}

int ln_limiter_create_ex(ln_limiter **out, const ln_limiter_opts *opts) {
    if (out == NULL || opts == NULL || opts->concurrency == 0) return LN_EINVAL;
    if (opts->when_full != LN_FULL_FAIL && opts->when_full != LN_FULL_BLOCK) return LN_EINVAL;
    /* Keep count * ONE | WAITER far from overflow. */
    if (opts->max_pending > (SIZE_MAX >> 4)) return LN_EINVAL;

    ln_limiter *lim = ln__malloc(sizeof(*lim));
    if (lim == NULL) return LN_ENOMEM;
    lim->token.lim = lim;
    lim->concurrency = opts->concurrency;
    lim->max_pending = opts->max_pending;
    lim->when_full = opts->when_full;
    atomic_init(&lim->state, 0);
    atomic_init(&lim->failed, 0);
    lim->ring = NULL;
    lim->cap = lim->head = lim->len = 0;
    lim->blocked = 0;
    lim->gen = 0;
    if (pthread_mutex_init(&lim->mu, NULL) != 0) goto fail_mu;
    if (pthread_cond_init(&lim->room, NULL) != 0) goto fail_room;
    if (pthread_cond_init(&lim->idle, NULL) != 0) goto fail_idle;
    *out = lim;
    return 0;

fail_idle:
    pthread_cond_destroy(&lim->room);
fail_room:
    pthread_mutex_destroy(&lim->mu);
fail_mu:
    ln__free(lim);
    return LN_ENOMEM;
}

/* ---- the pending ring (mu held) -------------------------------------- */

/* Make room for one more pending op: 0 or LN_ENOMEM (ring unchanged). */
static int ring_reserve(ln_limiter *lim) {
    if (lim->len < lim->cap) return 0;
    size_t ncap = lim->cap ? lim->cap * 2 : 64;
    pending_op *r = ln__malloc(ncap * sizeof(*r));
    if (r == NULL) return LN_ENOMEM;
    for (size_t i = 0; i < lim->len; i++) r[i] = lim->ring[(lim->head + i) & (lim->cap - 1)];
    ln__free(lim->ring);
    lim->ring = r;
    lim->cap = ncap;
    lim->head = 0;
    return 0;
}

static void ring_push(ln_limiter *lim, ln_start_fn start, void *arg) {
    LN_ASSERT(lim->len < lim->cap && LN_IS_POW2(lim->cap)); /* ring_reserve ran */
    pending_op *op = &lim->ring[(lim->head + lim->len) & (lim->cap - 1)];
    op->start = start;
    op->arg = arg;
    lim->len++;
}

static pending_op ring_shift(ln_limiter *lim) {
    LN_ASSERT(lim->len > 0 && LN_IS_POW2(lim->cap));
    pending_op op = lim->ring[lim->head];
    lim->head = (lim->head + 1) & (lim->cap - 1);
    lim->len--;
    return op;
}

/* ---- hand-off with a trampoline -------------------------------------- */

/* Pop the oldest pending op; the invariant guarantees there is one. Wakes
 * one blocked submitter, since pending just shrank by one. */
static pending_op take_pending(ln_limiter *lim) {
    pthread_mutex_lock(&lim->mu);
    /* The invariant (DESIGN): the decrement that called us saw more than
     * C outstanding, so at least one op is in the ring. */
    LN_ASSERT(lim->len > 0);
    pending_op op = ring_shift(lim);
    if (lim->blocked > 0) pthread_cond_signal(&lim->room);
    pthread_mutex_unlock(&lim->mu);
    return op;
}

/* The caller's rail passes to the oldest pending op. */
static void handoff(ln_limiter *lim) {
    for (frame *f = tls_frames; f != NULL; f = f->prev) {
        if (f->lim == lim) { /* an outer loop on this thread will start it */
            f->owed++;
            return;
        }
    }
    frame self = {lim, 1, tls_frames};
    tls_frames = &self;
    while (self.owed > 0) {
        self.owed--;
        pending_op op = take_pending(lim);
        op.start(op.arg, &lim->token);
    }
    tls_frames = self.prev;
}

/* ---- submit / done ---------------------------------------------------- */

/* Slow path: the limiter looked full. Under mu, either a rail freed in the
 * meantime (start now), or secure ring room, then count and queue the op in
 * one critical section. */
static int submit_slow(ln_limiter *lim, ln_start_fn start, void *arg) {
    const size_t full = lim->concurrency * ONE;
    int rc = 0;
    pthread_mutex_lock(&lim->mu);
    size_t s = atomic_load_explicit(&lim->state, memory_order_relaxed);
    for (;;) {
        if ((s & ~WAITER) < full) { /* a rail freed meanwhile: take it */
            /* acquire: as on the fast path. */
            if (atomic_compare_exchange_weak_explicit(&lim->state, &s, s + ONE,
                                                      memory_order_acquire, memory_order_relaxed)) {
                pthread_mutex_unlock(&lim->mu);
                start(arg, &lim->token);
                return 0;
            }
            continue;
        }
        size_t pending = (s >> 1) - lim->concurrency;
        if (lim->max_pending != 0 && pending >= lim->max_pending) {
            if (lim->when_full != LN_FULL_BLOCK) {
                rc = LN_EAGAIN;
                break;
            }
            lim->blocked++;
            pthread_cond_wait(&lim->room, &lim->mu);
            lim->blocked--;
            s = atomic_load_explicit(&lim->state, memory_order_relaxed);
            continue;
        }
        if ((rc = ring_reserve(lim)) != 0) break;
        /* relaxed: the op is published to its starter by mu, not by state;
         * the increment only has to be ordered with finishers' decrements,
         * which the single modification order of state does. */
        if (atomic_compare_exchange_weak_explicit(&lim->state, &s, s + ONE, memory_order_relaxed,
                                                  memory_order_relaxed)) {
            ring_push(lim, start, arg);
            break;
        }
    }
    /* Leaving without a slot: pass on a wake-up a hand-off meant for us. */
    if (rc != 0 && lim->blocked > 0) pthread_cond_signal(&lim->room);
    pthread_mutex_unlock(&lim->mu);
    return rc;
}

int ln_limiter_submit(ln_limiter *lim, ln_start_fn start, void *arg) {
    if (lim == NULL || start == NULL) return LN_EINVAL;
    const size_t full = lim->concurrency * ONE;
    size_t s = atomic_load_explicit(&lim->state, memory_order_relaxed);
    while ((s & ~WAITER) < full) {
        /* acquire on success: pairs with the release decrement of the
         * ln_done that freed this rail, so that operation's effects happen
         * before this start (with concurrency 1 the limiter is a lock). */
        if (atomic_compare_exchange_weak_explicit(&lim->state, &s, s + ONE, memory_order_acquire,
                                                  memory_order_relaxed)) {
            start(arg, &lim->token);
            return 0;
        }
    }
    return submit_slow(lim, start, arg);
}

void ln_done(ln_done_token *token, int err) {
    if (token == NULL) return;
    ln_limiter *lim = token->lim;
    /* Read before the decrement: once it is done, a waiter may free lim
     * unless this call is the one that still owes it a wake-up. */
    const size_t conc = lim->concurrency;
    /* relaxed: published by the release decrement just below. */
    if (err != 0) atomic_fetch_add_explicit(&lim->failed, 1, memory_order_relaxed);
    /* release: this operation's effects (and the failure count) happen
     * before whatever acquires state later: the next start on this rail and
     * ln_limiter_wait. */
    size_t old = atomic_fetch_sub_explicit(&lim->state, ONE, memory_order_release);
    LN_ASSERT((old >> 1) >= 1); /* one ln_done per started operation */
    if ((old >> 1) > conc) {
        /* Someone is queued (see DESIGN). The count stays >= C >= 1 until
         * the op we start finishes, so the limiter cannot be destroyed under
         * us. */
        handoff(lim);
    } else if (old == (ONE | WAITER)) {
        /* We took the count to zero and a waiter registered before: it
         * sleeps until gen moves, so touching lim here is safe. */
        pthread_mutex_lock(&lim->mu);
        atomic_fetch_and_explicit(&lim->state, ~WAITER, memory_order_relaxed);
        lim->gen++;
        pthread_cond_broadcast(&lim->idle);
        pthread_mutex_unlock(&lim->mu);
    }
}

/* ---- wait / destroy --------------------------------------------------- */

int ln_limiter_wait(ln_limiter *lim) {
    if (lim == NULL) return LN_EINVAL;
    pthread_mutex_lock(&lim->mu);
    /* acquire: pairs with every finisher's release decrement (all later
     * changes of state are read-modify-writes, so they continue the release
     * sequences), making every finished operation's effects visible. */
    size_t s = atomic_load_explicit(&lim->state, memory_order_acquire);
    while (s != 0) {
        /* state != 0: operations are outstanding, or a finisher that saw
         * WAITER is on its way to bump gen. Either way a wake-up will come
         * once WAITER is set. */
        if (!(s & WAITER) &&
            !atomic_compare_exchange_weak_explicit(&lim->state, &s, s | WAITER,
                                                   memory_order_acquire, memory_order_acquire))
            continue;
        uint64_t g = lim->gen;
        while (g == lim->gen) pthread_cond_wait(&lim->idle, &lim->mu);
        s = atomic_load_explicit(&lim->state, memory_order_acquire);
    }
    pthread_mutex_unlock(&lim->mu);
    return atomic_load_explicit(&lim->failed, memory_order_relaxed) ? LN_EFAILED : 0;
}

uint64_t ln_limiter_failed(const ln_limiter *lim) {
    if (lim == NULL) return 0;
    /* relaxed: a statistic; after ln_limiter_wait it is exact. */
    return atomic_load_explicit(&((ln_limiter *)lim)->failed, memory_order_relaxed);
}

void ln_limiter_destroy(ln_limiter *lim) {
    if (lim == NULL) return;
    ln_limiter_wait(lim);
    pthread_cond_destroy(&lim->idle);
    pthread_cond_destroy(&lim->room);
    pthread_mutex_destroy(&lim->mu);
    ln__free(lim->ring);
    ln__free(lim);
}
