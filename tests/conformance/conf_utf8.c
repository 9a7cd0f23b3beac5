/* conf_utf8.c - names that are not UTF-8 are refused on every store: a
 * queue name, a job name, a custom job id, a dedup id and a scheduler id
 * with an ill-formed byte sequence is LN_EINVAL with "not valid UTF-8" on add,
 * bulk add, flow add, scheduler upsert and the calls that name a queue,
 * and nothing is stored (the dashboard, the events and BullMQ read these
 * names as JSON strings; such a queue used to make the dashboard answer
 * 500). Well-formed UTF-8 beyond ASCII is taken. */
#include "conf.h"

#include <lanes/jobs_edit.h>
#include <lanes/jobs_flows.h>
#include <lanes/jobs_schedulers.h>
#include <lanes/jobs_workers.h>

/* Ill-formed UTF-8: a lone 0xff, a cut sequence, an overlong '/', a
 * surrogate (U+D800), a code point past U+10FFFF, a stray continuation
 * byte. Each has a prefix so that it is not empty. */
static const char *const bad_utf8[] = {
    "q\xff", "q\xc3", "q\xc0\xaf", "q\xed\xa0\x80", "q\xf4\x90\x80\x80", "q\x80"};

/* rc is LN_EINVAL and the handle's message says it is not UTF-8. */
#define NOT_UTF8(call)                                                                             \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        if (rc_ != LN_EINVAL)                                                                      \
            fprintf(stderr, "%s -> %d (%s)\n", #call, rc_, ln_jobs_errmsg(c->jobs));               \
        CHECK_EQ(rc_, LN_EINVAL);                                                                  \
        CONF_CHECK_HAS(ln_jobs_errmsg(c->jobs), "not valid UTF-8");                                \
    } while (0)

/* No queue of the store has a name that is not UTF-8. */
static void check_no_bad_queue(conf_ctx *c) {
    char **names = NULL;
    size_t n = 0;
    CHECK_EQ(ln_jobs_queues(c->jobs, &names, &n), 0);
    for (size_t i = 0; i < n; i++)
        for (size_t b = 0; b < CONF_NELEM(bad_utf8); b++) CHECK(strcmp(names[i], bad_utf8[b]) != 0);
    ln_jobs_free_lines(names, n);
}

void case_utf8_add_refused(conf_ctx *c) {
    char id[LN_JOB_ID_MAX];
    ln_job_opts o;
    for (size_t b = 0; b < CONF_NELEM(bad_utf8); b++) {
        const char *s = bad_utf8[b];
        NOT_UTF8(ln_jobs_add(c->jobs, s, "n", "{}", NULL, id, sizeof id));
        CONF_CHECK_HAS(ln_jobs_errmsg(c->jobs), "queue name");
        NOT_UTF8(ln_jobs_add(c->jobs, c->queue, s, "{}", NULL, id, sizeof id));
        CONF_CHECK_HAS(ln_jobs_errmsg(c->jobs), "job name");
        ln_job_opts_init(&o);
        o.job_id = s;
        NOT_UTF8(ln_jobs_add(c->jobs, c->queue, "n", "{}", &o, id, sizeof id));
        CONF_CHECK_HAS(ln_jobs_errmsg(c->jobs), "job id");
        ln_job_opts dd;
        ln_job_opts_init(&dd);
        dd.dedup_id = s;
        NOT_UTF8(ln_jobs_add(c->jobs, c->queue, "n", "{}", &dd, id, sizeof id));
        CONF_CHECK_HAS(ln_jobs_errmsg(c->jobs), "dedup_id");
        /* Bulk: one bad spec refuses the batch. */
        ln_job_spec specs[2] = {{"good", "{}", NULL}, {s, "{}", NULL}};
        NOT_UTF8(ln_jobs_add_bulk(c->jobs, c->queue, specs, 2, NULL, 0));
        specs[1] = (ln_job_spec){"good", "{}", &o};
        NOT_UTF8(ln_jobs_add_bulk(c->jobs, c->queue, specs, 2, NULL, 0));
        NOT_UTF8(ln_jobs_add_bulk(c->jobs, s, specs, 1, NULL, 0));
    }
    CHECK_EQ(conf_total(c, c->queue), 0);
    check_no_bad_queue(c);
    /* UTF-8 beyond ASCII is taken in every one of them. */
    ln_job_opts_init(&o);
    o.job_id = "id-\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80";
    CHECK_EQ(ln_jobs_add(c->jobs, c->queue, "caf\xc3\xa9", "{}", &o, id, sizeof id), 0);
    CONF_CHECK_STR(id, o.job_id);
    CHECK_EQ(ln_jobs_add(c->jobs, "q-\xe2\x82\xac", "n", "{}", NULL, id, sizeof id), 0);
    CHECK_EQ(conf_total(c, "q-\xe2\x82\xac"), 1);
    CHECK_EQ(ln_jobs_obliterate(c->jobs, "q-\xe2\x82\xac", 1, NULL), 0);
}

void case_utf8_flow_refused(conf_ctx *c) {
    char ids[3 * LN_JOB_ID_MAX];
    ln_job_opts o;
    for (size_t b = 0; b < CONF_NELEM(bad_utf8); b++) {
        const char *s = bad_utf8[b];
        ln_flow_node kids[2] = {{.name = "child"}, {.name = "child2"}};
        ln_flow_node root = {.queue = c->queue, .name = "root", .children = kids, .nchildren = 2};
        kids[1].name = s; /* a child's job name */
        NOT_UTF8(ln_jobs_add_flow(c->jobs, &root, ids, 3, LN_JOB_ID_MAX));
        kids[1].name = "child2";
        kids[1].queue = s; /* a child's queue */
        NOT_UTF8(ln_jobs_add_flow(c->jobs, &root, ids, 3, LN_JOB_ID_MAX));
        kids[1].queue = NULL;
        ln_job_opts_init(&o);
        o.job_id = s; /* a child's custom id */
        kids[0].opts = &o;
        NOT_UTF8(ln_jobs_add_flow(c->jobs, &root, ids, 3, LN_JOB_ID_MAX));
        kids[0].opts = NULL;
        root.queue = s; /* the root's queue */
        NOT_UTF8(ln_jobs_add_flow(c->jobs, &root, ids, 3, LN_JOB_ID_MAX));
    }
    CHECK_EQ(conf_total(c, c->queue), 0);
    check_no_bad_queue(c);
}

void case_utf8_scheduler_refused(conf_ctx *c) {
    char id[LN_JOB_ID_MAX];
    ln_job_schedule sc;
    ln_job_schedule_init(&sc);
    sc.every_ms = 60000;
    for (size_t b = 0; b < CONF_NELEM(bad_utf8); b++) {
        const char *s = bad_utf8[b];
        NOT_UTF8(ln_jobs_schedule(c->jobs, c->queue, s, &sc, "tick", NULL, NULL, id, sizeof id));
        CONF_CHECK_HAS(ln_jobs_errmsg(c->jobs), "scheduler id");
        NOT_UTF8(ln_jobs_schedule(c->jobs, c->queue, "s", &sc, s, NULL, NULL, id, sizeof id));
        NOT_UTF8(ln_jobs_schedule(c->jobs, s, "s", &sc, "tick", NULL, NULL, id, sizeof id));
        ln_job_scheduler got;
        NOT_UTF8(ln_jobs_scheduler_get(c->jobs, c->queue, s, &got));
        NOT_UTF8(ln_jobs_scheduler_get(c->jobs, s, "s", &got));
        ln_job_scheduler *list = NULL;
        size_t n = 0;
        NOT_UTF8(ln_jobs_scheduler_list(c->jobs, s, 0, 10, &list, &n));
        NOT_UTF8(ln_jobs_unschedule(c->jobs, s, "s"));
    }
    ln_job_scheduler *list = NULL;
    size_t n = 0;
    CHECK_EQ(ln_jobs_scheduler_list(c->jobs, c->queue, 0, 10, &list, &n), 0);
    CHECK_EQ(n, 0);
    CHECK_EQ(conf_total(c, c->queue), 0);
    check_no_bad_queue(c);
}

/* The calls that name a queue refuse one that is not UTF-8 rather than
 * read or change a queue no add could have made. */
void case_utf8_lookups_refused(conf_ctx *c) {
    for (size_t b = 0; b < CONF_NELEM(bad_utf8); b++) {
        const char *s = bad_utf8[b];
        ln_job_counts counts;
        ln_job_info info;
        ln_job_info *infos = NULL;
        char **lines = NULL;
        size_t n = 0;
        int paused = 0;
        char id[LN_JOB_ID_MAX];
        ln_worker_info *workers = NULL;
        NOT_UTF8(ln_jobs_counts(c->jobs, s, &counts));
        NOT_UTF8(ln_jobs_get(c->jobs, s, "1", &info));
        /* A lookup by job id takes any bytes: a job another program
         * stored with such an id stays reachable. */
        CHECK_EQ(ln_jobs_get(c->jobs, c->queue, s, &info), LN_ENOENT);
        NOT_UTF8(ln_jobs_list(c->jobs, s, LN_JOB_WAITING, 0, 10, &infos, &n));
        NOT_UTF8(ln_jobs_logs(c->jobs, s, "1", &lines, &n));
        CHECK_EQ(ln_jobs_remove(c->jobs, c->queue, s), LN_ENOENT);
        NOT_UTF8(ln_jobs_is_paused(c->jobs, s, &paused));
        NOT_UTF8(ln_jobs_pause(c->jobs, s));
        NOT_UTF8(ln_jobs_clean(c->jobs, s, LN_JOB_COMPLETED, 0, 0, &n));
        NOT_UTF8(ln_jobs_drain(c->jobs, s, &n));
        NOT_UTF8(ln_jobs_obliterate(c->jobs, s, 1, &n));
        NOT_UTF8(ln_jobs_workers(c->jobs, s, &workers, &n));
        NOT_UTF8(ln_jobs_dedup_job(c->jobs, s, "d", id, sizeof id));
    }
    check_no_bad_queue(c);
}
