/* conf_flowmore.c - three flow calls of BullMQ 6.7: removing a parent's
 * unprocessed children (ln_jobs_remove_unprocessed_children), waiting for
 * one given child (ln_job_wait_child) and a flow whose root has a parent
 * (ln_flow_node's root with opts.parent_*). */
#include "conf_flowtree.h"

/* Add job id (name, data) to queue with parent (pq, pid) or none. */
static void add_kid(conf_ctx *c, const char *queue, const char *id, const char *name,
                    const char *pq, const char *pid) {
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.job_id = id;
    o.parent_queue = pq;
    o.parent_id = pid;
    conf_add(c, queue, name, "1", &o, NULL);
}

/* Only the pending children go, with their own pending children: the
 * processed one and the failed one (still a dependency) stay, as the
 * parent's records of them; the parent (waiting: it was added plainly)
 * is not moved. */
void case_flowmore_remove_unprocessed(conf_ctx *c) {
    const char *q = c->queue, *kq = conf_queue(c, "kids");
    add_kid(c, q, "p", "parent", NULL, NULL);
    add_kid(c, kq, "a", "k", q, "p");
    add_kid(c, kq, "f", "bad", q, "p");
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    conf_run(c, kq, conf_handler_by_name, NULL, &wo);
    CHECK_EQ(conf_state(c, kq, "a"), LN_JOB_COMPLETED);
    CHECK_EQ(conf_state(c, kq, "f"), LN_JOB_FAILED);
    add_kid(c, kq, "b", "k", q, "p");
    add_kid(c, q, "m", "k", q, "p");
    add_kid(c, kq, "m1", "k", q, "m");
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
    add_kid(c, q, "p", "parent", NULL, NULL);
    add_kid(c, hq, "h", "k", q, "p");
    add_kid(c, kq, "b", "k", q, "p");
    add_kid(c, q, "m", "k", q, "p");
    add_kid(c, hq, "g", "k", q, "m");
    conf_hold h = {0};
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    wo.concurrency = 2;
    conf_bg *bg = conf_bg_start(c->jobs, hq, conf_hold_handler, &h, &wo);
    conf_hold_wait(&h, 2);
    add_kid(c, kq, "hc", "k", hq, "h"); /* a child of the running h */
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
    add_kid(c, q, "p", "parent", NULL, NULL);
    char id[32];
    for (int i = 0; i < LN_JOBS_REMOVE_TREE_MAX; i++) {
        snprintf(id, sizeof id, "k%d", i);
        add_kid(c, kq, id, "k", q, "p");
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

/* The handler of the wait_child case: what each call answered. */
typedef struct one_child {
    conf_ctx *c;
    const char *kq, *dq;
    int rc_not_kid, rc_done, rc_pending, rc_again, state_done, state_after;
} one_child;

static int one_child_handler(ln_job *job, void *ctx) {
    one_child *s = ctx;
    const char *me_q = ln_job_queue(job), *me = ln_job_id(job);
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.job_id = "k1";
    o.parent_queue = me_q;
    o.parent_id = me;
    if (ln_jobs_add(s->c->jobs, s->kq, "k", "1", &o, NULL, 0) != 0) return ln_job_fail(job, "k1");
    o.job_id = "done1"; /* completed already: attached with its result */
    if (ln_jobs_add(s->c->jobs, s->dq, "k", "2", &o, NULL, 0) != 0)
        return ln_job_fail(job, "done1");
    s->rc_not_kid = ln_job_wait_child(job, s->kq, "nope");
    s->rc_done = ln_job_wait_child(job, s->dq, "done1");
    s->state_done = conf_state(s->c, me_q, me);
    s->rc_pending = ln_job_wait_child(job, s->kq, "k1");
    s->state_after = conf_state(s->c, me_q, me);
    s->rc_again = ln_job_wait_child(job, s->kq, "k1");
    return ln_job_fail(job, "ignored: the job waits");
}

/* Only the child named counts: a done one or a stranger leaves the job
 * active although another child is pending; a pending one moves it. */
void case_flowmore_wait_child(conf_ctx *c) {
    one_child s = {.c = c, .kq = conf_queue(c, "kids"), .dq = conf_queue(c, "done")};
    add_kid(c, s.dq, "done1", "k", NULL, NULL);
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    conf_run(c, s.dq, conf_handler_by_name, NULL, &wo);
    add_kid(c, c->queue, "p", "parent", NULL, NULL);
    ln_worker_stats st = conf_run(c, c->queue, one_child_handler, &s, &wo);
    CHECK_EQ(s.rc_not_kid, 0);
    CHECK_EQ(s.rc_done, 0);
    CHECK_EQ(s.state_done, LN_JOB_ACTIVE);
    CHECK_EQ(s.rc_pending, 1);
    CHECK_EQ(s.state_after, LN_JOB_WAITING_CHILDREN);
    CHECK_EQ(s.rc_again, LN_ESTALE);
    CHECK_EQ(st.waited, 1);
    CHECK_EQ(st.failed, 0);
    conf_run(c, s.kq, conf_handler_by_name, NULL, &wo);
    CHECK_EQ(conf_state(c, c->queue, "p"), LN_JOB_WAITING);
    conf_check_counts(c, c->queue);
}

/* A flow whose root names an existing parent: the root becomes its
 * pending child, in the flow's one step; its result reaches the parent
 * when the tree finishes. A missing parent refuses the whole flow. */
void case_flowmore_flow_root_parent(conf_ctx *c) {
    const char *q = c->queue, *kq = conf_queue(c, "tree");
    add_kid(c, q, "p", "parent", NULL, NULL);
    conf_tree t;
    const conf_tree_row rows[] = {{NULL, kq, "k", "r"}, {"r", NULL, "k", "x"}};
    ln_flow_node *root = CONF_TREE_MAKE(&t, rows);
    ln_job_opts *ro = conf_tree_opts(&t, "r"), *xo = conf_tree_opts(&t, "x");
    ro->parent_queue = q;
    ro->parent_id = "nope";
    SAYS(c->jobs, LN_ENOENT, ln_jobs_add_flow(c->jobs, root, NULL, 0, 0));
    CONF_CHECK_HAS(ln_jobs_errmsg(c->jobs), "missing key for parent job");
    CHECK_EQ(conf_total(c, kq), 0);
    ro->parent_id = "p";
    xo->parent_queue = q; /* only the root may have one */
    xo->parent_id = "p";
    SAYS(c->jobs, LN_EINVAL, ln_jobs_add_flow(c->jobs, root, NULL, 0, 0));
    xo->parent_queue = xo->parent_id = NULL;
    ro->parent_queue = kq;
    ro->parent_id = "r";
    SAYS(c->jobs, LN_EINVAL, ln_jobs_add_flow(c->jobs, root, NULL, 0, 0)); /* itself */
    ro->parent_queue = q;
    ro->parent_id = "p";
    SAYS(c->jobs, 0, ln_jobs_add_flow(c->jobs, root, NULL, 0, 0));
    CHECK_EQ(conf_state(c, kq, "r"), LN_JOB_WAITING_CHILDREN);
    CHECK_EQ(conf_state(c, q, "p"), LN_JOB_WAITING);
    ln_job_opts lo;
    ln_flow_node lone = conf_flow_node(kq, "bad", "s", &lo); /* a root alone, */
    lo.parent_queue = q;
    lo.parent_id = "p";
    lo.ignore_dependency_on_failure = 1; /* its failure options in its opts */
    SAYS(c->jobs, 0, ln_jobs_add_flow(c->jobs, &lone, NULL, 0, 0));
    ln_job_children rel;
    CHECK_EQ(ln_jobs_children(c->jobs, kq, "r", &rel), 0);
    CONF_CHECK_STR(rel.parent_queue, q);
    CONF_CHECK_STR(rel.parent_id, "p");
    ln_job_children_clear(&rel);
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    conf_run(c, kq, conf_handler_by_name, NULL, &wo);
    CHECK_EQ(conf_state(c, kq, "r"), LN_JOB_COMPLETED);
    CHECK_EQ(ln_jobs_children(c->jobs, q, "p", &rel), 0);
    CHECK_EQ(rel.n, 2);
    if (rel.n == 2) {
        CONF_CHECK_STR(rel.children[0].id, "r");
        CHECK_EQ(rel.children[0].status, LN_CHILD_PROCESSED);
        CONF_CHECK_STR(rel.children[0].value, "{\"ok\":{}}");
        CONF_CHECK_STR(rel.children[1].id, "s");
        CHECK_EQ(rel.children[1].status, LN_CHILD_FAILED);
        CONF_CHECK_STR(rel.children[1].value, "nope");
    }
    CHECK_EQ(conf_state(c, q, "p"), LN_JOB_WAITING);
    ln_job_children_clear(&rel);
    conf_check_counts(c, q);
    conf_check_counts(c, kq);
}
