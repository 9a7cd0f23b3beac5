/* quickstart.c - the README's first example: square 1,000 numbers on the CPU
 * lane and wait for the batch with a group, then square one number on the I/O
 * lane and wait for its result with a future. Build: cc quickstart.c
 * $(pkg-config --cflags --libs lanes) */
#include <lanes.h>
#include <stdio.h>

static void *square(void *arg) {
    long v = (long)arg;
    return (void *)(v * v);
}

int main(void) {
    ln_pool *pool;
    int rc = ln_pool_create(&pool, NULL); /* CPU lane + I/O lane */
    if (rc != 0) return fprintf(stderr, "%s\n", ln_strerror(rc)), 1;

    ln_group *batch; /* many tasks, no handle each */
    ln_group_create(&batch, pool);
    for (long i = 0; i < 1000; i++) ln_group_submit(batch, LN_LANE_CPU, square, (void *)i);
    ln_group_wait(batch);
    ln_group_destroy(batch);

    ln_task *t; /* one task, one future */
    ln_submit(pool, LN_LANE_IO, square, (void *)12, &t);
    void *result;
    if (ln_task_wait(t, &result) == 0) printf("12 squared is %ld\n", (long)result);
    ln_task_release(t);

    ln_pool_destroy(pool);
    return 0;
}
