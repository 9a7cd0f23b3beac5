/* conf_longid.c - job ids longer than LN_JOB_ID_MAX (jobs.h "Names" and
 * LN_JOB_CUSTOM_ID_MAX): a job with a 300- or 5000-byte custom id is
 * added, run (the handler sees the whole id), read, listed, logged,
 * retried, waited for, promoted and removed, and its events carry the
 * whole id; an id past the bound is refused with a message. */
#include "conf.h"

#include <stdlib.h>

/* A custom id of len bytes: "L-" and a pattern (not an integer, no ':'). */
static char *long_id(size_t len, char tag) {
    char *s = malloc(len + 1);
    CHECK(s != NULL);
    for (size_t i = 0; i < len; i++) s[i] = i < 2 ? "L-"[i] : (char)('a' + (i * 7 + tag) % 26);
    s[len] = '\0';
    return s;
}

typedef struct seen_id {
    char *id; /* what ln_job_id returned, copied */
    int runs;
} seen_id;

/* Records the id; fails the first run ("bad" data), completes later. */
static int id_handler(ln_job *job, void *ctx) {
    seen_id *s = ctx;
    free(s->id);
    s->id = strdup(ln_job_id(job));
    CHECK_EQ(ln_job_log(job, "hello from a long id"), 0);
    CHECK_EQ(ln_job_progress(job, "50"), 0);
    if (s->runs++ == 0) return ln_job_fail(job, "first run fails");
    return ln_job_set_result(job, "{\"done\":true}");
}

/* The next event of queue named name for job id (others skipped). */
static void next_event(ln_jobs_events *ev, const char *name, const char *id) {
    for (;;) {
        ln_job_event e;
        int rc = ln_jobs_events_next(ev, 5000, &e);
        if (rc != 0) fprintf(stderr, "events_next: %s\n", ln_jobs_events_errmsg(ev));
        CHECK_EQ(rc, 0);
        int match = strcmp(e.name, name) == 0 && strcmp(e.job_id, id) == 0;
        ln_job_event_clear(&e);
        if (match) return;
    }
}

static void one_long_id(conf_ctx *c, size_t len) {
    char *id = long_id(len, (char)len);
    ln_jobs_events *ev;
    CHECK_EQ(ln_jobs_events_open(c->jobs, c->queue, "$", &ev), 0);
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.job_id = id;
    char *out = malloc(len + 1);
    CHECK(out != NULL);
    CHECK_EQ(ln_jobs_add(c->jobs, c->queue, "n", "{}", &o, out, len + 1), 0);
    CONF_CHECK_STR(out, id);
    /* Again: the same job, reported as existing (its id in full). */
    memset(out, 0, len + 1);
    CHECK_EQ(ln_jobs_add(c->jobs, c->queue, "n", "{}", &o, out, len + 1), 0);
    CONF_CHECK_STR(out, id);
    seen_id s = {0};
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    conf_run(c, c->queue, id_handler, &s, &wo);
    CONF_CHECK_STR(s.id, id);
    CHECK_EQ(conf_state(c, c->queue, id), LN_JOB_FAILED);
    next_event(ev, "failed", id);
    CHECK_EQ(ln_jobs_retry(c->jobs, c->queue, id), 0);
    conf_run(c, c->queue, id_handler, &s, &wo);
    CHECK_EQ(s.runs, 2);
    CONF_CHECK_STR(s.id, id);
    next_event(ev, "completed", id);
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, id, &info), 0);
    CONF_CHECK_STR(info.id, id);
    CHECK_EQ(info.state, LN_JOB_COMPLETED);
    CONF_CHECK_STR(info.result, "{\"done\":true}");
    ln_job_info_clear(&info);
    CHECK_EQ(ln_jobs_wait(c->jobs, c->queue, id, 1000, &info), 0);
    CONF_CHECK_STR(info.id, id);
    ln_job_info_clear(&info);
    ln_job_info *infos;
    size_t n;
    CHECK_EQ(ln_jobs_list(c->jobs, c->queue, LN_JOB_COMPLETED, 0, 10, &infos, &n), 0);
    CHECK_EQ(n, 1);
    CONF_CHECK_STR(infos[0].id, id);
    ln_job_info_free_array(infos, n);
    char **lines;
    CHECK_EQ(ln_jobs_logs(c->jobs, c->queue, id, &lines, &n), 0);
    CHECK_EQ(n, 2);
    CONF_CHECK_STR(lines[0], "hello from a long id");
    ln_jobs_free_lines(lines, n);
    CHECK_EQ(ln_jobs_remove(c->jobs, c->queue, id), 0);
    next_event(ev, "removed", id);
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, id, &info), LN_ENOENT);
    ln_jobs_events_close(ev);
    free(s.id);
    free(out);
    free(id);
}

static void case_longid_runs_and_is_administered(conf_ctx *c) {
    one_long_id(c, 300);
    one_long_id(c, 5000);
}

/* A delayed job with a long id is promoted; a long dedup id holds. */
static void case_longid_promote_and_dedup(conf_ctx *c) {
    char *id = long_id(300, 'p'), *deid = long_id(5000, 'd');
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.job_id = id;
    o.delay_ms = 60000;
    o.dedup_id = deid;
    static char out[LN_JOB_CUSTOM_ID_MAX];
    CHECK_EQ(ln_jobs_add(c->jobs, c->queue, "n", "{}", &o, out, sizeof out), 0);
    CONF_CHECK_STR(out, id);
    CHECK_EQ(conf_state(c, c->queue, id), LN_JOB_DELAYED);
    /* Another add with the held dedup id: the holder's whole id. */
    ln_job_opts d;
    ln_job_opts_init(&d);
    d.dedup_id = deid;
    memset(out, 0, sizeof out);
    CHECK_EQ(ln_jobs_add(c->jobs, c->queue, "n", "{}", &d, out, sizeof out), 0);
    CONF_CHECK_STR(out, id);
    /* A buffer too small for the holder's id: LN_ERANGE, nothing added. */
    char small[LN_JOB_ID_MAX];
    CHECK_EQ(ln_jobs_add(c->jobs, c->queue, "n", "{}", &d, small, sizeof small), LN_ERANGE);
    CONF_CHECK_HAS(ln_jobs_errmsg(c->jobs), "id_size");
    CHECK_EQ(conf_total(c, c->queue), 1);
    CHECK_EQ(ln_jobs_promote(c->jobs, c->queue, id), 0);
    CHECK_EQ(conf_state(c, c->queue, id), LN_JOB_WAITING);
    free(id);
    free(deid);
}

/* Past LN_JOB_CUSTOM_ID_MAX - 1 bytes a custom or dedup id is refused;
 * a long custom id with a short id buffer is LN_ERANGE; nothing added. */
static void case_longid_bounds(conf_ctx *c) {
    char *over = long_id(LN_JOB_CUSTOM_ID_MAX, 'o');
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.job_id = over;
    CHECK_EQ(ln_jobs_add(c->jobs, c->queue, "n", "{}", &o, NULL, 0), LN_EINVAL);
    CONF_CHECK_HAS(ln_jobs_errmsg(c->jobs), "job id is longer than 65535 bytes");
    ln_job_opts_init(&o);
    o.dedup_id = over;
    CHECK_EQ(ln_jobs_add(c->jobs, c->queue, "n", "{}", &o, NULL, 0), LN_EINVAL);
    CONF_CHECK_HAS(ln_jobs_errmsg(c->jobs), "dedup_id must be 1..65535 bytes");
    over[LN_JOB_CUSTOM_ID_MAX - 1] = '\0'; /* the longest allowed */
    ln_job_opts_init(&o);
    o.job_id = over;
    char small[LN_JOB_ID_MAX];
    CHECK_EQ(ln_jobs_add(c->jobs, c->queue, "n", "{}", &o, small, sizeof small), LN_ERANGE);
    CHECK_EQ(conf_total(c, c->queue), 0);
    CHECK_EQ(ln_jobs_add(c->jobs, c->queue, "n", "{}", &o, NULL, 0), 0);
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, over, &info), 0);
    CONF_CHECK_STR(info.id, over);
    ln_job_info_clear(&info);
    free(over);
}

const conf_case conf_longid_cases[] = {
    CONF_CASE(longid_runs_and_is_administered),
    CONF_CASE(longid_promote_and_dedup),
    CONF_CASE(longid_bounds),
    {0},
};
