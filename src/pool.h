/* pool.h - the pool: an array of lanes and the completion list of
 * ln_submit_cb tasks. pool.c creates, drains and destroys it; completion.c
 * delivers the completions. Not API.
 *
 * Lock order (never take them the other way round):
 *     lane->mu  ->  task->mu | group->mu | pool->comp_mu
 *     task->mu  ->  pool->comp_mu
 * No lanes lock is ever held while user code (a task function, a
 * completion callback, a queue op excepted) runs.
 */
#ifndef LN_POOL_H
#define LN_POOL_H

#include "completion.h"
#include "internal.h"
#include "lane.h"

#include <pthread.h>

struct ln_pool {
    unsigned nlanes;
    int timing; /* LN_TIMING_OFF, _SAMPLED or _ALL */
    unsigned spin_us;
    int when_full;
    ln__lane lanes[LN_MAX_LANES];

    /* Completions, e.g. of ln_submit_cb tasks (completion.c). */
    pthread_mutex_t comp_mu;
    ln__completion *comp_head, *comp_tail;
    int comp_fd; /* eventfd */
};

#endif
