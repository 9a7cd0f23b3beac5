/* conn.c - connections of the Redis store: URL, connect, timeouts,
 * reconnect, embedded scripts (see redis_conn.h). */
#include "redis_conn.h"

#include "internal.h"
#include "redis_cluster.h"
#include "redis_scripts.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/time.h>
#include <time.h>

#define CONNECT_TIMEOUT_MAX_MS 5000u
#define BACKOFF_MIN_MS 100u
#define BACKOFF_MAX_MS 1000u
#define SPIN_US 60u /* see send_and_read */
#define CLUSTER_TRIES 8
#define CLUSTER_PAUSE_MIN_MS 50u
#define CLUSTER_PAUSE_MAX_MS 500u

static void set_err(char *err, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void set_err(char *err, size_t size, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, size, fmt, ap);
    va_end(ap);
}

/* ------------------------------------------------------------------ URL */

static char *dup_range(const char *s, size_t n) {
    char *p = ln__malloc(n + 1);
    if (p) {
        memcpy(p, s, n);
        p[n] = '\0';
    }
    return p;
}

static int hexval(int ch) {
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
    return -1;
}

/* %-decode s[0..n) into a new string; NULL on bad escape (*bad = 1) or no
 * memory. */
static char *dup_decoded(const char *s, size_t n, int *bad) {
    char *p = ln__malloc(n + 1), *o = p;
    if (!p) return NULL;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '%') {
            int hi = i + 2 < n ? hexval(s[i + 1]) : -1;
            int lo = hi >= 0 ? hexval(s[i + 2]) : -1;
            if (lo < 0) {
                ln__free(p);
                *bad = 1;
                return NULL;
            }
            *o++ = (char)(hi * 16 + lo);
            i += 2;
        } else {
            *o++ = s[i];
        }
    }
    *o = '\0';
    return p;
}

/* Decimal in [lo, hi] from s[0..n). */
static int parse_num(const char *s, size_t n, long lo, long hi, long *out) {
    if (n == 0 || n > 10) return -1;
    long v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        v = v * 10 + (s[i] - '0');
    }
    if (v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

static int parse_params(ln__redis_cfg *cfg, const char *q, char *err, size_t err_size) {
    while (*q) {
        const char *end = strchr(q, '&');
        size_t n = end ? (size_t)(end - q) : strlen(q);
        const char *eq = memchr(q, '=', n);
        if (!eq) {
            set_err(err, err_size, "URL parameter '%.*s' has no value", (int)n, q);
            return LN_EINVAL;
        }
        size_t kn = (size_t)(eq - q), vn = n - kn - 1;
        const char *v = eq + 1;
        long num = 0;
        int bad = 0;
        if (kn == 6 && !memcmp(q, "prefix", 6)) {
            if (vn == 0)
                bad = 1;
            else {
                ln__free(cfg->prefix);
                if (!(cfg->prefix = dup_range(v, vn))) return LN_ENOMEM;
            }
        } else if (kn == 2 && !memcmp(q, "db", 2)) {
            bad = parse_num(v, vn, 0, 1000000, &num) < 0;
            cfg->db = (int)num;
        } else if (kn == 10 && !memcmp(q, "timeout_ms", 10)) {
            bad = parse_num(v, vn, 1, 86400000, &num) < 0;
            cfg->timeout_ms = (unsigned)num;
        } else if (kn == 13 && !memcmp(q, "wait_replicas", 13)) {
            bad = parse_num(v, vn, 0, LN__REDIS_WAIT_REPLICAS_MAX, &num) < 0;
            cfg->wait_replicas = (unsigned)num;
            cfg->wait_set = 1;
        } else if (kn == 15 && !memcmp(q, "wait_timeout_ms", 15)) {
            bad = parse_num(v, vn, 1, 86400000, &num) < 0;
            cfg->wait_timeout_ms = (unsigned)num;
        } else {
            set_err(err, err_size,
                    "unknown URL parameter '%.*s' (redis URLs take "
                    "prefix, db, timeout_ms, wait_replicas, wait_timeout_ms)",
                    (int)kn, q);
            return LN_EINVAL;
        }
        if (bad) {
            set_err(err, err_size, "bad value '%.*s' for URL parameter '%.*s'", (int)vn, v, (int)kn,
                    q);
            return LN_EINVAL;
        }
        q += n + (end ? 1 : 0);
    }
    return 0;
}

/* HOST[:PORT] or [V6]:PORT, then /DB. */
static int parse_server(ln__redis_cfg *cfg, const char *s, size_t n, char *err, size_t err_size) {
    const char *slash = memchr(s, '/', n);
    size_t hn = slash ? (size_t)(slash - s) : n;
    const char *host = s, *port = NULL;
    size_t host_n = hn;
    if (hn > 0 && s[0] == '[') {
        const char *close = memchr(s, ']', hn);
        if (!close) goto bad;
        host = s + 1;
        host_n = (size_t)(close - host);
        if (close + 1 < s + hn) {
            if (close[1] != ':') goto bad;
            port = close + 2;
        }
    } else {
        const char *colon = memchr(s, ':', hn);
        if (colon) {
            host_n = (size_t)(colon - s);
            port = colon + 1;
        }
    }
    if (host_n == 0) goto bad;
    if (port) {
        long p;
        if (parse_num(port, (size_t)(s + hn - port), 1, 65535, &p) < 0) goto bad;
        cfg->port = (int)p;
    }
    if (slash && slash + 1 < s + n) {
        long db;
        if (parse_num(slash + 1, (size_t)(s + n - slash - 1), 0, 1000000, &db) < 0) goto bad;
        cfg->db = (int)db;
    }
    if (!(cfg->host = dup_range(host, host_n))) return LN_ENOMEM;
    return 0;
bad:
    set_err(err, err_size,
            "malformed redis URL: expected "
            "redis://[[USER]:PASSWORD@]HOST[:PORT][/DB][?prefix=P]");
    return LN_EINVAL;
}

/* [USER]:PASSWORD or PASSWORD, %-encoded. */
static int parse_userinfo(ln__redis_cfg *cfg, const char *s, size_t n, char *err, size_t err_size) {
    const char *colon = memchr(s, ':', n);
    const char *pw = colon ? colon + 1 : s;
    int bad = 0;
    if (colon && colon > s && !(cfg->user = dup_decoded(s, (size_t)(colon - s), &bad))) goto fail;
    if (!(cfg->password = dup_decoded(pw, (size_t)(s + n - pw), &bad))) goto fail;
    return 0;
fail:
    if (!bad) return LN_ENOMEM;
    set_err(err, err_size, "bad %%-escape in the user or password of the redis URL");
    return LN_EINVAL;
}

int ln__redis_cfg_parse(ln__redis_cfg *cfg, const char *url, char *err, size_t err_size) {
    memset(cfg, 0, sizeof *cfg);
    cfg->port = 6379;
    cfg->timeout_ms = 10000;
    int rc = LN_ENOMEM;
    const char *q = strchr(url, '?');
    size_t n = q ? (size_t)(q - url) : strlen(url);
    if (n >= 8 && !memcmp(url, "redis://", 8)) {
        const char *s = url + 8, *end = url + n;
        const char *slash = memchr(s, '/', (size_t)(end - s));
        const char *auth_end = slash ? slash : end;
        const char *at = NULL;
        for (const char *p = s; p < auth_end; p++)
            if (*p == '@') at = p;
        if (at) {
            if ((rc = parse_userinfo(cfg, s, (size_t)(at - s), err, err_size)) < 0) goto fail;
            s = at + 1;
        }
        if ((rc = parse_server(cfg, s, (size_t)(end - s), err, err_size)) < 0) goto fail;
    } else if (n >= 5 && !memcmp(url, "unix:", 5)) {
        const char *s = url + 5;
        if (n >= 7 && s[0] == '/' && s[1] == '/') s += 2; /* unix:///path */
        if (url + n == s) {
            set_err(err, err_size, "malformed URL: expected unix:PATH[?db=N&prefix=P]");
            rc = LN_EINVAL;
            goto fail;
        }
        if (!(cfg->path = dup_range(s, (size_t)(url + n - s)))) goto fail;
    } else if (!strncmp(url, "rediss://", 9)) {
        set_err(err, err_size,
                "rediss:// (TLS) is not supported: lanes uses hiredis "
                "without TLS; reach Redis over a local TLS tunnel instead");
        rc = LN_ENOTSUP;
        goto fail;
    } else {
        set_err(err, err_size, "not a redis URL: '%s'", url);
        rc = LN_EINVAL;
        goto fail;
    }
    if (q && (rc = parse_params(cfg, q + 1, err, err_size)) < 0) goto fail;
    if (!cfg->prefix && !(cfg->prefix = ln__strdup("bull"))) {
        rc = LN_ENOMEM;
        goto fail;
    }
    return 0;
fail:
    if (rc == LN_ENOMEM) set_err(err, err_size, "out of memory");
    ln__redis_cfg_free(cfg);
    return rc;
}

void ln__redis_cfg_free(ln__redis_cfg *cfg) {
    ln__free(cfg->host);
    ln__free(cfg->path);
    ln__free(cfg->user);
    ln__free(cfg->password);
    ln__free(cfg->prefix);
    memset(cfg, 0, sizeof *cfg);
}

/* ----------------------------------------------------------- connecting */

static struct timeval tv_of_ms(unsigned ms) {
    struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};
    return tv;
}

int ln__redis_conn_lost(int rc) {
    return rc == LN_EIO || rc == LN_ECONNREFUSED;
}

void ln__redis_disconnect(ln__redis_conn *c) {
    if (c->cl) { /* every node's; the map may be out of date too */
        ln__redis_cluster_close_all(c->cl);
        c->cl->stale = 1;
        c->ctx = NULL;
        return;
    }
    if (c->ctx) {
        redisFree(c->ctx);
        c->ctx = NULL;
    }
}

void ln__redis_conn_free(ln__redis_conn *c) {
    ln__redis_disconnect(c);
    ln__redis_cluster_free(c->cl);
    c->cl = NULL;
    ln__free(c->name);
    c->name = NULL;
}

/* Redis error replies that mean "this server cannot serve us right now":
 * loading its data after a restart, a replica during failover. */
static int transient_error(const char *msg) {
    return !strncmp(msg, "LOADING", 7) || !strncmp(msg, "MASTERDOWN", 10) ||
           !strncmp(msg, "READONLY", 8) || !strncmp(msg, "TRYAGAIN", 8);
}

int ln__redis_write(redisContext *ctx, int *done) {
    sigset_t pipe_set, old, pending;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
    int was_pending = sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE);
    int rc = redisBufferWrite(ctx, done);
    if (rc != REDIS_OK && !was_pending && sigpending(&pending) == 0 &&
        sigismember(&pending, SIGPIPE)) {
        const struct timespec now = {0, 0};
        (void)sigtimedwait(&pipe_set, NULL, &now); /* this write's SIGPIPE */
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

/* Send a command and read its reply. Before blocking in read(2) it polls
 * the socket for up to SPIN_US: a reply a loopback server sends within
 * that time is read without putting this thread to sleep and waking it
 * again, which is most of a short command's round trip. Returns the reply
 * (error replies included), or NULL after an I/O failure. */
static redisReply *send_and_read(redisContext *ctx, int argc, const char **argv,
                                 const size_t *lens) {
    if (redisAppendCommandArgv(ctx, argc, argv, lens) != REDIS_OK) return NULL;
    int done = 0;
    do {
        if (ln__redis_write(ctx, &done) != REDIS_OK) return NULL;
    } while (!done);
    uint64_t until = ln__now_ns() + SPIN_US * 1000u;
    struct pollfd p = {.fd = ctx->fd, .events = POLLIN};
    while (poll(&p, 1, 0) == 0 && ln__now_ns() < until) {
    }
    void *reply = NULL;
    if (redisGetReply(ctx, &reply) != REDIS_OK) return NULL;
    return reply;
}

static void set_lost(ln__redis_conn *c, redisContext *ctx) {
    int timed_out = ctx->err == REDIS_ERR_IO && (errno == EAGAIN || errno == EWOULDBLOCK);
    set_err(c->err, c->err_size, "redis connection lost (%s)",
            timed_out ? "no reply before timeout_ms" : ctx->errstr);
}

/* One command on c's live context; after an I/O failure the context is
 * dropped. */
static redisReply *run(ln__redis_conn *c, int argc, const char **argv, const size_t *lens,
                       int *rc) {
    redisReply *r = send_and_read(c->ctx, argc, argv, lens);
    if (!r) {
        set_lost(c, c->ctx);
        ln__redis_disconnect(c);
        *rc = LN_EIO;
    }
    return r;
}

/* An error reply as a code, with the message in c->err; frees it. */
static int reply_code(ln__redis_conn *c, redisReply *r) {
    int rc = LN_EBACKEND;
    if (!strncmp(r->str, "OOM", 3))
        rc = LN_ENOSPC;
    else if (!strncmp(r->str, "NOAUTH", 6) || !strncmp(r->str, "WRONGPASS", 9) ||
             !strncmp(r->str, "NOPERM", 6))
        rc = LN_EACCES;
    else if (transient_error(r->str))
        rc = LN_EIO;
    set_err(c->err, c->err_size, "redis: %s", r->str);
    freeReplyObject(r);
    return rc;
}

/* reply_code, and a server that cannot serve us now is dropped. */
static int reply_error(ln__redis_conn *c, redisReply *r) {
    int rc = reply_code(c, r);
    if (rc == LN_EIO) ln__redis_disconnect(c);
    return rc;
}

/* A command while setting up ctx (not yet c's). */
static int setup_command(ln__redis_conn *c, redisContext *ctx, int argc, const char **argv) {
    redisReply *r = send_and_read(ctx, argc, argv, NULL);
    if (!r) {
        set_lost(c, ctx);
        return LN_EIO;
    }
    if (r->type == REDIS_REPLY_ERROR) return reply_code(c, r);
    freeReplyObject(r);
    return 0;
}

/* Connect to host:port (cfg's unix socket when host is NULL), then AUTH,
 * SELECT and (if named) CLIENT SETNAME. */
static int open_ctx(ln__redis_conn *c, const char *host, int port, int named, redisContext **out) {
    const ln__redis_cfg *cfg = c->cfg;
    unsigned ct =
        cfg->timeout_ms < CONNECT_TIMEOUT_MAX_MS ? cfg->timeout_ms : CONNECT_TIMEOUT_MAX_MS;
    redisContext *ctx = !host ? redisConnectUnixWithTimeout(cfg->path, tv_of_ms(ct))
                              : redisConnectWithTimeout(host, port, tv_of_ms(ct));
    if (!ctx) {
        set_err(c->err, c->err_size, "out of memory connecting to redis");
        return LN_ENOMEM;
    }
    if (ctx->err) {
        if (!host)
            set_err(c->err, c->err_size, "cannot connect to redis at %s: %s", cfg->path,
                    ctx->errstr);
        else
            set_err(c->err, c->err_size, "cannot connect to redis at %s:%d: %s", host, port,
                    ctx->errstr);
        redisFree(ctx);
        return LN_ECONNREFUSED;
    }
    redisSetTimeout(ctx, tv_of_ms(cfg->timeout_ms));
    if (host) redisEnableKeepAlive(ctx);

    int rc = 0;
    if (cfg->password) {
        const char *auth[3] = {"AUTH"};
        int n = 1;
        if (cfg->user) auth[n++] = cfg->user; /* Redis 6 ACL: AUTH user password */
        auth[n++] = cfg->password;
        rc = setup_command(c, ctx, n, auth);
        if (rc == LN_EBACKEND) rc = LN_EACCES;
    }
    if (!rc && cfg->db) {
        char db[16];
        snprintf(db, sizeof db, "%d", cfg->db);
        rc = setup_command(c, ctx, 2, (const char *[]){"SELECT", db});
        if (rc == LN_EBACKEND && strstr(c->err, "cluster mode")) {
            set_err(c->err, c->err_size,
                    "on Redis Cluster the database must be 0 (the URL selects %d)", cfg->db);
            rc = LN_EINVAL;
        }
    }
    if (!rc && named && c->name) {
        /* Only for dashboards (BullMQ's getWorkers): a refusal is harmless. */
        int ignored = setup_command(c, ctx, 3, (const char *[]){"CLIENT", "SETNAME", c->name});
        if (ignored == LN_EIO) rc = ignored;
    }
    if (rc)
        redisFree(ctx);
    else
        *out = ctx;
    return rc;
}

static int try_connect(ln__redis_conn *c);

int ln__redis_connect(ln__redis_conn *c) {
    if (c->route_rc) return c->route_rc; /* set on a cluster only */
    if (c->ctx) {
        if (!c->cl) return 0; /* a single server */
        if (!c->cl->stale && (!c->slot || c->cl->owner[c->slot - 1] == c->node + 1)) return 0;
        c->ctx = NULL; /* another node serves the slot now: keep it, switch */
    }
    uint64_t now = ln__now_ns();
    if (now < c->retry_at_ns) { /* what happened, not what may come */
        set_err(c->err, c->err_size, "redis unreachable: %s (last attempt %u ms ago)", c->last_err,
                (unsigned)((now - c->last_try_ns) / 1000000u));
        return LN_ECONNREFUSED;
    }
    int rc = try_connect(c);
    if (rc == 0) {
        c->backoff_ms = 0;
        c->retry_at_ns = 0;
    } else if (rc == LN_ECONNREFUSED || rc == LN_EIO) {
        snprintf(c->last_err, sizeof c->last_err, "%s", c->err);
        c->last_try_ns = now;
        c->backoff_ms = c->backoff_ms ? c->backoff_ms * 2 : BACKOFF_MIN_MS;
        if (c->backoff_ms > BACKOFF_MAX_MS) c->backoff_ms = BACKOFF_MAX_MS;
        c->retry_at_ns = now + (uint64_t)c->backoff_ms * 1000000u;
    }
    return rc;
}

/* ------------------------------------------------------------- cluster */

/* Read the slot map from the first known node that gives a complete one
 * (each on a connection of its own, closed after). */
static int cluster_refresh(ln__redis_conn *c) {
    ln__redis_cluster *cl = c->cl;
    int rc = LN_ECONNREFUSED;
    for (size_t i = 0; i < cl->nnodes; i++) {
        redisContext *ctx = NULL;
        if ((rc = open_ctx(c, cl->nodes[i].host, cl->nodes[i].port, 0, &ctx)) < 0) {
            if (rc == LN_ENOMEM || rc == LN_EACCES || rc == LN_EINVAL) return rc;
            continue;
        }
        redisReply *r = send_and_read(ctx, 2, (const char *[]){"CLUSTER", "SLOTS"}, NULL);
        if (!r) {
            set_lost(c, ctx);
            rc = LN_EIO;
        } else {
            rc = ln__redis_cluster_load(cl, r, (int)i);
            if (rc == LN_EBACKEND)
                set_err(c->err, c->err_size,
                        "redis cluster: %s:%d has no complete slot map (cluster not ready?)",
                        cl->nodes[i].host, cl->nodes[i].port);
            freeReplyObject(r);
        }
        redisFree(ctx);
        if (rc == 0 || rc == LN_ENOMEM) return rc;
    }
    return rc == LN_EBACKEND ? LN_EIO : rc; /* retried like a lost server */
}

/* Point c->ctx at the node serving c's slot (any node for slot 0). */
static int cluster_connect(ln__redis_conn *c) {
    if (!c->cl) {
        if (!(c->cl = ln__calloc(1, sizeof *c->cl)) ||
            ln__redis_cluster_node(c->cl, c->cfg->host, strlen(c->cfg->host), c->cfg->port) < 0) {
            ln__redis_cluster_free(c->cl);
            c->cl = NULL;
            set_err(c->err, c->err_size, "out of memory");
            return LN_ENOMEM;
        }
        c->cl->stale = 1;
    }
    ln__redis_cluster *cl = c->cl;
    int rc;
    if (cl->stale && (rc = cluster_refresh(c)) < 0) return rc;
    int node = c->slot ? cl->owner[c->slot - 1] - 1 : 0;
    ln__redis_node *n = &cl->nodes[node];
    if (!n->ctx && (rc = open_ctx(c, n->host, n->port, 1, &n->ctx)) < 0) {
        cl->stale = 1; /* a dead master: the next try asks who took over */
        return rc;
    }
    c->ctx = n->ctx;
    c->node = node;
    return 0;
}

static int try_connect(ln__redis_conn *c) {
    if (c->cfg->cluster) return cluster_connect(c);
    return open_ctx(c, c->cfg->path ? NULL : c->cfg->host, c->cfg->port, 1, &c->ctx);
}

int ln__redis_cluster_detect(ln__redis_conn *c, ln__redis_cfg *cfg) {
    int rc = 0;
    redisReply *r = run(c, 2, (const char *[]){"INFO", "cluster"}, NULL, &rc);
    if (!r) return rc;
    int on = r->type == REDIS_REPLY_STRING && strstr(r->str, "cluster_enabled:1");
    freeReplyObject(r);
    if (!on) return 0;
    if (cfg->db) {
        set_err(c->err, c->err_size, "on Redis Cluster the database must be 0 (the URL selects %d)",
                cfg->db);
        return LN_EINVAL;
    }
    if (cfg->path) {
        set_err(c->err, c->err_size, "Redis Cluster needs a redis://HOST:PORT URL, not unix:");
        return LN_EINVAL;
    }
    ln__redis_disconnect(c); /* from now on a node's context, made by cluster_connect */
    cfg->cluster = 1;
    return 0;
}

void ln__redis_route(ln__redis_conn *c, const char *base) {
    if (!c->cfg->cluster) return;
    c->route_rc = 0;
    if (!ln__redis_base_tagged(base)) {
        set_err(c->err, c->err_size,
                "on Redis Cluster the prefix must be a hash tag like {bull} (or the queue name "
                "hold one, like {myqueue}): the keys of '%s...' would span hash slots",
                base);
        c->route_rc = LN_EINVAL;
        return;
    }
    c->slot = (int)ln__redis_slot(base, strlen(base)) + 1;
}

int ln__redis_cluster_error(const ln__redis_conn *c, const char *msg) {
    if (!c->cl) return 0;
    unsigned slot;
    int node;
    return ln__redis_cluster_redirect(c->cl, msg, c->node, &slot, &node) != LN__REDIS_ROUTE_OK;
}

/* ASKING, then the command, on node (once; the map stays). */
static redisReply *run_asking(ln__redis_conn *c, int node, int argc, const char **argv,
                              const size_t *lens, int *rc) {
    ln__redis_node *n = &c->cl->nodes[node];
    if (!n->ctx && (*rc = open_ctx(c, n->host, n->port, 1, &n->ctx)) < 0) return NULL;
    c->ctx = n->ctx;
    c->node = node;
    redisReply *r = run(c, 1, (const char *[]){"ASKING"}, NULL, rc);
    if (r) {
        freeReplyObject(r);
        r = run(c, argc, argv, lens, rc);
    }
    c->ctx = NULL; /* the next command routes by the map again */
    return r;
}

/* The command on the slot's owner, following redirections: MOVED updates
 * the map and goes on at once, ASK asks the node named this once, and a
 * failover or resharding in progress (CLUSTERDOWN, TRYAGAIN, READONLY...)
 * re-reads the map after a pause. Bounded: CLUSTER_TRIES attempts, pauses
 * from 50 ms doubling to 500 ms (a local manual failover takes about one
 * second). Those replies mean the command did not run, so sending it again
 * is safe; a lost connection is not retried (the command may have run). */
static redisReply *cluster_exec(ln__redis_conn *c, int argc, const char **argv, const size_t *lens,
                                int *rc) {
    unsigned pause_ms = CLUSTER_PAUSE_MIN_MS;
    int ask = -1;
    for (int tries = 1;; tries++) {
        redisReply *r;
        if (ask >= 0) {
            r = run_asking(c, ask, argc, argv, lens, rc);
            ask = -1;
            if (!r) return NULL;
        } else if ((*rc = ln__redis_connect(c)) < 0) {
            /* no node reachable, or no complete map yet: pause, retry */
            if (!ln__redis_conn_lost(*rc) || tries >= CLUSTER_TRIES) return NULL;
            r = NULL;
        } else if (!(r = run(c, argc, argv, lens, rc))) {
            return NULL;
        }
        if (r && r->type != REDIS_REPLY_ERROR) return r;
        unsigned slot = 0;
        int node = -1, how = LN__REDIS_ROUTE_RETRY;
        if (r) how = ln__redis_cluster_redirect(c->cl, r->str, c->node, &slot, &node);
        if (how == LN__REDIS_ROUTE_OK || tries >= CLUSTER_TRIES) return r;
        freeReplyObject(r);
        if (how == LN__REDIS_ROUTE_MOVED) {
            c->cl->owner[slot] = (uint16_t)(node + 1);
            c->ctx = NULL;
        } else if (how == LN__REDIS_ROUTE_ASK) {
            ask = node;
        } else {
            c->cl->stale = 1;
            c->ctx = NULL;
            c->retry_at_ns = 0; /* the pause below is the backoff */
            struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)pause_ms * 1000000L};
            nanosleep(&ts, NULL);
            pause_ms = pause_ms * 2 > CLUSTER_PAUSE_MAX_MS ? CLUSTER_PAUSE_MAX_MS : pause_ms * 2;
        }
    }
}

static redisReply *exec(ln__redis_conn *c, int argc, const char **argv, const size_t *lens,
                        int *rc) {
    if (c->cfg->cluster) return cluster_exec(c, argc, argv, lens, rc);
    if ((*rc = ln__redis_connect(c)) < 0) return NULL;
    return run(c, argc, argv, lens, rc);
}

redisReply *ln__redis_command(ln__redis_conn *c, int argc, const char **argv, const size_t *lens,
                              int *rc) {
    redisReply *r = exec(c, argc, argv, lens, rc);
    if (r && r->type == REDIS_REPLY_ERROR) {
        *rc = reply_error(c, r);
        return NULL;
    }
    return r;
}

redisReply *ln__redis_eval(ln__redis_conn *c, int script, const char *key, int argc,
                           const char **argv, const size_t *lens, int *rc) {
    const ln__redis_script *s = &ln__redis_scripts[script];
    size_t n = (size_t)argc + 4;
    const char **v = ln__malloc(n * sizeof *v);
    size_t *l = ln__malloc(n * sizeof *l);
    redisReply *r = NULL;
    if (!v || !l) {
        set_err(c->err, c->err_size, "out of memory");
        *rc = LN_ENOMEM;
        goto out;
    }
    v[0] = "EVALSHA";
    v[1] = s->sha1;
    v[2] = "1";
    v[3] = key;
    for (int i = 0; i < argc; i++) {
        v[4 + i] = argv[i];
        l[4 + i] = lens ? lens[i] : strlen(argv[i]);
    }
    for (int i = 0; i < 4; i++) l[i] = strlen(v[i]);
    r = exec(c, (int)n, v, l, rc);
    if (r && r->type == REDIS_REPLY_ERROR && !strncmp(r->str, "NOSCRIPT", 8)) {
        /* The server forgot it (restart, SCRIPT FLUSH, a promoted replica):
         * EVAL caches it. */
        freeReplyObject(r);
        v[0] = "EVAL";
        v[1] = s->body;
        l[0] = 4;
        l[1] = strlen(s->body);
        r = exec(c, (int)n, v, l, rc);
    }
    if (r && r->type == REDIS_REPLY_ERROR) {
        *rc = reply_error(c, r);
        r = NULL;
    }
out:
    ln__free(v);
    ln__free(l);
    return r;
}

/* ------------------------------------------------------------------ args */

static int args_grow(ln__redis_args *a) {
    if (a->oom) return -1;
    if (a->n < a->cap) return 0;
    size_t cap = a->cap ? a->cap * 2 : 32;
    const char **v = ln__realloc(a->v, cap * sizeof *v);
    if (v) a->v = v;
    size_t *len = v ? ln__realloc(a->len, cap * sizeof *len) : NULL;
    if (len) a->len = len;
    unsigned char *owned = len ? ln__realloc(a->owned, cap) : NULL;
    if (owned) a->owned = owned;
    if (!owned) {
        a->oom = 1;
        return -1;
    }
    a->cap = cap;
    return 0;
}

void ln__redis_args_mem(ln__redis_args *a, const char *s, size_t len) {
    if (args_grow(a) < 0) return;
    a->v[a->n] = s;
    a->len[a->n] = len;
    a->owned[a->n++] = 0;
}

void ln__redis_args_str(ln__redis_args *a, const char *s) {
    ln__redis_args_mem(a, s, strlen(s));
}

void ln__redis_args_i64(ln__redis_args *a, int64_t v) {
    char buf[24];
    int n = snprintf(buf, sizeof buf, "%" PRId64, v);
    char *s = dup_range(buf, (size_t)n);
    if (!s || args_grow(a) < 0) {
        ln__free(s);
        a->oom = 1;
        return;
    }
    a->v[a->n] = s;
    a->len[a->n] = (size_t)n;
    a->owned[a->n++] = 1;
}

void ln__redis_args_free(ln__redis_args *a) {
    for (size_t i = 0; i < a->n; i++)
        if (a->owned[i]) ln__free((void *)a->v[i]);
    ln__free(a->v);
    ln__free(a->len);
    ln__free(a->owned);
    memset(a, 0, sizeof *a);
}
