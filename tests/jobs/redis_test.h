/* redis_test.h - helpers shared by the tests/redis/test_redis_*.c programs that
 * drive the Redis backend through the public API and look at the keys it
 * stored: a store with a key prefix of its own per case (open_case, done),
 * a raw connection (cmd, hget, zscore, the events), a worker run.
 *
 * A program's main is redis_test_main (base_url: LANES_TEST_REDIS_URL). */
#ifndef LN_REDIS_TEST_H
#define LN_REDIS_TEST_H

#include "testutil.h"

#include <lanes.h>
#include <lanes/jobs.h>

#include <hiredis/hiredis.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *base_url;

static inline uint64_t now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}
static char url[512]; /* base_url?prefix=<this case's prefix> */
static char prefix[64];
static redisContext *raw; /* direct connection for layout checks */

/* Open the store with a prefix of its own for the calling case. */
static inline ln_jobs *open_case(const char *name) {
    snprintf(prefix, sizeof prefix, "lt%d%s", (int)getpid(), name);
    snprintf(url, sizeof url, "%s?prefix=%s", base_url, prefix);
    ln_jobs *jobs = NULL;
    char err[512];
    int rc = ln_jobs_open_ex(&jobs, url, NULL, err, sizeof err);
    if (rc) fprintf(stderr, "open %s: %s\n", url, err);
    CHECK_EQ(rc, 0);
    char host[256] = "127.0.0.1";
    int port = 6379;
    sscanf(base_url, "redis://%255[^:/]:%d", host, &port);
    raw = redisConnect(host, port);
    CHECK(raw && !raw->err);
    int db = 0;
    const char *slash = strrchr(base_url + 8, '/');
    if (slash) db = atoi(slash + 1);
    redisReply *r = redisCommand(raw, "SELECT %d", db);
    CHECK(r && r->type != REDIS_REPLY_ERROR);
    freeReplyObject(r);
    return jobs;
}

/* A raw command whose reply the caller frees. */
static inline redisReply *cmd(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    redisReply *r = redisvCommand(raw, fmt, ap);
    va_end(ap);
    CHECK(r != NULL);
    CHECK(r->type != REDIS_REPLY_ERROR);
    return r;
}

static inline long long cmd_int(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    redisReply *r = redisvCommand(raw, fmt, ap);
    va_end(ap);
    CHECK(r && r->type == REDIS_REPLY_INTEGER);
    long long v = r->integer;
    freeReplyObject(r);
    return v;
}

/* HGET of <prefix>:<queue>:<id> as a string (caller frees), NULL if none. */
static inline char *hget(const char *queue, const char *id, const char *field) {
    redisReply *r = cmd("HGET %s:%s:%s %s", prefix, queue, id, field);
    char *s = r->type == REDIS_REPLY_STRING ? strdup(r->str) : NULL;
    freeReplyObject(r);
    return s;
}

static inline long long hget_ll(const char *queue, const char *id, const char *field) {
    char *s = hget(queue, id, field);
    long long v = s ? atoll(s) : -1;
    free(s);
    return v;
}

static inline double zscore(const char *queue, const char *set, const char *id) {
    redisReply *r = cmd("ZSCORE %s:%s:%s %s", prefix, queue, set, id);
    double v = r->type == REDIS_REPLY_STRING ? strtod(r->str, NULL) : -1;
    freeReplyObject(r);
    return v;
}

/* The event names of the queue's stream, space-separated, in order. */
static inline void event_names(const char *queue, char *out, size_t size) {
    redisReply *r = cmd("XRANGE %s:%s:events - +", prefix, queue);
    out[0] = '\0';
    for (size_t i = 0; i < r->elements; i++) {
        redisReply *fields = r->element[i]->element[1];
        CHECK(!strcmp(fields->element[0]->str, "event"));
        size_t n = strlen(out);
        snprintf(out + n, size - n, "%s%s", n ? " " : "", fields->element[1]->str);
    }
    freeReplyObject(r);
}

static inline int has_event(const char *queue, const char *name, const char *id) {
    redisReply *r = cmd("XRANGE %s:%s:events - +", prefix, queue);
    int found = 0;
    for (size_t i = 0; i < r->elements && !found; i++) {
        redisReply *f = r->element[i]->element[1];
        if (strcmp(f->element[1]->str, name)) continue;
        for (size_t k = 2; k + 1 < f->elements; k += 2)
            if (!strcmp(f->element[k]->str, "jobId") && !strcmp(f->element[k + 1]->str, id))
                found = 1;
    }
    freeReplyObject(r);
    return found;
}

static inline void add(ln_jobs *jobs, const char *queue, const char *name, const char *data,
                       const ln_job_opts *o, char *id) {
    char buf[LN_JOB_ID_MAX];
    int rc = ln_jobs_add(jobs, queue, name, data, o, id ? id : buf, LN_JOB_ID_MAX);
    if (rc) fprintf(stderr, "add: %s\n", ln_jobs_errmsg(jobs));
    CHECK_EQ(rc, 0);
}

static inline void done(ln_jobs *jobs) {
    redisReply *r = redisCommand(raw, "EVAL %s 0 %s:*",
                                 "for _, k in ipairs(redis.call('KEYS', ARGV[1])) do "
                                 "redis.call('DEL', k) end return 0",
                                 prefix);
    freeReplyObject(r);
    redisFree(raw);
    ln_jobs_close(jobs);
}

typedef struct handler_ctx {
    redisContext *raw; /* for the lock-stealing case, else NULL */
    const char *queue;
    int steal_once; /* delete our own lock on the first attempt */
} handler_ctx;

/* "ok" -> {"ok":<data>}; "flaky" fails attempts 1 and 2; "bad" fails;
 * "steal" (with steal_once) loses its lock on attempt 1, then completes. */
static inline int handler(ln_job *job, void *vctx) {
    handler_ctx *ctx = vctx;
    const char *name = ln_job_name(job);
    if (!strcmp(name, "flaky") && ln_job_attempt(job) <= 2) return ln_job_fail(job, "flaky");
    if (!strcmp(name, "bad")) return ln_job_fail(job, "bad \"input\"");
    if (!strcmp(name, "steal") && ctx && ctx->steal_once && ln_job_attempt(job) == 1) {
        redisReply *r =
            redisCommand(ctx->raw, "DEL %s:%s:%s:lock", prefix, ctx->queue, ln_job_id(job));
        freeReplyObject(r);
    }
    if (!strcmp(name, "progress")) {
        CHECK_EQ(ln_job_progress(job, "{\"pct\":50}"), 0);
        CHECK_EQ(ln_job_log(job, "line one"), 0);
        CHECK_EQ(ln_job_log(job, "line two"), 0);
    }
    char buf[256];
    snprintf(buf, sizeof buf, "{\"ok\":%s}", ln_job_data(job));
    return ln_job_set_result(job, buf);
}

static inline ln_worker_stats run_worker(ln_jobs *jobs, const char *queue, handler_ctx *ctx,
                                         unsigned lease_ms, unsigned concurrency) {
    ln_worker_opts o;
    ln_worker_opts_init(&o);
    o.exit_when_empty = 1;
    o.concurrency = concurrency;
    if (lease_ms) {
        o.lease_ms = lease_ms;
        o.stalled_interval_ms = lease_ms;
    }
    ln_worker *w;
    CHECK_EQ(ln_worker_create(&w, jobs, queue, handler, ctx, &o), 0);
    int rc = ln_worker_run(w);
    if (rc) fprintf(stderr, "worker: %s\n", ln_jobs_errmsg(jobs));
    CHECK_EQ(rc, 0);
    ln_worker_stats st;
    ln_worker_get_stats(w, &st);
    ln_worker_destroy(w);
    return st;
}

/* A worker run on a thread of its own (pthread_create(..., bg_run, &b)). */
typedef struct bg_worker {
    ln_worker *w;
    int rc;
} bg_worker;

static inline void *bg_run(void *arg) {
    bg_worker *b = arg;
    b->rc = ln_worker_run(b->w);
    return NULL;
}

/* A program's main: skipped (77) without LANES_TEST_REDIS_URL, else runs
 * cases against it. */
static inline int redis_test_main(int argc, char **argv, const ln_test_case *cases) {
    base_url = getenv("LANES_TEST_REDIS_URL");
    if (!base_url || !*base_url) {
        printf("skipped [redis]: LANES_TEST_REDIS_URL not set\n");
        return 77;
    }
    return ln_test_run(argc, argv, cases);
}

#endif
