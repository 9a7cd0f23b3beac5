/* completion.c - completions (those of ln_submit_cb tasks, task.c),
 * delivered on the caller's (event loop's) thread through an eventfd.
 *
 * DESIGN
 * Workers append completions to a FIFO list under comp_mu and make the
 * eventfd readable by adding 1 to it; only the writer that finds the list
 * empty needs to write, since the reader drains the whole list each time.
 * ln_pool_run_completions reads (clears) the eventfd first and then takes
 * the list, so a completion posted between the two is either in the taken
 * list or leaves the fd readable for the next round: none is lost, and the
 * callbacks run with no lock held.
 */
#include "completion.h"

#include "pool.h"

#include <errno.h>
#include <sys/eventfd.h>
#include <unistd.h>

int ln__completions_init(ln_pool *pool) {
    if (pthread_mutex_init(&pool->comp_mu, NULL) != 0) return LN_ENOMEM;
    pool->comp_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (pool->comp_fd < 0) {
        pthread_mutex_destroy(&pool->comp_mu);
        return errno == ENOMEM ? LN_ENOMEM : LN_EAGAIN;
    }
    return 0;
}

void ln__completions_fini(ln_pool *pool) {
    close(pool->comp_fd);
    pthread_mutex_destroy(&pool->comp_mu);
}

void ln__completion_post(ln_pool *pool, ln__completion *c) {
    LN_ASSERT(c->run != NULL);
    pthread_mutex_lock(&pool->comp_mu);
    int was_empty = pool->comp_head == NULL;
    c->next = NULL;
    if (pool->comp_tail != NULL)
        pool->comp_tail->next = c;
    else
        pool->comp_head = c;
    pool->comp_tail = c;
    pthread_mutex_unlock(&pool->comp_mu);
    if (was_empty) {
        uint64_t one = 1;
        /* Cannot fail short of a counter overflow (2^64-2 posts). */
        while (write(pool->comp_fd, &one, sizeof one) < 0 && errno == EINTR) {
        }
    }
}

int ln_pool_completion_fd(ln_pool *pool) {
    return pool == NULL ? LN_EINVAL : pool->comp_fd;
}

int ln_pool_run_completions(ln_pool *pool) {
    if (pool == NULL) return LN_EINVAL;
    uint64_t v;
    while (read(pool->comp_fd, &v, sizeof v) < 0 && errno == EINTR) {
    }
    pthread_mutex_lock(&pool->comp_mu);
    ln__completion *c = pool->comp_head;
    pool->comp_head = pool->comp_tail = NULL;
    pthread_mutex_unlock(&pool->comp_mu);
    int n = 0;
    while (c != NULL) {
        ln__completion *next = c->next; /* run may free c */
        c->run(c);
        c = next;
        n++;
    }
    return n;
}
