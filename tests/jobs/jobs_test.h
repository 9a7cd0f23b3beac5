/* jobs_test.h - helpers shared by the tests/jobs/ and tests/cli/ programs: a
 * scratch directory per test case and store URLs inside it. */
#ifndef LN_JOBS_TEST_H
#define LN_JOBS_TEST_H

#include "testutil.h"

#include <lanes/jobs.h>

#include "jobs/sqlite/sqlite_int.h" /* SQ_COUNTS_AUDIT_SQL */

#include <sqlite3.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A fresh directory under $TMPDIR (or /tmp) per test case. The runner ends
 * a case with _exit(), so a case calls jt_cleanup() itself when it passed. */
static char jt_dir[256];

static inline void jt_cleanup(void) {
    if (jt_dir[0] == '\0') return;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", jt_dir);
    if (system(cmd) != 0) fprintf(stderr, "cleanup of %s failed\n", jt_dir);
}

static inline const char *jt_tmpdir(void) {
    if (jt_dir[0] != '\0') return jt_dir;
    const char *t = getenv("TMPDIR");
    snprintf(jt_dir, sizeof jt_dir, "%s/lanes-jobs-XXXXXX", t != NULL && *t ? t : "/tmp");
    if (mkdtemp(jt_dir) == NULL) {
        perror("mkdtemp");
        abort();
    }
    return jt_dir;
}

/* "sqlite:<tmpdir>/<name>.db" in a static buffer. */
static inline const char *jt_url(const char *name) {
    static char url[400];
    snprintf(url, sizeof url, "sqlite:%s/%s.db", jt_tmpdir(), name);
    return url;
}

static inline const char *jt_path(const char *name) {
    static char path[400];
    snprintf(path, sizeof path, "%s/%s", jt_tmpdir(), name);
    return path;
}

static inline ln_jobs *jt_open(const char *url) {
    ln_jobs *jobs = NULL;
    char msg[512];
    int rc = ln_jobs_open_ex(&jobs, url, NULL, msg, sizeof msg);
    if (rc != 0) fprintf(stderr, "open %s: %s\n", url, msg);
    CHECK_EQ(rc, 0);
    return jobs;
}

static inline uint64_t jt_total(ln_jobs *jobs, const char *queue) {
    ln_job_counts c;
    CHECK_EQ(ln_jobs_counts(jobs, queue, &c), 0);
    return c.waiting + c.delayed + c.prioritized + c.active + c.completed + c.failed + c.paused;
}

/* The per-state counters of store <name>.db (in jt_tmpdir) agree with a
 * COUNT(*) of its jobs. */
static inline void jt_check_counters(const char *name) {
    char file[64];
    snprintf(file, sizeof file, "%s.db", name);
    sqlite3 *db;
    CHECK_EQ(sqlite3_open(jt_path(file), &db), SQLITE_OK);
    sqlite3_stmt *st;
    CHECK_EQ(sqlite3_prepare_v2(db, SQ_COUNTS_AUDIT_SQL, -1, &st, NULL), SQLITE_OK);
    CHECK_EQ(sqlite3_step(st), SQLITE_ROW);
    CHECK_EQ(sqlite3_column_int(st, 0), 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
}

#endif
