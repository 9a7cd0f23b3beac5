/* test_workers.c - the parts of ln_jobs_workers that time or a server's
 * reply decide, checked without waiting and without a server: the
 * heartbeat's due test (a fake clock), the SQLite store's listing window
 * and pruning (rows written with chosen heartbeat times), and the parser
 * of Redis's CLIENT LIST text (src/jobs/redis/workers.c) on edge cases. */
#include "jobs/jobs_test.h"

#include "jobs/worker/worker_int.h"
#ifdef WK_HAVE_REDIS
#include "jobs/redis/redis_workers.h"
#endif

#define NOW_SQL "CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER)"

TEST(beat_due_on_a_fake_clock) {
    CHECK(ln__beat_due(0, 5));                        /* a run's first round */
    CHECK(!ln__beat_due(2000, 1999));                 /* not yet */
    CHECK(ln__beat_due(2000, 2000));                  /* due */
    CHECK(ln__beat_due(2000, 999999));                /* late (a long step) */
    CHECK(!ln__beat_due(UINT64_MAX, UINT64_MAX - 1)); /* a store without beats */
}

static void exec_sql(const char *sql) {
    sqlite3 *db;
    CHECK_EQ(sqlite3_open(jt_path("w.db"), &db), SQLITE_OK);
    char *err = NULL;
    int rc = sqlite3_exec(db, sql, NULL, NULL, &err);
    if (rc != SQLITE_OK) fprintf(stderr, "%s: %s\n", sql, err);
    CHECK_EQ(rc, SQLITE_OK);
    sqlite3_close(db);
}

static int64_t count_rows(void) {
    sqlite3 *db;
    sqlite3_stmt *st;
    CHECK_EQ(sqlite3_open(jt_path("w.db"), &db), SQLITE_OK);
    CHECK_EQ(sqlite3_prepare_v2(db, "SELECT count(*) FROM lanes_workers", -1, &st, NULL),
             SQLITE_OK);
    CHECK_EQ(sqlite3_step(st), SQLITE_ROW);
    int64_t n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return n;
}

/* A row whose last heartbeat is ago_ms old. */
static void row(const char *queue, const char *name, int64_t ago_ms) {
    char sql[512];
    snprintf(sql, sizeof sql,
             "INSERT INTO lanes_workers(queue, name, host, pid, started_at, seen_at) "
             "VALUES ('%s', '%s', 'h', 1, " NOW_SQL " - %lld, " NOW_SQL " - %lld)",
             queue, name, (long long)ago_ms + 1000, (long long)ago_ms);
    exec_sql(sql);
}

static int runs(ln_job *job, void *ctx) {
    (void)job;
    (void)ctx;
    return 0;
}

TEST(sqlite_window_and_prune) {
    ln_jobs *jobs = jt_open(jt_url("w"));
    row("q", "fresh", 0);
    row("q", "edge", LN_JOB_WORKER_WINDOW_MS - 1500); /* inside, with room for the test */
    row("q", "late", LN_JOB_WORKER_WINDOW_MS + 1500); /* a crashed run */
    row("q", "ancient", 20 * LN_JOB_WORKER_WINDOW_MS);
    row("other", "fresh", 0);
    ln_worker_info *w;
    size_t n;
    CHECK_EQ(ln_jobs_workers(jobs, "q", &w, &n), 0);
    CHECK_EQ(n, 2); /* oldest first: edge started before fresh */
    CHECK(strcmp(w[0].name, "edge") == 0 && strcmp(w[1].name, "fresh") == 0);
    CHECK(w[0].kind == LN_WORKER_LANES && w[0].pid == 1 && strcmp(w[0].host, "h") == 0);
    CHECK(w[0].seen_ms - w[0].started_ms == 1000 && w[0].addr == NULL);
    ln_jobs_workers_free(w, n);
    CHECK_EQ(count_rows(), 5);
    /* A run's heartbeat prunes the long-dead rows of its queue (only). */
    ln_worker_opts o;
    ln_worker_opts_init(&o);
    o.exit_when_empty = 1;
    ln_worker *wk;
    CHECK_EQ(ln_worker_create(&wk, jobs, "q", runs, NULL, &o), 0);
    CHECK_EQ(ln_worker_run(wk), 0);
    ln_worker_destroy(wk);
    CHECK_EQ(count_rows(), 4); /* ancient gone; the run removed its own row */
    ln_jobs_close(jobs);
    jt_cleanup();
}

/* Out of memory at each allocation of a listing: LN_ENOMEM, nothing
 * leaked, nothing half-returned. */
TEST(listing_out_of_memory_is_clean) {
    ln_jobs *jobs = jt_open(jt_url("w"));
    for (int i = 0; i < 3; i++) row("q", "r", 0);
    int ok = 0;
    for (long n = 1; n < 40; n++) {
        ln_test_alloc_install(n);
        ln_worker_info *w = (ln_worker_info *)&ok;
        size_t nw = 99;
        int rc = ln_jobs_workers(jobs, "q", &w, &nw);
        CHECK(rc == 0 || rc == LN_ENOMEM);
        CHECK(rc == 0 ? nw == 3 : nw == 0 && w == NULL);
        ok += rc == 0;
        ln_jobs_workers_free(w, nw);
        CHECK_EQ(ln_test_alloc_live(), 0);
        ln_test_alloc_uninstall();
    }
    CHECK(ok > 0);
    ln_jobs_close(jobs);
    jt_cleanup();
}

#ifdef WK_HAVE_REDIS
static size_t parse(const char *text, size_t max, ln_worker_info **out) {
    size_t n = 0, cap = 0;
    *out = NULL;
    CHECK_EQ(ln__redis_parse_clients(text, strlen(text), "bull:cQ==", 100000, max, out, &n, &cap),
             0);
    return n;
}

TEST(client_list_parse) {
    const char *text =
        "id=3 addr=127.0.0.1:5001 laddr=127.0.0.1:6379 fd=8 name=bull:cQ==:w:lanes-42 age=7 "
        "idle=2 flags=N db=0 cmd=evalsha\n"
        "id=4 addr=[::1]:5002 fd=9 name=bull:cQ== age=3 idle=0 cmd=bzpopmin\r\n"
        "id=5 addr=10.0.0.1:1 name=bull:cQ==:w:nodew age=1 idle=1\n"
        "id=6 addr=10.0.0.1:2 name=bull:cQ==x age=1 idle=1\n"   /* another queue */
        "id=7 addr=10.0.0.1:3 name=bull:cQ==:qe age=1 idle=1\n" /* QueueEvents */
        "id=8 addr=10.0.0.1:4 name= age=1 idle=1\n"             /* unnamed */
        "id=9 addr=10.0.0.1:5 age=1 idle=1\n"                   /* no name field */
        "garbage without fields\n\n"
        "id=10 name=bull:cQ==:w:a=b=c  age=x idle=\n"                   /* '=' in a name */
        "id=11 addr=1.2.3.4:5 name=bull:cQ==:w:lanes-12x age=0 idle=0"; /* no newline */
    ln_worker_info *w;
    size_t n = parse(text, 100, &w);
    CHECK_EQ(n, 5);
    CHECK(strcmp(w[0].id, "3") == 0 && w[0].kind == LN_WORKER_LANES && w[0].pid == 42);
    CHECK(strcmp(w[0].name, "lanes-42") == 0 && strcmp(w[0].addr, "127.0.0.1:5001") == 0);
    CHECK(w[0].started_ms == 100000 - 7000 && w[0].seen_ms == 100000 - 2000);
    CHECK(strcmp(w[1].id, "4") == 0 && w[1].kind == LN_WORKER_BULLMQ && w[1].name == NULL);
    CHECK(strcmp(w[1].addr, "[::1]:5002") == 0 && w[1].pid == 0);
    CHECK(strcmp(w[2].name, "nodew") == 0 && w[2].kind == LN_WORKER_BULLMQ);
    CHECK(strcmp(w[3].id, "10") == 0 && strcmp(w[3].name, "a=b=c") == 0);
    CHECK(w[3].addr == NULL && w[3].started_ms == 0 && w[3].seen_ms == 0); /* bad numbers */
    CHECK(strcmp(w[4].id, "11") == 0 && w[4].kind == LN_WORKER_BULLMQ);    /* not lanes-<pid> */
    ln_jobs_workers_free(w, n);
    CHECK_EQ(parse(text, 2, &w), 2); /* at most max */
    ln_jobs_workers_free(w, 2);
    CHECK_EQ(parse("", 10, &w), 0);
    CHECK(w == NULL);
    /* An age or idle time too large to be ms: unknown, no overflow. */
    CHECK_EQ(parse("id=1 name=bull:cQ== age=9999999999999999 idle=999999999999999", 10, &w), 1);
    CHECK(w[0].started_ms == 0 && w[0].seen_ms == 100000 - 999999999999999000);
    ln_jobs_workers_free(w, 1);
    /* The name a run gives its connection. */
    char *name = ln__redis_worker_name("bull", "bull:q:", "lanes-7");
    CHECK(name != NULL && strcmp(name, "bull:cQ==:w:lanes-7") == 0);
    ln__free(name);
    name = ln__redis_worker_name("{p}", "{p}:abcd:", "w");
    CHECK(name != NULL && strcmp(name, "{p}:YWJjZA==:w:w") == 0);
    ln__free(name);
    CHECK(ln__redis_worker_name("bull", "other:q:", "w") == NULL);
    /* Out of memory anywhere: LN_ENOMEM, and freeing what was appended
     * (entries zeroed before their strings) leaks nothing. */
    for (long fail = 1; fail < 30; fail++) {
        ln_test_alloc_install(fail);
        size_t m = 0, cap = 0;
        w = NULL;
        int rc = ln__redis_parse_clients(text, strlen(text), "bull:cQ==", 0, 100, &w, &m, &cap);
        CHECK(rc == 0 ? m == 5 : rc == LN_ENOMEM);
        ln_jobs_workers_free(w, m);
        CHECK_EQ(ln_test_alloc_live(), 0);
        ln_test_alloc_uninstall();
    }
}
#endif

int main(int argc, char **argv) {
    static const ln_test_case cases[] = {TESTCASE(beat_due_on_a_fake_clock),
                                         TESTCASE(sqlite_window_and_prune),
                                         TESTCASE(listing_out_of_memory_is_clean),
#ifdef WK_HAVE_REDIS
                                         TESTCASE(client_list_parse),
#endif
                                         {0}};
    return ln_test_run(argc, argv, cases);
}
