/* test_dedup_stale.c - what the conformance suite cannot reach through
 * the public API on SQLite: a deduplication id held without expiry whose
 * holder is gone (deleted behind lanes' back, as a store restored from a
 * copy or edited by hand could leave it), with a next job kept for it.
 * The next keep-last add takes the id over (a new job) and drops the kept
 * job, so finishing the new holder adds nothing (BullMQ's
 * recoverStaleDeduplicationKey; Redis: interop dedup_next_stale). */
#include "jobs/jobs_test.h"

#include <sqlite3.h>

static int64_t count_rows(const char *sql) {
    sqlite3 *db;
    CHECK_EQ(sqlite3_open(jt_path("s.db"), &db), SQLITE_OK);
    sqlite3_stmt *s;
    CHECK_EQ(sqlite3_prepare_v2(db, sql, -1, &s, NULL), SQLITE_OK);
    CHECK_EQ(sqlite3_step(s), SQLITE_ROW);
    int64_t n = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    sqlite3_close(db);
    return n;
}

static void add_keep(ln_jobs *jobs, const char *name, char *id, int expect_new) {
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.dedup_id = "k";
    o.dedup_keep_last_if_active = 1;
    uint64_t before = jt_total(jobs, "q");
    CHECK_EQ(ln_jobs_add(jobs, "q", name, "{}", &o, id, LN_JOB_ID_MAX), 0);
    CHECK_EQ(jt_total(jobs, "q") - before, (uint64_t)expect_new);
}

static int complete(ln_job *job, void *ctx) {
    (void)ctx;
    return ln_job_set_result(job, "1");
}

TEST(stale_id_is_taken_over_and_its_next_job_dropped) {
    ln_jobs *jobs = jt_open(jt_url("s"));
    char h[LN_JOB_ID_MAX], b[LN_JOB_ID_MAX];
    add_keep(jobs, "a", h, 1);
    add_keep(jobs, "dup", b, 0); /* held: deduplicated */
    CHECK(strcmp(b, h) == 0);
    ln_jobs_close(jobs);
    /* The holder goes without freeing the id (deid cleared first, so no
     * trigger sees it), and a next job is kept for it. */
    sqlite3 *db;
    CHECK_EQ(sqlite3_open(jt_path("s.db"), &db), SQLITE_OK);
    char sql[512];
    snprintf(sql, sizeof sql,
             "UPDATE lanes_jobs SET deid = NULL WHERE rid = %s;"
             "DELETE FROM lanes_jobs WHERE rid = %s;"
             "INSERT INTO lanes_dedup_next(queue, id, name, data, opts)"
             " VALUES('q', 'k', 'ghost', '{}', '{\"attempts\":1,\"keep\":true}');",
             h, h);
    CHECK_EQ(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    CHECK_EQ(count_rows("SELECT count(*) FROM lanes_dedup"), 1);

    jobs = jt_open(jt_url("s"));
    add_keep(jobs, "b", b, 1); /* stale: taken over */
    CHECK(strcmp(b, h) != 0);
    CHECK_EQ(count_rows("SELECT count(*) FROM lanes_dedup_next"), 0);
    CHECK_EQ(count_rows("SELECT expires_at IS NULL FROM lanes_dedup"), 1);
    ln_worker_opts o;
    ln_worker_opts_init(&o);
    o.exit_when_empty = 1;
    o.poll_ms = 10;
    ln_worker *w;
    CHECK_EQ(ln_worker_create(&w, jobs, "q", complete, NULL, &o), 0);
    CHECK_EQ(ln_worker_run(w), 0);
    ln_worker_destroy(w);
    CHECK_EQ(jt_total(jobs, "q"), 1); /* the new holder only: no ghost */
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(jobs, "q", b, &info), 0);
    CHECK_EQ(info.state, LN_JOB_COMPLETED);
    ln_job_info_clear(&info);
    add_keep(jobs, "c", h, 1); /* freed at its finish */
    ln_jobs_close(jobs);
    jt_cleanup();
}

int main(int argc, char **argv) {
    return ln_test_run(
        argc, argv,
        (ln_test_case[]){TESTCASE(stale_id_is_taken_over_and_its_next_job_dropped), {0}});
}
