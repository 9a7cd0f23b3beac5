/* test_remove_tree.c - what the conformance suite cannot reach through
 * the public API, on both stores: a tree larger than remove_tree's cap is
 * refused with nothing removed (the backend method is given a small cap:
 * every flow lanes adds fits LN_JOBS_REMOVE_TREE_MAX), and a drain whose
 * later step fails still reports the jobs its earlier steps removed.
 * The Redis half needs LANES_TEST_REDIS_URL (skipped without it). */
#include "jobs/jobs_test.h"

#include "internal.h"
#include "jobs/front/front.h"

#ifdef RT_HAVE_HIREDIS
#include <hiredis/hiredis.h>
#endif

#include <time.h>

/* Jobs of queue in any state, waiting for children too. */
static uint64_t total(ln_jobs *jobs, const char *queue) {
    ln_job_counts c;
    CHECK_EQ(ln_jobs_counts(jobs, queue, &c), 0);
    return jt_total(jobs, queue) + c.waiting_children;
}

static ln_flow_node leaf(const char *id, ln_job_opts *o) {
    ln_job_opts_init(o);
    o->job_id = id;
    return (ln_flow_node){.name = "leaf", .opts = o};
}

/* r with children a, b, c (queue q): 4 entries. A cap of 3 refuses it
 * whole; a cap of 4 takes it. */
static void too_big(ln_jobs *jobs, const char *q) {
    ln_job_opts o[4];
    ln_flow_node kids[3] = {leaf("a", &o[0]), leaf("b", &o[1]), leaf("c", &o[2])};
    ln_flow_node root = leaf("r", &o[3]);
    root.queue = q;
    root.name = "parent";
    root.children = kids;
    root.nchildren = 3;
    char ids[4][LN_JOB_ID_MAX];
    CHECK_EQ(ln_jobs_add_flow(jobs, &root, ids[0], 4, LN_JOB_ID_MAX), 0);
    size_t n = 99;
    int rc = jobs->be->methods->remove_tree(jobs->be, q, "r", 3, &n);
    CHECK_EQ(rc, LN_ETOOBIG);
    CHECK(strstr(jobs->be->errmsg, "more than 3 entries") != NULL);
    CHECK_EQ(n, 0);
    CHECK_EQ(total(jobs, q), 4);
    CHECK_EQ(jobs->be->methods->remove_tree(jobs->be, q, "r", 4, &n), 0);
    CHECK_EQ(n, 4);
    CHECK_EQ(total(jobs, q), 0);
}

static void add_n(ln_jobs *jobs, const char *q, int n, int64_t delay_ms) {
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.delay_ms = delay_ms;
    for (int i = 0; i < n; i++) CHECK_EQ(ln_jobs_add(jobs, q, "j", "{}", &o, NULL, 0), 0);
}

TEST(sqlite_tree_over_the_cap_is_refused) {
    ln_jobs *jobs = jt_open(jt_url("t"));
    too_big(jobs, "q");
    ln_jobs_close(jobs);
    jt_cleanup();
}

/* The delayed walk fails (a trigger refuses to delete a delayed job)
 * after the ready walk removed 5: the drain's error says so, and
 * *removed is 5. */
TEST(sqlite_failed_drain_counts_what_went) {
    ln_jobs *jobs = jt_open(jt_url("d"));
    add_n(jobs, "q", 5, 0);
    add_n(jobs, "q", 3, 3600000);
    sqlite3 *db;
    CHECK_EQ(sqlite3_open(jt_path("d.db"), &db), SQLITE_OK);
    CHECK_EQ(sqlite3_exec(db,
                          "CREATE TRIGGER t_refuse BEFORE DELETE ON lanes_jobs WHEN old.state = 1 "
                          "BEGIN SELECT RAISE(ABORT, 'refused'); END",
                          NULL, NULL, NULL),
             SQLITE_OK);
    sqlite3_close(db);
    size_t removed = 0;
    int rc = ln_jobs_drain(jobs, "q", &removed);
    CHECK(rc != 0);
    CHECK_EQ(removed, 5);
    CHECK_EQ(jt_total(jobs, "q"), 3);
    ln_jobs_close(jobs);
    jt_cleanup();
}

#ifdef RT_HAVE_HIREDIS
/* The store URL of this run (its own key prefix), or NULL: skipped. */
static const char *redis_url(char *buf, size_t size, char *prefix, size_t psize) {
    const char *u = getenv("LANES_TEST_REDIS_URL");
    if (u == NULL || *u == '\0') LN_SKIP("redis", "LANES_TEST_REDIS_URL not set");
    snprintf(prefix, psize, "lrt%ld%d", (long)time(NULL), (int)getpid());
    snprintf(buf, size, "%s%cprefix=%s", u, strchr(u, '?') ? '&' : '?', prefix);
    return buf;
}

TEST(redis_tree_over_the_cap_is_refused) {
    char url[512], prefix[64];
    if (redis_url(url, sizeof url, prefix, sizeof prefix) == NULL) return;
    ln_jobs *jobs = jt_open(url);
    too_big(jobs, "q");
    ln_jobs_close(jobs);
}

/* The "paused" key holds a string, so the drain's second key fails
 * (WRONGTYPE) after the first removed 5 waiting jobs. */
TEST(redis_failed_drain_counts_what_went) {
    char url[512], prefix[64], key[128];
    if (redis_url(url, sizeof url, prefix, sizeof prefix) == NULL) return;
    ln_jobs *jobs = jt_open(url);
    add_n(jobs, "q", 5, 0);
    const char *u = getenv("LANES_TEST_REDIS_URL");
    int port = 6379;
    const char *colon = strrchr(u, ':');
    if (colon != NULL) port = atoi(colon + 1);
    redisContext *rc = redisConnect("127.0.0.1", port);
    CHECK(rc != NULL && rc->err == 0);
    snprintf(key, sizeof key, "%s:q:paused", prefix);
    redisReply *rep = redisCommand(rc, "SET %s x", key);
    CHECK(rep != NULL);
    freeReplyObject(rep);
    size_t removed = 0;
    CHECK(ln_jobs_drain(jobs, "q", &removed) != 0);
    CHECK_EQ(removed, 5);
    rep = redisCommand(rc, "DEL %s", key);
    freeReplyObject(rep);
    redisFree(rc);
    ln_jobs_close(jobs);
}
#endif

int main(int argc, char **argv) {
    return ln_test_run(argc, argv,
                       (ln_test_case[]){TESTCASE(sqlite_tree_over_the_cap_is_refused),
                                        TESTCASE(sqlite_failed_drain_counts_what_went),
#ifdef RT_HAVE_HIREDIS
                                        TESTCASE(redis_tree_over_the_cap_is_refused),
                                        TESTCASE(redis_failed_drain_counts_what_went),
#endif
                                        {0}});
}
