/* wait.c - the blocking wait of the Redis store: an idle worker
 * sleeps in BZPOPMIN on BullMQ's marker key, as BullMQ 6.7's Node workers
 * do, so a job added by either side wakes it at once and an idle worker
 * sends one command per timeout instead of a step every poll_ms.
 *
 * DESIGN
 * The marker is a sorted set of at most two members (docs/internals/
 * redis-layout.md): "0" with score 0 means "a job may be ready", "1" scored with the
 * due time (ms, server clock) of the earliest delayed job. BZPOPMIN hands
 * the lowest one to ONE blocked client; whoever takes jobs and leaves some
 * behind writes "0" again (take_jobs in lib.lua), which wakes the next
 * worker, Node or C. A popped score in the future means "nothing to take
 * before then": the caller sleeps until that time (read with the host
 * clock, as BullMQ does with Date.now(); the step it then makes returns
 * the exact delay from the server's clock).
 *
 * The wait runs on a connection of its own (never the one the instance's
 * ops use), driven without blocking: arm appends the command and writes
 * it, the caller poll()s the socket together with its eventfd, and read
 * consumes what arrived. So the worker's dispatcher keeps serving handler
 * completions and lease renewals while the wait is armed. Nothing here
 * blocks for long: the command's own timeout ends every wait, and a
 * connection with no answer by then plus a grace (a half-open socket, a
 * frozen server) is dropped by the caller through cancel. A lost
 * connection (CLIENT KILL, restart) shows up as EOF on the socket; the
 * next arm reconnects, with conn.c's backoff while the server is
 * unreachable, and an error reply (e.g. an ACL refusing BZPOPMIN) makes
 * arm refuse for a second, so the caller falls back to stepping every
 * poll_ms instead of spinning.
 *
 * Threads: one dispatcher uses a wait at a time (backend.h); the wait
 * shares only the instance's configuration, which is read-only once open.
 */
#include "redis_int.h"

#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define GRACE_MAX_MS 1000   /* answer expected by timeout + this */
#define ERROR_HOLD_MS 1000  /* no new wait this long after an error reply */
#define MARKER_KEY_MAX 1024 /* prefix (< 256) + queue (< 256) + ":marker" */

typedef struct redis_wait {
    ln__jobs_wait base;
    ln__redis_conn conn; /* its own connection; cfg borrowed */
    char key[MARKER_KEY_MAX];
    int armed;              /* BZPOPMIN sent, no reply read yet */
    uint64_t hold_until_ns; /* arm refuses before this (monotonic) */
    char errmsg[256];       /* where conn describes failures */
} redis_wait;

static redis_wait *rw(ln__jobs_wait *w) {
    return (redis_wait *)w;
}

static const ln__wait_methods wait_methods;

int ln__redis_wait_open(ln__jobs_be *be, const char *queue, ln__jobs_wait **out) {
    ln__redis_be *r = ln__redis_at(be, queue);
    const char *base = r->key;
    redis_wait *w = ln__calloc(1, sizeof *w);
    if (!w) return ln__jobs_be_err(be, LN_ENOMEM, "out of memory");
    w->base.methods = &wait_methods;
    w->conn.cfg = &r->cfg; /* the instance outlives every wait */
    w->conn.err = w->errmsg;
    w->conn.err_size = sizeof w->errmsg;
    snprintf(w->key, sizeof w->key, "%smarker", base);
    ln__redis_route(&w->conn, base); /* Redis Cluster: the slot's owner */
    *out = &w->base;
    return 0;
}

static void drop(redis_wait *w) {
    ln__redis_disconnect(&w->conn);
    w->armed = 0;
}

static int wait_arm(ln__jobs_wait *base, int64_t timeout_ms, int *fd, int64_t *limit_ms) {
    redis_wait *w = rw(base);
    if (w->armed) return LN_EINVAL; /* the caller's bug: one wait at a time */
    if (ln__now_ns() < w->hold_until_ns) return LN_EBACKEND;
    int rc = ln__redis_connect(&w->conn);
    if (rc) return rc;
    if (timeout_ms < 1) timeout_ms = 1; /* 0 would block forever */
    char secs[32];
    snprintf(secs, sizeof secs, "%lld.%03lld", (long long)(timeout_ms / 1000),
             (long long)(timeout_ms % 1000));
    const char *argv[3] = {"BZPOPMIN", w->key, secs};
    redisContext *ctx = w->conn.ctx;
    if (redisAppendCommandArgv(ctx, 3, argv, NULL) != REDIS_OK) {
        drop(w);
        return LN_ENOMEM;
    }
    int done = 0;
    while (!done) { /* a few dozen bytes: one write, bounded by the send timeout */
        if (ln__redis_write(ctx, &done) != REDIS_OK) {
            snprintf(w->errmsg, sizeof w->errmsg, "redis connection lost (%s)", ctx->errstr);
            drop(w);
            return LN_EIO;
        }
    }
    w->armed = 1;
    unsigned grace =
        w->conn.cfg->timeout_ms < GRACE_MAX_MS ? w->conn.cfg->timeout_ms : GRACE_MAX_MS;
    *fd = ctx->fd;
    *limit_ms = timeout_ms + grace;
    return 0;
}

static double realtime_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (double)t.tv_sec * 1000.0 + (double)t.tv_nsec / 1e6;
}

static int wait_read(ln__jobs_wait *base, int64_t *due_in_ms) {
    redis_wait *w = rw(base);
    *due_in_ms = 0;
    if (!w->armed) return LN_EINVAL;
    redisContext *ctx = w->conn.ctx;
    void *any = NULL;
    if (redisBufferRead(ctx) != REDIS_OK || redisGetReplyFromReader(ctx, &any) != REDIS_OK) {
        snprintf(w->errmsg, sizeof w->errmsg, "redis connection lost (%s)", ctx->errstr);
        drop(w);
        return LN_EIO;
    }
    if (!any) return LN__WAIT_PENDING; /* part of the reply only */
    redisReply *r = any;
    w->armed = 0;
    int rc;
    if (r->type == REDIS_REPLY_NIL) {
        rc = LN__WAIT_TIMEOUT;
    } else if (r->type == REDIS_REPLY_ARRAY && r->elements == 3 &&
               r->element[2]->type == REDIS_REPLY_STRING) {
        /* [key, member, score]: "0" scores 0 (now), "1" the due time. */
        double due = strtod(r->element[2]->str, NULL) - realtime_ms();
        *due_in_ms = due > 0 ? (int64_t)due + 1 : 0;
        rc = LN__WAIT_WOKEN;
    } else {
        snprintf(w->errmsg, sizeof w->errmsg, "redis: %s",
                 r->type == REDIS_REPLY_ERROR ? r->str : "unexpected reply to BZPOPMIN");
        w->hold_until_ns = ln__now_ns() + (uint64_t)ERROR_HOLD_MS * 1000000u;
        drop(w); /* e.g. LOADING after a restart: start afresh */
        rc = LN_EBACKEND;
    }
    freeReplyObject(r);
    return rc;
}

static void wait_cancel(ln__jobs_wait *base) {
    redis_wait *w = rw(base);
    if (w->armed) drop(w);
}

static void wait_close(ln__jobs_wait *base) {
    if (!base) return;
    drop(rw(base));
    ln__redis_conn_free(&rw(base)->conn);
    ln__free(base);
}

static const ln__wait_methods wait_methods = {
    .version = LN__WAIT_METHODS_VERSION,
    .arm = wait_arm,
    .read = wait_read,
    .cancel = wait_cancel,
    .close = wait_close,
};
