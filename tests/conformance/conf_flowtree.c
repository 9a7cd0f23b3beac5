/* conf_flowtree.c - flow trees for the conformance cases (conf_flowtree.h). */
#include "conf_flowtree.h"

#include <stdlib.h>

/* Appends row r as a node of t, with its own options. */
static void tree_push(conf_tree *t, const conf_tree_row *r) {
    CHECK(t->n < CONF_TREE_MAX);
    t->node[t->n] = conf_flow_node(r->queue, r->name, r->id, &t->opts[t->n]);
    t->n++;
}

ln_flow_node *conf_tree_make(conf_tree *t, const conf_tree_row *rows, size_t n) {
    CHECK(n >= 1 && n <= CONF_TREE_MAX);
    CHECK(rows[0].parent == NULL);
    memset(t, 0, sizeof *t);
    const conf_tree_row *row_of[CONF_TREE_MAX]; /* the row of each node */
    row_of[0] = &rows[0];
    tree_push(t, &rows[0]);
    for (size_t i = 0; i < t->n; i++) { /* t->n grows as the children of node i go in */
        const char *id = row_of[i]->id;
        size_t first = t->n;
        for (size_t r = 1; id != NULL && r < n; r++) {
            if (rows[r].parent == NULL || strcmp(rows[r].parent, id) != 0) continue;
            CHECK(t->n < CONF_TREE_MAX);
            row_of[t->n] = &rows[r];
            tree_push(t, &rows[r]);
        }
        if (t->n > first) {
            t->node[i].children = &t->node[first];
            t->node[i].nchildren = t->n - first;
        }
    }
    CHECK_EQ(t->n, n); /* a row whose parent is not in the tree was left out */
    return &t->node[0];
}

ln_flow_node *conf_tree_node(conf_tree *t, const char *id) {
    for (size_t i = 0; i < t->n; i++)
        if (t->opts[i].job_id != NULL && strcmp(t->opts[i].job_id, id) == 0) return &t->node[i];
    fprintf(stderr, "conf_tree_node: no node %s\n", id);
    CHECK(0);
    return NULL;
}

ln_job_opts *conf_tree_opts(conf_tree *t, const char *id) {
    return &t->opts[conf_tree_node(t, id) - t->node];
}

void conf_flow_add(conf_ctx *c, const ln_flow_node *root, size_t nnodes) {
    char(*ids)[LN_JOB_ID_MAX] = calloc(nnodes, LN_JOB_ID_MAX);
    CHECK(ids != NULL);
    SAYS(c->jobs, 0, ln_jobs_add_flow(c->jobs, root, ids[0], nnodes, LN_JOB_ID_MAX));
    free(ids);
}

void conf_tree_add(conf_ctx *c, conf_tree *t) {
    conf_flow_add(c, &t->node[0], t->n);
}

static const char *child_status_name(int status) {
    switch (status) {
    case LN_CHILD_PENDING:
        return "pending";
    case LN_CHILD_PROCESSED:
        return "processed";
    case LN_CHILD_FAILED:
        return "failed";
    case LN_CHILD_UNSUCCESSFUL:
        return "unsuccessful";
    default:
        return "?";
    }
}

void conf_check_children(conf_ctx *c, const char *queue, const char *id, const char *want) {
    ln_job_children rel;
    SAYS(c->jobs, 0, ln_jobs_children(c->jobs, queue, id, &rel));
    char got[512] = "";
    for (size_t i = 0; i < rel.n; i++) {
        size_t len = strlen(got);
        const char *kid = rel.children[i].id != NULL ? rel.children[i].id : "(none)";
        int w = snprintf(got + len, sizeof got - len, "%s:%s ", kid,
                         child_status_name(rel.children[i].status));
        CHECK(w > 0 && (size_t)w < sizeof got - len);
    }
    ln_job_children_clear(&rel);
    CONF_CHECK_STR(got, want);
}

void conf_add_kid(conf_ctx *c, const char *queue, const char *id, const char *name, const char *pq,
                  const char *pid) {
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.job_id = id;
    o.parent_queue = pq;
    o.parent_id = pid;
    conf_add(c, queue, name, "1", &o, NULL);
}
