/* conf_drain.c - a drain bigger than one of its steps: each Redis script
 * call and each SQLite transaction of ln_jobs_drain handles at most 1,000
 * jobs (docs/internals/drain.md), so these queues hold more than that of
 * each kind, with the jobs a drain keeps or frees among them. */
#include "conf.h"

#include <stdlib.h>

#define MANY 1200 /* jobs of one kind: more than one step's 1,000 */

/* Add n jobs in one bulk add, each with opts o (NULL = defaults). */
static void add_many(conf_ctx *c, size_t n, const ln_job_opts *o) {
    ln_job_spec *specs = calloc(n, sizeof *specs);
    CHECK(specs != NULL);
    for (size_t i = 0; i < n; i++) specs[i] = (ln_job_spec){"bulk", "{}", o};
    int rc = ln_jobs_add_bulk(c->jobs, c->queue, specs, n, NULL, 0);
    if (rc != 0) fprintf(stderr, "add_bulk: %s\n", ln_jobs_errmsg(c->jobs));
    CHECK_EQ(rc, 0);
    free(specs);
}

/* 2,500 jobs (waiting, delayed, prioritized) with two scheduler
 * iterations in the middle of them, one ready and one delayed, and a
 * deduplication id: every job goes, the count is right, the iterations
 * stay where they were and the id is free again. */
void case_drain_more_than_a_step(conf_ctx *c) {
    char ready_id[LN_JOB_ID_MAX], later_id[LN_JOB_ID_MAX], id[LN_JOB_ID_MAX];
    ln_job_opts d, p, u;
    ln_job_opts_init(&d);
    d.delay_ms = 3600000; /* before the cron iteration's next New Year */
    ln_job_opts_init(&p);
    p.priority = 3;
    ln_job_opts_init(&u);
    u.dedup_id = "once";
    add_many(c, MANY / 2, NULL);
    conf_schedule(c, "ready", 60000, NULL, ready_id); /* waiting, among the others */
    add_many(c, MANY / 2, NULL);
    add_many(c, MANY / 2, &d);
    conf_schedule(c, "later", 0, "0 0 1 1 *", later_id); /* delayed */
    d.delay_ms = 86400000LL * 400;                       /* after it: a window passes it */
    add_many(c, MANY / 2, &d);
    add_many(c, 99, &p);
    conf_add(c, c->queue, "dedup", NULL, &u, NULL);
    size_t removed = 0;
    SAYS(c->jobs, 0, ln_jobs_drain(c->jobs, c->queue, &removed));
    CHECK_EQ(removed, 2 * MANY + 100);
    CHECK_EQ(conf_state(c, c->queue, ready_id), LN_JOB_WAITING);
    CHECK_EQ(conf_state(c, c->queue, later_id), LN_JOB_DELAYED);
    CHECK_EQ(conf_total(c, c->queue), 2);
    conf_check_counts(c, c->queue);
    conf_add(c, c->queue, "dedup", NULL, &u, id); /* the id was freed */
    CHECK_EQ(conf_state(c, c->queue, id), LN_JOB_WAITING);
    SAYS(c->jobs, 0, ln_jobs_drain(c->jobs, c->queue, &removed)); /* again: the same two stay */
    CHECK_EQ(removed, 1);
    CHECK_EQ(conf_total(c, c->queue), 2);
}

/* A paused queue of more than one step drains the same. */
void case_drain_paused_more_than_a_step(conf_ctx *c) {
    CHECK_EQ(ln_jobs_pause(c->jobs, c->queue), 0);
    add_many(c, MANY + 300, NULL);
    size_t removed = 0;
    SAYS(c->jobs, 0, ln_jobs_drain(c->jobs, c->queue, &removed));
    CHECK_EQ(removed, MANY + 300);
    CHECK_EQ(conf_total(c, c->queue), 0);
    CHECK_EQ(ln_jobs_resume(c->jobs, c->queue), 0);
}

/* Add root (queue q) with n children in c->queue; its id into id. With
 * mid, one child in c->queue between them, the n its children. */
static void add_flow(conf_ctx *c, const char *q, size_t n, int mid, char *id) {
    ln_flow_node *kids = calloc(n, sizeof *kids);
    CHECK(kids != NULL);
    for (size_t i = 0; i < n; i++)
        kids[i] = (ln_flow_node){c->queue, "kid", "{}", NULL, 0, 0, 0, 0, NULL, 0};
    ln_flow_node middle = {c->queue, "mid", "{}", NULL, 0, 0, 0, 0, kids, n};
    ln_flow_node root = {q, "root", "{}", NULL, 0, 0, 0, 0, mid ? &middle : kids, mid ? 1 : n};
    char *ids = calloc(n + 2, LN_JOB_ID_MAX);
    CHECK(ids != NULL);
    int rc = ln_jobs_add_flow(c->jobs, &root, ids, n + 2, LN_JOB_ID_MAX);
    if (rc != 0) fprintf(stderr, "add_flow: %s\n", ln_jobs_errmsg(c->jobs));
    CHECK_EQ(rc, 0);
    memcpy(id, ids, LN_JOB_ID_MAX); /* the root's, first */
    free(ids);
    free(kids);
}

/* Flow parents whose children fill more than one step: one in the
 * drained queue goes with its last child, a later step's (and a
 * grandparent with its parent), one in another queue is released; only
 * the children are counted. */
void case_drain_flows_over_steps(conf_ctx *c) {
    char here[LN_JOB_ID_MAX], there[LN_JOB_ID_MAX], top[LN_JOB_ID_MAX];
    const char *q2 = conf_queue(c, "up");
    add_many(c, 700, NULL);
    add_flow(c, c->queue, LN_FLOW_NODES_MAX - 1, 0, here); /* children over two windows */
    add_flow(c, q2, LN_FLOW_NODES_MAX - 1, 0, there);
    add_flow(c, c->queue, 500, 1, top);
    CHECK_EQ(conf_state(c, c->queue, here), LN_JOB_WAITING_CHILDREN);
    size_t removed = 0;
    SAYS(c->jobs, 0, ln_jobs_drain(c->jobs, c->queue, &removed));
    CHECK_EQ(removed, 700 + 2 * (LN_FLOW_NODES_MAX - 1) + 500);
    CHECK_EQ(conf_state(c, c->queue, here), LN_ENOENT);
    CHECK_EQ(conf_state(c, c->queue, top), LN_ENOENT);
    CHECK_EQ(conf_state(c, q2, there), LN_JOB_WAITING);
    CHECK_EQ(conf_total(c, c->queue), 0);
    conf_check_counts(c, c->queue);
}

#define CHAIN 300 /* flow parents in a chain: more than a removal takes */
#define CLIMB 256 /* the parents one removal takes with it (backend.h) */

/* A chain of CHAIN parents of c->queue, each waiting only for the one
 * below (r0 at the top), the bottom one for "x" of c->queue, a job named
 * leaf (for conf_handler_by_name: "bad" fails, "leaf" completes): built
 * as flows of a parent and a child, each attached to the parent above
 * (a flow is at most LN_FLOW_DEPTH_MAX deep), whose other children (in
 * another queue) a worker then completes. */
static void make_chain(conf_ctx *c, const char *leaf) {
    const char *side = conf_queue(c, "side");
    char ids[2][LN_JOB_ID_MAX], pid[16], above[16];
    for (int i = 0; i < CHAIN; i++) {
        snprintf(pid, sizeof pid, "r%d", i);
        snprintf(above, sizeof above, "r%d", i - 1);
        ln_job_opts ro, xo;
        ln_job_opts_init(&ro);
        ln_job_opts_init(&xo);
        ro.job_id = pid;
        if (i > 0) ro.parent_queue = c->queue, ro.parent_id = above;
        xo.job_id = "x";
        xo.attempts = 1;
        int last = i == CHAIN - 1;
        ln_flow_node kid = {last ? c->queue : side,
                            last ? leaf : "leaf",
                            "{}",
                            last ? &xo : NULL,
                            0,
                            0,
                            0,
                            0,
                            NULL,
                            0};
        ln_flow_node root = {c->queue, "link", "{}", &ro, 0, 0, 0, 0, &kid, 1};
        SAYS(c->jobs, 0, ln_jobs_add_flow(c->jobs, &root, ids[0], 2, LN_JOB_ID_MAX));
    }
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    conf_run(c, side, conf_handler_by_name, NULL, &wo);
    CHECK_EQ(conf_state(c, c->queue, "r0"), LN_JOB_WAITING_CHILDREN);
    CHECK_EQ(conf_state(c, c->queue, "r299"), LN_JOB_WAITING_CHILDREN);
}

/* After the leaf x at the bottom went: the CLIMB parents above it went
 * with it, the next one up is released (waiting), the one above that
 * waits on for it. */
static void check_chain_cut(conf_ctx *c) {
    char id[16];
    for (int i = CHAIN - CLIMB; i < CHAIN; i++) {
        snprintf(id, sizeof id, "r%d", i);
        CHECK_EQ(conf_state(c, c->queue, id), LN_ENOENT);
    }
    snprintf(id, sizeof id, "r%d", CHAIN - CLIMB - 1);
    CHECK_EQ(conf_state(c, c->queue, id), LN_JOB_WAITING);
    snprintf(id, sizeof id, "r%d", CHAIN - CLIMB - 2);
    CHECK_EQ(conf_state(c, c->queue, id), LN_JOB_WAITING_CHILDREN);
    CHECK_EQ(conf_state(c, c->queue, "x"), LN_ENOENT);
    conf_check_counts(c, c->queue);
}

/* Draining the leaf at the bottom of a longer chain than one removal
 * climbs: the leaf and the CLIMB parents above it go (a drain's
 * BullMQ-like cascade), the next parent up is released to waiting
 * instead (its own parent waits on), so one call's work stays bounded;
 * the drain counts the leaf. */
void case_drain_long_parent_chain_is_cut(conf_ctx *c) {
    make_chain(c, "leaf");
    size_t removed = 0;
    SAYS(c->jobs, 0, ln_jobs_drain(c->jobs, c->queue, &removed));
    CHECK_EQ(removed, 1);
    check_chain_cut(c);
}

/* The same for a clean of the failed leaf (a failure with no failure
 * option, which its parent waits on): the same parents go, the same one
 * is released. */
void case_clean_long_parent_chain_is_cut(conf_ctx *c) {
    make_chain(c, "bad");
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    conf_run(c, c->queue, conf_handler_by_name, NULL, &wo);
    CHECK_EQ(conf_state(c, c->queue, "x"), LN_JOB_FAILED);
    size_t removed = 0;
    SAYS(c->jobs, 0, ln_jobs_clean(c->jobs, c->queue, LN_JOB_FAILED, -1, 0, &removed));
    CHECK(removed >= 1);
    check_chain_cut(c);
}
