/* test_redis_wait.c - idle C workers block on BullMQ's marker instead of
 * polling (docs/internals/worker-loop.md#idle-workers): an idle worker sends
 * a handful of commands in two seconds (a polling worker would step every
 * poll_ms), a job added while it blocks is picked up long before the wait's
 * timeout, a delayed job wakes it when due without steps in between, a
 * blocked worker passes the wake-up on to the next one, and a killed blocking
 * connection does not wedge it; under BullMQ's global concurrency a finish
 * that frees the slot wakes it, and a finish refused because the queue's keys
 * are gone writes none back. Also counted here: one add is exactly one
 * EVALSHA. And a server that goes away: a worker rides out an outage shorter
 * than its store_retry_ms and gives up, saying so, after a longer one.
 *
 * Counting commands needs a server nobody else uses, so this test starts
 * its own redis-server (no persistence) on a free loopback port; like the
 * other Redis tests it runs only when LANES_TEST_REDIS_URL is set (exit 77
 * otherwise), i.e. where Redis is installed.
 */
#include "testutil.h"

#include <lanes.h>
#include <lanes/jobs.h>

#include <hiredis/hiredis.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The worker's longest blocking wait is 5 s (worker.c WAIT_MAX_MS); the
 * bounds below sit well under it so a worker woken by its timeout instead
 * of the marker fails them. */
#define PROMPT_MS 2000

static int port;
static pid_t server = -1;
static char base_url[128];
static char url[256];
static redisContext *raw;

static uint64_t now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

/* ------------------------------------------------------- private server */

static int free_port(void) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) != 0)
        return -1;
    close(fd);
    return ntohs(a.sin_port);
}

/* redis-server as our child; it dies with us (PDEATHSIG) if we are killed. */
static int start_server(void) {
    if ((port = free_port()) < 0) return -1;
    char p[16];
    snprintf(p, sizeof p, "%d", port);
    if ((server = fork()) < 0) return -1;
    if (server == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0) {
            dup2(devnull, 1);
            dup2(devnull, 2);
        }
        execlp("redis-server", "redis-server", "--port", p, "--bind", "127.0.0.1", "--save", "",
               "--appendonly", "no", "--dir", "/tmp", (char *)NULL);
        _exit(127);
    }
    snprintf(base_url, sizeof base_url, "redis://127.0.0.1:%d/0", port);
    for (int i = 0; i < 200; i++) {
        redisContext *c = redisConnect("127.0.0.1", port);
        if (c && !c->err) {
            redisReply *r = redisCommand(c, "PING");
            int ok = r && r->type == REDIS_REPLY_STATUS;
            if (r) freeReplyObject(r);
            redisFree(c);
            if (ok) return 0;
        } else if (c) {
            redisFree(c);
        }
        ln_test_sleep_ms(50);
    }
    return -1;
}

static void stop_server(void) {
    if (server > 0) {
        kill(server, SIGTERM);
        while (waitpid(server, NULL, 0) < 0 && errno == EINTR) {
        }
        server = -1;
    }
}

/* --------------------------------------------------------------- helpers */

/* This case's URL (a prefix of its own) and the raw connection. */
static void set_case(const char *name) {
    snprintf(url, sizeof url, "%s?prefix=lw%s", base_url, name);
    if (!raw) {
        raw = redisConnect("127.0.0.1", port);
        CHECK(raw && !raw->err);
    }
}

static ln_jobs *open_case(const char *name) {
    set_case(name);
    ln_jobs *jobs = NULL;
    CHECK_EQ(ln_jobs_open(&jobs, url), 0);
    return jobs;
}

static redisReply *cmd(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    redisReply *r = redisvCommand(raw, fmt, ap);
    va_end(ap);
    CHECK(r != NULL);
    CHECK(r->type != REDIS_REPLY_ERROR);
    return r;
}

/* Calls of command 'name' (lower case) since the last CONFIG RESETSTAT,
 * scripts' own redis.call()s included. */
static long calls(const char *name) {
    redisReply *r = cmd("INFO commandstats");
    char key[64];
    snprintf(key, sizeof key, "cmdstat_%s:calls=", name);
    const char *p = strstr(r->str, key);
    long n = p ? atol(p + strlen(key)) : 0;
    freeReplyObject(r);
    return n;
}

/* Clients blocked in BZPOPMIN (CLIENT LIST: cmd=bzpopmin, flags=b). */
static int blocked_clients(void) {
    redisReply *r = cmd("CLIENT LIST");
    int n = 0;
    for (const char *p = r->str; (p = strstr(p, " flags=b ")) != NULL; p++) {
        const char *eol = strchr(p, '\n');
        const char *c = strstr(p, " cmd=bzpopmin");
        if (c && (!eol || c < eol)) n++;
    }
    freeReplyObject(r);
    return n;
}

static void wait_blocked(int n) {
    uint64_t t0 = now_ms();
    while (blocked_clients() < n) {
        CHECK(now_ms() - t0 < 20000);
        ln_test_sleep_ms(10);
    }
}

typedef struct started {
    atomic_int n;
    atomic_ullong at_ms; /* when the last handler started */
    unsigned sleep_ms;
    atomic_int running, most_running; /* handlers at once, and the peak */
} started;

static int handler(ln_job *job, void *vctx) {
    (void)job;
    started *s = vctx;
    atomic_store(&s->at_ms, now_ms());
    atomic_fetch_add(&s->n, 1);
    int now = atomic_fetch_add(&s->running, 1) + 1;
    int peak = atomic_load(&s->most_running);
    while (now > peak && !atomic_compare_exchange_weak(&s->most_running, &peak, now)) {
    }
    if (s->sleep_ms) ln_test_sleep_ms(s->sleep_ms);
    atomic_fetch_sub(&s->running, 1);
    return 0;
}

typedef struct bg {
    ln_jobs *jobs;
    ln_worker *w;
    pthread_t t;
    int rc;
} bg;

static void *bg_run(void *arg) {
    bg *b = arg;
    b->rc = ln_worker_run(b->w);
    return NULL;
}

static void bg_start(bg *b, const char *queue, started *s, int concurrency) {
    CHECK_EQ(ln_jobs_open(&b->jobs, url), 0);
    ln_worker_opts o;
    ln_worker_opts_init(&o);
    o.concurrency = concurrency;
    o.poll_ms = 50; /* a polling worker would step 40 times in 2 s */
    CHECK_EQ(ln_worker_create(&b->w, b->jobs, queue, handler, s, &o), 0);
    CHECK_EQ(pthread_create(&b->t, NULL, bg_run, b), 0);
}

static void bg_stop(bg *b) {
    ln_worker_stop(b->w);
    pthread_join(b->t, NULL);
    CHECK_EQ(b->rc, 0);
    ln_worker_destroy(b->w);
    ln_jobs_close(b->jobs);
}

static void add(ln_jobs *jobs, const char *queue, int64_t delay_ms) {
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.delay_ms = delay_ms;
    char id[LN_JOB_ID_MAX];
    CHECK_EQ(ln_jobs_add(jobs, queue, "j", "{}", &o, id, sizeof id), 0);
}

static void wait_started(started *s, int n, uint64_t limit_ms) {
    uint64_t t0 = now_ms();
    while (atomic_load(&s->n) < n) {
        CHECK(now_ms() - t0 < limit_ms);
        ln_test_sleep_ms(2);
    }
}

/* ----------------------------------------------------------------- cases */

/* Idle for 2 s: the worker sits in one BZPOPMIN on the marker and makes no
 * step (a polling worker with poll_ms 50 would make ~40). Then a job added
 * while it blocks runs well before the wait's timeout. */
TEST(idle_worker_blocks_then_wakes) {
    ln_jobs *producer = open_case("idle");
    started s = {0};
    bg b;
    bg_start(&b, "q", &s, 4);
    wait_blocked(1);
    freeReplyObject(cmd("CONFIG RESETSTAT"));
    ln_test_sleep_ms(2000);
    long steps = calls("evalsha") + calls("eval");
    long waits = calls("bzpopmin");
    CHECK_EQ(blocked_clients(), 1); /* still in its wait */
    fprintf(stderr, "idle 2 s: %ld scripts, %ld finished BZPOPMIN\n", steps, waits);
    CHECK(steps <= 2);
    CHECK(waits <= 2);

    uint64_t t0 = now_ms();
    add(producer, "q", 0);
    wait_started(&s, 1, PROMPT_MS);
    fprintf(stderr, "picked up %llu ms after the add\n",
            (unsigned long long)(atomic_load(&s.at_ms) - t0));
    bg_stop(&b);
    ln_jobs_close(producer);
}

/* A delayed job: the worker pops the marker's due time, sleeps until then
 * without stepping, and runs the job when due -- not before, and not at
 * the wait's 5 s timeout. */
TEST(delayed_job_wakes_when_due) {
    ln_jobs *producer = open_case("delay");
    started s = {0};
    bg b;
    bg_start(&b, "q", &s, 2);
    wait_blocked(1);
    freeReplyObject(cmd("CONFIG RESETSTAT"));
    uint64_t t0 = now_ms();
    add(producer, "q", 1500);
    ln_test_sleep_ms(700);
    long scripts = calls("evalsha") + calls("eval");
    CHECK_EQ(atomic_load(&s.n), 0);
    fprintf(stderr, "scripts in the first 700 ms of a 1500 ms delay: %ld (the add)\n", scripts);
    CHECK_EQ(scripts, 1); /* only the producer's add */
    wait_started(&s, 1, 1500 + PROMPT_MS);
    uint64_t ran = atomic_load(&s.at_ms) - t0;
    fprintf(stderr, "delayed 1500 ms, ran after %llu ms\n", (unsigned long long)ran);
    CHECK(ran >= 1400); /* the server's clock decides; same host */
    bg_stop(&b);
    ln_jobs_close(producer);
}

/* Two blocked workers, two slow jobs added at once: the first worker wakes,
 * takes one job (all it can), and its take leaves the marker for the
 * second, which wakes and takes the other -- without waiting for a
 * timeout. */
TEST(wakeup_passes_to_next_worker) {
    ln_jobs *producer = open_case("pass");
    started s1 = {.sleep_ms = 1000}, s2 = {.sleep_ms = 1000};
    bg b1, b2;
    bg_start(&b1, "q", &s1, 1);
    bg_start(&b2, "q", &s2, 1);
    wait_blocked(2);
    ln_job_spec specs[2] = {{"j", "{}", NULL}, {"j", "{}", NULL}};
    uint64_t t0 = now_ms();
    CHECK_EQ(ln_jobs_add_bulk(producer, "q", specs, 2, NULL, 0), 0);
    wait_started(&s1, 1, PROMPT_MS);
    wait_started(&s2, 1, PROMPT_MS);
    fprintf(stderr, "both workers started within %llu ms\n", (unsigned long long)(now_ms() - t0));
    bg_stop(&b1);
    bg_stop(&b2);
    ln_jobs_close(producer);
}

/* CLIENT KILL of every connection, the blocked one included, while the
 * worker idles: it must reconnect and block again, and a job added then
 * runs promptly. */
TEST(killed_wait_connection_no_wedge) {
    set_case("kill");
    started s = {0};
    bg b;
    bg_start(&b, "q", &s, 1);
    for (int i = 0; i < 3; i++) {
        wait_blocked(1);
        redisReply *r = cmd("CLIENT KILL TYPE normal SKIPME yes");
        CHECK(r->type == REDIS_REPLY_INTEGER && r->integer >= 1);
        freeReplyObject(r);
    }
    wait_blocked(1); /* back in a wait on a new connection */
    ln_jobs *producer;
    CHECK_EQ(ln_jobs_open(&producer, url), 0);
    add(producer, "q", 0);
    wait_started(&s, 1, PROMPT_MS);
    bg_stop(&b);
    ln_jobs_close(producer);
}

/* BullMQ's global concurrency 1 and a worker of concurrency 4 blocked on
 * the marker: each finish frees the queue's one slot and must wake the
 * worker for the next job (adds and takes leave the marker alone while the
 * queue is maxed), not leave it to the wait's 5 s timeout. */
TEST(global_slot_freed_wakes_worker) {
    ln_jobs *producer = open_case("gconc");
    freeReplyObject(cmd("HSET lwgconc:q:meta concurrency 1"));
    started s = {.sleep_ms = 100};
    bg b;
    bg_start(&b, "q", &s, 4);
    wait_blocked(1);
    ln_job_spec specs[6];
    for (int i = 0; i < 6; i++) specs[i] = (ln_job_spec){"j", "{}", NULL};
    uint64_t t0 = now_ms();
    CHECK_EQ(ln_jobs_add_bulk(producer, "q", specs, 6, NULL, 0), 0);
    wait_started(&s, 6, 5 * 100 + PROMPT_MS); /* ideal: the 6th at 500 ms */
    fprintf(stderr, "6th of 6 jobs of 100 ms started after %llu ms, at most %d at once\n",
            (unsigned long long)(atomic_load(&s.at_ms) - t0), atomic_load(&s.most_running));
    CHECK_EQ(atomic_load(&s.most_running), 1);
    bg_stop(&b);
    ln_jobs_close(producer);
}

/* The queue's keys deleted while a worker holds a job (what BullMQ's
 * obliterate({force: true}) does): the refused completion writes nothing,
 * so no key of the queue comes back ('events', 'meta' did, by a 'drained'). */
TEST(refused_outcome_writes_nothing) {
    ln_jobs *producer = open_case("obl");
    started s = {.sleep_ms = 300};
    bg b;
    bg_start(&b, "q", &s, 1);
    add(producer, "q", 0);
    wait_started(&s, 1, PROMPT_MS);
    freeReplyObject(cmd("EVAL %s 0 %s",
                        "for _, k in ipairs(redis.call('KEYS', ARGV[1])) do "
                        "redis.call('DEL', k) end return 0",
                        "lwobl:q:*"));
    ln_worker_stats st = {0};
    uint64_t t0 = now_ms();
    while (st.stale == 0) { /* the completion, refused */
        CHECK(now_ms() - t0 < PROMPT_MS);
        ln_test_sleep_ms(10);
        ln_worker_get_stats(b.w, &st);
    }
    ln_test_sleep_ms(100); /* the worker's next steps and wait */
    redisReply *r = cmd("KEYS lwobl:q:*");
    for (size_t i = 0; i < r->elements; i++) fprintf(stderr, "left: %s\n", r->element[i]->str);
    CHECK_EQ(r->elements, 0);
    freeReplyObject(r);
    bg_stop(&b);
    r = cmd("KEYS lwobl:q:*");
    CHECK_EQ(r->elements, 0);
    freeReplyObject(r);
    ln_jobs_close(producer);
}

/* ------------------------------------------------ outages of a server */

/* A redis-server of the calling case alone on port p (the shared one
 * stays up for the other cases): its pid once it answers PING. */
static pid_t own_server(int p) {
    char ps[16];
    snprintf(ps, sizeof ps, "%d", p);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0) dup2(devnull, 1), dup2(devnull, 2);
        execlp("redis-server", "redis-server", "--port", ps, "--bind", "127.0.0.1", "--save", "",
               "--appendonly", "no", "--dir", "/tmp", (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 200; i++) {
        redisContext *c = redisConnect("127.0.0.1", p);
        int ok = 0;
        if (c && !c->err) {
            redisReply *r = redisCommand(c, "PING");
            ok = r && r->type == REDIS_REPLY_STATUS;
            if (r) freeReplyObject(r);
        }
        if (c) redisFree(c);
        if (ok) return pid;
        ln_test_sleep_ms(50);
    }
    CHECK(!"own redis-server did not start");
    return -1;
}

static void kill_own(pid_t pid) {
    kill(pid, SIGKILL);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
    }
}

typedef struct outage {
    int port;
    pid_t pid;
    char url[128];
    ln_jobs *jobs;
    ln_worker *w;
    pthread_t t;
    atomic_int done;
    int rc;
    started s;
} outage;

static void *outage_run(void *arg) {
    outage *o = arg;
    o->rc = ln_worker_run(o->w);
    atomic_store(&o->done, 1);
    return NULL;
}

/* A worker (lease lease_ms, store_retry_ms retry_ms) on a server of its
 * own, running on a thread. */
static void outage_start(outage *o, unsigned lease_ms, unsigned retry_ms) {
    memset(o, 0, sizeof *o);
    CHECK((o->port = free_port()) > 0);
    o->pid = own_server(o->port);
    snprintf(o->url, sizeof o->url, "redis://127.0.0.1:%d/0", o->port);
    CHECK_EQ(ln_jobs_open(&o->jobs, o->url), 0);
    ln_worker_opts wo;
    ln_worker_opts_init(&wo);
    wo.lease_ms = lease_ms;
    wo.store_retry_ms = retry_ms;
    wo.poll_ms = 50;
    CHECK_EQ(ln_worker_create(&o->w, o->jobs, "q", handler, &o->s, &wo), 0);
    CHECK_EQ(pthread_create(&o->t, NULL, outage_run, o), 0);
    add(o->jobs, "q", 0); /* it works before the outage */
    wait_started(&o->s, 1, PROMPT_MS);
}

/* The server is down for longer than the worker retries (store_retry_ms,
 * 1 s here; the default is 30 s): the run ends with the error, and the message says the worker
 * gave up, how long it tried, and the last failure, not a next attempt
 * that will never come. */
TEST(outage_longer_than_the_bound_gives_up) {
    outage o;
    outage_start(&o, 1000, 1000);
    kill_own(o.pid);
    uint64_t t0 = now_ms();
    while (!atomic_load(&o.done) && now_ms() - t0 < 15000) ln_test_sleep_ms(10);
    CHECK(atomic_load(&o.done));
    uint64_t took = now_ms() - t0;
    pthread_join(o.t, NULL);
    const char *msg = ln_jobs_errmsg(o.jobs);
    fprintf(stderr, "after %llu ms: %s: %s\n", (unsigned long long)took, ln_err_name(o.rc), msg);
    CHECK(o.rc == LN_EBACKEND);
    CHECK(took >= 900); /* it retried for the bound */
    CHECK(strstr(msg, "gave up after") != NULL);
    CHECK(strstr(msg, "1000 ms") != NULL);
    CHECK(strstr(msg, "next connection attempt") == NULL);
    CHECK(strstr(msg, "cannot connect to redis at 127.0.0.1") != NULL);
    ln_worker_destroy(o.w);
    ln_jobs_close(o.jobs);
}

/* A shorter outage is ridden out: the server comes back on its port
 * within store_retry_ms (longer than the lease here) and the same run
 * takes the next job. */
TEST(outage_within_the_bound_is_ridden_out) {
    outage o;
    outage_start(&o, 500, 4000);
    kill_own(o.pid);
    ln_test_sleep_ms(1500); /* three leases */
    CHECK(!atomic_load(&o.done));
    o.pid = own_server(o.port); /* empty: the first job is gone with it */
    ln_jobs *producer;
    CHECK_EQ(ln_jobs_open(&producer, o.url), 0);
    add(producer, "q", 0);
    wait_started(&o.s, 2, 10000);
    CHECK(!atomic_load(&o.done));
    ln_worker_stop(o.w);
    pthread_join(o.t, NULL);
    CHECK_EQ(o.rc, 0);
    ln_worker_destroy(o.w);
    ln_jobs_close(o.jobs);
    ln_jobs_close(producer);
    kill_own(o.pid);
}

/* One add is one round trip: MONITOR on the private server sees exactly
 * one top-level command per ln_jobs_add, an EVALSHA (the script's own
 * redis.call()s show as "[... lua]" and are not counted). */
TEST(add_is_one_evalsha) {
    ln_jobs *jobs = open_case("add");
    add(jobs, "q", 0); /* warm: the server has the script cached now */
    redisContext *mon = redisConnect("127.0.0.1", port);
    CHECK(mon && !mon->err);
    struct timeval tv = {5, 0};
    redisSetTimeout(mon, tv);
    redisReply *r = redisCommand(mon, "MONITOR");
    CHECK(r && r->type == REDIS_REPLY_STATUS);
    freeReplyObject(r);
    enum { N = 20 };
    for (int i = 0; i < N; i++) add(jobs, "q", 0);
    int evalsha = 0, other = 0;
    while (evalsha + other < N) {
        void *any = NULL;
        CHECK_EQ(redisGetReply(mon, &any), REDIS_OK); /* 5 s: a missing line fails */
        r = any;
        CHECK(r->type == REDIS_REPLY_STATUS);
        const char *src = strchr(r->str, '[');
        const char *cmd_name = strstr(r->str, "] \"");
        CHECK(src && cmd_name);
        if (!strstr(src, " lua]") || strstr(src, " lua]") > cmd_name) { /* top level */
            if (!strncasecmp(cmd_name + 3, "evalsha\"", 8))
                evalsha++;
            else {
                fprintf(stderr, "extra command: %s\n", r->str);
                other++;
            }
        }
        freeReplyObject(r);
    }
    redisFree(mon);
    CHECK_EQ(evalsha, N);
    CHECK_EQ(other, 0);
    ln_jobs_close(jobs);
}

int main(int argc, char **argv) {
    const char *env = getenv("LANES_TEST_REDIS_URL");
    if (!env || !*env) {
        printf("skipped [redis]: LANES_TEST_REDIS_URL not set\n");
        return 77;
    }
    if (start_server() != 0) {
        fprintf(stderr, "cannot start a private redis-server\n");
        stop_server();
        return 1;
    }
    int rc = ln_test_run(argc, argv,
                         (ln_test_case[]){TESTCASE(idle_worker_blocks_then_wakes),
                                          TESTCASE(delayed_job_wakes_when_due),
                                          TESTCASE(wakeup_passes_to_next_worker),
                                          TESTCASE(killed_wait_connection_no_wedge),
                                          TESTCASE(add_is_one_evalsha),
                                          TESTCASE(global_slot_freed_wakes_worker),
                                          TESTCASE(refused_outcome_writes_nothing),
                                          TESTCASE(outage_longer_than_the_bound_gives_up),
                                          TESTCASE(outage_within_the_bound_is_ridden_out),
                                          {0}});
    stop_server();
    return rc;
}
