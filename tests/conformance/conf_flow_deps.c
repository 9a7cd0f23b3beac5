/* conf_flow_deps.c - a flow parent's pending dependencies when a child
 * goes or comes back, each as BullMQ 6.7 behaves: cleaning or removing (or
 * trimming by retention) a flow child that failed and is still pending
 * releases a parent it was the last dependency of, a clean takes a parent
 * of the same queue, and a retried child whose failure its parent ignored
 * or continued past is a pending dependency again. Also a parent waiting
 * for its children (what it refuses), a child canceled before or while it
 * runs (a final failure its parent sees), and a parent removed before its
 * children finish (they run on as jobs of no flow). */
#include "conf.h"

/* A parent in queue pq with children kids (in c->queue); ids[0] the
 * parent's, then the children's. */
static void flow(conf_ctx *c, const char *pq, ln_flow_node *kids, size_t n,
                 char ids[][LN_JOB_ID_MAX]) {
    ln_flow_node root = {.queue = pq, .name = "parent", .children = kids, .nchildren = n};
    for (size_t i = 0; i < n; i++)
        if (kids[i].queue == NULL) kids[i].queue = c->queue;
    CHECK_EQ(ln_jobs_add_flow(c->jobs, &root, ids[0], n + 1, LN_JOB_ID_MAX), 0);
}

static void run_children(conf_ctx *c) {
    ln_worker_opts w;
    conf_worker_opts(&w);
    conf_run(c, c->queue, conf_handler_by_name, NULL, &w);
}

/* Status of the child id (of c->queue) of parent pid (pq), or -1. */
static int child_status(conf_ctx *c, const char *pq, const char *pid, const char *id) {
    ln_job_children ch;
    CHECK_EQ(ln_jobs_children(c->jobs, pq, pid, &ch), 0);
    int st = -1;
    for (size_t i = 0; i < ch.n; i++)
        if (ch.children[i].id && strcmp(ch.children[i].id, id) == 0 && ch.children[i].queue &&
            strcmp(ch.children[i].queue, c->queue) == 0)
            st = ch.children[i].status;
    ln_job_children_clear(&ch);
    return st;
}

/* A child that failed with the default options stays a pending
 * dependency; cleaning or removing it leaves its parent without one, and
 * the parent goes on: one of another queue (clean, remove) or of the
 * child's queue (remove). */
void case_failed_child_gone_releases_parent(conf_ctx *c) {
    for (int how = 0; how < 3; how++) {
        const char *pq = how < 2 ? conf_queue(c, "p") : c->queue;
        ln_flow_node kid = {.name = "bad"};
        char ids[2][LN_JOB_ID_MAX];
        flow(c, pq, &kid, 1, ids);
        run_children(c);
        CHECK_EQ(conf_state(c, c->queue, ids[1]), LN_JOB_FAILED);
        CHECK_EQ(conf_state(c, pq, ids[0]), LN_JOB_WAITING_CHILDREN);
        CHECK_EQ(child_status(c, pq, ids[0], ids[1]), LN_CHILD_PENDING);
        if (how == 0) {
            size_t removed = 0;
            CHECK_EQ(ln_jobs_clean(c->jobs, c->queue, LN_JOB_FAILED, -1, 0, &removed), 0);
            CHECK_EQ(removed, 1);
        } else {
            CHECK_EQ(ln_jobs_remove(c->jobs, c->queue, ids[1]), 0);
        }
        CHECK_EQ(conf_state(c, c->queue, ids[1]), LN_ENOENT);
        CHECK_EQ(conf_state(c, pq, ids[0]), LN_JOB_WAITING);
        CHECK_EQ(child_status(c, pq, ids[0], ids[1]), -1);
    }
}

/* A clean removes for good, as BullMQ's clean does: a parent of the
 * same queue that the cleaned child was the last dependency of goes
 * with it, and so would its own parent of that queue in turn; one of
 * another queue is released. A remove only releases (the case above). */
void case_clean_takes_parent_of_same_queue(conf_ctx *c) {
    const char *oq = conf_queue(c, "o");
    ln_flow_node kid = {.queue = c->queue, .name = "bad"};
    ln_flow_node mid = {.queue = c->queue, .name = "mid", .children = &kid, .nchildren = 1};
    ln_flow_node top = {.queue = oq, .name = "top", .children = &mid, .nchildren = 1};
    char ids[3][LN_JOB_ID_MAX];
    CHECK_EQ(ln_jobs_add_flow(c->jobs, &top, ids[0], 3, LN_JOB_ID_MAX), 0);
    char other[3][LN_JOB_ID_MAX]; /* a parent of this queue, its two children */
    ln_flow_node kids[2] = {{.name = "bad"}, {.queue = oq, .name = "held"}};
    flow(c, c->queue, kids, 2, other);
    run_children(c);
    CHECK_EQ(conf_state(c, c->queue, ids[2]), LN_JOB_FAILED);
    CHECK_EQ(conf_state(c, c->queue, ids[1]), LN_JOB_WAITING_CHILDREN);
    size_t removed = 0;
    CHECK_EQ(ln_jobs_clean(c->jobs, c->queue, LN_JOB_FAILED, -1, 0, &removed), 0);
    CHECK_EQ(removed, 2);
    CHECK_EQ(conf_state(c, c->queue, ids[2]), LN_ENOENT);
    CHECK_EQ(conf_state(c, c->queue, ids[1]), LN_ENOENT);
    CHECK_EQ(conf_state(c, oq, ids[0]), LN_JOB_WAITING);
    CHECK_EQ(conf_state(c, c->queue, other[0]), LN_JOB_WAITING_CHILDREN);
    CHECK_EQ(conf_total(c, c->queue), 1);
    conf_check_counts(c, c->queue);
    conf_check_counts(c, oq);
}

/* A retried child whose failure its parent ignored (kept waiting by a
 * sibling in a queue no worker takes) or continued past (released at
 * once) is pending again: the parent waits for it, and removing the
 * sibling no longer releases the parent. One job's retry and a queue's. */
void case_retry_makes_child_pending_again(conf_ctx *c) {
    const char *pq = conf_queue(c, "p"), *hq = conf_queue(c, "h");
    for (int how = 0; how < 2; how++) {
        ln_flow_node kids[2] = {{.name = "bad",
                                 .ignore_dependency_on_failure = how == 0,
                                 .continue_parent_on_failure = how == 1},
                                {.queue = hq, .name = "held"}};
        char ids[3][LN_JOB_ID_MAX];
        flow(c, pq, kids, 2, ids);
        run_children(c);
        CHECK_EQ(conf_state(c, c->queue, ids[1]), LN_JOB_FAILED);
        CHECK_EQ(child_status(c, pq, ids[0], ids[1]), LN_CHILD_FAILED);
        int parent = how == 0 ? LN_JOB_WAITING_CHILDREN : LN_JOB_WAITING;
        CHECK_EQ(conf_state(c, pq, ids[0]), parent);
        if (how == 0) {
            SAYS(c->jobs, 0, ln_jobs_retry(c->jobs, c->queue, ids[1]));
        } else { /* the whole queue's failed jobs */
            size_t n = 0;
            SAYS(c->jobs, 0, ln_jobs_retry_all(c->jobs, c->queue, &n));
            CHECK_EQ(n, 1);
        }
        CHECK_EQ(conf_state(c, c->queue, ids[1]), LN_JOB_WAITING);
        CHECK_EQ(child_status(c, pq, ids[0], ids[1]), LN_CHILD_PENDING);
        CHECK_EQ(conf_state(c, pq, ids[0]), parent); /* the parent stays */
        CHECK_EQ(ln_jobs_remove(c->jobs, hq, ids[2]), 0);
        CHECK_EQ(conf_state(c, pq, ids[0]), parent);
        /* the retried child's own end releases a parent still waiting */
        CHECK_EQ(ln_jobs_remove(c->jobs, c->queue, ids[1]), 0);
        CHECK_EQ(conf_state(c, pq, ids[0]), LN_JOB_WAITING);
    }
}

/* With fail_parent_on_failure the retried child is pending again too
 * (what became of the parent differs: jobs_flows.h). */
void case_retry_fail_parent_child_pending(conf_ctx *c) {
    const char *pq = conf_queue(c, "p"), *hq = conf_queue(c, "h");
    ln_flow_node kids[2] = {{.name = "bad", .fail_parent_on_failure = 1},
                            {.queue = hq, .name = "held"}};
    char ids[3][LN_JOB_ID_MAX];
    flow(c, pq, kids, 2, ids);
    run_children(c);
    CHECK_EQ(child_status(c, pq, ids[0], ids[1]), LN_CHILD_UNSUCCESSFUL);
    SAYS(c->jobs, 0, ln_jobs_retry(c->jobs, c->queue, ids[1]));
    CHECK_EQ(child_status(c, pq, ids[0], ids[1]), LN_CHILD_PENDING);
}

/* A flow child failing for good with retention keep (its name "bad"),
 * under a parent in another queue and then in the same one: once the
 * child is gone (with keep count 1, trimmed by a second failure), the
 * parent waiting for it is released (and run, in the same queue). */
static void failed_child_gone(conf_ctx *c, ln_job_keep keep) {
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.remove_on_fail = keep;
    for (int same = 0; same < 2; same++) {
        const char *pq = same ? c->queue : conf_queue(c, "p");
        ln_flow_node kid = {.name = "bad", .opts = &o};
        char ids[2][LN_JOB_ID_MAX];
        flow(c, pq, &kid, 1, ids);
        run_children(c);
        if (keep.mode == LN_KEEP_COUNT) {
            CHECK_EQ(conf_state(c, c->queue, ids[1]), LN_JOB_FAILED);
            CHECK_EQ(conf_state(c, pq, ids[0]), LN_JOB_WAITING_CHILDREN);
            conf_add(c, c->queue, "bad", "1", &o, NULL); /* its failure trims the child */
            run_children(c);
        }
        CHECK_EQ(conf_state(c, c->queue, ids[1]), LN_ENOENT);
        int st = conf_state(c, pq, ids[0]);
        CHECK(st == (same ? LN_JOB_COMPLETED : LN_JOB_WAITING));
        conf_check_counts(c, pq);
    }
}

/* A failed child that a retention count trims later goes as BullMQ's
 * trims take it (removeJob, not hard). */
void case_trimmed_failed_child_releases_parent(conf_ctx *c) {
    failed_child_gone(c, (ln_job_keep){LN_KEEP_COUNT, 1});
}

/* A failed child removed as it fails (remove_on_fail "all", BullMQ's
 * removeOnFail: true) is no dependency any more, as BullMQ's
 * moveToFinished takes it out of its parent's. */
void case_removed_failed_child_releases_parent(conf_ctx *c) {
    failed_child_gone(c, (ln_job_keep){LN_KEEP_NONE, 0});
}

/* A flow parent waiting for its children: the calls that name a job in
 * another state refuse it, drain keeps it, and a cancel of it or of its
 * child ends as the header says on every store. */
static void add_pair(conf_ctx *c, int fail_parent, char ids[2][LN_JOB_ID_MAX]) {
    ln_flow_node child = {NULL, "bad", "{}", NULL, fail_parent, 0, 0, 0, NULL, 0};
    ln_flow_node root = {c->queue, "parent", "{}", NULL, 0, 0, 0, 0, &child, 1};
    int rc = ln_jobs_add_flow(c->jobs, &root, ids[0], 2, LN_JOB_ID_MAX);
    if (rc != 0) fprintf(stderr, "add_flow: %s\n", ln_jobs_errmsg(c->jobs));
    CHECK_EQ(rc, 0);
}

void case_spec_waiting_children_parent(conf_ctx *c) {
    char ids[2][LN_JOB_ID_MAX];
    add_pair(c, 0, ids);
    CHECK_EQ(conf_state(c, c->queue, ids[0]), LN_JOB_WAITING_CHILDREN);
    SAYS(c->jobs, LN_EINVAL, ln_jobs_promote(c->jobs, c->queue, ids[0]));
    SAYS(c->jobs, LN_EINVAL, ln_jobs_retry(c->jobs, c->queue, ids[0]));
    SAYS(c->jobs, LN_EINVAL, ln_jobs_cancel(c->jobs, c->queue, ids[0]));
    CONF_CHECK_HAS(ln_jobs_errmsg(c->jobs), "waiting-children");
    CHECK_EQ(conf_state(c, c->queue, ids[0]), LN_JOB_WAITING_CHILDREN);
    ln_job_counts k;
    CHECK_EQ(ln_jobs_counts(c->jobs, c->queue, &k), 0);
    CHECK_EQ(k.waiting_children, 1);
    conf_check_counts(c, c->queue);
    /* Draining its only child (of its own queue) removes it with the
     * child (as BullMQ's drain); the count is the drained jobs'. */
    size_t removed = 9;
    CHECK_EQ(ln_jobs_drain(c->jobs, c->queue, &removed), 0);
    CHECK_EQ(removed, 1);
    CHECK_EQ(conf_state(c, c->queue, ids[1]), LN_ENOENT);
    CHECK_EQ(conf_state(c, c->queue, ids[0]), LN_ENOENT);
    conf_check_counts(c, c->queue);
}

/* The parent of a child canceled with fail_parent_on_failure: released
 * with its child unsuccessful, and it fails when a worker takes it. */
static void check_parent_failed(conf_ctx *c, const char *queue, const char *pid) {
    ln_job_children ch;
    CHECK_EQ(ln_jobs_children(c->jobs, queue, pid, &ch), 0);
    CHECK_EQ(ch.n, 1);
    CHECK_EQ(ch.children[0].status, LN_CHILD_UNSUCCESSFUL);
    ln_job_children_clear(&ch);
    conf_check_counts(c, queue);
    ln_worker_opts o;
    conf_worker_opts(&o);
    conf_run(c, queue, conf_handler_by_name, NULL, &o);
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(c->jobs, queue, pid, &info), 0);
    CHECK_EQ(info.state, LN_JOB_FAILED);
    CONF_CHECK_HAS(info.failed_reason, "child ");
    ln_job_info_clear(&info);
}

/* A child canceled before it ran fails its parent as a final failure. */
void case_spec_cancel_child_fails_parent(conf_ctx *c) {
    char ids[2][LN_JOB_ID_MAX];
    add_pair(c, 1, ids);
    CHECK_EQ(ln_jobs_cancel(c->jobs, c->queue, ids[1]), 0);
    CHECK_EQ(conf_state(c, c->queue, ids[1]), LN_JOB_FAILED);
    check_parent_failed(c, c->queue, ids[0]);
}

/* An active flow child canceled: what its parent sees, on every store. */
void case_spec_cancel_active_child(conf_ctx *c) {
    const char *q2 = conf_queue(c, "kids");
    ln_flow_node child = {q2, "k", "{}", NULL, 1, 0, 0, 0, NULL, 0};
    ln_flow_node root = {c->queue, "parent", "{}", NULL, 0, 0, 0, 0, &child, 1};
    char ids[2][LN_JOB_ID_MAX];
    CHECK_EQ(ln_jobs_add_flow(c->jobs, &root, ids[0], 2, LN_JOB_ID_MAX), 0);
    conf_hold h = {0};
    ln_worker_opts o;
    conf_worker_opts(&o);
    o.exit_when_empty = 0;
    conf_bg *bg = conf_bg_start(c->jobs, q2, conf_hold_handler, &h, &o);
    conf_hold_wait(&h, 1);
    CHECK_EQ(ln_jobs_cancel(c->jobs, q2, ids[1]), 0);
    int64_t end = conf_deadline(3000);
    while (atomic_load(&h.canceled) == 0 && conf_now_ms() < end) {
        struct timespec ts = {0, 5000000};
        nanosleep(&ts, NULL);
    }
    ln_worker_stop(conf_bg_worker(bg));
    conf_bg_join(bg, NULL);
    CHECK_EQ(conf_state(c, q2, ids[1]), LN_JOB_FAILED);
    check_parent_failed(c, c->queue, ids[0]);
}

/* A flow parent removed before its children finish: the children run and
 * complete (or fail) as jobs of no flow. */
void case_spec_parent_removed_first(conf_ctx *c) {
    ln_flow_node kids[2] = {{NULL, "k", "{}", NULL, 0, 0, 0, 0, NULL, 0},
                            {NULL, "bad", "{}", NULL, 1, 0, 0, 0, NULL, 0}};
    ln_flow_node root = {c->queue, "parent", "{}", NULL, 0, 0, 0, 0, kids, 2};
    char ids[3][LN_JOB_ID_MAX];
    CHECK_EQ(ln_jobs_add_flow(c->jobs, &root, ids[0], 3, LN_JOB_ID_MAX), 0);
    CHECK_EQ(ln_jobs_remove(c->jobs, c->queue, ids[0]), 0);
    ln_worker_opts o;
    conf_worker_opts(&o);
    ln_worker_stats st = conf_run(c, c->queue, conf_handler_by_name, NULL, &o);
    CHECK_EQ(st.completed, 1);
    CHECK_EQ(st.failed, 1);
    CHECK_EQ(conf_state(c, c->queue, ids[1]), LN_JOB_COMPLETED);
    CHECK_EQ(conf_state(c, c->queue, ids[2]), LN_JOB_FAILED);
    CHECK_EQ(conf_state(c, c->queue, ids[0]), LN_ENOENT);
    conf_check_counts(c, c->queue);
}
