/* test_forkjoin.c - nested fork-join on the pool: waits inside a task help
 * instead of blocking (ln_group_wait, ln_group_destroy, ln_task_wait), a
 * group's wait covers the tasks its tasks add to it, and helping past the
 * depth bound (docs/internals/forkjoin.md).
 *
 * Every case waits for its root task with a bound (ln_task_wait_for), so a
 * pool that deadlocks fails the case within LN_FJ_BOUND_MS instead of
 * hanging until the runner's alarm. */
#include "testutil.h"

#include <lanes.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#define LN_FJ_BOUND_MS 30000u

static atomic_int leaf_ran;
static void *leaf(void *arg);

static ln_pool *pool_threads(unsigned cpu_threads) {
    ln_pool_opts o;
    ln_pool_opts_init(&o);
    o.lanes[LN_LANE_CPU].min_threads = o.lanes[LN_LANE_CPU].max_threads = cpu_threads;
    ln_pool *p = NULL;
    CHECK_EQ(ln_pool_create(&p, &o), 0);
    return p;
}

/* Run root(arg) as a task of p's CPU lane and wait for it with a bound. */
static void run_root(ln_pool *p, ln_fn root, void *arg) {
    ln_task *t = NULL;
    CHECK_EQ(ln_submit(p, LN_LANE_CPU, root, arg, &t), 0);
    CHECK_EQ(ln_task_wait_for(t, LN_FJ_BOUND_MS, NULL), 0); /* not deadlocked */
    ln_task_release(t);
}

/* ---- fib split with a group per task --------------------------------------- */

static ln_pool *fib_pool;

typedef struct fib_job {
    int n, split; /* split: levels left to fork */
    long result;
} fib_job;

static long fib_seq(int n) {
    return n < 2 ? n : fib_seq(n - 1) + fib_seq(n - 2);
}

static void *fib_task(void *arg) {
    fib_job *j = arg;
    if (j->split == 0 || j->n < 2) {
        j->result = fib_seq(j->n);
        return NULL;
    }
    fib_job a = {j->n - 1, j->split - 1, 0}, b = {j->n - 2, j->split - 1, 0};
    ln_group *g = NULL;
    CHECK_EQ(ln_group_create(&g, fib_pool), 0);
    CHECK_EQ(ln_group_submit(g, LN_LANE_CPU, fib_task, &a), 0);
    CHECK_EQ(ln_group_submit(g, LN_LANE_CPU, fib_task, &b), 0);
    CHECK_EQ(ln_group_wait(g), 0); /* helps: runs a, b or others meanwhile */
    ln_group_destroy(g);
    j->result = a.result + b.result;
    return NULL;
}

static void fib_case(unsigned threads, int n, int split) {
    fib_pool = pool_threads(threads);
    fib_job root = {n, split, 0};
    run_root(fib_pool, fib_task, &root);
    CHECK_EQ(root.result, fib_seq(n));
    CHECK_EQ(ln_pool_drain(fib_pool), 0);
    ln_lane_stats st;
    CHECK_EQ(ln_pool_stats(fib_pool, LN_LANE_CPU, &st), 0);
    CHECK_EQ(st.submitted, st.completed); /* every fork ran, none canceled */
    CHECK_EQ(st.queued, 0);
    ln_pool_destroy(fib_pool);
}

/* The shape: each task forks two and joins them. Deadlocked a
 * 2-thread pool before (the wait refused, destroy blocked the worker). */
TEST(fib_split_2_threads) {
    fib_case(2, 24, ln_test_sanitized() ? 8 : 12);
}
TEST(fib_split_1_thread) {
    fib_case(1, 20, 8);
}
TEST(fib_split_4_threads) {
    fib_case(4, 22, 10);
}

/* ---- forks reach idle workers ------------------------------------------------ */

static ln_pool *meet_pool;
static atomic_int meet_arrived;

/* Returns once both children run at the same time (bounded: 0 if not). */
static void *meet_child(void *arg) {
    (void)arg;
    atomic_fetch_add(&meet_arrived, 1);
    uint64_t end = ln_now_ns() + 10000000000ull;
    while (atomic_load(&meet_arrived) < 2)
        if (ln_now_ns() > end) return (void *)0;
    return (void *)1;
}

static atomic_int meet_ok;
static void *meet_parent(void *arg) {
    (void)arg;
    ln_task *t = NULL;
    ln_group *g = NULL;
    CHECK_EQ(ln_group_create(&g, meet_pool), 0);
    /* The first through the group (the worker's deque), the second as a
     * plain task: the waiting parent runs the deque's newest itself, so
     * the other sleeping worker must be woken to steal or take the other. */
    CHECK_EQ(ln_group_submit(g, LN_LANE_CPU, meet_child, NULL), 0);
    CHECK_EQ(ln_submit(meet_pool, LN_LANE_CPU, meet_child, NULL, &t), 0);
    CHECK_EQ(ln_group_wait(g), 0);
    ln_group_destroy(g);
    void *r = NULL;
    CHECK_EQ(ln_task_wait(t, &r), 0);
    ln_task_release(t);
    if (r == (void *)1) atomic_fetch_add(&meet_ok, 1);
    return NULL;
}

static atomic_int pair_arrived;
static void *pair_child(void *arg) {
    (void)arg;
    atomic_fetch_add(&pair_arrived, 1);
    uint64_t end = ln_now_ns() + 10000000000ull;
    while (atomic_load(&pair_arrived) % 2 != 0)
        if (ln_now_ns() > end) return NULL;
    return NULL;
}

static atomic_int pair_rounds_ok;
/* Both children through the group: one runs on the parent's worker, the
 * other must be stolen by the sleeping second worker (the deque's wake-up:
 * a lost one leaves the first child spinning until its bound). */
static void *pair_parent(void *arg) {
    (void)arg;
    for (int round = 0; round < 50; round++) {
        atomic_store(&pair_arrived, 0);
        ln_test_sleep_ms(1); /* let the other worker go to sleep */
        ln_group *g = NULL;
        CHECK_EQ(ln_group_create(&g, meet_pool), 0);
        uint64_t t0 = ln_now_ns();
        CHECK_EQ(ln_group_submit(g, LN_LANE_CPU, pair_child, NULL), 0);
        CHECK_EQ(ln_group_submit(g, LN_LANE_CPU, pair_child, NULL), 0);
        CHECK_EQ(ln_group_wait(g), 0);
        ln_group_destroy(g);
        if (ln_now_ns() - t0 < 5000000000ull) atomic_fetch_add(&pair_rounds_ok, 1);
    }
    return NULL;
}

TEST(forks_are_stolen_by_a_sleeping_worker) {
    meet_pool = pool_threads(2);
    atomic_store(&pair_rounds_ok, 0);
    run_root(meet_pool, pair_parent, NULL);
    CHECK_EQ(atomic_load(&pair_rounds_ok), 50);
    atomic_store(&meet_arrived, 0);
    atomic_store(&meet_ok, 0);
    run_root(meet_pool, meet_parent, NULL);
    CHECK_EQ(atomic_load(&meet_ok), 1);
    ln_pool_destroy(meet_pool);
}

/* ---- waiting for a task taken in the same batch ------------------------------ */

#define PAIRS 200
static ln_group *pair_groups[PAIRS];
static atomic_int waiters_done;

static void *wait_pair(void *arg) {
    CHECK_EQ(ln_group_wait(arg), 0);
    atomic_fetch_add(&waiters_done, 1);
    return NULL;
}

/* A worker takes short tasks in batches: a waiting task and the task it
 * waits for, queued after it, often land in the same batch, where no other
 * worker can see the second. The wait must run it (the rest of the batch)
 * rather than wait forever. */
TEST(wait_for_a_task_in_the_same_batch) {
    ln_pool *p = pool_threads(1);
    gate g = GATE_INIT;
    atomic_store(&waiters_done, 0);
    atomic_store(&leaf_ran, 0);
    CHECK_EQ(ln_submit(p, LN_LANE_CPU, gate_task, &g, NULL), 0);
    gate_wait_entered(&g, 1);
    for (int i = 0; i < PAIRS; i++) {
        CHECK_EQ(ln_group_create(&pair_groups[i], p), 0);
        CHECK_EQ(ln_submit(p, LN_LANE_CPU, wait_pair, pair_groups[i], NULL), 0);
        CHECK_EQ(ln_group_submit(pair_groups[i], LN_LANE_CPU, leaf, NULL), 0);
    }
    gate_open(&g);
    uint64_t end = ln_now_ns() + (uint64_t)LN_FJ_BOUND_MS * 1000000u;
    while (atomic_load(&waiters_done) < PAIRS && ln_now_ns() < end) ln_test_sleep_ms(1);
    CHECK_EQ(atomic_load(&waiters_done), PAIRS); /* not deadlocked */
    CHECK_EQ(ln_pool_drain(p), 0);
    ln_lane_stats st;
    CHECK_EQ(ln_pool_stats(p, LN_LANE_CPU, &st), 0);
    CHECK_EQ(st.completed, 2 * PAIRS + 1); /* counted once each */
    CHECK_EQ(st.canceled, 0);
    CHECK_EQ(atomic_load(&leaf_ran), PAIRS);
    ln_pool_destroy(p);
    for (int i = 0; i < PAIRS; i++) ln_group_destroy(pair_groups[i]);
}

/* ---- a lane never runs another lane's tasks -------------------------------- */

static ln_pool *lanes_pool;
static pthread_t io_waiter;
static atomic_int cpu_on_io_thread, cpu_ran;

static void *cpu_child(void *arg) {
    (void)arg;
    if (pthread_equal(pthread_self(), io_waiter)) atomic_fetch_add(&cpu_on_io_thread, 1);
    atomic_fetch_add(&cpu_ran, 1);
    ln_test_sleep_ms(1);
    return NULL;
}

/* An I/O-lane task waits for a group of CPU-lane tasks: it helps only its
 * own (I/O) lane, so none of the CPU tasks may run on its thread. */
static void *io_waits_for_cpu(void *arg) {
    (void)arg;
    io_waiter = pthread_self();
    ln_group *g = NULL;
    CHECK_EQ(ln_group_create(&g, lanes_pool), 0);
    for (int i = 0; i < 50; i++) CHECK_EQ(ln_group_submit(g, LN_LANE_CPU, cpu_child, NULL), 0);
    CHECK_EQ(ln_group_wait(g), 0);
    ln_group_destroy(g);
    return NULL;
}

TEST(helping_stays_on_its_lane) {
    lanes_pool = pool_threads(1);
    atomic_store(&cpu_on_io_thread, 0);
    atomic_store(&cpu_ran, 0);
    ln_task *t = NULL;
    CHECK_EQ(ln_submit(lanes_pool, LN_LANE_IO, io_waits_for_cpu, NULL, &t), 0);
    CHECK_EQ(ln_task_wait_for(t, LN_FJ_BOUND_MS, NULL), 0);
    ln_task_release(t);
    CHECK_EQ(atomic_load(&cpu_ran), 50);
    CHECK_EQ(atomic_load(&cpu_on_io_thread), 0);
    ln_pool_destroy(lanes_pool);
}

/* A CPU-lane task that waits for work on the I/O lane blocks: it must not
 * run the CPU lane's queued tasks meanwhile (one of them could take a
 * mutex the waiter holds). A thread-local flag marks the wait. */
static _Thread_local int in_cross_wait;
static atomic_int ran_inside_wait, cross_ran;

static void *cpu_queued(void *arg) {
    (void)arg;
    if (in_cross_wait) atomic_fetch_add(&ran_inside_wait, 1);
    atomic_fetch_add(&cross_ran, 1);
    return NULL;
}

static void *io_slow(void *arg) {
    (void)arg;
    ln_test_sleep_ms(50);
    return NULL;
}

static void *cpu_waits_for_io(void *arg) {
    int group = *(int *)arg;
    ln_task *io = NULL;
    ln_group *g = NULL;
    if (group) {
        CHECK_EQ(ln_group_create(&g, lanes_pool), 0);
        CHECK_EQ(ln_group_submit(g, LN_LANE_IO, io_slow, NULL), 0);
    } else {
        CHECK_EQ(ln_submit(lanes_pool, LN_LANE_IO, io_slow, NULL, &io), 0);
    }
    for (int i = 0; i < 5; i++)
        CHECK_EQ(ln_submit(lanes_pool, LN_LANE_CPU, cpu_queued, NULL, NULL), 0);
    in_cross_wait = 1;
    if (group) {
        CHECK_EQ(ln_group_wait(g), 0);
        ln_group_destroy(g);
    } else {
        CHECK_EQ(ln_task_wait(io, NULL), 0);
        ln_task_release(io);
    }
    in_cross_wait = 0;
    return NULL;
}

static void cross_lane_wait(int group) {
    lanes_pool = pool_threads(1);
    atomic_store(&ran_inside_wait, 0);
    atomic_store(&cross_ran, 0);
    run_root(lanes_pool, cpu_waits_for_io, &group);
    CHECK_EQ(ln_pool_drain(lanes_pool), 0);
    CHECK_EQ(atomic_load(&cross_ran), 5);
    CHECK_EQ(atomic_load(&ran_inside_wait), 0);
    ln_pool_destroy(lanes_pool);
}

TEST(task_wait_on_another_lane_blocks) {
    cross_lane_wait(0);
}

TEST(group_wait_on_another_lane_blocks) {
    cross_lane_wait(1);
}

/* ---- drain while fork-join runs ---------------------------------------------- */

/* The root is fire-and-forget: ln_pool_drain alone says when the whole tree
 * is done, so the lane's accounting of forks (deques, helped items, the
 * rest of a batch) must reach submitted == finished exactly, no sooner
 * (the sum would be wrong) and no later (drain would hang). */
TEST(drain_covers_fork_join) {
    for (int round = 0; round < 5; round++) {
        fib_pool = pool_threads(2);
        fib_job root = {22, 10, -1};
        CHECK_EQ(ln_submit(fib_pool, LN_LANE_CPU, fib_task, &root, NULL), 0);
        CHECK_EQ(ln_pool_drain(fib_pool), 0);
        CHECK_EQ(root.result, fib_seq(22));
        ln_lane_stats st;
        CHECK_EQ(ln_pool_stats(fib_pool, LN_LANE_CPU, &st), 0);
        CHECK_EQ(st.submitted, st.completed);
        CHECK_EQ(st.submitted, 2047); /* 2^11 - 1 tasks, the root among them */
        ln_pool_destroy(fib_pool);
    }
}

/* ---- a chain deeper than the helping depth bound --------------------------- */

static ln_pool *chain_pool;
static atomic_int chain_ran;

/* Level k forks level k + 1 alone and joins it: every wait nests one
 * deeper on whichever worker runs the child, well past LN_HELP_DEPTH (64),
 * where a wait runs only its own group's tasks. */
static void *chain_task(void *arg) {
    intptr_t left = (intptr_t)arg;
    atomic_fetch_add(&chain_ran, 1);
    if (left == 0) return NULL;
    ln_group *g = NULL;
    CHECK_EQ(ln_group_create(&g, chain_pool), 0);
    CHECK_EQ(ln_group_submit(g, LN_LANE_CPU, chain_task, (void *)(left - 1)), 0);
    CHECK_EQ(ln_group_wait(g), 0);
    ln_group_destroy(g);
    return NULL;
}

static void chain_case(unsigned threads) {
    chain_pool = pool_threads(threads);
    atomic_store(&chain_ran, 0);
    run_root(chain_pool, chain_task, (void *)(intptr_t)300);
    CHECK_EQ(atomic_load(&chain_ran), 301);
    ln_pool_destroy(chain_pool);
}

TEST(chain_past_depth_bound_1_thread) {
    chain_case(1);
}
TEST(chain_past_depth_bound_2_threads) {
    chain_case(2);
}

/* ---- destroy without a wait, and task waits, inside a task ------------------ */

static ln_pool *nest_pool;

static void *leaf(void *arg) {
    atomic_fetch_add(&leaf_ran, 1);
    return (void *)((uintptr_t)arg + 1);
}

static void *destroy_inside(void *arg) {
    (void)arg;
    ln_group *g = NULL;
    CHECK_EQ(ln_group_create(&g, nest_pool), 0);
    for (int i = 0; i < 10; i++) CHECK_EQ(ln_group_submit(g, LN_LANE_CPU, leaf, NULL), 0);
    ln_group_destroy(g); /* no wait first: it must help, not block the worker */
    CHECK_EQ(atomic_load(&leaf_ran), 10);
    return NULL;
}

TEST(group_destroy_inside_task_1_thread) {
    nest_pool = pool_threads(1);
    atomic_store(&leaf_ran, 0);
    run_root(nest_pool, destroy_inside, NULL);
    ln_pool_destroy(nest_pool);
}

static void *task_wait_inside(void *arg) {
    (void)arg;
    ln_task *t[4];
    for (uintptr_t i = 0; i < 4; i++)
        CHECK_EQ(ln_submit(nest_pool, LN_LANE_CPU, leaf, (void *)i, &t[i]), 0);
    for (uintptr_t i = 0; i < 4; i++) {
        void *r = NULL;
        CHECK_EQ(ln_task_wait(t[i], &r), 0); /* queued behind us: helps */
        CHECK_EQ((uintptr_t)r, i + 1);
        ln_task_release(t[i]);
    }
    return NULL;
}

TEST(task_wait_inside_task_1_thread) {
    nest_pool = pool_threads(1);
    atomic_store(&leaf_ran, 0);
    run_root(nest_pool, task_wait_inside, NULL);
    CHECK_EQ(atomic_load(&leaf_ran), 4);
    ln_pool_destroy(nest_pool);
}

/* ---- the wait covers tasks added to the group during the wait -------------- */

static ln_group *grow_group;
static atomic_int grow_ran;

/* Adds two children to its own group until 'left' runs out; sleeps first,
 * so the waiter is inside ln_group_wait before any child exists. */
static void *grow_task(void *arg) {
    intptr_t left = (intptr_t)arg;
    ln_test_sleep_ms(2);
    if (left > 0) {
        CHECK_EQ(ln_group_submit(grow_group, LN_LANE_CPU, grow_task, (void *)(left - 1)), 0);
        CHECK_EQ(ln_group_submit(grow_group, LN_LANE_CPU, grow_task, (void *)(left - 1)), 0);
    }
    atomic_fetch_add(&grow_ran, 1);
    return NULL;
}

static void grow_check(void) {
    /* A tree of depth 4 with 2 children each: 31 tasks. */
    CHECK_EQ(atomic_load(&grow_ran), 31);
    uint64_t sub = 0, fin = 0;
    CHECK_EQ(ln_group_counts(grow_group, &sub, &fin), 0);
    CHECK_EQ(sub, 31);
    CHECK_EQ(fin, 31);
}

/* The waiter is outside the pool (it sleeps on the group). */
TEST(wait_covers_children_outside_pool) {
    ln_pool *p = pool_threads(2);
    atomic_store(&grow_ran, 0);
    CHECK_EQ(ln_group_create(&grow_group, p), 0);
    CHECK_EQ(ln_group_submit(grow_group, LN_LANE_CPU, grow_task, (void *)4), 0);
    CHECK_EQ(ln_group_wait(grow_group), 0);
    grow_check();
    ln_pool_destroy(p); /* would cancel children the wait missed */
    ln_group_destroy(grow_group);
}

static ln_pool *grow_pool;
static void *grow_root(void *arg) {
    (void)arg;
    CHECK_EQ(ln_group_create(&grow_group, grow_pool), 0);
    CHECK_EQ(ln_group_submit(grow_group, LN_LANE_CPU, grow_task, (void *)4), 0);
    CHECK_EQ(ln_group_wait(grow_group), 0); /* helps while the tree grows */
    grow_check();
    ln_group_destroy(grow_group);
    return NULL;
}

/* The waiter is a worker of the pool (it helps). */
TEST(wait_covers_children_inside_pool) {
    grow_pool = pool_threads(2);
    atomic_store(&grow_ran, 0);
    run_root(grow_pool, grow_root, NULL);
    ln_pool_destroy(grow_pool);
}

/* ---- destroy while fork-join runs ------------------------------------------ */

static ln_pool *spread_pool;
static atomic_int spread_canceled;

/* Forks two and joins them, to depth 'left'; leaves sleep 1 ms. */
static void *spread_task(void *arg) {
    intptr_t left = (intptr_t)arg;
    if (left == 0) {
        ln_test_sleep_ms(1);
        return NULL;
    }
    ln_group *g = NULL;
    CHECK_EQ(ln_group_create(&g, spread_pool), 0);
    for (int i = 0; i < 2; i++) {
        int rc = ln_group_submit(g, LN_LANE_CPU, spread_task, (void *)(left - 1));
        CHECK(rc == 0 || rc == LN_ESHUTDOWN);
    }
    int rc = ln_group_wait(g);
    CHECK(rc == 0 || rc == LN_ECANCELED);
    if (rc == LN_ECANCELED) atomic_fetch_add(&spread_canceled, 1);
    ln_group_destroy(g);
    return NULL;
}

/* Forks from workers sit in their deques; destroy cancels those that never
 * started, and every waiting task sees its group end, so destroy returns
 * (the runner's alarm bounds it). ASan checks nothing leaks. */
TEST(destroy_during_fork_join) {
    spread_pool = pool_threads(2);
    atomic_store(&spread_canceled, 0);
    CHECK_EQ(ln_submit(spread_pool, LN_LANE_CPU, spread_task, (void *)(intptr_t)12, NULL), 0);
    ln_test_sleep_ms(30);
    ln_pool_destroy(spread_pool);
    CHECK(atomic_load(&spread_canceled) > 0); /* 4096 leaves of 1 ms: far from done */
}

int main(int argc, char **argv) {
    return ln_test_run(argc, argv,
                       (ln_test_case[]){TESTCASE(fib_split_2_threads),
                                        TESTCASE(fib_split_1_thread),
                                        TESTCASE(fib_split_4_threads),
                                        TESTCASE(forks_are_stolen_by_a_sleeping_worker),
                                        TESTCASE(wait_for_a_task_in_the_same_batch),
                                        TESTCASE(helping_stays_on_its_lane),
                                        TESTCASE(task_wait_on_another_lane_blocks),
                                        TESTCASE(group_wait_on_another_lane_blocks),
                                        TESTCASE(drain_covers_fork_join),
                                        TESTCASE(chain_past_depth_bound_1_thread),
                                        TESTCASE(chain_past_depth_bound_2_threads),
                                        TESTCASE(group_destroy_inside_task_1_thread),
                                        TESTCASE(task_wait_inside_task_1_thread),
                                        TESTCASE(wait_covers_children_outside_pool),
                                        TESTCASE(wait_covers_children_inside_pool),
                                        TESTCASE(destroy_during_fork_join),
                                        {0}});
}
