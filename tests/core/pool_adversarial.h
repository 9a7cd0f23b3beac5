/* pool_adversarial.h - what the pool's adversarial tests share: counting
 * and no-op tasks, a per-task exactly-once record and a pool maker
 * (test_pool_adversarial.c, test_pool_destroy_races.c). */
#ifndef LN_TEST_POOL_ADVERSARIAL_H
#define LN_TEST_POOL_ADVERSARIAL_H

#include "testutil.h"

#include <lanes.h>

#include "pool.h" /* white-box: room_waiters, to know submitters are blocked */

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static inline void *count_task(void *arg) {
    atomic_fetch_add((_Atomic int *)arg, 1);
    return arg;
}
static inline void *noop_task(void *arg) {
    return arg;
}

/* Per-task record for exactly-once checks. */
typedef struct rec {
    _Atomic int ran;
    _Atomic int completions;
    _Atomic int status; /* status of the completion */
} rec;

static inline void *rec_task(void *arg) {
    atomic_fetch_add(&((rec *)arg)->ran, 1);
    return arg;
}
static inline void rec_done(void *arg, void *result, int status) {
    rec *r = arg;
    atomic_fetch_add(&r->completions, 1);
    atomic_store(&r->status, status);
    if (status == 0)
        CHECK(result == arg);
    else
        CHECK(result == NULL);
}

static inline ln_pool *make_pool(unsigned nlanes, const ln_lane_opts *lanes, int when_full,
                                 unsigned spin_us) {
    ln_pool_opts o;
    ln_pool_opts_init(&o);
    o.nlanes = nlanes;
    for (unsigned i = 0; i < nlanes; i++) o.lanes[i] = lanes[i];
    o.when_full = when_full;
    o.spin_us = spin_us;
    ln_pool *p = NULL;
    CHECK_EQ(ln_pool_create(&p, &o), 0);
    return p;
}

#endif
