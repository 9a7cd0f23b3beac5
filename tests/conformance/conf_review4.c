/* conf_review4.c - regressions found reviewing the worker's retention,
 * job logs, removeChildDependency and max_started_attempts: each case
 * failed on some store before its fix. */
#include "conf.h"

#include <stdint.h>

/* A retention count larger than any queue (jobs.h allows any value >= 0)
 * keeps every job, on both stores: on Redis a count past 1e17 reached the
 * trim as a Lua number Redis formats with an exponent, which ZREVRANGE
 * refused, and the whole step failed. */
void case_review4_keep_huge_count(conf_ctx *c) {
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.job_id = "own";
    o.remove_on_complete = (ln_job_keep){LN_KEEP_COUNT, INT64_MAX};
    conf_add(c, c->queue, "n", "{}", &o, NULL);
    o.job_id = "worker";
    o.remove_on_complete = (ln_job_keep){LN_KEEP_ALL, 0};
    conf_add(c, c->queue, "n", "{}", &o, NULL);
    o.job_id = "f1";
    o.remove_on_fail = (ln_job_keep){LN_KEEP_COUNT, (int64_t)1 << 60};
    conf_add(c, c->queue, "bad", "{}", &o, NULL);
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    wo.remove_on_complete = (ln_job_keep){LN_KEEP_COUNT, INT64_MAX};
    wo.remove_on_fail = (ln_job_keep){LN_KEEP_COUNT, INT64_MAX};
    ln_worker_stats st = conf_run(c, c->queue, conf_handler_by_name, NULL, &wo);
    CHECK_EQ(st.completed, 2);
    CHECK_EQ(st.failed, 1);
    CHECK_EQ(conf_state(c, c->queue, "own"), LN_JOB_COMPLETED);
    CHECK_EQ(conf_state(c, c->queue, "worker"), LN_JOB_COMPLETED);
    CHECK_EQ(conf_state(c, c->queue, "f1"), LN_JOB_FAILED);
    conf_check_counts(c, c->queue);
}

/* A clear or an add whose keep is larger than any list (jobs_edit.h takes
 * any size_t) keeps every line, on both stores: on Redis a keep past 1e17
 * reached LTRIM written with an exponent, which Redis refused. */
void case_review4_logs_huge_keep(conf_ctx *c) {
    char id[LN_JOB_ID_MAX];
    conf_add(c, c->queue, "n", "{}", NULL, id);
    size_t n = 0;
    CHECK_EQ(ln_jobs_add_log(c->jobs, c->queue, id, "a", 0, &n), 0);
    CHECK_EQ(ln_jobs_add_log(c->jobs, c->queue, id, "b", SIZE_MAX, &n), 0);
    CHECK_EQ(n, 2);
    SAYS(c->jobs, 0, ln_jobs_clear_logs(c->jobs, c->queue, id, SIZE_MAX));
    SAYS(c->jobs, 0, ln_jobs_clear_logs(c->jobs, c->queue, id, (size_t)1 << 57));
    char **lines = NULL;
    CHECK_EQ(ln_jobs_logs(c->jobs, c->queue, id, &lines, &n), 0);
    CHECK_EQ(n, 2);
    CONF_CHECK_STR(lines[0], "a");
    CONF_CHECK_STR(lines[1], "b");
    ln_jobs_free_lines(lines, n);
}

/* A flow parent whose fail-parent child failed, with no retention of its
 * own, under a worker that removes what it fails: on Redis the parent
 * gets BullMQ's deferred failure and the worker taking it fails it with
 * its retention (BullMQ's worker does the same); SQLite fails it at once,
 * and must apply the same worker's retention. */
void case_review4_keep_fpof_parent(conf_ctx *c) {
    ln_job_opts po, ko;
    ln_flow_node kid = conf_flow_node(NULL, "bad", "kid", &ko);
    kid.fail_parent_on_failure = 1;
    ln_flow_node root = conf_flow_node(c->queue, "n", "par", &po);
    root.children = &kid;
    root.nchildren = 1;
    SAYS(c->jobs, 0, ln_jobs_add_flow(c->jobs, &root, NULL, 0, 0));
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    wo.remove_on_fail = (ln_job_keep){LN_KEEP_NONE, 0};
    conf_run(c, c->queue, conf_handler_by_name, NULL, &wo);
    CHECK_EQ(conf_state(c, c->queue, "kid"), LN_ENOENT);
    CHECK_EQ(conf_state(c, c->queue, "par"), LN_ENOENT);
    conf_check_counts(c, c->queue);
    /* A chain: the failure climbs, each parent of the worker's queue
     * removed the same way; the root in another queue is not this
     * worker's to remove (Redis: it waits there with its deferred failure,
     * SQLite: failed at once, kept by its own retention). */
    const char *q2 = conf_queue(c, "top");
    ln_job_opts o[4];
    ln_flow_node leaf = conf_flow_node(NULL, "bad", "leaf", &o[0]);
    leaf.fail_parent_on_failure = 1;
    ln_flow_node mid = conf_flow_node(NULL, "n", "mid", &o[1]);
    mid.fail_parent_on_failure = 1;
    mid.children = &leaf;
    mid.nchildren = 1;
    ln_flow_node top = conf_flow_node(NULL, "n", "top", &o[2]);
    top.fail_parent_on_failure = 1;
    top.children = &mid;
    top.nchildren = 1;
    ln_flow_node far = conf_flow_node(q2, "n", "far", &o[3]);
    top.queue = c->queue;
    far.children = &top;
    far.nchildren = 1;
    SAYS(c->jobs, 0, ln_jobs_add_flow(c->jobs, &far, NULL, 0, 0));
    conf_run(c, c->queue, conf_handler_by_name, NULL, &wo);
    CHECK_EQ(conf_state(c, c->queue, "leaf"), LN_ENOENT);
    CHECK_EQ(conf_state(c, c->queue, "mid"), LN_ENOENT);
    CHECK_EQ(conf_state(c, c->queue, "top"), LN_ENOENT);
    CHECK(conf_state(c, q2, "far") >= 0);
    conf_check_counts(c, c->queue);
    conf_check_counts(c, q2);
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
void case_review4_detach_tree(conf_ctx *c) {
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
