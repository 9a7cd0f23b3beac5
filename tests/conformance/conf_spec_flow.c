/* conf_spec_flow.c - more of the behaviours of jobs.h that no concept file
 * exercised: what drain, cancel, remove and clean do to flow parents,
 * deduplication ids and job schedulers' iterations, the retry and wait
 * edges, and the NULL-handle and option-bound checks of every header. */
#include "conf.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>

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

/* A drained job is removed as ln_jobs_remove removes one: a deduplication
 * id it held is free again. */
void case_spec_drain_frees_dedup_id(conf_ctx *c) {
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.dedup_id = "dd1";
    char a[LN_JOB_ID_MAX], b[LN_JOB_ID_MAX];
    CHECK_EQ(ln_jobs_add(c->jobs, c->queue, "n", "1", &o, a, sizeof a), 0);
    size_t removed = 0;
    CHECK_EQ(ln_jobs_drain(c->jobs, c->queue, &removed), 0);
    CHECK_EQ(removed, 1);
    CHECK_EQ(ln_jobs_add(c->jobs, c->queue, "n", "2", &o, b, sizeof b), 0);
    CHECK(strcmp(a, b) != 0);
    CHECK_EQ(conf_state(c, c->queue, b), LN_JOB_WAITING);
    CHECK_EQ(conf_total(c, c->queue), 1);
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

/* A canceled job failed: a simple deduplication id it held is free. */
void case_spec_cancel_frees_dedup_id(conf_ctx *c) {
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.dedup_id = "dc1";
    char a[LN_JOB_ID_MAX], b[LN_JOB_ID_MAX];
    CHECK_EQ(ln_jobs_add(c->jobs, c->queue, "n", "1", &o, a, sizeof a), 0);
    CHECK_EQ(ln_jobs_cancel(c->jobs, c->queue, a), 0);
    CHECK_EQ(ln_jobs_add(c->jobs, c->queue, "n", "2", &o, b, sizeof b), 0);
    CHECK(strcmp(a, b) != 0);
    CHECK_EQ(conf_state(c, c->queue, b), LN_JOB_WAITING);
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

/* A throttled deduplication id (a TTL) after its holder goes: removing or
 * draining the job frees it (as BullMQ's removal does), a cancel (a final
 * failure) does not. */
void case_spec_throttle_after_removal(conf_ctx *c) {
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.dedup_ttl_ms = 60000;
    for (int i = 0; i < 3; i++) {
        char did[16], a[LN_JOB_ID_MAX], b[LN_JOB_ID_MAX];
        snprintf(did, sizeof did, "th%d", i);
        o.dedup_id = did;
        CHECK_EQ(ln_jobs_add(c->jobs, c->queue, "n", "1", &o, a, sizeof a), 0);
        if (i == 0) CHECK_EQ(ln_jobs_remove(c->jobs, c->queue, a), 0);
        if (i == 1) CHECK_EQ(ln_jobs_drain(c->jobs, c->queue, NULL), 0);
        if (i == 2) CHECK_EQ(ln_jobs_cancel(c->jobs, c->queue, a), 0);
        CHECK_EQ(ln_jobs_add(c->jobs, c->queue, "n", "2", &o, b, sizeof b), 0);
        if (i < 2) {
            CHECK(strcmp(a, b) != 0);
            CHECK_EQ(conf_state(c, c->queue, b), LN_JOB_WAITING);
        } else {
            CONF_CHECK_STR(b, a);
        }
    }
}

/* The "removed" event's prev names the state the job was in. */
void case_spec_removed_prev(conf_ctx *c) {
    ln_jobs *jobs = conf_open_all_events(c);
    ln_jobs_events *ev;
    CHECK_EQ(ln_jobs_events_open(jobs, c->queue, "$", &ev), 0);
    conf_add_id(c, c->queue, "rp", 3, 0, 0);
    ln_flow_node child = {NULL, "k", "{}", NULL, 0, 0, 0, 0, NULL, 0};
    ln_flow_node root = {c->queue, "parent", "{}", NULL, 0, 0, 0, 0, &child, 1};
    char ids[2][LN_JOB_ID_MAX];
    CHECK_EQ(ln_jobs_add_flow(c->jobs, &root, ids[0], 2, LN_JOB_ID_MAX), 0);
    CHECK_EQ(ln_jobs_remove(jobs, c->queue, "rp"), 0);
    CHECK_EQ(ln_jobs_remove(jobs, c->queue, ids[0]), 0);
    ln_job_event e;
    conf_next_named(ev, "removed", &e);
    CONF_CHECK_STR(e.job_id, "rp");
    CONF_CHECK_HAS(e.fields, "\"prev\":\"prioritized\"");
    ln_job_event_clear(&e);
    conf_next_named(ev, "removed", &e);
    CONF_CHECK_STR(e.job_id, ids[0]);
    CONF_CHECK_HAS(e.fields, "\"prev\":\"waiting-children\"");
    ln_job_event_clear(&e);
    ln_jobs_events_close(ev);
    ln_jobs_close(jobs);
}

/* One batch whose jobs share a deduplication id: the first holds it, the
 * later ones are deduplicated to it (their id slot gets the holder's). */
void case_spec_bulk_shared_dedup_id(conf_ctx *c) {
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.dedup_id = "bd1";
    ln_job_spec specs[3] = {{"a", "1", &o}, {"b", "2", &o}, {"c", "3", NULL}};
    char ids[3][LN_JOB_ID_MAX];
    int rc = ln_jobs_add_bulk(c->jobs, c->queue, specs, 3, ids[0], LN_JOB_ID_MAX);
    if (rc != 0) fprintf(stderr, "bulk: %s\n", ln_jobs_errmsg(c->jobs));
    CHECK_EQ(rc, 0);
    CONF_CHECK_STR(ids[1], ids[0]);
    CHECK(strcmp(ids[2], ids[0]) != 0);
    CHECK_EQ(conf_total(c, c->queue), 2);
}

/* ln_job_metrics_record's edges: n 0 or max_points 0 change nothing; a
 * clock behind prev_ts counts without a point. */
void case_spec_metrics_record_edges(conf_ctx *c) {
    (void)c;
    ln_job_metrics m;
    memset(&m, 0, sizeof m);
    uint64_t first = 77;
    CHECK_EQ(ln_job_metrics_record(&m, 0, 120000, 10, &first), 0);
    CHECK_EQ(m.count, 0);
    CHECK_EQ(m.prev_ts, 0);
    CHECK_EQ(ln_job_metrics_record(&m, 3, 120000, 0, &first), 0);
    CHECK_EQ(m.count, 0);
    CHECK_EQ(ln_job_metrics_record(&m, 2, 120000, 10, &first), 0);
    CHECK_EQ(m.count, 2);
    CHECK_EQ(m.prev_ts, 120000);
    CHECK_EQ(m.prev_count, 0);
    CHECK_EQ(ln_job_metrics_record(&m, 1, 60000, 10, &first), 0); /* behind */
    CHECK_EQ(m.count, 3);
    CHECK_EQ(m.prev_ts, 120000);
    CHECK_EQ(ln_job_metrics_record(&m, 1, 120000 + 5 * 60000, 3, &first), 3);
    CHECK_EQ(first, 3);
    CHECK_EQ(m.count, 4);
    CHECK_EQ(m.prev_count, 3);
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

/* A retried job goes back by its priority: prioritized with one, waiting
 * without (a job failed while delayed too); it runs in priority order. */
void case_spec_retry_keeps_priority(conf_ctx *c) {
    conf_add_id(c, c->queue, "p7", 7, 0, 0);
    conf_add_id(c, c->queue, "p2", 2, 0, 0);
    conf_add_id(c, c->queue, "d0", 0, 0, 600000);
    const char *ids[] = {"p7", "p2", "d0"};
    for (int i = 0; i < 3; i++) CHECK_EQ(ln_jobs_cancel(c->jobs, c->queue, ids[i]), 0);
    size_t n = 0;
    CHECK_EQ(ln_jobs_retry_all(c->jobs, c->queue, &n), 0);
    CHECK_EQ(n, 3);
    CHECK_EQ(conf_state(c, c->queue, "p7"), LN_JOB_PRIORITIZED);
    CHECK_EQ(conf_state(c, c->queue, "p2"), LN_JOB_PRIORITIZED);
    CHECK_EQ(conf_state(c, c->queue, "d0"), LN_JOB_WAITING);
    char got[64];
    conf_list_ids(c, c->queue, LN_JOB_PRIORITIZED, 0, 10, got, sizeof got);
    CONF_CHECK_STR(got, "p2 p7 ");
    conf_check_counts(c, c->queue);
}

/* Handle-level strings: no warning for a NULL handle, an empty message
 * before any failure, and the follower's own empty message. */
void case_spec_handle_strings(conf_ctx *c) {
    CHECK(ln_jobs_warning(NULL) == NULL);
    ln_jobs *j = conf_open(c, NULL);
    CONF_CHECK_STR(ln_jobs_errmsg(j), "");
    const char *w1 = ln_jobs_warning(j), *w2 = ln_jobs_warning(j);
    CHECK(w1 == w2);
    ln_jobs_events *ev;
    CHECK_EQ(ln_jobs_events_open(j, c->queue, "$", &ev), 0);
    CONF_CHECK_STR(ln_jobs_events_errmsg(ev), "");
    ln_jobs_events_close(ev);
    ln_jobs_close(j);
}

/* ln_jobs_schedule's argument checks the scheduler cases leave out: the
 * id's bounds, negative times and limits, the template's name, data and
 * the options a scheduler sets itself. Each refused with a message,
 * nothing stored; the longest id is taken. */
static int sched_try(conf_ctx *c, const char *id, const ln_job_schedule *s, const char *name,
                     const char *data, const ln_job_opts *o) {
    char jid[LN_JOB_ID_MAX];
    return ln_jobs_schedule(c->jobs, c->queue, id, s, name, data, o, jid, sizeof jid);
}

void case_spec_schedule_arg_checks(conf_ctx *c) {
    ln_job_schedule s;
    ln_job_schedule_init(&s);
    s.every_ms = 600000;
    char id101[102], id100[101];
    memset(id101, 's', 101);
    id101[101] = '\0';
    memcpy(id100, id101, 100);
    id100[100] = '\0';
    SAYS(c->jobs, LN_EINVAL, sched_try(c, id101, &s, "n", NULL, NULL));
    SAYS(c->jobs, LN_EINVAL, sched_try(c, "", &s, "n", NULL, NULL));
    SAYS(c->jobs, LN_EINVAL, sched_try(c, NULL, &s, "n", NULL, NULL));
    SAYS(c->jobs, LN_EINVAL, sched_try(c, "a\tb", &s, "n", NULL, NULL));
    SAYS(c->jobs, LN_EINVAL, sched_try(c, "s", NULL, "n", NULL, NULL));
    SAYS(c->jobs, LN_EINVAL, sched_try(c, "s", &s, NULL, NULL, NULL));
    SAYS(c->jobs, LN_EINVAL, sched_try(c, "s", &s, "", NULL, NULL));
    SAYS(c->jobs, LN_EINVAL, sched_try(c, "s", &s, "n", "{bad", NULL));
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.job_id = "mine";
    SAYS(c->jobs, LN_EINVAL, sched_try(c, "s", &s, "n", NULL, &o));
    ln_job_opts_init(&o);
    o.dedup_id = "d";
    SAYS(c->jobs, LN_EINVAL, sched_try(c, "s", &s, "n", NULL, &o));
    ln_job_opts_init(&o);
    o.attempts = 0;
    SAYS(c->jobs, LN_EINVAL, sched_try(c, "s", &s, "n", NULL, &o));
    ln_job_schedule b = s;
    b.every_ms = -5;
    SAYS(c->jobs, LN_EINVAL, sched_try(c, "s", &b, "n", NULL, NULL));
    b = s;
    b.limit = -1;
    SAYS(c->jobs, LN_EINVAL, sched_try(c, "s", &b, "n", NULL, NULL));
    b = s;
    b.start_ms = -1;
    SAYS(c->jobs, LN_EINVAL, sched_try(c, "s", &b, "n", NULL, NULL));
    b = s;
    b.end_ms = -1;
    SAYS(c->jobs, LN_EINVAL, sched_try(c, "s", &b, "n", NULL, NULL));
    b = s; /* past a JavaScript Date: refused, never an overflow later */
    b.start_ms = 8640000000000001;
    SAYS(c->jobs, LN_EINVAL, sched_try(c, "s", &b, "n", NULL, NULL));
    b = s;
    b.end_ms = INT64_MAX;
    SAYS(c->jobs, LN_EINVAL, sched_try(c, "s", &b, "n", NULL, NULL));
    SAYS(c->jobs, LN_EINVAL, ln_jobs_schedule(c->jobs, "", "s", &s, "n", NULL, NULL, NULL, 0));
    CHECK_EQ(conf_total(c, c->queue), 0);
    ln_job_scheduler *list = NULL;
    size_t n = 9;
    CHECK_EQ(ln_jobs_scheduler_list(c->jobs, c->queue, 0, 10, &list, &n), 0);
    CHECK_EQ(n, 0);
    ln_job_scheduler got;
    SAYS(c->jobs, LN_EINVAL, ln_jobs_scheduler_get(c->jobs, c->queue, "", &got));
    SAYS(c->jobs, LN_EINVAL, ln_jobs_unschedule(c->jobs, c->queue, ""));
    SAYS(c->jobs, LN_EINVAL, ln_jobs_unschedule(c->jobs, c->queue, NULL));
    /* The longest id, and job_id NULL. */
    CHECK_EQ(ln_jobs_schedule(c->jobs, c->queue, id100, &s, "n", NULL, NULL, NULL, 0), 0);
    CHECK_EQ(ln_jobs_scheduler_get(c->jobs, c->queue, id100, &got), 0);
    CONF_CHECK_STR(got.id, id100);
    CONF_CHECK_STR(got.data, "{}");
    ln_job_scheduler_clear(&got);
    CHECK_EQ(conf_total(c, c->queue), 1);
}

/* The worker options' bounds jobs.h states: concurrency 1..4096, poll_ms
 * >= 1, timeout_ms and the rate limit 0..2^31-1, metrics_max_points up to
 * LN_JOB_METRICS_POINTS_MAX; the edges themselves are taken. */
void case_spec_worker_option_bounds(conf_ctx *c) {
    ln_worker_opts o;
    ln_worker *w = NULL;
    for (int i = 0; i < 4; i++) {
        ln_worker_opts_init(&o);
        if (i == 0) o.concurrency = 4097;
        if (i == 1) o.metrics_max_points = LN_JOB_METRICS_POINTS_MAX + 1;
        if (i == 2) o.rate_max = 5;
        if (i == 3) o.rate_max = 1, o.rate_duration_ms = (unsigned)INT32_MAX + 1u;
        SAYS(c->jobs, LN_EINVAL,
             ln_worker_create(&w, c->jobs, c->queue, conf_handler_by_name, NULL, &o));
        CHECK(w == NULL);
    }
    ln_worker_opts_init(&o);
    o.concurrency = 4096;
    o.batch = 9999; /* more than concurrency: concurrency */
    o.poll_ms = 1;
    o.timeout_ms = INT32_MAX;
    o.metrics_max_points = LN_JOB_METRICS_POINTS_MAX;
    o.rate_max = INT32_MAX, o.rate_duration_ms = INT32_MAX;
    o.exit_when_empty = 1;
    int rc = ln_worker_create(&w, c->jobs, c->queue, conf_handler_by_name, NULL, &o);
    if (rc != 0) fprintf(stderr, "worker: %s\n", ln_jobs_errmsg(c->jobs));
    CHECK_EQ(rc, 0);
    conf_add(c, c->queue, "n", "1", NULL, NULL);
    CHECK_EQ(ln_worker_run(w), 0);
    ln_worker_stats st;
    ln_worker_get_stats(w, &st);
    CHECK_EQ(st.completed, 1);
    ln_worker_destroy(w);
}

/* A failed run that is retried writes "waiting" or "delayed", never
 * "failed"; "failed" comes once, at the final failure. */
static int spec_fail_always(ln_job *job, void *ctx) {
    (void)ctx;
    return ln_job_fail(job, "again");
}

void case_spec_retry_events(conf_ctx *c) {
    ln_jobs *jobs = conf_open_all_events(c);
    ln_jobs_events *ev;
    CHECK_EQ(ln_jobs_events_open(jobs, c->queue, "$", &ev), 0);
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.attempts = 3;
    o.backoff_ms = 0;
    char id[LN_JOB_ID_MAX];
    CHECK_EQ(ln_jobs_add(jobs, c->queue, "n", "1", &o, id, sizeof id), 0);
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    ln_worker *w;
    CHECK_EQ(ln_worker_create(&w, jobs, c->queue, spec_fail_always, NULL, &wo), 0);
    CHECK_EQ(ln_worker_run(w), 0);
    ln_worker_destroy(w);
    int failed = 0, retried = 0, active = 0;
    ln_job_event e;
    while (ln_jobs_events_next(ev, 200, &e) == 0) {
        if (strcmp(e.job_id, id) == 0) {
            if (strcmp(e.name, "failed") == 0) {
                failed++;
                CONF_CHECK_HAS(e.fields, "\"failedReason\":\"again\"");
                CONF_CHECK_HAS(e.fields, "\"prev\":\"active\"");
            }
            if (strcmp(e.name, "active") == 0) active++;
            if (active > 0 && (strcmp(e.name, "waiting") == 0 || strcmp(e.name, "delayed") == 0))
                retried++;
        }
        ln_job_event_clear(&e);
    }
    CHECK_EQ(failed, 1);
    CHECK_EQ(active, 3);
    CHECK_EQ(retried, 2);
    ln_jobs_events_close(ev);
    ln_jobs_close(jobs);
}

/* Every call of the feature headers refuses a NULL handle (no crash), and
 * their output pointers NULL. */
void case_spec_null_handle_everywhere(conf_ctx *c) {
    const char *q = c->queue;
    int64_t a = 0, b = 0;
    ln_job_schedule s;
    ln_job_schedule_init(&s);
    s.every_ms = 1000;
    ln_job_scheduler sc, *scs;
    ln_job_children ch;
    ln_job_metrics m;
    ln_worker_info *wi;
    size_t n;
    ln_flow_node root = {q, "n", NULL, NULL, 0, 0, 0, 0, NULL, 0};
    CHECK_EQ(ln_jobs_cancel(NULL, q, "x"), LN_EINVAL);
    CHECK_EQ(ln_jobs_promote(NULL, q, "x"), LN_EINVAL);
    CHECK_EQ(ln_jobs_set_rate_limit(NULL, q, 1, 1), LN_EINVAL);
    CHECK_EQ(ln_jobs_get_rate_limit(NULL, q, &a, &b), LN_EINVAL);
    CHECK_EQ(ln_jobs_set_concurrency(NULL, q, 1), LN_EINVAL);
    CHECK_EQ(ln_jobs_get_concurrency(NULL, q, &a), LN_EINVAL);
    CHECK_EQ(ln_jobs_rate_limit(NULL, q, 1), LN_EINVAL);
    CHECK_EQ(ln_jobs_rate_limit_ttl(NULL, q, 0, &a), LN_EINVAL);
    CHECK_EQ(ln_jobs_workers(NULL, q, &wi, &n), LN_EINVAL);
    CHECK_EQ(ln_jobs_metrics(NULL, q, LN_JOB_COMPLETED, 0, -1, &m), LN_EINVAL);
    CHECK_EQ(ln_jobs_add_flow(NULL, &root, NULL, 0, 0), LN_EINVAL);
    CHECK_EQ(ln_jobs_children(NULL, q, "x", &ch), LN_EINVAL);
    CHECK_EQ(ln_jobs_schedule(NULL, q, "s", &s, "n", NULL, NULL, NULL, 0), LN_EINVAL);
    CHECK_EQ(ln_jobs_unschedule(NULL, q, "s"), LN_EINVAL);
    CHECK_EQ(ln_jobs_scheduler_get(NULL, q, "s", &sc), LN_EINVAL);
    CHECK_EQ(ln_jobs_scheduler_list(NULL, q, 0, 1, &scs, &n), LN_EINVAL);
    CHECK_EQ(ln_jobs_queues(NULL, NULL, NULL), LN_EINVAL);
    CHECK_EQ(ln_jobs_add_flow(c->jobs, NULL, NULL, 0, 0), LN_EINVAL);
    SAYS(c->jobs, LN_EINVAL, ln_jobs_get_rate_limit(c->jobs, q, NULL, &b));
    SAYS(c->jobs, LN_EINVAL, ln_jobs_get_rate_limit(c->jobs, q, &a, NULL));
    SAYS(c->jobs, LN_EINVAL, ln_jobs_get_concurrency(c->jobs, q, NULL));
    SAYS(c->jobs, LN_EINVAL, ln_jobs_metrics(c->jobs, q, LN_JOB_COMPLETED, 0, -1, NULL));
    SAYS(c->jobs, LN_EINVAL, ln_jobs_rate_limit(c->jobs, q, -1));
    SAYS(c->jobs, LN_EINVAL, ln_jobs_rate_limit(c->jobs, q, (int64_t)INT32_MAX + 1));
    SAYS(c->jobs, LN_EINVAL, ln_jobs_set_concurrency(c->jobs, q, -1));
    SAYS(c->jobs, LN_EINVAL, ln_jobs_set_concurrency(c->jobs, q, (int64_t)INT32_MAX + 1));
    SAYS(c->jobs, LN_EINVAL, ln_jobs_set_rate_limit(c->jobs, q, 1, 0));
    SAYS(c->jobs, LN_EINVAL, ln_jobs_set_rate_limit(c->jobs, q, 0, 1));
    SAYS(c->jobs, LN_EINVAL, ln_jobs_set_rate_limit(c->jobs, q, -1, -1));
    CHECK_EQ(ln_jobs_set_rate_limit(c->jobs, q, 0, 0), 0);
    CHECK_EQ(ln_jobs_set_concurrency(c->jobs, q, 0), 0);
    CHECK_EQ(ln_jobs_rate_limit(c->jobs, q, 0), 0);
    CHECK_EQ(ln_jobs_get_rate_limit(c->jobs, q, &a, &b), 0);
    CHECK(a == 0 && b == 0);
    CHECK_EQ(ln_jobs_get_concurrency(c->jobs, q, &a), 0);
    CHECK_EQ(a, 0);
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

/* ln_jobs_wait on a job removed meanwhile: LN_ENOENT at once (the
 * "removed" event, which every events= setting but none writes). */
typedef struct spec_wait {
    const char *url, *queue, *id;
    int rc;
    int64_t ms;
} spec_wait;

static void *spec_wait_thread(void *p) {
    spec_wait *a = p;
    ln_jobs *jobs = NULL;
    CHECK_EQ(ln_jobs_open(&jobs, a->url), 0);
    ln_job_info info;
    int64_t t0 = conf_now_ms();
    a->rc = ln_jobs_wait(jobs, a->queue, a->id, 5000, &info);
    a->ms = conf_now_ms() - t0;
    ln_job_info_clear(&info);
    ln_jobs_close(jobs);
    return NULL;
}

void case_spec_wait_for_a_removed_job(conf_ctx *c) {
    char id[LN_JOB_ID_MAX];
    conf_add(c, c->queue, "n", "{}", NULL, id);
    spec_wait a = {c->url, c->queue, id, 1, 0};
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, spec_wait_thread, &a), 0);
    struct timespec ts = {0, 200000000}; /* the wait follows the events by then */
    nanosleep(&ts, NULL);
    CHECK_EQ(ln_jobs_remove(c->jobs, c->queue, id), 0);
    CHECK_EQ(pthread_join(t, NULL), 0);
    CHECK_EQ(a.rc, LN_ENOENT);
    CHECK(a.ms < 3000);
}
