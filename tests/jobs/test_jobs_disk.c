/* test_jobs_disk.c - the SQLite store's file under damage: a store with
 * bytes overwritten or cut off fails loudly (LN_ECORRUPT, at open or during
 * the run) and never stalls, and a full disk (a small tmpfs) still lets the
 * stored jobs be finished, failed, cleaned and removed. */
#include "jobs/jobs_test.h"

#include "jobs/sqlite/sqlite_int.h" /* ln__sq_quick_check_max */

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>

/* ------------------------------------------------------------ helpers */

static int quick_handler(ln_job *job, void *ctx) {
    (void)ctx;
    return ln_job_set_result(job, "{\"ok\":true}");
}

/* Add n jobs of about 150 bytes to queue q of url, in batches. */
static void fill(const char *url, int n) {
    ln_jobs *jobs = jt_open(url);
    ln_job_spec specs[100];
    char data[100][160];
    for (int i = 0; i < n; i += 100) {
        int k = n - i < 100 ? n - i : 100;
        for (int j = 0; j < k; j++) {
            snprintf(data[j], sizeof data[j], "{\"user\":%d,\"text\":\"%0120d\"}", i + j, i + j);
            specs[j] = (ln_job_spec){"n", data[j], NULL};
        }
        CHECK_EQ(ln_jobs_add_bulk(jobs, "q", specs, (size_t)k, NULL, 0), 0);
    }
    ln_jobs_close(jobs);
}

static char *read_all(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    CHECK(f != NULL);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n);
    CHECK(buf != NULL);
    CHECK_EQ(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return buf;
}

static void write_all(const char *path, const char *buf, size_t len) {
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    CHECK_EQ(fwrite(buf, 1, len, f), len);
    fclose(f);
}

/* What one damaged store did (see run_damaged). */
typedef struct outcome {
    int open_rc; /* ln_jobs_open_ex */
    int run_rc;  /* ln_worker_run, if it opened */
    int left;    /* jobs not completed afterwards, -1 if unknown */
    int intact;  /* PRAGMA integrity_check said ok afterwards */
} outcome;

/* In a child (so a hang is caught by alarm(): the test fails rather than
 * sits): open url, run a worker with exit_when_empty, count what is left,
 * then check the file. */
static outcome run_damaged(const char *url, const char *path) {
    int fds[2];
    CHECK_EQ(pipe(fds), 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        alarm(ln_test_sanitized() ? 40 : 10); /* TSan on two busy cores is ~10x slower */
        outcome o = {0, 0, -1, 0};
        ln_jobs *jobs = NULL;
        char msg[512];
        o.open_rc = ln_jobs_open_ex(&jobs, url, NULL, msg, sizeof msg);
        if (o.open_rc != 0) {
            printf("    open: %s: %s\n", ln_err_name(o.open_rc), msg);
        } else {
            ln_worker_opts wo;
            ln_worker_opts_init(&wo);
            wo.concurrency = 4;
            wo.poll_ms = 10;
            wo.lease_ms = 2000;
            wo.exit_when_empty = 1;
            ln_worker *w = NULL;
            if (ln_worker_create(&w, jobs, "q", quick_handler, NULL, &wo) != 0) _exit(3);
            o.run_rc = ln_worker_run(w);
            if (o.run_rc != 0)
                printf("    run: %s: %s\n", ln_err_name(o.run_rc), ln_jobs_errmsg(jobs));
            ln_worker_destroy(w);
            ln_job_counts c;
            if (ln_jobs_counts(jobs, "q", &c) == 0)
                o.left =
                    (int)(c.waiting + c.active + c.prioritized + c.delayed + c.failed + c.paused);
            ln_jobs_close(jobs);
        }
        sqlite3 *db;
        sqlite3_stmt *s;
        if (sqlite3_open(path, &db) == SQLITE_OK &&
            sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &s, NULL) == SQLITE_OK) {
            o.intact = sqlite3_step(s) == SQLITE_ROW &&
                       strcmp((const char *)sqlite3_column_text(s, 0), "ok") == 0;
            sqlite3_finalize(s);
        }
        sqlite3_close(db);
        fflush(stdout);
        if (write(fds[1], &o, sizeof o) != (ssize_t)sizeof o) _exit(4);
        _exit(0);
    }
    close(fds[1]);
    outcome o = {0, 0, -2, 0};
    ssize_t got = read(fds[0], &o, sizeof o);
    close(fds[0]);
    int status;
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    if (WIFSIGNALED(status))
        printf("    the worker did not end: signal %d (a stall)\n", WTERMSIG(status));
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK_EQ(got, (ssize_t)sizeof o);
    return o;
}

/* Loud or harmless: the damage was reported as LN_ECORRUPT (at open or by
 * the run), or it changed nothing that matters (every job completed and
 * the file checks out). Never a stall, never a silent success on a file
 * that fails integrity_check. */
static void check_loud(const outcome *o) {
    if (o->open_rc != 0) {
        CHECK_EQ(o->open_rc, LN_ECORRUPT);
        return;
    }
    if (o->run_rc != 0) {
        CHECK_EQ(o->run_rc, LN_ECORRUPT);
        return;
    }
    CHECK_EQ(o->left, 0);
    CHECK(o->intact);
}

#define NCORRUPT 3000

/* Random bytes over the middle of a closed store, at several places: each
 * run is loud (LN_ECORRUPT) or harmless, and none hangs. checked: with the
 * quick_check at open (all of them are then caught there), else only what
 * the statements of the run find. */
static void corrupt_at_offsets(int checked) {
    if (!checked) ln__sq_quick_check_max = 0;
    const char *url = jt_url("c");
    char path[400];
    snprintf(path, sizeof path, "%s", jt_path("c.db"));
    fill(url, NCORRUPT);
    size_t len;
    char *pristine = read_all(path, &len);
    char *buf = malloc(len);
    CHECK(buf != NULL);
    unsigned seed = 12345;
    int loud = 0;
    for (int k = 1; k <= 12; k++) {
        memcpy(buf, pristine, len);
        size_t off = len * (size_t)k / 13;
        off -= off % 4096; /* a page start: its b-tree header */
        for (size_t i = 0; i < 256 && off + i < len; i++) {
            seed = seed * 1103515245u + 12345u;
            buf[off + i] = (char)(seed >> 16);
        }
        write_all(path, buf, len);
        unlink(jt_path("c.db-wal"));
        unlink(jt_path("c.db-shm"));
        printf("  256 random bytes at %zu of %zu:\n", off, len);
        outcome o = run_damaged(url, path);
        printf("    open %s, run %s, %d left, integrity %s\n", ln_err_name(o.open_rc),
               ln_err_name(o.run_rc), o.left, o.intact ? "ok" : "FAILS");
        if (!checked && o.open_rc == 0 && o.run_rc == 0 && !o.intact) {
            /* Damage on a page the run never reads (the events table's,
             * say) is invisible to it; with the open's quick_check off
             * (this case) only the next open sees it, and must. */
            int64_t saved = ln__sq_quick_check_max;
            ln__sq_quick_check_max = (int64_t)16 << 20;
            ln_jobs *again = NULL;
            int rc = ln_jobs_open(&again, url);
            printf("    the next open: %s\n", ln_err_name(rc));
            CHECK_EQ(rc, LN_ECORRUPT);
            ln_jobs_close(again);
            ln__sq_quick_check_max = saved;
            continue;
        }
        check_loud(&o);
        /* Bytes on a page no table uses (integrity stays ok) cannot be seen. */
        if (checked && !o.intact) CHECK_EQ(o.open_rc, LN_ECORRUPT);
        loud += o.open_rc != 0 || o.run_rc != 0;
    }
    CHECK(loud > 0);
    free(buf);
    free(pristine);
    jt_cleanup();
}

TEST(corrupt_store_fails_loudly) {
    corrupt_at_offsets(1);
}

TEST(corrupt_store_fails_loudly_during_the_run) {
    corrupt_at_offsets(0);
}

/* A store cut short (1,234 bytes off its end, then a page and more): loud
 * or harmless, never rows with a NULL state, never a hang. */
static void truncate_by(int checked) {
    if (!checked) ln__sq_quick_check_max = 0;
    const char *url = jt_url("t");
    char path[400];
    snprintf(path, sizeof path, "%s", jt_path("t.db"));
    fill(url, NCORRUPT);
    size_t len;
    char *pristine = read_all(path, &len);
    const size_t cuts[] = {1234, 4096, 20000, len / 2};
    for (size_t k = 0; k < sizeof cuts / sizeof cuts[0]; k++) {
        write_all(path, pristine, len - cuts[k]);
        unlink(jt_path("t.db-wal"));
        unlink(jt_path("t.db-shm"));
        printf("  %zu of %zu bytes cut off:\n", cuts[k], len);
        if (!checked && k == 0) { /* listing never shows a stateless job */
            ln_jobs *jobs = jt_open(url);
            int corrupt = 0;
            for (int state = 0; state < LN_JOB_NSTATES; state++) {
                ln_job_info *rows = NULL;
                size_t n = 0;
                int rc = ln_jobs_list(jobs, "q", state, 0, 10000, &rows, &n);
                if (rc != 0) CHECK_EQ(rc, LN_ECORRUPT);
                corrupt += rc == LN_ECORRUPT;
                for (size_t i = 0; i < n; i++) CHECK_EQ(rows[i].state, state);
                ln_job_info_free_array(rows, n);
            }
            CHECK(corrupt > 0);
            ln_jobs_close(jobs);
            write_all(path, pristine, len - cuts[k]);
        }
        outcome o = run_damaged(url, path);
        printf("    open %s, run %s, %d left, integrity %s\n", ln_err_name(o.open_rc),
               ln_err_name(o.run_rc), o.left, o.intact ? "ok" : "FAILS");
        check_loud(&o);
        CHECK(o.open_rc != 0 || o.run_rc != 0); /* a cut store is damaged */
    }
    free(pristine);
    jt_cleanup();
}

TEST(truncated_store_fails_loudly) {
    truncate_by(1);
}

TEST(truncated_store_fails_loudly_during_the_run) {
    truncate_by(0);
}

/* A store over the open's check size opens without reading every page
 * (what keeps the open's cost the same at any size), and ln_jobs_check
 * reads them all: damage mid-file is LN_ECORRUPT there, both ways. */
static void check_finds_damage(void) {
    const char *url = jt_url("k");
    char path[400];
    snprintf(path, sizeof path, "%s", jt_path("k.db"));
    fill(url, 2 * NCORRUPT);
    size_t len;
    char *buf = read_all(path, &len);
    CHECK((int64_t)len > ln__sq_quick_check_max);
    ln_jobs *jobs = jt_open(url);
    CHECK_EQ(ln_jobs_check(jobs, 0), 0);
    CHECK_EQ(ln_jobs_check(jobs, 1), 0);
    ln_jobs_close(jobs);
    size_t off = len / 2 - (len / 2) % 4096;
    unsigned seed = 777;
    for (size_t i = 0; i < 256; i++) {
        seed = seed * 1103515245u + 12345u;
        buf[off + i] = (char)(seed >> 16);
    }
    write_all(path, buf, len);
    unlink(jt_path("k.db-wal"));
    unlink(jt_path("k.db-shm"));
    jobs = NULL;
    char msg[512];
    CHECK_EQ(ln_jobs_open_ex(&jobs, url, NULL, msg, sizeof msg), 0);
    int rc = ln_jobs_check(jobs, 0);
    printf("  check: %s: %s\n", ln_err_name(rc), ln_jobs_errmsg(jobs));
    CHECK_EQ(rc, LN_ECORRUPT);
    CHECK(strstr(ln_jobs_errmsg(jobs), "quick_check") != NULL);
    CHECK_EQ(ln_jobs_check(jobs, 1), LN_ECORRUPT);
    CHECK(strstr(ln_jobs_errmsg(jobs), "integrity_check") != NULL);
    ln_jobs_close(jobs);
    free(buf);
    jt_cleanup();
}

TEST(check_reads_what_the_open_does_not) {
    check_finds_damage();
}

/* ------------------------------------------------------------ full disk */

/* A tmpfs of size at dir, in a private mount namespace (it vanishes with
 * this test's process). 0, or skips the case when that is not possible. */
static void mount_small(const char *dir, const char *size) {
    char opts[64];
    snprintf(opts, sizeof opts, "size=%s", size);
    CHECK_EQ(mkdir(dir, 0755), 0);
    if (geteuid() != 0 || unshare(CLONE_NEWNS) != 0 ||
        mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
        mount("tmpfs", dir, "tmpfs", 0, opts) != 0) {
        const char *why = geteuid() != 0 ? "not root" : strerror(errno);
        jt_cleanup();
        LN_SKIP("disk-full", "a small tmpfs needs root and a mount namespace (%s)", why);
    }
}

/* Fill the rest of the volume with a file of its own. */
static void fill_volume(const char *dir) {
    char path[500];
    snprintf(path, sizeof path, "%s/filler", dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
    CHECK(fd >= 0);
    static char block[4096];
    while (write(fd, block, sizeof block) > 0) {
    }
    while (write(fd, block, 1) > 0) {
    }
    close(fd);
}

static int add_until_full(ln_jobs *jobs, int max, int *rc) {
    char data[600];
    int added = 0;
    while (added < max) {
        snprintf(data, sizeof data, "{\"n\":%d,\"pad\":\"%0500d\"}", added, 0);
        const char *name = added % 10 == 9 ? "fail" : "n"; /* a tenth fail */
        if ((*rc = ln_jobs_add(jobs, "q", name, data, NULL, NULL, 0)) != 0) break;
        added++;
    }
    return added;
}

static int result_handler(ln_job *job, void *ctx) {
    (void)ctx;
    if (strcmp(ln_job_name(job), "fail") == 0)
        return ln_job_fail(job, "the provider refused the message");
    return ln_job_set_result(job, "{\"status\":\"sent\",\"provider\":"
                                  "\"example\",\"message_id\":"
                                  "\"0123456789abcdef0123456789abcdef\"}");
}

static int run_worker(ln_jobs *jobs, ln_job_handler fn) {
    ln_worker_opts wo;
    ln_worker_opts_init(&wo);
    wo.concurrency = 4;
    wo.poll_ms = 10;
    wo.exit_when_empty = 1;
    wo.lease_ms = 1000;
    /* store_retry_ms stays the default: a full disk is retried for up to
     * a lease, not 30 s (which would let the held jobs' leases lapse and
     * the stalled check fail them for good). */
    ln_worker *w = NULL;
    CHECK_EQ(ln_worker_create(&w, jobs, "q", fn, NULL, &wo), 0);
    int rc = ln_worker_run(w);
    if (rc != 0) printf("  worker: %s: %s\n", ln_err_name(rc), ln_jobs_errmsg(jobs));
    ln_worker_destroy(w);
    return rc;
}

/* One small volume through a full disk, default reserve (sized to the
 * volume): adds work until the disk is full and then say so; a store
 * closed while the disk filled up opens again; the stored jobs finish
 * (complete with a result, or a tenth fail with a reason), most on the
 * reserve and the rest once a clean on the full disk made room; remove
 * works on the full disk; adds come back once space does. */
static void full_disk_lifecycle(const char *size) {
    char dir[400], url[500];
    snprintf(dir, sizeof dir, "%s", jt_path("vol"));
    mount_small(dir, size);
    snprintf(url, sizeof url, "sqlite:%s/q.db", dir);
    ln_jobs *jobs = jt_open(url);
    int rc = 0;
    int added = add_until_full(jobs, 100000, &rc);
    printf("  %s volume: %d jobs added, then %s: %s\n", size, added, ln_err_name(rc),
           ln_jobs_errmsg(jobs));
    CHECK_EQ(rc, LN_ENOSPC);
    CHECK(added >= 500); /* the reserve leaves the volume to the jobs */
    CHECK(strstr(ln_jobs_errmsg(jobs), "disk full") != NULL);
    CHECK_EQ(jt_total(jobs, "q"), (uint64_t)added);
    ln_jobs_close(jobs);
    /* The disk fills up to the last byte while the store is closed. */
    fill_volume(dir);
    char msg[512];
    CHECK_EQ(ln_jobs_open_ex(&jobs, url, NULL, msg, sizeof msg), 0);
    CHECK_EQ(jt_total(jobs, "q"), (uint64_t)added);
    rc = ln_jobs_add(jobs, "q", "n", "{}", NULL, NULL, 0);
    printf("  full: add %s: %s\n", ln_err_name(rc), ln_jobs_errmsg(jobs));
    /* An add that fits in pages the store already has may still go in;
     * one that needs room is refused, and says why. */
    if (rc == 0) {
        added++;
    } else {
        CHECK_EQ(rc, LN_ENOSPC);
        CHECK(strstr(ln_jobs_errmsg(jobs), "disk full") != NULL);
    }
    /* The stored jobs finish, with results that add data (about a fifth
     * of their data). The reserve is 1/6 of the volume: it holds the
     * results of most of them; if it is used up, the worker says so. */
    rc = run_worker(jobs, result_handler);
    ln_job_counts c;
    CHECK_EQ(ln_jobs_counts(jobs, "q", &c), 0);
    printf("  worker on the full disk: %llu of %d completed, %llu failed\n",
           (unsigned long long)c.completed, added, (unsigned long long)c.failed);
    CHECK(c.completed + c.failed > (uint64_t)added * 2 / 3);
    if (rc != 0) {
        CHECK_EQ(rc, LN_ENOSPC);
        CHECK(strstr(ln_jobs_errmsg(jobs), "used up") != NULL);
    }
    /* Cleaning works on the full disk and makes room: the rest finish. */
    size_t removed = 0;
    CHECK_EQ(ln_jobs_clean(jobs, "q", LN_JOB_COMPLETED, -1, 10, &removed), 0);
    CHECK_EQ(removed, (size_t)c.completed - 10);
    CHECK_EQ(run_worker(jobs, result_handler), 0);
    uint64_t done = c.completed + c.failed;
    CHECK_EQ(ln_jobs_counts(jobs, "q", &c), 0);
    CHECK_EQ(c.completed + c.failed + removed, (uint64_t)added);
    CHECK_EQ(c.failed, (uint64_t)added / 10); /* each failed, none lost */
    printf("  after clean: the other %llu finished\n", (unsigned long long)(added - done));
    /* Removing works on the full disk. */
    ln_job_info *rows = NULL;
    size_t n = 0;
    CHECK_EQ(ln_jobs_list(jobs, "q", LN_JOB_COMPLETED, 0, 1, &rows, &n), 0);
    CHECK_EQ(n, 1u);
    CHECK_EQ(ln_jobs_remove(jobs, "q", rows[0].id), 0);
    ln_job_info_free_array(rows, n);
    /* Space comes back: adds work again. */
    CHECK_EQ(mount("tmpfs", dir, "tmpfs", MS_REMOUNT, "size=16m"), 0);
    CHECK_EQ(ln_jobs_add(jobs, "q", "n", "{}", NULL, NULL, 0), 0);
    ln_jobs_close(jobs);
    umount2(dir, MNT_DETACH);
    jt_cleanup();
}

TEST(full_disk_on_a_2m_volume) {
    full_disk_lifecycle("2m");
}

TEST(full_disk_on_a_6m_volume) {
    full_disk_lifecycle("6m");
}

/* A result of about 2 KB: the reserve holds only about a hundred. */
static int big_result_handler(ln_job *job, void *ctx) {
    (void)ctx;
    char result[2100];
    snprintf(result, sizeof result, "{\"id\":\"%s\",\"pad\":\"%02000d\"}", ln_job_id(job), 0);
    return ln_job_set_result(job, result);
}

/* A worker that stops for a full disk: it gives up (store_retry_ms) and
 * leaves none of the jobs it held active: they are back, ready to run. */
static int run_until_full(ln_jobs *jobs) {
    ln_worker_opts wo;
    ln_worker_opts_init(&wo);
    wo.concurrency = 4;
    wo.poll_ms = 10;
    wo.exit_when_empty = 1;
    wo.lease_ms = 30000; /* the jobs held would stay active that long */
    wo.store_retry_ms = 300;
    ln_worker *w = NULL;
    CHECK_EQ(ln_worker_create(&w, jobs, "q", big_result_handler, NULL, &wo), 0);
    int rc = ln_worker_run(w);
    printf("  worker: %s: %s\n", ln_err_name(rc), rc != 0 ? ln_jobs_errmsg(jobs) : "");
    ln_worker_destroy(w);
    ln_job_counts c;
    CHECK_EQ(ln_jobs_counts(jobs, "q", &c), 0);
    printf("  %llu completed, %llu waiting, %llu active\n", (unsigned long long)c.completed,
           (unsigned long long)c.waiting, (unsigned long long)c.active);
    CHECK_EQ(c.active, 0u); /* released, not stranded until their lease */
    return rc;
}

/* The store's pages on SQLite's free list (room a delete made). */
static int64_t free_pages(const char *path) {
    sqlite3 *db;
    sqlite3_stmt *s;
    int64_t n = -1;
    CHECK_EQ(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    if (sqlite3_prepare_v2(db, "PRAGMA freelist_count", -1, &s, NULL) == SQLITE_OK) {
        if (sqlite3_step(s) == SQLITE_ROW) n = sqlite3_column_int64(s, 0);
        sqlite3_finalize(s);
    }
    sqlite3_close(db);
    return n;
}

/* The reserve used up twice on one full volume: the first time a clean
 * makes room, the workers use it up again; then every operation that frees
 * space (clean, remove, trim, drain, obliterate) still works, as often as
 * it is needed, and frees space; a worker that stops for the full disk
 * releases the jobs it held; workers then run again, and adds once space
 * comes back. */
TEST(full_disk_twice) {
    char dir[400], url[500], path[500];
    snprintf(dir, sizeof dir, "%s", jt_path("vol"));
    mount_small(dir, "2m");
    snprintf(url, sizeof url, "sqlite:%s/q.db?events=all", dir); /* events to trim */
    snprintf(path, sizeof path, "%s/q.db", dir);
    ln_jobs *jobs = jt_open(url);
    int rc = 0;
    CHECK_EQ(ln_jobs_add(jobs, "o", "n", "{}", NULL, NULL, 0), 0); /* to obliterate */
    int added = add_until_full(jobs, 100000, &rc);
    printf("  %d jobs added\n", added);
    CHECK_EQ(rc, LN_ENOSPC);
    fill_volume(dir);
    /* First time: the results use the reserve up. */
    CHECK_EQ(run_until_full(jobs), LN_ENOSPC);
    for (int round = 1; round <= 3; round++) {
        /* Clean on the full disk, then the worker uses the room up again.
         * Once from a handle opened on the full disk, as `lanes jobs clean`. */
        if (round == 2) {
            ln_jobs_close(jobs);
            char msg[512];
            CHECK_EQ(ln_jobs_open_ex(&jobs, url, NULL, msg, sizeof msg), 0);
        }
        size_t removed = 0;
        rc = ln_jobs_clean(jobs, "q", LN_JOB_COMPLETED, -1, 0, &removed);
        printf("  round %d: clean %s (%zu removed)%s%s\n", round, ln_err_name(rc), removed,
               rc != 0 ? ": " : "", rc != 0 ? ln_jobs_errmsg(jobs) : "");
        CHECK_EQ(rc, 0);
        CHECK(removed > 0);
        CHECK(free_pages(path) > 0);
        CHECK_EQ(run_until_full(jobs), LN_ENOSPC);
    }
    /* Each space-freeing operation, on the disk full once more. */
    ln_job_info *rows = NULL;
    size_t n = 0;
    CHECK_EQ(ln_jobs_list(jobs, "q", LN_JOB_COMPLETED, 0, 1, &rows, &n), 0);
    CHECK_EQ(n, 1u);
    rc = ln_jobs_remove(jobs, "q", rows[0].id);
    printf("  remove: %s %s\n", ln_err_name(rc), rc != 0 ? ln_jobs_errmsg(jobs) : "");
    CHECK_EQ(rc, 0);
    ln_job_info_free_array(rows, n);
    size_t removed = 0;
    rc = ln_jobs_trim_events(jobs, "q", 0, &removed);
    printf("  trim: %s (%zu) %s\n", ln_err_name(rc), removed, rc != 0 ? ln_jobs_errmsg(jobs) : "");
    CHECK_EQ(rc, 0);
    CHECK(removed > 0); /* the completed events of the first run */
    rc = ln_jobs_clean(jobs, "q", LN_JOB_COMPLETED, -1, 0, &removed);
    printf("  clean: %s %s\n", ln_err_name(rc), rc != 0 ? ln_jobs_errmsg(jobs) : "");
    CHECK_EQ(rc, 0);
    CHECK(removed > 0);
    /* Workers take again: the room the clean made goes to results. */
    ln_job_counts before, c;
    CHECK_EQ(ln_jobs_counts(jobs, "q", &before), 0);
    CHECK_EQ(run_until_full(jobs), LN_ENOSPC);
    CHECK_EQ(ln_jobs_counts(jobs, "q", &c), 0);
    CHECK(c.completed > before.completed);
    rc = ln_jobs_obliterate(jobs, "o", 0, &removed);
    printf("  obliterate: %s %s\n", ln_err_name(rc), rc != 0 ? ln_jobs_errmsg(jobs) : "");
    CHECK_EQ(rc, 0);
    CHECK_EQ(removed, 1u);
    int64_t free_before = free_pages(path);
    rc = ln_jobs_drain(jobs, "q", &removed);
    printf("  drain: %s (%zu) %s\n", ln_err_name(rc), removed, rc != 0 ? ln_jobs_errmsg(jobs) : "");
    CHECK_EQ(rc, 0);
    CHECK(removed > 0);
    CHECK(free_pages(path) > free_before);
    rc = ln_jobs_clean(jobs, "q", LN_JOB_COMPLETED, -1, 0, &removed);
    CHECK_EQ(rc, 0);
    CHECK_EQ(ln_jobs_counts(jobs, "q", &c), 0);
    CHECK_EQ(c.waiting + c.active + c.completed, 0u);
    CHECK_EQ(c.failed, 0u);
    /* Space comes back: adds and workers work again. */
    CHECK_EQ(mount("tmpfs", dir, "tmpfs", MS_REMOUNT, "size=16m"), 0);
    CHECK_EQ(ln_jobs_add(jobs, "q", "n", "{}", NULL, NULL, 0), 0);
    CHECK_EQ(run_until_full(jobs), 0);
    ln_jobs_close(jobs);
    umount2(dir, MNT_DETACH);
    jt_cleanup();
}

int main(int argc, char **argv) {
    return ln_test_run(argc, argv,
                       (ln_test_case[]){TESTCASE(corrupt_store_fails_loudly),
                                        TESTCASE(corrupt_store_fails_loudly_during_the_run),
                                        TESTCASE(truncated_store_fails_loudly),
                                        TESTCASE(truncated_store_fails_loudly_during_the_run),
                                        TESTCASE(check_reads_what_the_open_does_not),
                                        TESTCASE(full_disk_on_a_2m_volume),
                                        TESTCASE(full_disk_on_a_6m_volume),
                                        TESTCASE(full_disk_twice),
                                        {0}});
}
