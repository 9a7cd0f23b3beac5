/* conf_worker_keep.c - a worker's retention (ln_worker_opts
 * remove_on_complete / remove_on_fail; BullMQ's worker options of those
 * names): it applies to the jobs the worker finishes whose own option is
 * not set (LN_KEEP_ALL), a job's own option wins, LN_KEEP_ALWAYS keeps a
 * job whatever the worker's, and bad worker options are refused. */
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
