/* test_pool.c - pool, lanes, futures, groups, cancel, destroy,
 * backpressure, drain, stats, thread growth and retirement, completions,
 * and user-supplied queues. */
#include "testutil.h"

#include <lanes.h>

#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static ln_pool *pool_with(unsigned cpu_threads, const ln_queue_ops *q, size_t max_queue) {
    ln_pool_opts o;
    ln_pool_opts_init(&o);
    o.lanes[0].min_threads = o.lanes[0].max_threads = cpu_threads;
    o.lanes[0].queue = q;
    o.lanes[0].max_queue = max_queue;
    ln_pool *p = NULL;
    CHECK_EQ(ln_pool_create(&p, &o), 0);
    return p;
}

static void *plus_one(void *arg) {
    return (void *)((uintptr_t)arg + 1);
}

TEST(futures_return_results) {
    ln_pool *p = pool_with(2, NULL, 0);
    enum { N = 2000 };
    static ln_task *t[N];
    for (uintptr_t i = 0; i < N; i++) CHECK_EQ(ln_submit(p, i % 2, plus_one, (void *)i, &t[i]), 0);
    for (uintptr_t i = 0; i < N; i++) {
        void *r = NULL;
        CHECK_EQ(ln_task_wait(t[i], &r), 0);
        CHECK_EQ((uintptr_t)r, i + 1);
        CHECK_EQ(ln_task_done(t[i]), 1);
        CHECK_EQ(ln_task_cancel(t[i]), LN_EBUSY); /* finished: too late */
        CHECK_EQ(ln_task_wait(t[i], &r), 0);      /* waiting again is fine */
        ln_task_release(t[i]);
    }
    ln_pool_destroy(p);
}

static atomic_int hits[100000];

static void *count_hit(void *arg) {
    atomic_fetch_add_explicit(&hits[(uintptr_t)arg], 1, memory_order_relaxed);
    return NULL;
}

static void group_exactly_once(const ln_queue_ops *q, unsigned threads) {
    ln_pool *p = pool_with(threads, q, 0);
    ln_group *g;
    CHECK_EQ(ln_group_create(&g, p), 0);
    long n = ln_test_scale(100000, 10);
    for (long i = 0; i < n; i++) atomic_store(&hits[i], 0);
    for (long i = 0; i < n; i++)
        CHECK_EQ(ln_group_submit(g, 0, count_hit, (void *)(uintptr_t)i), 0);
    CHECK_EQ(ln_group_wait(g), 0);
    for (long i = 0; i < n; i++) CHECK_EQ(atomic_load(&hits[i]), 1);
    uint64_t sub, fin;
    CHECK_EQ(ln_group_counts(g, &sub, &fin), 0);
    CHECK_EQ(sub, n);
    CHECK_EQ(fin, n);
    ln_group_destroy(g);
    /* Lane counters are updated per batch: exact once drained. */
    CHECK_EQ(ln_pool_drain(p), 0);
    ln_lane_stats st;
    CHECK_EQ(ln_pool_stats(p, 0, &st), 0);
    CHECK_EQ(st.submitted, n);
    CHECK_EQ(st.completed, n);
    CHECK_EQ(st.canceled, 0);
    CHECK_EQ(st.queued, 0);
    CHECK(st.peak_queued >= 1);
    /* LN_TIMING_SAMPLED: every task, or at least 1 in 16 of them. */
    CHECK(st.run.count >= (uint64_t)n / 16 && st.run.count <= (uint64_t)n);
    CHECK_EQ(st.wait.count, st.run.count);
    CHECK(st.wait.p50_ns <= st.wait.p99_ns && st.wait.p99_ns <= st.wait.max_ns);
    CHECK(st.utilization >= 0.0 && st.utilization <= 1.0);
    CHECK(strcmp(st.name, "cpu") == 0);
    ln_pool_destroy(p);
}

TEST(group_ring_1_thread) {
    group_exactly_once(NULL, 1);
}
TEST(group_ring_2_threads) {
    group_exactly_once(&ln_queue_ring, 2);
}
TEST(group_list_2_threads) {
    group_exactly_once(&ln_queue_list, 2);
}

TEST(cancel_before_start) {
    ln_pool *p = pool_with(1, NULL, 0);
    gate g = GATE_INIT;
    ln_task *blocker, *queued;
    CHECK_EQ(ln_submit(p, 0, gate_task, &g, &blocker), 0);
    gate_wait_entered(&g, 1);
    CHECK_EQ(ln_submit(p, 0, plus_one, NULL, &queued), 0);
    CHECK_EQ(ln_task_cancel(blocker), LN_EBUSY); /* running */
    CHECK_EQ(ln_task_cancel(queued), 0);
    CHECK_EQ(ln_task_cancel(queued), 0); /* idempotent */
    CHECK_EQ(ln_task_done(queued), 1);
    void *r = (void *)1;
    CHECK_EQ(ln_task_wait(queued, &r), LN_ECANCELED);
    CHECK_EQ(ln_task_wait_for(blocker, 20, &r), LN_ETIMEDOUT);
    gate_open(&g);
    CHECK_EQ(ln_task_wait(blocker, &r), 0);
    CHECK_EQ((uintptr_t)r, 0x600d);
    CHECK_EQ(ln_pool_drain(p), 0);
    ln_lane_stats st;
    CHECK_EQ(ln_pool_stats(p, 0, &st), 0);
    CHECK_EQ(st.completed, 1);
    CHECK_EQ(st.canceled, 1);
    ln_task_release(blocker);
    ln_task_release(queued);
    ln_pool_destroy(p);
}

/* Completion callback bookkeeping. */
static atomic_int comp_ok, comp_canceled, comp_calls;
static void on_done(void *arg, void *result, int status) {
    atomic_fetch_add(&comp_calls, 1);
    if (status == 0) {
        CHECK_EQ((uintptr_t)result, (uintptr_t)arg + 1);
        atomic_fetch_add(&comp_ok, 1);
    } else {
        CHECK_EQ(status, LN_ECANCELED);
        CHECK(result == NULL);
        atomic_fetch_add(&comp_canceled, 1);
    }
}

typedef struct destroyer {
    ln_pool *p;
    atomic_int done;
} destroyer;
static void *destroy_thread(void *arg) {
    destroyer *d = arg;
    ln_pool_destroy(d->p);
    atomic_store(&d->done, 1);
    return NULL;
}

TEST(destroy_runs_started_cancels_queued) {
    ln_pool *p = pool_with(1, NULL, 0);
    gate g = GATE_INIT;
    ln_task *blocker;
    enum { N = 100 };
    ln_task *fut[N];
    ln_group *grp;
    CHECK_EQ(ln_group_create(&grp, p), 0);
    CHECK_EQ(ln_submit(p, 0, gate_task, &g, &blocker), 0);
    gate_wait_entered(&g, 1);
    for (uintptr_t i = 0; i < N; i++) {
        CHECK_EQ(ln_submit(p, 0, plus_one, (void *)i, &fut[i]), 0);
        CHECK_EQ(ln_group_submit(grp, 0, plus_one, NULL), 0);
        CHECK_EQ(ln_submit_cb(p, 0, plus_one, (void *)i, on_done, NULL), 0);
    }
    destroyer d = {p, 0};
    pthread_t th;
    pthread_create(&th, NULL, destroy_thread, &d);
    /* Queued futures are canceled by destroy while the blocker still runs. */
    for (int i = 0; i < N; i++) CHECK_EQ(ln_task_wait(fut[i], NULL), LN_ECANCELED);
    CHECK_EQ(ln_group_wait(grp), LN_ECANCELED);
    CHECK_EQ(atomic_load(&d.done), 0); /* still waiting for the running task */
    gate_open(&g);
    pthread_join(th, NULL);
    void *r;
    CHECK_EQ(ln_task_wait(blocker, &r), 0); /* what started, finished */
    CHECK_EQ((uintptr_t)r, 0x600d);
    /* Each completion ran exactly once, during destroy. */
    CHECK_EQ(atomic_load(&comp_calls), N);
    CHECK_EQ(atomic_load(&comp_canceled), N);
    ln_task_release(blocker);
    for (int i = 0; i < N; i++) ln_task_release(fut[i]);
    ln_group_destroy(grp);
}

typedef struct blocked_submit {
    ln_pool *p;
    atomic_int rc, returned;
} blocked_submit;
static void *submit_wait_thread(void *arg) {
    blocked_submit *b = arg;
    atomic_store(&b->rc, ln_submit_ex(b->p, 0, plus_one, NULL, LN_SUBMIT_WAIT, NULL));
    atomic_store(&b->returned, 1);
    return NULL;
}

TEST(destroy_releases_blocked_submitter) {
    /* A WAIT submitter blocked on a full lane gets LN_ESHUTDOWN from
     * destroy, and destroy frees nothing until it has left. */
    ln_pool *p = pool_with(1, NULL, 1);
    gate g = GATE_INIT;
    CHECK_EQ(ln_submit(p, 0, gate_task, &g, NULL), 0);
    gate_wait_entered(&g, 1);
    CHECK_EQ(ln_submit(p, 0, plus_one, NULL, NULL), 0); /* fills the bound */
    CHECK_EQ(ln_submit_ex(p, 0, plus_one, NULL, LN_SUBMIT_NOWAIT, NULL), LN_EAGAIN);
    blocked_submit b = {p, 1, 0};
    pthread_t sub;
    pthread_create(&sub, NULL, submit_wait_thread, &b);
    ln_test_sleep_ms(20);
    CHECK_EQ(atomic_load(&b.returned), 0);
    destroyer d = {p, 0};
    pthread_t th;
    pthread_create(&th, NULL, destroy_thread, &d);
    pthread_join(sub, NULL);
    CHECK_EQ(atomic_load(&b.rc), LN_ESHUTDOWN);
    gate_open(&g);
    pthread_join(th, NULL);
}

TEST(backpressure_block_and_eagain) {
    ln_pool *p = pool_with(1, NULL, 4);
    gate g = GATE_INIT;
    CHECK_EQ(ln_submit(p, 0, gate_task, &g, NULL), 0);
    gate_wait_entered(&g, 1);
    for (int i = 0; i < 4; i++) CHECK_EQ(ln_submit(p, 0, plus_one, NULL, NULL), 0);
    CHECK_EQ(ln_submit(p, 0, plus_one, NULL, NULL), LN_EAGAIN); /* pool default: fail */
    ln_lane_stats st;
    CHECK_EQ(ln_pool_stats(p, 0, &st), 0);
    CHECK_EQ(st.queued, 4);
    CHECK_EQ(st.submitted, 5);
    blocked_submit b = {p, 1, 0};
    pthread_t th;
    pthread_create(&th, NULL, submit_wait_thread, &b);
    ln_test_sleep_ms(30);
    CHECK_EQ(atomic_load(&b.returned), 0); /* blocked: the lane is full */
    gate_open(&g);
    pthread_join(th, NULL);
    CHECK_EQ(atomic_load(&b.rc), 0);
    CHECK_EQ(ln_pool_drain(p), 0);
    CHECK_EQ(ln_pool_stats(p, 0, &st), 0);
    CHECK_EQ(st.completed, 6);
    CHECK_EQ(st.peak_queued, 4);
    ln_pool_destroy(p);
}

TEST(lanes_are_independent) {
    /* Block every CPU thread; the I/O lane still runs at once. */
    ln_pool *p = pool_with(2, NULL, 0);
    gate g = GATE_INIT;
    for (int i = 0; i < 6; i++) CHECK_EQ(ln_submit(p, LN_LANE_CPU, gate_task, &g, NULL), 0);
    gate_wait_entered(&g, 2);
    ln_task *io;
    CHECK_EQ(ln_submit(p, LN_LANE_IO, plus_one, (void *)41, &io), 0);
    void *r;
    CHECK_EQ(ln_task_wait(io, &r), 0);
    CHECK_EQ((uintptr_t)r, 42);
    ln_lane_stats st;
    CHECK_EQ(ln_pool_stats(p, LN_LANE_CPU, &st), 0);
    CHECK_EQ(st.busy, 2);
    CHECK_EQ(st.queued, 4);
    gate_open(&g);
    CHECK_EQ(ln_pool_drain(p), 0);
    ln_task_release(io);
    ln_pool_destroy(p);
}

static ln_pool *drain_pool;
static atomic_int drain_rc, group_rc;
static void *drain_from_worker(void *arg) {
    (void)arg;
    atomic_store(&drain_rc, ln_pool_drain(drain_pool));
    ln_group *g;
    CHECK_EQ(ln_group_create(&g, drain_pool), 0);
    atomic_store(&group_rc, ln_group_wait(g));
    ln_group_destroy(g);
    return NULL;
}

/* drain from a worker is refused; a group wait from a worker helps (an
 * empty group: returns at once). */
TEST(drain_refused_group_wait_helps_from_worker) {
    drain_pool = pool_with(1, NULL, 0);
    ln_task *t;
    CHECK_EQ(ln_submit(drain_pool, 0, drain_from_worker, NULL, &t), 0);
    CHECK_EQ(ln_task_wait(t, NULL), 0);
    CHECK_EQ(atomic_load(&drain_rc), LN_EBUSY);
    CHECK_EQ(atomic_load(&group_rc), 0);
    ln_task_release(t);
    ln_pool_destroy(drain_pool);
}

static void *sleep_task(void *arg) {
    ln_test_sleep_ms((unsigned)(uintptr_t)arg);
    return NULL;
}

TEST(drain_waits_for_everything) {
    ln_pool *p = pool_with(2, NULL, 0);
    for (int i = 0; i < 20; i++) CHECK_EQ(ln_submit(p, i % 2, sleep_task, (void *)2, NULL), 0);
    CHECK_EQ(ln_pool_drain(p), 0);
    for (int lane = 0; lane < 2; lane++) {
        ln_lane_stats st;
        CHECK_EQ(ln_pool_stats(p, lane, &st), 0);
        CHECK_EQ(st.completed, 10);
        CHECK_EQ(st.queued, 0);
        CHECK_EQ(st.busy, 0);
        CHECK(st.run.p50_ns >= 2000000); /* each slept >= 2 ms */
    }
    ln_pool_destroy(p);
}

TEST(threads_grow_and_retire) {
    ln_pool_opts o;
    ln_pool_opts_init(&o);
    o.lanes[1].min_threads = 0;
    o.lanes[1].max_threads = 4;
    o.lanes[1].idle_timeout_ms = 30;
    ln_pool *p;
    CHECK_EQ(ln_pool_create(&p, &o), 0);
    ln_lane_stats st;
    CHECK_EQ(ln_pool_stats(p, 1, &st), 0);
    CHECK_EQ(st.threads, 0);
    gate g = GATE_INIT;
    for (int i = 0; i < 4; i++) CHECK_EQ(ln_submit(p, 1, gate_task, &g, NULL), 0);
    gate_wait_entered(&g, 4); /* only possible with 4 threads */
    CHECK_EQ(ln_pool_stats(p, 1, &st), 0);
    CHECK_EQ(st.threads, 4);
    CHECK_EQ(st.max_threads, 4);
    gate_open(&g);
    CHECK_EQ(ln_pool_drain(p), 0);
    /* Surplus threads exit after the idle timeout (bounded wait). */
    for (int i = 0; i < 500; i++) {
        CHECK_EQ(ln_pool_stats(p, 1, &st), 0);
        if (st.threads == 0) break;
        ln_test_sleep_ms(10);
    }
    CHECK_EQ(st.threads, 0);
    CHECK_EQ(st.completed, 4);
    /* And the lane grows again on demand. */
    ln_task *t;
    CHECK_EQ(ln_submit(p, 1, plus_one, (void *)1, &t), 0);
    CHECK_EQ(ln_task_wait(t, NULL), 0);
    ln_task_release(t);
    ln_pool_destroy(p);
}

TEST(completions_on_caller_thread) {
    ln_pool *p = pool_with(2, NULL, 0);
    int fd = ln_pool_completion_fd(p);
    CHECK(fd >= 0);
    enum { N = 1000 };
    atomic_store(&comp_calls, 0);
    atomic_store(&comp_ok, 0);
    for (uintptr_t i = 0; i < N; i++)
        CHECK_EQ(ln_submit_cb(p, i % 2, plus_one, (void *)i, on_done, NULL), 0);
    int total = 0;
    while (total < N) {
        struct pollfd pfd = {fd, POLLIN, 0};
        CHECK(poll(&pfd, 1, 10000) == 1); /* readable, or the test fails */
        int n = ln_pool_run_completions(p);
        CHECK(n >= 0);
        total += n;
    }
    CHECK_EQ(total, N);
    CHECK_EQ(atomic_load(&comp_ok), N);
    /* Nothing pending: the fd is no longer readable. */
    struct pollfd pfd = {fd, POLLIN, 0};
    CHECK_EQ(poll(&pfd, 1, 0), 0);
    CHECK_EQ(ln_pool_run_completions(p), 0);
    ln_pool_destroy(p);
}

TEST(cancel_submit_cb_task) {
    ln_pool *p = pool_with(1, NULL, 0);
    gate g = GATE_INIT;
    CHECK_EQ(ln_submit(p, 0, gate_task, &g, NULL), 0);
    gate_wait_entered(&g, 1);
    ln_task *t;
    atomic_store(&comp_calls, 0);
    atomic_store(&comp_canceled, 0);
    CHECK_EQ(ln_submit_cb(p, 0, plus_one, (void *)5, on_done, &t), 0);
    CHECK_EQ(ln_task_cancel(t), 0);
    CHECK_EQ(ln_pool_run_completions(p), 1);
    CHECK_EQ(atomic_load(&comp_canceled), 1);
    gate_open(&g);
    CHECK_EQ(ln_pool_drain(p), 0);
    CHECK_EQ(ln_pool_run_completions(p), 0); /* exactly once */
    ln_task_release(t);
    ln_pool_destroy(p);
}

/* A user-supplied queue: LIFO stack of fixed capacity. */
typedef struct stack {
    ln_queue_item items[64];
    size_t n;
} stack;
static int st_create(void **s) {
    *s = calloc(1, sizeof(stack));
    return *s ? 0 : LN_ENOMEM;
}
static void st_destroy(void *s) {
    free(s);
}
static int st_push(void *s, const ln_queue_item *it) {
    stack *k = s;
    if (k->n == 64) return LN_ENOMEM;
    k->items[k->n++] = *it;
    return 0;
}
static int st_shift(void *s, ln_queue_item *out) {
    stack *k = s;
    if (k->n == 0) return 0;
    *out = k->items[--k->n];
    return 1;
}
static size_t st_size(const void *s) {
    return ((const stack *)s)->n;
}
static const ln_queue_ops lifo = {
    LN_QUEUE_OPS_VERSION, "lifo", st_create, st_destroy, st_push, st_shift, st_size};

static int order[16], order_n;
static void *record(void *arg) {
    order[order_n++] = (int)(uintptr_t)arg; /* one worker: no race */
    return NULL;
}

TEST(user_queue_ops) {
    ln_pool *p = pool_with(1, &lifo, 0);
    gate g = GATE_INIT;
    CHECK_EQ(ln_submit(p, 0, gate_task, &g, NULL), 0);
    gate_wait_entered(&g, 1);
    for (uintptr_t i = 0; i < 5; i++) CHECK_EQ(ln_submit(p, 0, record, (void *)i, NULL), 0);
    gate_open(&g);
    CHECK_EQ(ln_pool_drain(p), 0);
    CHECK_EQ(order_n, 5);
    for (int i = 0; i < 5; i++) CHECK_EQ(order[i], 4 - i); /* LIFO */
    /* A queue's push failure reaches the caller, nothing is counted. */
    gate g2 = GATE_INIT;
    CHECK_EQ(ln_submit(p, 0, gate_task, &g2, NULL), 0);
    gate_wait_entered(&g2, 1);
    int rc = 0, accepted = 0;
    while ((rc = ln_submit(p, 0, plus_one, NULL, NULL)) == 0) accepted++;
    CHECK_EQ(rc, LN_ENOMEM);
    CHECK_EQ(accepted, 64);
    gate_open(&g2);
    CHECK_EQ(ln_pool_drain(p), 0);
    ln_lane_stats st;
    CHECK_EQ(ln_pool_stats(p, 0, &st), 0);
    CHECK_EQ(st.submitted, 1 + 5 + 1 + 64);
    CHECK_EQ(st.completed, st.submitted);
    ln_pool_destroy(p);
}

TEST(extra_named_lanes) {
    ln_pool_opts o;
    ln_pool_opts_init(&o);
    o.nlanes = 3;
    o.lanes[2].name = "crypto";
    o.lanes[2].min_threads = 1;
    o.lanes[2].max_threads = 2;
    ln_pool *p;
    CHECK_EQ(ln_pool_create(&p, &o), 0);
    int lane = ln_pool_lane_index(p, "crypto");
    CHECK_EQ(lane, 2);
    ln_task *t;
    CHECK_EQ(ln_submit(p, lane, plus_one, (void *)1, &t), 0);
    void *r;
    CHECK_EQ(ln_task_wait(t, &r), 0);
    CHECK_EQ((uintptr_t)r, 2);
    ln_task_release(t);
    ln_pool_destroy(p);
}

/* A group filled by its creator and by other threads at once (the two
 * halves of its submitted count), through single and batch submits. */
static ln_group *shared_group;
static void *fill_shared(void *arg) {
    static void *args[100];
    long n = (long)(uintptr_t)arg;
    for (long i = 0; i < n; i++) CHECK_EQ(ln_group_submit(shared_group, i % 2, count_hit, NULL), 0);
    size_t queued = 0;
    CHECK_EQ(ln_group_submit_batch(shared_group, 0, count_hit, args, 100, &queued), 0);
    CHECK_EQ(queued, 100);
    return NULL;
}

TEST(group_shared_by_threads) {
    ln_pool *p = pool_with(2, NULL, 0);
    CHECK_EQ(ln_group_create(&shared_group, p), 0);
    atomic_store(&hits[0], 0);
    long n = ln_test_scale(20000, 10);
    pthread_t th[3];
    for (int i = 0; i < 3; i++) pthread_create(&th[i], NULL, fill_shared, (void *)(uintptr_t)n);
    fill_shared((void *)(uintptr_t)n); /* the creator too */
    for (int i = 0; i < 3; i++) pthread_join(th[i], NULL);
    CHECK_EQ(ln_group_wait(shared_group), 0);
    uint64_t sub, fin;
    CHECK_EQ(ln_group_counts(shared_group, &sub, &fin), 0);
    CHECK_EQ(sub, 4 * ((uint64_t)n + 100));
    CHECK_EQ(fin, sub);
    CHECK_EQ(atomic_load(&hits[0]), (int)sub); /* every arg is NULL: index 0 */
    ln_group_destroy(shared_group);
    ln_pool_destroy(p);
}

/* Each timing mode: the counters are exact; the histograms hold every
 * task (ALL), none (OFF), or a sample of at least 1 in 16 (SAMPLED). */
static void timing_case(unsigned mode, long n, uint64_t min_timed, uint64_t max_timed) {
    ln_pool_opts o;
    ln_pool_opts_init(&o);
    o.timing = mode;
    o.spin_us = 0;
    ln_pool *p;
    CHECK_EQ(ln_pool_create(&p, &o), 0);
    ln_group *g;
    CHECK_EQ(ln_group_create(&g, p), 0);
    for (long i = 0; i < n; i++) CHECK_EQ(ln_group_submit(g, 0, plus_one, NULL), 0);
    CHECK_EQ(ln_group_wait(g), 0);
    ln_group_destroy(g);
    CHECK_EQ(ln_pool_drain(p), 0);
    ln_lane_stats st;
    CHECK_EQ(ln_pool_stats(p, 0, &st), 0);
    CHECK_EQ(st.completed, (uint64_t)n);
    CHECK(st.run.count >= min_timed && st.run.count <= max_timed);
    CHECK_EQ(st.wait.count, st.run.count);
    ln_pool_destroy(p);
}

TEST(timing_modes) {
    long n = ln_test_scale(20000, 10);
    timing_case(LN_TIMING_OFF, n, 0, 0);
    timing_case(LN_TIMING_ALL, n, (uint64_t)n, (uint64_t)n);
    timing_case(LN_TIMING_SAMPLED, n, (uint64_t)n / 16, (uint64_t)n);
}

/* A task after a stream of tiny ones is timed again once it proves long:
 * sampling never hides a slow lane for long. */
static void *sleep_2ms(void *arg) {
    (void)arg;
    struct timespec ts = {0, 2000000};
    nanosleep(&ts, NULL);
    return NULL;
}

TEST(sampling_returns_to_every_task) {
    ln_pool_opts o;
    ln_pool_opts_init(&o);
    o.lanes[0].min_threads = o.lanes[0].max_threads = 1;
    ln_pool *p;
    CHECK_EQ(ln_pool_create(&p, &o), 0);
    ln_group *g;
    CHECK_EQ(ln_group_create(&g, p), 0);
    for (int i = 0; i < 20000; i++) CHECK_EQ(ln_group_submit(g, 0, plus_one, NULL), 0);
    CHECK_EQ(ln_group_wait(g), 0);
    ln_lane_stats before, after;
    CHECK_EQ(ln_pool_drain(p), 0);
    CHECK_EQ(ln_pool_stats(p, 0, &before), 0);
    /* Long tasks, one at a time: the worker's batches fall back to 1 and
     * from then on every task is timed. */
    for (int i = 0; i < 20; i++) {
        CHECK_EQ(ln_group_submit(g, 0, sleep_2ms, NULL), 0);
        CHECK_EQ(ln_group_wait(g), 0);
    }
    CHECK_EQ(ln_pool_drain(p), 0);
    CHECK_EQ(ln_pool_stats(p, 0, &after), 0);
    /* The first two may fall in the sampled stretch (the worker switches
     * back after the first long batch, maybe after the second submit). */
    CHECK(after.run.count - before.run.count >= 18);
    CHECK(after.run.max_ns >= 2000000);
    ln_group_destroy(g);
    ln_pool_destroy(p);
}

static void batch_case(unsigned threads, size_t max_queue, long n) {
    ln_pool *p = pool_with(threads, NULL, max_queue);
    ln_group *g;
    CHECK_EQ(ln_group_create(&g, p), 0);
    void **args = malloc((size_t)n * sizeof *args);
    for (long i = 0; i < n; i++) {
        args[i] = (void *)(uintptr_t)i;
        atomic_store(&hits[i], 0);
    }
    /* A bounded lane: its one worker held in a task, so nothing leaves the
     * queue while the batch fills it. */
    gate held = GATE_INIT;
    if (max_queue != 0) {
        CHECK_EQ(threads, 1);
        CHECK_EQ(ln_submit(p, 0, gate_task, &held, NULL), 0);
        gate_wait_entered(&held, 1);
    }
    size_t queued = 99;
    int rc = ln_group_submit_batch(g, 0, count_hit, args, (size_t)n, &queued);
    if (max_queue == 0) {
        CHECK_EQ(rc, 0);
        CHECK_EQ(queued, n);
    } else {
        /* Pool default LN_FULL_FAIL: the prefix that fits is queued, the
         * rest refused with LN_EAGAIN (never waited for, never dropped
         * silently). */
        CHECK_EQ(rc, LN_EAGAIN);
        CHECK_EQ(queued, max_queue);
        gate_open(&held);
    }
    CHECK_EQ(ln_group_wait(g), 0);
    for (long i = 0; i < n; i++) CHECK_EQ(atomic_load(&hits[i]), (size_t)i < queued ? 1 : 0);
    uint64_t sub, fin;
    CHECK_EQ(ln_group_counts(g, &sub, &fin), 0);
    CHECK_EQ(sub, queued);
    CHECK_EQ(fin, queued);
    CHECK_EQ(ln_group_submit_batch(g, 0, count_hit, NULL, 0, &queued), 0);
    CHECK_EQ(queued, 0);
    CHECK_EQ(ln_group_submit_batch(g, 0, count_hit, NULL, 5, &queued), LN_EINVAL);
    CHECK_EQ(ln_group_submit_batch(g, 7, count_hit, args, 5, &queued), LN_EINVAL);
    CHECK_EQ(ln_group_submit_batch(NULL, 0, count_hit, args, 5, NULL), LN_EINVAL);
    ln_group_destroy(g);
    ln_pool_destroy(p);
    free(args);
}

TEST(batch_submit_fixed_lane) {
    batch_case(2, 0, ln_test_scale(100000, 10));
}
TEST(batch_submit_bounded_lane) {
    batch_case(1, 16, 5000);
}

static int batch_order[3000], batch_order_n;
static void *batch_record(void *arg) {
    batch_order[batch_order_n++] = (int)(uintptr_t)arg; /* one worker */
    return NULL;
}

TEST(batch_submit_keeps_order_across_backlog) {
    /* 3000 items on a held single-worker fixed lane: the ring (1024) fills
     * and the rest goes to the backlog; all run in args order. */
    ln_pool *p = pool_with(1, NULL, 0);
    gate g0 = GATE_INIT;
    CHECK_EQ(ln_submit(p, 0, gate_task, &g0, NULL), 0);
    gate_wait_entered(&g0, 1);
    ln_group *g;
    CHECK_EQ(ln_group_create(&g, p), 0);
    static void *args[3000];
    for (uintptr_t i = 0; i < 3000; i++) args[i] = (void *)i;
    size_t queued;
    CHECK_EQ(ln_group_submit_batch(g, 0, batch_record, args, 3000, &queued), 0);
    CHECK_EQ(queued, 3000);
    gate_open(&g0);
    CHECK_EQ(ln_group_wait(g), 0);
    CHECK_EQ(batch_order_n, 3000);
    for (int i = 0; i < 3000; i++) CHECK_EQ(batch_order[i], i);
    ln_group_destroy(g);
    ln_pool_destroy(p);
}

int main(int argc, char **argv) {
    return ln_test_run(argc, argv,
                       (ln_test_case[]){TESTCASE(futures_return_results),
                                        TESTCASE(group_ring_1_thread),
                                        TESTCASE(group_ring_2_threads),
                                        TESTCASE(group_list_2_threads),
                                        TESTCASE(cancel_before_start),
                                        TESTCASE(destroy_runs_started_cancels_queued),
                                        TESTCASE(destroy_releases_blocked_submitter),
                                        TESTCASE(backpressure_block_and_eagain),
                                        TESTCASE(lanes_are_independent),
                                        TESTCASE(drain_refused_group_wait_helps_from_worker),
                                        TESTCASE(drain_waits_for_everything),
                                        TESTCASE(threads_grow_and_retire),
                                        TESTCASE(completions_on_caller_thread),
                                        TESTCASE(cancel_submit_cb_task),
                                        TESTCASE(user_queue_ops),
                                        TESTCASE(extra_named_lanes),
                                        TESTCASE(group_shared_by_threads),
                                        TESTCASE(timing_modes),
                                        TESTCASE(sampling_returns_to_every_task),
                                        TESTCASE(batch_submit_fixed_lane),
                                        TESTCASE(batch_submit_bounded_lane),
                                        TESTCASE(batch_submit_keeps_order_across_backlog),
                                        {0}});
}
