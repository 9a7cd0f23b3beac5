/* flow.c - the front of flows (jobs.h "Flows"): a tree of jobs checked,
 * flattened into pre-order and handed to the store's add_flow in one call;
 * the children a parent reads. docs/internals/flows.md has the design. */
#include "flow_parent.h"
#include "front.h"

#include "internal.h"

#include <stdio.h>
#include <string.h>

/* The longest store-numbered id plus NUL (as front.c). */
#define NUMERIC_ID_SIZE 21

typedef struct flat {
    ln__flow_new *nodes;
    size_t n;
    const ln_jobs *jobs;
    char msg[LN__JOBS_ERRMSG_MAX];
} flat;

/* Check one node and append it (and its subtree) to f in pre-order. */
static int flatten(flat *f, const ln_flow_node *node, long parent, const char *queue, int depth) {
    char err[LN__JOBS_ERRMSG_MAX - 64];
    size_t i = f->n;
    if (depth > LN_FLOW_DEPTH_MAX) {
        snprintf(f->msg, sizeof f->msg, "flow node %zu: deeper than %d levels", i,
                 LN_FLOW_DEPTH_MAX);
        return LN_EINVAL;
    }
    if (i == LN_FLOW_NODES_MAX) {
        snprintf(f->msg, sizeof f->msg, "a flow has at most %d nodes", LN_FLOW_NODES_MAX);
        return LN_EINVAL;
    }
    ln__flow_new *nw = &f->nodes[f->n++];
    memset(nw, 0, sizeof *nw);
    nw->queue = node->queue != NULL ? node->queue : queue;
    nw->parent = parent;
    nw->nchildren = node->nchildren;
    if (parent >= 0)
        nw->on_fail = (node->fail_parent_on_failure ? LN__FLOW_FPOF : 0) |
                      (node->continue_parent_on_failure ? LN__FLOW_CPOF : 0) |
                      (node->ignore_dependency_on_failure ? LN__FLOW_IDOF : 0) |
                      (node->remove_dependency_on_failure ? LN__FLOW_RDOF : 0);
    ln__job_new *j = &nw->job;
    int rc = nw->queue == NULL ? (snprintf(err, sizeof err, "the root needs a queue"), LN_EINVAL)
                               : ln__jobs_check_queue(nw->queue, err, sizeof err);
    if (rc == 0) rc = ln__jobs_check_name(node->name, LN_JOB_NAME_MAX, "job name", err, sizeof err);
    if (rc == 0) {
        if (node->opts != NULL)
            j->opts = *node->opts;
        else
            ln_job_opts_init(&j->opts);
        rc = ln__jobs_check_opts(&j->opts, err, sizeof err);
    }
    if (rc == 0 && parent >= 0) /* the root may have a parent (opts.parent_*) */
        rc = ln__dynflow_refuse(&j->opts, "a flow node but the root", err, sizeof err);
    if (rc == 0 && parent < 0 && j->opts.parent_queue != NULL && j->opts.job_id != NULL &&
        strcmp(j->opts.parent_queue, nw->queue) == 0 &&
        strcmp(j->opts.parent_id, j->opts.job_id) == 0) {
        snprintf(err, sizeof err, "job '%s' cannot be its own parent", j->opts.job_id);
        rc = LN_EINVAL;
    }
    if (rc == 0 && j->opts.dedup_id != NULL) {
        snprintf(err, sizeof err, "deduplication is not supported in a flow");
        rc = LN_EINVAL;
    }
    if (rc == 0 && node->nchildren > 0 && node->children == NULL) {
        snprintf(err, sizeof err, "children is NULL with nchildren %zu", node->nchildren);
        rc = LN_EINVAL;
    }
    if (rc == 0) {
        j->name = node->name;
        j->data = node->data_json != NULL ? node->data_json : "{}";
        rc = ln__jobs_check_json(j->data, f->jobs->opts.max_data_size, &j->data_len, "data", err,
                                 sizeof err);
    }
    if (rc != 0) {
        snprintf(f->msg, sizeof f->msg, "flow node %zu: %s", i, err);
        return rc;
    }
    for (size_t k = 0; k < node->nchildren && rc == 0; k++)
        rc = flatten(f, &node->children[k], (long)i, nw->queue, depth + 1);
    return rc;
}

static int check_ids(const flat *f, size_t nids, size_t id_size, char *msg, size_t msgsize) {
    if (nids < f->n) {
        snprintf(msg, msgsize, "nids %zu is less than the flow's %zu nodes", nids, f->n);
        return LN_ERANGE;
    }
    for (size_t i = 0; i < f->n; i++) {
        const char *cid = f->nodes[i].job.opts.job_id;
        size_t need = cid != NULL ? strlen(cid) + 1 : NUMERIC_ID_SIZE;
        if (need > id_size) {
            snprintf(msg, msgsize, "flow node %zu: id_size %zu is too small (%zu bytes needed)", i,
                     id_size, need);
            return LN_ERANGE;
        }
    }
    return 0;
}

int ln_jobs_add_flow(ln_jobs *jobs, const ln_flow_node *root, char *ids, size_t nids,
                     size_t id_size) {
    if (jobs == NULL) return LN_EINVAL;
    flat f = {.jobs = jobs};
    int code = 0;
    if (root == NULL) {
        snprintf(f.msg, sizeof f.msg, "root must not be NULL");
        code = LN_EINVAL;
    } else if (ids != NULL && id_size == 0) {
        snprintf(f.msg, sizeof f.msg, "id_size must not be 0");
        code = LN_EINVAL;
    } else if ((f.nodes = ln__calloc(LN_FLOW_NODES_MAX, sizeof *f.nodes)) == NULL) {
        snprintf(f.msg, sizeof f.msg, "out of memory");
        code = LN_ENOMEM;
    }
    /* Checked outside the lock, as ln_jobs_add_bulk does. */
    if (code == 0) code = flatten(&f, root, -1, root->queue, 1);
    if (code == 0 && ids != NULL) code = check_ids(&f, nids, id_size, f.msg, sizeof f.msg);
    int err = ln__jobs_enter(jobs);
    if (err == 0 && code != 0)
        err = ln__jobs_leave(jobs, ln__jobs_err(jobs, code, "%s", f.msg));
    else if (err == 0) {
        ln__jobs_be *be = jobs->be;
        int has_parent = f.nodes[0].job.opts.parent_queue != NULL;
        if (has_parent && (be->methods->add_flow == NULL))
            err = ln__jobs_be_err(be, LN_ENOTSUP, "store '%s' cannot add a flow with a parent",
                                  be->methods->name);
        else if (f.n == 1 && !has_parent) { /* no children: a plain job */
            err = be->methods->add(be, f.nodes[0].queue, &f.nodes[0].job, 1);
            if (err == 0 && f.nodes[0].job.existed) /* (nothing stored) */
                err = ln__jobs_be_err(be, LN_EINVAL, "flow node 0: queue '%s' has a job '%s'",
                                      f.nodes[0].queue, f.nodes[0].job.id);
        } else
            err = be->methods->add_flow(be, f.nodes, f.n);
        err = ln__jobs_leave(jobs, err);
        if (err == 0 && ids != NULL)
            for (size_t i = 0; i < f.n; i++)
                snprintf(ids + i * id_size, id_size, "%s", f.nodes[i].job.id);
    }
    for (size_t i = 0; f.nodes != NULL && i < f.n; i++) ln__free(f.nodes[i].job.id);
    ln__free(f.nodes);
    return err;
}

/* ------------------------------------------------------------- reading */

void ln_job_children_clear(ln_job_children *c) {
    if (c == NULL) return;
    for (size_t i = 0; i < c->n; i++) {
        ln__free(c->children[i].key);
        ln__free(c->children[i].queue);
        ln__free(c->children[i].id);
        ln__free(c->children[i].value);
    }
    ln__free(c->children);
    ln__free(c->parent_key);
    ln__free(c->parent_queue);
    ln__free(c->parent_id);
    memset(c, 0, sizeof *c);
}

int ln_jobs_children(ln_jobs *jobs, const char *queue, const char *id, ln_job_children *out) {
    char msg[LN__JOBS_ERRMSG_MAX] = "";
    int code = out == NULL ? (snprintf(msg, sizeof msg, "out is NULL"), LN_EINVAL) : 0;
    if (code == 0) {
        memset(out, 0, sizeof *out);
        code = ln__jobs_check_queue(queue, msg, sizeof msg);
    }
    if (code == 0) code = ln__jobs_check_name(id, SIZE_MAX, "job id", msg, sizeof msg);
    int err = ln__jobs_enter(jobs);
    if (err != 0) return err;
    if (code != 0) return ln__jobs_leave(jobs, ln__jobs_err(jobs, code, "%s", msg));
    err = jobs->be->methods->children(jobs->be, queue, id, out);
    if (err != 0) ln_job_children_clear(out);
    return ln__jobs_leave(jobs, err);
}
