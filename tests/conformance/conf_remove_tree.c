/* conf_remove_tree.c - removing a job with its subtree of children
 * (jobs.h ln_jobs_remove_tree, BullMQ's removeChildren): children in any
 * queue and state go, all or nothing; a held job refuses the whole tree;
 * the removed job's own parent loses a dependency; and ln_jobs_wait on a
 * job that is removed or drained returns soon (jobs_events.h). */
#include "conf_flowtree.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>

/* Run every ready job of queue until none is. */
static void run_all(conf_ctx *c, const char *queue) {
    ln_worker_opts o;
    conf_worker_opts(&o);
    conf_run(c, queue, conf_handler_by_name, NULL, &o);
}

/* The next n "removed" events of ev: their job ids each followed by a
 * space, sorted, into out; an id in 'done' (ids of completed jobs, each
 * followed by a space) must say prev "completed" (the names of the other
 * states differ: Redis writes BullMQ's, "wait" for a waiting job). */
static void removed_ids(ln_jobs_events *ev, int n, const char *done, char *out, size_t size) {
    char ids[8][64];
    CHECK(n <= 8);
    for (int i = 0; i < n; i++) {
        ln_job_event e;
        conf_next_named(ev, "removed", &e);
        snprintf(ids[i], sizeof ids[i], "%s", e.job_id);
        char word[70];
        snprintf(word, sizeof word, "%s ", e.job_id);
        if (strstr(done, word) != NULL) CONF_CHECK_HAS(e.fields, "\"prev\":\"completed\"");
        ln_job_event_clear(&e);
    }
    qsort(ids, (size_t)n, sizeof ids[0], (int (*)(const void *, const void *))strcmp);
    out[0] = '\0';
    for (int i = 0; i < n; i++) {
        size_t len = strlen(out), l = strlen(ids[i]);
        CHECK(len + l + 2 <= size);
        memcpy(out + len, ids[i], l);
        memcpy(out + len + l, " ", 2);
    }
}

/* r (q) -> a (q2) -> a1 (q), and r -> b (q). b and a1 completed (so r
 * records b as processed, a records a1), a waiting, r waiting for a; an
 * unrelated job x stays. Everything of the tree goes in one call, with a
 * "removed" event in each job's own queue. */
void case_remove_tree_two_queues(conf_ctx *c) {
    const char *q = c->queue, *q2 = conf_queue(c, "two");
    conf_tree t;
    const conf_tree_row rows[] = {{NULL, q, "parent", "r"},
                                  {"r", q2, "mid", "a"},
                                  {"a", q, "leaf", "a1"},
                                  {"r", q, "leaf", "b"}};
    CONF_TREE_MAKE(&t, rows);
    conf_tree_add(c, &t);
    run_all(c, q); /* b and a1 */
    CHECK_EQ(conf_state(c, q, "b"), LN_JOB_COMPLETED);
    CHECK_EQ(conf_state(c, q2, "a"), LN_JOB_WAITING);
    CHECK_EQ(conf_state(c, q, "r"), LN_JOB_WAITING_CHILDREN);
    conf_add_id(c, q, "x", 0, 0, 0);
    ln_jobs *jobs = conf_open_all_events(c);
    ln_jobs_events *ev, *ev2;
    CHECK_EQ(ln_jobs_events_open(jobs, q, "$", &ev), 0);
    CHECK_EQ(ln_jobs_events_open(jobs, q2, "$", &ev2), 0);
    size_t removed = 99;
    SAYS(jobs, 0, ln_jobs_remove_tree(jobs, q, "r", &removed));
    CHECK_EQ(removed, 4);
    CHECK_EQ(conf_state(c, q, "r"), LN_ENOENT);
    CHECK_EQ(conf_state(c, q2, "a"), LN_ENOENT);
    CHECK_EQ(conf_state(c, q, "a1"), LN_ENOENT);
    CHECK_EQ(conf_state(c, q, "b"), LN_ENOENT);
    CHECK_EQ(conf_state(c, q, "x"), LN_JOB_WAITING);
    CHECK_EQ(conf_total(c, q), 1);
    CHECK_EQ(conf_total(c, q2), 0);
    conf_check_counts(c, q);
    conf_check_counts(c, q2);
    char got[512];
    removed_ids(ev, 3, "a1 b ", got, sizeof got);
    CONF_CHECK_STR(got, "a1 b r ");
    removed_ids(ev2, 1, "", got, sizeof got);
    CONF_CHECK_STR(got, "a ");
    ln_jobs_events_close(ev);
    ln_jobs_events_close(ev2);
    ln_jobs_close(jobs);
    SAYS(c->jobs, LN_ENOENT, ln_jobs_remove_tree(c->jobs, q, "r", &removed));
    CHECK_EQ(removed, 0);
}

/* A worker holds a grandchild (in another queue): the removal is refused
 * as a whole, its message names the held job, and every job stays. */
void case_remove_tree_locked_child(conf_ctx *c) {
    const char *q = c->queue, *q2 = conf_queue(c, "held");
    conf_tree t;
    const conf_tree_row rows[] = {{NULL, q, "parent", "r"},
                                  {"r", q, "mid", "m"},
                                  {"m", q2, "leaf", "held-one"},
                                  {"m", q, "leaf", "l2"}};
    CONF_TREE_MAKE(&t, rows);
    conf_tree_add(c, &t);
    conf_hold h = {0};
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    conf_bg *bg = conf_bg_start(c->jobs, q2, conf_hold_handler, &h, &wo);
    conf_hold_wait(&h, 1);
    size_t removed = 99;
    SAYS(c->jobs, LN_EBUSY, ln_jobs_remove_tree(c->jobs, q, "r", &removed));
    CHECK_EQ(removed, 0);
    CONF_CHECK_HAS(ln_jobs_errmsg(c->jobs), "held-one");
    SAYS(c->jobs, LN_EBUSY, ln_jobs_remove_tree(c->jobs, q2, "held-one", &removed));
    CHECK_EQ(conf_state(c, q, "r"), LN_JOB_WAITING_CHILDREN);
    CHECK_EQ(conf_state(c, q, "m"), LN_JOB_WAITING_CHILDREN);
    CHECK_EQ(conf_state(c, q, "l2"), LN_JOB_WAITING);
    CHECK_EQ(conf_state(c, q2, "held-one"), LN_JOB_ACTIVE);
    atomic_store(&h.release, 1);
    CHECK_EQ(conf_bg_join(bg, NULL), 0);
    CHECK_EQ(conf_state(c, q2, "held-one"), LN_JOB_COMPLETED);
    SAYS(c->jobs, 0, ln_jobs_remove_tree(c->jobs, q, "r", &removed)); /* now it may */
    CHECK_EQ(removed, 4);
}

/* The largest flow lanes adds (LN_FLOW_NODES_MAX nodes, within
 * LN_JOBS_REMOVE_TREE_MAX) goes whole in one call. */
void case_remove_tree_largest_flow(conf_ctx *c) {
    _Static_assert(LN_FLOW_NODES_MAX <= LN_JOBS_REMOVE_TREE_MAX, "every flow is removable");
    size_t n = LN_FLOW_NODES_MAX;
    ln_flow_node *kids = calloc(n - 1, sizeof *kids);
    CHECK(kids != NULL);
    for (size_t i = 0; i < n - 1; i++) kids[i].name = "leaf";
    ln_job_opts o;
    ln_flow_node root = conf_flow_node(c->queue, "parent", "big", &o);
    root.children = kids;
    root.nchildren = n - 1;
    conf_flow_add(c, &root, n);
    CHECK_EQ(conf_total(c, c->queue), n);
    size_t removed = 0;
    SAYS(c->jobs, 0, ln_jobs_remove_tree(c->jobs, c->queue, "big", &removed));
    CHECK_EQ(removed, n);
    CHECK_EQ(conf_total(c, c->queue), 0);
    conf_check_counts(c, c->queue);
    free(kids);
}

/* The removed job's own parent p sits outside the tree: it loses a
 * pending dependency, waits on for its other child, and is released
 * (waiting) once the removal takes its last one. */
void case_remove_tree_parent_outside(conf_ctx *c) {
    const char *q = c->queue, *q2 = conf_queue(c, "out");
    conf_tree t;
    const conf_tree_row rows[] = {{NULL, q, "parent", "p"},
                                  {"p", q2, "mid", "m"},
                                  {"m", q2, "leaf", "m1"},
                                  {"p", q2, "leaf", "s"}};
    CONF_TREE_MAKE(&t, rows);
    conf_tree_add(c, &t);
    size_t removed = 0;
    SAYS(c->jobs, 0, ln_jobs_remove_tree(c->jobs, q2, "m", &removed));
    CHECK_EQ(removed, 2);
    CHECK_EQ(conf_state(c, q2, "m1"), LN_ENOENT);
    CHECK_EQ(conf_state(c, q, "p"), LN_JOB_WAITING_CHILDREN);
    ln_job_children rel;
    CHECK_EQ(ln_jobs_children(c->jobs, q, "p", &rel), 0);
    CHECK_EQ(rel.n, 1);
    CONF_CHECK_STR(rel.children[0].id, "s");
    ln_job_children_clear(&rel);
    SAYS(c->jobs, 0, ln_jobs_remove_tree(c->jobs, q2, "s", &removed));
    CHECK_EQ(removed, 1);
    CHECK_EQ(conf_state(c, q, "p"), LN_JOB_WAITING);
    conf_check_counts(c, q);
    conf_check_counts(c, q2);
}

/* Failed children a parent records (ignore_dependency_on_failure) go
 * with it; one failed with remove_dependency_on_failure is no longer
 * its parent's and stays. A scheduler's iteration refuses. */
void case_remove_tree_failed_children(conf_ctx *c) {
    const char *q = c->queue, *q2 = conf_queue(c, "bad");
    conf_tree t;
    const conf_tree_row rows[] = {
        {NULL, q, "parent", "r"}, {"r", q2, "bad", "ign"}, {"r", q2, "bad", "rem"}};
    CONF_TREE_MAKE(&t, rows);
    conf_tree_node(&t, "ign")->ignore_dependency_on_failure = 1;
    conf_tree_node(&t, "rem")->remove_dependency_on_failure = 1;
    conf_tree_add(c, &t);
    run_all(c, q2);
    CHECK_EQ(conf_state(c, q2, "ign"), LN_JOB_FAILED);
    CHECK_EQ(conf_state(c, q, "r"), LN_JOB_WAITING);
    size_t removed = 0;
    SAYS(c->jobs, 0, ln_jobs_remove_tree(c->jobs, q, "r", &removed));
    CHECK_EQ(removed, 2);
    CHECK_EQ(conf_state(c, q2, "ign"), LN_ENOENT);
    CHECK_EQ(conf_state(c, q2, "rem"), LN_JOB_FAILED);
    char it[LN_JOB_ID_MAX];
    conf_schedule(c, "every", 60000, NULL, it);
    SAYS(c->jobs, LN_EBUSY, ln_jobs_remove_tree(c->jobs, q, it, &removed));
    CHECK_EQ(removed, 0);
    CHECK_EQ(conf_state(c, q, it), LN_JOB_WAITING);
}

/* A job of no flow is a tree of one: it goes, and the deduplication id
 * it held is free again (the next add with it adds a job). */
void case_remove_tree_frees_dedup_id(conf_ctx *c) {
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.dedup_id = "once";
    char id[LN_JOB_ID_MAX], again[LN_JOB_ID_MAX];
    conf_add(c, c->queue, "d", NULL, &o, id);
    size_t removed = 0;
    SAYS(c->jobs, 0, ln_jobs_remove_tree(c->jobs, c->queue, id, &removed));
    CHECK_EQ(removed, 1);
    conf_add(c, c->queue, "d", NULL, &o, again);
    CHECK(strcmp(id, again) != 0);
    CHECK_EQ(conf_state(c, c->queue, again), LN_JOB_WAITING);
}

/* ---- ln_jobs_wait on a job that goes while it waits. ---- */

typedef struct later {
    ln_jobs *jobs;
    const char *queue, *id; /* id NULL: drain the queue */
} later;

static void *act_later(void *arg) {
    later *l = arg;
    struct timespec ts = {0, 150 * 1000000L};
    nanosleep(&ts, NULL);
    size_t n;
    if (l->id != NULL)
        CHECK_EQ(ln_jobs_remove(l->jobs, l->queue, l->id), 0);
    else
        CHECK_EQ(ln_jobs_drain(l->jobs, l->queue, &n), 0);
    return NULL;
}

/* A drain writes no per-job event (as BullMQ's): the wait still returns
 * LN_ENOENT within about a second of the job going, not at its timeout. */
static void wait_gone(conf_ctx *c, const char *id, int drain) {
    conf_add_id(c, c->queue, id, 0, 0, 0);
    later l = {conf_open(c, NULL), c->queue, drain ? NULL : id};
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, act_later, &l), 0);
    int64_t t0 = conf_now_ms(), limit = conf_deadline(1800);
    ln_job_info info;
    SAYS(c->jobs, LN_ENOENT, ln_jobs_wait(c->jobs, c->queue, id, 20000, &info));
    int64_t end = conf_now_ms();
    CHECK_EQ(pthread_join(t, NULL), 0);
    ln_jobs_close(l.jobs);
    if (end >= limit) fprintf(stderr, "wait took %lld ms\n", (long long)(end - t0));
    CHECK(end < limit);
}

void case_wait_drained_job(conf_ctx *c) {
    wait_gone(c, "gone-d", 1);
}
