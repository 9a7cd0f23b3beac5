/* conf_queues.c - the calls of the dashboard (docs/dash.md): the list of a
 * store's queues (one whose jobs are gone included) and promoting a
 * delayed job. */
#include "conf.h"

#include <stdlib.h>

/* 1 if names (n of them) holds queue. */
static int has_queue(char **names, size_t n, const char *queue) {
    for (size_t i = 0; i < n; i++)
        if (strcmp(names[i], queue) == 0) return 1;
    return 0;
}

/* Every queue that held a job or was paused is listed, sorted; custom ids
 * shaped like keys ("a:b:meta") make no queue of their own. */
void case_queues_list(conf_ctx *c) {
    const char *q2 = conf_queue(c, "two");
    const char *q3 = conf_queue(c, "paused");
    const char *never = conf_queue(c, "never");
    conf_add(c, c->queue, "x", "{}", NULL, NULL);
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.job_id = "a:b:meta";
    conf_add(c, q2, "x", "{}", &o, NULL);
    CHECK_EQ(ln_jobs_pause(c->jobs, q3), 0);
    char **names = NULL;
    size_t n = 0;
    CHECK_EQ(ln_jobs_queues(c->jobs, &names, &n), 0);
    CHECK(n >= 2 && n <= LN_JOB_QUEUES_MAX);
    CHECK(has_queue(names, n, c->queue));
    CHECK(has_queue(names, n, q2));
    CHECK(has_queue(names, n, q3));
    CHECK(!has_queue(names, n, never));
    for (size_t i = 0; i < n; i++) {
        CHECK(strchr(names[i], ':') == NULL);
        if (i > 0) CHECK(strcmp(names[i - 1], names[i]) < 0);
    }
    ln_jobs_free_lines(names, n);
    CHECK_EQ(ln_jobs_queues(c->jobs, NULL, &n), LN_EINVAL);
}

/* promote: delayed -> waiting (behind the waiting jobs) or prioritized;
 * a job that is not delayed is refused and stays; no job is LN_ENOENT. */
void case_promote_delayed(conf_ctx *c) {
    conf_add_id(c, c->queue, "w1", 0, 0, 0);
    conf_add_id(c, c->queue, "d1", 0, 0, 600000);
    conf_add_id(c, c->queue, "d2", 3, 0, 600000);
    char num[LN_JOB_ID_MAX];
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.delay_ms = 600000;
    conf_add(c, c->queue, "n", "{}", &o, num);
    CHECK_EQ(conf_state(c, c->queue, "d1"), LN_JOB_DELAYED);
    CHECK_EQ(ln_jobs_promote(c->jobs, c->queue, "d1"), 0);
    CHECK_EQ(conf_state(c, c->queue, "d1"), LN_JOB_WAITING);
    CHECK_EQ(ln_jobs_promote(c->jobs, c->queue, "d2"), 0);
    CHECK_EQ(conf_state(c, c->queue, "d2"), LN_JOB_PRIORITIZED);
    CHECK_EQ(ln_jobs_promote(c->jobs, c->queue, num), 0);
    CHECK_EQ(conf_state(c, c->queue, num), LN_JOB_WAITING);
    char ids[256], want[256];
    conf_list_ids(c, c->queue, LN_JOB_WAITING, 0, 10, ids, sizeof ids);
    snprintf(want, sizeof want, "w1 d1 %s ", num);
    CONF_CHECK_STR(ids, want);
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, "d1", &info), 0);
    /* jobs.h: outside the delayed state run_at_ms is created_ms plus the
     * delay it was added with; a promotion does not change that. */
    CHECK_EQ(info.run_at_ms, info.created_ms + 600000);
    ln_job_info_clear(&info);
    CHECK_EQ(ln_jobs_promote(c->jobs, c->queue, "w1"), LN_EINVAL);
    CHECK_EQ(conf_state(c, c->queue, "w1"), LN_JOB_WAITING);
    CHECK_EQ(ln_jobs_promote(c->jobs, c->queue, "nope"), LN_ENOENT);
    CHECK_EQ(ln_jobs_promote(c->jobs, c->queue, "d1"), LN_EINVAL);
    ln_job_counts k;
    CHECK_EQ(ln_jobs_counts(c->jobs, c->queue, &k), 0);
    CHECK_EQ(k.delayed, 0);
    CHECK_EQ(k.waiting, 3);
    CHECK_EQ(k.prioritized, 1);
    conf_check_counts(c, c->queue);
    /* A promoted job runs. */
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    ln_worker_stats st = conf_run(c, c->queue, conf_handler_by_name, NULL, &wo);
    CHECK_EQ(st.completed, 4);
}

/* A queue that held a job is listed after its jobs are gone. */
void case_spec_queues_after_removal(conf_ctx *c) {
    char id[LN_JOB_ID_MAX];
    conf_add(c, c->queue, "n", "{}", NULL, id);
    CHECK_EQ(ln_jobs_remove(c->jobs, c->queue, id), 0);
    char **names = NULL;
    size_t n = 0;
    CHECK_EQ(ln_jobs_queues(c->jobs, &names, &n), 0);
    int found = 0;
    for (size_t i = 0; i < n; i++) found |= strcmp(names[i], c->queue) == 0;
    ln_jobs_free_lines(names, n);
    CHECK(found);
    CHECK_EQ(ln_jobs_queues(c->jobs, &names, NULL), LN_EINVAL);
    CHECK_EQ(ln_jobs_queues(NULL, &names, &n), LN_EINVAL);
}
