/* conf_boundary.c - what lanes' administration leaves of a queue that a
 * BullMQ team shares (docs/redis.md, the compatibility table): a drain
 * keeps each job scheduler's pending iteration, ready or delayed, as
 * BullMQ's queue.drain does, and a remove (or cancel) refuses it
 * (LN_EBUSY; LN_EINVAL), as BullMQ's job.remove does, so the schedule
 * goes on (ln_jobs_unschedule removes it); a canceled flow child reaches
 * its parent as any final failure does, a drained one releases it as a
 * removed one does. */
#include "conf.h"

void case_drain_keeps_schedulers(conf_ctx *c) {
    char now_id[LN_JOB_ID_MAX], later_id[LN_JOB_ID_MAX], id[LN_JOB_ID_MAX];
    conf_schedule(c, "now", 60000, NULL, now_id);        /* its first iteration: ready */
    conf_schedule(c, "later", 0, "0 0 1 1 *", later_id); /* next New Year: delayed */
    CHECK_EQ(ln_jobs_add(c->jobs, c->queue, "plain", NULL, NULL, id, sizeof id), 0);
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.delay_ms = 60000;
    CHECK_EQ(ln_jobs_add(c->jobs, c->queue, "later", NULL, &o, id, sizeof id), 0);
    size_t removed = 0;
    CHECK_EQ(ln_jobs_drain(c->jobs, c->queue, &removed), 0);
    CHECK_EQ(removed, 2);
    CHECK_EQ(conf_state(c, c->queue, now_id), LN_JOB_WAITING);
    CHECK_EQ(conf_state(c, c->queue, later_id), LN_JOB_DELAYED);
    CHECK_EQ(conf_total(c, c->queue), 2);
}

/* A scheduler's current iteration is not removed nor canceled; once the
 * scheduler is gone (an every iteration that is waiting stays), it is an
 * ordinary job. */
void case_remove_refuses_iteration(conf_ctx *c) {
    char now_id[LN_JOB_ID_MAX], later_id[LN_JOB_ID_MAX];
    conf_schedule(c, "now", 60000, NULL, now_id);
    conf_schedule(c, "later", 0, "0 0 1 1 *", later_id);
    CHECK_EQ(ln_jobs_remove(c->jobs, c->queue, now_id), LN_EBUSY);
    CONF_CHECK_HAS(ln_jobs_errmsg(c->jobs), "current iteration");
    CHECK_EQ(ln_jobs_remove(c->jobs, c->queue, later_id), LN_EBUSY);
    CHECK_EQ(ln_jobs_cancel(c->jobs, c->queue, now_id), LN_EINVAL); /* nor canceled */
    CHECK_EQ(ln_jobs_cancel(c->jobs, c->queue, later_id), LN_EINVAL);
    CHECK_EQ(conf_state(c, c->queue, now_id), LN_JOB_WAITING);
    CHECK_EQ(conf_state(c, c->queue, later_id), LN_JOB_DELAYED);
    CHECK_EQ(ln_jobs_unschedule(c->jobs, c->queue, "now"), 0);
    CHECK_EQ(ln_jobs_remove(c->jobs, c->queue, now_id), 0);
    CHECK_EQ(conf_state(c, c->queue, now_id), LN_ENOENT);
}

/* A delayed child with ignore_dependency_on_failure, canceled before it
 * ran: its parent is released (waiting), the child a failed one; a child
 * with fail_parent_on_failure: the parent leaves waiting-children too
 * (failed, or on Redis waiting, to fail when taken, as in BullMQ). */
void case_cancel_child_reaches_parent(conf_ctx *c) {
    ln_job_opts later;
    ln_job_opts_init(&later);
    later.delay_ms = 60000;
    ln_flow_node kids[2] = {{.name = "held", .opts = &later, .ignore_dependency_on_failure = 1},
                            {.name = "held", .opts = &later, .fail_parent_on_failure = 1}};
    for (int i = 0; i < 2; i++) {
        ln_flow_node root = {
            .queue = c->queue, .name = "parent", .children = &kids[i], .nchildren = 1};
        char ids[2][LN_JOB_ID_MAX];
        CHECK_EQ(ln_jobs_add_flow(c->jobs, &root, ids[0], 2, LN_JOB_ID_MAX), 0);
        CHECK_EQ(conf_state(c, c->queue, ids[0]), LN_JOB_WAITING_CHILDREN);
        CHECK_EQ(ln_jobs_cancel(c->jobs, c->queue, ids[1]), 0);
        CHECK_EQ(conf_state(c, c->queue, ids[1]), LN_JOB_FAILED);
        int parent = conf_state(c, c->queue, ids[0]);
        if (i == 0)
            CHECK_EQ(parent, LN_JOB_WAITING);
        else
            CHECK(parent == LN_JOB_WAITING || parent == LN_JOB_FAILED);
    }
}

/* A drained child releases its parent, as a removed one does. */
void case_spec_drain_child_releases_parent(conf_ctx *c) {
    const char *q2 = conf_queue(c, "kids");
    ln_flow_node child = {q2, "k", "{}", NULL, 0, 0, 0, 0, NULL, 0};
    ln_flow_node root = {c->queue, "parent", "{}", NULL, 0, 0, 0, 0, &child, 1};
    char ids[2][LN_JOB_ID_MAX];
    CHECK_EQ(ln_jobs_add_flow(c->jobs, &root, ids[0], 2, LN_JOB_ID_MAX), 0);
    size_t removed = 0;
    CHECK_EQ(ln_jobs_drain(c->jobs, q2, &removed), 0);
    CHECK_EQ(removed, 1);
    CHECK_EQ(conf_state(c, c->queue, ids[0]), LN_JOB_WAITING);
    conf_check_counts(c, c->queue);
}

/* Scheduler "s", every 10 minutes from 10 minutes on: its pending
 * iteration (id into jid) is delayed. */
static void schedule_later(conf_ctx *c, char *jid) {
    ln_job_schedule s;
    ln_job_schedule_init(&s);
    s.every_ms = 600000;
    s.start_ms = (int64_t)time(NULL) * 1000 + 600000;
    CHECK_EQ(ln_jobs_schedule(c->jobs, c->queue, "s", &s, "n", NULL, NULL, jid, LN_JOB_ID_MAX), 0);
}

/* Drain spares a job scheduler's pending iteration (BullMQ's drain does),
 * so the schedule goes on. */
void case_spec_drain_keeps_schedule(conf_ctx *c) {
    char jid[LN_JOB_ID_MAX];
    schedule_later(c, jid);
    conf_add_id(c, c->queue, "plain-delayed", 0, 0, 600000);
    size_t removed = 0;
    CHECK_EQ(ln_jobs_drain(c->jobs, c->queue, &removed), 0);
    CHECK_EQ(removed, 1);
    CHECK_EQ(conf_state(c, c->queue, jid), LN_JOB_DELAYED);
}

/* ln_jobs_remove refuses a job scheduler's current iteration (LN_EBUSY,
 * as BullMQ's removeJob does: only its take makes the next one, so
 * removing it would end the schedule); ln_jobs_unschedule removes it. A
 * custom id of the same form is a job like any other. */
void case_spec_remove_sched_iteration(conf_ctx *c) {
    char jid[LN_JOB_ID_MAX];
    schedule_later(c, jid);
    SAYS(c->jobs, LN_EBUSY, ln_jobs_remove(c->jobs, c->queue, jid));
    CONF_CHECK_HAS(ln_jobs_errmsg(c->jobs), "scheduler");
    CHECK_EQ(conf_state(c, c->queue, jid), LN_JOB_DELAYED);
    /* A custom id of the same form, not the current iteration, goes. */
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.job_id = "repeat:s:1";
    CHECK_EQ(ln_jobs_add(c->jobs, c->queue, "n", NULL, &o, NULL, 0), 0);
    CHECK_EQ(ln_jobs_remove(c->jobs, c->queue, "repeat:s:1"), 0);
    CHECK_EQ(ln_jobs_unschedule(c->jobs, c->queue, "s"), 0);
    CHECK_EQ(conf_state(c, c->queue, jid), LN_ENOENT);
}
