/* test_mpmc.c - validators of the lock-free rings in front of fixed lanes
 * (src/mpmc.c, src/spmc.c): several producers (one for spmc) and
 * consumers at once, every item taken exactly once and whole, each
 * producer's items seen in order by any one consumer, and the
 * no-lost-wake-up protocol of a fixed lane under constant sleeping. */
#include "testutil.h"

#include "barrier.h"
#include "mpmc.h"
#include "spmc.h"

#include <lanes.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define PRODUCERS 2
#define CONSUMERS 2

static ln__mpmc ring;
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

/* ---- the single-producer ring -------------------------------------------
 * Item i carries arg = i and, derived from i, fn, owner and enq values
 * that change in runs of different lengths, so the producer's "write only
 * what changed" path is taken and skipped in every combination; a consumer
 * that saw a stale slot would see a field that does not match its arg. */

static ln__spmc sring;
static long spmc_total;
static atomic_long spmc_taken;
static atomic_int *spmc_seen;

static void *fn_a(void *a) {
    return a;
}
static void *fn_b(void *a) {
    return a;
}
static ln_fn fn_of(long i) {
    return (i / 200) % 2 ? fn_b : fn_a;
}
static void *owner_of(long i) {
    return (void *)(uintptr_t)(i / 100 * 8);
}
static uint64_t enq_of(long i) {
    return i % 16 == 0 ? (uint64_t)i + 1 : 0;
}

static void *spmc_producer(void *arg) {
    (void)arg;
    void *args[37];
    for (long i = 0; i < spmc_total;) {
        if (i % 5 == 0 && i + 37 <= spmc_total && i / 100 == (i + 36) / 100) {
            /* push_many carries one fn, owner and stamp (0 here): use runs
             * where fn and owner do not change (both change at multiples
             * of 100). */
            /* Mark them (2) before they can be taken; unmark what did
             * not fit, which no consumer can see yet. */
            for (long k = 0; k < 37; k++) {
                args[k] = (void *)(uintptr_t)(i + k);
                CHECK_EQ(atomic_fetch_add(&spmc_seen[i + k], 2), 0);
            }
            size_t n = ln__spmc_push_many(&sring, fn_of(i), args, owner_of(i), 0, 37);
            for (long k = (long)n; k < 37; k++) atomic_fetch_sub(&spmc_seen[i + k], 2);
            i += (long)n;
            if (n == 0 && !ln__spmc_wait_room(&sring, 20000, 20000)) sched_yield();
            continue;
        }
        ln_queue_item it = {fn_of(i), (void *)(uintptr_t)i, owner_of(i), enq_of(i)};
        if (ln__spmc_push(&sring, &it)) {
            i++;
        } else if (!ln__spmc_wait_room(&sring, 20000, 20000)) {
            sched_yield();
        }
    }
    return NULL;
}

static void *spmc_consumer(void *arg) {
    (void)arg;
    long last = -1;
    ln_queue_item out[7];
    while (atomic_load(&spmc_taken) < spmc_total) {
        unsigned n = ln__spmc_pop(&sring, out, 1 + (unsigned)(atomic_load(&spmc_taken) % 7));
        for (unsigned k = 0; k < n; k++) {
            long i = (long)(uintptr_t)out[k].arg;
            CHECK(i > last && i < spmc_total); /* in order, per consumer */
            last = i;
            CHECK(out[k].fn == fn_of(i));
            CHECK(out[k].owner == owner_of(i));
            /* A push_many item (marked 2 by the producer) has stamp 0. */
            int mark = atomic_load(&spmc_seen[i]);
            CHECK(out[k].enq_ns == (mark == 2 ? 0 : enq_of(i)));
            CHECK_EQ(atomic_fetch_add(&spmc_seen[i], 1) & 1, 0); /* taken once */
        }
        atomic_fetch_add(&spmc_taken, n);
        if (n == 0) sched_yield();
    }
    return NULL;
}

TEST(owned_ring_exactly_once_in_order) {
    spmc_total = ln_test_scale(1000000, 20);
    spmc_seen = calloc((size_t)spmc_total, sizeof *spmc_seen);
    ln__spmc_init(&sring);
    pthread_t p, c[CONSUMERS + 1];
    pthread_create(&p, NULL, spmc_producer, NULL);
    for (int i = 0; i < CONSUMERS + 1; i++) pthread_create(&c[i], NULL, spmc_consumer, NULL);
    pthread_join(p, NULL);
    for (int i = 0; i < CONSUMERS + 1; i++) pthread_join(c[i], NULL);
    for (long i = 0; i < spmc_total; i++) CHECK(atomic_load(&spmc_seen[i]) & 1);
    ln_queue_item out;
    CHECK_EQ(ln__spmc_pop(&sring, &out, 1), 0);
    CHECK_EQ(ln__spmc_size(&sring), 0);
    CHECK_EQ(ln__spmc_pushed(&sring), (size_t)spmc_total);
    free(spmc_seen);
}

TEST(owned_ring_full_and_wraparound) {
    ln__spmc_init(&sring);
    ln_queue_item it = {fn_a, NULL, NULL, 0}, out[LN_SPMC_SLOTS];
    for (int lap = 0; lap < 5; lap++) {
        for (unsigned i = 0; i < LN_SPMC_SLOTS; i++) {
            it.arg = (void *)(uintptr_t)i;
            it.enq_ns = lap % 2 ? i : 0;
            CHECK_EQ(ln__spmc_push(&sring, &it), 1);
        }
        CHECK_EQ(ln__spmc_push(&sring, &it), 0);                /* full */
        CHECK_EQ(ln__spmc_wait_room(&sring, 100000, 20000), 0); /* and nobody takes */
        CHECK_EQ(ln__spmc_ready(&sring), 1);
        CHECK_EQ(ln__spmc_pop(&sring, out, LN_SPMC_SLOTS), LN_SPMC_SLOTS);
        for (unsigned i = 0; i < LN_SPMC_SLOTS; i++) {
            CHECK_EQ((uintptr_t)out[i].arg, i);
            CHECK_EQ(out[i].enq_ns, lap % 2 ? i : 0);
        }
        CHECK_EQ(ln__spmc_ready(&sring), 0);
        CHECK_EQ(ln__spmc_peek(&sring), 0);
    }
    CHECK_EQ(ln__spmc_pushed(&sring), 5 * LN_SPMC_SLOTS);
}

/* ---- fixed lanes --------------------------------------------------------- */

static void *ident(void *a) {
    return a;
}

/* One submitter's rounds: submit, wait, sometimes drain. */
static void *wakeup_rounds(void *arg) {
    ln_pool *p = arg;
    long rounds = ln_test_scale(40000, 10);
    for (long i = 0; i < rounds; i++) {
        ln_task *t;
        CHECK_EQ(ln_submit(p, 0, ident, (void *)(uintptr_t)i, &t), 0);
        void *r;
        CHECK_EQ(ln_task_wait(t, &r), 0);
        CHECK_EQ((uintptr_t)r, (uintptr_t)i);
        ln_task_release(t);
        if (i % 7 == 0) CHECK_EQ(ln_pool_drain(p), 0);
    }
    return NULL;
}

/* No spinning: every submit meets a worker that is asleep or about to be.
 * A lost wake-up hangs one round and fails by timeout. With two
 * submitters, the first owns the lane's single-producer ring and the other
 * uses the shared ring: both sides of the sleep protocol, at once. */
static void wakeup_case(int submitters) {
    ln_pool_opts o;
    ln_pool_opts_init(&o);
    o.spin_us = 0;
    o.lanes[0].min_threads = o.lanes[0].max_threads = 2;
    ln_pool *p;
    CHECK_EQ(ln_pool_create(&p, &o), 0);
    pthread_t other;
    if (submitters > 1) pthread_create(&other, NULL, wakeup_rounds, p);
    wakeup_rounds(p);
    if (submitters > 1) pthread_join(other, NULL);
    ln_lane_stats st;
    CHECK_EQ(ln_pool_stats(p, 0, &st), 0);
    CHECK_EQ(st.submitted, (uint64_t)submitters * (uint64_t)ln_test_scale(40000, 10));
    ln_pool_destroy(p);
}

/* Which form of the sleep barrier this run tests (barrier.h): the
 * fallback when LANES_NO_MEMBARRIER=1 (test_mpmc_fences), else membarrier
 * where the kernel has it. */
TEST(barrier_form) {
    ln__barrier_init();
    const char *off = getenv("LANES_NO_MEMBARRIER");
    if (off != NULL && strcmp(off, "1") == 0) CHECK_EQ(ln__barrier_asymmetric, 0);
    fprintf(stderr, "sleep barrier: %s\n",
            ln__barrier_asymmetric ? "membarrier (asymmetric)" : "symmetric");
}

TEST(fixed_lane_never_loses_a_wakeup) {
    wakeup_case(1);
}
TEST(fixed_lane_never_loses_a_wakeup_two_submitters) {
    wakeup_case(2);
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
    for (uintptr_t i = 0; i < 5000; i++)
        CHECK_EQ(ln_submit(p, 0, order_record, (void *)i, NULL), 0);
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
                                        TESTCASE(owned_ring_exactly_once_in_order),
                                        TESTCASE(owned_ring_full_and_wraparound),
                                        TESTCASE(barrier_form),
                                        TESTCASE(fixed_lane_never_loses_a_wakeup_two_submitters),
                                        TESTCASE(fixed_lane_never_loses_a_wakeup),
                                        TESTCASE(fixed_lane_backlog_keeps_order),
                                        {0}});
}
