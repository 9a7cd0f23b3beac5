/* mpmc.c - the bounded MPMC ring of ln_queue_item; see mpmc.h. */
#include "mpmc.h"

#define MASK (LN_MPMC_SLOTS - 1)

void ln__mpmc_init(ln__mpmc *q) {
    for (size_t i = 0; i < LN_MPMC_SLOTS; i++) atomic_init(&q->cells[i].seq, i);
    atomic_init(&q->tail, 0);
    atomic_init(&q->head, 0);
}

int ln__mpmc_push(ln__mpmc *q, const ln_queue_item *item) {
    /* relaxed: the position is only a guess until the CAS confirms it; the
     * cell's seq (acquire) is what tells us the cell is free. */
    size_t pos = atomic_load_explicit(&q->tail, memory_order_relaxed);
    ln__mpmc_cell *c;
    for (;;) {
        c = &q->cells[pos & MASK];
        /* acquire: pairs with the consumer's release of seq = pos + size,
         * so its read of the old item happens before our overwrite. */
        size_t seq = atomic_load_explicit(&c->seq, memory_order_acquire);
        intptr_t dif = (intptr_t)seq - (intptr_t)pos;
        if (dif == 0) {
            /* relaxed: claiming the position orders nothing by itself. */
            if (atomic_compare_exchange_weak_explicit(&q->tail, &pos, pos + 1, memory_order_relaxed,
                                                      memory_order_relaxed))
                break;
        } else if (dif < 0) {
            return 0; /* the cell still holds an item of the previous lap */
        } else {
            pos = atomic_load_explicit(&q->tail, memory_order_relaxed);
        }
    }
    c->item = *item;
    /* release: publishes the item's bytes to the consumer that acquires
     * seq. The caller's ln__barrier_light orders it before its read of the
     * sleeper count (mpmc.h). */
    atomic_store_explicit(&c->seq, pos + 1, memory_order_release);
    return 1;
}

size_t ln__mpmc_push_many(ln__mpmc *q, ln_fn fn, void *const *args, void *owner, uint64_t enq_ns,
                          size_t n) {
    size_t pos = atomic_load_explicit(&q->tail, memory_order_relaxed);
    size_t k;
    for (;;) {
        /* Count the free cells from pos on (acquire: as in push). */
        k = 0;
        while (k < n && k < LN_MPMC_SLOTS &&
               atomic_load_explicit(&q->cells[(pos + k) & MASK].seq, memory_order_acquire) ==
                   pos + k)
            k++;
        if (k == 0) {
            size_t seq = atomic_load_explicit(&q->cells[pos & MASK].seq, memory_order_acquire);
            if ((intptr_t)seq - (intptr_t)pos < 0) return 0; /* full */
            pos = atomic_load_explicit(&q->tail, memory_order_relaxed);
            continue;
        }
        /* relaxed: as in push; one claim for all k positions. */
        if (atomic_compare_exchange_weak_explicit(&q->tail, &pos, pos + k, memory_order_relaxed,
                                                  memory_order_relaxed))
            break;
    }
    for (size_t i = 0; i < k; i++) {
        ln__mpmc_cell *c = &q->cells[(pos + i) & MASK];
        c->item = (ln_queue_item){fn, args[i], owner, enq_ns};
        /* release: publishes this item; consumers stop at the first cell
         * not yet published, so order is kept. */
        atomic_store_explicit(&c->seq, pos + i + 1, memory_order_release);
    }
    return k; /* the caller's ln__barrier_light follows (mpmc.h) */
}

unsigned ln__mpmc_pop(ln__mpmc *q, ln_queue_item *out, unsigned max) {
    LN_ASSERT(max >= 1);
    size_t pos = atomic_load_explicit(&q->head, memory_order_relaxed);
    unsigned n;
    for (;;) {
        /* Count the published cells from pos on, up to max. acquire: pairs
         * with the producers' publication, so the items' bytes are visible. */
        n = 0;
        while (n < max) {
            size_t seq =
                atomic_load_explicit(&q->cells[(pos + n) & MASK].seq, memory_order_acquire);
            if (seq != pos + n + 1) break;
            n++;
        }
        if (n == 0) {
            size_t seq = atomic_load_explicit(&q->cells[pos & MASK].seq, memory_order_acquire);
            if ((intptr_t)seq - (intptr_t)(pos + 1) < 0) return 0; /* empty */
            /* Another consumer took pos already: retry from the new head. */
            pos = atomic_load_explicit(&q->head, memory_order_relaxed);
            continue;
        }
        /* relaxed: the acquire loads above already ordered the items. */
        if (atomic_compare_exchange_weak_explicit(&q->head, &pos, pos + n, memory_order_relaxed,
                                                  memory_order_relaxed))
            break;
    }
    for (unsigned i = 0; i < n; i++) {
        ln__mpmc_cell *c = &q->cells[(pos + i) & MASK];
        out[i] = c->item;
        /* release: our read of the item happens before a producer of the
         * next lap overwrites it (it acquires this seq). */
        atomic_store_explicit(&c->seq, pos + i + LN_MPMC_SLOTS, memory_order_release);
    }
    return n;
}

size_t ln__mpmc_size(ln__mpmc *q) {
    /* relaxed: a statistic; head is read first so the difference is never
     * negative (tail only grows). */
    size_t head = atomic_load_explicit(&q->head, memory_order_relaxed);
    size_t tail = atomic_load_explicit(&q->tail, memory_order_relaxed);
    return tail - head;
}

size_t ln__mpmc_pushed(ln__mpmc *q) {
    /* acquire: callers compare it with the consumers' finished count. */
    return atomic_load_explicit(&q->tail, memory_order_acquire);
}

int ln__mpmc_peek(ln__mpmc *q) {
    /* relaxed: a hint to stop spinning; the pop that follows is exact. */
    size_t pos = atomic_load_explicit(&q->head, memory_order_relaxed);
    size_t seq = atomic_load_explicit(&q->cells[pos & MASK].seq, memory_order_relaxed);
    return seq == pos + 1;
}

int ln__mpmc_ready(ln__mpmc *q) {
    /* seq_cst: the symmetric form of the sleep protocol (barrier.h) wants
     * the look itself ordered after the caller's fence; it costs nothing
     * extra on x86 and is off the hot path. */
    size_t pos = atomic_load_explicit(&q->head, memory_order_seq_cst);
    size_t seq = atomic_load_explicit(&q->cells[pos & MASK].seq, memory_order_seq_cst);
    return seq == pos + 1;
}
