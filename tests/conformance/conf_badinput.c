/* conf_badinput.c - every bad input is refused the same way on every
 * store, with a message, and stores nothing: NULL arguments, empty and
 * too-long queue names, job names and ids, invalid JSON, oversize data,
 * bad options, unknown URL parameters, bad worker options, bad calls from
 * a handler. */
#include "conf.h"

#include <stdlib.h>

/* rc is LN_EINVAL (or 'want') and the handle says why. */
#define REFUSED(want, call)                                                                        \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        if (rc_ != (want))                                                                         \
            fprintf(stderr, "%s -> %d (%s)\n", #call, rc_, ln_jobs_errmsg(c->jobs));               \
        CHECK_EQ(rc_, (want));                                                                     \
        CHECK(ln_jobs_errmsg(c->jobs)[0] != '\0');                                                 \
    } while (0)

static char long_queue[LN_JOB_QUEUE_MAX + 1], long_name[LN_JOB_NAME_MAX + 1],
    long_id[LN_JOB_CUSTOM_ID_MAX + 1];

static void make_long_strings(void) {
    memset(long_queue, 'q', LN_JOB_QUEUE_MAX);
    memset(long_name, 'n', LN_JOB_NAME_MAX);
    memset(long_id, 'i', LN_JOB_CUSTOM_ID_MAX);
}

/* Bad queue names, for any call taking one. */
static const char *bad_queues[] = {"", long_queue, "tab\tqueue", "nl\n"};

void case_bad_open(conf_ctx *c) {
    ln_jobs *jobs = NULL;
    char msg[512], url[1200];
    CHECK_EQ(ln_jobs_open_ex(NULL, c->url, NULL, msg, sizeof msg), LN_EINVAL);
    CHECK(msg[0] != '\0');
    CHECK_EQ(ln_jobs_open_ex(&jobs, "ftp://x", NULL, msg, sizeof msg), LN_EINVAL);
    CONF_CHECK_HAS(msg, "URL");
    CHECK_EQ(ln_jobs_open_ex(&jobs, "", NULL, msg, sizeof msg), LN_EINVAL);
    CHECK_EQ(ln_jobs_open(&jobs, "nonsense"), LN_EINVAL);
    /* An unknown URL parameter, on this store's URL. */
    conf_url_with(c, "nope=1", url, sizeof url);
    CHECK_EQ(ln_jobs_open_ex(&jobs, url, NULL, msg, sizeof msg), LN_EINVAL);
    CONF_CHECK_HAS(msg, "nope");
    conf_url_with(c, "busy_timeout=-1&x", url, sizeof url);
    CHECK_EQ(ln_jobs_open_ex(&jobs, url, NULL, msg, sizeof msg), LN_EINVAL);
    /* Options out of range. */
    ln_jobs_opts jo;
    ln_jobs_opts_init(&jo);
    jo.max_data_size = 1;
    CHECK_EQ(ln_jobs_open_ex(&jobs, c->url, &jo, msg, sizeof msg), LN_EINVAL);
    CONF_CHECK_HAS(msg, "max_data_size");
    jo.max_data_size = ((size_t)1 << 30) + 1;
    CHECK_EQ(ln_jobs_open_ex(&jobs, c->url, &jo, msg, sizeof msg), LN_EINVAL);
    CHECK(jobs == NULL); /* unchanged on failure */
    /* errmsg may be NULL or empty-sized. */
    CHECK_EQ(ln_jobs_open_ex(&jobs, "ftp://x", NULL, NULL, 0), LN_EINVAL);
    CHECK_EQ(ln_jobs_open_ex(&jobs, "ftp://x", NULL, msg, 0), LN_EINVAL);
    CONF_CHECK_STR(ln_jobs_errmsg(NULL), "no handle");
    ln_jobs_close(NULL);
}

void case_bad_add_names(conf_ctx *c) {
    make_long_strings();
    char id[LN_JOB_ID_MAX];
    CHECK_EQ(ln_jobs_add(NULL, c->queue, "n", "{}", NULL, id, sizeof id), LN_EINVAL);
    REFUSED(LN_EINVAL, ln_jobs_add(c->jobs, NULL, "n", "{}", NULL, id, sizeof id));
    for (size_t i = 0; i < CONF_NELEM(bad_queues); i++)
        REFUSED(LN_EINVAL, ln_jobs_add(c->jobs, bad_queues[i], "n", "{}", NULL, id, sizeof id));
    REFUSED(LN_EINVAL, ln_jobs_add(c->jobs, c->queue, NULL, "{}", NULL, id, sizeof id));
    REFUSED(LN_EINVAL, ln_jobs_add(c->jobs, c->queue, "", "{}", NULL, id, sizeof id));
    REFUSED(LN_EINVAL, ln_jobs_add(c->jobs, c->queue, long_name, "{}", NULL, id, sizeof id));
    REFUSED(LN_EINVAL, ln_jobs_add(c->jobs, c->queue, "a\x01", "{}", NULL, id, sizeof id));
    /* The longest allowed names are fine. */
    long_queue[LN_JOB_QUEUE_MAX - 1] = '\0';
    long_name[LN_JOB_NAME_MAX - 1] = '\0';
    CHECK_EQ(ln_jobs_add(c->jobs, long_queue, long_name, "{}", NULL, id, sizeof id), 0);
    CHECK_EQ(conf_total(c, long_queue), 1);
    CHECK_EQ(conf_total(c, c->queue), 0);
}

void case_bad_add_data(conf_ctx *c) {
    char id[LN_JOB_ID_MAX];
    const char *bad[] = {"{not json", "",          "{} {}",    "{\"a\":}",
                         "[1,",       "undefined", "'single'", "{\"a\":1}x"};
    for (size_t i = 0; i < CONF_NELEM(bad); i++) {
        REFUSED(LN_EINVAL, ln_jobs_add(c->jobs, c->queue, "n", bad[i], NULL, id, sizeof id));
        CONF_CHECK_HAS(ln_jobs_errmsg(c->jobs), "JSON");
    }
    /* Larger than max_data_size. */
    ln_jobs_opts jo;
    ln_jobs_opts_init(&jo);
    jo.max_data_size = 64;
    ln_jobs *small = conf_open(c, &jo);
    char big[200];
    memset(big, 'x', sizeof big);
    big[0] = '"';
    big[sizeof big - 2] = '"';
    big[sizeof big - 1] = '\0';
    CHECK_EQ(ln_jobs_add(small, c->queue, "n", big, NULL, id, sizeof id), LN_EINVAL);
    CONF_CHECK_HAS(ln_jobs_errmsg(small), "64");
    big[65] = '"', big[66] = '\0'; /* 66 bytes */
    CHECK_EQ(ln_jobs_add(small, c->queue, "n", big, NULL, id, sizeof id), LN_EINVAL);
    ln_jobs_close(small);
    /* The default limit, 1 MiB, on the default handle. */
    char *huge = malloc(LN_JOB_DATA_MAX_DEFAULT + 3);
    CHECK(huge != NULL);
    memset(huge, 'x', LN_JOB_DATA_MAX_DEFAULT + 2);
    huge[0] = '"';
    huge[LN_JOB_DATA_MAX_DEFAULT + 1] = '"';
    huge[LN_JOB_DATA_MAX_DEFAULT + 2] = '\0';
    REFUSED(LN_EINVAL, ln_jobs_add(c->jobs, c->queue, "n", huge, NULL, id, sizeof id));
    free(huge);
    CHECK_EQ(conf_total(c, c->queue), 0);
}

/* Bad option number i of case_bad_add_options set in o (0: no more). */
static int set_bad_option(ln_job_opts *o, int i, char *tracestate) {
    switch (i) {
    case 0:
        o->delay_ms = -5;
        break;
    case 1:
        o->delay_ms = INT64_MAX;
        break;
    case 2:
        o->priority = -1;
        break;
    case 3:
        o->priority = LN_JOB_PRIORITY_MAX + 1;
        break;
    case 4:
        o->attempts = 0;
        break;
    case 5:
        o->attempts = -3;
        break;
    case 6:
        o->backoff = 7;
        break;
    case 7:
        o->backoff = -1;
        break;
    case 8:
        o->backoff_ms = -1;
        break;
    case 9:
        o->backoff_ms = INT64_MAX;
        break;
    case 10:
        o->lifo = 2;
        break;
    case 11:
        o->job_id = "";
        break;
    case 12:
        o->job_id = long_id;
        break;
    case 13:
        o->job_id = "12345";
        break;
    case 14:
        o->job_id = "0";
        break;
    case 15:
        o->job_id = "bad\nid";
        break;
    case 16:
        o->job_id = "tab\tid";
        break;
    case 17: /* zero trace id */
        o->traceparent = "00-00000000000000000000000000000000-00f067aa0ba902b7-01";
        break;
    case 18: /* zero parent id */
        o->traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01";
        break;
    case 19: /* upper case */
        o->traceparent = "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01";
        break;
    case 20:
        o->traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7";
        break;
    case 21:
        o->traceparent = "";
        break;
    case 22:
        o->tracestate = tracestate;
        break;
    case 23:
        o->tracestate = "a\nb";
        break;
    case 24:
        o->remove_on_complete.mode = 9;
        break;
    case 25:
        o->remove_on_complete.mode = -1;
        break;
    case 26:
        o->remove_on_complete = (ln_job_keep){LN_KEEP_COUNT, -1};
        break;
    case 27:
        o->remove_on_fail.mode = LN_KEEP_ALWAYS + 1;
        break;
    case 28:
        o->remove_on_fail = (ln_job_keep){LN_KEEP_AGE, -5};
        break;
    default:
        return 0;
    }
    return 1;
}

/* One bad option at a time, each refused, nothing stored. */
void case_bad_add_options(conf_ctx *c) {
    make_long_strings();
    char id[LN_JOB_ID_MAX], tracestate[600];
    memset(tracestate, 'a', sizeof tracestate - 1);
    tracestate[sizeof tracestate - 1] = '\0';
    ln_job_opts o;
    for (int i = 0;; i++) {
        ln_job_opts_init(&o);
        if (!set_bad_option(&o, i, tracestate)) break;
        int rc = ln_jobs_add(c->jobs, c->queue, "n", "1", &o, id, sizeof id);
        if (rc != LN_EINVAL) fprintf(stderr, "bad option %d accepted: %d\n", i, rc);
        CHECK_EQ(rc, LN_EINVAL);
        CHECK(ln_jobs_errmsg(c->jobs)[0] != '\0');
        /* and in a batch */
        ln_job_spec spec = {"n", "1", &o};
        CHECK_EQ(ln_jobs_add_bulk(c->jobs, c->queue, &spec, 1, NULL, 0), LN_EINVAL);
    }
    CHECK_EQ(conf_total(c, c->queue), 0);
    /* The edges that are allowed. */
    ln_job_opts_init(&o);
    o.priority = LN_JOB_PRIORITY_MAX;
    o.job_id = "a1";
    o.tracestate = "";
    o.remove_on_complete = (ln_job_keep){LN_KEEP_COUNT, 0};
    CHECK_EQ(ln_jobs_add(c->jobs, c->queue, "n", "1", &o, id, sizeof id), 0);
    long_id[LN_JOB_CUSTOM_ID_MAX - 1] = '\0'; /* the longest custom id */
    o.job_id = long_id;
    static char long_out[LN_JOB_CUSTOM_ID_MAX];
    CHECK_EQ(ln_jobs_add(c->jobs, c->queue, "n", "1", &o, long_out, sizeof long_out), 0);
    CONF_CHECK_STR(long_out, long_id);
}

/* id_size too small: LN_ERANGE, nothing added; bulk arguments. */
void case_bad_id_size_and_bulk_args(conf_ctx *c) {
    char id[LN_JOB_ID_MAX];
    REFUSED(LN_ERANGE, ln_jobs_add(c->jobs, c->queue, "n", "1", NULL, id, 1));
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.job_id = "a-long-custom-id";
    REFUSED(LN_ERANGE, ln_jobs_add(c->jobs, c->queue, "n", "1", &o, id, 8));
    CHECK_EQ(conf_total(c, c->queue), 0);
    ln_job_spec specs[2] = {{"a", "{}", NULL}, {"b", "{}", &o}};
    char ids[2][8];
    REFUSED(LN_ERANGE, ln_jobs_add_bulk(c->jobs, c->queue, specs, 2, ids[0], 8));
    REFUSED(LN_EINVAL, ln_jobs_add_bulk(c->jobs, c->queue, NULL, 2, NULL, 0));
    REFUSED(LN_EINVAL, ln_jobs_add_bulk(c->jobs, c->queue, specs, 2, ids[0], 0));
    REFUSED(LN_EINVAL, ln_jobs_add_bulk(c->jobs, "", specs, 2, NULL, 0));
    CHECK_EQ(ln_jobs_add_bulk(NULL, c->queue, specs, 2, NULL, 0), LN_EINVAL);
    CHECK_EQ(conf_total(c, c->queue), 0);
}

/* NULL and bad arguments of every reading and administering call. */
void case_bad_admin_args(conf_ctx *c) {
    make_long_strings();
    char id[LN_JOB_ID_MAX];
    conf_add(c, c->queue, "n", "{}", NULL, id);
    ln_job_counts k;
    ln_job_info info, *infos;
    size_t n;
    char **lines;
    int paused;
    CHECK_EQ(ln_jobs_counts(NULL, c->queue, &k), LN_EINVAL);
    REFUSED(LN_EINVAL, ln_jobs_counts(c->jobs, c->queue, NULL));
    REFUSED(LN_EINVAL, ln_jobs_get(c->jobs, c->queue, id, NULL));
    REFUSED(LN_EINVAL, ln_jobs_get(c->jobs, c->queue, NULL, &info));
    REFUSED(LN_EINVAL, ln_jobs_get(c->jobs, c->queue, "", &info));
    REFUSED(LN_ENOENT, ln_jobs_get(c->jobs, c->queue, long_id, &info)); /* any length: read */
    CHECK_EQ(ln_jobs_get(NULL, c->queue, id, &info), LN_EINVAL);
    REFUSED(LN_EINVAL, ln_jobs_list(c->jobs, c->queue, LN_JOB_WAITING, 0, 1, NULL, &n));
    REFUSED(LN_EINVAL, ln_jobs_list(c->jobs, c->queue, LN_JOB_WAITING, 0, 1, &infos, NULL));
    REFUSED(LN_EINVAL, ln_jobs_list(c->jobs, c->queue, LN_JOB_WAITING, 0, 0, &infos, &n));
    REFUSED(LN_EINVAL, ln_jobs_list(c->jobs, c->queue, LN_JOB_WAITING, 0, 10001, &infos, &n));
    REFUSED(LN_EINVAL, ln_jobs_list(c->jobs, c->queue, 42, 0, 1, &infos, &n));
    REFUSED(LN_EINVAL, ln_jobs_list(c->jobs, c->queue, -1, 0, 1, &infos, &n));
    REFUSED(LN_EINVAL, ln_jobs_list(c->jobs, c->queue, LN_JOB_NSTATES, 0, 1, &infos, &n));
    REFUSED(LN_EINVAL, ln_jobs_logs(c->jobs, c->queue, id, NULL, &n));
    REFUSED(LN_EINVAL, ln_jobs_logs(c->jobs, c->queue, id, &lines, NULL));
    REFUSED(LN_EINVAL, ln_jobs_logs(c->jobs, c->queue, "", &lines, &n));
    REFUSED(LN_EINVAL, ln_jobs_retry(c->jobs, c->queue, NULL));
    REFUSED(LN_EINVAL, ln_jobs_remove(c->jobs, c->queue, NULL));
    REFUSED(LN_ENOENT, ln_jobs_remove(c->jobs, c->queue, long_id));
    REFUSED(LN_EINVAL, ln_jobs_is_paused(c->jobs, c->queue, NULL));
    for (int s = 0; s < LN_JOB_NSTATES + 1; s++) {
        if (s == LN_JOB_COMPLETED || s == LN_JOB_FAILED) continue;
        REFUSED(LN_EINVAL, ln_jobs_clean(c->jobs, c->queue, s, -1, 0, NULL));
    }
    /* Bad queue names everywhere. */
    for (size_t i = 0; i < CONF_NELEM(bad_queues); i++) {
        const char *q = bad_queues[i];
        REFUSED(LN_EINVAL, ln_jobs_counts(c->jobs, q, &k));
        REFUSED(LN_EINVAL, ln_jobs_get(c->jobs, q, id, &info));
        REFUSED(LN_EINVAL, ln_jobs_list(c->jobs, q, LN_JOB_WAITING, 0, 1, &infos, &n));
        REFUSED(LN_EINVAL, ln_jobs_logs(c->jobs, q, id, &lines, &n));
        REFUSED(LN_EINVAL, ln_jobs_retry(c->jobs, q, id));
        REFUSED(LN_EINVAL, ln_jobs_retry_all(c->jobs, q, NULL));
        REFUSED(LN_EINVAL, ln_jobs_remove(c->jobs, q, id));
        REFUSED(LN_EINVAL, ln_jobs_clean(c->jobs, q, LN_JOB_COMPLETED, -1, 0, NULL));
        REFUSED(LN_EINVAL, ln_jobs_pause(c->jobs, q));
        REFUSED(LN_EINVAL, ln_jobs_resume(c->jobs, q));
        REFUSED(LN_EINVAL, ln_jobs_is_paused(c->jobs, q, &paused));
        REFUSED(LN_EINVAL, ln_jobs_drain(c->jobs, q, NULL));
    }
    REFUSED(LN_EINVAL, ln_jobs_pause(c->jobs, NULL));
    REFUSED(LN_EINVAL, ln_jobs_drain(c->jobs, NULL, NULL));
    /* A NULL handle, everywhere. */
    CHECK_EQ(ln_jobs_list(NULL, c->queue, 0, 0, 1, &infos, &n), LN_EINVAL);
    CHECK_EQ(ln_jobs_logs(NULL, c->queue, id, &lines, &n), LN_EINVAL);
    CHECK_EQ(ln_jobs_retry(NULL, c->queue, id), LN_EINVAL);
    CHECK_EQ(ln_jobs_retry_all(NULL, c->queue, NULL), LN_EINVAL);
    CHECK_EQ(ln_jobs_remove(NULL, c->queue, id), LN_EINVAL);
    CHECK_EQ(ln_jobs_clean(NULL, c->queue, LN_JOB_FAILED, -1, 0, NULL), LN_EINVAL);
    CHECK_EQ(ln_jobs_pause(NULL, c->queue), LN_EINVAL);
    CHECK_EQ(ln_jobs_resume(NULL, c->queue), LN_EINVAL);
    CHECK_EQ(ln_jobs_is_paused(NULL, c->queue, &paused), LN_EINVAL);
    CHECK_EQ(ln_jobs_drain(NULL, c->queue, NULL), LN_EINVAL);
    /* Nothing changed. */
    CHECK_EQ(conf_state(c, c->queue, id), LN_JOB_WAITING);
    CHECK_EQ(conf_total(c, c->queue), 1);
    /* A good call after a bad one still works, and clears nothing. */
    CHECK_EQ(ln_jobs_counts(c->jobs, c->queue, &k), 0);
    CHECK_EQ(k.waiting, 1);
}

void case_bad_worker_options(conf_ctx *c) {
    make_long_strings();
    ln_worker *w = NULL;
    ln_worker_opts o;
    ln_worker_opts_init(&o);
    CHECK_EQ(ln_worker_create(&w, NULL, c->queue, conf_handler_by_name, NULL, &o), LN_EINVAL);
    REFUSED(LN_EINVAL, ln_worker_create(NULL, c->jobs, c->queue, conf_handler_by_name, NULL, &o));
    REFUSED(LN_EINVAL, ln_worker_create(&w, c->jobs, c->queue, NULL, NULL, &o));
    REFUSED(LN_EINVAL, ln_worker_create(&w, c->jobs, NULL, conf_handler_by_name, NULL, &o));
    for (size_t i = 0; i < CONF_NELEM(bad_queues); i++)
        REFUSED(LN_EINVAL,
                ln_worker_create(&w, c->jobs, bad_queues[i], conf_handler_by_name, NULL, &o));
    ln_pool *pool;
    CHECK_EQ(ln_pool_create(&pool, NULL), 0);
    for (int i = 0; i < 6; i++) {
        ln_worker_opts_init(&o);
        switch (i) {
        case 0:
            o.concurrency = 0;
            break;
        case 1:
            o.concurrency = 1000000;
            break;
        case 2:
            o.lease_ms = 99;
            break;
        case 3:
            o.poll_ms = 0;
            break;
        case 4:
            o.pool = pool, o.lane = 9;
            break;
        default:
            o.pool = pool, o.lane = -1;
            break;
        }
        REFUSED(LN_EINVAL, ln_worker_create(&w, c->jobs, c->queue, conf_handler_by_name, NULL, &o));
    }
    ln_worker_opts_init(&o);
    o.concurrency = 0;
    CHECK_EQ(ln_worker_create(&w, c->jobs, c->queue, conf_handler_by_name, NULL, &o), LN_EINVAL);
    CONF_CHECK_HAS(ln_jobs_errmsg(c->jobs), "concurrency");
    CHECK(w == NULL);
    ln_pool_destroy(pool);
    /* NULL-safe: stop, destroy, stats of nothing. */
    ln_worker_stop(NULL);
    ln_worker_destroy(NULL);
    /* opts NULL = defaults. */
    CHECK_EQ(ln_worker_create(&w, c->jobs, c->queue, conf_handler_by_name, NULL, NULL), 0);
    ln_worker_destroy(w);
}

/* Bad calls from a handler are refused and do not end the job. */
typedef struct handler_rcs {
    int result_null, result_bad, result_big, progress_null, progress_bad;
    int progress_big, log_null, attempt_null, fail_null;
    const char *id_null, *name_null, *data_null;
} handler_rcs;

static int bad_calls(ln_job *job, void *ctx) {
    handler_rcs *r = ctx;
    char big[100];
    memset(big, '1', sizeof big - 1);
    big[sizeof big - 1] = '\0'; /* a 99-digit number: JSON, 99 bytes */
    r->result_null = ln_job_set_result(job, NULL);
    r->result_bad = ln_job_set_result(job, "{nope");
    r->result_big = ln_job_set_result(job, big);
    r->progress_null = ln_job_progress(job, NULL);
    r->progress_bad = ln_job_progress(job, "");
    r->progress_big = ln_job_progress(job, big);
    r->log_null = ln_job_log(NULL, "x");
    r->attempt_null = ln_job_attempt(NULL);
    r->fail_null = ln_job_fail(NULL, "x");
    r->id_null = ln_job_id(NULL);
    r->name_null = ln_job_name(NULL);
    r->data_null = ln_job_data(NULL);
    CHECK_EQ(ln_job_canceled(NULL), 0);
    CHECK(ln_job_traceparent(NULL) == NULL);
    return ln_job_set_result(job, "\"fine\"");
}

void case_bad_calls_in_handler(conf_ctx *c) {
    ln_jobs_opts jo;
    ln_jobs_opts_init(&jo);
    jo.max_data_size = 64;
    ln_jobs *small = conf_open(c, &jo);
    char id[LN_JOB_ID_MAX];
    CHECK_EQ(ln_jobs_add(small, c->queue, "n", "{}", NULL, id, sizeof id), 0);
    handler_rcs r;
    memset(&r, 0x55, sizeof r);
    ln_worker_opts o;
    conf_worker_opts(&o);
    ln_worker *w;
    CHECK_EQ(ln_worker_create(&w, small, c->queue, bad_calls, &r, &o), 0);
    CHECK_EQ(ln_worker_run(w), 0);
    ln_worker_destroy(w);
    ln_jobs_close(small);
    CHECK_EQ(r.result_null, LN_EINVAL);
    CHECK_EQ(r.result_bad, LN_EINVAL);
    CHECK_EQ(r.result_big, LN_EINVAL);
    CHECK_EQ(r.progress_null, LN_EINVAL);
    CHECK_EQ(r.progress_bad, LN_EINVAL);
    CHECK_EQ(r.progress_big, LN_EINVAL);
    CHECK_EQ(r.log_null, LN_EINVAL);
    CHECK_EQ(r.attempt_null, LN_EINVAL);
    CHECK_EQ(r.fail_null, LN_EFAILED);
    CHECK(r.id_null == NULL && r.name_null == NULL && r.data_null == NULL);
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, id, &info), 0);
    CHECK_EQ(info.state, LN_JOB_COMPLETED);
    CONF_CHECK_STR(info.result, "\"fine\"");
    CHECK(info.progress == NULL);
    ln_job_info_clear(&info);
}

/* State names and their parsing. */
void case_state_names(conf_ctx *c) {
    (void)c;
    const char *names[] = {"waiting",   "delayed", "prioritized", "active",
                           "completed", "failed",  "paused",      "waiting-children"};
    for (int s = 0; s < LN_JOB_NSTATES; s++) {
        CONF_CHECK_STR(ln_job_state_name(s), names[s]);
        CHECK_EQ(ln_job_state_parse(names[s]), s);
    }
    CONF_CHECK_STR(ln_job_state_name(LN_JOB_NSTATES), "unknown");
    CONF_CHECK_STR(ln_job_state_name(-1), "unknown");
    CHECK_EQ(ln_job_state_parse("bogus"), LN_EINVAL);
    CHECK_EQ(ln_job_state_parse(""), LN_EINVAL);
    CHECK_EQ(ln_job_state_parse("unknown"), LN_EINVAL);
    CHECK_EQ(ln_job_state_parse(NULL), LN_EINVAL);
    ln_job_info_clear(NULL);
    ln_job_opts_init(NULL);
    ln_jobs_opts_init(NULL);
    ln_worker_opts_init(NULL);
}
