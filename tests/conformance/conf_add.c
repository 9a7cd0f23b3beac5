/* conf_add.c - adding jobs and reading them back: ln_jobs_add,
 * ln_jobs_add_bulk (all or nothing), custom ids (an existing id is a
 * no-op), ln_jobs_get, ln_jobs_list (every state's order, paging) and
 * ln_jobs_counts; the defaults (data NULL is "{}", an empty batch) and a
 * bad job of a batch named by its index. */
#include "conf.h"

#define TP "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

/* Everything given at add comes back from get; what has not happened yet
 * is zero or NULL. */
void case_add_get_every_field(conf_ctx *c) {
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.attempts = 3;
    o.backoff = LN_BACKOFF_EXPONENTIAL;
    o.backoff_ms = 10;
    o.traceparent = TP;
    o.tracestate = "k=v,x=y";
    char id[LN_JOB_ID_MAX];
    conf_add(c, c->queue, "email", "{\"to\":\"a@b\",\"n\":[1,2]}", &o, id);
    CHECK(id[0] != '\0');
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, id, &info), 0);
    CONF_CHECK_STR(info.id, id);
    CHECK_EQ(info.state, LN_JOB_WAITING);
    CONF_CHECK_STR(info.name, "email");
    CONF_CHECK_STR(info.data, "{\"to\":\"a@b\",\"n\":[1,2]}");
    CHECK(info.result == NULL);
    CHECK(info.failed_reason == NULL);
    CHECK(info.progress == NULL);
    CONF_CHECK_STR(info.traceparent, TP);
    CONF_CHECK_STR(info.tracestate, "k=v,x=y");
    CHECK_EQ(info.priority, 0);
    CHECK_EQ(info.lifo, 0);
    CHECK_EQ(info.attempts, 3);
    CHECK_EQ(info.attempts_made, 0);
    CHECK_EQ(info.attempts_started, 0);
    CHECK_EQ(info.stalled, 0);
    CHECK_EQ(info.backoff, LN_BACKOFF_EXPONENTIAL);
    CHECK_EQ(info.backoff_ms, 10);
    CHECK(info.created_ms > 1600000000000LL);
    CHECK(info.run_at_ms >= info.created_ms);
    CHECK_EQ(info.started_ms, 0);
    CHECK_EQ(info.finished_ms, 0);
    ln_job_info_clear(&info);
    CHECK_EQ(info.name, NULL); /* cleared and zeroed */
    ln_job_info_clear(&info);  /* twice is harmless */

    /* Defaults: no data is "{}", no trace context, one attempt. */
    conf_add(c, c->queue, "plain", NULL, NULL, id);
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, id, &info), 0);
    CONF_CHECK_STR(info.data, "{}");
    CHECK(info.traceparent == NULL);
    CHECK(info.tracestate == NULL);
    CHECK_EQ(info.attempts, 1);
    ln_job_info_clear(&info);
}

/* The backoff comes back as given, also where it cannot apply yet (one
 * attempt, or no delay): get reports what is stored about the job. */
void case_get_backoff_as_given(conf_ctx *c) {
    const struct {
        int attempts, backoff;
        int64_t ms;
    } cases[] = {{1, LN_BACKOFF_EXPONENTIAL, 10},
                 {3, LN_BACKOFF_EXPONENTIAL, 0},
                 {2, LN_BACKOFF_FIXED, 25},
                 {1, LN_BACKOFF_FIXED, 0}};
    for (size_t i = 0; i < CONF_NELEM(cases); i++) {
        ln_job_opts o;
        ln_job_opts_init(&o);
        o.attempts = cases[i].attempts;
        o.backoff = cases[i].backoff;
        o.backoff_ms = cases[i].ms;
        char id[LN_JOB_ID_MAX];
        conf_add(c, c->queue, "n", "{}", &o, id);
        ln_job_info info;
        CHECK_EQ(ln_jobs_get(c->jobs, c->queue, id, &info), 0);
        if (info.backoff != o.backoff || info.backoff_ms != o.backoff_ms)
            fprintf(stderr, "attempts %d backoff %d/%lld came back %d/%lld\n", o.attempts,
                    o.backoff, (long long)o.backoff_ms, info.backoff, (long long)info.backoff_ms);
        CHECK_EQ(info.attempts, o.attempts);
        CHECK_EQ(info.backoff, o.backoff);
        CHECK_EQ(info.backoff_ms, o.backoff_ms);
        ln_job_info_clear(&info);
    }
}

/* Any JSON value is data, stored as given. */
void case_add_any_json_value(conf_ctx *c) {
    const char *values[] = {
        "[1,2]", "\"text\"", "42", "-1.5", "null", "true", "{\"k\":\"\\u00e9\\n\"}", "{}", "[]"};
    for (size_t i = 0; i < CONF_NELEM(values); i++) {
        char id[LN_JOB_ID_MAX];
        conf_add(c, c->queue, "v", values[i], NULL, id);
        ln_job_info info;
        CHECK_EQ(ln_jobs_get(c->jobs, c->queue, id, &info), 0);
        CONF_CHECK_STR(info.data, values[i]);
        ln_job_info_clear(&info);
    }
    /* A limit-sized value fits exactly. */
    ln_jobs_opts jo;
    ln_jobs_opts_init(&jo);
    jo.max_data_size = 64;
    ln_jobs *small = conf_open(c, &jo);
    char data[65];
    memset(data, 'x', 64);
    data[0] = data[63] = '"';
    data[64] = '\0';
    CHECK_EQ(ln_jobs_add(small, c->queue, "big", data, NULL, NULL, 0), 0);
    ln_jobs_close(small);
}

/* The store numbers jobs with distinct, all-digit ids. */
void case_add_store_ids_are_distinct_numbers(conf_ctx *c) {
    char ids[20][LN_JOB_ID_MAX];
    for (int i = 0; i < 20; i++) {
        conf_add(c, c->queue, "n", "{}", NULL, ids[i]);
        CHECK(ids[i][0] != '\0');
        CHECK_EQ(strspn(ids[i], "0123456789"), strlen(ids[i]));
        for (int k = 0; k < i; k++) CHECK(strcmp(ids[i], ids[k]) != 0);
    }
    for (int i = 0; i < 20; i++) CHECK_EQ(conf_state(c, c->queue, ids[i]), LN_JOB_WAITING);
    /* id may be NULL; an id_size that just fits is enough. */
    CHECK_EQ(ln_jobs_add(c->jobs, c->queue, "n", "{}", NULL, NULL, 0), 0);
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.job_id = "exact";
    char small[6];
    CHECK_EQ(ln_jobs_add(c->jobs, c->queue, "n", "{}", &o, small, sizeof small), 0);
    CONF_CHECK_STR(small, "exact");
    CHECK_EQ(conf_total(c, c->queue), 22);
}

/* Adding an id that exists changes nothing and returns that job's id, in
 * any state of the job; another queue has ids of its own. */
void case_custom_id_existing_is_noop(conf_ctx *c) {
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.job_id = "order-42";
    char id[LN_JOB_ID_MAX];
    conf_add(c, c->queue, "charge", "[1]", &o, id);
    CONF_CHECK_STR(id, "order-42");
    o.priority = 5;
    o.delay_ms = 100000;
    memset(id, 0, sizeof id);
    conf_add(c, c->queue, "other", "[2]", &o, id);
    CONF_CHECK_STR(id, "order-42");
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, "order-42", &info), 0);
    CONF_CHECK_STR(info.name, "charge");
    CONF_CHECK_STR(info.data, "[1]");
    CHECK_EQ(info.state, LN_JOB_WAITING);
    CHECK_EQ(info.priority, 0);
    ln_job_info_clear(&info);
    CHECK_EQ(conf_total(c, c->queue), 1);

    /* The same id in another queue is another job. */
    const char *q2 = conf_queue(c, "b");
    conf_add(c, q2, "second", "{}", &o, id);
    CONF_CHECK_STR(id, "order-42");
    CHECK_EQ(conf_state(c, q2, "order-42"), LN_JOB_DELAYED);
    CHECK_EQ(conf_state(c, c->queue, "order-42"), LN_JOB_WAITING);

    /* In a batch: the existing one is left alone, the new one stored. */
    ln_job_opts o2 = o;
    o2.job_id = "order-43";
    ln_job_spec specs[2] = {{"x", "{}", &o}, {"y", "{}", &o2}};
    char ids[2][LN_JOB_ID_MAX];
    CHECK_EQ(ln_jobs_add_bulk(c->jobs, c->queue, specs, 2, ids[0], LN_JOB_ID_MAX), 0);
    CONF_CHECK_STR(ids[0], "order-42");
    CONF_CHECK_STR(ids[1], "order-43");
    CHECK_EQ(conf_total(c, c->queue), 2);
    CHECK_EQ(conf_state(c, c->queue, "order-43"), LN_JOB_DELAYED);
}

/* A duplicate id inside one batch: the first is stored, the second is a
 * no-op, both report the id. */
void case_custom_id_twice_in_one_bulk(conf_ctx *c) {
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.job_id = "dup";
    ln_job_spec specs[3] = {{"first", "1", &o}, {"mid", "2", NULL}, {"second", "3", &o}};
    char ids[3][LN_JOB_ID_MAX];
    CHECK_EQ(ln_jobs_add_bulk(c->jobs, c->queue, specs, 3, ids[0], LN_JOB_ID_MAX), 0);
    CONF_CHECK_STR(ids[0], "dup");
    CONF_CHECK_STR(ids[2], "dup");
    CHECK(strcmp(ids[1], "dup") != 0);
    CHECK_EQ(conf_total(c, c->queue), 2);
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, "dup", &info), 0);
    CONF_CHECK_STR(info.name, "first");
    ln_job_info_clear(&info);
}

/* A batch is stored whole or not at all. */
void case_add_bulk_all_or_nothing(conf_ctx *c) {
    ln_job_spec specs[100];
    for (int i = 0; i < 100; i++) specs[i] = (ln_job_spec){"n", "{}", NULL};
    static char ids[100][LN_JOB_ID_MAX];
    CHECK_EQ(ln_jobs_add_bulk(c->jobs, c->queue, specs, 100, ids[0], LN_JOB_ID_MAX), 0);
    for (int i = 1; i < 100; i++) CHECK(strcmp(ids[i], ids[i - 1]) != 0);
    CHECK_EQ(conf_state(c, c->queue, ids[99]), LN_JOB_WAITING);
    CHECK_EQ(conf_total(c, c->queue), 100);

    /* One bad job anywhere: none is stored, the message names its index. */
    specs[57].data_json = "{oops";
    CHECK_EQ(ln_jobs_add_bulk(c->jobs, c->queue, specs, 100, NULL, 0), LN_EINVAL);
    CONF_CHECK_HAS(ln_jobs_errmsg(c->jobs), "57");
    specs[57].data_json = "{}";
    ln_job_opts bad;
    ln_job_opts_init(&bad);
    bad.attempts = 0;
    specs[99].opts = &bad;
    CHECK_EQ(ln_jobs_add_bulk(c->jobs, c->queue, specs, 100, NULL, 0), LN_EINVAL);
    CONF_CHECK_HAS(ln_jobs_errmsg(c->jobs), "99");
    specs[99].opts = NULL;
    specs[0].name = "";
    CHECK_EQ(ln_jobs_add_bulk(c->jobs, c->queue, specs, 100, NULL, 0), LN_EINVAL);
    CHECK_EQ(conf_total(c, c->queue), 100);

    /* n = 0 adds nothing and succeeds; ids may be NULL. */
    CHECK_EQ(ln_jobs_add_bulk(c->jobs, c->queue, specs, 0, NULL, 0), 0);
    CHECK_EQ(ln_jobs_add_bulk(c->jobs, c->queue, NULL, 0, NULL, 0), 0);
    specs[0].name = "n";
    CHECK_EQ(ln_jobs_add_bulk(c->jobs, c->queue, specs, 3, NULL, 0), 0);
    CHECK_EQ(conf_total(c, c->queue), 103);

    /* Mixed options in one batch land in their states. */
    ln_job_opts d, p;
    ln_job_opts_init(&d);
    d.delay_ms = 100000;
    ln_job_opts_init(&p);
    p.priority = 4;
    const char *q2 = conf_queue(c, "mixed");
    ln_job_spec mixed[3] = {{"d", "{}", &d}, {"p", "{}", &p}, {"w", NULL, NULL}};
    CHECK_EQ(ln_jobs_add_bulk(c->jobs, q2, mixed, 3, ids[0], LN_JOB_ID_MAX), 0);
    CHECK_EQ(conf_state(c, q2, ids[0]), LN_JOB_DELAYED);
    CHECK_EQ(conf_state(c, q2, ids[1]), LN_JOB_PRIORITIZED);
    CHECK_EQ(conf_state(c, q2, ids[2]), LN_JOB_WAITING);
    conf_check_counts(c, q2);
}

void case_get_missing_job(conf_ctx *c) {
    CONF_CHECK_STR(ln_jobs_errmsg(c->jobs), ""); /* nothing failed yet */
    char id[LN_JOB_ID_MAX];
    conf_add(c, c->queue, "n", "{}", NULL, id);
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, "no-such-job", &info), LN_ENOENT);
    CHECK(ln_jobs_errmsg(c->jobs)[0] != '\0');
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, "99999999", &info), LN_ENOENT);
    /* A job belongs to its queue only. */
    CHECK_EQ(ln_jobs_get(c->jobs, conf_queue(c, "other"), id, &info), LN_ENOENT);
}

/* A queue nobody used has zero in every state and lists nothing. */
void case_counts_of_unused_queue(conf_ctx *c) {
    ln_job_counts k;
    memset(&k, 0xff, sizeof k);
    CHECK_EQ(ln_jobs_counts(c->jobs, c->queue, &k), 0);
    CHECK_EQ(k.waiting + k.delayed + k.prioritized + k.active + k.completed + k.failed + k.paused,
             0);
    for (int s = 0; s < LN_JOB_NSTATES; s++) {
        ln_job_info *infos = (ln_job_info *)&k; /* overwritten with NULL */
        size_t n = 7;
        CHECK_EQ(ln_jobs_list(c->jobs, c->queue, s, 0, 10, &infos, &n), 0);
        CHECK_EQ(n, 0);
        CHECK(infos == NULL);
    }
    int paused = -1;
    CHECK_EQ(ln_jobs_is_paused(c->jobs, c->queue, &paused), 0);
    CHECK_EQ(paused, 0);
}

/* Waiting jobs run in the order they were added; a LIFO job runs before
 * the older ones. */
void case_list_waiting_fifo_and_lifo(conf_ctx *c) {
    conf_add_id(c, c->queue, "a", 0, 0, 0);
    conf_add_id(c, c->queue, "b", 0, 0, 0);
    conf_add_id(c, c->queue, "c", 0, 1, 0);
    conf_add_id(c, c->queue, "d", 0, 0, 0);
    conf_add_id(c, c->queue, "e", 0, 1, 0);
    char ids[256];
    conf_list_ids(c, c->queue, LN_JOB_WAITING, 0, 10, ids, sizeof ids);
    CONF_CHECK_STR(ids, "e c a b d ");
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, "e", &info), 0);
    CHECK_EQ(info.lifo, 1);
    ln_job_info_clear(&info);
}

/* Prioritized jobs: lower numbers first, FIFO within a priority unless
 * LIFO; all after the jobs without priority. */
void case_list_prioritized_order(conf_ctx *c) {
    conf_add_id(c, c->queue, "p3", 3, 0, 0);
    conf_add_id(c, c->queue, "p1a", 1, 0, 0);
    conf_add_id(c, c->queue, "p2", 2, 0, 0);
    conf_add_id(c, c->queue, "p1b", 1, 0, 0);
    conf_add_id(c, c->queue, "p1l", 1, 1, 0);
    conf_add_id(c, c->queue, "max", LN_JOB_PRIORITY_MAX, 0, 0);
    conf_add_id(c, c->queue, "w", 0, 0, 0);
    char ids[256];
    conf_list_ids(c, c->queue, LN_JOB_PRIORITIZED, 0, 10, ids, sizeof ids);
    CONF_CHECK_STR(ids, "p1l p1a p1b p2 p3 max ");
    conf_list_ids(c, c->queue, LN_JOB_WAITING, 0, 10, ids, sizeof ids);
    CONF_CHECK_STR(ids, "w ");
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, "max", &info), 0);
    CHECK_EQ(info.priority, LN_JOB_PRIORITY_MAX);
    CHECK_EQ(info.state, LN_JOB_PRIORITIZED);
    ln_job_info_clear(&info);
    conf_check_counts(c, c->queue);
}

/* Delayed jobs are listed in the order they become due. */
void case_list_delayed_by_due_time(conf_ctx *c) {
    conf_add_id(c, c->queue, "d300", 0, 0, 300000);
    conf_add_id(c, c->queue, "d100", 0, 0, 100000);
    conf_add_id(c, c->queue, "d200", 0, 0, 200000);
    conf_add_id(c, c->queue, "p100", 7, 0, 150000); /* delayed too */
    char ids[256];
    conf_list_ids(c, c->queue, LN_JOB_DELAYED, 0, 10, ids, sizeof ids);
    CONF_CHECK_STR(ids, "d100 p100 d200 d300 ");
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, "d100", &info), 0);
    CHECK(info.run_at_ms - info.created_ms >= 100000);
    CHECK(info.run_at_ms - info.created_ms < 100000 + 60000);
    ln_job_info_clear(&info);
    conf_check_counts(c, c->queue);
}

/* Pages of a list, through offset and limit, put together are the list. */
void case_list_paging(conf_ctx *c) {
    char id[8];
    for (int i = 0; i < 25; i++) {
        snprintf(id, sizeof id, "j%02d", i);
        conf_add_id(c, c->queue, id, 0, 0, 0);
    }
    char all[512], page[256], joined[512] = "";
    conf_list_ids(c, c->queue, LN_JOB_WAITING, 0, 10000, all, sizeof all);
    for (size_t off = 0; off < 30; off += 10) {
        conf_list_ids(c, c->queue, LN_JOB_WAITING, off, 10, page, sizeof page);
        strcat(joined, page);
    }
    CONF_CHECK_STR(joined, all);
    conf_list_ids(c, c->queue, LN_JOB_WAITING, 1, 2, page, sizeof page);
    CONF_CHECK_STR(page, "j01 j02 ");
    conf_list_ids(c, c->queue, LN_JOB_WAITING, 24, 10, page, sizeof page);
    CONF_CHECK_STR(page, "j24 ");
    conf_list_ids(c, c->queue, LN_JOB_WAITING, 25, 10, page, sizeof page);
    CONF_CHECK_STR(page, "");
    conf_list_ids(c, c->queue, LN_JOB_WAITING, 1000000, 1, page, sizeof page);
    CONF_CHECK_STR(page, "");
    /* A listed job carries its fields. */
    ln_job_info *infos;
    size_t n;
    CHECK_EQ(ln_jobs_list(c->jobs, c->queue, LN_JOB_WAITING, 3, 1, &infos, &n), 0);
    CHECK_EQ(n, 1);
    CONF_CHECK_STR(infos[0].id, "j03");
    CONF_CHECK_STR(infos[0].name, "j03");
    CONF_CHECK_STR(infos[0].data, "{}");
    CHECK(infos[0].created_ms > 0);
    ln_job_info_free_array(infos, n);
    ln_job_info_free_array(NULL, 0);
}

/* Counts follow the jobs through the states. */
void case_counts_each_state(conf_ctx *c) {
    for (int i = 0; i < 3; i++) conf_add(c, c->queue, "w", "{}", NULL, NULL);
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.priority = 2;
    for (int i = 0; i < 2; i++) conf_add(c, c->queue, "p", "{}", &o, NULL);
    ln_job_opts_init(&o);
    o.delay_ms = 600000;
    conf_add(c, c->queue, "d", "{}", &o, NULL);
    ln_job_counts k;
    CHECK_EQ(ln_jobs_counts(c->jobs, c->queue, &k), 0);
    CHECK_EQ(k.waiting, 3);
    CHECK_EQ(k.prioritized, 2);
    CHECK_EQ(k.delayed, 1);
    CHECK_EQ(k.active + k.completed + k.failed + k.paused, 0);
    conf_check_counts(c, c->queue);
    /* Another queue is counted apart. */
    conf_add(c, conf_queue(c, "b"), "w", "{}", NULL, NULL);
    CHECK_EQ(conf_total(c, c->queue), 6);
}

/* Adds: data NULL is "{}", an empty batch, a bad job of a batch named by
 * its index. */
void case_spec_add_defaults_and_bulk_index(conf_ctx *c) {
    char id[LN_JOB_ID_MAX];
    CHECK_EQ(ln_jobs_add(c->jobs, c->queue, "n", NULL, NULL, id, sizeof id), 0);
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, id, &info), 0);
    CONF_CHECK_STR(info.data, "{}");
    CONF_CHECK_STR(info.name, "n");
    CHECK_EQ(info.attempts, 1);
    CHECK_EQ(info.priority, 0);
    ln_job_info_clear(&info);
    CHECK_EQ(ln_jobs_add(c->jobs, c->queue, "n", "{}", NULL, NULL, 0), 0); /* id NULL */
    CHECK_EQ(ln_jobs_add_bulk(c->jobs, c->queue, NULL, 0, NULL, 0), 0);
    ln_job_spec specs[3] = {{"a", NULL, NULL}, {"b", "[1]", NULL}, {"c", "{oops", NULL}};
    SAYS(c->jobs, LN_EINVAL, ln_jobs_add_bulk(c->jobs, c->queue, specs, 3, NULL, 0));
    CONF_CHECK_HAS(ln_jobs_errmsg(c->jobs), "2");
    specs[2].data_json = "3";
    specs[1].name = "";
    SAYS(c->jobs, LN_EINVAL, ln_jobs_add_bulk(c->jobs, c->queue, specs, 3, NULL, 0));
    CONF_CHECK_HAS(ln_jobs_errmsg(c->jobs), "1");
    CHECK_EQ(conf_total(c, c->queue), 2);
    specs[1].name = "b";
    char ids[3][LN_JOB_ID_MAX];
    CHECK_EQ(ln_jobs_add_bulk(c->jobs, c->queue, specs, 3, ids[0], LN_JOB_ID_MAX), 0);
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, ids[0], &info), 0);
    CONF_CHECK_STR(info.data, "{}");
    ln_job_info_clear(&info);
    CHECK_EQ(conf_total(c, c->queue), 5);
}
