/* redis_conn.h - the Redis backend's connections: URL parsing, connecting
 * with timeouts, reconnecting with backoff, running the embedded Lua
 * scripts. Internal to src/jobs/redis/; not API.
 *
 * A connection is a synchronous hiredis context used by one thread at a
 * time (the caller serialises). After any I/O error or timeout the context
 * is dropped (a late reply would desynchronise it) and the next call
 * reconnects, so a killed connection (CLIENT KILL), a restarted server or a
 * half-open socket costs one failed call, never a wedged one.
 *
 * On Redis Cluster (detected once at open, ln__redis_cluster_detect) a
 * connection is one context per node it has talked to, plus its own copy
 * of the slot map (redis_cluster.h): ln__redis_route picks the slot of the
 * queue the next commands are for, and each command goes to the slot's
 * owner, following MOVED (map updated) and ASK (ASKING, map kept), and
 * re-reading the map after a lost connection or a failover. Each
 * connection keeps its map to itself, so the instance, a worker's wait and
 * its pipe share nothing but the read-only configuration.
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
 * timeout of a command, default 10000), wait_replicas=N and
 * wait_timeout_ms=N (jobs.h ln_jobs_opts; redis_replicas.h). USER and
 * PASSWORD may be %-encoded. */
typedef struct ln__redis_cfg {
    char *host; /* NULL for unix: */
    int port;
    char *path;     /* unix socket, or NULL */
    char *user;     /* ACL user, or NULL */
    char *password; /* or NULL */
    int db;
    char *prefix;
    unsigned timeout_ms;
    int cluster;              /* the server is a Redis Cluster node (set at open) */
    unsigned wait_replicas;   /* WAIT for this many replicas after writes, 0 off */
    unsigned wait_timeout_ms; /* WAIT's timeout, 0 = not set in the URL */
    int wait_set;             /* the URL set wait_replicas */
} ln__redis_cfg;

/* Most replicas wait_replicas may name. */
#define LN__REDIS_WAIT_REPLICAS_MAX 64

/* Parse url into *cfg (strings ln__malloc'd; free with ln__redis_cfg_free).
 * 0, LN_EINVAL (detail in err), LN_ENOMEM. */
int ln__redis_cfg_parse(ln__redis_cfg *cfg, const char *url, char *err, size_t err_size);
void ln__redis_cfg_free(ln__redis_cfg *cfg);

struct ln__redis_cluster;

typedef struct ln__redis_conn {
    const ln__redis_cfg *cfg;
    redisContext *ctx;    /* NULL while disconnected; on a cluster, the
                             context of the node serving 'slot' (owned by
                             cl) */
    char *name;           /* CLIENT SETNAME after connecting, or NULL;
                             owned (ln__malloc'd, ln__redis_conn_free) */
    uint64_t retry_at_ns; /* no reconnect attempt before (monotonic) */
    unsigned backoff_ms;  /* wait after the next failed attempt */
    char *err;            /* where failures are described (the backend's
                             errmsg buffer) */
    size_t err_size;
    char last_err[192];   /* why the last connection attempt failed: what a
                             call during the backoff reports */
    uint64_t last_try_ns; /* when that attempt was made (monotonic) */
    /* Cluster only (all 0 on a single server): */
    struct ln__redis_cluster *cl; /* nodes and slot map; made at first use */
    int slot;                     /* 1 + slot of the queue routed to; 0: any node */
    int node;                     /* index of ctx's node in cl */
    int route_rc;                 /* LN_EINVAL: the queue routed to spans slots */
} ln__redis_conn;

/* After open connected c: detect Redis Cluster (INFO cluster) and set
 * cfg->cluster (c->cfg must be cfg). On a cluster, the database must be
 * 0 (LN_EINVAL otherwise). 0, LN_EINVAL, or a command's error. */
int ln__redis_cluster_detect(ln__redis_conn *c, ln__redis_cfg *cfg);

/* Route the next commands of c to the queue whose base is base
 * ("<prefix>:<queue>:"). Nothing on a single server. On a cluster, a base
 * without a hash tag makes the commands fail with LN_EINVAL (the message
 * is in c->err now) instead of CROSSSLOT. */
void ln__redis_route(ln__redis_conn *c, const char *base);

/* For connections driven without ln__redis_command (wait, pipe): 1 if
 * error reply msg says the node no longer serves the slot or the cluster
 * is failing over; the caller then drops the connection
 * (ln__redis_disconnect), and the next connect re-reads the slot map. */
int ln__redis_cluster_error(const ln__redis_conn *c, const char *msg);

/* Disconnect and free what c holds (its cluster map). */
void ln__redis_conn_free(ln__redis_conn *c);

/* redisBufferWrite with SIGPIPE blocked on this thread: a write to a
 * connection the server closed fails with EPIPE (the caller sees an I/O
 * error and reconnects) instead of killing a program that did not ignore
 * the signal. A SIGPIPE this write raised is taken back before the mask is
 * restored; one already pending stays. Every write lanes makes to Redis
 * goes through it (hiredis' redisGetReply writes only what is still
 * buffered, which these writes leave empty). */
int ln__redis_write(redisContext *ctx, int *done);

/* Connect if not connected: 0, LN_ECONNREFUSED (unreachable, or a failed
 * attempt was less than the backoff ago: 100 ms doubling to 1 s, reset by
 * a success), LN_EACCES (AUTH refused), LN_EBACKEND (SELECT failed). */
int ln__redis_connect(ln__redis_conn *c);
/* Drop the context (on a cluster: every node's, and the map is re-read at
 * the next connect). */
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

/* A growable argv for ln__redis_command / ln__redis_eval. Strings pushed
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
