/* test_writepath_concurrency.c - the two concurrency pieces of
 * examples/writepath:
 *  - the connection pool (dbpool.c): never more connections out than its
 *    size, every waiter served;
 *  - group commit of job adds (enqueue.c): every job added from many
 *    threads at once is stored exactly once, batches never exceed their
 *    bound, and a failing batch reports its error to the callers in it and
 *    stores nothing;
 *  - the outbox relay (outbox.c): each outbox row gets exactly one job,
 *    however often it is swept and while requests add the same jobs from
 *    other threads; rows whose follow-ups ran (or were undone) get none. */
#include "testutil.h"

#include "dbpool.h"
#include "enqueue.h"
#include "outbox.h"

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

enum { OUTBOX_ROWS = 300 }; /* more than one relay batch */

TEST(relay_adds_each_outbox_row_once) {
    char dir[64], path[96];
    ln_jobs *jobs = open_store(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/d.db", dir);
    CHECK_EQ(wp_db_init(path), 0);
    wp_conn *c = wp_conn_open(path);
    CHECK(c != NULL);
    wp_trace tr;
    wp_trace_begin(&tr, NULL, NULL, 1);
    wp_span *root = wp_span_start(&tr, NULL, NULL, "t", WP_KIND_SERVER);
    static wp_write w[OUTBOX_ROWS];
    for (int i = 0; i < OUTBOX_ROWS; i++) {
        w[i] = (wp_write){
            .kind = WP_COMMENT, .post_id = 1 + i % 10, .user_id = 2 + i % 50, .body = "x"};
        CHECK_EQ(wp_write_insert_outbox(c, &tr, root, &w[i], NULL), WP_OK);
        CHECK(w[i].outbox > 0);
    }
    wp_relay *r = NULL;
    CHECK_EQ(wp_relay_open(&r, path, jobs, "q"), 0);
    ln_job_counts n;
    for (int pass = 0; pass < 2; pass++) { /* the second sweep adds nothing new */
        CHECK_EQ(wp_relay_sweep(r, 0), OUTBOX_ROWS);
        CHECK_EQ(ln_jobs_counts(jobs, "q", &n), 0);
        CHECK_EQ(n.waiting, OUTBOX_ROWS);
    }
    char tag[WP_TAG_LEN + 1], id[WP_JOB_ID_LEN];
    CHECK_EQ(wp_outbox_tag(c, tag), 0);
    wp_outbox_job_id(tag, w[7].outbox, id, sizeof id);
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(jobs, "q", id, &info), 0);
    char want[WP_JOB_DATA_LEN];
    wp_outbox_job_data(&w[7], want, sizeof want);
    CHECK(strcmp(info.data, want) == 0);
    ln_job_info_clear(&info);
    /* Follow-ups done for 10 rows (one of them twice), one write undone. */
    int targets;
    for (int i = 0; i < 10; i++) CHECK_EQ(wp_write_followups(c, &tr, root, &w[i], &targets), WP_OK);
    CHECK_EQ(wp_write_followups(c, &tr, root, &w[0], &targets), WP_OK);
    CHECK_EQ(targets, 0);
    CHECK_EQ(wp_write_undo(c, &tr, root, &w[10]), WP_OK);
    CHECK_EQ(wp_relay_sweep(r, 0), OUTBOX_ROWS - 11);
    CHECK_EQ(wp_relay_sweep(r, 60 * 1000), 0); /* every row is younger than a minute */
    wp_relay_close(r);
    wp_conn_close(c);
    ln_jobs_close(jobs);
    remove_store(dir);
}

enum { WRITERS = 4, WRITES = 100 };

typedef struct writer {
    wp_dbpool *pool;
    wp_enqueuer *e;
    const char *tag;
    int failures;
} writer;

/* What the service's request thread does in async mode. */
static void *write_many(void *arg) {
    writer *a = arg;
    for (int i = 0; i < WRITES; i++) {
        wp_trace tr;
        wp_trace_begin(&tr, NULL, NULL, 1);
        wp_span *root = wp_span_start(&tr, NULL, NULL, "t", WP_KIND_SERVER);
        wp_write w = {.kind = WP_COMMENT, .post_id = 1 + i % 10, .user_id = 3, .body = "y"};
        wp_conn *c = wp_dbpool_acquire(a->pool);
        int rc = wp_write_insert_outbox(c, &tr, root, &w, NULL);
        wp_dbpool_release(a->pool, c);
        char data[WP_JOB_DATA_LEN], id[WP_JOB_ID_LEN];
        wp_outbox_job_data(&w, data, sizeof data);
        wp_outbox_job_id(a->tag, w.outbox, id, sizeof id);
        ln_job_opts opts;
        wp_outbox_job_opts(&opts, id, NULL);
        ln_job_spec spec = {.name = "comment", .data_json = data, .opts = &opts};
        if (rc != WP_OK || wp_enqueue(a->e, &spec, NULL) != 0) a->failures++;
    }
    return NULL;
}

/* The relay's thread sweeping every millisecond while requests add the
 * same jobs: every row ends with exactly one job. */
TEST(relay_thread_races_the_requests) {
    char dir[64], path[96], tag[WP_TAG_LEN + 1];
    ln_jobs *jobs = open_store(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/d.db", dir);
    CHECK_EQ(wp_db_init(path), 0);
    wp_dbpool *pool = NULL;
    CHECK_EQ(wp_dbpool_open(&pool, path, 2), 0);
    wp_conn *c = wp_dbpool_acquire(pool);
    CHECK_EQ(wp_outbox_tag(c, tag), 0);
    wp_dbpool_release(pool, c);
    wp_enqueuer *e = NULL;
    CHECK_EQ(wp_enqueuer_create(&e, jobs, "q", MAX_BATCH), 0);
    wp_relay *r = NULL;
    CHECK_EQ(wp_relay_open(&r, path, jobs, "q"), 0);
    CHECK_EQ(wp_relay_start(r, 1, 0), 0);
    pthread_t t[WRITERS];
    writer a[WRITERS];
    for (int i = 0; i < WRITERS; i++) {
        a[i] = (writer){.pool = pool, .e = e, .tag = tag};
        CHECK_EQ(pthread_create(&t[i], NULL, write_many, &a[i]), 0);
    }
    for (int i = 0; i < WRITERS; i++) {
        pthread_join(t[i], NULL);
        CHECK_EQ(a[i].failures, 0);
    }
    wp_relay_close(r);
    ln_job_counts n;
    CHECK_EQ(ln_jobs_counts(jobs, "q", &n), 0);
    CHECK_EQ(n.waiting, WRITERS * WRITES);
    wp_enqueuer_destroy(e);
    wp_dbpool_close(pool);
    ln_jobs_close(jobs);
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
                                        TESTCASE(relay_adds_each_outbox_row_once),
                                        TESTCASE(relay_thread_races_the_requests),
                                        {0}});
}
