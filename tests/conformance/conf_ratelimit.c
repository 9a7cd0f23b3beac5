/* conf_ratelimit.c - rate limits and global concurrency (jobs.h "Rate
 * limits and global concurrency"): a limit shared by the workers of a
 * queue is never exceeded in any window, the global limit applies to
 * workers without one of their own, ln_job_rate_limited puts the job back
 * at the front without using an attempt, global concurrency caps the
 * active jobs of all workers, and the limits read back as set. */
#include "conf.h"

#include <stdlib.h>
#include <time.h>

static int64_t wall_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void add_n(conf_ctx *c, int n, char ids[][LN_JOB_ID_MAX]) {
    for (int i = 0; i < n; i++) conf_add(c, c->queue, "plain", NULL, NULL, ids ? ids[i] : NULL);
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* The windows of a limiter, rebuilt from the sorted start times t[0..n)
 * (ms): a window starts at a take and lasts duration_ms; the next starts at
 * the first take after it. None may hold more than max takes. A take
 * within tol ms of a window's end may be of either window: it is counted
 * in the old one while that has room (the most lenient reading), so only a
 * real excess fails. Returns the index of the first take of a window that
 * holds too many, or -1. */
static int over_limit(const int64_t *t, int n, int max, int64_t duration_ms, int64_t tol) {
    for (int i = 0; i < n;) {
        int64_t end = t[i] + duration_ms;
        int j = i, k = 0;
        while (j < n && t[j] < end - tol) j++, k++;
        if (k > max) return i;
        while (j < n && t[j] < end + tol && k < max) j++, k++;
        i = j;
    }
    return -1;
}

/* Every job of ids completed, and their start times (store clock) keep
 * the limit: no window of it took more than max (over_limit; 2 ms of clock
 * rounding: Redis reads its clock in ms). */
static void check_windows(conf_ctx *c, char ids[][LN_JOB_ID_MAX], int n, int max,
                          int64_t duration_ms) {
    int64_t started[64];
    CHECK(n <= 64);
    for (int i = 0; i < n; i++) {
        ln_job_info info;
        CHECK_EQ(ln_jobs_get(c->jobs, c->queue, ids[i], &info), 0);
        CHECK_EQ(info.state, LN_JOB_COMPLETED);
        started[i] = info.started_ms;
        ln_job_info_clear(&info);
    }
    qsort(started, (size_t)n, sizeof started[0], cmp_i64);
    int bad = over_limit(started, n, max, duration_ms, 2);
    if (bad >= 0) {
        fprintf(stderr, "a window from take %d holds more than %d:", bad, max);
        for (int i = 0; i < n; i++) fprintf(stderr, " %lld", (long long)(started[i] - started[0]));
        fprintf(stderr, "\n");
    }
    CHECK_EQ(bad, -1);
}

/* Two workers (two handles, concurrency 2 each) with the same limit of 3
 * per 300 ms share it: 12 jobs take four windows, never 4 in one. */
void case_worker_limit_shared_never_exceeded(conf_ctx *c) {
    char ids[12][LN_JOB_ID_MAX];
    add_n(c, 12, ids);
    ln_worker_opts o;
    conf_worker_opts(&o);
    o.concurrency = 2;
    o.rate_max = 3;
    o.rate_duration_ms = 300;
    ln_jobs *other = conf_open(c, NULL);
    int64_t t0 = conf_now_ms();
    conf_bg *a = conf_bg_start(c->jobs, c->queue, conf_handler_by_name, NULL, &o);
    conf_bg *b = conf_bg_start(other, c->queue, conf_handler_by_name, NULL, &o);
    ln_worker_stats sa, sb;
    CHECK_EQ(conf_bg_join(a, &sa), 0);
    CHECK_EQ(conf_bg_join(b, &sb), 0);
    CHECK_EQ(sa.completed + sb.completed, 12);
    CHECK(conf_now_ms() - t0 >= 3 * 300 - 5); /* four windows: three ended */
    check_windows(c, ids, 12, 3, 300);
    ln_jobs_close(other);
}

/* A global limit (set here, BullMQ's setGlobalRateLimit on Redis) holds
 * for a worker without a limit of its own. */
void case_global_rate_limit_applies(conf_ctx *c) {
    char ids[6][LN_JOB_ID_MAX];
    CHECK_EQ(ln_jobs_set_rate_limit(c->jobs, c->queue, 2, 250), 0);
    add_n(c, 6, ids);
    ln_worker_opts o;
    conf_worker_opts(&o);
    o.concurrency = 4;
    ln_worker_stats st = conf_run(c, c->queue, conf_handler_by_name, NULL, &o);
    CHECK_EQ(st.completed, 6);
    check_windows(c, ids, 6, 2, 250);
}

/* Set, read and clear the global rate limit; bad values are refused. */
void case_global_rate_limit_set_read(conf_ctx *c) {
    int64_t max = -1, dur = -1;
    CHECK_EQ(ln_jobs_get_rate_limit(c->jobs, c->queue, &max, &dur), 0);
    CHECK_EQ(max, 0);
    CHECK_EQ(dur, 0);
    CHECK_EQ(ln_jobs_set_rate_limit(c->jobs, c->queue, 5, 1000), 0);
    CHECK_EQ(ln_jobs_get_rate_limit(c->jobs, c->queue, &max, &dur), 0);
    CHECK_EQ(max, 5);
    CHECK_EQ(dur, 1000);
    CHECK_EQ(ln_jobs_set_rate_limit(c->jobs, c->queue, 0, 0), 0);
    CHECK_EQ(ln_jobs_get_rate_limit(c->jobs, c->queue, &max, &dur), 0);
    CHECK_EQ(max, 0);
    CHECK_EQ(ln_jobs_set_rate_limit(c->jobs, c->queue, 5, 0), LN_EINVAL);
    CONF_CHECK_HAS(ln_jobs_errmsg(c->jobs), "duration_ms");
    CHECK_EQ(ln_jobs_set_rate_limit(c->jobs, c->queue, -1, 10), LN_EINVAL);
    CHECK_EQ(ln_jobs_set_rate_limit(c->jobs, "a:b", 1, 10), LN_EINVAL);
    CHECK_EQ(ln_jobs_get_rate_limit(c->jobs, c->queue, NULL, &dur), LN_EINVAL);
}

typedef struct conc_probe {
    atomic_int now, peak;
} conc_probe;

static int conc_handler(ln_job *job, void *ctx) {
    conc_probe *p = ctx;
    int n = atomic_fetch_add(&p->now, 1) + 1;
    int peak = atomic_load(&p->peak);
    while (n > peak && !atomic_compare_exchange_weak(&p->peak, &peak, n)) {
    }
    struct timespec ts = {0, 15 * 1000000};
    nanosleep(&ts, NULL);
    atomic_fetch_sub(&p->now, 1);
    (void)job;
    return 0;
}

/* Global concurrency reads back as set and caps the active jobs of a
 * worker whose own concurrency is higher; cleared, it reads 0. */
void case_global_concurrency_set_read(conf_ctx *c) {
    int64_t n = -1;
    CHECK_EQ(ln_jobs_get_concurrency(c->jobs, c->queue, &n), 0);
    CHECK_EQ(n, 0);
    CHECK_EQ(ln_jobs_set_concurrency(c->jobs, c->queue, 2), 0);
    CHECK_EQ(ln_jobs_get_concurrency(c->jobs, c->queue, &n), 0);
    CHECK_EQ(n, 2);
    add_n(c, 8, NULL);
    conc_probe p = {0};
    ln_worker_opts o;
    conf_worker_opts(&o);
    o.concurrency = 6;
    ln_worker_stats st = conf_run(c, c->queue, conc_handler, &p, &o);
    CHECK_EQ(st.completed, 8);
    CHECK(atomic_load(&p.peak) <= 2);
    CHECK_EQ(ln_jobs_set_concurrency(c->jobs, c->queue, 0), 0);
    CHECK_EQ(ln_jobs_get_concurrency(c->jobs, c->queue, &n), 0);
    CHECK_EQ(n, 0);
    CHECK_EQ(ln_jobs_set_concurrency(c->jobs, c->queue, -3), LN_EINVAL);
}

/* queue.rateLimit: a manual limit has a TTL to read, holds a limited
 * worker back until it ends, and a limit of 0 ms removes it. */
void case_manual_limit_ttl(conf_ctx *c) {
    int64_t ttl = -1;
    CHECK_EQ(ln_jobs_rate_limit_ttl(c->jobs, c->queue, 0, &ttl), 0);
    CHECK_EQ(ttl, 0);
    CHECK_EQ(ln_jobs_rate_limit(c->jobs, c->queue, 5000), 0);
    CHECK_EQ(ln_jobs_rate_limit_ttl(c->jobs, c->queue, 0, &ttl), 0);
    CHECK(ttl > 4000 && ttl <= 5000);
    CHECK_EQ(ln_jobs_rate_limit_ttl(c->jobs, c->queue, 3, &ttl), 0);
    CHECK(ttl > 4000 && ttl <= 5000);
    CHECK_EQ(ln_jobs_rate_limit(c->jobs, c->queue, 0), 0);
    CHECK_EQ(ln_jobs_rate_limit_ttl(c->jobs, c->queue, 3, &ttl), 0);
    CHECK_EQ(ttl, 0);
    CHECK_EQ(ln_jobs_rate_limit(c->jobs, c->queue, -1), LN_EINVAL);

    char ids[2][LN_JOB_ID_MAX];
    add_n(c, 2, ids);
    int64_t at = wall_ms();
    CHECK_EQ(ln_jobs_rate_limit(c->jobs, c->queue, 300), 0);
    ln_worker_opts o;
    conf_worker_opts(&o);
    o.rate_max = 10;
    o.rate_duration_ms = 1000;
    ln_worker_stats st = conf_run(c, c->queue, conf_handler_by_name, NULL, &o);
    CHECK_EQ(st.completed, 2);
    for (int i = 0; i < 2; i++) {
        ln_job_info info;
        CHECK_EQ(ln_jobs_get(c->jobs, c->queue, ids[i], &info), 0);
        CHECK(info.started_ms >= at + 290);
        ln_job_info_clear(&info);
    }
}

typedef struct order_log {
    char ids[8][LN_JOB_ID_MAX];
    int64_t at[8];
    atomic_int n;
} order_log;

/* Records the run; the job named "limit" asks for a 200 ms limit on its
 * first run. */
static int order_handler(ln_job *job, void *ctx) {
    order_log *l = ctx;
    int i = atomic_fetch_add(&l->n, 1);
    if (i < 8) {
        snprintf(l->ids[i], sizeof l->ids[i], "%s", ln_job_id(job));
        l->at[i] = conf_now_ms();
    }
    if (strcmp(ln_job_name(job), "limit") == 0 && ln_job_attempt(job) == 1)
        return ln_job_rate_limited(job, 200);
    return 0;
}

/* A "rate limited" outcome: the job goes back to the front of waiting
 * (it runs again before the jobs added after it) without using an attempt,
 * and the worker takes nothing until the limit's 200 ms are over. */
void case_rate_limited_outcome_requeues(conf_ctx *c) {
    char first[LN_JOB_ID_MAX], ids[2][LN_JOB_ID_MAX];
    ln_job_opts jo;
    ln_job_opts_init(&jo);
    jo.attempts = 1;
    conf_add(c, c->queue, "limit", NULL, &jo, first);
    add_n(c, 2, ids);
    order_log l = {0};
    ln_worker_opts o;
    conf_worker_opts(&o);
    ln_worker_stats st = conf_run(c, c->queue, order_handler, &l, &o);
    CHECK_EQ(st.rate_limited, 1);
    CHECK_EQ(st.completed, 3);
    CHECK_EQ(st.failed + st.retried, 0);
    CHECK_EQ(atomic_load(&l.n), 4);
    CONF_CHECK_STR(l.ids[0], first);
    CONF_CHECK_STR(l.ids[1], first);
    CONF_CHECK_STR(l.ids[2], ids[0]);
    CHECK(l.at[1] - l.at[0] >= 190);
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, first, &info), 0);
    CHECK_EQ(info.state, LN_JOB_COMPLETED);
    CHECK_EQ(info.attempts_made, 0);
    CHECK_EQ(info.attempts_started, 2);
    ln_job_info_clear(&info);
    conf_check_counts(c, c->queue);
}

/* A worker limit needs both fields, each at most 2^31-1. */
void case_worker_limit_options_checked(conf_ctx *c) {
    ln_worker_opts o;
    conf_worker_opts(&o);
    o.rate_max = 3;
    ln_worker *w = NULL;
    CHECK_EQ(ln_worker_create(&w, c->jobs, c->queue, conf_handler_by_name, NULL, &o), LN_EINVAL);
    CONF_CHECK_HAS(ln_jobs_errmsg(c->jobs), "rate_max");
    o.rate_max = 0;
    o.rate_duration_ms = 100;
    CHECK_EQ(ln_worker_create(&w, c->jobs, c->queue, conf_handler_by_name, NULL, &o), LN_EINVAL);
    CHECK(w == NULL);
}
