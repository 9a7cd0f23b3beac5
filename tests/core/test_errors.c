/* test_errors.c - the error table, version, and argument checks. */
#include "testutil.h"

#include <lanes.h>

#include <stdio.h>
#include <string.h>

TEST(error_table) {
    CHECK(strcmp(ln_strerror(LN_EINVAL), "invalid argument") == 0);
    CHECK(strcmp(ln_err_name(LN_EINVAL), "LN_EINVAL") == 0);
    CHECK(strcmp(ln_err_name(LN_EJSON), "LN_EJSON") == 0);
    CHECK(strcmp(ln_err_name(0), "LN_OK") == 0);
    CHECK(strcmp(ln_strerror(12345), "unknown error") == 0);
    CHECK(strcmp(ln_err_name(-999999), "LN_UNKNOWN") == 0);
    CHECK(LN_EINVAL < 0 && LN_EAGAIN < 0 && LN_EBACKEND < 0);
    /* every code has a distinct name and text */
#define XX(name, value, text)                                                                      \
    CHECK(strcmp(ln_err_name(value), "LN_" #name) == 0);                                           \
    CHECK(strcmp(ln_strerror(value), text) == 0);
    LN_ERRNO_MAP(XX)
#undef XX
}

TEST(version) {
    char want[32];
    snprintf(want, sizeof want, "%d.%d.%d", LN_VERSION_MAJOR, LN_VERSION_MINOR, LN_VERSION_PATCH);
    CHECK(strcmp(ln_version_string(), want) == 0);
    CHECK_EQ(ln_version(), LN_VERSION_HEX);
    CHECK(LN_AT_LEAST_VERSION(LN_VERSION_MAJOR, LN_VERSION_MINOR, LN_VERSION_PATCH));
    CHECK(!LN_AT_LEAST_VERSION(9, 0, 0));
}

TEST(null_arguments) {
    CHECK_EQ(ln_pool_create(NULL, NULL), LN_EINVAL);
    CHECK_EQ(ln_pool_drain(NULL), LN_EINVAL);
    CHECK_EQ(ln_submit(NULL, 0, NULL, NULL, NULL), LN_EINVAL);
    CHECK_EQ(ln_task_wait(NULL, NULL), LN_EINVAL);
    CHECK_EQ(ln_task_cancel(NULL), LN_EINVAL);
    CHECK_EQ(ln_group_create(NULL, NULL), LN_EINVAL);
    CHECK_EQ(ln_group_submit(NULL, 0, NULL, NULL), LN_EINVAL);
    CHECK_EQ(ln_group_wait(NULL), LN_EINVAL);
    CHECK_EQ(ln_pool_stats(NULL, 0, NULL), LN_EINVAL);
    CHECK_EQ(ln_pool_completion_fd(NULL), LN_EINVAL);
    CHECK_EQ(ln_pool_run_completions(NULL), LN_EINVAL);
    CHECK_EQ(ln_set_allocator(NULL, NULL, NULL, NULL), LN_EINVAL);
    ln_pool_destroy(NULL);
    ln_task_release(NULL);
    ln_group_destroy(NULL);
}

TEST(bad_options) {
    ln_pool_opts o;
    ln_pool *p = NULL;
    ln_pool_opts_init(&o);
    o.nlanes = 0;
    CHECK_EQ(ln_pool_create(&p, &o), LN_EINVAL);
    ln_pool_opts_init(&o);
    o.nlanes = LN_MAX_LANES + 1;
    CHECK_EQ(ln_pool_create(&p, &o), LN_EINVAL);
    ln_pool_opts_init(&o);
    o.lanes[0].max_threads = 0;
    CHECK_EQ(ln_pool_create(&p, &o), LN_EINVAL);
    ln_pool_opts_init(&o);
    o.lanes[0].min_threads = 5;
    o.lanes[0].max_threads = 2;
    CHECK_EQ(ln_pool_create(&p, &o), LN_EINVAL);
    ln_pool_opts_init(&o);
    o.when_full = 7;
    CHECK_EQ(ln_pool_create(&p, &o), LN_EINVAL);
    ln_pool_opts_init(&o);
    ln_queue_ops bad = ln_queue_ring;
    bad.version = 99;
    o.lanes[1].queue = &bad;
    CHECK_EQ(ln_pool_create(&p, &o), LN_EINVAL);
    CHECK(p == NULL);
}

static void *noop(void *a) {
    return a;
}

TEST(bad_lane_and_flags) {
    ln_pool *p;
    CHECK_EQ(ln_pool_create(&p, NULL), 0);
    CHECK_EQ(ln_submit(p, -1, noop, NULL, NULL), LN_EINVAL);
    CHECK_EQ(ln_submit(p, 2, noop, NULL, NULL), LN_EINVAL);
    CHECK_EQ(ln_submit(p, 0, NULL, NULL, NULL), LN_EINVAL);
    CHECK_EQ(ln_submit_ex(p, 0, noop, NULL, 99, NULL), LN_EINVAL);
    CHECK_EQ(ln_submit_cb(p, 0, noop, NULL, NULL, NULL), LN_EINVAL);
    ln_lane_stats st;
    CHECK_EQ(ln_pool_stats(p, 5, &st), LN_EINVAL);
    CHECK_EQ(ln_pool_lane_index(p, "cpu"), 0);
    CHECK_EQ(ln_pool_lane_index(p, "io"), 1);
    CHECK_EQ(ln_pool_lane_index(p, "gpu"), LN_ENOENT);
    CHECK_EQ(ln_pool_lanes(p), 2);
    ln_pool_destroy(p);
}

TEST(lanes_threads_env) {
    setenv("LANES_THREADS", "3", 1);
    ln_pool_opts o;
    ln_pool_opts_init(&o);
    CHECK_EQ(o.lanes[0].min_threads, 3);
    CHECK_EQ(o.lanes[0].max_threads, 3);
    setenv("LANES_THREADS", "zero", 1);
    ln_pool_opts_init(&o);
    CHECK(o.lanes[0].max_threads >= 1); /* ignored: falls back to CPUs */
    setenv("LANES_THREADS", "0", 1);
    ln_pool_opts_init(&o);
    CHECK(o.lanes[0].max_threads >= 1);
    unsetenv("LANES_THREADS");
}

int main(int argc, char **argv) {
    return ln_test_run(argc, argv,
                       (ln_test_case[]){TESTCASE(error_table),
                                        TESTCASE(version),
                                        TESTCASE(null_arguments),
                                        TESTCASE(bad_options),
                                        TESTCASE(bad_lane_and_flags),
                                        TESTCASE(lanes_threads_env),
                                        {0}});
}
