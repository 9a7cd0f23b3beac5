/* flow.c - flows on Redis: adding one, all or nothing (lua/flow.lua),
 * and reading a job's flow relations (lua/children.lua). The layout is
 * BullMQ 6.7's, docs/internals/flows.md. */
#include "redis_int.h"

#include "internal.h"
#include "redis_backoff.h"
#include "redis_cluster.h"
#include "redis_replicas.h"
#include "redis_scripts.h"
#include "redis_view.h"

#include <jansson.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BASE_MAX LN__REDIS_BASE_MAX

/* The queue bases of the nodes into bases[i]; on a Cluster every one must
 * hash to the root's slot (one script touches them all). */
static int node_bases(const ln__redis_conn *c, ln__jobs_be *be, const ln__flow_new *nodes, size_t n,
                      char (*bases)[BASE_MAX]) {
    for (size_t i = 0; i < n; i++)
        snprintf(bases[i], BASE_MAX, "%s:%s:", c->cfg->prefix, nodes[i].queue);
    if (!c->cfg->cluster) return 0;
    unsigned slot = ln__redis_slot(bases[0], strlen(bases[0]));
    for (size_t i = 1; i < n; i++)
        if (ln__redis_slot(bases[i], strlen(bases[i])) != slot)
            return ln__jobs_be_err(be, LN_EINVAL,
                                   "flow node %zu: on Redis Cluster every queue of a flow must "
                                   "hash to one slot (put the hash tag in the prefix, like "
                                   "{bull}): '%s' and '%s' do not",
                                   i, bases[0], bases[i]);
    return 0;
}

static void push_node(ln__redis_args *a, const char *base, const ln__flow_new *nd) {
    const ln_job_opts *o = &nd->job.opts;
    ln__redis_args_str(a, base);
    ln__redis_args_i64(a, nd->parent + 1);
    ln__redis_args_i64(a, (int64_t)nd->nchildren);
    ln__redis_args_i64(a, nd->on_fail);
    ln__redis_args_str(a, o->job_id ? o->job_id : "");
    ln__redis_args_str(a, nd->job.name);
    ln__redis_args_mem(a, nd->job.data, nd->job.data_len);
    ln__redis_args_i64(a, o->delay_ms);
    ln__redis_args_i64(a, o->priority);
    ln__redis_args_i64(a, o->attempts);
    ln__redis_args_backoff(a, o); /* type, "<ms>[:<jitter>]" */
    ln__redis_args_str(a, o->lifo ? "1" : "0");
    ln__redis_args_i64(a, o->remove_on_complete.mode);
    ln__redis_args_i64(a, o->remove_on_complete.value);
    ln__redis_args_i64(a, o->remove_on_fail.mode);
    ln__redis_args_i64(a, o->remove_on_fail.value);
    ln__redis_args_str(a, o->traceparent ? o->traceparent : "");
    ln__redis_args_str(a, o->traceparent && o->tracestate ? o->tracestate : "");
    ln__redis_args_i64(a, o->timeout_ms);
}

static int read_ids(ln__jobs_be *be, redisReply *rep, ln__flow_new *nodes, size_t n) {
    if (rep->type != REDIS_REPLY_ARRAY || rep->elements < 2)
        return ln__redis_bad_reply(be, rep, "flow");
    if (ln__redis_int_at(rep, 0) == 2) { /* the root's parent does not exist */
        freeReplyObject(rep);
        const ln_job_opts *o = &nodes[0].job.opts;
        return ln__jobs_be_err(
            be, LN_ENOENT, "flow node 0: missing key for parent job: queue '%s' has no job '%s'",
            o->parent_queue, o->parent_id);
    }
    if (ln__redis_int_at(rep, 0) == 1) {
        size_t i = (size_t)ln__redis_int_at(rep, 1) - 1;
        freeReplyObject(rep);
        if (i >= n) return ln__jobs_be_err(be, LN_EBACKEND, "redis: unexpected reply to flow");
        return ln__jobs_be_err(be, LN_EINVAL, "flow node %zu: queue '%s' has a job '%s'", i,
                               nodes[i].queue, nodes[i].job.opts.job_id);
    }
    if (rep->elements != n + 1) return ln__redis_bad_reply(be, rep, "flow");
    for (size_t i = 0; i < n; i++) {
        if (rep->element[i + 1]->type != REDIS_REPLY_STRING)
            return ln__redis_bad_reply(be, rep, "flow");
        ln__free(nodes[i].job.id); /* the backend sets it; any length (job_record.h) */
        nodes[i].job.id = NULL;
        if (ln__redis_str_at(rep, i + 1, &nodes[i].job.id) != 0) {
            freeReplyObject(rep);
            return ln__jobs_be_err(be, LN_ENOMEM, "out of memory");
        }
        nodes[i].job.existed = 0;
    }
    freeReplyObject(rep);
    return 0;
}

/* The root's parent (opts.parent_*), if any: its queue base (of the
 * root's slot on a Cluster), id and failure options after the nodes. The
 * base is written into pb (BASE_MAX bytes), which a borrows: it must
 * outlive the call. */
static int push_root_parent(const ln__redis_conn *c, ln__jobs_be *be, ln__redis_args *a,
                            const char *root_base, const ln_job_opts *o, char *pb) {
    if (o->parent_queue == NULL) return 0;
    int len = snprintf(pb, BASE_MAX, "%s:%s:", c->cfg->prefix, o->parent_queue);
    if (c->cfg->cluster &&
        ln__redis_slot(pb, (size_t)len) != ln__redis_slot(root_base, strlen(root_base)))
        return ln__jobs_be_err(be, LN_EINVAL,
                               "flow node 0: on Redis Cluster a parent must hash to its child's "
                               "slot (put the hash tag in the prefix, like {bull}): '%s' and '%s' "
                               "do not",
                               root_base, pb);
    ln__redis_args_str(a, pb);
    ln__redis_args_str(a, o->parent_id);
    ln__redis_args_i64(a, ln__job_flow_flags(o));
    return 0;
}

/* The root's queue base is r->key, bases[0]. */
static int add_flow(ln__redis_be *r, ln__flow_new *nodes, size_t n) {
    ln__jobs_be *be = &r->base;
    const ln__redis_conn *c = &r->conn;
    char(*bases)[BASE_MAX] = ln__malloc(n * sizeof *bases);
    if (bases == NULL) return ln__jobs_be_err(be, LN_ENOMEM, "out of memory");
    int rc = node_bases(c, be, nodes, n, bases);
    char parent_base[BASE_MAX];
    ln__redis_args a = {0};
    if (rc == 0) {
        ln__redis_args_i64(&a, (int64_t)n);
        for (size_t i = 0; i < n; i++) push_node(&a, bases[i], &nodes[i]);
        rc = push_root_parent(c, be, &a, bases[0], &nodes[0].job.opts, parent_base);
    }
    redisReply *rep = rc == 0 ? ln__redis_run(r, LN__RS_FLOW, &a, &rc) : NULL;
    ln__redis_args_free(&a);
    ln__free(bases);
    if (rc != 0 || rep == NULL) return rc != 0 ? rc : LN_EBACKEND;
    return read_ids(be, rep, nodes, n);
}

int ln__redis_add_flow(ln__jobs_be *be, ln__flow_new *nodes, size_t n) {
    ln__redis_be *r = ln__redis_at(be, nodes[0].queue);
    int rc = add_flow(r, nodes, n);
    return rc != 0 ? rc : ln__redis_wait_added(&r->conn, be, &nodes[0].job, n);
}

/* ------------------------------------------------------------- reading */

/* Split key "<prefix>:<queue>:<id>" of this prefix into queue and id
 * (left NULL for a key of another prefix). */
static int split_key(const char *prefix, const char *key, char **queue, char **id) {
    size_t plen = strlen(prefix);
    if (strncmp(key, prefix, plen) != 0 || key[plen] != ':') return 0;
    const char *q = key + plen + 1, *colon = strchr(q, ':');
    if (colon == NULL || colon == q) return 0;
    if ((*queue = ln__malloc((size_t)(colon - q) + 1)) == NULL) return LN_ENOMEM;
    memcpy(*queue, q, (size_t)(colon - q));
    (*queue)[colon - q] = '\0';
    return (*id = ln__strdup(colon + 1)) != NULL ? 0 : LN_ENOMEM;
}

static int str_of(const redisReply *e, char **out) {
    *out = NULL;
    if (e->type != REDIS_REPLY_STRING) return 0;
    return (*out = ln__strdup(e->str)) != NULL ? 0 : LN_ENOMEM;
}

/* Append the entries of list (pairs when paired) with status. */
static int add_kind(const char *prefix, ln_job_children *out, const redisReply *list, int status,
                    int paired) {
    if (list->type != REDIS_REPLY_ARRAY) return LN_EBACKEND;
    size_t step = paired ? 2 : 1, k = list->elements / step;
    if (k == 0) return 0;
    ln_job_child *p = ln__realloc(out->children, (out->n + k) * sizeof *p);
    if (p == NULL) return LN_ENOMEM;
    out->children = p;
    for (size_t i = 0; i < k; i++) {
        ln_job_child *c = &out->children[out->n++];
        memset(c, 0, sizeof *c);
        c->status = status;
        int rc = str_of(list->element[i * step], &c->key);
        if (rc == 0 && c->key == NULL) rc = LN_EBACKEND;
        if (rc == 0 && paired) rc = str_of(list->element[i * step + 1], &c->value);
        if (rc == 0) rc = split_key(prefix, c->key, &c->queue, &c->id);
        if (rc != 0) return rc;
    }
    return 0;
}

static int cmp_child(const void *a, const void *b) {
    const ln_job_child *x = a, *y = b; /* (one kind at a time) */
    return strcmp(x->key, y->key);
}

static int read_relations(const char *prefix, const redisReply *rep, ln_job_children *out) {
    static const int status[] = {LN_CHILD_PROCESSED, LN_CHILD_FAILED, LN_CHILD_UNSUCCESSFUL,
                                 LN_CHILD_PENDING};
    int rc = str_of(rep->element[0], &out->parent_key);
    if (rc == 0 && out->parent_key == NULL && rep->element[1]->type == REDIS_REPLY_STRING) {
        /* no parentKey: BullMQ's parent field {id, queueKey} */
        json_t *p = json_loads(rep->element[1]->str, 0, NULL);
        const char *pid = json_string_value(json_object_get(p, "id"));
        const char *qk = json_string_value(json_object_get(p, "queueKey"));
        if (pid && qk) { /* "<queueKey>:<id>", whole: ids have any length */
            size_t size = strlen(qk) + strlen(pid) + 2;
            if ((out->parent_key = ln__malloc(size)) == NULL)
                rc = LN_ENOMEM;
            else
                snprintf(out->parent_key, size, "%s:%s", qk, pid);
        }
        json_decref(p);
    }
    if (rc == 0 && out->parent_key)
        rc = split_key(prefix, out->parent_key, &out->parent_queue, &out->parent_id);
    size_t from = 0;
    for (int k = 0; k < 4 && rc == 0; k++) {
        from = out->n;
        rc = add_kind(prefix, out, rep->element[2 + k], status[k], k < 2);
        if (rc == 0 && out->n > from)
            qsort(out->children + from, out->n - from, sizeof *out->children, cmp_child);
    }
    return rc;
}

int ln__redis_children(ln__jobs_be *be, const char *queue, const char *id, ln_job_children *out) {
    ln__redis_be *r = ln__redis_at(be, queue);
    ln__redis_args a = {0};
    ln__redis_args_str(&a, id);
    ln__redis_args_i64(&a, LN_JOB_CHILDREN_MAX);
    int rc = 0;
    redisReply *rep = ln__redis_run(r, LN__RS_CHILDREN, &a, &rc);
    ln__redis_args_free(&a);
    if (rep == NULL) return rc != 0 ? rc : ln__jobs_be_err(be, LN_ENOMEM, "out of memory");
    if (rep->type == REDIS_REPLY_ARRAY && rep->elements == 0) {
        freeReplyObject(rep);
        return ln__jobs_be_err(be, LN_ENOENT, "no job '%s' at '%s'", id, r->key);
    }
    if (rep->type != REDIS_REPLY_ARRAY || rep->elements != 6)
        return ln__redis_bad_reply(be, rep, "children");
    rc = read_relations(r->cfg.prefix, rep, out);
    freeReplyObject(rep);
    if (rc == LN_ENOMEM) return ln__jobs_be_err(be, LN_ENOMEM, "out of memory");
    if (rc != 0) return ln__jobs_be_err(be, LN_EBACKEND, "redis: unexpected reply to children");
    return 0;
}
