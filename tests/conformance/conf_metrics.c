/* conf_metrics.c - per-minute metrics of completed and failed jobs
 * (jobs.h "Metrics"): nothing is counted unless the worker asks for it;
 * with metrics_max_points set, every completion and every final failure
 * (not a retried run) is counted; the minute arithmetic
 * (ln_job_metrics_record) checked with a fake clock, across minute
 * boundaries and a gap longer than the points kept, and its edges (n 0,
 * max_points 0, a clock behind the last point, an empty range). */
#include "conf.h"

#include <time.h>

#define MIN_MS 60000

/* Wall-clock ms since the epoch: the stores' clock on this machine. */
static int64_t wall_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void read_metrics(conf_ctx *c, int type, ln_job_metrics *m) {
    int rc = ln_jobs_metrics(c->jobs, c->queue, type, 0, -1, m);
    if (rc != 0) fprintf(stderr, "metrics: %s\n", ln_jobs_errmsg(c->jobs));
    CHECK_EQ(rc, 0);
}

/* n jobs named name (attempts each) into c->queue. */
static void add_named(conf_ctx *c, const char *name, int n, int attempts) {
    ln_job_opts jo;
    ln_job_opts_init(&jo);
    jo.attempts = attempts;
    for (int i = 0; i < n; i++) conf_add(c, c->queue, name, "1", &jo, NULL);
}

/* A worker without metrics_max_points writes no metrics. */
void case_metrics_off_records_nothing(conf_ctx *c) {
    add_named(c, "ok", 3, 1);
    add_named(c, "bad", 2, 1);
    ln_worker_opts o;
    conf_worker_opts(&o);
    ln_worker_stats st = conf_run(c, c->queue, conf_handler_by_name, NULL, &o);
    CHECK_EQ(st.completed, 3);
    CHECK_EQ(st.failed, 2);
    for (int type = LN_JOB_COMPLETED; type <= LN_JOB_FAILED; type++) {
        ln_job_metrics m;
        read_metrics(c, type, &m);
        CHECK_EQ(m.count, 0);
        CHECK_EQ(m.prev_ts, 0);
        CHECK_EQ(m.prev_count, 0);
        CHECK_EQ(m.npoints, 0);
        CHECK_EQ(m.ndata, 0);
        CHECK(m.data == NULL);
        ln_job_metrics_clear(&m);
    }
}

/* The stored counters of one type after n jobs counted between t0 and t1:
 * count n, prevTS set by a job of the run; a point only if the run
 * crossed a minute, and the points always add up to prevCount. */
static void check_counted(conf_ctx *c, int type, uint64_t n, int64_t t0, int64_t t1) {
    ln_job_metrics m;
    read_metrics(c, type, &m);
    CHECK_EQ(m.count, n);
    CHECK(m.prev_ts >= t0 - 1000 && m.prev_ts <= t1 + 1000);
    uint64_t sum = 0;
    for (size_t i = 0; i < m.ndata; i++) sum += m.data[i];
    CHECK_EQ(m.ndata, m.npoints);
    CHECK_EQ(sum, m.prev_count);
    if (t0 / MIN_MS == t1 / MIN_MS) { /* no minute boundary crossed */
        CHECK_EQ(m.npoints, 0);
        CHECK_EQ(m.prev_count, 0);
    } else {
        CHECK(m.npoints <= 1);
    }
    ln_job_metrics_clear(&m);
}

/* With metrics on, N completions and M final failures are counted; a run
 * that fails and is retried counts once, when it fails for good. Two
 * workers (one step each at least) add up. */
void case_metrics_count_outcomes(conf_ctx *c) {
    add_named(c, "ok", 5, 1);
    add_named(c, "bad", 3, 1);
    add_named(c, "bad", 1, 2); /* fails twice: one failure counted */
    ln_worker_opts o;
    conf_worker_opts(&o);
    o.metrics_max_points = 60;
    o.concurrency = 4;
    int64_t t0 = wall_ms();
    ln_worker_stats st = conf_run(c, c->queue, conf_handler_by_name, NULL, &o);
    CHECK_EQ(st.completed, 5);
    CHECK_EQ(st.failed, 4);
    CHECK_EQ(st.retried, 1);
    add_named(c, "ok", 2, 1);
    st = conf_run(c, c->queue, conf_handler_by_name, NULL, &o);
    CHECK_EQ(st.completed, 2);
    int64_t t1 = wall_ms();
    check_counted(c, LN_JOB_COMPLETED, 7, t0, t1);
    check_counted(c, LN_JOB_FAILED, 4, t0, t1);
}

/* Bad arguments are refused with a message; a queue never counted reads
 * as zeros. */
void case_metrics_bad_input(conf_ctx *c) {
    ln_job_metrics m;
    CHECK_EQ(ln_jobs_metrics(c->jobs, c->queue, LN_JOB_WAITING, 0, -1, &m), LN_EINVAL);
    CONF_CHECK_HAS(ln_jobs_errmsg(c->jobs), "completed or failed");
    CHECK_EQ(ln_jobs_metrics(c->jobs, c->queue, LN_JOB_COMPLETED, 0, -1, NULL), LN_EINVAL);
    CHECK_EQ(ln_jobs_metrics(c->jobs, "a:b", LN_JOB_COMPLETED, 0, -1, &m), LN_EINVAL);
    CHECK_EQ(ln_jobs_metrics(NULL, c->queue, LN_JOB_COMPLETED, 0, -1, &m), LN_EINVAL);
    CHECK_EQ(ln_jobs_metrics(c->jobs, c->queue, LN_JOB_FAILED, 5, 2, &m), 0);
    CHECK_EQ(m.count + m.npoints + m.ndata, 0);
    ln_job_metrics_clear(&m);
    ln_job_metrics_clear(NULL);
    ln_worker_opts o;
    conf_worker_opts(&o);
    o.metrics_max_points = LN_JOB_METRICS_POINTS_MAX + 1;
    ln_worker *w = NULL;
    CHECK_EQ(ln_worker_create(&w, c->jobs, c->queue, conf_handler_by_name, NULL, &o), LN_EINVAL);
    CONF_CHECK_HAS(ln_jobs_errmsg(c->jobs), "metrics_max_points");
    CHECK(w == NULL);
}

/* A list of points, newest first, as the stores keep it: push what
 * ln_job_metrics_record asks for, cut to max. */
typedef struct sim {
    ln_job_metrics m;
    uint64_t data[16];
    size_t n;
} sim;

static unsigned sim_count(sim *s, uint64_t n, int64_t now, unsigned max) {
    uint64_t first = 99;
    unsigned p = ln_job_metrics_record(&s->m, n, now, max, &first);
    if (p == 0) CHECK_EQ(first, 0);
    for (unsigned i = 0; i < p; i++) { /* first, then zeros, each in front */
        size_t keep = s->n < 15 ? s->n : 15;
        memmove(s->data + 1, s->data, keep * sizeof s->data[0]);
        s->data[0] = i == 0 ? first : 0;
        s->n = keep + 1;
    }
    if (s->n > max) s->n = max;
    return p;
}

/* The minute arithmetic with a fake clock: jobs of one minute make no
 * point; the first job of a later minute pushes the previous minute's
 * jobs and a zero for every empty minute between; a gap longer than max
 * pushes max points; a clock behind prevTS and max 0 change nothing. */
void case_metrics_minute_buckets_fake_clock(conf_ctx *c) {
    (void)c;
    const int64_t t = (int64_t)29000000 * MIN_MS; /* a minute boundary, 2025 */
    const unsigned max = 5;
    sim s = {0};
    CHECK_EQ(sim_count(&s, 3, t + 5000, max), 0); /* first ever: prevTS only */
    CHECK_EQ(s.m.count, 3);
    CHECK_EQ(s.m.prev_ts, t + 5000);
    CHECK_EQ(s.m.prev_count, 0);
    CHECK_EQ(sim_count(&s, 2, t + 59999, max), 0); /* same minute */
    CHECK_EQ(s.m.count, 5);
    CHECK_EQ(s.n, 0);
    /* across the boundary: the 5 of minute t, counted before this job */
    CHECK_EQ(sim_count(&s, 1, t + MIN_MS, max), 1);
    CHECK_EQ(s.n, 1);
    CHECK_EQ(s.data[0], 5);
    CHECK_EQ(s.m.count, 6);
    CHECK_EQ(s.m.prev_count, 5);
    CHECK_EQ(s.m.prev_ts, t + MIN_MS);
    CHECK_EQ(sim_count(&s, 3, t + MIN_MS + 30000, max), 0);
    /* three minutes later: minute t+1 had 4, then two empty minutes */
    CHECK_EQ(sim_count(&s, 1, t + 4 * MIN_MS + 10, max), 3);
    CHECK_EQ(s.m.count, 10);
    CHECK_EQ(s.m.prev_count, 9);
    CHECK_EQ(s.n, 4);
    uint64_t want[] = {0, 0, 4, 5};
    for (size_t i = 0; i < 4; i++) CHECK_EQ(s.data[i], want[i]);
    /* a clock behind prevTS (another writer's): counted, no point */
    CHECK_EQ(sim_count(&s, 2, t + 2 * MIN_MS, max), 0);
    CHECK_EQ(s.m.count, 12);
    CHECK_EQ(s.m.prev_ts, t + 4 * MIN_MS + 10);
    /* a gap of 100 minutes > max: max points, the oldest the 3 counted
     * since prevTS, the list cut to max */
    CHECK_EQ(sim_count(&s, 1, t + 104 * MIN_MS, max), max);
    CHECK_EQ(s.n, max);
    CHECK_EQ(s.data[max - 1], 3);
    for (size_t i = 0; i + 1 < max; i++) CHECK_EQ(s.data[i], 0);
    CHECK_EQ(s.m.prev_count, 12);
    CHECK_EQ(s.m.count, 13);
    /* off (max 0) and n 0: nothing */
    ln_job_metrics before = s.m;
    uint64_t first = 7;
    CHECK_EQ(ln_job_metrics_record(&s.m, 4, t + 200 * MIN_MS, 0, &first), 0);
    CHECK_EQ(first, 0);
    CHECK_EQ(ln_job_metrics_record(&s.m, 0, t + 200 * MIN_MS, max, NULL), 0);
    CHECK(memcmp(&before, &s.m, sizeof before) == 0);
    /* n jobs at once count as n jobs in a row at the same time */
    ln_job_metrics a = {.count = 20, .prev_ts = t, .prev_count = 12};
    ln_job_metrics b = a;
    uint64_t fa, fb;
    CHECK_EQ(ln_job_metrics_record(&a, 3, t + MIN_MS, max, &fa), 1);
    CHECK_EQ(ln_job_metrics_record(&b, 1, t + MIN_MS, max, &fb), 1);
    CHECK_EQ(ln_job_metrics_record(&b, 1, t + MIN_MS, max, NULL), 0);
    CHECK_EQ(ln_job_metrics_record(&b, 1, t + MIN_MS, max, NULL), 0);
    CHECK_EQ(fa, fb);
    CHECK_EQ(fa, 8);
    CHECK(a.count == b.count && a.prev_ts == b.prev_ts && a.prev_count == b.prev_count);
}

/* ln_job_metrics_record's edges: n 0 or max_points 0 change nothing; a
 * clock behind prev_ts counts without a point. */
void case_spec_metrics_record_edges(conf_ctx *c) {
    (void)c;
    ln_job_metrics m;
    memset(&m, 0, sizeof m);
    uint64_t first = 77;
    CHECK_EQ(ln_job_metrics_record(&m, 0, 120000, 10, &first), 0);
    CHECK_EQ(m.count, 0);
    CHECK_EQ(m.prev_ts, 0);
    CHECK_EQ(ln_job_metrics_record(&m, 3, 120000, 0, &first), 0);
    CHECK_EQ(m.count, 0);
    CHECK_EQ(ln_job_metrics_record(&m, 2, 120000, 10, &first), 0);
    CHECK_EQ(m.count, 2);
    CHECK_EQ(m.prev_ts, 120000);
    CHECK_EQ(m.prev_count, 0);
    CHECK_EQ(ln_job_metrics_record(&m, 1, 60000, 10, &first), 0); /* behind */
    CHECK_EQ(m.count, 3);
    CHECK_EQ(m.prev_ts, 120000);
    CHECK_EQ(ln_job_metrics_record(&m, 1, 120000 + 5 * 60000, 3, &first), 3);
    CHECK_EQ(first, 3);
    CHECK_EQ(m.count, 4);
    CHECK_EQ(m.prev_count, 3);
}

/* Metrics: a range with start after end is no point. */
void case_spec_metrics_empty_range(conf_ctx *c) {
    ln_job_metrics m;
    CHECK_EQ(ln_jobs_metrics(c->jobs, c->queue, LN_JOB_COMPLETED, 5, 2, &m), 0);
    CHECK_EQ(m.ndata, 0);
    CHECK(m.data == NULL);
    CHECK_EQ(m.count, 0);
    ln_job_metrics_clear(&m);
    ln_job_metrics_clear(NULL);
}
