/* test_pool_grow.c - the growth policy of a growing lane (min_threads <
 * max_threads): it grows when queued work waits (blocking tasks all get a
 * thread, without a submit to prompt it), and it does not grow for a
 * stream or bursts of short tasks, which the threads already awake run,
 * while tasks of moderate length queued behind a busy thread grow it.
 * No speed is asserted: the bounds are generous (seconds, or "far fewer
 * threads than allowed"). */
#include "testutil.h"

#include <lanes.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static ln_pool *growing_pool(unsigned min, unsigned max) {
    ln_pool_opts o;
    ln_pool_opts_init(&o);
    o.nlanes = 1;
    o.lanes[0] = (ln_lane_opts){"grow", min, max, 10000, NULL, 0};
    ln_pool *p = NULL;
    CHECK_EQ(ln_pool_create(&p, &o), 0);
    return p;
}

/* ---- blocking tasks all run at once ---------------------------------------
 * N tasks that each wait until all N have started (or 10 s): on a lane of
 * min 1, max N they can only all start if the lane grows to N threads. The
 * tasks are submitted in one burst and nothing is submitted afterwards, so
 * the growth must come from the lane itself (the waiting work), not from a
 * later submit. */

typedef struct rendezvous {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int started, want;
} rendezvous;

static void *meet(void *arg) {
    rendezvous *r = arg;
    uint64_t deadline = ln_now_ns() + 10000000000ull;
    pthread_mutex_lock(&r->mu);
    r->started++;
    pthread_cond_broadcast(&r->cv);
    while (r->started < r->want && ln_now_ns() < deadline) {
        pthread_mutex_unlock(&r->mu);
        ln_test_sleep_ms(1);
        pthread_mutex_lock(&r->mu);
    }
    pthread_mutex_unlock(&r->mu);
    return NULL;
}

static void blocking_all_start(unsigned min, unsigned n) {
    ln_pool *p = growing_pool(min, n);
    ln_test_sleep_ms(5); /* the first worker is asleep (or spinning) */
    rendezvous r = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, (int)n};
    uint64_t t0 = ln_now_ns();
    for (unsigned i = 0; i < n; i++) CHECK_EQ(ln_submit(p, 0, meet, &r, NULL), 0);
    pthread_mutex_lock(&r.mu);
    while (r.started < r.want && ln_now_ns() - t0 < 5000000000ull) {
        pthread_mutex_unlock(&r.mu);
        ln_test_sleep_ms(1);
        pthread_mutex_lock(&r.mu);
    }
    int started = r.started;
    pthread_mutex_unlock(&r.mu);
    uint64_t took = ln_now_ns() - t0;
    ln_lane_stats st;
    CHECK_EQ(ln_pool_stats(p, 0, &st), 0);
    printf("min %u max %u: %d of %u started in %.2f ms, %u threads\n", min, n, started, n,
           (double)took / 1e6, st.threads);
    CHECK_EQ(started, (int)n);
    CHECK_EQ(st.threads, n);
    ln_pool_drain(p);
    ln_pool_destroy(p);
}

TEST(blocking_tasks_all_start) {
    blocking_all_start(1, 16);
    blocking_all_start(0, 8);
    blocking_all_start(2, 50);
}

/* ---- a blocking task does not hold up the tasks behind it -----------------
 * One task blocks (until released); short tasks submitted after it, one by
 * one with pauses, must all run while it still blocks. */

static atomic_int release_flag, short_done;

static void *block_until_released(void *arg) {
    (void)arg;
    uint64_t deadline = ln_now_ns() + 10000000000ull;
    while (!atomic_load(&release_flag) && ln_now_ns() < deadline) ln_test_sleep_ms(1);
    return NULL;
}

static void *short_task(void *arg) {
    (void)arg;
    atomic_fetch_add(&short_done, 1);
    return NULL;
}

TEST(blocked_task_does_not_hold_up_others) {
    ln_pool *p = growing_pool(1, 4);
    atomic_store(&release_flag, 0);
    atomic_store(&short_done, 0);
    CHECK_EQ(ln_submit(p, 0, block_until_released, NULL, NULL), 0);
    ln_test_sleep_ms(2);
    for (int i = 0; i < 20; i++) {
        CHECK_EQ(ln_submit(p, 0, short_task, NULL, NULL), 0);
        if (i % 5 == 0) ln_test_sleep_ms(1);
    }
    uint64_t t0 = ln_now_ns();
    while (atomic_load(&short_done) < 20 && ln_now_ns() - t0 < 5000000000ull) ln_test_sleep_ms(1);
    CHECK_EQ(atomic_load(&short_done), 20);
    atomic_store(&release_flag, 1);
    ln_pool_drain(p);
    ln_pool_destroy(p);
}

/* ---- short tasks do not grow the lane -------------------------------------
 * 100,000 no-op tasks submitted in a tight loop, then in bursts of 20 with
 * pauses (the pattern of a job worker taking jobs in steps), on a lane of
 * min 1, max 50 whose threads would not retire during the test: far fewer
 * than 50 threads may start. A lane that grows whenever a submit finds no
 * idle thread reaches 50 within the first bursts. */

static void *noop(void *arg) {
    return arg;
}

static unsigned threads_after(ln_pool *p, long tasks, int burst) {
    for (long i = 0; i < tasks; i++) {
        CHECK_EQ(ln_submit(p, 0, noop, NULL, NULL), 0);
        if (burst > 0 && i % burst == burst - 1) {
            /* a pause of about 100-300 us, without a syscall's jitter */
            uint64_t until = ln_now_ns() + 100000 + (uint64_t)(i / burst % 3) * 100000;
            while (ln_now_ns() < until) {
            }
        }
    }
    ln_pool_drain(p);
    ln_lane_stats st;
    CHECK_EQ(ln_pool_stats(p, 0, &st), 0);
    CHECK_EQ(st.completed, st.submitted);
    return st.threads;
}

TEST(short_tasks_stay_on_few_threads) {
    ln_pool *p = growing_pool(1, 50);
    unsigned stream = threads_after(p, ln_test_scale(100000, 10), 0);
    ln_pool_destroy(p);
    p = growing_pool(1, 50);
    unsigned bursts = threads_after(p, ln_test_scale(100000, 10), 20);
    ln_pool_destroy(p);
    printf("threads after 100,000 no-op tasks (max 50): stream %u, bursts of 20 %u\n", stream,
           bursts);
    /* Generous: a loaded machine may preempt a worker for long enough to
     * grow a few threads; growth per submit reaches 50. */
    CHECK(stream <= 16);
    CHECK(bursts <= 16);
}

/* ---- tasks of moderate length run in parallel -----------------------------
 * 400 tasks of ~90 us of CPU each, submitted at once, on a lane of min 1,
 * max 4: one thread takes one at a time (they are not short), and the
 * work queued behind it waits, so the lane must grow. */

static void *spin_90us(void *arg) {
    uint64_t until = ln_now_ns() + 90000;
    while (ln_now_ns() < until) {
    }
    return arg;
}

TEST(moderate_tasks_grow_the_lane) {
    ln_pool *p = growing_pool(1, 4);
    for (int i = 0; i < 400; i++) CHECK_EQ(ln_submit(p, 0, spin_90us, NULL, NULL), 0);
    ln_pool_drain(p);
    ln_lane_stats st;
    CHECK_EQ(ln_pool_stats(p, 0, &st), 0);
    printf("400 tasks of 90 us, max 4: %u threads\n", st.threads);
    CHECK(st.threads >= 2);
    ln_pool_destroy(p);
}

int main(int argc, char **argv) {
    return ln_test_run(argc, argv,
                       (ln_test_case[]){
                           TESTCASE(blocking_tasks_all_start),
                           TESTCASE(blocked_task_does_not_hold_up_others),
                           TESTCASE(short_tasks_stay_on_few_threads),
                           TESTCASE(moderate_tasks_grow_the_lane),
                           {0, 0},
                       });
}
