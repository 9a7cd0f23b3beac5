/* test_writepath_concurrency.c - the two concurrency pieces of
 * examples/writepath:
 *  - the connection pool (dbpool.c): never more connections out than its
 *    size, every waiter served;
 *  - group commit of job adds (enqueue.c): every job added from many
 *    threads at once is stored exactly once, batches never exceed their
 *    bound, and a failing batch reports its error to the callers in it and
 *    stores nothing. */
#include "testutil.h"

#include "dbpool.h"
#include "enqueue.h"

#include <stdatomic.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { THREADS = 16, PER_THREAD = 150, MAX_BATCH = 8 };

typedef struct adder {
    wp_enqueuer *e;
    int index;
    int failures;
    unsigned max_batch_seen;
} adder;

static void *add_many(void *arg) {
    adder *a = arg;
    for (int i = 0; i < PER_THREAD; i++) {
        char data[64], id[64];
        snprintf(data, sizeof data, "{\"t\":%d,\"i\":%d}", a->index, i);
        snprintf(id, sizeof id, "job-%d-%d", a->index, i);
        ln_job_opts opts;
        ln_job_opts_init(&opts);
        opts.job_id = id;
        ln_job_spec spec = {.name = "n", .data_json = data, .opts = &opts};
        unsigned batch = 0;
        if (wp_enqueue(a->e, &spec, &batch) != 0) a->failures++;
        if (batch > a->max_batch_seen) a->max_batch_seen = batch;
    }
    return NULL;
}

static ln_jobs *open_store(char *dir, size_t size) {
    snprintf(dir, size, "/tmp/writepath-enqueue-XXXXXX");
    CHECK(mkdtemp(dir) != NULL);
    char url[128];
    snprintf(url, sizeof url, "sqlite:%s/q.db", dir);
    ln_jobs *jobs = NULL;
    CHECK_EQ(ln_jobs_open(&jobs, url), 0);
    return jobs;
}

static void remove_store(const char *dir) {
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK_EQ(system(cmd), 0);
}

TEST(many_threads_every_job_once) {
    char dir[64];
    ln_jobs *jobs = open_store(dir, sizeof dir);
    wp_enqueuer *e = NULL;
    CHECK_EQ(wp_enqueuer_create(&e, jobs, "q", MAX_BATCH), 0);
    pthread_t t[THREADS];
    adder a[THREADS];
    for (int i = 0; i < THREADS; i++) {
        a[i] = (adder){.e = e, .index = i};
        CHECK_EQ(pthread_create(&t[i], NULL, add_many, &a[i]), 0);
    }
    unsigned max_seen = 0;
    for (int i = 0; i < THREADS; i++) {
        pthread_join(t[i], NULL);
        CHECK_EQ(a[i].failures, 0);
        if (a[i].max_batch_seen > max_seen) max_seen = a[i].max_batch_seen;
    }
    CHECK(max_seen >= 1 && max_seen <= MAX_BATCH);
    ln_job_counts c;
    CHECK_EQ(ln_jobs_counts(jobs, "q", &c), 0);
    CHECK_EQ(c.waiting, THREADS * PER_THREAD);
    /* Spot-check one job of each thread by its id. */
    for (int i = 0; i < THREADS; i++) {
        char id[64];
        ln_job_info info;
        snprintf(id, sizeof id, "job-%d-%d", i, PER_THREAD - 1);
        CHECK_EQ(ln_jobs_get(jobs, "q", id, &info), 0);
        ln_job_info_clear(&info);
    }
    wp_enqueuer_destroy(e);
    ln_jobs_close(jobs);
    remove_store(dir);
}

TEST(failed_batch_reports_and_stores_nothing) {
    char dir[64];
    ln_jobs *jobs = open_store(dir, sizeof dir);
    wp_enqueuer *e = NULL;
    CHECK_EQ(wp_enqueuer_create(&e, jobs, "q", MAX_BATCH), 0);
    ln_job_spec bad = {.name = "n", .data_json = "{not json", .opts = NULL};
    /* The caller gets exactly what the store said about its batch. */
    int direct = ln_jobs_add_bulk(jobs, "q", &bad, 1, NULL, 0);
    CHECK(direct < 0);
    unsigned batch = 0;
    CHECK_EQ(wp_enqueue(e, &bad, &batch), direct);
    CHECK_EQ(batch, 1);
    ln_job_spec good = {.name = "n", .data_json = "{}", .opts = NULL};
    CHECK_EQ(wp_enqueue(e, &good, &batch), 0);
    ln_job_counts c;
    CHECK_EQ(ln_jobs_counts(jobs, "q", &c), 0);
    CHECK_EQ(c.waiting, 1);
    wp_enqueuer_destroy(e);
    ln_jobs_close(jobs);
    remove_store(dir);
}

enum { POOL = 3, POOL_THREADS = 12, POOL_ROUNDS = 200 };

typedef struct borrower {
    wp_dbpool *pool;
    atomic_int *out;  /* connections out now */
    atomic_int *peak; /* most ever out at once */
    wp_conn **seen;   /* the connections handed out, POOL_ROUNDS each */
} borrower;

static void *borrow(void *arg) {
    borrower *b = arg;
    for (int i = 0; i < POOL_ROUNDS; i++) {
        wp_conn *c = wp_dbpool_acquire(b->pool);
        /* relaxed: the counters are only compared, the pool's mutex orders
         * the hand-offs themselves. */
        int now = atomic_fetch_add_explicit(b->out, 1, memory_order_relaxed) + 1;
        int peak = atomic_load_explicit(b->peak, memory_order_relaxed);
        while (now > peak && !atomic_compare_exchange_weak_explicit(
                                 b->peak, &peak, now, memory_order_relaxed, memory_order_relaxed)) {
        }
        b->seen[i] = c;
        if (i % 16 == 0) usleep(100); /* hold it a little, so others queue */
        atomic_fetch_sub_explicit(b->out, 1, memory_order_relaxed);
        wp_dbpool_release(b->pool, c);
    }
    return NULL;
}

TEST(pool_bounds_connections_out) {
    char dir[64], path[96];
    snprintf(dir, sizeof dir, "/tmp/writepath-pool-XXXXXX");
    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/d.db", dir);
    CHECK_EQ(wp_db_init(path), 0);
    wp_dbpool *pool = NULL;
    CHECK_EQ(wp_dbpool_open(&pool, path, POOL), 0);
    atomic_int out = 0, peak = 0;
    static wp_conn *seen[POOL_THREADS][POOL_ROUNDS];
    pthread_t t[POOL_THREADS];
    borrower b[POOL_THREADS];
    for (int i = 0; i < POOL_THREADS; i++) {
        b[i] = (borrower){pool, &out, &peak, seen[i]};
        CHECK_EQ(pthread_create(&t[i], NULL, borrow, &b[i]), 0);
    }
    for (int i = 0; i < POOL_THREADS; i++) pthread_join(t[i], NULL);
    CHECK(atomic_load(&peak) >= 1 && atomic_load(&peak) <= POOL);
    CHECK_EQ(atomic_load(&out), 0);
    /* Only the pool's own connections were handed out. */
    wp_conn *distinct[POOL] = {0};
    int n = 0;
    for (int i = 0; i < POOL_THREADS; i++) {
        for (int r = 0; r < POOL_ROUNDS; r++) {
            int known = 0;
            for (int k = 0; k < n; k++) known |= distinct[k] == seen[i][r];
            if (!known) {
                CHECK(n < POOL);
                distinct[n++] = seen[i][r];
            }
        }
    }
    wp_dbpool_close(pool);
    remove_store(dir);
}

TEST(create_rejects_zero_batch) {
    wp_enqueuer *e = NULL;
    CHECK_EQ(wp_enqueuer_create(&e, NULL, "q", 0), -1);
    CHECK(e == NULL);
    wp_enqueuer_destroy(NULL);
}

int main(int argc, char **argv) {
    return ln_test_run(argc, argv,
                       (ln_test_case[]){TESTCASE(many_threads_every_job_once),
                                        TESTCASE(failed_batch_reports_and_stores_nothing),
                                        TESTCASE(pool_bounds_connections_out),
                                        TESTCASE(create_rejects_zero_batch),
                                        {0}});
}
