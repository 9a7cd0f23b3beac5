/* test_writepath_concurrency.c - the concurrency pieces of
 * examples/writepath:
 *  - the connection pool (dbpool.c): never more connections out than its
 *    size, every waiter served;
 *  - the outbox relay (outbox.c): every committed outbox row becomes
 *    exactly one job and is deleted only after that, also while request
 *    threads commit rows and wake it, and when it is run again over rows
 *    whose jobs were already added (a relay killed between add and
 *    delete); a failing add leaves the rows. */
#include "testutil.h"

#include "dbpool.h"
#include "outbox.h"

#include <stdatomic.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static ln_jobs *open_store(char *dir, size_t size) {
    snprintf(dir, size, "/tmp/writepath-relay-XXXXXX");
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

static long outbox_rows(wp_conn *c) {
    sqlite3_stmt *st = NULL;
    long n = -1;
    if (sqlite3_prepare_v2(c->db, "SELECT count(*) FROM outbox", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        n = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    return n;
}

static long waiting(ln_jobs *jobs) {
    ln_job_counts n;
    CHECK_EQ(ln_jobs_counts(jobs, "q", &n), 0);
    return (long)n.waiting;
}

TEST(relay_moves_each_outbox_row_once) {
    char dir[64], path[96];
    ln_jobs *jobs = open_store(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/d.db", dir);
    CHECK_EQ(wp_db_init(path), 0);
    wp_conn *c = wp_conn_open(path);
    CHECK(c != NULL);
    wp_trace tr;
    wp_trace_begin(&tr, NULL, NULL, 1);
    wp_span *root = wp_span_start(&tr, NULL, NULL, "t", WP_KIND_SERVER);
    static wp_write w[OUTBOX_ROWS + 5];
    for (int i = 0; i < OUTBOX_ROWS + 5; i++) {
        w[i] = (wp_write){.kind = i % 7 ? WP_COMMENT : WP_LIKE,
                          .post_id = 1 + i % 10,
                          .user_id = 2 + i,
                          .body = "x"};
        CHECK_EQ(wp_write_insert_outbox(c, &tr, root, &w[i], NULL), WP_OK);
        CHECK(w[i].outbox > 0);
    }
    /* A queue the store refuses: the add fails and every row stays. */
    wp_relay *bad = NULL;
    CHECK_EQ(wp_relay_open(&bad, path, jobs, ""), 0);
    CHECK_EQ(wp_relay_drain(bad), -1);
    wp_relay_close(bad);
    CHECK_EQ(outbox_rows(c), OUTBOX_ROWS + 5);

    /* The last 5 rows' jobs are stored already, as by a relay killed
     * between its add and its delete. */
    char tag[WP_TAG_LEN + 1], ids[5][WP_JOB_ID_LEN], data[5][WP_JOB_DATA_LEN];
    CHECK_EQ(wp_outbox_tag(c, tag), 0);
    ln_job_spec specs[5];
    ln_job_opts opts[5];
    for (int i = 0; i < 5; i++) {
        wp_outbox_job_id(tag, w[OUTBOX_ROWS + i].outbox, ids[i], sizeof ids[i]);
        wp_outbox_job_data(&w[OUTBOX_ROWS + i], data[i], sizeof data[i]);
        wp_outbox_job_opts(&opts[i], ids[i], NULL);
        specs[i] = (ln_job_spec){.name = "n", .data_json = data[i], .opts = &opts[i]};
    }
    CHECK_EQ(ln_jobs_add_bulk(jobs, "q", specs, 5, NULL, 0), 0);

    wp_relay *r = NULL;
    CHECK_EQ(wp_relay_open(&r, path, jobs, "q"), 0);
    CHECK_EQ(wp_relay_drain(r), OUTBOX_ROWS + 5);
    CHECK_EQ(waiting(jobs), OUTBOX_ROWS + 5); /* none twice */
    CHECK_EQ(outbox_rows(c), 0);
    CHECK_EQ(wp_relay_drain(r), 0);
    /* A job carries its row's data under the row's id. */
    char id[WP_JOB_ID_LEN], want[WP_JOB_DATA_LEN];
    wp_outbox_job_id(tag, w[7].outbox, id, sizeof id);
    wp_outbox_job_data(&w[7], want, sizeof want);
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(jobs, "q", id, &info), 0);
    CHECK(strcmp(info.data, want) == 0);
    CHECK(strcmp(info.name, "like") == 0);
    ln_job_info_clear(&info);
    wp_relay_close(r);
    wp_conn_close(c);
    ln_jobs_close(jobs);
    remove_store(dir);
}

enum { WRITERS = 4, WRITES = 100 };

typedef struct writer {
    wp_dbpool *pool;
    wp_relay *relay;
    int index, failures;
} writer;

/* What the service's request thread does in async mode. */
static void *write_many(void *arg) {
    writer *a = arg;
    for (int i = 0; i < WRITES; i++) {
        wp_trace tr;
        wp_trace_begin(&tr, NULL, NULL, 1);
        wp_span *root = wp_span_start(&tr, NULL, NULL, "t", WP_KIND_SERVER);
        wp_write w = {
            .kind = WP_COMMENT, .post_id = 1 + i % 10, .user_id = 3 + a->index, .body = "y"};
        wp_conn *c = wp_dbpool_acquire(a->pool);
        int rc = wp_write_insert_outbox(c, &tr, root, &w, NULL);
        wp_dbpool_release(a->pool, c);
        if (rc == WP_OK)
            wp_relay_notify(a->relay);
        else
            a->failures++;
        if (i % 10 == 0) usleep(200); /* let the relay catch up and sleep */
    }
    return NULL;
}

/* The relay's thread woken by request threads: every row ends as exactly
 * one job, and the outbox is empty after the close. */
TEST(relay_thread_races_the_requests) {
    char dir[64], path[96];
    ln_jobs *jobs = open_store(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/d.db", dir);
    CHECK_EQ(wp_db_init(path), 0);
    wp_dbpool *pool = NULL;
    CHECK_EQ(wp_dbpool_open(&pool, path, 2), 0);
    wp_relay *r = NULL;
    CHECK_EQ(wp_relay_open(&r, path, jobs, "q"), 0);
    CHECK_EQ(wp_relay_start(r), 0);
    pthread_t t[WRITERS];
    writer a[WRITERS];
    for (int i = 0; i < WRITERS; i++) {
        a[i] = (writer){.pool = pool, .relay = r, .index = i};
        CHECK_EQ(pthread_create(&t[i], NULL, write_many, &a[i]), 0);
    }
    for (int i = 0; i < WRITERS; i++) {
        pthread_join(t[i], NULL);
        CHECK_EQ(a[i].failures, 0);
    }
    wp_relay_close(r);
    CHECK_EQ(waiting(jobs), WRITERS * WRITES);
    wp_conn *c = wp_dbpool_acquire(pool);
    CHECK_EQ(outbox_rows(c), 0);
    wp_dbpool_release(pool, c);
    wp_dbpool_close(pool);
    ln_jobs_close(jobs);
    remove_store(dir);
}

int main(int argc, char **argv) {
    return ln_test_run(argc, argv,
                       (ln_test_case[]){TESTCASE(pool_bounds_connections_out),
                                        TESTCASE(relay_moves_each_outbox_row_once),
                                        TESTCASE(relay_thread_races_the_requests),
                                        {0}});
}
