/* test_jobs_api.c - the job store API on the SQLite backend: opening (and
 * refusing bad stores and paths that are no regular file), adding with
 * validation, every administration operation, lease fencing at the
 * backend level, fork refusal, query plans, the per-state counters and
 * their schema upgrade, and allocation failures. */
#include "jobs/jobs_test.h"

#include "internal.h"
#include "jobs/front/front.h"
#include "jobs/sqlite/sqlite_int.h"

#include <pthread.h>
#include <sqlite3.h>
#include <errno.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

static ln_jobs *open_fresh(const char *name) {
    return jt_open(jt_url(name));
}

TEST(open_rejects_bad_urls_and_files) {
    ln_jobs *jobs = NULL;
    char msg[512];
    CHECK_EQ(ln_jobs_open_ex(&jobs, "ftp://x", NULL, msg, sizeof msg), LN_EINVAL);
    CHECK(strstr(msg, "unknown store URL") != NULL);
    CHECK_EQ(ln_jobs_open_ex(&jobs, "sqlite:", NULL, msg, sizeof msg), LN_EINVAL);
    char url[600];
    snprintf(url, sizeof url, "%s?sync=fast", jt_url("a"));
    CHECK_EQ(ln_jobs_open_ex(&jobs, url, NULL, msg, sizeof msg), LN_EINVAL);
    CHECK(strstr(msg, "sync=fast") != NULL);
    snprintf(url, sizeof url, "%s?busy_timeout=-1", jt_url("a"));
    CHECK_EQ(ln_jobs_open_ex(&jobs, url, NULL, msg, sizeof msg), LN_EINVAL);
    /* Every known parameter at once opens a working store. */
    snprintf(url, sizeof url, "%s?sync=full&busy_timeout=5000&reserve=0", jt_url("full"));
    CHECK_EQ(ln_jobs_open_ex(&jobs, url, NULL, msg, sizeof msg), 0);
    CHECK_EQ(ln_jobs_add(jobs, "q", "n", "{}", NULL, NULL, 0), 0);
    ln_jobs_close(jobs);
    jobs = NULL;
    CHECK(access(jt_path("full.db-reserve"), F_OK) != 0); /* reserve=0 */
    /* Unwritable locations: under a missing directory, under a file. */
    CHECK_EQ(ln_jobs_open_ex(&jobs, "sqlite:/nonexistent-lanes/dir/x.db", NULL, msg, sizeof msg),
             LN_EIO);
    CHECK(strstr(msg, "/nonexistent-lanes/dir/x.db") != NULL);
    FILE *f = fopen(jt_path("plain"), "w");
    CHECK(f != NULL);
    fclose(f);
    snprintf(url, sizeof url, "sqlite:%s/x.db", jt_path("plain"));
    CHECK(ln_jobs_open_ex(&jobs, url, NULL, msg, sizeof msg) < 0);
    if (geteuid() != 0) { /* root ignores permissions */
        CHECK_EQ(mkdir(jt_path("ro"), 0500), 0);
        snprintf(url, sizeof url, "sqlite:%s/x.db", jt_path("ro"));
        CHECK_EQ(ln_jobs_open_ex(&jobs, url, NULL, msg, sizeof msg), LN_EACCES);
    }
    /* A file that is not a database. */
    f = fopen(jt_path("garbage.db"), "w");
    for (int i = 0; i < 4096; i++) fputc("lanes!"[i % 6], f);
    fclose(f);
    snprintf(url, sizeof url, "sqlite:%s", jt_path("garbage.db"));
    CHECK_EQ(ln_jobs_open_ex(&jobs, url, NULL, msg, sizeof msg), LN_ECORRUPT);
    CHECK(jobs == NULL);
    jt_cleanup();
}

TEST(open_refuses_newer_schema_and_foreign_db) {
    ln_jobs *jobs = open_fresh("s");
    ln_jobs_close(jobs);
    sqlite3 *db;
    CHECK_EQ(sqlite3_open(jt_path("s.db"), &db), SQLITE_OK);
    CHECK_EQ(sqlite3_exec(db, "PRAGMA user_version = 99", 0, 0, 0), SQLITE_OK);
    sqlite3_close(db);
    char msg[512];
    CHECK_EQ(ln_jobs_open_ex(&jobs, jt_url("s"), NULL, msg, sizeof msg), LN_ECORRUPT);
    CHECK(strstr(msg, "schema version 99") != NULL);
    CHECK_EQ(sqlite3_open(jt_path("other.db"), &db), SQLITE_OK);
    CHECK_EQ(sqlite3_exec(db, "PRAGMA application_id = 7", 0, 0, 0), SQLITE_OK);
    sqlite3_close(db);
    CHECK_EQ(ln_jobs_open_ex(&jobs, jt_url("other"), NULL, msg, sizeof msg), LN_ECORRUPT);
    /* The store itself: WAL, versioned. */
    jobs = open_fresh("s2");
    CHECK_EQ(sqlite3_open(jt_path("s2.db"), &db), SQLITE_OK);
    sqlite3_stmt *st;
    sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &st, NULL);
    CHECK_EQ(sqlite3_step(st), SQLITE_ROW);
    CHECK(strcmp((const char *)sqlite3_column_text(st, 0), "wal") == 0);
    sqlite3_finalize(st);
    sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL);
    CHECK_EQ(sqlite3_step(st), SQLITE_ROW);
    CHECK_EQ(sqlite3_column_int(st, 0), SQ_SCHEMA_VERSION);
    sqlite3_finalize(st);
    sqlite3_close(db);
    ln_jobs_close(jobs);
    jt_cleanup();
}

/* A new store in a directory that refuses new files is LN_EACCES with a
 * message naming the directory and the cause, not LN_EIO "No such file or
 * directory" (SQLite's read-only retry). Root ignores permission bits, so
 * as root the directory is a read-only tmpfs in a private mount
 * namespace; without root, a mode-0500 directory. */
TEST(open_in_read_only_directory_is_eacces) {
    char dir[400], url[500];
    snprintf(dir, sizeof dir, "%s", jt_path("rodir"));
    CHECK_EQ(mkdir(dir, 0755), 0);
    if (geteuid() == 0) {
        if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
            mount("tmpfs", dir, "tmpfs", MS_RDONLY, "size=1m") != 0) {
            const char *why = strerror(errno);
            jt_cleanup();
            LN_SKIP("read-only-dir", "running as root and cannot mount a read-only tmpfs: %s", why);
        }
    } else {
        CHECK_EQ(chmod(dir, 0500), 0);
    }
    snprintf(url, sizeof url, "sqlite:%s/new.db", dir);
    ln_jobs *jobs = NULL;
    char msg[512];
    CHECK_EQ(ln_jobs_open_ex(&jobs, url, NULL, msg, sizeof msg), LN_EACCES);
    printf("  %s\n", msg);
    CHECK(strstr(msg, dir) != NULL);
    CHECK(strstr(msg, "No such file") == NULL);
    CHECK(strstr(msg, "Read-only file system") != NULL || strstr(msg, "Permission denied") != NULL);
    if (geteuid() == 0)
        umount2(dir, MNT_DETACH);
    else
        chmod(dir, 0755);
    jt_cleanup();
}

/* Does PATH-suffix exist? */
static int beside(const char *path, const char *suffix) {
    char p[700];
    snprintf(p, sizeof p, "%s%s", path, suffix);
    return access(p, F_OK) == 0;
}

/* Open path as a store: LN_EINVAL naming the path and 'kind', no handle,
 * and no -journal, -wal, -shm or -reserve beside it. */
static void check_not_regular_refused(const char *path, const char *kind) {
    char url[700], msg[512] = "";
    snprintf(url, sizeof url, "sqlite:%s", path);
    ln_jobs *jobs = NULL;
    CHECK_EQ(ln_jobs_open_ex(&jobs, url, NULL, msg, sizeof msg), LN_EINVAL);
    printf("  %s\n", msg);
    CHECK(jobs == NULL);
    CHECK(strstr(msg, path) != NULL);
    CHECK(strstr(msg, kind) != NULL);
    CHECK(!beside(path, "-journal") && !beside(path, "-wal") && !beside(path, "-shm") &&
          !beside(path, "-reserve"));
}

/* A store path that exists and is not a regular file is refused before
 * SQLite opens it: SQLite opened /dev/null as an empty database and, as
 * root, left /dev/null-journal behind. A FIFO, a directory, a symbolic
 * link to a FIFO; the devices themselves (their -journal checked as root,
 * a leftover of an older lanes removed first). */
TEST(open_refuses_paths_that_are_not_regular_files) {
    CHECK_EQ(mkfifo(jt_path("fifo.db"), 0600), 0);
    check_not_regular_refused(jt_path("fifo.db"), "FIFO");
    CHECK_EQ(mkdir(jt_path("dir.db"), 0700), 0);
    check_not_regular_refused(jt_path("dir.db"), "directory");
    char target[600];
    snprintf(target, sizeof target, "%s", jt_path("fifo.db"));
    CHECK_EQ(symlink(target, jt_path("link.db")), 0);
    check_not_regular_refused(jt_path("link.db"), "FIFO");
    const char *devices[] = {"/dev/null", "/dev/full", "/dev/zero"};
    for (size_t i = 0; i < sizeof devices / sizeof devices[0]; i++) {
        char side[64];
        if (geteuid() == 0) {
            for (int k = 0; k < 3; k++) {
                snprintf(side, sizeof side, "%s%s", devices[i],
                         (const char *[]){"-journal", "-wal", "-shm"}[k]);
                unlink(side);
            }
        }
        check_not_regular_refused(devices[i], "character device");
    }
    /* A regular file and an absent path still open. */
    ln_jobs *jobs = open_fresh("regular");
    ln_jobs_close(jobs);
    jt_cleanup();
}

/* FNV-1a of a whole file; 0 if it cannot be read. */
static uint64_t file_hash(const char *path) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) return 0;
    uint64_t h = 1469598103934665603ull;
    int c;
    while ((c = fgetc(f)) != EOF) h = (h ^ (uint64_t)c) * 1099511628211ull;
    fclose(f);
    return h;
}

/* Make jt_path(name).db with sql (a journal_mode=DELETE database), open it
 * as a store: LN_ECORRUPT with 'expect' in the message, and the file is
 * exactly as it was, with no -wal, -shm or -reserve beside it. */
static void check_foreign_refused(const char *name, const char *sql, const char *expect) {
    char file[64], path[600], side[640];
    snprintf(file, sizeof file, "%s.db", name);
    snprintf(path, sizeof path, "%s", jt_path(file));
    sqlite3 *db;
    CHECK_EQ(sqlite3_open(path, &db), SQLITE_OK);
    CHECK_EQ(sqlite3_exec(db, sql, 0, 0, 0), SQLITE_OK);
    sqlite3_close(db);
    uint64_t before = file_hash(path);
    struct stat st0, st1;
    CHECK_EQ(stat(path, &st0), 0);
    for (int round = 0; round < 2; round++) { /* the API, then the CLI path */
        ln_jobs *jobs = NULL;
        char msg[512];
        CHECK_EQ(ln_jobs_open_ex(&jobs, jt_url(name), NULL, msg, sizeof msg), LN_ECORRUPT);
        CHECK(jobs == NULL);
        if (strstr(msg, expect) == NULL) printf("  message: %s\n", msg);
        CHECK(strstr(msg, expect) != NULL);
    }
    CHECK_EQ(file_hash(path), before);
    CHECK_EQ(stat(path, &st1), 0);
    CHECK_EQ(st1.st_size, st0.st_size);
    const char *sides[] = {"-wal", "-shm", "-reserve", "-journal"};
    for (int i = 0; i < 4; i++) {
        snprintf(side, sizeof side, "%s%s", path, sides[i]);
        CHECK(access(side, F_OK) != 0);
    }
}

/* Another application's database is refused and left byte for byte as it
 * was (no lanes tables, no reserve, no switch to WAL); so is a file that
 * claims a lanes schema version but lacks the lanes tables. An empty
 * database (no tables) still becomes a store. */
TEST(open_refuses_foreign_database_untouched) {
    check_foreign_refused("app",
                          "CREATE TABLE users(id INTEGER PRIMARY KEY, "
                          "name TEXT); INSERT INTO users VALUES(1, 'ann');",
                          "not a lanes store");
    check_foreign_refused("app_idx",
                          "CREATE TABLE t(x); CREATE INDEX t_x ON "
                          "t(x); CREATE VIEW v AS SELECT * FROM t;",
                          "not a lanes store");
    check_foreign_refused("v1", "PRAGMA user_version = 1", "table lanes_queues is missing");
    check_foreign_refused("v2",
                          "CREATE TABLE users(id); "
                          "PRAGMA user_version = 2",
                          "user_version is 2 but table");
    /* An empty SQLite database is no other application's: lanes uses it. */
    sqlite3 *db;
    CHECK_EQ(sqlite3_open(jt_path("empty.db"), &db), SQLITE_OK);
    CHECK_EQ(sqlite3_exec(db, "PRAGMA user_version = 0; VACUUM", 0, 0, 0), SQLITE_OK);
    sqlite3_close(db);
    ln_jobs *jobs = open_fresh("empty");
    CHECK_EQ(ln_jobs_add(jobs, "q", "n", "{}", NULL, NULL, 0), 0);
    ln_jobs_close(jobs);
    jt_cleanup();
}

/* Drive the backend directly: take, stall, complete with a stale token. */
TEST(lease_fencing_rejects_stale_tokens) {
    ln_jobs *jobs = open_fresh("e");
    CHECK_EQ(ln_jobs_add(jobs, "q", "n", "{}", NULL, NULL, 0), 0);
    ln__jobs_be *be = jobs->be;
    ln__job_taken taken[1];
    ln__jobs_step st = {.want = 1, .lease_ms = 30, .taken = taken};
    CHECK_EQ(be->methods->step(be, "q", &st), 0);
    CHECK_EQ(st.ntaken, 1);
    ln__job_ref old = taken[0].ref;
    CHECK_EQ(taken[0].attempts_started, 1);
    ln__free(taken[0].name), ln__free(taken[0].data);
    ln_test_sleep_ms(80); /* lease lapses */
    size_t requeued, failed;
    CHECK_EQ(be->methods->recover_stalled(be, "q", 1, "stalled", &requeued, &failed), 0);
    CHECK_EQ(requeued, 1);
    CHECK_EQ(failed, 0);
    /* The old holder can no longer complete, renew, log or release. */
    ln__job_done d = {.ref = old, .kind = LN__DONE_COMPLETE};
    int rrc = 0;
    ln__jobs_step st2 = {
        .done = &d, .ndone = 1, .renew = &old, .renew_rc = &rrc, .nrenew = 1, .lease_ms = 30000};
    CHECK_EQ(be->methods->step(be, "q", &st2), 0);
    CHECK_EQ(d.rc, LN_ESTALE);
    CHECK_EQ(rrc, LN_ESTALE);
    CHECK_EQ(be->methods->progress(be, "q", &old, "1"), LN_ESTALE);
    CHECK_EQ(be->methods->log(be, "q", &old, "x"), LN_ESTALE);
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(jobs, "q", "1", &info), 0);
    CHECK_EQ(info.state, LN_JOB_WAITING);
    CHECK_EQ(info.stalled, 1);
    ln_job_info_clear(&info);
    /* A new take gets a new token that works. */
    ln__jobs_step st3 = {.want = 1, .lease_ms = 30, .taken = taken};
    CHECK_EQ(be->methods->step(be, "q", &st3), 0);
    CHECK_EQ(st3.ntaken, 1);
    CHECK(strcmp(taken[0].ref.token, old.token) != 0);
    CHECK_EQ(taken[0].attempts_started, 2);
    ln__free(taken[0].name), ln__free(taken[0].data);
    /* Stalls past max_stalled fail the job with a clear reason. */
    ln_test_sleep_ms(80);
    CHECK_EQ(be->methods->recover_stalled(be, "q", 1, "stalled too often", &requeued, &failed), 0);
    CHECK_EQ(failed, 1);
    CHECK_EQ(ln_jobs_get(jobs, "q", "1", &info), 0);
    CHECK_EQ(info.state, LN_JOB_FAILED);
    CHECK(strcmp(info.failed_reason, "stalled too often") == 0);
    ln_job_info_clear(&info);
    /* Retry brings it back; remove refuses active jobs. */
    CHECK_EQ(ln_jobs_retry(jobs, "q", "1"), 0);
    CHECK_EQ(ln_jobs_retry(jobs, "q", "1"), LN_EINVAL);
    ln__jobs_step st4 = {.want = 1, .lease_ms = 30000, .taken = taken};
    CHECK_EQ(be->methods->step(be, "q", &st4), 0);
    CHECK_EQ(st4.ntaken, 1);
    ln__free(taken[0].name), ln__free(taken[0].data);
    CHECK_EQ(ln_jobs_remove(jobs, "q", "1"), LN_EBUSY);
    jt_check_counters("e");
    ln_jobs_close(jobs);
    jt_cleanup();
}

/* Every statement the backend runs reaches rows through an index: no full
 * scan of lanes_jobs, so each operation stays logarithmic in the number of
 * jobs (counts and list scan only the index range they report). */
TEST(every_statement_uses_an_index) {
    ln_jobs *jobs = open_fresh("i");
    ln_jobs_close(jobs);
    sqlite3 *db;
    CHECK_EQ(sqlite3_open(jt_path("i.db"), &db), SQLITE_OK);
    for (int id = 0; id < S_COUNT_; id++) {
        char sql[4096];
        snprintf(sql, sizeof sql, "EXPLAIN QUERY PLAN %s", ln__sq_sql_text(id));
        sqlite3_stmt *st;
        CHECK_EQ(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
        while (sqlite3_step(st) == SQLITE_ROW) {
            const char *d = (const char *)sqlite3_column_text(st, 3);
            if (strncmp(d, "SCAN lanes_jobs", 15) == 0 || strncmp(d, "SCAN j", 6) == 0) {
                fprintf(stderr, "statement %d scans: %s\n  %s\n", id, d, ln__sq_sql_text(id));
                CHECK(0);
            }
        }
        sqlite3_finalize(st);
    }
    /* Counts reads six counters and the pause flag by primary key, never
     * lanes_jobs, however many jobs there are. (Counter changes are
     * upserts on that primary key, in S_COUNT and the triggers.) */
    char sql[4096];
    snprintf(sql, sizeof sql, "EXPLAIN QUERY PLAN %s", ln__sq_sql_text(S_COUNTS));
    sqlite3_stmt *st;
    CHECK_EQ(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    int searches = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *d = (const char *)sqlite3_column_text(st, 3);
        CHECK(strstr(d, "lanes_jobs") == NULL);
        CHECK(strncmp(d, "SCAN", 4) != 0 ||
              strcmp(d, "SCAN CONSTANT ROW") == 0); /* SELECT (...), ... */
        searches += strcmp(d, "SEARCH lanes_counts USING PRIMARY KEY "
                              "(queue=? AND state=?)") == 0;
    }
    sqlite3_finalize(st);
    CHECK_EQ(searches, 7); /* states 0..5 and waiting-children */
    sqlite3_close(db);
    jt_cleanup();
}

/* A store of schema 1 (before the counters) is upgraded when opened: the
 * counters are counted once from the jobs it holds, then kept. The old
 * store is made by hand: a new one, its counters dropped, its version set
 * back, and jobs moved the way schema-1 code moved them (no counter). */
TEST(counts_upgrade_from_schema_1) {
    ln_jobs *jobs = open_fresh("u");
    ln_job_opts o;
    ln_job_opts_init(&o);
    for (int i = 0; i < 5; i++) /* 1..5 waiting */
        CHECK_EQ(ln_jobs_add(jobs, "q", "n", "{}", NULL, NULL, 0), 0);
    o.priority = 3; /* 6, 7 prioritized */
    for (int i = 0; i < 2; i++) CHECK_EQ(ln_jobs_add(jobs, "q", "n", "{}", &o, NULL, 0), 0);
    ln_job_opts_init(&o);
    o.delay_ms = 3600000; /* 8 delayed */
    CHECK_EQ(ln_jobs_add(jobs, "q", "n", "{}", &o, NULL, 0), 0);
    for (int i = 0; i < 2; i++) /* 9, 10 waiting in another queue */
        CHECK_EQ(ln_jobs_add(jobs, "r", "n", "{}", NULL, NULL, 0), 0);
    ln_jobs_close(jobs);

    sqlite3 *db;
    CHECK_EQ(sqlite3_open(jt_path("u.db"), &db), SQLITE_OK);
    CHECK_EQ(sqlite3_exec(db,
                          "DROP TRIGGER lanes_dedup_next_gone; DROP TABLE lanes_dedup_next;"
                          "ALTER TABLE lanes_jobs DROP COLUMN lifo;"
                          "ALTER TABLE lanes_jobs DROP COLUMN backoff_jitter;"
                          "ALTER TABLE lanes_jobs DROP COLUMN backoff_type;"
                          "DROP TRIGGER lanes_deps_parent_gone;"
                          "DROP TRIGGER lanes_deps_child_gone;"
                          "DROP TABLE lanes_deps;"
                          "DROP INDEX lanes_jobs_wchildren;"
                          "ALTER TABLE lanes_jobs DROP COLUMN parent_rid;"
                          "ALTER TABLE lanes_jobs DROP COLUMN pflags;"
                          "ALTER TABLE lanes_jobs DROP COLUMN deps;"
                          "DROP TRIGGER lanes_dedup_finish;"
                          "DROP TRIGGER lanes_dedup_gone;"
                          "DROP TABLE lanes_dedup;"
                          "ALTER TABLE lanes_jobs DROP COLUMN deid;"
                          "DROP TRIGGER lanes_jobs_count_move;"
                          "DROP TRIGGER lanes_jobs_count_delete;"
                          "DROP TABLE lanes_counts;"
                          "ALTER TABLE lanes_jobs DROP COLUMN timeout_ms;"
                          "DROP TABLE lanes_events;"
                          "DROP TABLE lanes_workers;"
                          "DROP TABLE lanes_metrics; DROP TABLE lanes_metrics_data;"
                          "DROP TABLE lanes_schedulers;"
                          "DROP TABLE lanes_limits;"
                          "PRAGMA user_version = 1;"
                          "UPDATE lanes_jobs SET state = 4, finished_at = "
                          "  created_at WHERE rid IN (1, 2);"
                          "UPDATE lanes_jobs SET state = 5, finished_at = "
                          "  created_at WHERE rid = 3;"
                          "DELETE FROM lanes_jobs WHERE rid = 4;"
                          "UPDATE lanes_jobs SET state = 3, lease_until = "
                          "  created_at + 60000 WHERE rid = 6;",
                          NULL, NULL, NULL),
             SQLITE_OK);
    sqlite3_close(db);

    jobs = open_fresh("u");
    ln_job_counts c;
    CHECK_EQ(ln_jobs_counts(jobs, "q", &c), 0);
    CHECK_EQ(c.waiting, 1);
    CHECK_EQ(c.prioritized, 1);
    CHECK_EQ(c.delayed, 1);
    CHECK_EQ(c.active, 1);
    CHECK_EQ(c.completed, 2);
    CHECK_EQ(c.failed, 1);
    CHECK_EQ(jt_total(jobs, "r"), 2);
    jt_check_counters("u");
    /* Upgraded: versioned, and the counters move with the jobs again. */
    CHECK_EQ(sqlite3_open(jt_path("u.db"), &db), SQLITE_OK);
    sqlite3_stmt *st;
    CHECK_EQ(sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL), SQLITE_OK);
    CHECK_EQ(sqlite3_step(st), SQLITE_ROW);
    CHECK_EQ(sqlite3_column_int(st, 0), SQ_SCHEMA_VERSION);
    sqlite3_finalize(st);
    sqlite3_close(db);
    size_t n = 0;
    CHECK_EQ(ln_jobs_add(jobs, "q", "n", "{}", NULL, NULL, 0), 0);
    CHECK_EQ(ln_jobs_retry_all(jobs, "q", &n), 0);
    CHECK_EQ(n, 1);
    CHECK_EQ(ln_jobs_counts(jobs, "q", &c), 0);
    CHECK_EQ(c.waiting, 3);
    CHECK_EQ(c.failed, 0);
    jt_check_counters("u");
    ln_jobs_close(jobs);
    jt_cleanup();
}

static void *commit_later(void *arg) {
    ln_test_sleep_ms(50);
    return (void *)(intptr_t)sqlite3_exec(arg, "COMMIT", NULL, NULL, NULL);
}

/* A write that meets another connection's write lock waits for it (the
 * busy handler), and gives up with LN_EBACKEND after busy_timeout. */
TEST(writer_waits_for_the_lock_then_times_out) {
    char url[600];
    snprintf(url, sizeof url, "%s?busy_timeout=300", jt_url("b"));
    ln_jobs *jobs = jt_open(url);
    sqlite3 *db;
    CHECK_EQ(sqlite3_open(jt_path("b.db"), &db), SQLITE_OK);
    CHECK_EQ(sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL), SQLITE_OK);
    uint64_t t0 = ln_now_ns();
    CHECK_EQ(ln_jobs_add(jobs, "q", "n", "{}", NULL, NULL, 0), LN_EBACKEND);
    uint64_t waited_ms = (ln_now_ns() - t0) / 1000000;
    CHECK(strstr(ln_jobs_errmsg(jobs), "locked") != NULL);
    CHECK(waited_ms >= 290 && waited_ms < 10000);
    /* The lock is released while the add waits: it goes through. */
    /* t0 before the thread starts: its COMMIT comes >= 50 ms after t0
     * however late this thread gets the CPU back. */
    pthread_t t;
    t0 = ln_now_ns();
    CHECK_EQ(pthread_create(&t, NULL, commit_later, db), 0);
    CHECK_EQ(ln_jobs_add(jobs, "q", "n", "{}", NULL, NULL, 0), 0);
    waited_ms = (ln_now_ns() - t0) / 1000000;
    void *rc;
    pthread_join(t, &rc);
    CHECK_EQ((int)(intptr_t)rc, SQLITE_OK);
    CHECK(waited_ms >= 40);
    CHECK_EQ(jt_total(jobs, "q"), 1);
    sqlite3_close(db);
    ln_jobs_close(jobs);
    jt_cleanup();
}

TEST(allocation_failures_are_clean) {
    const char *url = jt_url("m");
    ln_jobs *jobs = jt_open(url);
    ln_jobs_close(jobs);
    int added = 0; /* job "1" exists once an add succeeded */
    for (long n = 1; n < 40; n++) {
        ln_test_alloc_install(n);
        ln_jobs *j = NULL;
        int rc = ln_jobs_open(&j, url);
        if (rc == 0) {
            char id[LN_JOB_ID_MAX];
            rc = ln_jobs_add(j, "q", "n", "{}", NULL, id, sizeof id);
            CHECK(rc == 0 || rc == LN_ENOMEM);
            added |= rc == 0;
            ln_job_info info;
            rc = ln_jobs_get(j, "q", "1", &info);
            CHECK(rc == 0 || rc == LN_ENOMEM || (!added && rc == LN_ENOENT));
            if (rc == 0) ln_job_info_clear(&info);
            ln_jobs_close(j);
        } else {
            CHECK_EQ(rc, LN_ENOMEM);
        }
        CHECK_EQ(ln_test_alloc_live(), 0);
        ln_test_alloc_uninstall();
    }
    jt_cleanup();
}

static int metrics_ok(ln_job *job, void *ctx) {
    (void)job;
    (void)ctx;
    return 0;
}

/* n jobs of queue q run by a worker counting metrics (max points). */
static void metrics_run(ln_jobs *jobs, int n, unsigned max) {
    for (int i = 0; i < n; i++) CHECK_EQ(ln_jobs_add(jobs, "q", "n", "{}", NULL, NULL, 0), 0);
    ln_worker_opts o;
    ln_worker_opts_init(&o);
    o.exit_when_empty = 1;
    o.poll_ms = 5;
    o.metrics_max_points = max;
    ln_worker *w;
    CHECK_EQ(ln_worker_create(&w, jobs, "q", metrics_ok, NULL, &o), 0);
    CHECK_EQ(ln_worker_run(w), 0);
    ln_worker_destroy(w);
}

/* Set the stored prevTS of q's completions to 'minutes' whole minutes
 * before now, half a minute into that minute (a worker then sees a gap of
 * 'minutes', or one more if a minute ends meanwhile). */
static void metrics_rewind(const char *name, int64_t minutes) {
    sqlite3 *db;
    CHECK_EQ(sqlite3_open(jt_path(name), &db), SQLITE_OK);
    char sql[256];
    snprintf(sql, sizeof sql,
             "UPDATE lanes_metrics SET prev_ts = (%lld / 60 - %lld) * 60000 + 30000 "
             "WHERE queue = 'q' AND type = %d",
             (long long)time(NULL), (long long)minutes, LN_JOB_COMPLETED);
    CHECK_EQ(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    CHECK_EQ(sqlite3_changes(db), 1);
    sqlite3_close(db);
}

/* The stored points of a real store across minutes (the store's clock
 * moved back by rewriting prevTS): a minute change pushes the jobs
 * counted since, then zeros; a gap longer than max points keeps max. */
TEST(metrics_points_across_minutes) {
    ln_jobs *jobs = open_fresh("m");
    metrics_run(jobs, 2, 10);
    ln_job_metrics m;
    CHECK_EQ(ln_jobs_metrics(jobs, "q", LN_JOB_COMPLETED, 0, -1, &m), 0);
    CHECK_EQ(m.count, 2);
    int64_t minute = m.prev_ts / 60000;
    ln_job_metrics_clear(&m);
    if (minute == 0) CHECK(0);
    metrics_rewind("m.db", 3);
    metrics_run(jobs, 1, 10);
    CHECK_EQ(ln_jobs_metrics(jobs, "q", LN_JOB_COMPLETED, 0, -1, &m), 0);
    CHECK_EQ(m.count, 3);
    CHECK_EQ(m.prev_count, 2);
    CHECK(m.npoints == 3 || m.npoints == 4);
    CHECK_EQ(m.ndata, m.npoints);
    for (size_t i = 0; i + 1 < m.ndata; i++) CHECK_EQ(m.data[i], 0);
    CHECK_EQ(m.data[m.ndata - 1], 2);
    size_t had = m.ndata;
    ln_job_metrics_clear(&m);
    /* a page: the oldest point alone, by LRANGE's rule */
    CHECK_EQ(ln_jobs_metrics(jobs, "q", LN_JOB_COMPLETED, -1, -1, &m), 0);
    CHECK_EQ(m.ndata, 1);
    CHECK_EQ(m.data[0], 2);
    ln_job_metrics_clear(&m);
    /* 1000 minutes later with max 10: 10 points, the oldest the one job */
    metrics_rewind("m.db", 1000);
    metrics_run(jobs, 1, 10);
    CHECK_EQ(ln_jobs_metrics(jobs, "q", LN_JOB_COMPLETED, 0, -1, &m), 0);
    CHECK_EQ(m.count, 4);
    CHECK_EQ(m.prev_count, 3);
    CHECK_EQ(m.npoints, 10);
    CHECK_EQ(m.ndata, 10);
    for (size_t i = 0; i < 9; i++) CHECK_EQ(m.data[i], 0);
    CHECK_EQ(m.data[9], 1);
    ln_job_metrics_clear(&m);
    CHECK(had >= 3);
    ln_jobs_close(jobs);
    jt_cleanup();
}

int main(int argc, char **argv) {
    return ln_test_run(argc, argv,
                       (ln_test_case[]){TESTCASE(open_rejects_bad_urls_and_files),
                                        TESTCASE(open_refuses_newer_schema_and_foreign_db),
                                        TESTCASE(open_refuses_foreign_database_untouched),
                                        TESTCASE(open_in_read_only_directory_is_eacces),
                                        TESTCASE(open_refuses_paths_that_are_not_regular_files),
                                        TESTCASE(lease_fencing_rejects_stale_tokens),
                                        TESTCASE(every_statement_uses_an_index),
                                        TESTCASE(counts_upgrade_from_schema_1),
                                        TESTCASE(writer_waits_for_the_lock_then_times_out),
                                        TESTCASE(allocation_failures_are_clean),
                                        TESTCASE(metrics_points_across_minutes),
                                        {0}});
}
