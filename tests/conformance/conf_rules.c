/* conf_rules.c - the naming rules every store shares: which queue names
 * and custom job ids are refused. Before these rules were one, only the
 * Redis store enforced some of them; these cases state them for every
 * store:
 *
 *   - a queue name containing ':' is refused with LN_EINVAL;
 *   - a custom job id containing ':' is refused with LN_EINVAL unless it
 *     has exactly three ':'-separated parts (the shape of scheduler ids);
 *   - a custom job id is refused when it is all digits (those are the
 *     store's own ids), and only then (jobs.h: "not all digits"). */
#include "conf.h"

/* Every call taking a queue name refuses one with ':'. */
void case_rules_queue_name_colon_refused(conf_ctx *c) {
    char q[LN_JOB_QUEUE_MAX], id[LN_JOB_ID_MAX];
    snprintf(q, sizeof q, "%s:sub", c->queue);
    const char *queues[] = {q, ":", "a:", ":a", "a::b"};
    for (size_t i = 0; i < CONF_NELEM(queues); i++) {
        const char *bad = queues[i];
        int rc = ln_jobs_add(c->jobs, bad, "n", "{}", NULL, id, sizeof id);
        if (rc != LN_EINVAL) fprintf(stderr, "add to queue '%s': %d\n", bad, rc);
        CHECK_EQ(rc, LN_EINVAL);
        CHECK(ln_jobs_errmsg(c->jobs)[0] != '\0');
        ln_job_spec spec = {"n", "{}", NULL};
        CHECK_EQ(ln_jobs_add_bulk(c->jobs, bad, &spec, 1, NULL, 0), LN_EINVAL);
        ln_job_counts k;
        ln_job_info info, *infos;
        size_t n;
        char **lines;
        int paused;
        CHECK_EQ(ln_jobs_counts(c->jobs, bad, &k), LN_EINVAL);
        CHECK_EQ(ln_jobs_get(c->jobs, bad, "x", &info), LN_EINVAL);
        CHECK_EQ(ln_jobs_list(c->jobs, bad, LN_JOB_WAITING, 0, 1, &infos, &n), LN_EINVAL);
        CHECK_EQ(ln_jobs_logs(c->jobs, bad, "x", &lines, &n), LN_EINVAL);
        CHECK_EQ(ln_jobs_retry(c->jobs, bad, "x"), LN_EINVAL);
        CHECK_EQ(ln_jobs_retry_all(c->jobs, bad, NULL), LN_EINVAL);
        CHECK_EQ(ln_jobs_remove(c->jobs, bad, "x"), LN_EINVAL);
        CHECK_EQ(ln_jobs_clean(c->jobs, bad, LN_JOB_COMPLETED, -1, 0, NULL), LN_EINVAL);
        CHECK_EQ(ln_jobs_pause(c->jobs, bad), LN_EINVAL);
        CHECK_EQ(ln_jobs_resume(c->jobs, bad), LN_EINVAL);
        CHECK_EQ(ln_jobs_is_paused(c->jobs, bad, &paused), LN_EINVAL);
        CHECK_EQ(ln_jobs_drain(c->jobs, bad, NULL), LN_EINVAL);
        ln_worker *w = NULL;
        CHECK_EQ(ln_worker_create(&w, c->jobs, bad, conf_handler_by_name, NULL, NULL), LN_EINVAL);
    }
}

/* Custom ids: ':' only in exactly three parts, the first not "0". */
void case_rules_job_id_colons(conf_ctx *c) {
    const char *refused[] = {"a:b",    ":",     "a:",  ":b",  "a:b:c:d", "x::y::z",
                             "a:b:c:", "0:a:b", "0::", "0:a", "0:a:b:c"};
    char id[LN_JOB_ID_MAX];
    for (size_t i = 0; i < CONF_NELEM(refused); i++) {
        ln_job_opts o;
        ln_job_opts_init(&o);
        o.job_id = refused[i];
        int rc = ln_jobs_add(c->jobs, c->queue, "n", "{}", &o, id, sizeof id);
        if (rc != LN_EINVAL) fprintf(stderr, "job id '%s': %d\n", refused[i], rc);
        CHECK_EQ(rc, LN_EINVAL);
        CHECK(ln_jobs_errmsg(c->jobs)[0] != '\0');
        /* in a batch, with a good job beside it: nothing stored */
        ln_job_spec specs[2] = {{"ok", "{}", NULL}, {"n", "{}", &o}};
        CHECK_EQ(ln_jobs_add_bulk(c->jobs, c->queue, specs, 2, NULL, 0), LN_EINVAL);
    }
    CHECK_EQ(conf_total(c, c->queue), 0);
    const char *allowed[] = {
        "repeat:s:1", "a:b:c", "sched:every-5m:job", "a::c", "::", ":a:b", "00:a:b", "a:0:b",
        "x0:a:b",     "a:b:0"};
    for (size_t i = 0; i < CONF_NELEM(allowed); i++) {
        ln_job_opts o;
        ln_job_opts_init(&o);
        o.job_id = allowed[i];
        int rc = ln_jobs_add(c->jobs, c->queue, "n", "{}", &o, id, sizeof id);
        if (rc != 0) fprintf(stderr, "job id '%s': %s\n", allowed[i], ln_jobs_errmsg(c->jobs));
        CHECK_EQ(rc, 0);
        CONF_CHECK_STR(id, allowed[i]);
        CHECK_EQ(conf_state(c, c->queue, allowed[i]), LN_JOB_WAITING);
    }
    /* and each runs (a Redis worker skips only BullMQ 4's "0:" markers) */
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    conf_run(c, c->queue, conf_handler_by_name, NULL, &wo);
    for (size_t i = 0; i < CONF_NELEM(allowed); i++)
        CHECK_EQ(conf_state(c, c->queue, allowed[i]), LN_JOB_COMPLETED);
}

/* Custom ids that are integers (jobs.h: all digits, or '-' and digits
 * without a leading zero) are refused; other shapes of numbers are ids
 * like any other. */
void case_rules_job_id_digits(conf_ctx *c) {
    const char *refused[] = {"1", "42", "007", "0", "-12", "-1"};
    const char *allowed[] = {"-012", "1.5", "12a", "a12", "+7", "1e3"};
    char id[LN_JOB_ID_MAX];
    for (size_t i = 0; i < CONF_NELEM(refused); i++) {
        ln_job_opts o;
        ln_job_opts_init(&o);
        o.job_id = refused[i];
        int rc = ln_jobs_add(c->jobs, c->queue, "n", "{}", &o, id, sizeof id);
        if (rc != LN_EINVAL) fprintf(stderr, "job id '%s': %d\n", refused[i], rc);
        CHECK_EQ(rc, LN_EINVAL);
    }
    CHECK_EQ(conf_total(c, c->queue), 0);
    for (size_t i = 0; i < CONF_NELEM(allowed); i++) {
        ln_job_opts o;
        ln_job_opts_init(&o);
        o.job_id = allowed[i];
        int rc = ln_jobs_add(c->jobs, c->queue, "n", "{}", &o, id, sizeof id);
        if (rc != 0) fprintf(stderr, "job id '%s': %s\n", allowed[i], ln_jobs_errmsg(c->jobs));
        CHECK_EQ(rc, 0);
        CONF_CHECK_STR(id, allowed[i]);
    }
}
