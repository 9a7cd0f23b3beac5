/* conf_sched.c - job schedulers (jobs.h "Job schedulers"): upsert, get,
 * list and remove; an every schedule makes its next iteration when the
 * current one is taken, and only the current one advances it; a limit and
 * an end date stop it; an upsert replaces the pending iteration; bad
 * patterns, zones and options are LN_EINVAL (LN_ERANGE stores nothing); ids
 * may hold ':' (BullMQ 6.7's may, even in the shape of a legacy repeat
 * key). Intervals are 50-100 ms with a few iterations, so each case stays
 * well under a second. */
#include "conf.h"

#include <stdlib.h>

/* Upsert (CHECK 0); the iteration's id into job_id (may be NULL). */
static void sched(conf_ctx *c, const char *id, const ln_job_schedule *s, const char *data,
                  char *job_id) {
    char buf[LN_JOB_ID_MAX];
    int rc = ln_jobs_schedule(c->jobs, c->queue, id, s, "tick", data, NULL, job_id ? job_id : buf,
                              LN_JOB_ID_MAX);
    if (rc != 0) fprintf(stderr, "schedule: %s\n", ln_jobs_errmsg(c->jobs));
    CHECK_EQ(rc, 0);
}

static ln_job_schedule every(int64_t ms) {
    ln_job_schedule s;
    ln_job_schedule_init(&s);
    s.every_ms = ms;
    return s;
}

static ln_job_schedule cron(const char *pattern, const char *tz) {
    ln_job_schedule s;
    ln_job_schedule_init(&s);
    s.pattern = pattern;
    s.tz = tz;
    return s;
}

/* "repeat:<sid>:<ms>": the ms, or -1. */
static long long iter_ms(const char *job_id, const char *sid) {
    char prefix[128];
    snprintf(prefix, sizeof prefix, "repeat:%s:", sid);
    if (strncmp(job_id, prefix, strlen(prefix)) != 0) return -1;
    return atoll(job_id + strlen(prefix));
}

void case_sched_upsert_get_list_remove(conf_ctx *c) {
    char a[LN_JOB_ID_MAX], b[LN_JOB_ID_MAX];
    ln_job_schedule e = every(60000);
    sched(c, "s-every", &e, "{\"k\":1}", a);
    CHECK(iter_ms(a, "s-every") > 0);
    CHECK_EQ(conf_state(c, c->queue, a), LN_JOB_WAITING); /* every: the first runs now */
    ln_job_schedule p = cron("0 0 1 1 *", "Europe/Berlin");
    sched(c, "s-cron", &p, NULL, b);
    CHECK_EQ(conf_state(c, c->queue, b), LN_JOB_DELAYED);
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, b, &info), 0);
    CONF_CHECK_STR(info.name, "tick");
    CONF_CHECK_STR(info.data, "{}");
    CHECK_EQ(info.run_at_ms, iter_ms(b, "s-cron"));
    ln_job_info_clear(&info);

    ln_job_scheduler s;
    CHECK_EQ(ln_jobs_scheduler_get(c->jobs, c->queue, "s-every", &s), 0);
    CONF_CHECK_STR(s.id, "s-every");
    CONF_CHECK_STR(s.name, "tick");
    CONF_CHECK_STR(s.data, "{\"k\":1}");
    CHECK_EQ(s.every_ms, 60000);
    CHECK(s.pattern == NULL);
    CHECK_EQ(s.iterations, 1);
    CHECK_EQ(s.next_ms, iter_ms(a, "s-every"));
    ln_job_scheduler_clear(&s);
    CHECK_EQ(ln_jobs_scheduler_get(c->jobs, c->queue, "s-cron", &s), 0);
    CONF_CHECK_STR(s.pattern, "0 0 1 1 *");
    CONF_CHECK_STR(s.tz, "Europe/Berlin");
    CHECK_EQ(s.every_ms, 0);
    ln_job_scheduler_clear(&s);

    ln_job_scheduler *list;
    size_t n;
    CHECK_EQ(ln_jobs_scheduler_list(c->jobs, c->queue, 0, 10, &list, &n), 0);
    CHECK_EQ(n, 2);
    CONF_CHECK_STR(list[0].id, "s-every"); /* earliest next run first */
    CONF_CHECK_STR(list[1].id, "s-cron");
    ln_job_scheduler_free_array(list, n);
    CHECK_EQ(ln_jobs_scheduler_list(c->jobs, c->queue, 1, 10, &list, &n), 0);
    CHECK_EQ(n, 1);
    CONF_CHECK_STR(list[0].id, "s-cron");
    ln_job_scheduler_free_array(list, n);
    CHECK_EQ(ln_jobs_scheduler_list(c->jobs, conf_queue(c, "none"), 0, 10, &list, &n), 0);
    CHECK_EQ(n, 0);
    CHECK(list == NULL);

    /* Remove: the delayed iteration goes too; a waiting one stays. */
    CHECK_EQ(ln_jobs_unschedule(c->jobs, c->queue, "s-cron"), 0);
    CHECK_EQ(ln_jobs_scheduler_get(c->jobs, c->queue, "s-cron", &s), LN_ENOENT);
    CHECK_EQ(conf_state(c, c->queue, b), LN_ENOENT);
    CHECK_EQ(ln_jobs_unschedule(c->jobs, c->queue, "s-cron"), LN_ENOENT);
    CHECK_EQ(ln_jobs_unschedule(c->jobs, c->queue, "s-every"), 0);
    CHECK_EQ(conf_state(c, c->queue, a), LN_JOB_WAITING);
    CHECK_EQ(ln_jobs_scheduler_list(c->jobs, c->queue, 0, 10, &list, &n), 0);
    CHECK_EQ(n, 0);
}

typedef struct seen {
    atomic_int n;
    char ids[8][LN_JOB_ID_MAX];
    int64_t ran_ms[8]; /* wall clock when it ran */
} seen;

static int64_t wall_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int record(ln_job *job, void *ctx) {
    seen *s = ctx;
    int i = atomic_fetch_add(&s->n, 1);
    if (i < 8) {
        snprintf(s->ids[i], sizeof s->ids[i], "%s", ln_job_id(job));
        s->ran_ms[i] = wall_ms();
    }
    return 0;
}

/* every 80 ms, limit 3: three iterations, each made when the one before
 * was taken, 80 ms apart; then none (the worker finds the queue empty). */
void case_sched_every_advances_on_take(conf_ctx *c) {
    ln_job_schedule e = every(80);
    e.limit = 3;
    char first[LN_JOB_ID_MAX];
    sched(c, "ev", &e, "{\"x\":[1,2]}", first);
    static seen s;
    ln_worker_opts o;
    conf_worker_opts(&o);
    ln_worker_stats st = conf_run(c, c->queue, record, &s, &o);
    CHECK_EQ(atomic_load(&s.n), 3);
    CHECK_EQ(st.completed, 3);
    CONF_CHECK_STR(s.ids[0], first);
    long long m0 = iter_ms(s.ids[0], "ev"), m1 = iter_ms(s.ids[1], "ev"),
              m2 = iter_ms(s.ids[2], "ev");
    CHECK(m0 > 0);
    CHECK(m1 >= m0 + 80);
    CHECK(m2 >= m1 + 80);
    for (int i = 1; i < 3; i++) /* none ran before its time (the store's clock: 5 ms slack) */
        CHECK(s.ran_ms[i] + 5 >= iter_ms(s.ids[i], "ev"));
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, s.ids[2], &info), 0);
    CONF_CHECK_STR(info.data, "{\"x\":[1,2]}"); /* the template's data, byte for byte */
    CHECK_EQ(info.state, LN_JOB_COMPLETED);
    ln_job_info_clear(&info);
    ln_job_scheduler sc;
    CHECK_EQ(ln_jobs_scheduler_get(c->jobs, c->queue, "ev", &sc), 0);
    CHECK_EQ(sc.iterations, 3);
    CHECK_EQ(sc.limit, 3);
    CHECK_EQ(sc.next_ms, m2);
    ln_job_scheduler_clear(&sc);
    CHECK_EQ(conf_total(c, c->queue), 3);
}

/* An end date 130 ms ahead: iterations stop once it passed. */
void case_sched_end_date_stops(conf_ctx *c) {
    ln_job_schedule e = every(50);
    e.end_ms = wall_ms() + 130;
    sched(c, "end", &e, NULL, NULL);
    static seen s;
    ln_worker_opts o;
    conf_worker_opts(&o);
    conf_run(c, c->queue, record, &s, &o);
    int n = atomic_load(&s.n);
    CHECK(n >= 2);
    CHECK(n <= 5);
    ln_job_counts k;
    CHECK_EQ(ln_jobs_counts(c->jobs, c->queue, &k), 0);
    CHECK_EQ(k.delayed + k.waiting, 0);
}

/* Only the scheduler's current iteration advances it: a job that merely
 * has an iteration-shaped id does not. */
void case_sched_only_current_advances(conf_ctx *c) {
    ln_job_schedule p = cron("0 0 1 1 *", NULL);
    char cur[LN_JOB_ID_MAX];
    sched(c, "cur", &p, NULL, cur);
    conf_add_id(c, c->queue, "repeat:cur:1", 0, 0, 0);
    static seen s;
    ln_worker_opts o;
    conf_worker_opts(&o);
    o.exit_when_empty = 0;
    o.max_jobs = 1;
    conf_run(c, c->queue, record, &s, &o);
    CONF_CHECK_STR(s.ids[0], "repeat:cur:1");
    ln_job_scheduler sc;
    CHECK_EQ(ln_jobs_scheduler_get(c->jobs, c->queue, "cur", &sc), 0);
    CHECK_EQ(sc.iterations, 1);
    CHECK_EQ(sc.next_ms, iter_ms(cur, "cur"));
    ln_job_scheduler_clear(&sc);
    CHECK_EQ(conf_total(c, c->queue), 2);
}

/* An upsert replaces the pending iteration (new data, the same time). */
void case_sched_upsert_replaces_pending(conf_ctx *c) {
    char a[LN_JOB_ID_MAX], b[LN_JOB_ID_MAX];
    ln_job_schedule p = cron("0 0 1 1 *", "America/New_York");
    sched(c, "r", &p, "{\"v\":1}", a);
    sched(c, "r", &p, "{\"v\":2}", b);
    CONF_CHECK_STR(b, a);
    CHECK_EQ(conf_total(c, c->queue), 1);
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, b, &info), 0);
    CONF_CHECK_STR(info.data, "{\"v\":2}");
    ln_job_info_clear(&info);
    ln_job_schedule e = every(3600000);
    sched(c, "e", &e, "{\"v\":1}", a);
    sched(c, "e", &e, "{\"v\":2}", b);
    CONF_CHECK_STR(b, a); /* every unchanged: the same slot */
    CHECK_EQ(conf_total(c, c->queue), 2);
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, b, &info), 0);
    CONF_CHECK_STR(info.data, "{\"v\":2}");
    ln_job_info_clear(&info);
    ln_job_scheduler sc;
    CHECK_EQ(ln_jobs_scheduler_get(c->jobs, c->queue, "e", &sc), 0);
    CHECK_EQ(sc.iterations, 1);
    CONF_CHECK_STR(sc.data, "{\"v\":2}");
    ln_job_scheduler_clear(&sc);
}

static void bad(conf_ctx *c, const char *id, const ln_job_schedule *s, const ln_job_opts *o,
                const char *msg) {
    char job_id[LN_JOB_ID_MAX];
    CHECK_EQ(ln_jobs_schedule(c->jobs, c->queue, id, s, "n", NULL, o, job_id, sizeof job_id),
             LN_EINVAL);
    CONF_CHECK_HAS(ln_jobs_errmsg(c->jobs), msg);
}

void case_sched_bad_input(conf_ctx *c) {
    ln_job_schedule s = cron("61 * * * *", NULL);
    bad(c, "b", &s, NULL, "minute");
    s = cron("* * * *", "Mars/Olympus_Mons");
    bad(c, "b", &s, NULL, "time zone");
    s = cron("0 * * * *", NULL);
    s.every_ms = 100;
    bad(c, "b", &s, NULL, "exactly one");
    ln_job_schedule_init(&s);
    bad(c, "b", &s, NULL, "exactly one");
    s = every(100);
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.delay_ms = 5;
    bad(c, "b", &s, &o, "delay_ms");
    s = cron("0 * * * *", NULL);
    s.immediately = 1;
    s.start_ms = 1;
    bad(c, "b", &s, NULL, "immediately");
    ln_job_scheduler *list;
    size_t n;
    CHECK_EQ(ln_jobs_scheduler_list(c->jobs, c->queue, 0, 0, &list, &n), LN_EINVAL);
    CHECK_EQ(ln_jobs_unschedule(c->jobs, c->queue, "nope"), LN_ENOENT);
    CHECK_EQ(conf_total(c, c->queue), 0);
}

/* A limit already used up, or an end date past: nothing is made. */
void case_sched_nothing_to_make(conf_ctx *c) {
    char id[LN_JOB_ID_MAX] = "x";
    ln_job_schedule s = every(100);
    s.end_ms = 1000;
    CHECK_EQ(ln_jobs_schedule(c->jobs, c->queue, "old", &s, "n", NULL, NULL, id, sizeof id), 0);
    CONF_CHECK_STR(id, "");
    ln_job_scheduler sc;
    CHECK_EQ(ln_jobs_scheduler_get(c->jobs, c->queue, "old", &sc), LN_ENOENT);
    CHECK_EQ(conf_total(c, c->queue), 0);
}

/* A pattern with immediately: the first iteration runs now; taking it
 * makes the second at the pattern's next time (a whole second here). */
void case_sched_pattern_advances_on_take(conf_ctx *c) {
    ln_job_schedule p = cron("* * * * * *", "Europe/Berlin");
    p.immediately = 1;
    char first[LN_JOB_ID_MAX];
    sched(c, "pt", &p, NULL, first);
    CHECK_EQ(conf_state(c, c->queue, first), LN_JOB_WAITING);
    static seen s;
    ln_worker_opts o;
    conf_worker_opts(&o);
    o.exit_when_empty = 0;
    o.max_jobs = 1;
    conf_run(c, c->queue, record, &s, &o);
    CONF_CHECK_STR(s.ids[0], first);
    ln_job_scheduler sc;
    CHECK_EQ(ln_jobs_scheduler_get(c->jobs, c->queue, "pt", &sc), 0);
    CHECK_EQ(sc.iterations, 2);
    CHECK(sc.next_ms > iter_ms(first, "pt"));
    CHECK_EQ(sc.next_ms % 1000, 0);
    CHECK(sc.next_ms <= iter_ms(first, "pt") + 2000);
    char next[LN_JOB_ID_MAX];
    snprintf(next, sizeof next, "repeat:pt:%lld", (long long)sc.next_ms);
    ln_job_scheduler_clear(&sc);
    int st = conf_state(c, c->queue, next);
    CHECK(st == LN_JOB_DELAYED || st == LN_JOB_WAITING);
}

/* every with a start date: the first iteration waits for it. */
void case_sched_every_start_date(conf_ctx *c) {
    ln_job_schedule e = every(1000);
    e.start_ms = wall_ms() + 60000;
    char id[LN_JOB_ID_MAX];
    sched(c, "st", &e, NULL, id);
    CHECK_EQ(iter_ms(id, "st"), e.start_ms);
    CHECK_EQ(conf_state(c, c->queue, id), LN_JOB_DELAYED);
}

/* A pattern's next iteration id held by another job: LN_EEXIST, and
 * nothing stored. */
void case_sched_id_taken(conf_ctx *c) {
    ln_job_schedule p = cron("0 0 1 1 *", NULL);
    char id[LN_JOB_ID_MAX];
    sched(c, "tk", &p, NULL, id);
    CHECK_EQ(ln_jobs_unschedule(c->jobs, c->queue, "tk"), 0);
    conf_add_id(c, c->queue, id, 0, 0, 0); /* a job of that id, not the scheduler's */
    char got[LN_JOB_ID_MAX];
    CHECK_EQ(ln_jobs_schedule(c->jobs, c->queue, "tk", &p, "n", NULL, NULL, got, sizeof got),
             LN_EEXIST);
    ln_job_scheduler sc;
    CHECK_EQ(ln_jobs_scheduler_get(c->jobs, c->queue, "tk", &sc), LN_ENOENT);
    CHECK_EQ(conf_total(c, c->queue), 1);
}

/* A scheduler id with ':' (five parts: the shape of a legacy repeat key,
 * which BullMQ 6.7 tells apart by the scheduler's hash): its current
 * iteration is still known as such (remove refuses it, drain keeps it),
 * and each take makes the next. */
void case_sched_colon_id(conf_ctx *c) {
    const char *sid = "team:7::UTC:5000";
    ln_job_schedule p = cron("0 0 1 1 *", NULL);
    char cur[LN_JOB_ID_MAX];
    sched(c, sid, &p, NULL, cur);
    CHECK(iter_ms(cur, sid) > 0);
    CHECK_EQ(ln_jobs_remove(c->jobs, c->queue, cur), LN_EBUSY);
    CHECK_EQ(ln_jobs_drain(c->jobs, c->queue, NULL), 0);
    CHECK_EQ(conf_state(c, c->queue, cur), LN_JOB_DELAYED);
    CHECK_EQ(ln_jobs_unschedule(c->jobs, c->queue, sid), 0);
    CHECK_EQ(conf_total(c, c->queue), 0);

    ln_job_schedule e = every(60);
    e.limit = 2;
    sched(c, sid, &e, NULL, cur);
    static seen s;
    ln_worker_opts o;
    conf_worker_opts(&o);
    conf_run(c, c->queue, record, &s, &o);
    CHECK_EQ(atomic_load(&s.n), 2);
    CONF_CHECK_STR(s.ids[0], cur);
    CHECK(iter_ms(s.ids[1], sid) >= iter_ms(cur, sid) + 60);
    ln_job_scheduler sc;
    CHECK_EQ(ln_jobs_scheduler_get(c->jobs, c->queue, sid, &sc), 0);
    CONF_CHECK_STR(sc.id, sid);
    CHECK_EQ(sc.iterations, 2);
    ln_job_scheduler_clear(&sc);
}

/* ln_jobs_schedule's LN_ERANGE stores nothing, as an add's. */
void case_spec_schedule_erange_stores_nothing(conf_ctx *c) {
    ln_job_schedule s;
    ln_job_schedule_init(&s);
    s.every_ms = 60000;
    char small[4];
    SAYS(c->jobs, LN_ERANGE,
         ln_jobs_schedule(c->jobs, c->queue, "s1", &s, "n", NULL, NULL, small, sizeof small));
    ln_job_scheduler got;
    int rc = ln_jobs_scheduler_get(c->jobs, c->queue, "s1", &got);
    if (rc == 0) ln_job_scheduler_clear(&got);
    CHECK_EQ(rc, LN_ENOENT);
    CHECK_EQ(conf_total(c, c->queue), 0);
}
