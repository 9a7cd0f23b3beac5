/* test_alloc_fail.c - fail the Nth allocation of a whole scenario, for
 * every N until the scenario needs no more allocations: each failure must
 * surface as LN_ENOMEM (or a clean refusal), never a crash, and nothing may
 * leak (the counting allocator tracks live blocks; ASan checks the rest). */
#include "testutil.h"

#include <lanes.h>

static void *plus_one(void *arg) {
    return (void *)((uintptr_t)arg + 1);
}
static void on_done(void *arg, void *result, int status) {
    (void)arg;
    (void)result;
    (void)status;
}

/* Returns 0 when it ran to the end, or the first error it met. */
static int scenario(void) {
    ln_pool_opts o;
    ln_pool_opts_init(&o);
    o.lanes[0].min_threads = o.lanes[0].max_threads = 2;
    o.lanes[0].queue = &ln_queue_list; /* one allocation per push */
    ln_pool *p = NULL;
    int rc = ln_pool_create(&p, &o);
    if (rc != 0) {
        CHECK(p == NULL);
        return rc;
    }
    ln_group *g = NULL;
    rc = ln_group_create(&g, p);
    for (uintptr_t i = 0; rc == 0 && i < 50; i++) rc = ln_group_submit(g, 0, plus_one, (void *)i);
    ln_task *t = NULL;
    if (rc == 0) rc = ln_submit(p, 1, plus_one, (void *)1, &t);
    if (rc == 0) rc = ln_submit_cb(p, 0, plus_one, NULL, on_done, NULL);
    if (t != NULL) {
        void *r;
        CHECK_EQ(ln_task_wait(t, &r), 0);
        CHECK_EQ((uintptr_t)r, 2);
        ln_task_release(t);
    }
    ln_lane_stats st;
    if (rc == 0) rc = ln_pool_stats(p, 0, &st);
    if (g != NULL) {
        CHECK_EQ(ln_group_wait(g), 0);
        ln_group_destroy(g);
    }
    ln_pool_destroy(p);
    return rc;
}

TEST(every_allocation_can_fail) {
    /* Count the allocations of a clean run first. */
    ln_test_alloc_install(0);
    CHECK_EQ(scenario(), 0);
    long total = ln_test_alloc_calls();
    CHECK_EQ(ln_test_alloc_live(), 0);
    ln_test_alloc_uninstall();
    CHECK(total > 10);
    int saw_enomem = 0;
    for (long n = 1; n <= total; n++) {
        ln_test_alloc_install(n);
        int rc = scenario();
        long live = ln_test_alloc_live();
        ln_test_alloc_uninstall();
        if (live != 0) fprintf(stderr, "leak of %ld blocks when allocation %ld fails\n", live, n);
        CHECK_EQ(live, 0);
        /* pthread_create may also report LN_EAGAIN when its own internal
         * allocations are not ours: accept only these two. */
        CHECK(rc == 0 || rc == LN_ENOMEM || rc == LN_EAGAIN);
        if (rc == LN_ENOMEM) saw_enomem++;
    }
    CHECK(saw_enomem > 0);
}

int main(int argc, char **argv) {
    return ln_test_run(argc, argv, (ln_test_case[]){TESTCASE(every_allocation_can_fail), {0}});
}
