/* test_backoff.c - the retry delay's computing core (src/jobs/model/backoff.[ch]):
 * the builtin types, BullMQ's jitter formula and its rounding for given
 * draws, the clamps, and the per-thread draw. The stores' side (what a
 * worker stores) is the conformance suite's conf_backoff.c. */
#include "jobs/model/backoff.h"
#include "lanes.h"
#include "testutil.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>

TEST(base_fixed_and_exponential) {
    CHECK_EQ(ln__backoff_base(LN_BACKOFF_FIXED, 100, 0), 100);
    CHECK_EQ(ln__backoff_base(LN_BACKOFF_FIXED, 100, 7), 100);
    CHECK_EQ(ln__backoff_base(LN_BACKOFF_EXPONENTIAL, 100, 0), 100); /* 2^(1-1) */
    CHECK_EQ(ln__backoff_base(LN_BACKOFF_EXPONENTIAL, 100, 3), 800);
    CHECK_EQ(ln__backoff_base(LN_BACKOFF_EXPONENTIAL, 0, 3), 0);
    CHECK_EQ(ln__backoff_base(LN_BACKOFF_EXPONENTIAL, 1, 1000), 1LL << 40);
    CHECK_EQ(ln__backoff_base(LN_BACKOFF_EXPONENTIAL, 1LL << 40, 39), LN__BACKOFF_CAP_MS);
}

/* floor(r * d * j + d * (1 - j)), as BullMQ's builtin strategies. */
TEST(jitter_formula) {
    CHECK_EQ(ln__backoff_jittered(1000, 0, 0.3), 1000); /* none */
    CHECK_EQ(ln__backoff_jittered(1000, 0.5, 0), 500);  /* the low end */
    CHECK_EQ(ln__backoff_jittered(1000, 0.5, 0.5), 750);
    CHECK_EQ(ln__backoff_jittered(1000, 0.5, 0.999), 999); /* floor */
    CHECK_EQ(ln__backoff_jittered(1000, 1, 0), 0);
    CHECK_EQ(ln__backoff_jittered(1000, 1, 0.25), 250);
    CHECK_EQ(ln__backoff_jittered(7, 0.3, 0.5), 5); /* 1.05 + 4.9 = 5.95 */
    CHECK_EQ(ln__backoff_jittered(3, 0.1, 0), 2);   /* 2.7: floor, below (1-j) d */
    CHECK_EQ(ln__backoff_jittered(0, 0.5, 0.5), 0);
    /* the largest draw below 1 stays within d */
    CHECK(ln__backoff_jittered(LN__BACKOFF_CAP_MS, 0.5, nextafter(1.0, 0.0)) <= LN__BACKOFF_CAP_MS);
    CHECK(ln__backoff_jittered(LN__BACKOFF_CAP_MS, 1e-12, 0.9999999) <= LN__BACKOFF_CAP_MS);
    /* out of range inputs are clamped, never outside [0, d] */
    CHECK_EQ(ln__backoff_jittered(1000, 2, 0), 0);
    CHECK_EQ(ln__backoff_jittered(1000, NAN, 0.5), 1000);
    CHECK_EQ(ln__backoff_jittered(1000, 0.5, -1), 500);
    CHECK(ln__backoff_jittered(1000, 0.5, 1) <= 1000);
    for (double r = 0; r < 1; r += 0.001) {
        int64_t v = ln__backoff_jittered(12345, 0.2, r);
        CHECK(v >= (int64_t)floor(12345 * 0.8) && v <= 12345);
    }
}

TEST(clamps) {
    CHECK(ln__backoff_clamp_jitter(0.5) == 0.5);
    CHECK(ln__backoff_clamp_jitter(-1) == 0);
    CHECK(ln__backoff_clamp_jitter(7) == 1);
    CHECK(ln__backoff_clamp_jitter(NAN) == 0);
    CHECK_EQ(ln__backoff_strategy_delay(-1), -1);
    CHECK_EQ(ln__backoff_strategy_delay(-7), 0);
    CHECK_EQ(ln__backoff_strategy_delay(0), 0);
    CHECK_EQ(ln__backoff_strategy_delay(1234), 1234);
    CHECK_EQ(ln__backoff_strategy_delay(INT64_MAX), LN__BACKOFF_CAP_MS);
}

/* Draws lie in [0, 1), spread over it, and differ between threads. */
static void *draw_some(void *out) {
    double *d = out;
    for (int i = 0; i < 64; i++) d[i] = ln__backoff_random();
    return NULL;
}

TEST(random_draws) {
    int bins[10] = {0};
    for (int i = 0; i < 100000; i++) {
        double r = ln__backoff_random();
        CHECK(r >= 0 && r < 1);
        bins[(int)(r * 10)]++;
    }
    for (int b = 0; b < 10; b++) CHECK(bins[b] > 9000 && bins[b] < 11000);
    double a[64], b[64];
    pthread_t t1, t2;
    CHECK_EQ(pthread_create(&t1, NULL, draw_some, a), 0);
    CHECK_EQ(pthread_create(&t2, NULL, draw_some, b), 0);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    int same = 0;
    for (int i = 0; i < 64; i++) same += a[i] == b[i];
    CHECK(same < 2);
}

int main(int argc, char **argv) {
    static const ln_test_case cases[] = {TESTCASE(base_fixed_and_exponential),
                                         TESTCASE(jitter_formula),
                                         TESTCASE(clamps),
                                         TESTCASE(random_draws),
                                         {0}};
    return ln_test_run(argc, argv, cases);
}
