/* test_redis_conn.c - the Redis backend's connections through the public
 * API: URLs it refuses, scripts the server forgot, connections killed under
 * an idle worker, a server that never answers, ACL logins, and the warning
 * about an evicting maxmemory-policy.
 *
 * Needs LANES_TEST_REDIS_URL (exit 77 = skipped without it). Each case
 * uses its own key prefix, so cases and other tests can share the server.
 */
#include "jobs/redis_test.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>

TEST(url_errors) {
    ln_jobs *jobs = NULL;
    char err[256];
    const char *bad[] = {
        "redis://",         "redis://host:0",    "redis://host:99999", "redis://host/abc",
        "redis://h?nope=1", "redis://h?prefix=", "redis://:%zz@h",     "unix:",
        "redis://h?db"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = ln_jobs_open_ex(&jobs, bad[i], NULL, err, sizeof err);
        if (rc != LN_EINVAL) fprintf(stderr, "%s -> %d\n", bad[i], rc);
        CHECK_EQ(rc, LN_EINVAL);
        CHECK(err[0] != '\0');
    }
    CHECK_EQ(ln_jobs_open_ex(&jobs, "rediss://h", NULL, err, sizeof err), LN_ENOTSUP);
    /* A port nobody listens on (the discard port is never open here). */
    CHECK_EQ(ln_jobs_open_ex(&jobs, "redis://127.0.0.1:9", NULL, err, sizeof err), LN_ECONNREFUSED);
    CHECK(strstr(err, "127.0.0.1:9") != NULL);
    CHECK_EQ(ln_jobs_open_ex(&jobs, "unix:/nonexistent/redis.sock", NULL, err, sizeof err),
             LN_ECONNREFUSED);
    CHECK(jobs == NULL);
}

/* The server forgot our scripts (restart, SCRIPT FLUSH): EVALSHA says
 * NOSCRIPT and the backend sends them again. */
TEST(noscript_reload) {
    ln_jobs *jobs = open_case("nos");
    add(jobs, "q", "ok", "{}", NULL, NULL);
    freeReplyObject(cmd("SCRIPT FLUSH"));
    add(jobs, "q", "ok", "{}", NULL, NULL);
    ln_job_counts c;
    CHECK_EQ(ln_jobs_counts(jobs, "q", &c), 0);
    CHECK_EQ(c.waiting, 2);
    /* The worker's pipelined steps (a connection of their own) meet
     * NOSCRIPT too: the step fails unrun and the next one sends the body. */
    freeReplyObject(cmd("SCRIPT FLUSH"));
    ln_worker_stats st = run_worker(jobs, "q", NULL, 0, 2);
    CHECK_EQ(st.completed, 2);
    CHECK_EQ(st.stale, 0);
    done(jobs);
}

/* CLIENT KILL of the worker's connection while it idles, three times: the
 * worker must not wedge; a job added afterwards still runs. The worker
 * logs in as an ACL user of its own, so only its connections are killed
 * (other tests share the server). */
TEST(client_kill_no_wedge) {
    ln_jobs *producer = open_case("kil");
    char user[32], worker_url[700];
    snprintf(user, sizeof user, "lanes-kill-%d", (int)getpid());
    freeReplyObject(cmd("ACL SETUSER %s on >pw ~* &* +@all", user));
    snprintf(worker_url, sizeof worker_url, "redis://%s:pw@%s?prefix=%s", user,
             base_url + strlen("redis://"), prefix);
    ln_jobs *jobs;
    CHECK_EQ(ln_jobs_open(&jobs, worker_url), 0);
    ln_worker_opts o;
    ln_worker_opts_init(&o);
    bg_worker b = {0};
    CHECK_EQ(ln_worker_create(&b.w, jobs, "q", handler, NULL, &o), 0);
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, bg_run, &b), 0);
    /* Each kill finds the connections the worker made again (its step's and
     * its blocking wait's, so a kill may end one or two). */
    long long killed = 0, kills = 0;
    for (int i = 0; i < 100 && kills < 3; i++) {
        ln_test_sleep_ms(50);
        long long k = cmd_int("CLIENT KILL USER %s", user);
        killed += k;
        kills += k > 0;
    }
    CHECK_EQ(kills, 3);
    CHECK(killed >= 3);
    add(producer, "q", "ok", "{}", NULL, NULL);
    ln_job_counts c = {0};
    for (int i = 0; i < 200 && c.completed == 0; i++) {
        ln_test_sleep_ms(50);
        if (ln_jobs_counts(producer, "q", &c)) memset(&c, 0, sizeof c);
    }
    CHECK_EQ(c.completed, 1);
    ln_worker_stop(b.w);
    pthread_join(t, NULL);
    CHECK_EQ(b.rc, 0);
    ln_worker_destroy(b.w);
    ln_jobs_close(jobs);
    freeReplyObject(cmd("ACL DELUSER %s", user));
    done(producer);
}

/* A server that accepts connections and never answers (frozen, or a
 * half-open link): every call gives up after timeout_ms instead of hanging. */
TEST(unresponsive_server_times_out) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    CHECK(fd >= 0);
    CHECK_EQ(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    CHECK_EQ(listen(fd, 8), 0); /* the kernel completes connects; nobody reads */
    CHECK_EQ(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    char silent[128], err[256];
    snprintf(silent, sizeof silent, "redis://127.0.0.1:%d?timeout_ms=200", ntohs(a.sin_port));
    ln_jobs *jobs = NULL;
    uint64_t t0 = now_ms();
    CHECK_EQ(ln_jobs_open_ex(&jobs, silent, NULL, err, sizeof err), LN_EBACKEND);
    CHECK(strstr(err, "timeout") != NULL);
    CHECK(now_ms() - t0 < 5000);
    close(fd);
}

/* redis://USER:PASSWORD@... authenticates (Redis 6 ACL); a wrong password
 * is LN_EACCES. */
TEST(acl_auth) {
    ln_jobs *jobs = open_case("acl");
    char user[32], good[600], bad[600], err[256];
    snprintf(user, sizeof user, "lanes-%d", (int)getpid());
    freeReplyObject(cmd("ACL SETUSER %s on >p%%40ss ~* &* +@all", user));
    const char *hostport = base_url + strlen("redis://");
    snprintf(good, sizeof good, "redis://%s:p%%2540ss@%s", user, hostport);
    snprintf(bad, sizeof bad, "redis://%s:nope@%s", user, hostport);
    ln_jobs *other = NULL;
    int rc_good = ln_jobs_open_ex(&other, good, NULL, err, sizeof err);
    ln_jobs_close(other);
    other = NULL;
    int rc_bad = ln_jobs_open_ex(&other, bad, NULL, err, sizeof err);
    freeReplyObject(cmd("ACL DELUSER %s", user));
    CHECK_EQ(rc_good, 0);
    CHECK_EQ(rc_bad, LN_EACCES);
    CHECK(other == NULL);
    done(jobs);
}

/* Opening warns on stderr when maxmemory-policy could evict keys. */
TEST(eviction_policy_warning) {
    ln_jobs *jobs = open_case("evp");
    CHECK(ln_jobs_warning(jobs) == NULL); /* the test server: noeviction */
    redisReply *r = cmd("CONFIG GET maxmemory-policy");
    CHECK_EQ(r->elements, 2);
    char old[64];
    snprintf(old, sizeof old, "%s", r->element[1]->str);
    freeReplyObject(r);
    freeReplyObject(cmd("CONFIG SET maxmemory-policy allkeys-lru"));
    ln_jobs *other = NULL;
    int rc = ln_jobs_open(&other, url);
    freeReplyObject(cmd("CONFIG SET maxmemory-policy %s", old));
    CHECK_EQ(rc, 0);
    /* The library never prints: the warning is on the handle. */
    const char *w = ln_jobs_warning(other);
    CHECK(w != NULL && strstr(w, "maxmemory-policy is 'allkeys-lru'") != NULL);
    ln_jobs_close(other);
    done(jobs);
}

int main(int argc, char **argv) {
    return redis_test_main(argc, argv,
                           (ln_test_case[]){TESTCASE(url_errors),
                                            TESTCASE(noscript_reload),
                                            TESTCASE(client_kill_no_wedge),
                                            TESTCASE(eviction_policy_warning),
                                            TESTCASE(acl_auth),
                                            TESTCASE(unresponsive_server_times_out),
                                            {0}});
}
