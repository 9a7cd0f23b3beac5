/* dash_flow.c - GET /api/queues/Q/jobs/ID/flow?nodes=N&depth=L for a job's
 * page (docs/dash.md "Flows"): the job's parent, its children with their
 * status and value, and the tree it belongs to, from its root (or from
 * the highest ancestor within L levels of it) down.
 *
 * Every part is bounded, so a queue of a million jobs answers as fast as
 * a small one:
 *  - up: at most CLI_DASH_FLOW_UP_MAX ln_jobs_children calls, one per
 *    ancestor;
 *  - the job's own children: one ln_jobs_children (the library reads at
 *    most LN_JOB_CHILDREN_MAX per status), of which at most N are shown,
 *    each with one ln_jobs_get;
 *  - the tree: breadth first, at most N nodes and L levels, each node one
 *    ln_jobs_get and one ln_jobs_children. The path from the tree's top
 *    to the job is always in it (its nodes are reserved), so the job
 *    shows even under a top with more than N children.
 * A node whose children were not all shown says how many were left out
 * ("more"); the page shows that. children_total is the count that one
 * ln_jobs_children read: children_total_capped says it may have stopped
 * at the library's cap (children_capped), so the job may have more. More in docs/internals/dash-flow.md. */
#include "cli_err.h"
#include "cli_num.h"
#include "dash.h"
#include "dash_reply.h"

#include <lanes.h>

#include <stdlib.h>
#include <string.h>

/* One job of the walk: queue and id owned (NULL queue: a child key of
 * another prefix, shown but never read), obj borrowed from the tree. */
typedef struct flow_ref {
    char *queue, *id;
    json_t *obj;
    int depth;   /* the tree's top is 1 */
    int on_path; /* index in the ancestor chain + 1, or 0 */
} flow_ref;

typedef struct flow_walk {
    cli_dash *d;
    size_t nodes_max;
    int depth_max;
    flow_ref chain[CLI_DASH_FLOW_UP_MAX + 1]; /* chain[0] = the job, then its ancestors */
    int nchain;
    int root_reached;                    /* walk_up found a job without a parent */
    flow_ref q[CLI_DASH_FLOW_NODES_MAX]; /* the tree, breadth first */
    size_t n;
    int truncated;
} flow_walk;

_Static_assert(CLI_DASH_FLOW_NODES_MAX > CLI_DASH_FLOW_DEPTH_MAX,
               "the path from the top to the job must fit the node budget");

static const char *const status_names[] = {"pending", "processed", "failed", "unsuccessful"};

static const char *status_name(int s) {
    return s >= 0 && s < 4 ? status_names[s] : "unknown";
}

static int same(const char *a, const char *b) {
    return a != NULL && b != NULL && strcmp(a, b) == 0;
}

/* {queue, id, name, state} of one job; state "missing" when the store has
 * no such job (removed), "unknown" for a key of another prefix. */
static json_t *node_json(cli_dash *d, const char *queue, const char *id, int *err) {
    json_t *o = json_pack("{s:o,s:o}", "queue", cli_json_text(queue), "id", cli_json_text(id));
    ln_job_info info;
    *err = queue != NULL ? ln_jobs_get(d->jobs, queue, id, &info) : LN_ENOENT;
    if (*err == 0) {
        json_object_set_new(o, "name", cli_json_text(info.name));
        json_object_set_new(o, "state", json_string(ln_job_state_name(info.state)));
        ln_job_info_clear(&info);
    } else if (*err == LN_ENOENT || *err == LN_EINVAL) {
        json_object_set_new(o, "state", json_string(queue != NULL ? "missing" : "unknown"));
        *err = 0;
    }
    return o;
}

/* A child as its parent records it: node_json plus key, status, value. */
static json_t *child_json(cli_dash *d, const ln_job_child *c, int *err) {
    json_t *o = node_json(d, c->queue, c->id, err);
    json_object_set_new(o, "key", cli_json_text(c->key));
    json_object_set_new(o, "status", json_string(status_name(c->status)));
    json_object_set_new(o, "value", cli_dash_preview(c->value));
    return o;
}

/* Walk up from the job: chain[0] is it, chain[nchain - 1] the highest
 * ancestor found (the root unless CLI_DASH_FLOW_UP_MAX stopped the walk).
 * *parent gets the job's parent {key, queue, id} or null. */
static int walk_up(flow_walk *w, const char *queue, const char *id, json_t **parent) {
    w->chain[0].queue = strdup(queue);
    w->chain[0].id = strdup(id);
    w->nchain = 1;
    *parent = json_null();
    while (w->nchain <= CLI_DASH_FLOW_UP_MAX) {
        flow_ref *top = &w->chain[w->nchain - 1];
        ln_job_children c;
        int err = ln_jobs_children(w->d->jobs, top->queue, top->id, &c);
        if (err == LN_ENOENT && w->nchain > 1) { /* a parent key of a job that is gone */
            free(top->queue);
            free(top->id);
            top->queue = top->id = NULL;
            w->nchain--;
            w->root_reached = 1;
            return 0;
        }
        if (err != 0) return err;
        if (w->nchain == 1 && c.parent_key != NULL) {
            json_decref(*parent);
            *parent = json_pack("{s:o,s:o,s:o}", "key", cli_json_text(c.parent_key), "queue",
                                cli_json_text(c.parent_queue), "id", cli_json_text(c.parent_id));
        }
        int up = c.parent_queue != NULL && c.parent_id != NULL &&
                 !(same(c.parent_queue, queue) && same(c.parent_id, id)); /* no loop */
        if (up) {
            w->chain[w->nchain].queue = strdup(c.parent_queue);
            w->chain[w->nchain].id = strdup(c.parent_id);
            w->nchain++;
        }
        ln_job_children_clear(&c);
        if (!up) {
            w->root_reached = 1;
            return 0;
        }
    }
    return 0;
}

/* 1 if ln_jobs_children may have stopped at its cap for c (then the job
 * may have more children than c holds): SQLite reads at most 4 x
 * LN_JOB_CHILDREN_MAX children in all, Redis at most LN_JOB_CHILDREN_MAX
 * of each status. */
static int children_capped(const cli_dash *d, const ln_job_children *c) {
    if (strcmp(d->store, "sqlite") == 0) return c->n >= 4 * (size_t)LN_JOB_CHILDREN_MAX;
    size_t per_status[4] = {0, 0, 0, 0};
    for (size_t i = 0; i < c->n; i++)
        if (++per_status[c->children[i].status & 3] >= LN_JOB_CHILDREN_MAX) return 1;
    return 0;
}

/* Add node fn's children to the tree (as many as the budget allows; the
 * one on the path to the job always). */
static int expand(flow_walk *w, flow_ref *fn, size_t *reserved) {
    ln_job_children c;
    int err = fn->queue != NULL ? ln_jobs_children(w->d->jobs, fn->queue, fn->id, &c) : LN_ENOENT;
    if (err == LN_ENOENT) return 0; /* gone, or of another prefix: a leaf */
    if (err != 0) return err;
    const flow_ref *next = fn->on_path > 1 ? &w->chain[fn->on_path - 2] : NULL;
    json_t *arr = json_array();
    size_t shown = 0;
    for (size_t i = 0; fn->depth < w->depth_max && i < c.n && err == 0; i++) {
        const ln_job_child *ch = &c.children[i];
        int on = next != NULL && same(ch->queue, next->queue) && same(ch->id, next->id);
        if (!on && w->n + *reserved >= w->nodes_max) continue;
        if (w->n >= w->nodes_max) break; /* never: the path's nodes are reserved */
        flow_ref *r = &w->q[w->n++];
        r->queue = ch->queue != NULL ? strdup(ch->queue) : NULL;
        r->id = strdup(ch->id != NULL ? ch->id : ch->key);
        r->depth = fn->depth + 1;
        r->on_path = on ? fn->on_path - 1 : 0;
        r->obj = child_json(w->d, ch, &err);
        if (on) (*reserved)--;
        json_array_append_new(arr, r->obj);
        shown++;
    }
    json_object_set_new(fn->obj, "children_total", json_integer((json_int_t)c.n));
    json_object_set_new(fn->obj, "children_total_capped", json_boolean(children_capped(w->d, &c)));
    json_object_set_new(fn->obj, "more", json_integer((json_int_t)(c.n - shown)));
    json_object_set_new(fn->obj, "children", arr);
    if (c.n > shown) w->truncated = 1;
    ln_job_children_clear(&c);
    return err;
}

/* The tree from chain[top] down, breadth first (see the top). */
static int walk_down(flow_walk *w, int top, json_t **tree) {
    int err = 0;
    flow_ref *t = &w->q[0];
    t->queue = strdup(w->chain[top].queue);
    t->id = strdup(w->chain[top].id);
    t->depth = 1;
    t->on_path = top + 1;
    t->obj = node_json(w->d, t->queue, t->id, &err);
    w->n = 1;
    *tree = t->obj;
    size_t reserved = (size_t)top; /* the path's nodes below the top */
    for (size_t h = 0; h < w->n && err == 0; h++) err = expand(w, &w->q[h], &reserved);
    for (size_t h = 0; h < w->n; h++)
        if (w->q[h].on_path == 1) json_object_set_new(w->q[h].obj, "self", json_true());
    return err;
}

/* The job's own children, at most nodes_max of them, each with its state. */
static int own_children(flow_walk *w, const char *queue, const char *id, json_t **out,
                        size_t *total, int *capped) {
    ln_job_children c;
    int err = ln_jobs_children(w->d->jobs, queue, id, &c);
    if (err != 0) return err;
    *out = json_array();
    *total = c.n;
    *capped = children_capped(w->d, &c);
    for (size_t i = 0; i < c.n && i < w->nodes_max && err == 0; i++)
        json_array_append_new(*out, child_json(w->d, &c.children[i], &err));
    ln_job_children_clear(&c);
    return err;
}

static void walk_free(flow_walk *w) {
    for (int i = 0; i < w->nchain; i++) {
        free(w->chain[i].queue);
        free(w->chain[i].id);
    }
    for (size_t i = 0; i < w->n; i++) {
        free(w->q[i].queue);
        free(w->q[i].id);
    }
}

static long bound(const cli_dash_req *req, const char *name, long dflt, long max) {
    const char *s = req->arg(req->arg_ctx, name);
    if (s == NULL) return dflt;
    long long v;
    return cli_parse_ll(s, 1, max, &v) == 0 ? (long)v : -1;
}

static json_t *ref_json(const flow_ref *r) {
    return json_pack("{s:o,s:o}", "queue", cli_json_text(r->queue), "id", cli_json_text(r->id));
}

cli_dash_reply cli_dash_flow(cli_dash *d, const cli_dash_req *req, const char *queue,
                             const char *id) {
    static flow_walk w; /* big: not on the stack (one thread: dash.h) */
    memset(&w, 0, sizeof w);
    w.d = d;
    long nodes = bound(req, "nodes", CLI_DASH_FLOW_NODES_MAX, CLI_DASH_FLOW_NODES_MAX);
    long depth = bound(req, "depth", CLI_DASH_FLOW_DEPTH_MAX, CLI_DASH_FLOW_DEPTH_MAX);
    if (nodes < 0 || depth < 0)
        return cli_dash_error(400, "bad_request", "nodes must be 1..200 and depth 1..10");
    w.nodes_max = (size_t)nodes;
    w.depth_max = (int)depth;
    ln_job_info info;
    int err = ln_jobs_get(d->jobs, queue, id, &info);
    if (err != 0) return cli_dash_lib_error(d, err);
    json_t *body = json_pack("{s:o,s:o,s:s}", "queue", cli_json_text(queue), "id",
                             cli_json_text(id), "state", ln_job_state_name(info.state));
    ln_job_info_clear(&info);
    json_t *parent = NULL, *children = NULL, *tree = NULL;
    size_t total = 0;
    int capped = 0;
    err = walk_up(&w, queue, id, &parent);
    if (err == 0) err = own_children(&w, queue, id, &children, &total, &capped);
    /* the tree's top: the root, or the ancestor depth - 1 levels up (and
     * at most nodes - 1, so the path fits the budget) */
    int top = w.nchain - 1;
    if (top > w.depth_max - 1) top = w.depth_max - 1;
    if ((size_t)top > w.nodes_max - 1) top = (int)w.nodes_max - 1;
    if (err == 0) err = walk_down(&w, top, &tree);
    if (err != 0) {
        cli_dash_reply r = cli_dash_lib_error(d, err);
        json_decref(body);
        json_decref(parent);
        json_decref(children);
        json_decref(tree);
        walk_free(&w);
        return r;
    }
    json_object_set_new(body, "parent", parent);
    json_object_set_new(body, "children", children);
    json_object_set_new(body, "children_total", json_integer((json_int_t)total));
    json_object_set_new(body, "children_total_capped", json_boolean(capped));
    json_object_set_new(body, "root", ref_json(&w.chain[w.nchain - 1]));
    json_object_set_new(body, "root_reached", json_boolean(w.root_reached));
    json_object_set_new(body, "top", ref_json(&w.chain[top]));
    json_object_set_new(body, "levels_up", json_integer(w.nchain - 1));
    json_object_set_new(body, "tree", tree);
    json_object_set_new(body, "nodes", json_integer((json_int_t)w.n));
    json_object_set_new(body, "truncated",
                        json_boolean(w.truncated || top != w.nchain - 1 || !w.root_reached));
    json_object_set_new(body, "limits",
                        json_pack("{s:i,s:i}", "nodes", (int)nodes, "depth", (int)depth));
    walk_free(&w);
    cli_dash_reply r = {200, body};
    return r;
}
