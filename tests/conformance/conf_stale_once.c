/* conf_stale_once.c - ln_worker_stats.stale counts a take at most once:
 * a lease lost while a renewal of it is in flight and the handler returns
 * meanwhile has both the renewal and the outcome refused (Redis, whose
 * worker keeps two steps in flight). The case takes the lock away
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
