/* conf_obliterate.c - ln_jobs_obliterate (BullMQ's queue.obliterate()) on
 * every store: nothing of the queue is left (jobs in every state, logs,
 * schedulers, events, metrics, limits, pause flag, the queue's name), other
 * queues keep theirs, active jobs refuse it unless forced, steps of 1,000
 * add up, flow parents elsewhere are released, and bad input is refused. */
#include "conf.h"

#include <stdlib.h>

#define MANY 2500 /* more than two of obliterate's steps of 1,000 */

/* 1 if ln_jobs_queues lists queue. */
static int listed(conf_ctx *c, const char *queue) {
    char **names = NULL;
    size_t n = 0;
    SAYS(c->jobs, 0, ln_jobs_queues(c->jobs, &names, &n));
    int found = 0;
    for (size_t i = 0; i < n; i++) found |= strcmp(names[i], queue) == 0;
    ln_jobs_free_lines(names, n);
    return found;
}

/* A queue with a job in every state a worker can leave, a log, a job
 * scheduler, a deduplication id, a flow parent waiting for its child,
 * metrics, a rate limit and a global concurrency: obliterate removes every
 * job (and says how many), and then nothing of the queue is left: no job,
 * log, scheduler, event, metric, limit or pause flag, the deduplication id
 * is free, the queue is no longer listed. Another queue keeps its job. */
void case_obliterate_leaves_nothing(conf_ctx *c) {
    const char *other = conf_queue(c, "other");
    char done_id[LN_JOB_ID_MAX], bad_id[LN_JOB_ID_MAX], log_id[LN_JOB_ID_MAX];
    char iter_id[LN_JOB_ID_MAX], other_id[LN_JOB_ID_MAX];
    ln_job_opts once;
    ln_job_opts_init(&once);
    once.attempts = 1;
    conf_add(c, c->queue, "done", NULL, NULL, done_id);
    conf_add(c, c->queue, "bad", NULL, &once, bad_id);
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    wo.metrics_max_points = 10;
    conf_run(c, c->queue, conf_handler_by_name, NULL, &wo);
    CHECK_EQ(conf_state(c, c->queue, done_id), LN_JOB_COMPLETED);
    CHECK_EQ(conf_state(c, c->queue, bad_id), LN_JOB_FAILED);
    conf_add(c, c->queue, "log", NULL, NULL, log_id);
    SAYS(c->jobs, 0, ln_jobs_add_log(c->jobs, c->queue, log_id, "a line", 0, NULL));
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.delay_ms = 3600000;
    conf_add(c, c->queue, "later", NULL, &o, NULL);
    ln_job_opts_init(&o);
    o.priority = 2;
    conf_add(c, c->queue, "urgent", NULL, &o, NULL);
    ln_job_opts_init(&o);
    o.dedup_id = "once";
    conf_add(c, c->queue, "dedup", NULL, &o, NULL);
    conf_schedule(c, "tick", 60000, NULL, iter_id);
    ln_flow_node kid = {c->queue, "kid", "{}", NULL, 0, 0, 0, 0, NULL, 0};
    ln_flow_node root = {c->queue, "root", "{}", NULL, 0, 0, 0, 0, &kid, 1};
    char ids[2][LN_JOB_ID_MAX];
    SAYS(c->jobs, 0, ln_jobs_add_flow(c->jobs, &root, ids[0], 2, LN_JOB_ID_MAX));
    SAYS(c->jobs, 0, ln_jobs_set_rate_limit(c->jobs, c->queue, 100, 1000));
    SAYS(c->jobs, 0, ln_jobs_set_concurrency(c->jobs, c->queue, 7));
    conf_add(c, other, "stays", NULL, NULL, other_id);
    uint64_t total = conf_total(c, c->queue);
    CHECK_EQ(total, 9); /* done, bad, log, later, urgent, dedup, the iteration, root, kid */

    size_t removed = 0;
    SAYS(c->jobs, 0, ln_jobs_obliterate(c->jobs, c->queue, 0, &removed));
    CHECK_EQ(removed, total);
    CHECK_EQ(conf_total(c, c->queue), 0);
    conf_check_counts(c, c->queue);
    CHECK(!listed(c, c->queue));
    CHECK(listed(c, other));
    CHECK_EQ(conf_count_events(c, c->queue, NULL), 0);
    int paused = 1;
    SAYS(c->jobs, 0, ln_jobs_is_paused(c->jobs, c->queue, &paused));
    CHECK_EQ(paused, 0);
    int64_t max = -1, duration = -1, conc = -1;
    SAYS(c->jobs, 0, ln_jobs_get_rate_limit(c->jobs, c->queue, &max, &duration));
    SAYS(c->jobs, 0, ln_jobs_get_concurrency(c->jobs, c->queue, &conc));
    CHECK(max == 0 && duration == 0 && conc == 0);
    ln_job_scheduler *s = NULL;
    size_t ns = 1;
    SAYS(c->jobs, 0, ln_jobs_scheduler_list(c->jobs, c->queue, 0, 10, &s, &ns));
    CHECK_EQ(ns, 0);
    for (int type = LN_JOB_COMPLETED; type <= LN_JOB_FAILED; type++) {
        ln_job_metrics m;
        SAYS(c->jobs, 0, ln_jobs_metrics(c->jobs, c->queue, type, 0, -1, &m));
        CHECK(m.count == 0 && m.npoints == 0);
        ln_job_metrics_clear(&m);
    }
    char **lines = NULL;
    size_t nl = 0;
    SAYS(c->jobs, LN_ENOENT, ln_jobs_logs(c->jobs, c->queue, log_id, &lines, &nl));
    CHECK_EQ(conf_state(c, c->queue, done_id), LN_ENOENT);
    CHECK_EQ(conf_state(c, c->queue, iter_id), LN_ENOENT);
    CHECK_EQ(conf_state(c, other, other_id), LN_JOB_WAITING);
    char again[LN_JOB_ID_MAX];
    ln_job_opts_init(&o);
    o.dedup_id = "once";
    conf_add(c, c->queue, "dedup", NULL, &o, again); /* the id was freed: a new job */
    CHECK_EQ(conf_state(c, c->queue, again), LN_JOB_WAITING);
    CHECK_EQ(conf_total(c, c->queue), 1);
}

/* A job held by a running worker: without force nothing goes (LN_EBUSY)
 * and the queue stays paused; with force every job goes, the active one
 * too, and its worker's outcome is refused (stale), storing nothing. */
void case_obliterate_active_needs_force(conf_ctx *c) {
    conf_hold h = {0};
    conf_add(c, c->queue, "held", NULL, NULL, NULL);
    conf_add(c, c->queue, "waits", NULL, NULL, NULL);
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    wo.concurrency = 1;
    conf_bg *bg = conf_bg_start(c->jobs, c->queue, conf_hold_handler, &h, &wo);
    conf_hold_wait(&h, 1);
    size_t removed = 99;
    SAYS(c->jobs, LN_EBUSY, ln_jobs_obliterate(c->jobs, c->queue, 0, &removed));
    CHECK_EQ(removed, 0);
    CHECK_EQ(conf_total(c, c->queue), 2);
    int paused = 0;
    SAYS(c->jobs, 0, ln_jobs_is_paused(c->jobs, c->queue, &paused));
    CHECK_EQ(paused, 1);
    SAYS(c->jobs, 0, ln_jobs_obliterate(c->jobs, c->queue, 1, &removed));
    CHECK_EQ(removed, 2);
    atomic_store(&h.release, 1);
    ln_worker_stats st;
    CHECK_EQ(conf_bg_join(bg, &st), 0);
    CHECK_EQ(st.completed, 0);
    CHECK_EQ(st.stale, 1);
    CHECK_EQ(conf_total(c, c->queue), 0);
    CHECK(!listed(c, c->queue));
}

/* More jobs than two steps, in three states: every one goes and is
 * counted once. */
void case_obliterate_more_than_a_step(conf_ctx *c) {
    ln_job_spec *specs = calloc(MANY, sizeof *specs);
    CHECK(specs != NULL);
    ln_job_opts d, p;
    ln_job_opts_init(&d);
    d.delay_ms = 3600000;
    ln_job_opts_init(&p);
    p.priority = 5;
    for (size_t i = 0; i < MANY; i++)
        specs[i] = (ln_job_spec){"bulk", "{}", i % 3 == 0 ? NULL : i % 3 == 1 ? &d : &p};
    SAYS(c->jobs, 0, ln_jobs_add_bulk(c->jobs, c->queue, specs, MANY, NULL, 0));
    free(specs);
    size_t removed = 0;
    SAYS(c->jobs, 0, ln_jobs_obliterate(c->jobs, c->queue, 0, &removed));
    CHECK_EQ(removed, MANY);
    CHECK_EQ(conf_total(c, c->queue), 0);
    CHECK(!listed(c, c->queue));
}

/* Flows across queues: a parent in another queue whose only child goes is
 * released (it waits, and runs); a parent that goes leaves its child in
 * another queue, which then completes as a job whose parent is gone. */
void case_obliterate_flows_elsewhere(conf_ctx *c) {
    const char *up = conf_queue(c, "up"), *down = conf_queue(c, "down");
    ln_flow_node kid_here = {c->queue, "kid", "{}", NULL, 0, 0, 0, 0, NULL, 0};
    ln_flow_node parent_up = {up, "parent", "{}", NULL, 0, 0, 0, 0, &kid_here, 1};
    ln_flow_node kid_down = {down, "kid", "{}", NULL, 0, 0, 0, 0, NULL, 0};
    ln_flow_node parent_here = {c->queue, "parent", "{}", NULL, 0, 0, 0, 0, &kid_down, 1};
    char a[2][LN_JOB_ID_MAX], b[2][LN_JOB_ID_MAX];
    SAYS(c->jobs, 0, ln_jobs_add_flow(c->jobs, &parent_up, a[0], 2, LN_JOB_ID_MAX));
    SAYS(c->jobs, 0, ln_jobs_add_flow(c->jobs, &parent_here, b[0], 2, LN_JOB_ID_MAX));
    CHECK_EQ(conf_state(c, up, a[0]), LN_JOB_WAITING_CHILDREN);
    size_t removed = 0;
    SAYS(c->jobs, 0, ln_jobs_obliterate(c->jobs, c->queue, 0, &removed));
    CHECK_EQ(removed, 2); /* the kid here and the parent here */
    CHECK_EQ(conf_state(c, up, a[0]), LN_JOB_WAITING);
    CHECK_EQ(conf_state(c, down, b[1]), LN_JOB_WAITING);
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    ln_worker_stats st = conf_run(c, up, conf_handler_by_name, NULL, &wo);
    CHECK_EQ(st.completed, 1);
    st = conf_run(c, down, conf_handler_by_name, NULL, &wo);
    CHECK_EQ(st.completed, 1);
    CHECK_EQ(conf_state(c, down, b[1]), LN_JOB_COMPLETED);
}

/* A queue with a parent and its child both in it: both go, both counted
 * (on Redis the parent goes with its last child). */
void case_obliterate_counts_parents(conf_ctx *c) {
    ln_flow_node kids[3] = {{NULL, "k1", "{}", NULL, 0, 0, 0, 0, NULL, 0},
                            {NULL, "k2", "{}", NULL, 0, 0, 0, 0, NULL, 0},
                            {NULL, "k3", "{}", NULL, 0, 0, 0, 0, NULL, 0}};
    ln_flow_node mid = {NULL, "mid", "{}", NULL, 0, 0, 0, 0, kids, 3};
    ln_flow_node root = {c->queue, "root", "{}", NULL, 0, 0, 0, 0, &mid, 1};
    char ids[5][LN_JOB_ID_MAX];
    SAYS(c->jobs, 0, ln_jobs_add_flow(c->jobs, &root, ids[0], 5, LN_JOB_ID_MAX));
    size_t removed = 0;
    SAYS(c->jobs, 0, ln_jobs_obliterate(c->jobs, c->queue, 0, &removed));
    CHECK_EQ(removed, 5);
    CHECK_EQ(conf_total(c, c->queue), 0);
}

/* force other than 0/1 and a bad queue name are refused before anything
 * happens; an unknown queue is obliterated as an empty one, and is not
 * listed after (its pause made no lasting trace). */
void case_obliterate_bad_input(conf_ctx *c) {
    size_t removed = 7;
    SAYS(c->jobs, LN_EINVAL, ln_jobs_obliterate(c->jobs, c->queue, 2, &removed));
    CHECK_EQ(removed, 0);
    SAYS(c->jobs, LN_EINVAL, ln_jobs_obliterate(c->jobs, NULL, 0, &removed));
    SAYS(c->jobs, LN_EINVAL, ln_jobs_obliterate(c->jobs, "", 0, NULL));
    int paused = 1;
    SAYS(c->jobs, 0, ln_jobs_is_paused(c->jobs, c->queue, &paused));
    CHECK_EQ(paused, 0);
    SAYS(c->jobs, 0, ln_jobs_obliterate(c->jobs, c->queue, 0, &removed));
    CHECK_EQ(removed, 0);
    CHECK(!listed(c, c->queue));
}

/* A follower of another queue sees that queue's events after an
 * obliterate too: the obliterated queue held the store's newest events
 * (its pause among them), and on SQLite an event's seq is counted from the
 * newest row, so deleting it would hand out seqs the follower had passed. */
void case_obliterate_other_followers_see_on(conf_ctx *c) {
    ln_jobs *jobs = conf_open_all_events(c);
    const char *other = conf_queue(c, "other");
    char id[LN_JOB_ID_MAX];
    CHECK_EQ(ln_jobs_add(jobs, other, "a", "{}", NULL, id, sizeof id), 0);
    CHECK_EQ(ln_jobs_add(jobs, c->queue, "a", "{}", NULL, id, sizeof id), 0);
    ln_jobs_events *ev;
    SAYS(jobs, 0, ln_jobs_events_open(jobs, other, "$", &ev));
    SAYS(jobs, 0, ln_jobs_obliterate(jobs, c->queue, 0, NULL));
    CHECK_EQ(ln_jobs_add(jobs, other, "b", "{}", NULL, id, sizeof id), 0);
    ln_job_event e;
    conf_next_named(ev, "added", &e);
    CONF_CHECK_STR(e.job_id, id);
    ln_job_event_clear(&e);
    ln_jobs_events_close(ev);
    CHECK_EQ(conf_count_events(c, c->queue, NULL), 0);
    ln_jobs_close(jobs);
}
