/* conf_backoff.c - backoff jitter and custom backoff types (jobs.h
 * "Backoff", ln_worker_opts.backoff_strategy): what an add accepts and
 * reports, the window a jittered retry is stored in, and what a worker
 * does with a custom type, with a strategy and without one; a completion
 * its pending children refuse is a failed run, retried by the job's own
 * backoff; a jitter drawn under a locale with a decimal comma. Retries are
 * checked in the stored due time (run_at_ms), never waited out. */
#include "conf.h"

#include <lanes/jobs_flows.h>
#include <lanes/jobs_schedulers.h>

#include <locale.h>
#include <math.h>
#include <stdlib.h>
#include <time.h>

/* The store's clock (ms since the epoch): the machine's. */
static int64_t wall_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Store and clock round differently (SQLite's julianday, Redis TIME). */
#define SLACK_MS 50

static int fail_handler(ln_job *job, void *ctx) {
    (void)ctx;
    ln_job_fail(job, "boom");
    return LN_EIO;
}

static void get_job(conf_ctx *c, const char *id, ln_job_info *info) {
    int rc = ln_jobs_get(c->jobs, c->queue, id, info);
    if (rc != 0) fprintf(stderr, "get %s: %s\n", id, ln_jobs_errmsg(c->jobs));
    CHECK_EQ(rc, 0);
}

/* The info of job id of queue: backoff as expected (ms < 0: any delay). */
static void check_info(conf_ctx *c, const char *queue, const char *id, int backoff, int64_t ms,
                       double jitter, const char *type) {
    ln_job_info info;
    int rc = ln_jobs_get(c->jobs, queue, id, &info);
    if (rc != 0) fprintf(stderr, "get %s: %s\n", id, ln_jobs_errmsg(c->jobs));
    CHECK_EQ(rc, 0);
    CHECK_EQ(info.backoff, backoff);
    if (ms >= 0) CHECK_EQ(info.backoff_ms, ms);
    CHECK(info.backoff_jitter == jitter);
    CONF_CHECK_STR(info.backoff_type, type);
    ln_job_info_clear(&info);
}

/* Run a worker (opts o, NULL = tests' defaults) until it has taken n jobs. */
static ln_worker_stats run_n(conf_ctx *c, int n, ln_worker_opts *o) {
    ln_worker_opts d;
    if (o == NULL) {
        conf_worker_opts(&d);
        o = &d;
    }
    o->max_jobs = (uint64_t)n;
    o->concurrency = (unsigned)n;
    return conf_run(c, c->queue, fail_handler, NULL, o);
}

/* Bad jitters and custom types are refused and the message says why. */
void case_backoff_opts_refused(conf_ctx *c) {
    static const struct {
        int backoff;
        double jitter;
        const char *type, *says;
    } bad[] = {
        {LN_BACKOFF_FIXED, -0.1, NULL, "jitter"},
        {LN_BACKOFF_FIXED, 1.5, NULL, "jitter"},
        {LN_BACKOFF_EXPONENTIAL, NAN, NULL, "jitter"},
        {LN_BACKOFF_FIXED, 0, "linear", "LN_BACKOFF_CUSTOM"},
        {LN_BACKOFF_CUSTOM, 0, NULL, "backoff_type"},
        {LN_BACKOFF_CUSTOM, 0, "", "backoff_type"},
        {LN_BACKOFF_CUSTOM, 0, "bad\ttype", "backoff_type"},
        {LN_BACKOFF_CUSTOM, 0, "fixed", "LN_BACKOFF_FIXED"},
        {LN_BACKOFF_CUSTOM, 0, "exponential", "LN_BACKOFF_EXPONENTIAL"},
        {3, 0, NULL, "backoff"},
    };
    char longtype[LN_BACKOFF_TYPE_MAX + 1];
    memset(longtype, 'x', LN_BACKOFF_TYPE_MAX);
    longtype[LN_BACKOFF_TYPE_MAX] = '\0';
    for (size_t i = 0; i <= CONF_NELEM(bad); i++) {
        ln_job_opts o;
        ln_job_opts_init(&o);
        o.backoff_ms = 10;
        if (i < CONF_NELEM(bad)) {
            o.backoff = bad[i].backoff;
            o.backoff_jitter = bad[i].jitter;
            o.backoff_type = bad[i].type;
        } else {
            o.backoff = LN_BACKOFF_CUSTOM;
            o.backoff_type = longtype;
        }
        char id[LN_JOB_ID_MAX];
        SAYS(c->jobs, LN_EINVAL, ln_jobs_add(c->jobs, c->queue, "j", NULL, &o, id, sizeof id));
        CONF_CHECK_HAS(ln_jobs_errmsg(c->jobs), i < CONF_NELEM(bad) ? bad[i].says : "backoff_type");
    }
    CHECK_EQ(conf_total(c, c->queue), 0);
}

/* Jitter and custom type come back from get as given; 0 / NULL by default. */
void case_backoff_reported(conf_ctx *c) {
    ln_job_opts o;
    ln_job_opts_init(&o);
    char plain[LN_JOB_ID_MAX], jit[LN_JOB_ID_MAX], cust[LN_JOB_ID_MAX];
    conf_add(c, c->queue, "plain", NULL, &o, plain);
    o.backoff = LN_BACKOFF_EXPONENTIAL;
    o.backoff_ms = 250;
    o.backoff_jitter = 0.25;
    conf_add(c, c->queue, "jit", NULL, &o, jit);
    o.backoff = LN_BACKOFF_CUSTOM;
    o.backoff_type = "linear";
    o.backoff_jitter = 1;
    conf_add(c, c->queue, "cust", NULL, &o, cust);
    check_info(c, c->queue, plain, LN_BACKOFF_FIXED, 0, 0, NULL);
    check_info(c, c->queue, jit, LN_BACKOFF_EXPONENTIAL, 250, 0.25, NULL);
    check_info(c, c->queue, cust, LN_BACKOFF_CUSTOM, 250, 1, "linear");
    /* ln_jobs_list reads the same rows */
    ln_job_info *all = NULL;
    size_t n = 0;
    CHECK_EQ(ln_jobs_list(c->jobs, c->queue, LN_JOB_WAITING, 0, 10, &all, &n), 0);
    CHECK_EQ(n, 3);
    int seen = 0;
    for (size_t i = 0; i < n; i++)
        if (all[i].backoff_type != NULL && !strcmp(all[i].backoff_type, "linear")) seen++;
    CHECK_EQ(seen, 1);
    ln_job_info_free_array(all, n);
}

#define NJIT 8

/* Each retry of a jittered backoff is stored due within [(1-j) D, D] of
 * the failure; of NJIT draws at least one is clearly below D (all above
 * 0.9 D: 0.2^8 with j = 0.5), so an unjittered D fails the case. */
static void check_window(conf_ctx *c, char ids[][LN_JOB_ID_MAX], int64_t t0, int64_t t1, int64_t d,
                         double j) {
    int below = 0;
    for (int i = 0; i < NJIT; i++) {
        ln_job_info info;
        get_job(c, ids[i], &info);
        CHECK_EQ(info.state, LN_JOB_DELAYED);
        int64_t lo = t0 + (int64_t)floor((1 - j) * (double)d) - SLACK_MS, hi = t1 + d + SLACK_MS;
        if (info.run_at_ms < lo || info.run_at_ms > hi)
            fprintf(stderr, "job %s due %lld, not in [%lld, %lld]\n", ids[i],
                    (long long)info.run_at_ms, (long long)lo, (long long)hi);
        CHECK(info.run_at_ms >= lo && info.run_at_ms <= hi);
        below += info.run_at_ms < t0 + d - d / 10;
        ln_job_info_clear(&info);
    }
    if (below == 0) fprintf(stderr, "no retry below 0.9 D: the jitter is not applied\n");
    CHECK(below > 0);
}

void case_jitter_fixed_window(conf_ctx *c) {
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.attempts = 3;
    o.backoff_ms = 60000;
    o.backoff_jitter = 0.5;
    char ids[NJIT][LN_JOB_ID_MAX];
    for (int i = 0; i < NJIT; i++) conf_add(c, c->queue, "j", NULL, &o, ids[i]);
    int64_t t0 = wall_ms();
    ln_worker_stats st = run_n(c, NJIT, NULL);
    int64_t t1 = wall_ms();
    CHECK_EQ(st.retried, NJIT);
    check_window(c, ids, t0, t1, 60000, 0.5);
}

/* Exponential: D doubles with each failed run; promoting the retried jobs
 * and failing them again puts the second retry in [(1-j) 2D, 2D]. */
void case_jitter_exponential_window(conf_ctx *c) {
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.attempts = 3;
    o.backoff = LN_BACKOFF_EXPONENTIAL;
    o.backoff_ms = 30000;
    o.backoff_jitter = 0.5;
    char ids[NJIT][LN_JOB_ID_MAX];
    for (int i = 0; i < NJIT; i++) conf_add(c, c->queue, "j", NULL, &o, ids[i]);
    int64_t t0 = wall_ms();
    CHECK_EQ(run_n(c, NJIT, NULL).retried, NJIT);
    int64_t t1 = wall_ms();
    check_window(c, ids, t0, t1, 30000, 0.5);
    for (int i = 0; i < NJIT; i++) CHECK_EQ(ln_jobs_promote(c->jobs, c->queue, ids[i]), 0);
    t0 = wall_ms();
    CHECK_EQ(run_n(c, NJIT, NULL).retried, NJIT);
    t1 = wall_ms();
    check_window(c, ids, t0, t1, 60000, 0.5);
}

/* The strategy's view of the failure and what it gave back. */
typedef struct strat {
    int calls, attempts_made[4];
    char type[64], reason[64], job_name[16];
    int64_t give[4]; /* what call k returns */
} strat;

static int64_t strategy(int attempts_made, const char *type, const char *reason, const ln_job *job,
                        void *user) {
    strat *s = user;
    int k = s->calls++;
    if (k < 4) s->attempts_made[k] = attempts_made;
    snprintf(s->type, sizeof s->type, "%s", type);
    snprintf(s->reason, sizeof s->reason, "%s", reason);
    snprintf(s->job_name, sizeof s->job_name, "%s", ln_job_name(job));
    return k < 4 ? s->give[k] : -1;
}

static void add_custom(conf_ctx *c, const char *type, int attempts, char *id) {
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.attempts = attempts;
    o.backoff = LN_BACKOFF_CUSTOM;
    o.backoff_type = type;
    o.backoff_ms = 100;
    conf_add(c, c->queue, "custom-job", NULL, &o, id);
}

/* A custom type is retried after what the worker's strategy returns; it
 * sees the type, the reason and the number of failed runs. */
void case_custom_strategy_delay(conf_ctx *c) {
    char id[LN_JOB_ID_MAX];
    add_custom(c, "linear", 5, id);
    strat s = {.give = {45000, 0, -1}};
    ln_worker_opts o;
    conf_worker_opts(&o);
    o.backoff_strategy = strategy;
    o.backoff_user = &s;
    int64_t t0 = wall_ms();
    ln_worker_stats st = run_n(c, 1, &o);
    int64_t t1 = wall_ms();
    CHECK_EQ(st.retried, 1);
    CHECK_EQ(s.calls, 1);
    CHECK_EQ(s.attempts_made[0], 1);
    CONF_CHECK_STR(s.type, "linear");
    CONF_CHECK_STR(s.reason, "boom");
    CONF_CHECK_STR(s.job_name, "custom-job");
    ln_job_info info;
    get_job(c, id, &info);
    CHECK_EQ(info.state, LN_JOB_DELAYED);
    CHECK(info.run_at_ms >= t0 + 45000 - SLACK_MS && info.run_at_ms <= t1 + 45000 + SLACK_MS);
    CHECK_EQ(info.attempts_made, 1);
    ln_job_info_clear(&info);
    /* 0: again at once (waiting); -1: no more retries, failed for good */
    CHECK_EQ(ln_jobs_promote(c->jobs, c->queue, id), 0);
    CHECK_EQ(run_n(c, 1, &o).retried, 1);
    CHECK_EQ(s.attempts_made[1], 2);
    CHECK_EQ(conf_state(c, c->queue, id), LN_JOB_WAITING);
    st = run_n(c, 1, &o);
    CHECK_EQ(st.failed, 1);
    CHECK_EQ(s.attempts_made[2], 3);
    get_job(c, id, &info);
    CHECK_EQ(info.state, LN_JOB_FAILED);
    CONF_CHECK_STR(info.failed_reason, "boom");
    CHECK_EQ(info.attempts_made, 3);
    ln_job_info_clear(&info);
}

/* A negative value other than -1 retries at once; past 100 years is cut. */
void case_custom_strategy_odd_values(conf_ctx *c) {
    char a[LN_JOB_ID_MAX], b[LN_JOB_ID_MAX];
    add_custom(c, "odd", 3, a);
    strat s = {.give = {-5, INT64_MAX}};
    ln_worker_opts o;
    conf_worker_opts(&o);
    o.backoff_strategy = strategy;
    o.backoff_user = &s;
    CHECK_EQ(run_n(c, 1, &o).retried, 1);
    CHECK_EQ(conf_state(c, c->queue, a), LN_JOB_WAITING);
    add_custom(c, "odd", 3, b);
    CHECK_EQ(ln_jobs_remove(c->jobs, c->queue, a), 0);
    int64_t t0 = wall_ms();
    CHECK_EQ(run_n(c, 1, &o).retried, 1);
    ln_job_info info;
    get_job(c, b, &info);
    CHECK_EQ(info.state, LN_JOB_DELAYED);
    int64_t cap = 100LL * 366 * 24 * 3600 * 1000;
    CHECK(info.run_at_ms >= t0 + cap - SLACK_MS && info.run_at_ms <= wall_ms() + cap + SLACK_MS);
    ln_job_info_clear(&info);
}

/* Fixed and exponential never ask the strategy; their jitter applies. */
void case_custom_strategy_not_for_builtin(conf_ctx *c) {
    ln_job_opts jo;
    ln_job_opts_init(&jo);
    jo.attempts = 2;
    jo.backoff_ms = 40000;
    char id[LN_JOB_ID_MAX];
    conf_add(c, c->queue, "j", NULL, &jo, id);
    strat s = {.give = {1}};
    ln_worker_opts o;
    conf_worker_opts(&o);
    o.backoff_strategy = strategy;
    o.backoff_user = &s;
    int64_t t0 = wall_ms();
    CHECK_EQ(run_n(c, 1, &o).retried, 1);
    CHECK_EQ(s.calls, 0);
    ln_job_info info;
    get_job(c, id, &info);
    CHECK(info.run_at_ms >= t0 + 40000 - SLACK_MS);
    ln_job_info_clear(&info);
}

/* Without a strategy a custom type is not retried: the job fails for good
 * with attempts left, and its reason says why (never lost silently). */
void case_custom_without_strategy_fails(conf_ctx *c) {
    char id[LN_JOB_ID_MAX];
    add_custom(c, "linear", 4, id);
    ln_worker_stats st = run_n(c, 1, NULL);
    CHECK_EQ(st.failed, 1);
    CHECK_EQ(st.retried, 0);
    ln_job_info info;
    get_job(c, id, &info);
    CHECK_EQ(info.state, LN_JOB_FAILED);
    CONF_CHECK_STR(info.failed_reason, "boom (not retried: no backoff strategy for type 'linear')");
    CHECK_EQ(info.attempts_made, 1);
    CONF_CHECK_STR(info.backoff_type, "linear");
    ln_job_info_clear(&info);
    /* the last attempt fails as any: no note */
    char last[LN_JOB_ID_MAX];
    add_custom(c, "linear", 1, last);
    CHECK_EQ(run_n(c, 1, NULL).failed, 1);
    get_job(c, last, &info);
    CONF_CHECK_STR(info.failed_reason, "boom");
    ln_job_info_clear(&info);
}

/* A scheduler's template carries jitter and custom type to its jobs. */
void case_backoff_in_schedule(conf_ctx *c) {
    ln_job_schedule s;
    ln_job_schedule_init(&s);
    s.every_ms = 3600000;
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.attempts = 2;
    o.backoff = LN_BACKOFF_CUSTOM;
    o.backoff_type = "linear";
    o.backoff_ms = 70;
    o.backoff_jitter = 0.75;
    char job[LN_JOB_ID_MAX];
    int rc = ln_jobs_schedule(c->jobs, c->queue, "bo", &s, "tick", NULL, &o, job, sizeof job);
    if (rc != 0) fprintf(stderr, "schedule: %s\n", ln_jobs_errmsg(c->jobs));
    CHECK_EQ(rc, 0);
    CHECK(job[0] != '\0');
    ln_job_info info;
    get_job(c, job, &info);
    CHECK_EQ(info.backoff, LN_BACKOFF_CUSTOM);
    CHECK_EQ(info.backoff_ms, 70);
    CHECK(info.backoff_jitter == 0.75);
    CONF_CHECK_STR(info.backoff_type, "linear");
    ln_job_info_clear(&info);
    CHECK_EQ(ln_jobs_unschedule(c->jobs, c->queue, "bo"), 0);
}

/* Bulk adds and flows store each job's jitter and type as given. */
void case_backoff_in_bulk_and_flow(conf_ctx *c) {
    ln_job_opts a, b;
    ln_job_opts_init(&a);
    ln_job_opts_init(&b);
    a.backoff_jitter = 0.125;
    b.backoff = LN_BACKOFF_CUSTOM;
    b.backoff_type = "step";
    ln_job_spec specs[3] = {{"a", NULL, &a}, {"b", NULL, &b}, {"plain", NULL, NULL}};
    char ids[3][LN_JOB_ID_MAX];
    CHECK_EQ(ln_jobs_add_bulk(c->jobs, c->queue, specs, 3, ids[0], sizeof ids[0]), 0);
    check_info(c, c->queue, ids[0], LN_BACKOFF_FIXED, -1, 0.125, NULL);
    check_info(c, c->queue, ids[1], LN_BACKOFF_CUSTOM, -1, 0, "step");
    check_info(c, c->queue, ids[2], LN_BACKOFF_FIXED, -1, 0, NULL);
    ln_flow_node kids[2] = {{.name = "ka", .opts = &a}, {.name = "kb", .opts = &b}};
    ln_flow_node root = {
        .queue = c->queue, .name = "root", .opts = &b, .children = kids, .nchildren = 2};
    char fids[3][LN_JOB_ID_MAX];
    int rc = ln_jobs_add_flow(c->jobs, &root, fids[0], 3, sizeof fids[0]);
    if (rc != 0) fprintf(stderr, "flow: %s\n", ln_jobs_errmsg(c->jobs));
    CHECK_EQ(rc, 0);
    check_info(c, c->queue, fids[0], LN_BACKOFF_CUSTOM, -1, 0, "step");
    check_info(c, c->queue, fids[1], LN_BACKOFF_FIXED, -1, 0.125, NULL);
    check_info(c, c->queue, fids[2], LN_BACKOFF_CUSTOM, -1, 0, "step");
    /* a bad node is refused whole, naming it */
    ln_job_opts bad;
    ln_job_opts_init(&bad);
    bad.backoff_jitter = 2;
    kids[1].opts = &bad;
    uint64_t before = conf_total(c, c->queue);
    SAYS(c->jobs, LN_EINVAL, ln_jobs_add_flow(c->jobs, &root, fids[0], 3, sizeof fids[0]));
    CONF_CHECK_HAS(ln_jobs_errmsg(c->jobs), "jitter");
    CHECK_EQ(conf_total(c, c->queue), before);
}

/* A custom backoff strategy's calls. */
typedef struct fixed_strat {
    int calls;
    char reason[128];
} fixed_strat;

static int64_t fixed_strategy(int attempts_made, const char *type, const char *reason,
                              const ln_job *job, void *user) {
    (void)attempts_made;
    (void)type;
    (void)job;
    fixed_strat *s = user;
    s->calls++;
    snprintf(s->reason, sizeof s->reason, "%s", reason);
    return 45000;
}

/* "parent" jobs add a child that stays pending (delayed) with themselves
 * as its parent, then return success without waiting for it. */
static int parent_handler(ln_job *job, void *ctx) {
    conf_ctx *c = ctx;
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.parent_queue = ln_job_queue(job);
    o.parent_id = ln_job_id(job);
    o.delay_ms = 3600000;
    char kq[LN_JOB_QUEUE_MAX];
    snprintf(kq, sizeof kq, "%s-kids", ln_job_queue(job));
    if (ln_jobs_add(c->jobs, kq, "kid", NULL, &o, NULL, 0) != 0) return ln_job_fail(job, "add");
    return 0;
}

/* A refused completion is a failure of the run, retried by the job's
 * backoff: a custom type asks the worker's strategy (with BullMQ's
 * reason), a jitter draws from its window, and the worker counts the run
 * as retried, not completed; with no attempt left it fails. */
void case_refused_completion_backoff(conf_ctx *c) {
    (void)conf_queue(c, "kids");
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.job_id = "pc";
    o.attempts = 3;
    o.backoff = LN_BACKOFF_CUSTOM;
    o.backoff_type = "linear";
    conf_add(c, c->queue, "parent", NULL, &o, NULL);
    ln_job_opts_init(&o);
    o.job_id = "pj";
    o.attempts = 3;
    o.backoff_ms = 1000000000; /* jitter 1: anywhere in [0, 1e9] ms */
    o.backoff_jitter = 1;
    conf_add(c, c->queue, "parent", NULL, &o, NULL);
    ln_job_opts_init(&o);
    o.job_id = "p1"; /* one attempt: fails for good */
    conf_add(c, c->queue, "parent", NULL, &o, NULL);
    fixed_strat s = {0};
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    wo.backoff_strategy = fixed_strategy;
    wo.backoff_user = &s;
    wo.max_jobs = 3; /* the retries are delayed: not run again */
    int64_t t0 = wall_ms();
    ln_worker_stats st = conf_run(c, c->queue, parent_handler, c, &wo);
    int64_t t1 = wall_ms();
    CHECK_EQ(st.completed, 0);
    CHECK_EQ(st.retried, 2);
    CHECK_EQ(st.failed, 1);
    CHECK_EQ(s.calls, 1);
    CONF_CHECK_STR(s.reason, "Job pc has pending dependencies. moveToFinished");
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, "pc", &info), 0);
    CHECK_EQ(info.state, LN_JOB_DELAYED);
    CHECK_EQ(info.attempts_made, 1);
    CHECK(info.run_at_ms >= t0 + 45000 - 50 && info.run_at_ms <= t1 + 45000 + 50);
    CONF_CHECK_STR(info.failed_reason, "Job pc has pending dependencies. moveToFinished");
    ln_job_info_clear(&info);
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, "pj", &info), 0);
    CHECK_EQ(info.state, LN_JOB_DELAYED);
    CHECK_EQ(info.attempts_made, 1);
    /* unjittered it would be due at t + 1e9 exactly: a draw that close to
     * the top of the window is a one in a million chance */
    CHECK(info.run_at_ms < t0 + 1000000000 - 1000);
    ln_job_info_clear(&info);
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, "p1", &info), 0);
    CHECK_EQ(info.state, LN_JOB_FAILED);
    CONF_CHECK_STR(info.failed_reason, "Job p1 has pending dependencies. moveToFinished");
    ln_job_info_clear(&info);
    conf_check_counts(c, c->queue);
}

/* A program in a locale whose decimal point is ',' (LC_NUMERIC): a jitter
 * is stored and read back as given (the Redis store wrote it with
 * printf's "%g", "0,5", which its script read as no jitter). Needs such
 * a locale (de_DE, fr_FR, ...; LOCPATH may point at one localedef made);
 * without one the case says so and checks the C locale only. */
void case_backoff_jitter_in_comma_locale(conf_ctx *c) {
    static const char *const names[] = {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8",
                                        "fr_FR.utf8",  "de_DE",      "fr_FR"};
    const char *got = NULL;
    for (size_t i = 0; got == NULL && i < CONF_NELEM(names); i++)
        got = setlocale(LC_NUMERIC, names[i]); /* this case's own process */
    if (got == NULL || strcmp(localeconv()->decimal_point, ",") != 0)
        fprintf(stderr, "no locale with a decimal comma: the C locale only\n");
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.backoff_ms = 100;
    o.backoff_jitter = 0.5;
    char id[LN_JOB_ID_MAX];
    conf_add(c, c->queue, "j", NULL, &o, id);
    ln_job_info info;
    SAYS(c->jobs, 0, ln_jobs_get(c->jobs, c->queue, id, &info));
    CHECK(info.backoff_jitter == 0.5);
    ln_job_info_clear(&info);
    setlocale(LC_NUMERIC, "C");
}
