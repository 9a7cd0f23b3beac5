/* conf_speed.c - ln_worker_opts.no_active_event on every store: the
 * default worker writes each taken job's 'active' event, the option does
 * not (on its batch take and on its rate-limited take alike), and the
 * other events stay. SQLite handles are opened with ?events=all (its
 * default writes no 'active' event at all). */
#include "conf.h"

#include <time.h>

/* Run one job with a worker of these options; returns its events' names
 * up to its 'completed' as "added,waiting,...," into names. */
static void events_of_one_run(conf_ctx *c, ln_jobs *jobs, const ln_worker_opts *o, char *names,
                              size_t size) {
    ln_jobs_events *ev;
    CHECK_EQ(ln_jobs_events_open(jobs, c->queue, "$", &ev), 0);
    char id[LN_JOB_ID_MAX];
    CHECK_EQ(ln_jobs_add(jobs, c->queue, "n", "{}", NULL, id, sizeof id), 0);
    ln_worker *w;
    CHECK_EQ(ln_worker_create(&w, jobs, c->queue, conf_handler_by_name, NULL, o), 0);
    CHECK_EQ(ln_worker_run(w), 0);
    ln_worker_destroy(w);
    size_t n = 0;
    names[0] = '\0';
    for (int done = 0; !done;) {
        ln_job_event e;
        int rc = ln_jobs_events_next(ev, 5000, &e);
        if (rc != 0) fprintf(stderr, "events_next: %s\n", ln_jobs_events_errmsg(ev));
        CHECK_EQ(rc, 0);
        if (strcmp(e.job_id, id) == 0) {
            n += (size_t)snprintf(names + n, size - n, "%s,", e.name);
            CHECK(n < size);
            done = strcmp(e.name, "completed") == 0;
        }
        ln_job_event_clear(&e);
    }
    ln_jobs_events_close(ev);
}

void case_no_active_event_is_opt_in(conf_ctx *c) {
    ln_jobs *jobs = conf_open_all_events(c);
    ln_worker_opts o;
    conf_worker_opts(&o);
    char names[256];
    events_of_one_run(c, jobs, &o, names, sizeof names);
    CONF_CHECK_STR(names, "added,waiting,active,completed,");
    o.no_active_event = 1;
    events_of_one_run(c, jobs, &o, names, sizeof names);
    CONF_CHECK_STR(names, "added,waiting,completed,");
    /* The rate-limited take (job by job) honours it too. */
    o.rate_max = 1000;
    o.rate_duration_ms = 1000;
    events_of_one_run(c, jobs, &o, names, sizeof names);
    CONF_CHECK_STR(names, "added,waiting,completed,");
    o.no_active_event = 0;
    events_of_one_run(c, jobs, &o, names, sizeof names);
    CONF_CHECK_STR(names, "added,waiting,active,completed,");
    ln_jobs_close(jobs);
}

/* The first job's handler sleeps, so the jobs queued behind it on the
 * worker's one thread all return while the dispatcher wakes: they reach
 * the store in batches, where the order within a batch shows. */
static int first_sleeps(ln_job *job, void *ctx) {
    (void)ctx;
    if (strcmp(ln_job_name(job), "first") == 0) {
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return 0;
}

/* The ids of the queue's events named name, in the stream's order, as
 * "id,id,...," into out, until want of them are seen. */
static void ids_of(conf_ctx *c, ln_jobs *jobs, const char *name, size_t want, char *out,
                   size_t size) {
    ln_jobs_events *ev;
    CHECK_EQ(ln_jobs_events_open(jobs, c->queue, "0", &ev), 0);
    size_t n = 0;
    out[0] = '\0';
    for (size_t seen = 0; seen < want; seen++) {
        ln_job_event e;
        conf_next_named(ev, name, &e);
        n += (size_t)snprintf(out + n, size - n, "%s,", e.job_id);
        CHECK(n < size);
        ln_job_event_clear(&e);
    }
    ln_jobs_events_close(ev);
}

/* A worker records outcomes in the order its handlers returned: with one
 * handler thread, the order the jobs were taken, so the 'completed'
 * events come in the order of the 'active' ones. (The worker collects
 * finished handlers from a stack; sent newest first, each batch's
 * completions were recorded backwards, and on Redis every LREM of
 * 'active' scanned past the rest of its batch.) */
void case_outcomes_in_the_order_handlers_returned(conf_ctx *c) {
    enum { JOBS = 60 };
    ln_jobs *jobs = conf_open_all_events(c);
    for (int i = 0; i < JOBS; i++) {
        char id[LN_JOB_ID_MAX];
        CHECK_EQ(
            ln_jobs_add(jobs, c->queue, i % 20 == 0 ? "first" : "n", "{}", NULL, id, sizeof id), 0);
    }
    ln_pool_opts po;
    ln_pool_opts_init(&po);
    po.nlanes = 1;
    po.lanes[0] = (ln_lane_opts){"one", 1, 1, 0, NULL, 0};
    ln_pool *pool;
    CHECK_EQ(ln_pool_create(&pool, &po), 0);
    ln_worker_opts o;
    conf_worker_opts(&o);
    o.concurrency = 20;
    o.pool = pool;
    o.lane = 0;
    ln_worker *w;
    CHECK_EQ(ln_worker_create(&w, jobs, c->queue, first_sleeps, NULL, &o), 0);
    CHECK_EQ(ln_worker_run(w), 0);
    ln_worker_destroy(w);
    ln_pool_destroy(pool);
    static char active[JOBS * (LN_JOB_ID_MAX + 1)], completed[sizeof active];
    ids_of(c, jobs, "active", JOBS, active, sizeof active);
    ids_of(c, jobs, "completed", JOBS, completed, sizeof completed);
    CONF_CHECK_STR(completed, active);
    ln_jobs_close(jobs);
}
