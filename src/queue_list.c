/* queue_list.c - a linked list of individually allocated nodes (the
 * counterpart of Piscina's array queue): one allocation per push and one
 * free per shift. Kept as the simple baseline the ring is measured against.
 * All calls happen under the lane's lock (see lanes.h). */
#include "internal.h"

typedef struct node {
    struct node *next;
    ln_queue_item item;
} node;

typedef struct list {
    node *head, *tail;
    size_t size;
} list;

static int list_create(void **state) {
    list *l = ln__calloc(1, sizeof *l);
    if (l == NULL) return LN_ENOMEM;
    *state = l;
    return 0;
}

static void list_destroy(void *state) {
    list *l = state;
    if (l == NULL) return;
    for (node *n = l->head, *next; n != NULL; n = next) {
        next = n->next;
        ln__free(n);
    }
    ln__free(l);
}

static int list_push(void *state, const ln_queue_item *item) {
    list *l = state;
    node *n = ln__malloc(sizeof *n);
    if (n == NULL) return LN_ENOMEM;
    n->next = NULL;
    n->item = *item;
    if (l->tail != NULL)
        l->tail->next = n;
    else
        l->head = n;
    l->tail = n;
    l->size++;
    return 0;
}

static int list_shift(void *state, ln_queue_item *out) {
    list *l = state;
    node *n = l->head;
    if (n == NULL) return 0;
    l->head = n->next;
    if (l->head == NULL) l->tail = NULL;
    *out = n->item;
    ln__free(n);
    l->size--;
    return 1;
}

static size_t list_size(const void *state) {
    return ((const list *)state)->size;
}

const ln_queue_ops ln_queue_list = {
    LN_QUEUE_OPS_VERSION, "list", list_create, list_destroy, list_push, list_shift, list_size,
};
