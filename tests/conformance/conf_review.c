/* conf_review.c - where wave 1's features meet (backoff jitter and custom
 * types, children of an existing parent, ln_job_wait_children,
 * ln_jobs_remove_tree): a parent whose completion its pending children
 * refuse is retried by its own backoff, as BullMQ's worker retries the
 * error of moveToFinished; a job cannot become its descendant's child; a
 * bulk add with parents goes job after job; a jitter survives a comma
 * locale; a completed parent takes a new child's result. */
#include "conf.h"

#include <lanes/jobs_flows.h>

#include <locale.h>
#include <stdlib.h>
#include <time.h>

/* The store's clock (ms since the epoch): the machine's. */
static int64_t wall_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A custom backoff strategy's calls. */
typedef struct strat {
    int calls;
    char reason[128];
} strat;

static int64_t strategy(int attempts_made, const char *type, const char *reason, const ln_job *job,
                        void *user) {
    (void)attempts_made;
    (void)type;
    (void)job;
    strat *s = user;
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
    strat s = {0};
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    wo.backoff_strategy = strategy;
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

/* A job added as a child of its own descendant (an existing custom id
 * given a parent below it) would close a cycle whose jobs wait for each
 * other for good: refused (LN_EINVAL, nothing stored) on both stores, also
 * through a parent an earlier job of the same bulk add gives. */
void case_dynflow_cycle_refused(conf_ctx *c) {
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.job_id = "P";
    conf_add(c, c->queue, "x", NULL, &o, NULL);
    o.parent_queue = c->queue;
    o.parent_id = "P";
    o.job_id = "C";
    conf_add(c, c->queue, "x", NULL, &o, NULL);
    o.parent_id = "C";
    o.job_id = "G";
    conf_add(c, c->queue, "x", NULL, &o, NULL);
    o.job_id = "P"; /* P under its grandchild G */
    o.parent_id = "G";
    SAYS(c->jobs, LN_EINVAL, ln_jobs_add(c->jobs, c->queue, "x", NULL, &o, NULL, 0));
    CONF_CHECK_HAS(ln_jobs_errmsg(c->jobs), "ancestor");
    ln_job_children rel;
    SAYS(c->jobs, 0, ln_jobs_children(c->jobs, c->queue, "P", &rel));
    CHECK(rel.parent_id == NULL);
    ln_job_children_clear(&rel);
    /* in one bulk: N gets parent G, then P is given N as its parent */
    ln_job_opts a = o, b = o;
    a.job_id = "N";
    b.parent_id = "N";
    ln_job_spec sp[2] = {{"n", NULL, &a}, {"p", NULL, &b}};
    SAYS(c->jobs, LN_EINVAL, ln_jobs_add_bulk(c->jobs, c->queue, sp, 2, NULL, 0));
    CHECK_EQ(conf_state(c, c->queue, "N"), LN_ENOENT);
    size_t n = 0; /* the tree is as it was */
    SAYS(c->jobs, 0, ln_jobs_remove_tree(c->jobs, c->queue, "P", &n));
    CHECK_EQ(n, 3);
    CHECK_EQ(conf_total(c, c->queue), 0);
}

/* The pending children of job id of queue: their ids, each followed by a
 * space, in out. */
static void pending_kids(conf_ctx *c, const char *id, char *out, size_t size) {
    ln_job_children rel;
    SAYS(c->jobs, 0, ln_jobs_children(c->jobs, c->queue, id, &rel));
    out[0] = '\0';
    for (size_t i = 0; i < rel.n; i++) {
        size_t len = strlen(out);
        if (rel.children[i].status == LN_CHILD_PENDING)
            snprintf(out + len, size - len, "%s ", rel.children[i].id);
    }
    ln_job_children_clear(&rel);
}

/* A bulk add goes job after job, as BullMQ's: a parent an earlier job of
 * it creates exists for a later one, and a custom id an earlier job made
 * the child of one parent is the child of another parent for a later one
 * (LN_EEXIST, nothing stored), on both stores. */
void case_dynflow_bulk_parents(conf_ctx *c) {
    ln_job_opts p, k;
    ln_job_opts_init(&p);
    p.job_id = "bp";
    ln_job_opts_init(&k);
    k.parent_queue = c->queue;
    k.parent_id = "bp";
    k.job_id = "bk";
    ln_job_spec sp[2] = {{"p", NULL, &p}, {"k", NULL, &k}};
    SAYS(c->jobs, 0, ln_jobs_add_bulk(c->jobs, c->queue, sp, 2, NULL, 0));
    char got[64];
    pending_kids(c, "bp", got, sizeof got);
    CONF_CHECK_STR(got, "bk ");
    conf_add_id(c, c->queue, "p2", 0, 0, 0);
    ln_job_opts a = k, b = k;
    a.job_id = b.job_id = "dup";
    b.parent_id = "p2";
    ln_job_spec two[2] = {{"a", NULL, &a}, {"b", NULL, &b}};
    SAYS(c->jobs, LN_EEXIST, ln_jobs_add_bulk(c->jobs, c->queue, two, 2, NULL, 0));
    CONF_CHECK_HAS(ln_jobs_errmsg(c->jobs), "job 1: ");
    CHECK_EQ(conf_state(c, c->queue, "dup"), LN_ENOENT);
    pending_kids(c, "bp", got, sizeof got);
    CONF_CHECK_STR(got, "bk ");
    pending_kids(c, "p2", got, sizeof got);
    CONF_CHECK_STR(got, "");
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

/* A parent that completed before a child is added to it stays completed
 * (as BullMQ's: only a parent in waiting-children is moved) and records
 * the child's result when it completes; the tree goes whole. */
void case_dynflow_completed_parent(conf_ctx *c) {
    conf_add_id(c, c->queue, "p", 0, 0, 0);
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    conf_run(c, c->queue, conf_handler_by_name, NULL, &wo);
    CHECK_EQ(conf_state(c, c->queue, "p"), LN_JOB_COMPLETED);
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.job_id = "k";
    o.parent_queue = c->queue;
    o.parent_id = "p";
    conf_add(c, c->queue, "k", "2", &o, NULL);
    char got[64];
    pending_kids(c, "p", got, sizeof got);
    CONF_CHECK_STR(got, "k ");
    conf_run(c, c->queue, conf_handler_by_name, NULL, &wo);
    CHECK_EQ(conf_state(c, c->queue, "p"), LN_JOB_COMPLETED);
    ln_job_children rel;
    SAYS(c->jobs, 0, ln_jobs_children(c->jobs, c->queue, "p", &rel));
    CHECK_EQ(rel.n, 1);
    CHECK_EQ(rel.children[0].status, LN_CHILD_PROCESSED);
    CONF_CHECK_STR(rel.children[0].value, "{\"ok\":2}");
    ln_job_children_clear(&rel);
    size_t n = 0;
    SAYS(c->jobs, 0, ln_jobs_remove_tree(c->jobs, c->queue, "p", &n));
    CHECK_EQ(n, 2);
    CHECK_EQ(conf_total(c, c->queue), 0);
}
