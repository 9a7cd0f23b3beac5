/* cluster.c - hash slots, the slot map and redirections of Redis
 * Cluster (see redis_cluster.h). */
#include "redis_cluster.h"

#include "internal.h"

#include <stdlib.h>
#include <string.h>

/* CRC16-CCITT (XMODEM: polynomial 0x1021, initial 0), the checksum the
 * cluster specification hashes keys with; bitwise, since only the hash
 * tag of a queue's base is hashed, once per op. */
static unsigned crc16(const char *s, size_t n) {
    unsigned crc = 0;
    for (size_t i = 0; i < n; i++) {
        crc ^= (unsigned)(unsigned char)s[i] << 8;
        for (int b = 0; b < 8; b++) crc = crc & 0x8000u ? (crc << 1) ^ 0x1021u : crc << 1;
        crc &= 0xffffu;
    }
    return crc;
}

/* The hash tag of key: the bytes between the first '{' and the first '}'
 * after it, if there is at least one; else the whole key. */
static void hashed_part(const char *key, size_t len, const char **s, size_t *n) {
    *s = key;
    *n = len;
    const char *open = memchr(key, '{', len);
    if (!open) return;
    const char *close = memchr(open + 1, '}', len - (size_t)(open + 1 - key));
    if (!close || close == open + 1) return;
    *s = open + 1;
    *n = (size_t)(close - open - 1);
}

unsigned ln__redis_slot(const char *key, size_t len) {
    const char *s;
    size_t n;
    hashed_part(key, len, &s, &n);
    return crc16(s, n) & (LN__REDIS_SLOTS - 1);
}

int ln__redis_base_tagged(const char *base) {
    const char *s;
    size_t len = strlen(base), n;
    hashed_part(base, len, &s, &n);
    return s != base || n != len;
}

int ln__redis_cluster_node(ln__redis_cluster *cl, const char *host, size_t host_len, int port) {
    for (size_t i = 0; i < cl->nnodes; i++)
        if (cl->nodes[i].port == port && strlen(cl->nodes[i].host) == host_len &&
            !memcmp(cl->nodes[i].host, host, host_len))
            return (int)i;
    if (cl->nnodes == LN__REDIS_NODES_MAX) return -1;
    if (cl->nnodes == cl->cap) {
        size_t cap = cl->cap ? cl->cap * 2 : 8;
        ln__redis_node *nodes = ln__realloc(cl->nodes, cap * sizeof *nodes);
        if (!nodes) return -1;
        cl->nodes = nodes;
        cl->cap = cap;
    }
    char *h = ln__malloc(host_len + 1);
    if (!h) return -1;
    memcpy(h, host, host_len);
    h[host_len] = '\0';
    cl->nodes[cl->nnodes] = (ln__redis_node){.host = h, .port = port, .ctx = NULL};
    return (int)cl->nnodes++;
}

static int int_of(const redisReply *r, long long *v) {
    if (r->type == REDIS_REPLY_INTEGER) {
        *v = r->integer;
        return 0;
    }
    if (r->type == REDIS_REPLY_STRING) {
        char *end;
        *v = strtoll(r->str, &end, 10);
        return end == r->str ? -1 : 0;
    }
    return -1;
}

/* One entry of CLUSTER SLOTS: [start, end, [host, port, id, ...], replicas...]. */
static int load_range(ln__redis_cluster *cl, const redisReply *e, int asked, uint16_t *owner) {
    long long lo, hi, port;
    if (e->type != REDIS_REPLY_ARRAY || e->elements < 3 || int_of(e->element[0], &lo) < 0 ||
        int_of(e->element[1], &hi) < 0 || lo < 0 || hi >= LN__REDIS_SLOTS || lo > hi)
        return LN_EBACKEND;
    const redisReply *m = e->element[2];
    if (m->type != REDIS_REPLY_ARRAY || m->elements < 2 ||
        m->element[0]->type != REDIS_REPLY_STRING || int_of(m->element[1], &port) < 0 || port < 1 ||
        port > 65535)
        return LN_EBACKEND;
    const char *host = m->element[0]->str;
    size_t host_len = m->element[0]->len;
    if (host_len == 0 || (host_len == 1 && host[0] == '?')) { /* "the node you asked" */
        host = cl->nodes[asked].host;
        host_len = strlen(host);
    }
    int node = ln__redis_cluster_node(cl, host, host_len, (int)port);
    if (node < 0) return LN_ENOMEM;
    for (long long s = lo; s <= hi; s++) owner[s] = (uint16_t)(node + 1);
    return 0;
}

int ln__redis_cluster_load(ln__redis_cluster *cl, const redisReply *slots, int asked) {
    if (slots->type != REDIS_REPLY_ARRAY) return LN_EBACKEND;
    uint16_t *owner = ln__calloc(LN__REDIS_SLOTS, sizeof *owner);
    if (!owner) return LN_ENOMEM;
    int rc = 0;
    for (size_t i = 0; !rc && i < slots->elements; i++)
        rc = load_range(cl, slots->element[i], asked, owner);
    /* A map with holes is a cluster still forming or reconfiguring. */
    for (unsigned s = 0; !rc && s < LN__REDIS_SLOTS; s++)
        if (!owner[s]) rc = LN_EBACKEND;
    if (!rc) {
        memcpy(cl->owner, owner, sizeof cl->owner);
        cl->stale = 0;
    }
    ln__free(owner);
    return rc;
}

void ln__redis_cluster_close_all(ln__redis_cluster *cl) {
    for (size_t i = 0; i < cl->nnodes; i++) {
        if (cl->nodes[i].ctx) redisFree(cl->nodes[i].ctx);
        cl->nodes[i].ctx = NULL;
    }
}

void ln__redis_cluster_free(ln__redis_cluster *cl) {
    if (!cl) return;
    ln__redis_cluster_close_all(cl);
    for (size_t i = 0; i < cl->nnodes; i++) ln__free(cl->nodes[i].host);
    ln__free(cl->nodes);
    ln__free(cl);
}

/* "MOVED <slot> <host>:<port>" / "ASK ...": the host may be empty (the
 * node that answered) and may hold ':' itself (IPv6): the port follows
 * the last ':'. */
static int parse_target(ln__redis_cluster *cl, const char *p, int from, unsigned *slot, int *node) {
    char *end;
    unsigned long s = strtoul(p, &end, 10);
    if (end == p || *end != ' ' || s >= LN__REDIS_SLOTS) return -1;
    const char *host = end + 1, *colon = strrchr(host, ':');
    if (!colon) return -1;
    long port = strtol(colon + 1, &end, 10);
    if (end == colon + 1 || port < 1 || port > 65535) return -1;
    size_t host_len = (size_t)(colon - host);
    if (host_len == 0) {
        host = cl->nodes[from].host;
        host_len = strlen(host);
    }
    *slot = (unsigned)s;
    *node = ln__redis_cluster_node(cl, host, host_len, (int)port);
    return *node < 0 ? -1 : 0;
}

int ln__redis_cluster_redirect(ln__redis_cluster *cl, const char *msg, int from, unsigned *slot,
                               int *node) {
    if (!strncmp(msg, "MOVED ", 6))
        return parse_target(cl, msg + 6, from, slot, node) ? LN__REDIS_ROUTE_RETRY
                                                           : LN__REDIS_ROUTE_MOVED;
    if (!strncmp(msg, "ASK ", 4))
        return parse_target(cl, msg + 4, from, slot, node) ? LN__REDIS_ROUTE_RETRY
                                                           : LN__REDIS_ROUTE_ASK;
    /* The cluster is failing over or resharding: a replica that was just
     * demoted (READONLY, UNBLOCKED), a slot without an owner yet
     * (CLUSTERDOWN), keys of a slot half moved (TRYAGAIN). */
    if (!strncmp(msg, "CLUSTERDOWN", 11) || !strncmp(msg, "TRYAGAIN", 8) ||
        !strncmp(msg, "READONLY", 8) || !strncmp(msg, "UNBLOCKED", 9) ||
        !strncmp(msg, "MASTERDOWN", 10) || !strncmp(msg, "LOADING", 7))
        return LN__REDIS_ROUTE_RETRY;
    return LN__REDIS_ROUTE_OK;
}
