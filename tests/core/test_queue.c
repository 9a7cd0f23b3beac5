/* test_queue.c - the ring and list queues against a model, and the
 * histogram's bucket math. */
#include "testutil.h"

#include "histogram.h"

#include <lanes.h>

static void fifo_model(const ln_queue_ops *ops) {
    void *q;
    CHECK_EQ(ops->create(&q), 0);
    ln_queue_item it, out;
    uint64_t s = 42, next_in = 0, next_out = 0;
    /* Random interleavings of push/shift across several chunk sizes. */
    for (int round = 0; round < 200000; round++) {
        if (ln_test_rand(&s) % 3 != 0) {
            it.fn = NULL;
            it.arg = (void *)(uintptr_t)next_in;
            it.owner = NULL;
            it.enq_ns = next_in;
            CHECK_EQ(ops->push(q, &it), 0);
            next_in++;
        } else if (ops->shift(q, &out) == 1) {
            CHECK_EQ((uintptr_t)out.arg, next_out);
            CHECK_EQ(out.enq_ns, next_out);
            next_out++;
        } else {
            CHECK_EQ(next_in, next_out);
        }
        CHECK_EQ(ops->size(q), next_in - next_out);
    }
    while (ops->shift(q, &out) == 1) CHECK_EQ((uintptr_t)out.arg, next_out++);
    CHECK_EQ(next_out, next_in);
    CHECK_EQ(ops->size(q), 0);
    CHECK_EQ(ops->shift(q, &out), 0);
    ops->destroy(q);
}

TEST(ring_fifo) {
    fifo_model(&ln_queue_ring);
}
TEST(list_fifo) {
    fifo_model(&ln_queue_list);
}

static void burst(const ln_queue_ops *ops) {
    void *q;
    CHECK_EQ(ops->create(&q), 0);
    for (int rep = 0; rep < 3; rep++) {
        ln_queue_item it = {0}, out;
        for (uintptr_t i = 0; i < 100000; i++) {
            it.arg = (void *)i;
            CHECK_EQ(ops->push(q, &it), 0);
        }
        for (uintptr_t i = 0; i < 100000; i++) {
            CHECK_EQ(ops->shift(q, &out), 1);
            CHECK_EQ((uintptr_t)out.arg, i);
        }
    }
    ops->destroy(q); /* leaks would show under ASan */
}

TEST(ring_burst) {
    burst(&ln_queue_ring);
}
TEST(list_burst) {
    burst(&ln_queue_list);
}

TEST(destroy_nonempty) {
    void *q;
    ln_queue_item it = {0};
    CHECK_EQ(ln_queue_ring.create(&q), 0);
    for (int i = 0; i < 5000; i++) CHECK_EQ(ln_queue_ring.push(q, &it), 0);
    ln_queue_ring.destroy(q);
    CHECK_EQ(ln_queue_list.create(&q), 0);
    for (int i = 0; i < 50; i++) CHECK_EQ(ln_queue_list.push(q, &it), 0);
    ln_queue_list.destroy(q);
}

TEST(ring_push_enomem) {
    void *q;
    ln_queue_item it = {0};
    CHECK_EQ(ln_queue_ring.create(&q), 0);
    /* A chunk holds 2048 items; the next push needs a new chunk. */
    for (int i = 0; i < 2048; i++) CHECK_EQ(ln_queue_ring.push(q, &it), 0);
    ln_test_alloc_install(1);
    CHECK_EQ(ln_queue_ring.push(q, &it), LN_ENOMEM);
    ln_test_alloc_uninstall();
    CHECK_EQ(ln_queue_ring.size(q), 2048);
    CHECK_EQ(ln_queue_ring.push(q, &it), 0);
    ln_queue_ring.destroy(q);
}

TEST(histogram_buckets) {
    /* Every value lands in a bucket whose upper bound is >= it and within
     * 12.5% (3 sub-bucket bits); indices are monotonic. */
    unsigned prev = 0;
    for (uint64_t v = 0; v < 5000000; v += 1 + v / 64) {
        unsigned i = ln__hist_index(v);
        CHECK(i < LN_HIST_BUCKETS);
        CHECK(i >= prev);
        prev = i;
        uint64_t up = ln__hist_upper(i);
        CHECK(up >= v);
        CHECK((double)up <= (double)v * 1.125 + 1);
    }
    CHECK(ln__hist_index(UINT64_MAX) == LN_HIST_BUCKETS - 1);
}

TEST(histogram_percentiles) {
    static ln__hist h;
    for (uint64_t v = 1; v <= 1000; v++) ln__hist_record(&h, v * 1000);
    ln_latency l;
    ln__hist_summary(&h, &l);
    CHECK_EQ(l.count, 1000);
    CHECK_EQ(l.max_ns, 1000000);
    CHECK(l.p50_ns >= 500000 && l.p50_ns <= 500000 * 1.125);
    CHECK(l.p90_ns >= 900000 && l.p90_ns <= 1000000);
    CHECK(l.p99_ns >= 990000 && l.p99_ns <= 1000000);
    CHECK_EQ(l.mean_ns, 500500);
}

int main(int argc, char **argv) {
    return ln_test_run(argc, argv,
                       (ln_test_case[]){TESTCASE(ring_fifo),
                                        TESTCASE(list_fifo),
                                        TESTCASE(ring_burst),
                                        TESTCASE(list_burst),
                                        TESTCASE(destroy_nonempty),
                                        TESTCASE(ring_push_enomem),
                                        TESTCASE(histogram_buckets),
                                        TESTCASE(histogram_percentiles),
                                        {0}});
}
