/* conf_unprocessed.c - removing a parent's unprocessed children
 * (ln_jobs_remove_unprocessed_children, BullMQ's
 * job.removeUnprocessedChildren): only the pending children go, with
 * their own pending children; a flow parent whose children all go is
 * released; a held child is skipped with its subtree; past
 * LN_JOBS_REMOVE_TREE_MAX entries the call is refused. */
#include "conf_flowtree.h"

/* Only the pending children go, with their own pending children: the
 * processed one and the failed one (still a dependency) stay, as the
 * parent's records of them; the parent (waiting: it was added plainly)
 * is not moved. */
void case_flowmore_remove_unprocessed(conf_ctx *c) {
    const char *q = c->queue, *kq = conf_queue(c, "kids");
    conf_add_kid(c, q, "p", "parent", NULL, NULL);
    conf_add_kid(c, kq, "a", "k", q, "p");
    conf_add_kid(c, kq, "f", "bad", q, "p");
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    conf_run(c, kq, conf_handler_by_name, NULL, &wo);
    CHECK_EQ(conf_state(c, kq, "a"), LN_JOB_COMPLETED);
    CHECK_EQ(conf_state(c, kq, "f"), LN_JOB_FAILED);
    conf_add_kid(c, kq, "b", "k", q, "p");
    conf_add_kid(c, q, "m", "k", q, "p");
    conf_add_kid(c, kq, "m1", "k", q, "m");
    size_t removed = 99;
    SAYS(c->jobs, 0, ln_jobs_remove_unprocessed_children(c->jobs, q, "p", &removed));
    CHECK_EQ(removed, 3);
    CHECK_EQ(conf_state(c, kq, "b"), LN_ENOENT);
    CHECK_EQ(conf_state(c, q, "m"), LN_ENOENT);
    CHECK_EQ(conf_state(c, kq, "m1"), LN_ENOENT);
    CHECK_EQ(conf_state(c, kq, "a"), LN_JOB_COMPLETED);
    CHECK_EQ(conf_state(c, kq, "f"), LN_JOB_FAILED);
    CHECK_EQ(conf_state(c, q, "p"), LN_JOB_WAITING);
    conf_check_children(c, q, "p", "a:processed f:pending ");
    SAYS(c->jobs, 0, ln_jobs_remove_unprocessed_children(c->jobs, q, "p", &removed));
    CHECK_EQ(removed, 0);
    SAYS(c->jobs, LN_ENOENT, ln_jobs_remove_unprocessed_children(c->jobs, q, "nope", &removed));
    SAYS(c->jobs, LN_EINVAL, ln_jobs_remove_unprocessed_children(c->jobs, q, NULL, NULL));
    conf_check_counts(c, q);
    conf_check_counts(c, kq);
}

/* A flow parent whose children all go is released from waiting-children,
 * as BullMQ moves it to wait. */
void case_flowmore_remove_unprocessed_releases(conf_ctx *c) {
    const char *q = c->queue;
    conf_tree t;
    const conf_tree_row rows[] = {{NULL, q, "parent", "r"},
                                  {"r", NULL, "k", "x"},
                                  {"x", NULL, "k", "x1"},
                                  {"r", NULL, "k", "y"}};
    ln_flow_node *root = CONF_TREE_MAKE(&t, rows);
    SAYS(c->jobs, 0, ln_jobs_add_flow(c->jobs, root, NULL, 0, 0));
    CHECK_EQ(conf_state(c, q, "r"), LN_JOB_WAITING_CHILDREN);
    size_t removed = 0;
    SAYS(c->jobs, 0, ln_jobs_remove_unprocessed_children(c->jobs, q, "r", &removed));
    CHECK_EQ(removed, 3);
    CHECK_EQ(conf_state(c, q, "r"), LN_JOB_WAITING);
    CHECK_EQ(conf_total(c, q), 1);
    conf_check_counts(c, q);
}

/* A held child is skipped with its subtree, as BullMQ skips a locked one:
 * it stays the parent's pending child (the parent is not released), its
 * own pending child stays; a held grandchild under a removed child stays
 * too, without its parent, and still completes. The job itself may run. */
void case_flowmore_remove_unprocessed_held(conf_ctx *c) {
    const char *q = c->queue, *hq = conf_queue(c, "held"), *kq = conf_queue(c, "kids");
    conf_add_kid(c, q, "p", "parent", NULL, NULL);
    conf_add_kid(c, hq, "h", "k", q, "p");
    conf_add_kid(c, kq, "b", "k", q, "p");
    conf_add_kid(c, q, "m", "k", q, "p");
    conf_add_kid(c, hq, "g", "k", q, "m");
    conf_hold h = {0};
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    wo.concurrency = 2;
    conf_bg *bg = conf_bg_start(c->jobs, hq, conf_hold_handler, &h, &wo);
    conf_hold_wait(&h, 2);
    conf_add_kid(c, kq, "hc", "k", hq, "h"); /* a child of the running h */
    size_t removed = 99;
    SAYS(c->jobs, 0, ln_jobs_remove_unprocessed_children(c->jobs, q, "p", &removed));
    CHECK_EQ(removed, 2);
    CHECK_EQ(conf_state(c, kq, "b"), LN_ENOENT);
    CHECK_EQ(conf_state(c, q, "m"), LN_ENOENT);
    CHECK_EQ(conf_state(c, hq, "h"), LN_JOB_ACTIVE);
    CHECK_EQ(conf_state(c, hq, "g"), LN_JOB_ACTIVE);
    CHECK_EQ(conf_state(c, kq, "hc"), LN_JOB_WAITING);
    conf_check_children(c, q, "p", "h:pending ");
    /* the running h's own pending child goes when h is the job */
    SAYS(c->jobs, 0, ln_jobs_remove_unprocessed_children(c->jobs, hq, "h", &removed));
    CHECK_EQ(removed, 1);
    CHECK_EQ(conf_state(c, kq, "hc"), LN_ENOENT);
    atomic_store(&h.release, 1);
    ln_worker_stats st;
    CHECK_EQ(conf_bg_join(bg, &st), 0);
    CHECK_EQ(st.completed, 2);
    CHECK_EQ(conf_state(c, hq, "h"), LN_JOB_COMPLETED);
    CHECK_EQ(conf_state(c, hq, "g"), LN_JOB_COMPLETED);
    CHECK_EQ(conf_state(c, q, "p"), LN_JOB_WAITING);
    SAYS(c->jobs, 0, ln_jobs_remove_unprocessed_children(c->jobs, q, "p", &removed));
    CHECK_EQ(removed, 0);
    conf_check_children(c, q, "p", "h:processed ");
    conf_check_counts(c, q);
    conf_check_counts(c, hq);
}

/* Past LN_JOBS_REMOVE_TREE_MAX entries (the job and the children it
 * records) the call is refused and nothing is removed; at the bound it
 * goes. */
void case_flowmore_remove_unprocessed_bound(conf_ctx *c) {
    const char *q = c->queue, *kq = conf_queue(c, "kids");
    conf_add_kid(c, q, "p", "parent", NULL, NULL);
    char id[32];
    for (int i = 0; i < LN_JOBS_REMOVE_TREE_MAX; i++) {
        snprintf(id, sizeof id, "k%d", i);
        conf_add_kid(c, kq, id, "k", q, "p");
    }
    size_t removed = 99;
    SAYS(c->jobs, LN_ETOOBIG, ln_jobs_remove_unprocessed_children(c->jobs, q, "p", &removed));
    CHECK_EQ(removed, 0);
    CHECK_EQ(conf_total(c, kq), LN_JOBS_REMOVE_TREE_MAX);
    CHECK_EQ(conf_state(c, kq, "k0"), LN_JOB_WAITING);
    CHECK_EQ(ln_jobs_remove(c->jobs, kq, "k0"), 0);
    SAYS(c->jobs, 0, ln_jobs_remove_unprocessed_children(c->jobs, q, "p", &removed));
    CHECK_EQ(removed, LN_JOBS_REMOVE_TREE_MAX - 1);
    CHECK_EQ(conf_total(c, kq), 0);
}
