/* queue_ring.c - the default task queue: a ring of fixed-size chunks
 * (the counterpart of Piscina's FixedQueue).
 *
 * DESIGN
 * Items are stored by value in chunks of LN_RING_CHUNK slots linked head to
 * tail. push writes at tail->items[tail_pos]; shift reads at
 * head->items[head_pos]. A drained head chunk is kept as a spare instead of
 * being freed, so a steady stream of push/shift touches the allocator only
 * when the queue grows past what it held before (one spare is kept; more
 * are freed). Each chunk is a power-of-two ring only in the sense that its
 * positions run 0..LN_RING_CHUNK-1; chunks are never wrapped into, which
 * keeps the indices trivially correct. All calls happen under the lane's
 * lock (see lanes.h), so there is no synchronisation here.
 */
#include "internal.h"

#define LN_RING_CHUNK 2048 /* slots per chunk: 64 KiB of 32-byte items */

typedef struct chunk {
    struct chunk *next;
    unsigned head_pos; /* next slot to shift */
    unsigned tail_pos; /* next slot to push */
    ln_queue_item items[LN_RING_CHUNK];
} chunk;

typedef struct ring {
    chunk *head;  /* oldest chunk (shift side) */
    chunk *tail;  /* newest chunk (push side) */
    chunk *spare; /* one drained chunk kept for reuse, or NULL */
    size_t size;
} ring;

static chunk *chunk_new(ring *r) {
    chunk *c = r->spare;
    if (c != NULL) {
        r->spare = NULL;
    } else {
        c = ln__malloc(sizeof *c);
        if (c == NULL) return NULL;
    }
    c->next = NULL;
    c->head_pos = 0;
    c->tail_pos = 0;
    return c;
}

static int ring_create(void **state) {
    ring *r = ln__calloc(1, sizeof *r);
    if (r == NULL) return LN_ENOMEM;
    r->head = r->tail = chunk_new(r);
    if (r->head == NULL) {
        ln__free(r);
        return LN_ENOMEM;
    }
    *state = r;
    return 0;
}

static void ring_destroy(void *state) {
    ring *r = state;
    if (r == NULL) return;
    for (chunk *c = r->head, *n; c != NULL; c = n) {
        n = c->next;
        ln__free(c);
    }
    ln__free(r->spare);
    ln__free(r);
}

static int ring_push(void *state, const ln_queue_item *item) {
    ring *r = state;
    chunk *t = r->tail;
    if (t->tail_pos == LN_RING_CHUNK) {
        chunk *c = chunk_new(r);
        if (c == NULL) return LN_ENOMEM;
        t->next = c;
        r->tail = t = c;
    }
    t->items[t->tail_pos++] = *item;
    r->size++;
    return 0;
}

static int ring_shift(void *state, ln_queue_item *out) {
    ring *r = state;
    chunk *h = r->head;
    if (h->head_pos == h->tail_pos) {
        if (h->next == NULL) {
            /* Empty: rewind the only chunk so it is reused from slot 0. */
            h->head_pos = h->tail_pos = 0;
            return 0;
        }
        /* head is drained and a newer chunk exists: retire head. */
        r->head = h->next;
        if (r->spare == NULL)
            r->spare = h;
        else
            ln__free(h);
        h = r->head;
    }
    *out = h->items[h->head_pos++];
    r->size--;
    return 1;
}

static size_t ring_size(const void *state) {
    return ((const ring *)state)->size;
}

const ln_queue_ops ln_queue_ring = {
    LN_QUEUE_OPS_VERSION, "ring", ring_create, ring_destroy, ring_push, ring_shift, ring_size,
};
