/* replicas.c - WAIT for replicas after a write (redis_replicas.h). */
#include "redis_replicas.h"

#include "internal.h"
#include "job_record.h"

#include <stdio.h>

#define WAIT_TIMEOUT_DEFAULT_MS 1000

int ln__redis_wait_settle(ln__redis_cfg *cfg, const ln_jobs_opts *opts, char *err, size_t size) {
    if (opts != NULL && !cfg->wait_set) cfg->wait_replicas = opts->wait_replicas;
    if (opts != NULL && cfg->wait_timeout_ms == 0) cfg->wait_timeout_ms = opts->wait_timeout_ms;
    if (cfg->wait_timeout_ms == 0) cfg->wait_timeout_ms = WAIT_TIMEOUT_DEFAULT_MS;
    if (cfg->wait_replicas > LN__REDIS_WAIT_REPLICAS_MAX) {
        snprintf(err, size, "wait_replicas must be 0..%d", LN__REDIS_WAIT_REPLICAS_MAX);
        return LN_EINVAL;
    }
    if (cfg->wait_replicas > 0 && cfg->wait_timeout_ms >= cfg->timeout_ms) {
        snprintf(err, size,
                 "wait_timeout_ms (%u) must be below the reply timeout timeout_ms (%u): a "
                 "longer WAIT would be taken for a lost connection",
                 cfg->wait_timeout_ms, cfg->timeout_ms);
        return LN_EINVAL;
    }
    return 0;
}

int ln__redis_wait_append(redisContext *ctx, const ln__redis_cfg *cfg) {
    char n[16], ms[16];
    snprintf(n, sizeof n, "%u", cfg->wait_replicas);
    snprintf(ms, sizeof ms, "%u", cfg->wait_timeout_ms);
    const char *argv[] = {"WAIT", n, ms};
    return redisAppendCommandArgv(ctx, 3, argv, NULL) == REDIS_OK ? 0 : LN_ENOMEM;
}

int ln__redis_wait_enough(const redisReply *r, const ln__redis_cfg *cfg) {
    return r != NULL && r->type == REDIS_REPLY_INTEGER &&
           r->integer >= (long long)cfg->wait_replicas;
}

int ln__redis_wait_replicas(ln__redis_conn *c, const char *what) {
    const ln__redis_cfg *cfg = c->cfg;
    if (cfg->wait_replicas == 0) return 0;
    redisContext *ctx = c->ctx;
    if (ctx == NULL) {
        snprintf(c->err, c->err_size, "%s the connection that made the write was lost before WAIT",
                 what);
        return LN_EIO;
    }
    if (ln__redis_wait_append(ctx, cfg) != 0) {
        snprintf(c->err, c->err_size, "out of memory");
        return LN_ENOMEM;
    }
    int done = 0;
    void *any = NULL;
    while (!done)
        if (ln__redis_write(ctx, &done) != REDIS_OK) break;
    if (!done || redisGetReply(ctx, &any) != REDIS_OK || any == NULL) {
        snprintf(c->err, c->err_size, "%s the connection was lost during WAIT (%s)", what,
                 ctx->errstr);
        ln__redis_disconnect(c);
        return LN_EIO;
    }
    redisReply *r = any;
    int rc = 0;
    if (r->type == REDIS_REPLY_ERROR)
        snprintf(c->err, c->err_size, "%s WAIT failed: %s", what, r->str);
    else if (!ln__redis_wait_enough(r, cfg))
        snprintf(c->err, c->err_size,
                 "%s WAIT reached %lld of %u replicas within %u ms (wait_replicas): it may be "
                 "lost if the primary fails now",
                 what, r->type == REDIS_REPLY_INTEGER ? r->integer : 0LL, cfg->wait_replicas,
                 cfg->wait_timeout_ms);
    if (r->type == REDIS_REPLY_ERROR || !ln__redis_wait_enough(r, cfg)) rc = LN_EIO;
    freeReplyObject(r);
    return rc;
}

int ln__redis_wait_added(ln__redis_conn *c, ln__jobs_be *be, const ln__job_new *first, size_t n) {
    if (c->cfg->wait_replicas == 0) return 0;
    char what[160];
    const char *id = first->id != NULL ? first->id : "?";
    if (n == 1)
        snprintf(what, sizeof what, "job %.64s was added on the primary, but", id);
    else
        snprintf(what, sizeof what, "%zu jobs (the first %.64s) were added on the primary, but", n,
                 id);
    int rc = ln__redis_wait_replicas(c, what);
    if (rc == 0) return 0;
    char msg[sizeof what + 160]; /* c->err may be be's own buffer */
    snprintf(msg, sizeof msg, "%s", c->err);
    return ln__jobs_be_err(be, rc, "%s", msg);
}

void ln__redis_wait_step(ln__redis_conn *c, ln__jobs_step *st) {
    if (c->cfg->wait_replicas == 0 || st->ndone == 0) return;
    if (ln__redis_wait_replicas(c, "a step's outcomes are on the primary, but") != 0)
        st->unreplicated = st->ndone;
}
