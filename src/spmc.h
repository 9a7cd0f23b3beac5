/* spmc.h - a bounded single-producer multi-consumer ring of ln_queue_item:
 * the ring a fixed lane keeps for its owner thread (lane.h).
 *
 * DESIGN
 * What a queue of tiny tasks costs is mostly cache lines moving between
 * the producer's core and the consumer's. This ring is laid out so that an
 * item moves as few of them as possible:
 *  - Structure of arrays: fn[], arg[], owner[] and enq[] are separate
 *    arrays indexed by position, not an array of 32-byte cells.
 *  - The producer writes a slot of fn[], owner[] or enq[] only when the
 *    value changes from what the slot held a lap ago. It knows that value
 *    without reading the slot: it remembers the fn and owner it wrote last
 *    and since which position, and which slots hold a nonzero enq.
 *    A stream of tasks with one function, one group and sampled
 *    timestamps (mostly 0) then writes only arg[] and, once per lap, a few
 *    enq[] slots: about 8 bytes per item, like a plain SPSC ring of
 *    pointers. Reading a slot whose line is shared costs no transfer.
 *  - Consumers never write a slot: no per-cell sequence to free.
 * Positions are free-running (compared by difference). 'tail' is written
 * by the producer only (release: the slots before it are written), 'head'
 * by consumers with a CAS (release: their reads of the slots come before
 * the producer reuses them, which it acquires).
 *
 * Consumers copy the slots first and claim them after, with the CAS; a
 * consumer that lost the race (head moved) drops what it copied and
 * retries. The slots are atomics read and written relaxed (plain moves on
 * common hardware), so a loser's read of a slot the producer is already
 * rewriting is not a data race, only a discarded value. A winner's copy
 * is exact: the producer reuses a slot only after it saw head pass it.
 *
 * Why skipping an unchanged write is safe: the producer is the only writer
 * of every slot, so the slot still holds what it last wrote there, and that
 * write happens before its release of tail; a consumer that acquires tail
 * reads that same value (or a later one -- only after head passed the
 * slot, and then its claim fails).
 *
 * Progress: the producer never waits (full means "use the backlog"); a
 * consumer retries only when another consumer made progress.
 */
#ifndef LN_SPMC_H
#define LN_SPMC_H

#include "internal.h"

#include <stdatomic.h>

#define LN_SPMC_SLOTS 1024u /* power of two */
_Static_assert(LN_IS_POW2(LN_SPMC_SLOTS), "LN_SPMC_SLOTS must be a power of two");
_Static_assert(LN_SPMC_SLOTS % 64 == 0, "the stamped bitmap holds 64 slots a word");

typedef struct ln__spmc {
    _Atomic size_t tail; /* next position to produce; written by the producer */
    /* The producer's private state (see "unchanged" in DESIGN): its last
     * view of head; the fn and owner it wrote last, and the positions from
     * which every slot written holds them; one bit per slot whose enq is
     * not 0. With these it knows a slot's fn, owner and enq without
     * reading the shared arrays. */
    size_t head_seen;
    ln_fn last_fn;
    void *last_owner;
    size_t fn_since, owner_since;
    uint64_t stamped[LN_SPMC_SLOTS / 64];
    char pad1_[LN_CACHE_LINE];
    _Atomic size_t head; /* next position to consume; consumers' CAS */
    char pad2_[LN_CACHE_LINE - sizeof(size_t)];
    _Atomic(ln_fn) fn[LN_SPMC_SLOTS];
    _Atomic(void *) arg[LN_SPMC_SLOTS];
    _Atomic(void *) owner[LN_SPMC_SLOTS];
    _Atomic uint64_t enq[LN_SPMC_SLOTS];
} ln__spmc;

/* The producer's line (tail and its private state), the consumers' (head)
 * and the slots are apart. */
_Static_assert(LN_LINES_APART(ln__spmc, stamped, head), "spmc producer and consumer lines meet");
_Static_assert(LN_LINES_APART(ln__spmc, head, fn), "spmc head shares a line with the slots");

void ln__spmc_init(ln__spmc *q);

/* ---- the producer's side, inline: it is every submit's path -------------- */

/* Free slots from position t on. Refreshes the producer's view of head
 * only when its cached one says there are none (acquire: pairs with the
 * consumers' release CAS, so their reads of the slots are done). */
static inline size_t ln__spmc_room(ln__spmc *q, size_t t) {
    size_t free_slots = LN_SPMC_SLOTS - (t - q->head_seen);
    if (free_slots == 0) {
        q->head_seen = atomic_load_explicit(&q->head, memory_order_acquire);
        free_slots = LN_SPMC_SLOTS - (t - q->head_seen);
    }
    LN_ASSERT(free_slots <= LN_SPMC_SLOTS); /* head never passes tail */
    return free_slots;
}

/* Write position t. relaxed: tail's release store publishes the slots;
 * a value the slot already holds is not written again (DESIGN). The slot
 * at t was last written at t - LN_SPMC_SLOTS (or never, holding the
 * initial NULL/0, which 'since' = 0 and the bitmap describe as well). */
static inline void ln__spmc_put(ln__spmc *q, size_t t, ln_fn fn, void *arg, void *owner,
                                uint64_t enq) {
    size_t i = t & (LN_SPMC_SLOTS - 1);
    if (fn != q->last_fn) {
        q->last_fn = fn;
        q->fn_since = t;
        atomic_store_explicit(&q->fn[i], fn, memory_order_relaxed);
    } else if (t - q->fn_since < LN_SPMC_SLOTS) {
        atomic_store_explicit(&q->fn[i], fn, memory_order_relaxed); /* older lap differs */
    }
    atomic_store_explicit(&q->arg[i], arg, memory_order_relaxed);
    if (owner != q->last_owner) {
        q->last_owner = owner;
        q->owner_since = t;
        atomic_store_explicit(&q->owner[i], owner, memory_order_relaxed);
    } else if (t - q->owner_since < LN_SPMC_SLOTS) {
        atomic_store_explicit(&q->owner[i], owner, memory_order_relaxed);
    }
    uint64_t bit = (uint64_t)1 << (i & 63);
    if (enq != 0) {
        q->stamped[i / 64] |= bit;
        atomic_store_explicit(&q->enq[i], enq, memory_order_relaxed);
    } else if (q->stamped[i / 64] & bit) {
        q->stamped[i / 64] &= ~bit;
        atomic_store_explicit(&q->enq[i], 0, memory_order_relaxed);
    }
}

/* Producer (one thread only): append *item, 1 if stored, 0 if full. */
static inline int ln__spmc_push(ln__spmc *q, const ln_queue_item *item) {
    size_t t = atomic_load_explicit(&q->tail, memory_order_relaxed); /* ours */
    if (ln__spmc_room(q, t) == 0) return 0;
    ln__spmc_put(q, t, item->fn, item->arg, item->owner, item->enq_ns);
    /* release: the slot's writes happen before a consumer that acquires
     * tail reads them. */
    atomic_store_explicit(&q->tail, t + 1, memory_order_release);
    return 1;
}

/* Producer, after a push found the ring full: wait for room while the
 * consumers make progress. Consumers take in batches, so while one is
 * working room comes back within a batch. Gives up (0) when no consumer
 * took anything for max_idle_ns; after yield_after_ns without progress it
 * yields the CPU every 64 pauses (the consumer may be waiting for this
 * CPU). 1 when there is room. The caller chooses both (submit.c). */
int ln__spmc_wait_room(ln__spmc *q, uint64_t max_idle_ns, uint64_t yield_after_ns);

/* Producer: append up to n items (fn, args[i], owner, enq_ns); the number
 * stored (0 if full). */
size_t ln__spmc_push_many(ln__spmc *q, ln_fn fn, void *const *args, void *owner, uint64_t enq_ns,
                          size_t n);

/* Any thread: take up to max (>= 1) items in order; the number taken. */
unsigned ln__spmc_pop(ln__spmc *q, ln_queue_item *out, unsigned max);

/* Items not yet taken (tail - head); exact when quiet. */
size_t ln__spmc_size(ln__spmc *q);

/* Positions produced so far (acquire): the ring's share of "submitted". */
size_t ln__spmc_pushed(ln__spmc *q);

/* 1 if an item is waiting: relaxed (peek, for polling) or seq_cst (ready,
 * the worker's last look before sleeping; see barrier.h). */
int ln__spmc_peek(ln__spmc *q);
int ln__spmc_ready(ln__spmc *q);

#endif
