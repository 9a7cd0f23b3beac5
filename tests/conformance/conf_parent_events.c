/* conf_parent_events.c - the event of a flow parent released because its
 * last pending child went (removed, cleaned): "waiting" {prev:
 * "waiting-children"}, or "delayed" {delay: the due time} for a parent
 * with a delay, in the parent's queue, also while the queue is paused; the
 * same on both stores, whatever path deleted the child. */
#include "conf_flowtree.h"

#include <stdlib.h>
#include <time.h>

/* r (custom id "r", in c->queue, with a delay) with one child "a" named
 * child_name in queue cq. */
static void add_pair_in(conf_ctx *c, const char *cq, const char *child_name,
                        int64_t parent_delay_ms) {
    conf_tree t;
    const conf_tree_row rows[] = {{NULL, c->queue, "parent", "r"}, {"r", cq, child_name, "a"}};
    CONF_TREE_MAKE(&t, rows);
    conf_tree_opts(&t, "r")->delay_ms = parent_delay_ms;
    conf_tree_add(c, &t);
    CHECK_EQ(conf_state(c, c->queue, "r"), LN_JOB_WAITING_CHILDREN);
}

static void add_pair(conf_ctx *c, const char *child_name, int64_t parent_delay_ms) {
    add_pair_in(c, c->queue, child_name, parent_delay_ms);
}

/* add_pair_in of a child "bad" in cq that a worker of cq (options *wo, kept
 * by the caller) then fails, with no failure option: r waits on. */
static void add_failed_pair(conf_ctx *c, const char *cq, ln_worker_opts *wo) {
    add_pair_in(c, cq, "bad", 0);
    conf_worker_opts(wo);
    conf_run(c, cq, conf_handler_by_name, NULL, wo);
    CHECK_EQ(conf_state(c, c->queue, "r"), LN_JOB_WAITING_CHILDREN);
}

/* The next event of ev named name, CHECKed to be job "r"'s. */
static void next_of_r(ln_jobs_events *ev, const char *name, ln_job_event *e) {
    conf_next_named(ev, name, e);
    CONF_CHECK_STR(e->job_id, "r");
}

/* A handle that writes every event, and a reader of c->queue's events
 * from now on. */
typedef struct watch {
    ln_jobs *jobs;
    ln_jobs_events *ev;
} watch;

static watch watch_open(conf_ctx *c) {
    watch w = {conf_open_all_events(c), NULL};
    CHECK_EQ(ln_jobs_events_open(w.jobs, c->queue, "$", &w.ev), 0);
    return w;
}

static void watch_close(watch *w) {
    ln_jobs_events_close(w->ev);
    ln_jobs_close(w->jobs);
}

/* The next "waiting" event of w is r's release from waiting-children. */
static void next_release_of_r(watch *w) {
    ln_job_event e;
    next_of_r(w->ev, "waiting", &e);
    CONF_CHECK_HAS(e.fields, "\"prev\":\"waiting-children\"");
    ln_job_event_clear(&e);
}

/* Removing the only child releases the parent: its "waiting" event. */
void case_parent_event_removed_child(conf_ctx *c) {
    add_pair(c, "leaf", 0);
    watch w = watch_open(c);
    SAYS(w.jobs, 0, ln_jobs_remove(w.jobs, c->queue, "a"));
    CHECK_EQ(conf_state(c, c->queue, "r"), LN_JOB_WAITING);
    next_release_of_r(&w);
    watch_close(&w);
    conf_check_counts(c, c->queue);
}

/* A parent with a delay goes to delayed: "delayed" with its due time. */
void case_parent_event_delayed(conf_ctx *c) {
    add_pair(c, "leaf", 60000);
    watch w = watch_open(c);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t before = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    SAYS(w.jobs, 0, ln_jobs_remove(w.jobs, c->queue, "a"));
    CHECK_EQ(conf_state(c, c->queue, "r"), LN_JOB_DELAYED);
    ln_job_event e;
    next_of_r(w.ev, "delayed", &e);
    const char *d = strstr(e.fields, "\"delay\":\"");
    CHECK(d != NULL);
    int64_t due = strtoll(d + 9, NULL, 10);
    CHECK(due >= before + 60000 - 1000 && due <= before + 60000 + 60000);
    ln_job_event_clear(&e);
    watch_close(&w);
}

/* A paused queue: the parent still gets "waiting" (and is paused). */
void case_parent_event_paused(conf_ctx *c) {
    add_pair(c, "leaf", 0);
    SAYS(c->jobs, 0, ln_jobs_pause(c->jobs, c->queue));
    watch w = watch_open(c);
    SAYS(w.jobs, 0, ln_jobs_remove(w.jobs, c->queue, "a"));
    CHECK_EQ(conf_state(c, c->queue, "r"), LN_JOB_PAUSED);
    next_release_of_r(&w);
    watch_close(&w);
}

/* A child that failed with no failure option stays its parent's pending
 * dependency; cleaning the failed jobs of its queue (another than the
 * parent's: in the same one the parent would go with it, as BullMQ's
 * clean removes it) releases the parent. */
void case_parent_event_cleaned_child(conf_ctx *c) {
    const char *kq = conf_queue(c, "kids");
    ln_worker_opts wo;
    add_failed_pair(c, kq, &wo);
    CHECK_EQ(conf_state(c, kq, "a"), LN_JOB_FAILED);
    watch w = watch_open(c);
    size_t removed = 0;
    SAYS(w.jobs, 0, ln_jobs_clean(w.jobs, kq, LN_JOB_FAILED, -1, 0, &removed));
    CHECK_EQ(removed, 1);
    CHECK_EQ(conf_state(c, c->queue, "r"), LN_JOB_WAITING);
    next_release_of_r(&w);
    watch_close(&w);
    conf_check_counts(c, c->queue);
    conf_check_counts(c, kq);
}

/* A failed child still pending, trimmed by a later failure's retention
 * (remove_on_fail: keep 1) in that failure's write: the parent is
 * released with its event. */
void case_parent_event_trimmed_child(conf_ctx *c) {
    const char *kq = conf_queue(c, "kids");
    ln_worker_opts wo;
    add_failed_pair(c, kq, &wo);
    ln_job_opts zo;
    ln_job_opts_init(&zo);
    zo.job_id = "z";
    zo.remove_on_fail.mode = LN_KEEP_COUNT;
    zo.remove_on_fail.value = 1;
    conf_add(c, kq, "bad", NULL, &zo, NULL);
    watch w = watch_open(c);
    ln_worker *wk = NULL;
    CHECK_EQ(ln_worker_create(&wk, w.jobs, kq, conf_handler_by_name, NULL, &wo), 0);
    CHECK_EQ(ln_worker_run(wk), 0);
    ln_worker_destroy(wk);
    CHECK_EQ(conf_state(c, kq, "a"), LN_ENOENT);
    CHECK_EQ(conf_state(c, kq, "z"), LN_JOB_FAILED);
    CHECK_EQ(conf_state(c, c->queue, "r"), LN_JOB_WAITING);
    next_release_of_r(&w);
    watch_close(&w);
}

/* The events of w up to the "added" of job "mark" (added now through
 * w's handle, which writes every event): CHECKs none is a release event
 * of "r". */
static void no_release_of_r(conf_ctx *c, watch *w) {
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.job_id = "mark";
    char id[LN_JOB_ID_MAX];
    SAYS(w->jobs, 0, ln_jobs_add(w->jobs, c->queue, "mark", NULL, &o, id, sizeof id));
    for (;;) {
        ln_job_event e;
        CHECK_EQ(ln_jobs_events_next(w->ev, 3000, &e), 0);
        int release = (strcmp(e.name, "waiting") == 0 || strcmp(e.name, "delayed") == 0) &&
                      strcmp(e.job_id, "r") == 0;
        int end = strcmp(e.name, "added") == 0 && strcmp(e.job_id, "mark") == 0;
        if (release) fprintf(stderr, "release event: %s %s\n", e.name, e.fields);
        ln_job_event_clear(&e);
        CHECK(!release);
        if (end) return;
    }
}

/* A clean (or a drain) of the parent's own queue removes the parent it
 * releases (BullMQ's "hard" removal): no release event for it. */
void case_parent_event_none_when_cleaned_with(conf_ctx *c) {
    ln_worker_opts wo;
    add_failed_pair(c, c->queue, &wo);
    watch w = watch_open(c);
    SAYS(w.jobs, 0, ln_jobs_clean(w.jobs, c->queue, LN_JOB_FAILED, -1, 0, NULL));
    CHECK_EQ(conf_state(c, c->queue, "r"), LN_ENOENT);
    no_release_of_r(c, &w);
    watch_close(&w);
}

void case_parent_event_none_when_drained_with(conf_ctx *c) {
    add_pair(c, "leaf", 0);
    watch w = watch_open(c);
    SAYS(w.jobs, 0, ln_jobs_drain(w.jobs, c->queue, NULL));
    CHECK_EQ(conf_state(c, c->queue, "r"), LN_ENOENT);
    no_release_of_r(c, &w);
    watch_close(&w);
}
