/* redis_conn.h - the Redis backend's connections: URL parsing, connecting
 * with timeouts, reconnecting with backoff, running the embedded Lua
 * scripts. Internal to src/jobs/redis*.c; not API.
 *
 * A connection is a synchronous hiredis context used by one thread at a
 * time (the caller serialises). After any I/O error or timeout the context
 * is dropped (a late reply would desynchronise it) and the next call
 * reconnects, so a killed connection (CLIENT KILL), a restarted server or a
 * half-open socket costs one failed call, never a wedged one.
 */
#ifndef LN_JOBS_REDIS_CONN_H
#define LN_JOBS_REDIS_CONN_H

#include <hiredis/hiredis.h>

#include <stddef.h>
#include <stdint.h>

/* What a redis:// or unix: URL says:
 *   redis://[[USER]:PASSWORD@]HOST[:PORT][/DB][?PARAMS]
 *   unix:PATH[?PARAMS]
 * PARAMS: prefix=P (key prefix, default "bull"), db=N, timeout_ms=N (reply
 * timeout of a command, default 10000). USER and PASSWORD may be
 * %-encoded. */
typedef struct ln__redis_cfg {
    char *host; /* NULL for unix: */
    int port;
    char *path;     /* unix socket, or NULL */
    char *user;     /* ACL user, or NULL */
    char *password; /* or NULL */
    int db;
    char *prefix;
    unsigned timeout_ms;
} ln__redis_cfg;

/* Parse url into *cfg (strings ln__malloc'd; free with ln__redis_cfg_free).
 * 0, LN_EINVAL (detail in err), LN_ENOMEM. */
int ln__redis_cfg_parse(ln__redis_cfg *cfg, const char *url, char *err, size_t err_size);
void ln__redis_cfg_free(ln__redis_cfg *cfg);

typedef struct ln__redis_conn {
    const ln__redis_cfg *cfg;
    redisContext *ctx;    /* NULL while disconnected */
    const char *name;     /* CLIENT SETNAME after connecting, or NULL */
    uint64_t retry_at_ns; /* no reconnect attempt before (monotonic) */
    unsigned backoff_ms;  /* wait after the next failed attempt */
    char *err;            /* where failures are described (the backend's
                             errmsg buffer) */
    size_t err_size;
    char last_err[192];   /* why the last connection attempt failed: what a
                             call during the backoff reports */
    uint64_t last_try_ns; /* when that attempt was made (monotonic) */
} ln__redis_conn;

/* Connect if not connected: 0, LN_ECONNREFUSED (unreachable, or a failed
 * attempt was less than the backoff ago: 100 ms doubling to 1 s, reset by
 * a success), LN_EACCES (AUTH refused), LN_EBACKEND (SELECT failed). */
int ln__redis_connect(ln__redis_conn *c);
void ln__redis_disconnect(ln__redis_conn *c);

/* Run one command (argv strings with lengths; lens NULL = strlen) and
 * return its reply (freeReplyObject), or NULL with *rc set and the detail
 * in c->err: LN_ECONNREFUSED (cannot connect), LN_EIO (connection lost, no
 * reply within timeout_ms, or the server is loading or failing over; the
 * context is dropped), or an error reply: LN_ENOSPC (OOM), LN_EACCES
 * (auth, ACL), LN_EBACKEND (anything else). */
redisReply *ln__redis_command(ln__redis_conn *c, int argc, const char **argv, const size_t *lens,
                              int *rc);

/* Run embedded script 'script' (LN__RS_*) with KEYS[1] = key and ARGV =
 * argv: EVALSHA, and EVAL (which caches it again) after NOSCRIPT, e.g.
 * when the server restarted. Reply and errors as ln__redis_command. */
redisReply *ln__redis_eval(ln__redis_conn *c, int script, const char *key, int argc,
                           const char **argv, const size_t *lens, int *rc);

/* 1 if rc is a connection failure worth retrying after a reconnect. */
int ln__redis_conn_lost(int rc);

/* A growable argv for ln__redis_command / ln__redis_script. Strings pushed
 * with _str are borrowed (must outlive the call); _fmt ones are owned. */
typedef struct ln__redis_args {
    const char **v;
    size_t *len;
    unsigned char *owned;
    size_t n, cap;
    int oom; /* a push failed: the call must not be made */
} ln__redis_args;

void ln__redis_args_str(ln__redis_args *a, const char *s);
void ln__redis_args_mem(ln__redis_args *a, const char *s, size_t len);
void ln__redis_args_i64(ln__redis_args *a, int64_t v);
void ln__redis_args_free(ln__redis_args *a);

#endif
