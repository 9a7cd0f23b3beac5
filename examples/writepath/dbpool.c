/* dbpool.c - fixed-size connection pool with FIFO hand-off.
 *
 * DESIGN: one mutex guards the free list and the queue of waiters. A thread
 * that finds no free connection appends a waiter record (on its own stack,
 * with its own condition variable) to the queue and sleeps. A release hands
 * the connection straight to the oldest waiter (sets waiter->conn, signals
 * only that waiter) instead of putting it back on the free list, so
 * connections go to waiters in arrival order and a release wakes exactly
 * one thread.
 *
 * Invariants (under mu): free_n > 0 implies the waiter queue is empty; a
 * waiter is in the queue exactly while its conn is NULL.
 */
#include "dbpool.h"

#include <pthread.h>
#include <stdlib.h>

typedef struct waiter {
    struct waiter *next;
    pthread_cond_t cond;
    wp_conn *conn; /* set by the releasing thread */
} waiter;

struct wp_dbpool {
    pthread_mutex_t mu;
    unsigned size, free_n;
    wp_conn **all;   /* every connection, for close */
    wp_conn **free_; /* stack of free connections */
    waiter *head, *tail;
};

int wp_dbpool_open(wp_dbpool **out, const char *path, unsigned size) {
    if (size == 0) return -1;
    wp_dbpool *p = calloc(1, sizeof *p);
    if (!p) return -1;
    p->all = calloc(size, sizeof *p->all);
    p->free_ = calloc(size, sizeof *p->free_);
    pthread_mutex_init(&p->mu, NULL);
    p->size = size;
    if (!p->all || !p->free_) {
        wp_dbpool_close(p);
        return -1;
    }
    for (unsigned i = 0; i < size; i++) {
        p->all[i] = wp_conn_open(path);
        if (!p->all[i]) {
            wp_dbpool_close(p);
            return -1;
        }
        p->free_[p->free_n++] = p->all[i];
    }
    *out = p;
    return 0;
}

void wp_dbpool_close(wp_dbpool *p) {
    if (!p) return;
    for (unsigned i = 0; p->all && i < p->size; i++) wp_conn_close(p->all[i]);
    pthread_mutex_destroy(&p->mu);
    free(p->all);
    free(p->free_);
    free(p);
}

wp_conn *wp_dbpool_acquire(wp_dbpool *p) {
    pthread_mutex_lock(&p->mu);
    if (p->free_n > 0) {
        wp_conn *c = p->free_[--p->free_n];
        pthread_mutex_unlock(&p->mu);
        return c;
    }
    waiter w = {.next = NULL, .conn = NULL};
    pthread_cond_init(&w.cond, NULL);
    if (p->tail)
        p->tail->next = &w;
    else
        p->head = &w;
    p->tail = &w;
    while (!w.conn) pthread_cond_wait(&w.cond, &p->mu);
    pthread_mutex_unlock(&p->mu);
    pthread_cond_destroy(&w.cond);
    return w.conn;
}

void wp_dbpool_release(wp_dbpool *p, wp_conn *c) {
    wp_conn_settle(c); /* outside the lock: the connection is still ours */
    pthread_mutex_lock(&p->mu);
    waiter *w = p->head;
    if (w) {
        p->head = w->next;
        if (!p->head) p->tail = NULL;
        w->conn = c;
        /* Signal under the lock: once unlocked, the waiter may return and
         * destroy its condition variable. */
        pthread_cond_signal(&w->cond);
    } else {
        p->free_[p->free_n++] = c;
    }
    pthread_mutex_unlock(&p->mu);
}
