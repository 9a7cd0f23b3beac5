/* test_stress.c - millions of random submit / cancel / wait / group
 * operations from several threads across lanes with small bounds; every
 * task must end exactly once (ran or canceled), and the pool's counters
 * must agree with what the threads saw. Run under TSan too. */
#include "testutil.h"

#include <lanes.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#define NTHREADS 3

typedef struct slot {
    atomic_int ran; /* times the task body ran */
} slot;

static ln_pool *pool;
static slot *slots;
static atomic_long next_slot;
static atomic_long canceled_total, accepted_total, refused_total;

static void *body(void *arg) {
    slot *s = arg;
    atomic_fetch_add_explicit(&s->ran, 1, memory_order_relaxed);
    return s;
}

static void *driver(void *arg) {
    uint64_t seed = (uint64_t)(uintptr_t)arg * 0x9E3779B97F4A7C15ull + 1;
    long ops = ln_test_scale(400000, 20);
    ln_group *g;
    CHECK_EQ(ln_group_create(&g, pool), 0);
    ln_task *held[64] = {0};
    long held_slot[64];
    for (long i = 0; i < ops; i++) {
        uint64_t r = ln_test_rand(&seed);
        int lane = (int)(r % 3);
        unsigned flags = (r >> 8) % 4 == 0 ? LN_SUBMIT_WAIT : LN_SUBMIT_NOWAIT;
        long id = atomic_fetch_add(&next_slot, 1);
        slot *s = &slots[id];
        switch ((r >> 4) % 4) {
        case 0: { /* fire and forget */
            int rc = ln_submit_ex(pool, lane, body, s, flags, NULL);
            CHECK(rc == 0 || rc == LN_EAGAIN);
            atomic_fetch_add(rc == 0 ? &accepted_total : &refused_total, 1);
            break;
        }
        case 1: { /* group member */
            int rc = ln_group_submit_ex(g, lane, body, s, flags);
            CHECK(rc == 0 || rc == LN_EAGAIN);
            atomic_fetch_add(rc == 0 ? &accepted_total : &refused_total, 1);
            break;
        }
        default: { /* future: keep it, maybe cancel, wait later */
            unsigned k = (unsigned)(r >> 16) % 64;
            if (held[k] != NULL) {
                void *res = NULL;
                int rc = ln_task_wait(held[k], &res);
                if (rc == 0) {
                    CHECK(res == &slots[held_slot[k]]);
                    CHECK_EQ(atomic_load(&slots[held_slot[k]].ran), 1);
                } else {
                    CHECK_EQ(rc, LN_ECANCELED);
                    CHECK_EQ(atomic_load(&slots[held_slot[k]].ran), 0);
                    atomic_fetch_add(&canceled_total, 1);
                }
                ln_task_release(held[k]);
                held[k] = NULL;
            }
            int rc = ln_submit_ex(pool, lane, body, s, flags, &held[k]);
            CHECK(rc == 0 || rc == LN_EAGAIN);
            if (rc != 0) {
                atomic_fetch_add(&refused_total, 1);
                held[k] = NULL;
                break;
            }
            atomic_fetch_add(&accepted_total, 1);
            held_slot[k] = id;
            if ((r >> 24) % 3 == 0) {
                rc = ln_task_cancel(held[k]);
                CHECK(rc == 0 || rc == LN_EBUSY);
            }
        }
        }
        if ((r >> 32) % 5000 == 0) CHECK_EQ(ln_group_wait(g), 0);
    }
    for (int k = 0; k < 64; k++) {
        if (held[k] == NULL) continue;
        int rc = ln_task_wait(held[k], NULL);
        CHECK(rc == 0 || rc == LN_ECANCELED);
        if (rc == LN_ECANCELED) atomic_fetch_add(&canceled_total, 1);
        ln_task_release(held[k]);
    }
    CHECK_EQ(ln_group_wait(g), 0);
    ln_group_destroy(g);
    return NULL;
}

TEST(random_operations_exactly_once) {
    ln_pool_opts o;
    ln_pool_opts_init(&o);
    o.nlanes = 3;
    o.lanes[0].min_threads = 2; /* fixed and unbounded: the lock-free ring */
    o.lanes[0].max_threads = 2;
    o.lanes[1].min_threads = 0;
    o.lanes[1].max_threads = 3;
    o.lanes[1].idle_timeout_ms = 1; /* threads come and go constantly */
    o.lanes[1].queue = &ln_queue_list;
    o.lanes[2].max_queue = 8;
    o.spin_us = 5;
    CHECK_EQ(ln_pool_create(&pool, &o), 0);
    long cap = ln_test_scale(400000, 20) * NTHREADS;
    slots = calloc((size_t)cap, sizeof *slots);
    pthread_t th[NTHREADS];
    for (uintptr_t i = 0; i < NTHREADS; i++) pthread_create(&th[i], NULL, driver, (void *)(i + 1));
    for (int i = 0; i < NTHREADS; i++) pthread_join(th[i], NULL);
    CHECK_EQ(ln_pool_drain(pool), 0);
    long ran = 0, twice = 0;
    for (long i = 0; i < cap; i++) {
        int n = atomic_load(&slots[i].ran);
        ran += n;
        if (n > 1) twice++;
    }
    CHECK_EQ(twice, 0);
    uint64_t completed = 0, canceled = 0, submitted = 0;
    for (int lane = 0; lane < 3; lane++) {
        ln_lane_stats st;
        CHECK_EQ(ln_pool_stats(pool, lane, &st), 0);
        completed += st.completed;
        canceled += st.canceled;
        submitted += st.submitted;
        CHECK_EQ(st.queued, 0);
    }
    CHECK_EQ(submitted, atomic_load(&accepted_total));
    CHECK_EQ(completed, ran);
    CHECK_EQ(completed + canceled, submitted);
    CHECK_EQ(canceled, atomic_load(&canceled_total));
    CHECK(atomic_load(&refused_total) > 0); /* the bounds were exercised */
    printf("accepted %ld, ran %ld, canceled %ld, refused (full) %ld\n",
           atomic_load(&accepted_total), ran, atomic_load(&canceled_total),
           atomic_load(&refused_total));
    ln_pool_destroy(pool);
    free(slots);
}

int main(int argc, char **argv) {
    return ln_test_run(argc, argv, (ln_test_case[]){TESTCASE(random_operations_exactly_once), {0}});
}
