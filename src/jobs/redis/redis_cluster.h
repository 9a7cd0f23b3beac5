/* redis_cluster.h - Redis Cluster routing for the Redis backend: hash
 * slots of keys (CRC16 of the hash tag, as the cluster specification
 * defines), the slot map read from CLUSTER SLOTS, and the redirections
 * (MOVED, ASK) a node answers with. hiredis parses the replies; this only
 * reads them. Internal to src/jobs/redis/; not API.
 *
 * A queue's keys are "<prefix>:<queue>:<suffix>" and its scripts build
 * keys from that base inside Lua, so on a cluster all of them must share
 * one slot: the base must hold a complete hash tag ("{bull}:q:"), which
 * then decides the slot of every key that starts with it.
 * docs/internals/redis-layout.md has the rule; docs/redis.md the user's
 * side of it.
 */
#ifndef LN_JOBS_REDIS_CLUSTER_H
#define LN_JOBS_REDIS_CLUSTER_H

#include <hiredis/hiredis.h>

#include <stddef.h>
#include <stdint.h>

#define LN__REDIS_SLOTS 16384
#define LN__REDIS_NODES_MAX 1024

/* The hash slot of key[0..len). */
unsigned ln__redis_slot(const char *key, size_t len);

/* 1 if every key that starts with base hashes to the slot of base: base
 * holds a hash tag ('{', then a '}' with at least one byte between). */
int ln__redis_base_tagged(const char *base);

typedef struct ln__redis_node {
    char *host;
    int port;
    redisContext *ctx; /* NULL while not connected */
} ln__redis_node;

/* What one connection knows of the cluster: the nodes it has heard of (the
 * URL's first; never removed, so any of them can be asked for the map
 * again after a failover) and which one owns each slot. */
typedef struct ln__redis_cluster {
    ln__redis_node *nodes;
    size_t nnodes, cap;
    uint16_t owner[LN__REDIS_SLOTS]; /* index into nodes + 1; 0: unknown */
    int stale;                       /* re-read the map before the next command */
} ln__redis_cluster;

/* The index of node host:port, added if new: >= 0, or -1 (no memory, or
 * LN__REDIS_NODES_MAX nodes known). */
int ln__redis_cluster_node(ln__redis_cluster *cl, const char *host, size_t host_len, int port);

/* Replace the slot map with a CLUSTER SLOTS reply got from node 'asked'
 * (an empty host in the reply means that node's). 0, LN_EBACKEND (not a
 * slot map, or it leaves slots unowned: the cluster is not ready), or
 * LN_ENOMEM. */
int ln__redis_cluster_load(ln__redis_cluster *cl, const redisReply *slots, int asked);

/* Close every node's connection. */
void ln__redis_cluster_close_all(ln__redis_cluster *cl);
void ln__redis_cluster_free(ln__redis_cluster *cl);

/* What an error reply says about routing. */
enum {
    LN__REDIS_ROUTE_OK = 0, /* not a cluster error */
    LN__REDIS_ROUTE_MOVED,  /* the slot lives on *node now */
    LN__REDIS_ROUTE_ASK,    /* ask *node this once (ASKING first) */
    LN__REDIS_ROUTE_RETRY,  /* failover or resharding in progress: the
                                    command did not run; re-read the map */
};

/* Classify error reply msg; for MOVED and ASK, *slot and *node (added to
 * cl; the host of node 'from' when the reply leaves it out) say where. */
int ln__redis_cluster_redirect(ln__redis_cluster *cl, const char *msg, int from, unsigned *slot,
                               int *node);

#endif
