/* test_map.c - ln_map: every item exactly once, never more than concurrency
 * in flight, codes in index order, first failure, stop_on_error, stop from
 * another thread, hooks, bad arguments, the same-lane guard, allocation
 * failure. */
#include "testutil.h"

#include <lanes.h>

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

static ln_pool *make_pool(unsigned cpu_threads) {
    ln_pool_opts o;
    ln_pool_opts_init(&o);
    o.lanes[LN_LANE_CPU].min_threads = cpu_threads;
    o.lanes[LN_LANE_CPU].max_threads = cpu_threads;
    ln_pool *pool = NULL;
    CHECK_EQ(ln_pool_create(&pool, &o), 0);
    return pool;
}

/* ---- a context that counts runs and the calls in flight --------------- */

typedef struct ctx {
    atomic_int *runs;
    atomic_uint in_flight, max_in_flight;
    atomic_size_t progress;         /* calls finished */
    atomic_size_t starts, finishes; /* hook calls */
    atomic_int hook_mismatch;
    unsigned sleep_ms;      /* per call */
    unsigned spin_us;       /* per call, busy: keeps ln_map claiming 1 by 1 */
    size_t fail_at;         /* index that fails, or SIZE_MAX */
    unsigned fail_sleep_ms; /* extra sleep before failing */
    size_t fail_mod;        /* i % fail_mod == 3 fails (0: off) */
} ctx;

static void ctx_init(ctx *c, size_t n) {
    memset(c, 0, sizeof(*c));
    c->runs = calloc(n ? n : 1, sizeof(*c->runs));
    CHECK(c->runs != NULL);
    c->fail_at = SIZE_MAX;
}

static int item(size_t i, void *arg) {
    ctx *c = arg;
    atomic_fetch_add(&c->runs[i], 1);
    unsigned now = atomic_fetch_add(&c->in_flight, 1) + 1;
    unsigned m = atomic_load(&c->max_in_flight);
    while (now > m && !atomic_compare_exchange_weak(&c->max_in_flight, &m, now)) {
    }
    if (c->sleep_ms) ln_test_sleep_ms(c->sleep_ms);
    if (c->spin_us) {
        uint64_t until = ln_now_ns() + c->spin_us * 1000u;
        while (ln_now_ns() < until) {
        }
    }
    int code = 0;
    if (i == c->fail_at) {
        if (c->fail_sleep_ms) ln_test_sleep_ms(c->fail_sleep_ms);
        code = -5;
    }
    if (c->fail_mod && i % c->fail_mod == 3) code = -(int)(i % 100) - 1;
    atomic_fetch_sub(&c->in_flight, 1);
    atomic_fetch_add(&c->progress, 1);
    return code;
}

static int noop(size_t i, void *arg) {
    (void)i;
    (void)arg;
    return 0;
}

/* ---- cases -------------------------------------------------------------- */

TEST(bad_arguments) {
    ln_pool *pool = make_pool(2);
    ln_map_opts o;
    ln_map_opts_init(&o);
    CHECK_EQ(o.lane, LN_LANE_CPU);
    CHECK_EQ(o.concurrency, 0);
    CHECK_EQ(o.stop_on_error, 0);
    CHECK(o.on_start == NULL && o.on_finish == NULL && o.stop == NULL);
    ln_map_result res;
    CHECK_EQ(ln_map(NULL, 10, noop, NULL, NULL, &res), LN_EINVAL);
    CHECK_EQ(ln_map(pool, 10, NULL, NULL, NULL, &res), LN_EINVAL);
    CHECK_EQ(ln_map(pool, 0, NULL, NULL, NULL, NULL), LN_EINVAL);
    o.lane = 5;
    CHECK_EQ(ln_map(pool, 10, noop, NULL, &o, &res), LN_EINVAL);
    o.lane = -1;
    CHECK_EQ(ln_map(pool, 10, noop, NULL, &o, &res), LN_EINVAL);
    /* n = 0: at once, an empty result, codes untouched */
    int sentinel = 42;
    res.codes = &sentinel;
    res.ran = 99;
    CHECK_EQ(ln_map(pool, 0, noop, NULL, NULL, &res), 0);
    CHECK_EQ(res.ran, 0);
    CHECK_EQ(res.failed, 0);
    CHECK_EQ(res.not_run, 0);
    CHECK(res.first_failed == (size_t)-1);
    CHECK_EQ(sentinel, 42);
    CHECK_EQ(ln_map(pool, 5, noop, NULL, NULL, NULL), 0); /* result optional */
    CHECK_EQ(ln_map_stop_create(NULL), LN_EINVAL);
    ln_map_stop_destroy(NULL);
    ln_map_stop_trigger(NULL);
    ln_pool_destroy(pool);
}

static void run_exactly_once(unsigned threads, unsigned conc, size_t n) {
    ln_pool *pool = make_pool(threads);
    ctx c;
    ctx_init(&c, n);
    int *codes = malloc(n * sizeof(*codes));
    ln_map_opts o;
    ln_map_opts_init(&o);
    o.concurrency = conc;
    ln_map_result res = {.codes = codes};
    CHECK_EQ(ln_map(pool, n, item, &c, &o, &res), 0);
    for (size_t i = 0; i < n; i++) {
        CHECK_EQ(atomic_load(&c.runs[i]), 1);
        CHECK_EQ(codes[i], 0);
    }
    unsigned limit = conc ? conc : threads;
    if (limit > threads) limit = threads; /* rails beyond the threads queue */
    CHECK(atomic_load(&c.max_in_flight) <= limit);
    CHECK(res.max_in_flight >= atomic_load(&c.max_in_flight));
    CHECK(res.max_in_flight <= (conc ? conc : threads));
    CHECK_EQ(res.ran, n);
    CHECK_EQ(res.failed, 0);
    CHECK_EQ(res.not_run, 0);
    CHECK(res.first_failed == (size_t)-1);
    free(codes);
    free(c.runs);
    ln_pool_destroy(pool);
}

TEST(every_item_once) {
    run_exactly_once(4, 3, (size_t)ln_test_scale(200000, 10));
}
TEST(concurrency_one) {
    run_exactly_once(3, 1, (size_t)ln_test_scale(50000, 10));
}
TEST(concurrency_above_threads) {
    run_exactly_once(2, 16, (size_t)ln_test_scale(50000, 10));
}
TEST(n_below_concurrency) {
    run_exactly_once(4, 64, 3);
}

/* concurrency 0 = the lane's max_threads: with items that sleep, the rails
 * overlap, but never more than the lane's 3 threads. */
TEST(concurrency_zero_is_lane_threads) {
    ln_pool *pool = make_pool(3);
    ctx c;
    ctx_init(&c, 60);
    c.sleep_ms = 1;
    ln_map_result res = {0};
    CHECK_EQ(ln_map(pool, 60, item, &c, NULL, &res), 0);
    CHECK(atomic_load(&c.max_in_flight) <= 3);
    CHECK(res.max_in_flight <= 3);
    CHECK_EQ(res.ran, 60);
    free(c.runs);
    ln_pool_destroy(pool);
}

/* Codes land at their own index; failures are counted; first_failed is the
 * lowest failing index even when a higher one fails earlier in time. */
TEST(errors_in_index_order) {
    const size_t n = 5000;
    ln_pool *pool = make_pool(4);
    ctx c;
    ctx_init(&c, n);
    c.fail_mod = 7; /* i % 7 == 3 fails with -(i % 100) - 1 */
    c.fail_at = 3;  /* ...and index 3 fails late */
    c.fail_sleep_ms = 30;
    int *codes = malloc(n * sizeof(*codes));
    ln_map_opts o;
    ln_map_opts_init(&o);
    o.concurrency = 4;
    ln_map_result res = {.codes = codes};
    CHECK_EQ(ln_map(pool, n, item, &c, &o, &res), LN_EFAILED);
    size_t expect_failed = 0;
    for (size_t i = 0; i < n; i++) {
        int want = i % 7 == 3 ? -(int)(i % 100) - 1 : 0;
        CHECK_EQ(codes[i], want);
        expect_failed += want != 0;
    }
    CHECK_EQ(res.failed, expect_failed);
    CHECK_EQ(res.first_failed, 3);
    CHECK_EQ(res.ran, n);
    CHECK_EQ(res.not_run, 0);
    free(codes);
    free(c.runs);
    ln_pool_destroy(pool);
}

/* stop_on_error with items of a few microseconds (ln_map then claims one
 * index at a time, in order): every item before the failure ran, the map
 * stopped long before the end, and exactly the unstarted items are reported
 * as not run. Without the flag the same failure stops nothing. */
TEST(stop_on_error) {
    const size_t n = 20000;
    const unsigned conc = 3;
    ln_pool *pool = make_pool(conc);
    ctx c;
    ctx_init(&c, n);
    c.fail_at = 100;
    c.spin_us = 5;
    int *codes = malloc(n * sizeof(*codes));
    ln_map_opts o;
    ln_map_opts_init(&o);
    o.concurrency = conc;
    o.stop_on_error = 1;
    ln_map_result res = {.codes = codes};
    CHECK_EQ(ln_map(pool, n, item, &c, &o, &res), LN_EFAILED);
    CHECK_EQ(res.failed, 1);
    CHECK_EQ(res.first_failed, 100);
    CHECK(res.ran >= 101);
    CHECK(res.ran < n / 2);
    CHECK_EQ(res.ran + res.not_run, n);
    for (size_t i = 0; i < n; i++) {
        if (i < res.ran) { /* one-by-one claims: the ran items are a prefix */
            CHECK_EQ(atomic_load(&c.runs[i]), 1);
            CHECK_EQ(codes[i], i == 100 ? -5 : 0);
        } else {
            CHECK_EQ(atomic_load(&c.runs[i]), 0);
            CHECK_EQ(codes[i], LN_MAP_NOT_RUN);
        }
    }
    /* The same failure without stop_on_error: everything runs. */
    ctx c2;
    ctx_init(&c2, n);
    c2.fail_at = 100;
    o.stop_on_error = 0;
    CHECK_EQ(ln_map(pool, n, item, &c2, &o, &res), LN_EFAILED);
    CHECK_EQ(res.ran, n);
    CHECK_EQ(res.not_run, 0);
    free(codes);
    free(c.runs);
    free(c2.runs);
    ln_pool_destroy(pool);
}

/* stop_on_error with items that take no time (ln_map claims many indices at
 * once): whatever ran and whatever did not, codes, counts and runs agree. */
TEST(stop_on_error_fast_items) {
    const size_t n = (size_t)ln_test_scale(400000, 10);
    ln_pool *pool = make_pool(3);
    ctx c;
    ctx_init(&c, n);
    c.fail_at = n / 4;
    int *codes = malloc(n * sizeof(*codes));
    ln_map_opts o;
    ln_map_opts_init(&o);
    o.concurrency = 3;
    o.stop_on_error = 1;
    ln_map_result res = {.codes = codes};
    CHECK_EQ(ln_map(pool, n, item, &c, &o, &res), LN_EFAILED);
    CHECK_EQ(res.failed, 1);
    CHECK_EQ(res.first_failed, n / 4);
    CHECK(res.not_run > 0);
    CHECK_EQ(res.ran + res.not_run, n);
    size_t ran = 0;
    for (size_t i = 0; i < n; i++) {
        int r = atomic_load(&c.runs[i]);
        CHECK(r == 0 || r == 1);
        ran += (size_t)r;
        CHECK_EQ(codes[i], r == 0 ? LN_MAP_NOT_RUN : i == n / 4 ? -5 : 0);
    }
    CHECK_EQ(ran, res.ran);
    free(codes);
    free(c.runs);
    ln_pool_destroy(pool);
}

/* A stop triggered from another thread while the map runs. */
typedef struct stopper {
    ctx *c;
    ln_map_stop *stop;
    size_t after;
} stopper;

static void *stop_later(void *arg) {
    stopper *s = arg;
    while (atomic_load(&s->c->progress) < s->after) ln_test_sleep_ms(1);
    ln_map_stop_trigger(s->stop);
    return NULL;
}

TEST(stop_from_another_thread) {
    const size_t n = 100000; /* 1 ms each: would take far too long */
    ln_pool *pool = make_pool(4);
    ctx c;
    ctx_init(&c, n);
    c.sleep_ms = 1;
    ln_map_stop *stop = NULL;
    CHECK_EQ(ln_map_stop_create(&stop), 0);
    stopper s = {&c, stop, 20};
    pthread_t t;
    pthread_create(&t, NULL, stop_later, &s);
    int *codes = malloc(n * sizeof(*codes));
    ln_map_opts o;
    ln_map_opts_init(&o);
    o.concurrency = 4;
    o.stop = stop;
    ln_map_result res = {.codes = codes};
    CHECK_EQ(ln_map(pool, n, item, &c, &o, &res), LN_ECANCELED);
    pthread_join(t, NULL);
    CHECK(res.ran >= 20);
    CHECK(res.ran < n / 10);
    CHECK_EQ(res.ran + res.not_run, n);
    CHECK_EQ(res.failed, 0);
    for (size_t i = 0; i < n; i++) {
        CHECK_EQ(atomic_load(&c.runs[i]), i < res.ran);
        CHECK_EQ(codes[i], i < res.ran ? 0 : LN_MAP_NOT_RUN);
    }
    /* A stop handle triggered before the map: nothing starts. */
    ctx c2;
    ctx_init(&c2, 10);
    CHECK_EQ(ln_map(pool, 10, item, &c2, &o, &res), LN_ECANCELED);
    CHECK_EQ(res.ran, 0);
    CHECK_EQ(res.not_run, 10);
    CHECK_EQ(atomic_load(&c2.progress), 0);
    ln_map_stop_destroy(stop);
    free(codes);
    free(c.runs);
    free(c2.runs);
    ln_pool_destroy(pool);
}

/* on_start / on_finish: once per item, on_finish sees fn's code, and
 * on_start precedes the call. */
static void hook_start(size_t i, void *arg) {
    ctx *c = arg;
    if (atomic_load(&c->runs[i]) != 0) atomic_store(&c->hook_mismatch, 1);
    atomic_fetch_add(&c->starts, 1);
}

static void hook_finish(size_t i, int code, void *arg) {
    ctx *c = arg;
    int want = c->fail_mod && i % c->fail_mod == 3 ? -(int)(i % 100) - 1 : 0;
    if (code != want || atomic_load(&c->runs[i]) != 1) atomic_store(&c->hook_mismatch, 1);
    atomic_fetch_add(&c->finishes, 1);
}

TEST(hooks) {
    const size_t n = 10000;
    ln_pool *pool = make_pool(3);
    ctx c;
    ctx_init(&c, n);
    c.fail_mod = 11;
    ln_map_opts o;
    ln_map_opts_init(&o);
    o.on_start = hook_start;
    o.on_finish = hook_finish;
    ln_map_result res = {0};
    CHECK_EQ(ln_map(pool, n, item, &c, &o, &res), LN_EFAILED);
    CHECK_EQ(atomic_load(&c.starts), n);
    CHECK_EQ(atomic_load(&c.finishes), n);
    CHECK_EQ(atomic_load(&c.hook_mismatch), 0);
    free(c.runs);
    ln_pool_destroy(pool);
}

/* From a worker: the same lane is refused (its rails would queue behind the
 * caller), another lane works. */
typedef struct nested {
    ln_pool *pool;
    int lane;
    int rc;
} nested;

static void *map_from_worker(void *arg) {
    nested *nt = arg;
    ln_map_opts o;
    ln_map_opts_init(&o);
    o.lane = nt->lane;
    nt->rc = ln_map(nt->pool, 100, noop, NULL, &o, NULL);
    return NULL;
}

TEST(from_a_worker) {
    ln_pool *pool = make_pool(2);
    nested same = {pool, LN_LANE_CPU, 1}, other = {pool, LN_LANE_IO, 1};
    ln_task *t1, *t2;
    CHECK_EQ(ln_submit(pool, LN_LANE_CPU, map_from_worker, &same, &t1), 0);
    CHECK_EQ(ln_submit(pool, LN_LANE_CPU, map_from_worker, &other, &t2), 0);
    CHECK_EQ(ln_task_wait(t1, NULL), 0);
    CHECK_EQ(ln_task_wait(t2, NULL), 0);
    CHECK_EQ(same.rc, LN_EBUSY);
    CHECK_EQ(other.rc, 0);
    ln_task_release(t1);
    ln_task_release(t2);
    ln_pool_destroy(pool);
}

/* Fail the k-th allocation for k = 1, 2, ...: every outcome is either a
 * clean error with nothing run, or a complete map; nothing leaks. */
TEST(allocation_failure) {
    const size_t n = 2000;
    int saw_enomem = 0, saw_ok_under_failure = 0;
    for (long k = 1; k <= 60; k++) {
        ln_test_alloc_install(k);
        ln_pool_opts po;
        ln_pool_opts_init(&po);
        po.lanes[LN_LANE_CPU].min_threads = po.lanes[LN_LANE_CPU].max_threads = 2;
        ln_pool *pool = NULL;
        int prc = ln_pool_create(&pool, &po);
        if (prc != 0) {
            CHECK_EQ(prc, LN_ENOMEM);
            CHECK_EQ(ln_test_alloc_live(), 0);
            ln_test_alloc_uninstall();
            continue;
        }
        ctx c;
        ctx_init(&c, n);
        ln_map_opts o;
        ln_map_opts_init(&o);
        o.concurrency = 4;
        ln_map_result res = {0};
        int rc = ln_map(pool, n, item, &c, &o, &res);
        if (rc == LN_ENOMEM) {
            saw_enomem = 1;
            CHECK_EQ(atomic_load(&c.progress), 0);
        } else {
            CHECK_EQ(rc, 0);
            CHECK_EQ(res.ran, n);
            saw_ok_under_failure = 1;
            for (size_t i = 0; i < n; i++) CHECK_EQ(atomic_load(&c.runs[i]), 1);
        }
        ln_pool_destroy(pool);
        CHECK_EQ(ln_test_alloc_live(), 0);
        ln_test_alloc_uninstall();
        free(c.runs);
    }
    CHECK(saw_enomem);
    CHECK(saw_ok_under_failure);
}

int main(int argc, char **argv) {
    return ln_test_run(argc, argv,
                       (ln_test_case[]){TESTCASE(bad_arguments),
                                        TESTCASE(every_item_once),
                                        TESTCASE(concurrency_one),
                                        TESTCASE(concurrency_above_threads),
                                        TESTCASE(n_below_concurrency),
                                        TESTCASE(concurrency_zero_is_lane_threads),
                                        TESTCASE(errors_in_index_order),
                                        TESTCASE(stop_on_error),
                                        TESTCASE(stop_on_error_fast_items),
                                        TESTCASE(stop_from_another_thread),
                                        TESTCASE(hooks),
                                        TESTCASE(from_a_worker),
                                        TESTCASE(allocation_failure),
                                        {0}});
}
