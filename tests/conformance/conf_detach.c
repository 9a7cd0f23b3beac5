/* conf_detach.c - ln_jobs_remove_child_dependency (jobs_flows.h; BullMQ's
 * job.removeChildDependency): a pending child leaves its parent, which is
 * released once no pending child is left; a child no longer pending, or a
 * job of no flow, is left as it is; in a tree, a failed child still
 * pending leaves and its parent is released while the root waits on. */
#include "conf.h"

/* Flow r (queue q, delay_ms on r) with pending children x and y. */
static void flow_rxy(conf_ctx *c, int64_t delay_ms) {
    ln_job_opts o[3];
    ln_flow_node kids[2] = {conf_flow_node(NULL, "k", "x", &o[0]),
                            conf_flow_node(NULL, "k", "y", &o[1])};
    ln_flow_node root = conf_flow_node(c->queue, "parent", "r", &o[2]);
    o[2].delay_ms = delay_ms;
    root.children = kids;
    root.nchildren = 2;
    SAYS(c->jobs, 0, ln_jobs_add_flow(c->jobs, &root, NULL, 0, 0));
}

static int detach(conf_ctx *c, const char *id) {
    int removed = -1;
    SAYS(c->jobs, 0, ln_jobs_remove_child_dependency(c->jobs, c->queue, id, &removed));
    return removed;
}

/* The pending children of r, and whether id still names a parent. */
static size_t pending_of_r(conf_ctx *c) {
    ln_job_children ch;
    CHECK_EQ(ln_jobs_children(c->jobs, c->queue, "r", &ch), 0);
    size_t n = 0;
    for (size_t i = 0; i < ch.n; i++) n += ch.children[i].status == LN_CHILD_PENDING;
    ln_job_children_clear(&ch);
    return n;
}

static int has_parent(conf_ctx *c, const char *id) {
    ln_job_children ch;
    CHECK_EQ(ln_jobs_children(c->jobs, c->queue, id, &ch), 0);
    int has = ch.parent_key != NULL;
    ln_job_children_clear(&ch);
    return has;
}

/* Detaching both children releases the parent; each child's later
 * completion reaches no parent. */
void case_detach_releases_parent(conf_ctx *c) {
    flow_rxy(c, 0);
    CHECK_EQ(detach(c, "x"), 1);
    CHECK_EQ(has_parent(c, "x"), 0);
    CHECK_EQ(has_parent(c, "y"), 1);
    CHECK_EQ(pending_of_r(c), 1);
    CHECK_EQ(conf_state(c, c->queue, "r"), LN_JOB_WAITING_CHILDREN);
    CHECK_EQ(detach(c, "x"), 0); /* no longer a dependency: nothing changes */
    CHECK_EQ(detach(c, "y"), 1);
    CHECK_EQ(conf_state(c, c->queue, "r"), LN_JOB_WAITING);
    CHECK_EQ(conf_state(c, c->queue, "x"), LN_JOB_WAITING); /* the children stay */
    CHECK_EQ(conf_state(c, c->queue, "y"), LN_JOB_WAITING);
    conf_check_counts(c, c->queue);
    ln_worker_opts o;
    conf_worker_opts(&o);
    ln_worker_stats st = conf_run(c, c->queue, conf_handler_by_name, NULL, &o);
    CHECK_EQ(st.completed, 3);
    ln_job_children ch;
    CHECK_EQ(ln_jobs_children(c->jobs, c->queue, "r", &ch), 0);
    CHECK_EQ(ch.n, 0); /* neither result reached r */
    ln_job_children_clear(&ch);
}

/* A parent with a delay of its own is released into delayed. */
void case_detach_delayed_parent(conf_ctx *c) {
    flow_rxy(c, 60000);
    CHECK_EQ(detach(c, "y"), 1);
    CHECK_EQ(detach(c, "x"), 1);
    CHECK_EQ(conf_state(c, c->queue, "r"), LN_JOB_DELAYED);
    conf_check_counts(c, c->queue);
}

/* A processed child, a job of no flow, no such job. */
void case_detach_not_pending(conf_ctx *c) {
    flow_rxy(c, 0);
    ln_worker_opts o;
    conf_worker_opts(&o);
    conf_run(c, c->queue, conf_handler_by_name, NULL, &o);
    CHECK_EQ(conf_state(c, c->queue, "r"), LN_JOB_COMPLETED);
    CHECK_EQ(detach(c, "x"), 0);
    CHECK_EQ(has_parent(c, "x"), 1); /* BullMQ leaves the fields of a processed child */
    CHECK_EQ(detach(c, "r"), 0);
    char id[LN_JOB_ID_MAX];
    conf_add(c, c->queue, "n", "{}", NULL, id);
    CHECK_EQ(detach(c, id), 0);
    int removed = 7;
    SAYS(c->jobs, LN_ENOENT, ln_jobs_remove_child_dependency(c->jobs, c->queue, "nope", &removed));
    CHECK_EQ(removed, 0);
    SAYS(c->jobs, LN_EINVAL, ln_jobs_remove_child_dependency(c->jobs, c->queue, NULL, NULL));
}

/* The parent removed first (its child kept): LN_ENOENT, as BullMQ's
 * missing parent key. */
void case_detach_parent_gone(conf_ctx *c) {
    ln_job_opts o, p;
    ln_job_opts_init(&p);
    p.job_id = "p";
    conf_add(c, c->queue, "parent", "{}", &p, NULL);
    ln_job_opts_init(&o);
    o.job_id = "kid";
    o.parent_queue = c->queue;
    o.parent_id = "p";
    conf_add(c, c->queue, "k", "{}", &o, NULL);
    SAYS(c->jobs, 0, ln_jobs_remove(c->jobs, c->queue, "p"));
    int removed = 7;
    SAYS(c->jobs, LN_ENOENT, ln_jobs_remove_child_dependency(c->jobs, c->queue, "kid", &removed));
    CONF_CHECK_HAS(ln_jobs_errmsg(c->jobs), "parent");
    CHECK_EQ(removed, 0);
}

static int detach_in(conf_ctx *c, const char *queue, const char *id) {
    int removed = -1;
    SAYS(c->jobs, 0, ln_jobs_remove_child_dependency(c->jobs, queue, id, &removed));
    return removed;
}

/* removeChildDependency in a tree: parent p (itself a child of root g)
 * with a pending child a in another queue, a child f failed with no
 * failure option (still a pending dependency, as in BullMQ) and a child i
 * failed with ignore_dependency_on_failure (no longer one). Detaching i
 * does nothing, f and a leave p, which is released (g still waits for it)
 * and then completes, releasing g. */
void case_detach_tree(conf_ctx *c) {
    const char *q2 = conf_queue(c, "other");
    ln_job_opts o[5];
    ln_flow_node kids[3] = {conf_flow_node(q2, "k", "a", &o[0]),
                            conf_flow_node(c->queue, "bad", "f", &o[1]),
                            conf_flow_node(c->queue, "bad", "i", &o[2])};
    kids[2].ignore_dependency_on_failure = 1;
    ln_flow_node p = conf_flow_node(NULL, "n", "p", &o[3]);
    p.children = kids;
    p.nchildren = 3;
    ln_flow_node g = conf_flow_node(c->queue, "n", "g", &o[4]);
    g.children = &p;
    g.nchildren = 1;
    SAYS(c->jobs, 0, ln_jobs_add_flow(c->jobs, &g, NULL, 0, 0));
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    ln_worker_stats st = conf_run(c, c->queue, conf_handler_by_name, NULL, &wo);
    CHECK_EQ(st.failed, 2);
    CHECK_EQ(conf_state(c, c->queue, "p"), LN_JOB_WAITING_CHILDREN);
    CHECK_EQ(detach_in(c, c->queue, "i"), 0);
    CHECK_EQ(detach_in(c, c->queue, "f"), 1);
    CHECK_EQ(conf_state(c, c->queue, "p"), LN_JOB_WAITING_CHILDREN);
    CHECK_EQ(detach_in(c, q2, "a"), 1);
    CHECK_EQ(detach_in(c, q2, "a"), 0);
    CHECK_EQ(conf_state(c, c->queue, "p"), LN_JOB_WAITING);
    CHECK_EQ(conf_state(c, c->queue, "g"), LN_JOB_WAITING_CHILDREN);
    conf_check_counts(c, c->queue);
    conf_check_counts(c, q2);
    st = conf_run(c, c->queue, conf_handler_by_name, NULL, &wo);
    CHECK_EQ(st.completed, 2);
    CHECK_EQ(conf_state(c, c->queue, "g"), LN_JOB_COMPLETED);
    CHECK_EQ(conf_state(c, q2, "a"), LN_JOB_WAITING);
    conf_check_counts(c, c->queue);
}
