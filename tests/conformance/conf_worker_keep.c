/* conf_worker_keep.c - a worker's retention (ln_worker_opts
 * remove_on_complete / remove_on_fail; BullMQ's worker options of those
 * names): it applies to the jobs the worker finishes whose own option is
 * not set (LN_KEEP_ALL), a job's own option wins, LN_KEEP_ALWAYS keeps a
 * job whatever the worker's, a count of 0 keeps none, a count larger than
 * any queue keeps every job, a failed parent's retention, and bad worker
 * options are refused. */
#include "conf.h"

static void add_keep(conf_ctx *c, const char *name, const char *id, int mode, int64_t value,
                     int fail_side) {
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.job_id = id;
    ln_job_keep k = {mode, value};
    if (fail_side)
        o.remove_on_fail = k;
    else
        o.remove_on_complete = k;
    conf_add(c, c->queue, name, "{}", &o, NULL);
}

static ln_worker_stats run_keep(conf_ctx *c, ln_job_keep on_complete, ln_job_keep on_fail) {
    ln_worker_opts o;
    conf_worker_opts(&o);
    o.remove_on_complete = on_complete;
    o.remove_on_fail = on_fail;
    return conf_run(c, c->queue, conf_handler_by_name, NULL, &o);
}

static uint64_t finished(conf_ctx *c, int failed) {
    ln_job_counts k;
    CHECK_EQ(ln_jobs_counts(c->jobs, c->queue, &k), 0);
    return failed ? k.failed : k.completed;
}

/* keep the newest 2 completed: five jobs without an option of their own. */
void case_worker_keep_count(conf_ctx *c) {
    const char *ids[] = {"a", "b", "c", "d", "e"};
    for (size_t i = 0; i < 5; i++) add_keep(c, "n", ids[i], LN_KEEP_ALL, 0, 0);
    ln_worker_stats st = run_keep(c, (ln_job_keep){LN_KEEP_COUNT, 2}, (ln_job_keep){0, 0});
    CHECK_EQ(st.completed, 5);
    CHECK_EQ(finished(c, 0), 2);
    conf_check_counts(c, c->queue);
}

/* Remove each as it completes, but a job's own option wins: one kept
 * always, one kept by its own count. */
void case_worker_keep_own_wins(conf_ctx *c) {
    add_keep(c, "n", "gone", LN_KEEP_ALL, 0, 0);
    add_keep(c, "n", "always", LN_KEEP_ALWAYS, 0, 0);
    add_keep(c, "n", "own", LN_KEEP_COUNT, 10, 0);
    ln_worker_stats st = run_keep(c, (ln_job_keep){LN_KEEP_NONE, 0}, (ln_job_keep){0, 0});
    CHECK_EQ(st.completed, 3);
    CHECK_EQ(conf_state(c, c->queue, "gone"), LN_ENOENT);
    CHECK_EQ(conf_state(c, c->queue, "always"), LN_JOB_COMPLETED);
    CHECK_EQ(conf_state(c, c->queue, "own"), LN_JOB_COMPLETED);
    conf_check_counts(c, c->queue);
}

/* The failure side: a job failed for good goes unless its own says keep;
 * completions are left alone by remove_on_fail. */
void case_worker_keep_fail(conf_ctx *c) {
    add_keep(c, "bad", "f1", LN_KEEP_ALL, 0, 1);
    add_keep(c, "bad", "f2", LN_KEEP_ALWAYS, 0, 1);
    add_keep(c, "n", "ok", LN_KEEP_ALL, 0, 0);
    ln_worker_stats st = run_keep(c, (ln_job_keep){0, 0}, (ln_job_keep){LN_KEEP_NONE, 0});
    CHECK_EQ(st.failed, 2);
    CHECK_EQ(conf_state(c, c->queue, "f1"), LN_ENOENT);
    CHECK_EQ(conf_state(c, c->queue, "f2"), LN_JOB_FAILED);
    CHECK_EQ(conf_state(c, c->queue, "ok"), LN_JOB_COMPLETED);
    conf_check_counts(c, c->queue);
}

/* An age of 0 keeps none (BullMQ's {age: 0}): the job completing goes too. */
void case_worker_keep_age(conf_ctx *c) {
    add_keep(c, "n", "x", LN_KEEP_ALL, 0, 0);
    add_keep(c, "n", "y", LN_KEEP_ALL, 0, 0);
    run_keep(c, (ln_job_keep){LN_KEEP_AGE, 0}, (ln_job_keep){0, 0});
    CHECK_EQ(finished(c, 0), 0);
    conf_check_counts(c, c->queue);
}

/* A worker's retention is LN_KEEP_ALL.._AGE with a value >= 0. */
void case_worker_keep_bad(conf_ctx *c) {
    ln_worker_opts o;
    conf_worker_opts(&o);
    ln_worker *w = NULL;
    o.remove_on_complete = (ln_job_keep){LN_KEEP_ALWAYS, 0};
    SAYS(c->jobs, LN_EINVAL,
         ln_worker_create(&w, c->jobs, c->queue, conf_handler_by_name, NULL, &o));
    o.remove_on_complete = (ln_job_keep){LN_KEEP_COUNT, -1};
    SAYS(c->jobs, LN_EINVAL,
         ln_worker_create(&w, c->jobs, c->queue, conf_handler_by_name, NULL, &o));
    o.remove_on_complete = (ln_job_keep){0, 0};
    o.remove_on_fail = (ln_job_keep){9, 0};
    SAYS(c->jobs, LN_EINVAL,
         ln_worker_create(&w, c->jobs, c->queue, conf_handler_by_name, NULL, &o));
    CHECK(w == NULL);
}

/* A retention count larger than any queue (jobs.h allows any value >= 0)
 * keeps every job, on both stores: on Redis a count past 1e17 reached the
 * trim as a Lua number Redis formats with an exponent, which ZREVRANGE
 * refused, and the whole step failed. */
void case_keep_huge_count(conf_ctx *c) {
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

/* A flow parent whose fail-parent child failed, with no retention of its
 * own, under a worker that removes what it fails: on Redis the parent
 * gets BullMQ's deferred failure and the worker taking it fails it with
 * its retention (BullMQ's worker does the same); SQLite fails it at once,
 * and must apply the same worker's retention. */
void case_keep_fpof_parent(conf_ctx *c) {
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

/* LN_KEEP_COUNT 0 keeps none: the job goes as it finishes. */
void case_spec_keep_count_zero(conf_ctx *c) {
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.remove_on_complete = (ln_job_keep){LN_KEEP_COUNT, 0};
    o.remove_on_fail = (ln_job_keep){LN_KEEP_COUNT, 0};
    char id1[LN_JOB_ID_MAX], id2[LN_JOB_ID_MAX];
    conf_add(c, c->queue, "ok", "1", &o, id1);
    conf_add(c, c->queue, "bad", "1", &o, id2);
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    conf_run(c, c->queue, conf_handler_by_name, NULL, &wo);
    CHECK_EQ(conf_state(c, c->queue, id1), LN_ENOENT);
    CHECK_EQ(conf_state(c, c->queue, id2), LN_ENOENT);
    CHECK_EQ(conf_total(c, c->queue), 0);
}
