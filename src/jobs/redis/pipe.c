/* pipe.c - pipelined worker steps of the Redis store: the worker
 * sends step k+1 (the outcomes that arrived meanwhile, more takes) before
 * it reads the reply of step k, so Redis runs one step while the worker
 * starts the jobs of the previous one, instead of idling for a round trip.
 *
 * DESIGN
 * A pipe has a connection of its own, named as BullMQ names a worker's
 * (workers.c: dashboards list the run by it), that carries only
 * EVALSHA step.lua, at most
 * LN__PIPE_DEPTH in flight. Redis runs commands of one connection in
 * order, so steps apply in the order sent, each one atomic script. send
 * appends the command and writes it; recv reads the oldest reply with the
 * connection's reply timeout. Lock tokens are made at send and kept with
 * the step (a FIFO of LN__PIPE_DEPTH) until its reply is parsed.
 *
 * Failures: an I/O error or timeout drops the connection; the step being
 * read and every later one in flight then fail (their replies are lost),
 * and the next send reconnects with conn.c's backoff. NOSCRIPT (a
 * restarted server, SCRIPT FLUSH) fails the steps in flight without
 * running them, and the next send uses EVAL with the body, which caches
 * the script again.
 *
 * Threads: one dispatcher at a time (backend.h); cfg is read-only.
 */
#include "redis_int.h"

#include "internal.h"
#include "redis_replicas.h"
#include "redis_scripts.h"
#include "redis_step.h"
#include "redis_workers.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

typedef struct redis_pipe {
    ln__jobs_pipe base;
    ln__redis_conn conn;
    char *key;    /* "<prefix>:<queue>:" */
    char *worker; /* processedBy */
    char token_base[33];
    uint64_t token_seq;
    ln__redis_token *tokens[LN__PIPE_DEPTH]; /* of each step in flight */
    unsigned char waits[LN__PIPE_DEPTH];     /* a WAIT follows that step */
    unsigned head, count;                    /* FIFO of steps in flight */
    unsigned lost;                           /* oldest 'lost' in flight failed */
    redisReply *ready;                       /* the oldest step's reply, read by pipe_poll */
    int use_eval;                            /* NOSCRIPT seen: send the body once */
} redis_pipe;

static redis_pipe *rp(ln__jobs_pipe *p) {
    return (redis_pipe *)p;
}

static const ln__pipe_methods pipe_methods;
static void pipe_close(ln__jobs_pipe *base);

/* A pipe for the queue whose base is base; 'worker' is stored as the
 * jobs' processedBy. cfg is borrowed; the strings are copied. 0,
 * LN_ENOMEM, or LN_EBACKEND (no random bytes for the lock tokens). */
static int make_pipe(const ln__redis_cfg *cfg, const char *base, const char *worker,
                     ln__jobs_pipe **out) {
    redis_pipe *p = ln__calloc(1, sizeof *p);
    if (!p) return LN_ENOMEM;
    p->base.methods = &pipe_methods;
    p->conn.cfg = cfg;
    p->conn.err = p->base.errmsg;
    p->conn.err_size = sizeof p->base.errmsg;
    p->key = ln__strdup(base);
    p->worker = ln__strdup(worker);
    p->conn.name = ln__redis_worker_name(cfg->prefix, base, worker); /* a worker's, listed */
    if (!p->key || !p->worker || !p->conn.name) {
        pipe_close(&p->base);
        return LN_ENOMEM;
    }
    unsigned char rnd[16];
    if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd) {
        pipe_close(&p->base);
        return LN_EBACKEND;
    }
    for (int i = 0; i < 16; i++) snprintf(p->token_base + 2 * i, 3, "%02x", rnd[i]);
    ln__redis_route(&p->conn, base); /* Redis Cluster: the slot's owner */
    *out = &p->base;
    return 0;
}

int ln__redis_pipe_open(ln__jobs_be *be, const char *queue, ln__jobs_pipe **out) {
    ln__redis_be *r = ln__redis_at(be, queue);
    int rc = make_pipe(&r->cfg, r->key, r->worker, out);
    if (rc < 0) return ln__jobs_be_err(be, rc, "cannot make a step pipe: %s", ln_strerror(rc));
    return 0;
}

/* The connection is gone: every step in flight has lost its reply. */
static void drop(redis_pipe *p) {
    ln__redis_disconnect(&p->conn);
    p->lost = p->count;
    if (p->ready) { /* it belongs to the oldest, which fails now too */
        freeReplyObject(p->ready);
        p->ready = NULL;
    }
}

static int pipe_send(ln__jobs_pipe *base, ln__jobs_step *st) {
    redis_pipe *p = rp(base);
    if (p->count == LN__PIPE_DEPTH) return LN_EINVAL; /* the caller's bug */
    if (p->lost) { /* replies of the old connection are still owed */
        snprintf(p->base.errmsg, sizeof p->base.errmsg, "redis connection lost");
        return LN_EBACKEND;
    }
    int rc = ln__redis_connect(&p->conn);
    if (rc) return ln__redis_conn_lost(rc) ? LN_EBACKEND : rc;
    ln__redis_token *tokens = st->want ? ln__malloc(st->want * sizeof *tokens) : NULL;
    if (st->want && !tokens) {
        snprintf(p->base.errmsg, sizeof p->base.errmsg, "out of memory");
        return LN_ENOMEM;
    }
    ln__redis_step_tokens(p->token_base, &p->token_seq, tokens, st->want);
    const ln__redis_script *s = &ln__redis_scripts[LN__RS_STEP];
    ln__redis_args a = {0};
    ln__redis_args_str(&a, p->use_eval ? "EVAL" : "EVALSHA");
    ln__redis_args_str(&a, p->use_eval ? s->body : s->sha1);
    ln__redis_args_str(&a, "1");
    ln__redis_args_str(&a, p->key);
    ln__redis_step_args(&a, st, p->worker, tokens);
    redisContext *ctx = p->conn.ctx;
    rc = a.oom                                                           ? LN_ENOMEM
         : redisAppendCommandArgv(ctx, (int)a.n, a.v, a.len) == REDIS_OK ? 0
                                                                         : LN_ENOMEM;
    ln__redis_args_free(&a);
    /* wait_replicas: a step that records outcomes is followed by WAIT on
     * this connection (redis_replicas.h), its reply read with the step's */
    int waits = rc == 0 && p->conn.cfg->wait_replicas > 0 && st->ndone > 0;
    if (waits && ln__redis_wait_append(ctx, p->conn.cfg) != 0) {
        drop(p); /* the step is buffered without its WAIT: start over */
        rc = LN_ENOMEM;
    }
    if (rc) { /* hiredis appends a command whole or not at all */
        snprintf(p->base.errmsg, sizeof p->base.errmsg, "out of memory");
        ln__free(tokens);
        return rc;
    }
    int done = 0;
    while (!done) {
        if (ln__redis_write(ctx, &done) != REDIS_OK) {
            snprintf(p->base.errmsg, sizeof p->base.errmsg, "redis connection lost (%s)",
                     ctx->errstr);
            drop(p); /* the steps in flight die with it */
            ln__free(tokens);
            return LN_EBACKEND;
        }
    }
    p->use_eval = 0; /* EVAL caches it for the steps after this one */
    p->tokens[(p->head + p->count) % LN__PIPE_DEPTH] = tokens;
    p->waits[(p->head + p->count) % LN__PIPE_DEPTH] = (unsigned char)waits;
    p->count++;
    return 0;
}

/* An error reply -> a code (conn.c's mapping). */
static int reply_code(redis_pipe *p, const char *msg) {
    snprintf(p->base.errmsg, sizeof p->base.errmsg, "redis: %s", msg);
    if (!strncmp(msg, "NOSCRIPT", 8)) {
        p->use_eval = 1;
        return LN_EBACKEND; /* not run: the caller records again */
    }
    if (!strncmp(msg, "OOM", 3)) return LN_ENOSPC;
    if (!strncmp(msg, "NOAUTH", 6) || !strncmp(msg, "WRONGPASS", 9) || !strncmp(msg, "NOPERM", 6))
        return LN_EACCES;
    return LN_EBACKEND;
}

/* The reply of the WAIT after the step just read (wait_replicas): the
 * step stands whatever it says; outcomes it did not confirm are counted
 * in st->unreplicated. A lost connection fails the steps after it. */
static void recv_wait(redis_pipe *p, ln__jobs_step *st, int step_rc) {
    void *any = NULL;
    if (p->conn.ctx == NULL) { /* the step's error reply dropped it */
        if (step_rc == 0) st->unreplicated = st->ndone;
        return;
    }
    if (redisGetReply(p->conn.ctx, &any) != REDIS_OK || !any) {
        drop(p);
        if (step_rc == 0) st->unreplicated = st->ndone;
        return;
    }
    if (step_rc == 0 && !ln__redis_wait_enough(any, p->conn.cfg)) st->unreplicated = st->ndone;
    freeReplyObject(any);
}

static int pipe_recv(ln__jobs_pipe *base, ln__jobs_step *st) {
    redis_pipe *p = rp(base);
    st->ntaken = 0;
    st->next_due_ms = -1;
    st->unreplicated = 0;
    if (p->count == 0) return LN_EINVAL;
    ln__redis_token *tokens = p->tokens[p->head];
    int waits = p->waits[p->head];
    p->tokens[p->head] = NULL;
    p->head = (p->head + 1) % LN__PIPE_DEPTH;
    p->count--;
    int rc;
    if (p->lost) {
        p->lost--;
        snprintf(p->base.errmsg, sizeof p->base.errmsg, "redis connection lost");
        rc = LN_EBACKEND;
    } else {
        void *any = p->ready;
        p->ready = NULL;
        if (!any && (redisGetReply(p->conn.ctx, &any) != REDIS_OK || !any)) {
            int timed_out =
                p->conn.ctx->err == REDIS_ERR_IO && (errno == EAGAIN || errno == EWOULDBLOCK);
            snprintf(p->base.errmsg, sizeof p->base.errmsg, "redis connection lost (%s)",
                     timed_out ? "no reply before timeout_ms" : p->conn.ctx->errstr);
            drop(p);
            rc = LN_EBACKEND;
        } else {
            redisReply *r = any;
            /* Redis Cluster: moved, or failing over: re-read the map */
            if (r->type == REDIS_REPLY_ERROR && ln__redis_cluster_error(&p->conn, r->str)) drop(p);
            rc = r->type == REDIS_REPLY_ERROR
                     ? reply_code(p, r->str)
                     : ln__redis_step_reply(r, st, tokens, p->base.errmsg, sizeof p->base.errmsg);
            freeReplyObject(r);
            if (waits) recv_wait(p, st, rc);
        }
    }
    ln__free(tokens);
    return rc;
}

static int pipe_poll(ln__jobs_pipe *base, int *fd) {
    redis_pipe *p = rp(base);
    if (p->count == 0) return LN_EINVAL;
    if (p->lost || p->ready) return 1;
    void *any = NULL; /* a reply read along with the previous one? */
    if (redisGetReplyFromReader(p->conn.ctx, &any) != REDIS_OK) return 1; /* recv says */
    if (any) {
        p->ready = any;
        return 1;
    }
    *fd = p->conn.ctx->fd;
    return 0;
}

static void pipe_close(ln__jobs_pipe *base) {
    if (!base) return;
    redis_pipe *p = rp(base);
    if (p->ready) freeReplyObject(p->ready);
    ln__redis_conn_free(&p->conn);
    for (unsigned i = 0; i < LN__PIPE_DEPTH; i++) ln__free(p->tokens[i]);
    ln__free(p->key);
    ln__free(p->worker);
    ln__free(p);
}

static const ln__pipe_methods pipe_methods = {
    .version = LN__PIPE_METHODS_VERSION,
    .depth = LN__PIPE_DEPTH,
    .send = pipe_send,
    .recv = pipe_recv,
    .poll = pipe_poll,
    .close = pipe_close,
};
