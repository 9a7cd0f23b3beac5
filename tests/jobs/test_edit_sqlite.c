/* test_edit_sqlite.c - what the conformance suite cannot see of the
 * admin calls on SQLite (jobs_edit.h): counting ready jobs by priority is
 * a read, so it answers while another connection holds the write lock
 * (a writer is not kept waiting by it, nor it by a writer). */
#include "jobs/jobs_test.h"

#include <sqlite3.h>

TEST(priority_counts_read_under_a_writer) {
    char url[600];
    snprintf(url, sizeof url, "%s?busy_timeout=200", jt_url("p"));
    ln_jobs *jobs = jt_open(url);
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.priority = 2;
    CHECK_EQ(ln_jobs_add(jobs, "q", "n", "{}", NULL, NULL, 0), 0);
    CHECK_EQ(ln_jobs_add(jobs, "q", "n", "{}", &o, NULL, 0), 0);
    CHECK_EQ(ln_jobs_add(jobs, "q", "n", "{}", &o, NULL, 0), 0);
    sqlite3 *db;
    CHECK_EQ(sqlite3_open(jt_path("p.db"), &db), SQLITE_OK);
    CHECK_EQ(sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL), SQLITE_OK);
    int prios[] = {0, 2, 3};
    uint64_t counts[3];
    int rc = ln_jobs_counts_per_priority(jobs, "q", prios, 3, counts);
    if (rc != 0) fprintf(stderr, "counts per priority: %s\n", ln_jobs_errmsg(jobs));
    CHECK_EQ(rc, 0);
    CHECK_EQ(counts[0], 1);
    CHECK_EQ(counts[1], 2);
    CHECK_EQ(counts[2], 0);
    CHECK_EQ(sqlite3_exec(db, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    /* and the handle writes afterwards: no transaction left open */
    CHECK_EQ(ln_jobs_add(jobs, "q", "n", "{}", NULL, NULL, 0), 0);
    CHECK_EQ(ln_jobs_counts_per_priority(jobs, "q", prios, 1, counts), 0);
    CHECK_EQ(counts[0], 2);
    ln_jobs_close(jobs);
    jt_cleanup();
}

int main(int argc, char **argv) {
    return ln_test_run(argc, argv,
                       (ln_test_case[]){TESTCASE(priority_counts_read_under_a_writer), {0}});
}
