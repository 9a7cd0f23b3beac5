/* conf_stale.c - ln_worker_stats.stale, the leases a worker lost. It does
 * not count a job its own handler moved to waiting-children
 * (ln_job_wait_children): that one is counted as waited, also when a
 * lease renewal (or a cancel poll) that finds it no longer held goes out
 * before its handler returns. And it counts a take at most once: a lease
 * lost while a renewal of it is in flight and the handler returns
 * meanwhile has both the renewal and the outcome refused (Redis, whose
 * worker keeps two steps in flight). That case takes the lock away
 * (another token, for 400 ms) and blocks the server with a script for
 * 250 ms, so the renewal waits in the server while the handler returns
 * and its outcome follows it. Redis only (the SQLite worker runs one step
 * at a time, so a renewal's answer always comes before the handler's
 * outcome is collected). */
#include "conf.h"

#include <pthread.h>
#include <stdlib.h>

#ifdef CONF_HAVE_HIREDIS
#include <hiredis/hiredis.h>

typedef struct steal {
    char host[128];
    int port;
    char lock_key[512];
    atomic_int runs;
} steal;

static redisContext *connect_to(const steal *s) {
    redisContext *r = redisConnect(s->host, s->port);
    if (r != NULL && r->err) {
        redisFree(r);
        r = NULL;
    }
    return r;
}

/* Busy for 250 ms in one script: the server answers nothing meanwhile. */
static void *block_server(void *arg) {
    redisContext *r = connect_to(arg);
    if (r == NULL) return NULL;
    freeReplyObject(redisCommand(r, "EVAL %s 0",
                                 "local t = redis.call('TIME') "
                                 "local e = t[1] * 1000000 + t[2] + 250000 "
                                 "repeat t = redis.call('TIME') until "
                                 "t[1] * 1000000 + t[2] >= e return 1"));
    redisFree(r);
    return NULL;
}

static int steal_then_return(ln_job *job, void *ctx) {
    steal *s = ctx;
    if (atomic_fetch_add(&s->runs, 1) > 0) return 0;
    redisContext *r = connect_to(s);
    if (r == NULL) return 0;
    freeReplyObject(redisCommand(r, "SET %s other PX 400", s->lock_key));
    redisFree(r);
    (void)job;
    pthread_t t;
    if (pthread_create(&t, NULL, block_server, s) != 0) return 0;
    ln_test_sleep_ms(120); /* a renewal (every 50 ms) is stuck meanwhile */
    pthread_detach(t);
    return 0;
}

void case_stale_once_per_take(conf_ctx *c) {
    const char *base = getenv("LANES_TEST_REDIS_URL");
    const char *pre = strstr(c->url, "prefix=");
    if (strcmp(c->store, "redis") != 0 || base == NULL || pre == NULL || strchr(pre, '{') != NULL)
        return; /* plain Redis only: the lock key's name, one server to block */
    steal s = {.port = 6379};
    const char *h = strstr(base, "://");
    h = h != NULL ? h + 3 : base;
    size_t hl = strcspn(h, ":/?");
    snprintf(s.host, sizeof s.host, "%.*s", (int)hl, h);
    if (h[hl] == ':') s.port = atoi(h + hl + 1);
    snprintf(s.lock_key, sizeof s.lock_key, "%.*s:%s:x:lock", (int)strcspn(pre + 7, "&"), pre + 7,
             c->queue);
    conf_add_id(c, c->queue, "x", 0, 0, 0);
    ln_worker_opts o;
    conf_worker_opts(&o);
    o.concurrency = 1;
    o.lease_ms = 100;
    o.stalled_interval_ms = 100;
    ln_worker_stats st = conf_run(c, c->queue, steal_then_return, &s, &o);
    CHECK_EQ(atomic_load(&s.runs), 2); /* stolen, then recovered and run again */
    CHECK_EQ(st.stale, 1);
    CHECK_EQ(st.completed, 1);
}
#else
void case_stale_once_per_take(conf_ctx *c) {
    (void)c;
}
#endif

typedef struct waiter {
    conf_ctx *c;
    const char *kids;
    int wait_rc, saw_cancel;
} waiter;

/* "p": add a child in another queue (so it stays pending), wait for it,
 * then return only once the worker, renewing the lease, found the job no
 * longer held (ln_job_canceled), at most 5 s. */
static int wait_then_hold(ln_job *job, void *ctx) {
    waiter *s = ctx;
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.parent_queue = ln_job_queue(job);
    o.parent_id = ln_job_id(job);
    if (ln_jobs_add(s->c->jobs, s->kids, "k", "1", &o, NULL, 0) != 0)
        return ln_job_fail(job, "add");
    s->wait_rc = ln_job_wait_children(job);
    int64_t end = conf_deadline(5000);
    while (!ln_job_canceled(job) && conf_now_ms() < end) ln_test_sleep_ms(5);
    s->saw_cancel = ln_job_canceled(job);
    return 0;
}

void case_stale_not_for_waited(conf_ctx *c) {
    waiter s = {.c = c, .kids = conf_queue(c, "kids")};
    conf_add(c, c->queue, "p", NULL, NULL, NULL);
    ln_worker_opts o;
    conf_worker_opts(&o);
    o.lease_ms = 200; /* renewed every ~100 ms while the handler runs */
    ln_worker_stats st = conf_run(c, c->queue, wait_then_hold, &s, &o);
    CHECK_EQ(s.wait_rc, 1);
    CHECK_EQ(s.saw_cancel, 1); /* a renewal or poll found it moved */
    CHECK_EQ(st.waited, 1);
    CHECK_EQ(st.stale, 0);
    CHECK_EQ(st.completed + st.failed + st.retried, 0);
    CHECK_EQ(conf_total(c, s.kids), 1);
}
