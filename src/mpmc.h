/* mpmc.h - a bounded multi-producer multi-consumer ring of ln_queue_item,
 * the lock-free front of a fixed-size lane (see lane.h).
 *
 * DESIGN (after Dmitry Vyukov's bounded MPMC queue, in the style of
 * Concurrency Kit's rings: power-of-two size, free-running positions
 * compared by difference, producer and consumer positions on separate
 * cache lines.)
 * Each cell carries a sequence number that says whose turn it is:
 *   seq == pos          the cell is free for the producer of position pos
 *   seq == pos + 1      the cell holds the item of position pos
 *   seq == pos + size   freed by its consumer, free for position pos + size
 * A producer claims position pos with a CAS on 'tail', writes the item,
 * then publishes it by storing seq = pos + 1. A consumer claims positions
 * with a CAS on 'head' -- several at once when consecutive cells are all
 * published -- copies the items out, then frees each cell by storing
 * seq = pos + size. The release store of seq and the acquire load that
 * observes it order the item's bytes, which are plain memory.
 *
 * Publication is a release store; the submit path then reads the lane's
 * sleeper count after ln__barrier_light(), the counterpart of a worker's
 * ln__barrier_heavy() before its last look (ln__mpmc_ready): no item is
 * left behind a sleeping worker (barrier.h, docs/internals/wakeup.md).
 *
 * Not lock-free in the strict sense: a producer preempted between its CAS
 * and its publication holds up consumers at that cell (they see it empty);
 * it is wait-free for everyone else. Capacity is fixed; a full ring makes
 * the caller fall back to the lane's locked queue.
 */
#ifndef LN_MPMC_H
#define LN_MPMC_H

#include "internal.h"

#include <stdatomic.h>

#define LN_MPMC_SLOTS 1024u /* power of two */
_Static_assert(LN_IS_POW2(LN_MPMC_SLOTS), "LN_MPMC_SLOTS must be a power of two");

typedef struct ln__mpmc_cell {
    _Atomic size_t seq;
    ln_queue_item item;
} ln__mpmc_cell;

typedef struct ln__mpmc {
    _Atomic size_t tail; /* next position to produce; producers' line */
    char pad1_[LN_CACHE_LINE - sizeof(size_t)];
    _Atomic size_t head; /* next position to consume; consumers' line */
    char pad2_[LN_CACHE_LINE - sizeof(size_t)];
    ln__mpmc_cell cells[LN_MPMC_SLOTS];
} ln__mpmc;

_Static_assert(LN_LINES_APART(ln__mpmc, tail, head), "mpmc producer and consumer lines meet");
_Static_assert(LN_LINES_APART(ln__mpmc, head, cells), "mpmc head shares a line with the cells");

void ln__mpmc_init(ln__mpmc *q);

/* Append *item: 1 if stored, 0 if the ring is full. Any thread. */
int ln__mpmc_push(ln__mpmc *q, const ln_queue_item *item);

/* Append up to n items (fn, args[i], owner, enq_ns) with one claim:
 * the number stored (0 if full). Any thread. */
size_t ln__mpmc_push_many(ln__mpmc *q, ln_fn fn, void *const *args, void *owner, uint64_t enq_ns,
                          size_t n);

/* Take up to max (>= 1) items in order into out: the number taken, 0 if
 * empty. Any thread. */
unsigned ln__mpmc_pop(ln__mpmc *q, ln_queue_item *out, unsigned max);

/* Items published or being published (tail - head); exact when quiet. */
size_t ln__mpmc_size(ln__mpmc *q);

/* Positions claimed by producers so far: the ring's share of "submitted". */
size_t ln__mpmc_pushed(ln__mpmc *q);

/* 1 if the next cell to consume holds a published item: the worker's last
 * look before sleeping, after ln__barrier_heavy (see DESIGN). */
int ln__mpmc_ready(ln__mpmc *q);

/* The same, relaxed, for polling: it reads head (consumers' line) and the
 * next cell, never tail, so a spinning worker does not take the line every
 * producer's CAS needs. */
int ln__mpmc_peek(ln__mpmc *q);

#endif
