/* conf_speed.c - ln_worker_opts.no_active_event on every store: the
 * default worker writes each taken job's 'active' event, the option does
 * not (on its batch take and on its rate-limited take alike), and the
 * other events stay. SQLite handles are opened with ?events=all (its
 * default writes no 'active' event at all). */
#include "conf.h"

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

static void case_no_active_event_is_opt_in(conf_ctx *c) {
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

const conf_case conf_speed_cases[] = {
    CONF_CASE(no_active_event_is_opt_in),
    {0},
};
