/* conf_flows.c - flows (jobs.h "Flows"): a tree added at once, parents
 * released by their children's completions, the children's results read
 * in the parent's handler, the four failure options, a parent that
 * refuses to complete while a child is pending, and a flow whose root
 * names an existing parent (it becomes that parent's pending child). */
#include "conf.h"
#include "conf_flowtree.h"

#include <stdlib.h>

/* What a parent's handler saw (one worker thread at a time). */
typedef struct seen {
    int parents;         /* parent runs */
    size_t n;            /* children of the last parent run */
    char values[1024];   /* "<id>=<value> " per processed child, in order */
    char failed[512];    /* "<id>=<reason> " per failed child */
    char pending[256];   /* "<id> " per pending child */
    char parent_of[128]; /* a child's ln_jobs_children parent ("q/id") */
} seen;

static void append(char *buf, size_t size, const char *a, const char *b) {
    size_t len = strlen(buf);
    snprintf(buf + len, size - len, b != NULL ? "%s=%s " : "%s ", a, b);
}

/* Jobs named "parent*" read their children and complete with how many
 * they have; others go by conf_handler_by_name ("bad" fails). */
static int flow_handler(ln_job *job, void *ctx) {
    seen *s = ctx;
    if (strncmp(ln_job_name(job), "parent", 6) != 0) {
        ln_job_children rel;
        if (ln_job_children_read(job, &rel) == 0 && rel.parent_id != NULL)
            snprintf(s->parent_of, sizeof s->parent_of, "%s/%s", rel.parent_queue, rel.parent_id);
        ln_job_children_clear(&rel);
        return conf_handler_by_name(job, NULL);
    }
    ln_job_children rel;
    int rc = ln_job_children_read(job, &rel);
    if (rc != 0) return ln_job_fail(job, "children unreadable");
    s->parents++;
    s->n = rel.n;
    s->values[0] = s->failed[0] = s->pending[0] = '\0';
    for (size_t i = 0; i < rel.n; i++) {
        const ln_job_child *ch = &rel.children[i];
        if (ch->status == LN_CHILD_PROCESSED)
            append(s->values, sizeof s->values, ch->id, ch->value);
        else if (ch->status == LN_CHILD_FAILED)
            append(s->failed, sizeof s->failed, ch->id, ch->value);
        else if (ch->status == LN_CHILD_PENDING)
            append(s->pending, sizeof s->pending, ch->id, NULL);
    }
    char out[32];
    snprintf(out, sizeof out, "%zu", rel.n);
    ln_job_children_clear(&rel);
    return ln_job_set_result(job, out);
}

/* Run every job of queue that is ready, until none is. */
static void run_all(conf_ctx *c, const char *queue, seen *s) {
    ln_worker_opts o;
    conf_worker_opts(&o);
    conf_run(c, queue, flow_handler, s, &o);
}

static void add_flow(conf_ctx *c, const ln_flow_node *root, size_t nnodes) {
    char ids[16][LN_JOB_ID_MAX];
    int rc = ln_jobs_add_flow(c->jobs, root, ids[0], nnodes, sizeof ids[0]);
    if (rc != 0) fprintf(stderr, "add_flow: %s\n", ln_jobs_errmsg(c->jobs));
    CHECK_EQ(rc, 0);
}

/* A parent with three children waits for them, then reads every
 * child's result in its handler. */
void case_flow_parent_after_children(conf_ctx *c) {
    ln_job_opts po, ko[3];
    ln_flow_node kids[3] = {conf_flow_node(NULL, "k", "k1", &ko[0]),
                            conf_flow_node(NULL, "k", "k2", &ko[1]),
                            conf_flow_node(NULL, "k", "k3", &ko[2])};
    kids[0].data_json = "1";
    kids[1].data_json = "[2]";
    kids[2].data_json = "{\"x\":3}";
    ln_flow_node root = conf_flow_node(c->queue, "parent", "p", &po);
    root.children = kids;
    root.nchildren = 3;
    add_flow(c, &root, 4);
    CHECK_EQ(conf_state(c, c->queue, "p"), LN_JOB_WAITING_CHILDREN);
    ln_job_counts k;
    CHECK_EQ(ln_jobs_counts(c->jobs, c->queue, &k), 0);
    CHECK_EQ(k.waiting_children, 1);
    CHECK_EQ(k.waiting, 3);
    conf_check_counts(c, c->queue);
    ln_job_children rel;
    CHECK_EQ(ln_jobs_children(c->jobs, c->queue, "p", &rel), 0);
    CHECK_EQ(rel.n, 3);
    CHECK_EQ(rel.children[0].status, LN_CHILD_PENDING);
    ln_job_children_clear(&rel);
    seen s = {0};
    run_all(c, c->queue, &s);
    CHECK_EQ(s.parents, 1);
    CHECK_EQ(s.n, 3);
    CONF_CHECK_STR(s.values, "k1={\"ok\":1} k2={\"ok\":[2]} k3={\"ok\":{\"x\":3}} ");
    char want[160];
    snprintf(want, sizeof want, "%s/p", c->queue);
    CONF_CHECK_STR(s.parent_of, want);
    CHECK_EQ(conf_state(c, c->queue, "p"), LN_JOB_COMPLETED);
    CHECK_EQ(ln_jobs_children(c->jobs, c->queue, "k2", &rel), 0);
    CONF_CHECK_STR(rel.parent_id, "p");
    CONF_CHECK_STR(rel.parent_queue, c->queue);
    CHECK_EQ(rel.n, 0);
    ln_job_children_clear(&rel);
    conf_check_counts(c, c->queue);
}

/* Three levels over three queues: leaves, then the middle, then the
 * root, each released by the level below. */
void case_flow_nested(conf_ctx *c) {
    const char *q2 = conf_queue(c, "mid"), *q3 = conf_queue(c, "leaf");
    ln_job_opts ro, mo, lo[2];
    ln_flow_node leaves[2] = {conf_flow_node(q3, "leaf", "l1", &lo[0]),
                              conf_flow_node(q3, "leaf", "l2", &lo[1])};
    ln_flow_node mid = conf_flow_node(q2, "parent-mid", "m", &mo);
    mid.children = leaves;
    mid.nchildren = 2;
    ln_flow_node root = conf_flow_node(c->queue, "parent-root", "r", &ro);
    root.children = &mid;
    root.nchildren = 1;
    char ids[4][LN_JOB_ID_MAX];
    CHECK_EQ(ln_jobs_add_flow(c->jobs, &root, ids[0], 4, sizeof ids[0]), 0);
    CONF_CHECK_STR(ids[0], "r");
    CONF_CHECK_STR(ids[1], "m");
    CONF_CHECK_STR(ids[3], "l2");
    CHECK_EQ(conf_state(c, q2, "m"), LN_JOB_WAITING_CHILDREN);
    seen s = {0};
    run_all(c, c->queue, &s); /* nothing ready yet */
    CHECK_EQ(s.parents, 0);
    run_all(c, q3, &s);
    CHECK_EQ(conf_state(c, q2, "m"), LN_JOB_WAITING);
    CHECK_EQ(conf_state(c, c->queue, "r"), LN_JOB_WAITING_CHILDREN);
    run_all(c, q2, &s);
    CHECK_EQ(s.parents, 1);
    CONF_CHECK_STR(s.values, "l1={\"ok\":{}} l2={\"ok\":{}} ");
    run_all(c, c->queue, &s);
    CHECK_EQ(s.parents, 2);
    CONF_CHECK_STR(s.values, "m=2 ");
    CHECK_EQ(conf_state(c, c->queue, "r"), LN_JOB_COMPLETED);
}

/* A root with one child "bad" (with the option set by 'opt') and one
 * good child "k"; run every job of the queue. */
static void run_failing(conf_ctx *c, int opt, seen *s) {
    ln_job_opts po, ko[2];
    ln_flow_node kids[2] = {conf_flow_node(NULL, "bad", "b", &ko[0]),
                            conf_flow_node(NULL, "k", "k", &ko[1])};
    kids[0].fail_parent_on_failure = opt == 1;
    kids[0].continue_parent_on_failure = opt == 2;
    kids[0].ignore_dependency_on_failure = opt == 3;
    kids[0].remove_dependency_on_failure = opt == 4;
    ln_flow_node root = conf_flow_node(c->queue, "parent", "p", &po);
    root.children = kids;
    root.nchildren = 2;
    add_flow(c, &root, 3);
    run_all(c, c->queue, s);
}

/* fail_parent_on_failure: the parent fails without running. */
void case_flow_fail_parent(conf_ctx *c) {
    seen s = {0};
    run_failing(c, 1, &s);
    CHECK_EQ(s.parents, 0);
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, "p", &info), 0);
    CHECK_EQ(info.state, LN_JOB_FAILED);
    CONF_CHECK_HAS(info.failed_reason, "child ");
    CONF_CHECK_HAS(info.failed_reason, ":b failed");
    ln_job_info_clear(&info);
    ln_job_children rel;
    CHECK_EQ(ln_jobs_children(c->jobs, c->queue, "p", &rel), 0);
    int unsuccessful = 0;
    for (size_t i = 0; i < rel.n; i++)
        unsuccessful += rel.children[i].status == LN_CHILD_UNSUCCESSFUL;
    CHECK_EQ(unsuccessful, 1);
    ln_job_children_clear(&rel);
    conf_check_counts(c, c->queue);
}

/* ignore_dependency_on_failure: the parent completes, the failure read. */
void case_flow_ignore_dependency(conf_ctx *c) {
    seen s = {0};
    run_failing(c, 3, &s);
    CHECK_EQ(s.parents, 1);
    CONF_CHECK_STR(s.values, "k={\"ok\":{}} ");
    CONF_CHECK_STR(s.failed, "b=nope ");
    CHECK_EQ(conf_state(c, c->queue, "p"), LN_JOB_COMPLETED);
}

/* remove_dependency_on_failure: the parent completes, nothing recorded. */
void case_flow_remove_dependency(conf_ctx *c) {
    seen s = {0};
    run_failing(c, 4, &s);
    CHECK_EQ(s.parents, 1);
    CHECK_EQ(s.n, 1);
    CONF_CHECK_STR(s.failed, "");
    CHECK_EQ(conf_state(c, c->queue, "p"), LN_JOB_COMPLETED);
}

/* No option: the failed child stays a dependency; the parent waits. */
void case_flow_failure_keeps_parent_waiting(conf_ctx *c) {
    seen s = {0};
    run_failing(c, 0, &s);
    CHECK_EQ(s.parents, 0);
    CHECK_EQ(conf_state(c, c->queue, "p"), LN_JOB_WAITING_CHILDREN);
    CHECK_EQ(conf_state(c, c->queue, "b"), LN_JOB_FAILED);
    conf_check_counts(c, c->queue);
}

/* continue_parent_on_failure: the parent runs at once, with its other
 * child (in another queue, not run) still pending; its completion is
 * refused, and with one attempt it fails. */
void case_flow_continue_parent_refused(conf_ctx *c) {
    const char *other = conf_queue(c, "other");
    ln_job_opts po, ko[2];
    ln_flow_node kids[2] = {conf_flow_node(NULL, "bad", "b", &ko[0]),
                            conf_flow_node(other, "k", "k", &ko[1])};
    kids[0].continue_parent_on_failure = 1;
    ln_flow_node root = conf_flow_node(c->queue, "parent", "p", &po);
    root.children = kids;
    root.nchildren = 2;
    add_flow(c, &root, 3);
    seen s = {0};
    run_all(c, c->queue, &s);
    CHECK_EQ(s.parents, 1);
    CONF_CHECK_STR(s.failed, "b=nope ");
    CONF_CHECK_STR(s.pending, "k ");
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, "p", &info), 0);
    CHECK_EQ(info.state, LN_JOB_FAILED);
    CONF_CHECK_HAS(info.failed_reason, "has pending dependencies");
    CHECK(info.result == NULL);
    ln_job_info_clear(&info);
    CHECK_EQ(conf_state(c, other, "k"), LN_JOB_WAITING);
    conf_check_counts(c, c->queue);
}

/* Bad flows store nothing. */
void case_flow_bad_input(conf_ctx *c) {
    ln_job_opts po, ko, dup;
    ln_flow_node kid = conf_flow_node(NULL, "k", "k", &ko);
    ln_flow_node root = conf_flow_node(c->queue, "parent", "p", &po);
    root.children = &kid;
    root.nchildren = 1;
    char ids[2][LN_JOB_ID_MAX];
    CHECK_EQ(ln_jobs_add_flow(c->jobs, &root, ids[0], 1, sizeof ids[0]), LN_ERANGE);
    ko.dedup_id = "d";
    CHECK_EQ(ln_jobs_add_flow(c->jobs, &root, ids[0], 2, sizeof ids[0]), LN_EINVAL);
    CONF_CHECK_HAS(ln_jobs_errmsg(c->jobs), "flow node 1");
    ko.dedup_id = NULL;
    root.nchildren = 2; /* children NULL-checked only as a count: 2 > 1 */
    root.children = NULL;
    CHECK_EQ(ln_jobs_add_flow(c->jobs, &root, ids[0], 2, sizeof ids[0]), LN_EINVAL);
    root.children = &kid;
    root.nchildren = 1;
    ln_job_opts_init(&dup);
    dup.job_id = "k";
    conf_add(c, c->queue, "x", NULL, &dup, NULL);
    CHECK_EQ(ln_jobs_add_flow(c->jobs, &root, ids[0], 2, sizeof ids[0]), LN_EINVAL);
    CHECK_EQ(conf_state(c, c->queue, "p"), LN_ENOENT);
    kid.queue = c->queue; /* a flow of one node with that id: refused too */
    CHECK_EQ(ln_jobs_add_flow(c->jobs, &kid, ids[0], 1, sizeof ids[0]), LN_EINVAL);
    kid.queue = NULL;
    CHECK_EQ(conf_total(c, c->queue), 1);
    CHECK_EQ(ln_jobs_add_flow(c->jobs, NULL, NULL, 0, 0), LN_EINVAL);
    /* Past the limits: LN_FLOW_DEPTH_MAX + 1 levels, LN_FLOW_NODES_MAX + 1 nodes. */
    ln_flow_node *many = calloc(LN_FLOW_NODES_MAX + 1, sizeof *many);
    CHECK(many != NULL);
    for (int i = 0; i <= LN_FLOW_DEPTH_MAX; i++) {
        many[i].name = "deep";
        many[i].queue = c->queue;
        many[i].children = i < LN_FLOW_DEPTH_MAX ? &many[i + 1] : NULL;
        many[i].nchildren = i < LN_FLOW_DEPTH_MAX;
    }
    CHECK_EQ(ln_jobs_add_flow(c->jobs, &many[0], NULL, 0, 0), LN_EINVAL);
    CONF_CHECK_HAS(ln_jobs_errmsg(c->jobs), "levels");
    memset(many, 0, (LN_FLOW_NODES_MAX + 1) * sizeof *many);
    for (int i = 0; i <= LN_FLOW_NODES_MAX; i++) many[i].name = "wide";
    many[0].queue = c->queue;
    many[0].children = &many[1];
    many[0].nchildren = LN_FLOW_NODES_MAX;
    CHECK_EQ(ln_jobs_add_flow(c->jobs, &many[0], NULL, 0, 0), LN_EINVAL);
    CONF_CHECK_HAS(ln_jobs_errmsg(c->jobs), "at most");
    many[0].nchildren = LN_FLOW_NODES_MAX - 1; /* exactly the most */
    CHECK_EQ(ln_jobs_add_flow(c->jobs, &many[0], NULL, 0, 0), 0);
    free(many);
    CHECK_EQ(conf_total(c, c->queue), 1 + LN_FLOW_NODES_MAX);
}

/* A parent with a delay goes to delayed when its children are done (by
 * its own delay from then), one with a priority to prioritized. */
void case_flow_parent_delay_priority(conf_ctx *c) {
    ln_job_opts po, qo, ko[2];
    ln_flow_node k1 = conf_flow_node(NULL, "k", "k1", &ko[0]),
                 k2 = conf_flow_node(NULL, "k", "k2", &ko[1]);
    ln_flow_node r1 = conf_flow_node(c->queue, "parent", "late", &po),
                 r2 = conf_flow_node(c->queue, "parent", "prio", &qo);
    po.delay_ms = 600000;
    qo.priority = 7;
    r1.children = &k1;
    r1.nchildren = 1;
    r2.children = &k2;
    r2.nchildren = 1;
    add_flow(c, &r1, 2);
    add_flow(c, &r2, 2);
    CHECK_EQ(conf_state(c, c->queue, "late"), LN_JOB_WAITING_CHILDREN);
    seen s = {0};
    ln_worker_opts o;
    conf_worker_opts(&o);
    o.max_jobs = 2; /* the children only */
    conf_run(c, c->queue, flow_handler, &s, &o);
    CHECK_EQ(s.parents, 0);
    CHECK_EQ(conf_state(c, c->queue, "late"), LN_JOB_DELAYED);
    CHECK_EQ(conf_state(c, c->queue, "prio"), LN_JOB_PRIORITIZED);
    conf_check_counts(c, c->queue);
}

/* Removing a pending child drops the dependency; the last one releases
 * the parent (BullMQ's removeJob). */
void case_flow_remove_child_releases_parent(conf_ctx *c) {
    ln_job_opts po, ko[2];
    ln_flow_node kids[2] = {conf_flow_node(NULL, "k", "k1", &ko[0]),
                            conf_flow_node(NULL, "k", "k2", &ko[1])};
    ln_flow_node root = conf_flow_node(c->queue, "parent", "p", &po);
    root.children = kids;
    root.nchildren = 2;
    add_flow(c, &root, 3);
    CHECK_EQ(ln_jobs_remove(c->jobs, c->queue, "k1"), 0);
    CHECK_EQ(conf_state(c, c->queue, "p"), LN_JOB_WAITING_CHILDREN);
    ln_job_children rel;
    CHECK_EQ(ln_jobs_children(c->jobs, c->queue, "p", &rel), 0);
    CHECK_EQ(rel.n, 1);
    CONF_CHECK_STR(rel.children[0].id, "k2");
    ln_job_children_clear(&rel);
    CHECK_EQ(ln_jobs_remove(c->jobs, c->queue, "k2"), 0);
    CHECK_EQ(conf_state(c, c->queue, "p"), LN_JOB_WAITING);
    conf_check_counts(c, c->queue);
}

/* A flow whose root names an existing parent: the root becomes its
 * pending child, in the flow's one step; its result reaches the parent
 * when the tree finishes. A missing parent refuses the whole flow. */
void case_flowmore_flow_root_parent(conf_ctx *c) {
    const char *q = c->queue, *kq = conf_queue(c, "tree");
    conf_add_kid(c, q, "p", "parent", NULL, NULL);
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
