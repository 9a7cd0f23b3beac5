/* test_jobs_api.c - the job store API on the SQLite backend: opening (and
 * refusing bad stores), adding with validation, every administration
 * operation, lease fencing at the backend level, fork refusal, query plans,
 * the per-state counters and their schema upgrade, and allocation
 * failures. */
#include "jobs/jobs_test.h"

#include "internal.h"
#include "jobs/front.h"
#include "jobs/sqlite_int.h"

#include <pthread.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>

static ln_jobs *open_fresh(const char *name) { return jt_open(jt_url(name)); }

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
    snprintf(url, sizeof url, "%s?sync=full&busy_timeout=5000&reserve=0",
             jt_url("full"));
    CHECK_EQ(ln_jobs_open_ex(&jobs, url, NULL, msg, sizeof msg), 0);
    CHECK_EQ(ln_jobs_add(jobs, "q", "n", "{}", NULL, NULL, 0), 0);
    ln_jobs_close(jobs);
    jobs = NULL;
    CHECK(access(jt_path("full.db-reserve"), F_OK) != 0); /* reserve=0 */
    /* Unwritable locations: under a missing directory, under a file. */
    CHECK_EQ(ln_jobs_open_ex(&jobs, "sqlite:/nonexistent-lanes/dir/x.db", NULL,
                             msg, sizeof msg), LN_EIO);
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
    CHECK_EQ(ln_jobs_open_ex(&jobs, jt_url("s"), NULL, msg, sizeof msg),
             LN_ECORRUPT);
    CHECK(strstr(msg, "schema version 99") != NULL);
    CHECK_EQ(sqlite3_open(jt_path("other.db"), &db), SQLITE_OK);
    CHECK_EQ(sqlite3_exec(db, "PRAGMA application_id = 7", 0, 0, 0), SQLITE_OK);
    sqlite3_close(db);
    CHECK_EQ(ln_jobs_open_ex(&jobs, jt_url("other"), NULL, msg, sizeof msg),
             LN_ECORRUPT);
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
    CHECK_EQ(sqlite3_column_int(st, 0), 2);
    sqlite3_finalize(st);
    sqlite3_close(db);
    ln_jobs_close(jobs);
    jt_cleanup();
}

TEST(add_get_and_dedup) {
    ln_jobs *jobs = open_fresh("a");
    char id[LN_JOB_ID_MAX], id2[LN_JOB_ID_MAX];
    CHECK_EQ(ln_jobs_add(jobs, "q", "email", "{\"to\":\"a@b\"}", NULL, id,
                         sizeof id), 0);
    CHECK(strcmp(id, "1") == 0);
    CHECK_EQ(ln_jobs_add(jobs, "q", "email", NULL, NULL, id, sizeof id), 0);
    CHECK(strcmp(id, "2") == 0);
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.job_id = "order-42";
    o.traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    o.attempts = 3;
    o.backoff = LN_BACKOFF_EXPONENTIAL;
    o.backoff_ms = 10;
    CHECK_EQ(ln_jobs_add(jobs, "q", "charge", "[1,2]", &o, id, sizeof id), 0);
    CHECK(strcmp(id, "order-42") == 0);
    /* Same id again: a no-op returning the existing job. */
    CHECK_EQ(ln_jobs_add(jobs, "q", "other", "{}", &o, id2, sizeof id2), 0);
    CHECK(strcmp(id2, "order-42") == 0);
    CHECK_EQ(jt_total(jobs, "q"), 3);
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(jobs, "q", "order-42", &info), 0);
    CHECK(strcmp(info.name, "charge") == 0);
    CHECK(strcmp(info.data, "[1,2]") == 0);
    CHECK_EQ(info.state, LN_JOB_WAITING);
    CHECK_EQ(info.attempts, 3);
    CHECK_EQ(info.backoff, LN_BACKOFF_EXPONENTIAL);
    CHECK(strcmp(info.traceparent, o.traceparent) == 0);
    CHECK(info.created_ms > 1600000000000LL);
    ln_job_info_clear(&info);
    CHECK_EQ(ln_jobs_get(jobs, "q", "2", &info), 0);
    CHECK(strcmp(info.data, "{}") == 0);
    ln_job_info_clear(&info);
    CHECK_EQ(ln_jobs_get(jobs, "q", "99", &info), LN_ENOENT);
    CHECK_EQ(ln_jobs_get(jobs, "other-queue", "1", &info), LN_ENOENT);
    CHECK(strstr(ln_jobs_errmsg(jobs), "no job") != NULL);
    ln_jobs_close(jobs);
    jt_cleanup();
}

TEST(add_rejects_bad_input_and_stores_nothing) {
    ln_jobs_opts jo;
    ln_jobs_opts_init(&jo);
    jo.max_data_size = 64;
    ln_jobs *jobs = NULL;
    CHECK_EQ(ln_jobs_open_ex(&jobs, jt_url("b"), &jo, NULL, 0), 0);
    char id[LN_JOB_ID_MAX];
    CHECK_EQ(ln_jobs_add(jobs, "q", "n", "{not json", NULL, id, sizeof id),
             LN_EINVAL);
    CHECK(strstr(ln_jobs_errmsg(jobs), "not valid JSON") != NULL);
    CHECK_EQ(ln_jobs_add(jobs, "q", "n", "", NULL, id, sizeof id), LN_EINVAL);
    CHECK_EQ(ln_jobs_add(jobs, "q", "n", "{} {}", NULL, id, sizeof id), LN_EINVAL);
    char big[200];
    memset(big, 'x', sizeof big);
    big[0] = '"';
    big[sizeof big - 2] = '"';
    big[sizeof big - 1] = '\0';
    CHECK_EQ(ln_jobs_add(jobs, "q", "n", big, NULL, id, sizeof id), LN_EINVAL);
    CHECK(strstr(ln_jobs_errmsg(jobs), "limit of 64") != NULL);
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.delay_ms = -5;
    CHECK_EQ(ln_jobs_add(jobs, "q", "n", "1", &o, id, sizeof id), LN_EINVAL);
    CHECK(strstr(ln_jobs_errmsg(jobs), "delay") != NULL);
    ln_job_opts_init(&o);
    o.priority = LN_JOB_PRIORITY_MAX + 1;
    CHECK_EQ(ln_jobs_add(jobs, "q", "n", "1", &o, id, sizeof id), LN_EINVAL);
    ln_job_opts_init(&o);
    o.attempts = 0;
    CHECK_EQ(ln_jobs_add(jobs, "q", "n", "1", &o, id, sizeof id), LN_EINVAL);
    ln_job_opts_init(&o);
    o.backoff = 7;
    CHECK_EQ(ln_jobs_add(jobs, "q", "n", "1", &o, id, sizeof id), LN_EINVAL);
    ln_job_opts_init(&o);
    o.job_id = "12345";
    CHECK_EQ(ln_jobs_add(jobs, "q", "n", "1", &o, id, sizeof id), LN_EINVAL);
    o.job_id = "bad\nid";
    CHECK_EQ(ln_jobs_add(jobs, "q", "n", "1", &o, id, sizeof id), LN_EINVAL);
    ln_job_opts_init(&o);
    o.traceparent = "00-00000000000000000000000000000000-00f067aa0ba902b7-01";
    CHECK_EQ(ln_jobs_add(jobs, "q", "n", "1", &o, id, sizeof id), LN_EINVAL);
    ln_job_opts_init(&o);
    o.remove_on_complete.mode = 9;
    CHECK_EQ(ln_jobs_add(jobs, "q", "n", "1", &o, id, sizeof id), LN_EINVAL);
    CHECK_EQ(ln_jobs_add(jobs, "", "n", "1", NULL, id, sizeof id), LN_EINVAL);
    CHECK_EQ(ln_jobs_add(jobs, "q", NULL, "1", NULL, id, sizeof id), LN_EINVAL);
    CHECK_EQ(ln_jobs_add(jobs, "q", "n", "1", NULL, id, 4), LN_ERANGE);
    CHECK_EQ(ln_jobs_add(NULL, "q", "n", "1", NULL, id, sizeof id), LN_EINVAL);
    CHECK_EQ(jt_total(jobs, "q"), 0);
    ln_jobs_close(jobs);
    jt_cleanup();
}

TEST(add_bulk_is_all_or_nothing) {
    ln_jobs *jobs = open_fresh("c");
    ln_job_spec specs[100];
    for (int i = 0; i < 100; i++) specs[i] = (ln_job_spec){"n", "{}", NULL};
    static char ids[100][LN_JOB_ID_MAX];
    CHECK_EQ(ln_jobs_add_bulk(jobs, "q", specs, 100, ids[0], LN_JOB_ID_MAX), 0);
    CHECK(strcmp(ids[0], "1") == 0 && strcmp(ids[99], "100") == 0);
    specs[57].data_json = "{oops";
    CHECK_EQ(ln_jobs_add_bulk(jobs, "q", specs, 100, NULL, 0), LN_EINVAL);
    CHECK(strstr(ln_jobs_errmsg(jobs), "job 57") != NULL);
    CHECK_EQ(jt_total(jobs, "q"), 100);
    CHECK_EQ(ln_jobs_add_bulk(jobs, "q", specs, 0, NULL, 0), 0);
    ln_jobs_close(jobs);
    jt_cleanup();
}

static void list_ids(ln_jobs *jobs, int state, size_t off, size_t lim,
                     char *out, size_t size) {
    ln_job_info *infos;
    size_t n;
    CHECK_EQ(ln_jobs_list(jobs, "q", state, off, lim, &infos, &n), 0);
    out[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        strncat(out, infos[i].id, size - strlen(out) - 2);
        strcat(out, " ");
    }
    ln_job_info_free_array(infos, n);
}

TEST(states_order_paging_pause) {
    ln_jobs *jobs = open_fresh("d");
    ln_job_opts o;
    const struct { const char *id; int prio, lifo; int64_t delay; } add[] = {
        {"a", 0, 0, 0}, {"b", 0, 0, 0}, {"c", 0, 1, 0}, {"d", 2, 0, 0},
        {"e", 1, 0, 0}, {"f", 0, 0, 600000},
    };
    for (size_t i = 0; i < LN_ARRAY_SIZE(add); i++) {
        ln_job_opts_init(&o);
        o.job_id = add[i].id;
        o.priority = add[i].prio;
        o.lifo = add[i].lifo;
        o.delay_ms = add[i].delay;
        CHECK_EQ(ln_jobs_add(jobs, "q", "n", "{}", &o, NULL, 0), 0);
    }
    ln_job_counts c;
    CHECK_EQ(ln_jobs_counts(jobs, "q", &c), 0);
    CHECK_EQ(c.waiting, 3);
    CHECK_EQ(c.prioritized, 2);
    CHECK_EQ(c.delayed, 1);
    char ids[256];
    list_ids(jobs, LN_JOB_WAITING, 0, 10, ids, sizeof ids);
    CHECK(strcmp(ids, "c a b ") == 0); /* LIFO first, then FIFO */
    list_ids(jobs, LN_JOB_PRIORITIZED, 0, 10, ids, sizeof ids);
    CHECK(strcmp(ids, "e d ") == 0);
    list_ids(jobs, LN_JOB_WAITING, 1, 1, ids, sizeof ids);
    CHECK(strcmp(ids, "a ") == 0);
    list_ids(jobs, LN_JOB_DELAYED, 0, 10, ids, sizeof ids);
    CHECK(strcmp(ids, "f ") == 0);
    ln_job_info *infos;
    size_t n;
    CHECK_EQ(ln_jobs_list(jobs, "q", LN_JOB_WAITING, 0, 0, &infos, &n), LN_EINVAL);
    CHECK_EQ(ln_jobs_list(jobs, "q", 42, 0, 1, &infos, &n), LN_EINVAL);

    int paused = -1;
    CHECK_EQ(ln_jobs_pause(jobs, "q"), 0);
    CHECK_EQ(ln_jobs_is_paused(jobs, "q", &paused), 0);
    CHECK_EQ(paused, 1);
    CHECK_EQ(ln_jobs_counts(jobs, "q", &c), 0);
    CHECK_EQ(c.paused, 5);
    CHECK_EQ(c.waiting + c.prioritized, 0);
    list_ids(jobs, LN_JOB_PAUSED, 0, 10, ids, sizeof ids);
    CHECK(strcmp(ids, "c a b e d ") == 0);
    list_ids(jobs, LN_JOB_WAITING, 0, 10, ids, sizeof ids);
    CHECK(strcmp(ids, "") == 0);
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(jobs, "q", "a", &info), 0);
    CHECK_EQ(info.state, LN_JOB_PAUSED);
    ln_job_info_clear(&info);
    CHECK_EQ(ln_jobs_resume(jobs, "q"), 0);
    CHECK_EQ(ln_jobs_counts(jobs, "q", &c), 0);
    CHECK_EQ(c.paused, 0);
    CHECK_EQ(c.waiting, 3);

    size_t removed = 0;
    CHECK_EQ(ln_jobs_remove(jobs, "q", "b"), 0);
    CHECK_EQ(ln_jobs_remove(jobs, "q", "b"), LN_ENOENT);
    CHECK_EQ(ln_jobs_drain(jobs, "q", &removed), 0);
    CHECK_EQ(removed, 5);
    jt_check_counters("d");
    CHECK_EQ(jt_total(jobs, "q"), 0);
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
    CHECK_EQ(be->methods->recover_stalled(be, "q", 1, "stalled", &requeued,
                                      &failed), 0);
    CHECK_EQ(requeued, 1);
    CHECK_EQ(failed, 0);
    /* The old holder can no longer complete, renew, log or release. */
    ln__job_done d = {.ref = old, .kind = LN__DONE_COMPLETE};
    int rrc = 0;
    ln__jobs_step st2 = {.done = &d, .ndone = 1, .renew = &old,
                         .renew_rc = &rrc, .nrenew = 1, .lease_ms = 30000};
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
    CHECK_EQ(be->methods->recover_stalled(be, "q", 1, "stalled too often",
                                      &requeued, &failed), 0);
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

static int fail_bad(ln_job *job, void *ctx) {
    (void)ctx;
    ln_job_log(job, "first line");
    ln_job_log(job, "second line");
    ln_job_progress(job, "{\"pct\":50}");
    if (strcmp(ln_job_name(job), "bad") == 0) return ln_job_fail(job, "nope");
    return ln_job_set_result(job, "{\"ok\":true}");
}

TEST(retry_clean_logs_progress) {
    ln_jobs *jobs = open_fresh("f");
    for (int i = 0; i < 6; i++)
        CHECK_EQ(ln_jobs_add(jobs, "q", i % 2 ? "bad" : "good", "{}", NULL,
                             NULL, 0), 0);
    ln_worker_opts wo;
    ln_worker_opts_init(&wo);
    wo.exit_when_empty = 1;
    ln_worker *w;
    CHECK_EQ(ln_worker_create(&w, jobs, "q", fail_bad, NULL, &wo), 0);
    CHECK_EQ(ln_worker_run(w), 0);
    ln_job_counts c;
    CHECK_EQ(ln_jobs_counts(jobs, "q", &c), 0);
    CHECK_EQ(c.completed, 3);
    CHECK_EQ(c.failed, 3);
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(jobs, "q", "2", &info), 0);
    CHECK(strcmp(info.failed_reason, "nope") == 0);
    CHECK(strcmp(info.progress, "{\"pct\":50}") == 0);
    ln_job_info_clear(&info);
    CHECK_EQ(ln_jobs_get(jobs, "q", "1", &info), 0);
    CHECK(strcmp(info.result, "{\"ok\":true}") == 0);
    ln_job_info_clear(&info);
    char **lines;
    size_t n;
    CHECK_EQ(ln_jobs_logs(jobs, "q", "1", &lines, &n), 0);
    CHECK_EQ(n, 2);
    CHECK(strcmp(lines[1], "second line") == 0);
    ln_jobs_free_lines(lines, n);
    size_t count = 0, removed = 0;
    CHECK_EQ(ln_jobs_retry_all(jobs, "q", &count), 0);
    CHECK_EQ(count, 3);
    CHECK_EQ(ln_jobs_counts(jobs, "q", &c), 0);
    CHECK_EQ(c.waiting, 3);
    CHECK_EQ(ln_jobs_clean(jobs, "q", LN_JOB_COMPLETED, -1, 1, &removed), 0);
    CHECK_EQ(removed, 2);
    CHECK_EQ(ln_jobs_clean(jobs, "q", LN_JOB_COMPLETED, 3600000, 0, &removed), 0);
    CHECK_EQ(removed, 0); /* the one left finished less than an hour ago */
    CHECK_EQ(ln_jobs_clean(jobs, "q", LN_JOB_WAITING, -1, 0, &removed),
             LN_EINVAL);
    CHECK_EQ(ln_jobs_logs(jobs, "q", "1", &lines, &n), LN_ENOENT);
    jt_check_counters("f");
    ln_worker_destroy(w);
    ln_jobs_close(jobs);
    jt_cleanup();
}

static int noop(ln_job *job, void *ctx) {
    (void)job, (void)ctx;
    return 0;
}

TEST(remove_on_complete_and_fail) {
    ln_jobs *jobs = open_fresh("g");
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.remove_on_complete.mode = LN_KEEP_COUNT;
    o.remove_on_complete.value = 3;
    char ids[10][LN_JOB_ID_MAX];
    for (int i = 0; i < 10; i++)
        CHECK_EQ(ln_jobs_add(jobs, "q", "n", "{}", &o, ids[i], sizeof ids[i]), 0);
    o.remove_on_complete.mode = LN_KEEP_NONE;
    CHECK_EQ(ln_jobs_add(jobs, "q2", "n", "{}", &o, NULL, 0), 0);
    ln_worker_opts wo;
    ln_worker_opts_init(&wo);
    wo.exit_when_empty = 1;
    ln_worker *w;
    CHECK_EQ(ln_worker_create(&w, jobs, "q", noop, NULL, &wo), 0);
    CHECK_EQ(ln_worker_run(w), 0);
    ln_worker_destroy(w);
    CHECK_EQ(ln_worker_create(&w, jobs, "q2", noop, NULL, &wo), 0);
    CHECK_EQ(ln_worker_run(w), 0);
    ln_worker_destroy(w);
    ln_job_counts c;
    CHECK_EQ(ln_jobs_counts(jobs, "q", &c), 0);
    CHECK_EQ(c.completed, 3);
    /* The newest three are kept (one worker, so jobs finish in order). */
    ln_job_info *kept;
    size_t nkept;
    CHECK_EQ(ln_jobs_list(jobs, "q", LN_JOB_COMPLETED, 0, 10, &kept, &nkept), 0);
    CHECK_EQ(nkept, 3);
    for (size_t i = 0; i < nkept; i++) {
        int newest = 0;
        for (int k = 7; k < 10; k++) newest |= strcmp(kept[i].id, ids[k]) == 0;
        CHECK(newest);
    }
    ln_job_info_free_array(kept, nkept);
    CHECK_EQ(jt_total(jobs, "q2"), 0);
    jt_check_counters("g");
    ln_jobs_close(jobs);
    jt_cleanup();
}

TEST(handle_refused_after_fork) {
    ln_jobs *jobs = open_fresh("h");
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        int rc = ln_jobs_add(jobs, "q", "n", "{}", NULL, NULL, 0);
        int ok = rc == LN_EFORK &&
                 strstr(ln_jobs_errmsg(jobs), "fork") != NULL;
        ln_jobs_close(jobs); /* frees memory only */
        ln_jobs *mine = jt_open(jt_url("h")); /* a child opens its own */
        ok = ok && ln_jobs_add(mine, "q", "child", "{}", NULL, NULL, 0) == 0;
        ln_jobs_close(mine);
        _exit(ok ? 0 : 1);
    }
    int status;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK_EQ(ln_jobs_add(jobs, "q", "parent", "{}", NULL, NULL, 0), 0);
    CHECK_EQ(jt_total(jobs, "q"), 2);
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
            if (strncmp(d, "SCAN lanes_jobs", 15) == 0 ||
                strncmp(d, "SCAN j", 6) == 0) {
                fprintf(stderr, "statement %d scans: %s\n  %s\n", id, d,
                        ln__sq_sql_text(id));
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
    CHECK_EQ(searches, 6);
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
    for (int i = 0; i < 2; i++)
        CHECK_EQ(ln_jobs_add(jobs, "q", "n", "{}", &o, NULL, 0), 0);
    ln_job_opts_init(&o);
    o.delay_ms = 3600000; /* 8 delayed */
    CHECK_EQ(ln_jobs_add(jobs, "q", "n", "{}", &o, NULL, 0), 0);
    for (int i = 0; i < 2; i++) /* 9, 10 waiting in another queue */
        CHECK_EQ(ln_jobs_add(jobs, "r", "n", "{}", NULL, NULL, 0), 0);
    ln_jobs_close(jobs);

    sqlite3 *db;
    CHECK_EQ(sqlite3_open(jt_path("u.db"), &db), SQLITE_OK);
    CHECK_EQ(sqlite3_exec(db,
                          "DROP TRIGGER lanes_jobs_count_move;"
                          "DROP TRIGGER lanes_jobs_count_delete;"
                          "DROP TABLE lanes_counts;"
                          "PRAGMA user_version = 1;"
                          "UPDATE lanes_jobs SET state = 4, finished_at = "
                          "  created_at WHERE rid IN (1, 2);"
                          "UPDATE lanes_jobs SET state = 5, finished_at = "
                          "  created_at WHERE rid = 3;"
                          "DELETE FROM lanes_jobs WHERE rid = 4;"
                          "UPDATE lanes_jobs SET state = 3, lease_until = "
                          "  created_at + 60000 WHERE rid = 6;",
                          NULL, NULL, NULL), SQLITE_OK);
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
    CHECK_EQ(sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL),
             SQLITE_OK);
    CHECK_EQ(sqlite3_step(st), SQLITE_ROW);
    CHECK_EQ(sqlite3_column_int(st, 0), 2);
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
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, commit_later, db), 0);
    t0 = ln_now_ns();
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

static void *add_200(void *arg) {
    ln_jobs *jobs = arg;
    for (int i = 0; i < 200; i++) {
        char id[LN_JOB_ID_MAX];
        if (ln_jobs_add(jobs, "q", "t", "{}", NULL, id, sizeof id) != 0)
            return (void *)1;
        ln_job_counts c;
        if (i % 50 == 0 && ln_jobs_counts(jobs, "q", &c) != 0) return (void *)1;
    }
    return NULL;
}

/* One handle shared by several threads: calls are serialised inside. */
TEST(one_handle_many_threads) {
    ln_jobs *jobs = open_fresh("t");
    pthread_t t[4];
    for (int i = 0; i < 4; i++) pthread_create(&t[i], NULL, add_200, jobs);
    for (int i = 0; i < 4; i++) {
        void *r;
        pthread_join(t[i], &r);
        CHECK(r == NULL);
    }
    CHECK_EQ(jt_total(jobs, "q"), 800);
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(jobs, "q", "800", &info), 0); /* ids 1..800 */
    ln_job_info_clear(&info);
    ln_jobs_close(jobs);
    jt_cleanup();
}

TEST(allocation_failures_are_clean) {
    const char *url = jt_url("m");
    ln_jobs *jobs = jt_open(url);
    ln_jobs_close(jobs);
    for (long n = 1; n < 40; n++) {
        ln_test_alloc_install(n);
        ln_jobs *j = NULL;
        int rc = ln_jobs_open(&j, url);
        if (rc == 0) {
            char id[LN_JOB_ID_MAX];
            rc = ln_jobs_add(j, "q", "n", "{}", NULL, id, sizeof id);
            CHECK(rc == 0 || rc == LN_ENOMEM);
            ln_job_info info;
            rc = ln_jobs_get(j, "q", "1", &info);
            CHECK(rc == 0 || rc == LN_ENOMEM);
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

int main(int argc, char **argv) {
    return ln_test_run(argc, argv, (ln_test_case[]){
        TESTCASE(open_rejects_bad_urls_and_files),
        TESTCASE(open_refuses_newer_schema_and_foreign_db),
        TESTCASE(add_get_and_dedup),
        TESTCASE(add_rejects_bad_input_and_stores_nothing),
        TESTCASE(add_bulk_is_all_or_nothing),
        TESTCASE(states_order_paging_pause),
        TESTCASE(lease_fencing_rejects_stale_tokens),
        TESTCASE(retry_clean_logs_progress),
        TESTCASE(remove_on_complete_and_fail),
        TESTCASE(handle_refused_after_fork),
        TESTCASE(every_statement_uses_an_index),
        TESTCASE(counts_upgrade_from_schema_1),
        TESTCASE(writer_waits_for_the_lock_then_times_out),
        TESTCASE(one_handle_many_threads),
        TESTCASE(allocation_failures_are_clean),
        {0}});
}
