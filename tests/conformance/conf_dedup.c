/* conf_dedup.c - deduplication ids (jobs.h ln_job_opts.dedup_*): simple
 * mode holds the id while its job exists, throttle for a TTL, debounce
 * extends the TTL and/or replaces the pending job; a TTL outlives a holder
 * removed at once, and a clean frees an id held with a TTL (as a remove
 * and a drain do; a cancel frees a simple id, not a TTL's); a batch whose
 * jobs share an id. TTLs are short and checked with deadlines, never
 * against absolute times. */
#include "conf.h"

/* Add with dedup options; *existed (may be NULL) = the add was a no-op. */
static void add_dedup(conf_ctx *c, const char *deid, int64_t ttl, int extend, int replace,
                      int64_t delay, const char *data, char *id, int *existed) {
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.dedup_id = deid;
    o.dedup_ttl_ms = ttl;
    o.dedup_extend = extend;
    o.dedup_replace = replace;
    o.delay_ms = delay;
    uint64_t before = conf_total(c, c->queue);
    int rc = ln_jobs_add(c->jobs, c->queue, "d", data, &o, id, LN_JOB_ID_MAX);
    if (rc != 0) fprintf(stderr, "add: %s\n", ln_jobs_errmsg(c->jobs));
    CHECK_EQ(rc, 0);
    if (existed != NULL) *existed = conf_total(c, c->queue) == before;
}

/* Simple mode: held while the job exists; freed once it completed. */
void case_dedup_simple_until_finished(conf_ctx *c) {
    char a[LN_JOB_ID_MAX], b[LN_JOB_ID_MAX], d[LN_JOB_ID_MAX];
    int ex;
    add_dedup(c, "k", 0, 0, 0, 0, "{\"n\":1}", a, &ex);
    CHECK_EQ(ex, 0);
    add_dedup(c, "k", 0, 0, 0, 0, "{\"n\":2}", b, &ex);
    CHECK_EQ(ex, 1);
    CONF_CHECK_STR(b, a);
    CHECK_EQ(conf_total(c, c->queue), 1);
    ln_worker_opts o;
    conf_worker_opts(&o);
    conf_run(c, c->queue, conf_handler_by_name, NULL, &o);
    CHECK_EQ(conf_state(c, c->queue, a), LN_JOB_COMPLETED);
    add_dedup(c, "k", 0, 0, 0, 0, "{\"n\":3}", d, &ex);
    CHECK_EQ(ex, 0);
    CHECK(strcmp(d, a) != 0);
    /* A failed holder frees it too; a removed one as well. */
    conf_add(c, conf_queue(c, "x"), "n", NULL, NULL, NULL); /* other queue: no effect */
    CHECK_EQ(ln_jobs_remove(c->jobs, c->queue, d), 0);
    add_dedup(c, "k", 0, 0, 0, 0, "{}", b, &ex);
    CHECK_EQ(ex, 0);
}

/* Throttle: held for the TTL even after the job completed, free after. */
void case_dedup_throttle_ttl(conf_ctx *c) {
    char a[LN_JOB_ID_MAX], b[LN_JOB_ID_MAX];
    int ex;
    int64_t t0 = conf_now_ms();
    add_dedup(c, "t", 300, 0, 0, 0, "{}", a, &ex);
    CHECK_EQ(ex, 0);
    ln_worker_opts o;
    conf_worker_opts(&o);
    conf_run(c, c->queue, conf_handler_by_name, NULL, &o);
    add_dedup(c, "t", 300, 0, 0, 0, "{}", b, &ex);
    if (conf_now_ms() - t0 < 250) { /* only meaningful well inside the TTL */
        CHECK_EQ(ex, 1);
        CONF_CHECK_STR(b, a);
    }
    int64_t end = conf_deadline(5000);
    do {
        ln_test_sleep_ms(20);
        add_dedup(c, "t", 300, 0, 0, 0, "{}", b, &ex);
    } while (ex && conf_now_ms() < end);
    CHECK_EQ(ex, 0);
    CHECK(conf_now_ms() - t0 >= 300);
}

/* Debounce with extend: each deduplicated add starts the TTL again, so
 * adds every 40 ms keep a 150 ms TTL held past several TTLs. */
void case_dedup_extend_keeps_holding(conf_ctx *c) {
    char a[LN_JOB_ID_MAX], b[LN_JOB_ID_MAX];
    int ex, held = 1;
    int64_t t0 = conf_now_ms(), prev_start = t0;
    add_dedup(c, "e", 150, 1, 0, 0, "{}", a, &ex);
    CHECK_EQ(ex, 0);
    while (conf_now_ms() - t0 < 600) {
        ln_test_sleep_ms(40);
        int64_t start = conf_now_ms();
        add_dedup(c, "e", 150, 1, 0, 0, "{}", b, &ex);
        /* The store saw the previous add after prev_start and this one
         * before now: only a span well under the TTL must find it held
         * (a slow call on a loaded machine may take longer). */
        if (conf_now_ms() - prev_start < 120 && !ex) held = 0;
        prev_start = start;
    }
    CHECK_EQ(held, 1);
    int64_t end = conf_deadline(5000);
    do {
        ln_test_sleep_ms(30);
        ln_job_opts o;
        ln_job_opts_init(&o);
        o.dedup_id = "e";
        o.dedup_ttl_ms = 150; /* without extend: does not renew */
        uint64_t before = conf_total(c, c->queue);
        CHECK_EQ(ln_jobs_add(c->jobs, c->queue, "d", NULL, &o, b, sizeof b), 0);
        ex = conf_total(c, c->queue) == before;
    } while (ex && conf_now_ms() < end);
    CHECK_EQ(ex, 0);
}

/* Debounce with replace: a delayed holder is replaced by the new job (its
 * data); once the holder is no longer delayed, adds are deduplicated. */
void case_dedup_replace_pending(conf_ctx *c) {
    char a[LN_JOB_ID_MAX], b[LN_JOB_ID_MAX], d[LN_JOB_ID_MAX];
    int ex;
    add_dedup(c, "r", 0, 0, 1, 60000, "{\"v\":1}", a, &ex);
    CHECK_EQ(ex, 0);
    add_dedup(c, "r", 0, 0, 1, 60000, "{\"v\":2}", b, NULL); /* one out, one in */
    CHECK(strcmp(a, b) != 0);
    CHECK_EQ(conf_state(c, c->queue, a), LN_ENOENT);
    CHECK_EQ(conf_total(c, c->queue), 1);
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, b, &info), 0);
    CONF_CHECK_STR(info.data, "{\"v\":2}");
    CHECK_EQ(info.state, LN_JOB_DELAYED);
    ln_job_info_clear(&info);
    conf_check_counts(c, c->queue);
    /* Not delayed (waiting): kept, the add deduplicated. */
    add_dedup(c, "r2", 0, 0, 1, 0, "{\"v\":1}", a, &ex);
    add_dedup(c, "r2", 0, 0, 1, 0, "{\"v\":2}", d, &ex);
    CHECK_EQ(ex, 1);
    CONF_CHECK_STR(d, a);
}

/* Bad combinations are refused. */
void case_dedup_bad_options(conf_ctx *c) {
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.dedup_ttl_ms = 10;
    CHECK_EQ(ln_jobs_add(c->jobs, c->queue, "d", NULL, &o, NULL, 0), LN_EINVAL);
    o.dedup_id = "x";
    o.dedup_ttl_ms = 0;
    o.dedup_extend = 1;
    CHECK_EQ(ln_jobs_add(c->jobs, c->queue, "d", NULL, &o, NULL, 0), LN_EINVAL);
    o.dedup_extend = 0;
    o.dedup_id = "";
    CHECK_EQ(ln_jobs_add(c->jobs, c->queue, "d", NULL, &o, NULL, 0), LN_EINVAL);
    o.dedup_id = "x";
    o.dedup_ttl_ms = -1;
    CHECK_EQ(ln_jobs_add(c->jobs, c->queue, "d", NULL, &o, NULL, 0), LN_EINVAL);
    CHECK_EQ(conf_total(c, c->queue), 0);
}

/* A dedup id held with a TTL by a job that completed and was removed at
 * once (remove_on_complete none) is still held until the TTL passes: an
 * add with it is deduplicated to that id on both stores, so the holder
 * read says that id too (Redis: the de: key still names it), and the
 * release says it was held. */
void case_dedup_ttl_holder_gone(conf_ctx *c) {
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.dedup_id = "ttl";
    o.dedup_ttl_ms = 600000;
    o.remove_on_complete.mode = LN_KEEP_NONE;
    char a[LN_JOB_ID_MAX], b[LN_JOB_ID_MAX], got[LN_JOB_ID_MAX];
    conf_add(c, c->queue, "d", "{}", &o, a);
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    conf_run(c, c->queue, conf_handler_by_name, NULL, &wo);
    CHECK_EQ(conf_state(c, c->queue, a), LN_ENOENT); /* removed as it completed */
    conf_add(c, c->queue, "d", "{}", &o, b);
    CONF_CHECK_STR(b, a); /* still held: deduplicated, nothing added */
    CHECK_EQ(conf_total(c, c->queue), 0);
    SAYS(c->jobs, 0, ln_jobs_dedup_job(c->jobs, c->queue, "ttl", got, sizeof got));
    CONF_CHECK_STR(got, a);
    int removed = -1;
    SAYS(c->jobs, 0, ln_jobs_dedup_remove(c->jobs, c->queue, "ttl", &removed));
    CHECK_EQ(removed, 1);
    SAYS(c->jobs, LN_ENOENT, ln_jobs_dedup_job(c->jobs, c->queue, "ttl", got, sizeof got));
    conf_add(c, c->queue, "d", "{}", &o, b); /* released: a new job */
    CHECK(strcmp(a, b) != 0);
}

/* Job of dedup id 'deid' (TTL 60 s) in queue, failed or completed by a
 * worker (name "bad" fails); its id into id. */
static void finished_with_dedup(conf_ctx *c, const char *name, const char *deid, char *id) {
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.dedup_id = deid;
    o.dedup_ttl_ms = 60000;
    conf_add(c, c->queue, name, "1", &o, id);
    ln_worker_opts w;
    conf_worker_opts(&w);
    conf_run(c, c->queue, conf_handler_by_name, NULL, &w);
}

/* The id deid is held (an add with it returns the holder) or free. */
static int dedup_held(conf_ctx *c, const char *deid, const char *holder) {
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.dedup_id = deid;
    o.dedup_ttl_ms = 60000;
    char id[LN_JOB_ID_MAX];
    conf_add(c, c->queue, "probe", "1", &o, id);
    int held = strcmp(id, holder) == 0;
    if (!held) CHECK_EQ(ln_jobs_remove(c->jobs, c->queue, id), 0);
    return held;
}

void case_clean_frees_dedup_ttl(conf_ctx *c) {
    static const char *const names[2] = {"ok", "bad"};
    static const int states[2] = {LN_JOB_COMPLETED, LN_JOB_FAILED};
    for (int i = 0; i < 2; i++) {
        char id[LN_JOB_ID_MAX], deid[32];
        snprintf(deid, sizeof deid, "throttle-%d", i);
        finished_with_dedup(c, names[i], deid, id);
        CHECK_EQ(conf_state(c, c->queue, id), states[i]);
        CHECK(dedup_held(c, deid, id)); /* a finish keeps a TTL's id */
        size_t removed = 0;
        CHECK_EQ(ln_jobs_clean(c->jobs, c->queue, states[i], -1, 0, &removed), 0);
        CHECK_EQ(removed, 1);
        CHECK(!dedup_held(c, deid, id));
    }
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
