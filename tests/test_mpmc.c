/* test_mpmc.c - validator of the lock-free ring in front of fixed lanes
 * (src/mpmc.c): several producers and consumers at once, every item taken
 * exactly once, each producer's items seen in order by any one consumer,
 * and the no-lost-wake-up protocol of a fixed lane under constant sleeping. */
#include "testutil.h"

#include "mpmc.h"

#include <lanes.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#define PRODUCERS 2
#define CONSUMERS 2

static ln_mpmc ring;
static long per_producer;
static atomic_int *seen; /* [producer * per_producer + seq] */
static atomic_long consumed;

static void *producer(void *arg) {
    uintptr_t id = (uintptr_t)arg;
    for (long i = 0; i < per_producer; i++) {
        ln_queue_item it = {NULL, (void *)id, NULL, (uint64_t)i};
        while (!ln__mpmc_push(&ring, &it)) sched_yield(); /* full: retry */
    }
    return NULL;
}

static void *consumer(void *arg) {
    (void)arg;
    long last[PRODUCERS];
    for (int p = 0; p < PRODUCERS; p++) last[p] = -1;
    ln_queue_item out[7];
    long total = per_producer * PRODUCERS;
    while (atomic_load(&consumed) < total) {
        unsigned n = ln__mpmc_pop(&ring, out, 1 + (unsigned)(atomic_load(&consumed) % 7));
        for (unsigned i = 0; i < n; i++) {
            uintptr_t p = (uintptr_t)out[i].arg;
            long seq = (long)out[i].enq_ns;
            CHECK(p < PRODUCERS);
            CHECK(seq > last[p]); /* per-producer order holds per consumer */
            last[p] = seq;
            CHECK_EQ(atomic_fetch_add(&seen[p * per_producer + seq], 1), 0);
        }
        atomic_fetch_add(&consumed, n);
        if (n == 0) sched_yield();
    }
    return NULL;
}

TEST(ring_exactly_once_in_order) {
    per_producer = ln_test_scale(500000, 20);
    seen = calloc((size_t)(per_producer * PRODUCERS), sizeof *seen);
    ln__mpmc_init(&ring);
    pthread_t p[PRODUCERS], c[CONSUMERS];
    for (uintptr_t i = 0; i < PRODUCERS; i++) pthread_create(&p[i], NULL, producer, (void *)i);
    for (int i = 0; i < CONSUMERS; i++) pthread_create(&c[i], NULL, consumer, NULL);
    for (int i = 0; i < PRODUCERS; i++) pthread_join(p[i], NULL);
    for (int i = 0; i < CONSUMERS; i++) pthread_join(c[i], NULL);
    for (long i = 0; i < per_producer * PRODUCERS; i++) CHECK_EQ(atomic_load(&seen[i]), 1);
    ln_queue_item out;
    CHECK_EQ(ln__mpmc_pop(&ring, &out, 1), 0);
    CHECK_EQ(ln__mpmc_size(&ring), 0);
    free(seen);
}

TEST(ring_full_and_wraparound) {
    ln__mpmc_init(&ring);
    ln_queue_item it = {0}, out[LN_MPMC_SLOTS];
    for (int lap = 0; lap < 5; lap++) {
        for (unsigned i = 0; i < LN_MPMC_SLOTS; i++) {
            it.enq_ns = i;
            CHECK_EQ(ln__mpmc_push(&ring, &it), 1);
        }
        CHECK_EQ(ln__mpmc_push(&ring, &it), 0); /* full */
        CHECK_EQ(ln__mpmc_ready(&ring), 1);
        CHECK_EQ(ln__mpmc_pop(&ring, out, LN_MPMC_SLOTS), LN_MPMC_SLOTS);
        for (unsigned i = 0; i < LN_MPMC_SLOTS; i++) CHECK_EQ(out[i].enq_ns, i);
        CHECK_EQ(ln__mpmc_ready(&ring), 0);
    }
    CHECK_EQ(ln__mpmc_pushed(&ring), 5 * LN_MPMC_SLOTS);
}

static void *ident(void *a) { return a; }

TEST(fixed_lane_never_loses_a_wakeup) {
    /* No spinning: every submit meets a worker that is asleep or about to
     * be. A lost wake-up hangs one round and fails by timeout. */
    ln_pool_opts o;
    ln_pool_opts_init(&o);
    o.spin_us = 0;
    o.lanes[0].min_threads = o.lanes[0].max_threads = 2;
    ln_pool *p;
    CHECK_EQ(ln_pool_create(&p, &o), 0);
    long rounds = ln_test_scale(50000, 10);
    for (long i = 0; i < rounds; i++) {
        ln_task *t;
        CHECK_EQ(ln_submit(p, 0, ident, (void *)(uintptr_t)i, &t), 0);
        void *r;
        CHECK_EQ(ln_task_wait(t, &r), 0);
        CHECK_EQ((uintptr_t)r, (uintptr_t)i);
        ln_task_release(t);
        if (i % 7 == 0) CHECK_EQ(ln_pool_drain(p), 0);
    }
    ln_pool_destroy(p);
}

static long order_next;
static void *order_gate(void *arg) {
    pthread_mutex_lock(arg);
    pthread_mutex_unlock(arg);
    return NULL;
}
static void *order_record(void *arg) {
    CHECK_EQ((long)(uintptr_t)arg, order_next); /* one worker: no race */
    order_next++;
    return NULL;
}

TEST(fixed_lane_backlog_keeps_order) {
    /* One worker, blocked; 5000 submits overflow the 1024-slot ring into
     * the backlog; they must still run in submission order. */
    ln_pool_opts o;
    ln_pool_opts_init(&o);
    o.lanes[0].min_threads = o.lanes[0].max_threads = 1;
    ln_pool *p;
    CHECK_EQ(ln_pool_create(&p, &o), 0);
    static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&held);
    CHECK_EQ(ln_submit(p, 0, order_gate, &held, NULL), 0);
    for (uintptr_t i = 0; i < 5000; i++) CHECK_EQ(ln_submit(p, 0, order_record, (void *)i, NULL), 0);
    ln_lane_stats st;
    CHECK_EQ(ln_pool_stats(p, 0, &st), 0);
    CHECK(st.queued >= 4999);
    pthread_mutex_unlock(&held);
    CHECK_EQ(ln_pool_drain(p), 0);
    CHECK_EQ(order_next, 5000);
    CHECK_EQ(ln_pool_stats(p, 0, &st), 0);
    CHECK(st.peak_queued >= 4000);
    ln_pool_destroy(p);
}

int main(int argc, char **argv) {
    return ln_test_run(argc, argv,
                       (ln_test_case[]){TESTCASE(ring_exactly_once_in_order),
                                        TESTCASE(ring_full_and_wraparound),
                                        TESTCASE(fixed_lane_never_loses_a_wakeup),
                                        TESTCASE(fixed_lane_backlog_keeps_order), {0}});
}
