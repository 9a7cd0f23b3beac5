/* conf_dynflow.c - children added to an existing parent (ln_job_opts
 * parent_queue / parent_id) and a running job that waits for them
 * (ln_job_wait_children, or for one given child: ln_job_wait_child):
 * BullMQ's "process in steps" pattern, a missing parent, a parent already
 * in waiting-children, a wait with nothing pending, children in another
 * queue, a custom id that exists, a job refused as its own descendant's
 * child, a bulk add with parents (job after job) and a completed parent
 * that takes a new child's result. */
#include "conf.h"
#include "conf_flowtree.h"

#include <stdlib.h>
#include <time.h>

/* The stepper's state (one worker thread at a time runs it). */
typedef struct stepper {
    conf_ctx *c;
    const char *kids_queue; /* where the children go */
    int runs;               /* parent runs */
    int wait_rc;            /* ln_job_wait_children's answer on the first run */
    int state_after;        /* the parent's state right after it */
    char values[256];       /* the second run's "<id>=<value> " */
} stepper;

static void kid_opts(ln_job_opts *o, ln_job *parent, const char *id) {
    ln_job_opts_init(o);
    o->job_id = id;
    o->parent_queue = ln_job_queue(parent);
    o->parent_id = ln_job_id(parent);
}

/* "step" jobs: with no children yet, add two and wait for them; once
 * released, complete with the number of results read. Other names go by
 * conf_handler_by_name. */
static int step_handler(ln_job *job, void *ctx) {
    stepper *s = ctx;
    if (strcmp(ln_job_name(job), "step") != 0) return conf_handler_by_name(job, NULL);
    s->runs++;
    ln_job_children rel;
    if (ln_job_children_read(job, &rel) != 0) return ln_job_fail(job, "children unreadable");
    size_t n = rel.n;
    s->values[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(s->values);
        if (rel.children[i].status == LN_CHILD_PROCESSED)
            snprintf(s->values + len, sizeof s->values - len, "%s=%s ", rel.children[i].id,
                     rel.children[i].value);
    }
    ln_job_children_clear(&rel);
    if (n > 0) {
        char out[24];
        snprintf(out, sizeof out, "%zu", n);
        return ln_job_set_result(job, out);
    }
    const char *kq = s->kids_queue != NULL ? s->kids_queue : ln_job_queue(job);
    ln_job_opts o;
    kid_opts(&o, job, "k1");
    if (ln_jobs_add(s->c->jobs, kq, "k", "1", &o, NULL, 0) != 0) return ln_job_fail(job, "add k1");
    kid_opts(&o, job, "k2");
    if (ln_jobs_add(s->c->jobs, kq, "k", "[2]", &o, NULL, 0) != 0)
        return ln_job_fail(job, "add k2");
    s->wait_rc = ln_job_wait_children(job);
    s->state_after = conf_state(s->c, ln_job_queue(job), ln_job_id(job));
    if (s->wait_rc == 1 && ln_job_wait_children(job) != LN_ESTALE) s->wait_rc = -1000;
    if (s->wait_rc == 1) return ln_job_fail(job, "ignored: the job waits for its children");
    return ln_job_fail(job, "wait_children did not move the job");
}

static void check_stepped(conf_ctx *c, const stepper *s, const char *queue, const char *id,
                          int started) {
    CHECK_EQ(s->wait_rc, 1);
    CHECK_EQ(s->state_after, LN_JOB_WAITING_CHILDREN);
    CHECK_EQ(s->runs, 2);
    CONF_CHECK_STR(s->values, "k1={\"ok\":1} k2={\"ok\":[2]} ");
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(c->jobs, queue, id, &info), 0);
    CHECK_EQ(info.state, LN_JOB_COMPLETED);
    CONF_CHECK_STR(info.result, "2");
    CHECK_EQ(info.attempts_made, 0); /* the wait used no attempt */
    CHECK_EQ(info.attempts_started, started);
    ln_job_info_clear(&info);
}

/* The whole pattern on one C worker: run 1 adds two children and waits
 * (the handler's failure after it is ignored), the children run, run 2
 * reads their results and completes. */
void case_dynflow_steps(conf_ctx *c) {
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.job_id = "p";
    conf_add(c, c->queue, "step", NULL, &o, NULL);
    stepper s = {.c = c};
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    ln_worker_stats st = conf_run(c, c->queue, step_handler, &s, &wo);
    check_stepped(c, &s, c->queue, "p", 2);
    CHECK_EQ(st.completed, 3); /* k1, k2, then the parent's second run */
    CHECK_EQ(st.failed, 0);
    CHECK_EQ(st.retried, 0);
    CHECK_EQ(st.stale, 0); /* nothing recorded for the run that waited */
    CHECK_EQ(st.waited, 1);
    CHECK_EQ(conf_total(c, c->queue), 3);
    conf_check_counts(c, c->queue);
}

/* Children in another queue: the parent's worker leaves it waiting for
 * them, their own worker runs them and releases it, and the parent's
 * worker runs it again. */
void case_dynflow_children_other_queue(conf_ctx *c) {
    const char *kq = conf_queue(c, "kids");
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.job_id = "p";
    conf_add(c, c->queue, "step", NULL, &o, NULL);
    stepper s = {.c = c, .kids_queue = kq};
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    conf_run(c, c->queue, step_handler, &s, &wo);
    CHECK_EQ(s.runs, 1);
    CHECK_EQ(conf_state(c, c->queue, "p"), LN_JOB_WAITING_CHILDREN);
    ln_job_children rel;
    CHECK_EQ(ln_jobs_children(c->jobs, kq, "k1", &rel), 0);
    CONF_CHECK_STR(rel.parent_queue, c->queue);
    CONF_CHECK_STR(rel.parent_id, "p");
    ln_job_children_clear(&rel);
    conf_run(c, kq, conf_handler_by_name, NULL, &wo);
    CHECK_EQ(conf_state(c, c->queue, "p"), LN_JOB_WAITING);
    conf_run(c, c->queue, step_handler, &s, &wo);
    check_stepped(c, &s, c->queue, "p", 2);
    conf_check_counts(c, c->queue);
    conf_check_counts(c, kq);
}

/* No job of that id: nothing is stored (in a bulk add, not the jobs
 * before it either); malformed parent options are refused. */
void case_dynflow_missing_parent(conf_ctx *c) {
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.parent_queue = c->queue;
    o.parent_id = "nope";
    SAYS(c->jobs, LN_ENOENT, ln_jobs_add(c->jobs, c->queue, "k", NULL, &o, NULL, 0));
    CONF_CHECK_HAS(ln_jobs_errmsg(c->jobs), "missing key for parent job");
    ln_job_spec specs[2] = {{"a", NULL, NULL}, {"b", NULL, &o}};
    SAYS(c->jobs, LN_ENOENT, ln_jobs_add_bulk(c->jobs, c->queue, specs, 2, NULL, 0));
    CHECK_EQ(conf_total(c, c->queue), 0);
    o.parent_queue = conf_queue(c, "other");
    o.parent_id = "7";
    SAYS(c->jobs, LN_ENOENT, ln_jobs_add(c->jobs, c->queue, "k", NULL, &o, NULL, 0));
    CHECK_EQ(conf_total(c, c->queue), 0);
    o.parent_id = NULL; /* half a parent */
    SAYS(c->jobs, LN_EINVAL, ln_jobs_add(c->jobs, c->queue, "k", NULL, &o, NULL, 0));
    ln_job_opts_init(&o);
    o.fail_parent_on_failure = 1; /* an option without a parent */
    SAYS(c->jobs, LN_EINVAL, ln_jobs_add(c->jobs, c->queue, "k", NULL, &o, NULL, 0));
    conf_add_id(c, c->queue, "p", 0, 0, 0);
    ln_job_opts_init(&o);
    o.parent_queue = c->queue;
    o.parent_id = "p";
    o.dedup_id = "d"; /* BullMQ refuses both together */
    SAYS(c->jobs, LN_EINVAL, ln_jobs_add(c->jobs, c->queue, "k", NULL, &o, NULL, 0));
    o.dedup_id = NULL;
    o.parent_queue = "bad:queue";
    SAYS(c->jobs, LN_EINVAL, ln_jobs_add(c->jobs, c->queue, "k", NULL, &o, NULL, 0));
    o.parent_queue = c->queue;
    ln_flow_node kid = {.name = "k", .opts = &o}; /* in a flow only the root may have one */
    ln_flow_node root = {.queue = c->queue, .name = "r", .children = &kid, .nchildren = 1};
    SAYS(c->jobs, LN_EINVAL, ln_jobs_add_flow(c->jobs, &root, NULL, 0, 0));
    CHECK_EQ(conf_total(c, c->queue), 1);
}

/* A flow parent already in waiting-children gets one more child: it is
 * released only once both are done, and reads both results. */
void case_dynflow_add_to_waiting_parent(conf_ctx *c) {
    const char *kq = conf_queue(c, "kids");
    ln_job_opts po, ko;
    ln_job_opts_init(&po);
    po.job_id = "p";
    ln_job_opts_init(&ko);
    ko.job_id = "k1";
    ln_flow_node kid = {.queue = kq, .name = "k", .data_json = "1", .opts = &ko};
    ln_flow_node root = {.queue = c->queue, .name = "step", .opts = &po};
    root.children = &kid;
    root.nchildren = 1;
    CHECK_EQ(ln_jobs_add_flow(c->jobs, &root, NULL, 0, 0), 0);
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.job_id = "k2";
    o.parent_queue = c->queue;
    o.parent_id = "p";
    conf_add(c, kq, "k", "[2]", &o, NULL);
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    wo.max_jobs = 1;
    conf_run(c, kq, conf_handler_by_name, NULL, &wo);
    CHECK_EQ(conf_state(c, c->queue, "p"), LN_JOB_WAITING_CHILDREN);
    wo.max_jobs = 0;
    conf_run(c, kq, conf_handler_by_name, NULL, &wo);
    CHECK_EQ(conf_state(c, c->queue, "p"), LN_JOB_WAITING);
    stepper s = {.c = c};
    s.wait_rc = 1;
    s.state_after = LN_JOB_WAITING_CHILDREN;
    s.runs = 1; /* the flow's own wait stands for run 1 */
    conf_run(c, c->queue, step_handler, &s, &wo);
    check_stepped(c, &s, c->queue, "p", 1);
}

/* A wait with no pending child returns 0: the job stays active and its
 * handler completes it; also once its children are all done. */
static int wait_then_complete(ln_job *job, void *ctx) {
    int *rc = ctx;
    *rc = ln_job_wait_children(job);
    return ln_job_set_result(job, "\"done\"");
}

void case_dynflow_wait_none_pending(conf_ctx *c) {
    conf_add_id(c, c->queue, "p", 0, 0, 0);
    int rc = -1;
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    ln_worker_stats st = conf_run(c, c->queue, wait_then_complete, &rc, &wo);
    CHECK_EQ(rc, 0);
    CHECK_EQ(st.completed, 1);
    CHECK_EQ(conf_state(c, c->queue, "p"), LN_JOB_COMPLETED);
    const char *kq = conf_queue(c, "kids");
    conf_add_id(c, c->queue, "q", 0, 0, 0);
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.parent_queue = c->queue;
    o.parent_id = "q";
    conf_add(c, kq, "k", "1", &o, NULL);
    conf_run(c, kq, conf_handler_by_name, NULL, &wo); /* q's child is done */
    rc = -1;
    st = conf_run(c, c->queue, wait_then_complete, &rc, &wo);
    CHECK_EQ(rc, 0);
    CHECK_EQ(st.completed, 1);
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, "q", &info), 0);
    CHECK_EQ(info.state, LN_JOB_COMPLETED);
    CONF_CHECK_STR(info.result, "\"done\"");
    ln_job_info_clear(&info);
    ln_job_children rel;
    CHECK_EQ(ln_jobs_children(c->jobs, c->queue, "q", &rel), 0);
    CHECK_EQ(rel.n, 1);
    CHECK_EQ(rel.children[0].status, LN_CHILD_PROCESSED);
    CONF_CHECK_STR(rel.children[0].value, "{\"ok\":1}");
    ln_job_children_clear(&rel);
}

/* Job "r" (of ctx's queue and parent) tries to make itself a child while
 * it runs: refused (LN_EBUSY). */
typedef struct self_attach {
    conf_ctx *c;
    const char *pq;
    int rc;
} self_attach;

static int attach_self(ln_job *job, void *ctx) {
    self_attach *a = ctx;
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.job_id = ln_job_id(job);
    o.parent_queue = a->pq;
    o.parent_id = "p";
    a->rc = ln_jobs_add(a->c->jobs, ln_job_queue(job), "k", NULL, &o, NULL, 0);
    return 0;
}

/* A custom id that exists, added with a parent: a completed job gives its
 * result at once, a waiting one becomes a pending dependency; one that is
 * a child of another parent, or running, is refused. */
void case_dynflow_existing_child(conf_ctx *c) {
    const char *kq = conf_queue(c, "kids");
    conf_add_id(c, kq, "k", 0, 0, 0);
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    conf_run(c, kq, conf_handler_by_name, NULL, &wo); /* k completed */
    conf_add_id(c, c->queue, "p", 0, 0, 0);
    conf_add_id(c, c->queue, "p2", 0, 0, 0);
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.job_id = "k";
    o.parent_queue = c->queue;
    o.parent_id = "p";
    conf_add(c, kq, "k", NULL, &o, NULL);
    ln_job_children rel;
    CHECK_EQ(ln_jobs_children(c->jobs, c->queue, "p", &rel), 0);
    CHECK_EQ(rel.n, 1);
    CHECK_EQ(rel.children[0].status, LN_CHILD_PROCESSED);
    CONF_CHECK_STR(rel.children[0].id, "k");
    ln_job_children_clear(&rel);
    o.parent_id = "p2";
    SAYS(c->jobs, LN_EEXIST, ln_jobs_add(c->jobs, kq, "k", NULL, &o, NULL, 0));
    CHECK_EQ(ln_jobs_children(c->jobs, c->queue, "p2", &rel), 0);
    CHECK_EQ(rel.n, 0);
    ln_job_children_clear(&rel);
    /* a waiting job attached as a child is a pending dependency */
    conf_add_id(c, kq, "w", 0, 0, 0);
    o.job_id = "w";
    conf_add(c, kq, "k", NULL, &o, NULL);
    CHECK_EQ(ln_jobs_children(c->jobs, c->queue, "p2", &rel), 0);
    CHECK_EQ(rel.n, 1);
    CHECK_EQ(rel.children[0].status, LN_CHILD_PENDING);
    ln_job_children_clear(&rel);
    conf_run(c, kq, conf_handler_by_name, NULL, &wo);
    CHECK_EQ(ln_jobs_children(c->jobs, c->queue, "p2", &rel), 0);
    CHECK_EQ(rel.n, 1);
    CHECK_EQ(rel.children[0].status, LN_CHILD_PROCESSED);
    ln_job_children_clear(&rel);
    o.job_id = "p"; /* its own parent */
    o.parent_id = "p";
    SAYS(c->jobs, LN_EINVAL, ln_jobs_add(c->jobs, c->queue, "k", NULL, &o, NULL, 0));
    CHECK_EQ(ln_jobs_children(c->jobs, c->queue, "p", &rel), 0);
    CHECK_EQ(rel.n, 1); /* k only */
    ln_job_children_clear(&rel);
    const char *rq = conf_queue(c, "run");
    conf_add_id(c, rq, "r", 0, 0, 0);
    self_attach at = {c, c->queue, 0};
    conf_run(c, rq, attach_self, &at, &wo);
    CHECK_EQ(at.rc, LN_EBUSY);
    CHECK_EQ(ln_jobs_children(c->jobs, c->queue, "p", &rel), 0);
    CHECK_EQ(rel.n, 1); /* k only */
    ln_job_children_clear(&rel);
}

/* A child that failed with fail_parent_on_failure while its parent ran:
 * the parent's wait refuses (LN_EFAILED, BullMQ's -9). The handler adds
 * the child and runs it to its failure on a worker of its own. */
typedef struct failer {
    conf_ctx *c;
    const char *kq;
    int rc;
} failer;

static int fail_child_then_wait(ln_job *job, void *ctx) {
    failer *f = ctx;
    ln_job_opts o;
    kid_opts(&o, job, "bad1");
    o.fail_parent_on_failure = 1;
    if (ln_jobs_add(f->c->jobs, f->kq, "bad", NULL, &o, NULL, 0) != 0)
        return ln_job_fail(job, "add");
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    conf_run(f->c, f->kq, conf_handler_by_name, NULL, &wo);
    f->rc = ln_job_wait_children(job);
    return ln_job_fail(job, "done");
}

void case_dynflow_wait_failed_child(conf_ctx *c) {
    conf_add_id(c, c->queue, "p", 0, 0, 0);
    failer f = {c, conf_queue(c, "kids"), 0};
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    conf_run(c, c->queue, fail_child_then_wait, &f, &wo);
    CHECK_EQ(f.rc, LN_EFAILED);
    CHECK_EQ(conf_state(c, c->queue, "p"), LN_JOB_FAILED);
}

/* Many parents at once on a worker of 4 threads with a short lease, so
 * that renewals are often in flight when a handler moves its job: every
 * parent ends completed, once its children are done, and nothing fails.
 * (A child may finish before its parent's wait: the wait then says 0 and
 * the handler completes at once.) */
static int busy_step(ln_job *job, void *ctx) {
    conf_ctx *c = ctx;
    if (strcmp(ln_job_name(job), "step") != 0) return conf_handler_by_name(job, NULL);
    ln_job_children rel;
    if (ln_job_children_read(job, &rel) != 0) return ln_job_fail(job, "children unreadable");
    size_t n = rel.n;
    ln_job_children_clear(&rel);
    if (n > 0) return ln_job_set_result(job, "\"stepped\"");
    struct timespec ts = {0, 120 * 1000000L}; /* past a renewal (every 100 ms) */
    nanosleep(&ts, NULL);
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.parent_queue = ln_job_queue(job);
    o.parent_id = ln_job_id(job);
    for (int k = 0; k < 2; k++)
        if (ln_jobs_add(c->jobs, ln_job_queue(job), "k", "1", &o, NULL, 0) != 0)
            return ln_job_fail(job, "add");
    int rc = ln_job_wait_children(job);
    if (rc == 1) return 0;
    return rc == 0 ? ln_job_set_result(job, "\"stepped\"") : ln_job_fail(job, "wait failed");
}

void case_dynflow_busy_steps(conf_ctx *c) {
    char ids[8][LN_JOB_ID_MAX];
    for (int i = 0; i < 8; i++) conf_add(c, c->queue, "step", NULL, NULL, ids[i]);
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    wo.concurrency = 4;
    wo.lease_ms = 200;
    ln_worker_stats st = conf_run(c, c->queue, busy_step, c, &wo);
    CHECK_EQ(st.failed, 0);
    CHECK_EQ(st.retried, 0);
    CHECK_EQ(st.completed, 24);
    CHECK(st.waited >= 1);
    for (int i = 0; i < 8; i++) {
        ln_job_info info;
        CHECK_EQ(ln_jobs_get(c->jobs, c->queue, ids[i], &info), 0);
        CHECK_EQ(info.state, LN_JOB_COMPLETED);
        CONF_CHECK_STR(info.result, "\"stepped\"");
        ln_job_info_clear(&info);
    }
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

/* The handler of the wait_child case: what each call answered. */
typedef struct one_child {
    conf_ctx *c;
    const char *kq, *dq;
    int rc_not_kid, rc_done, rc_pending, rc_again, state_done, state_after;
} one_child;

static int one_child_handler(ln_job *job, void *ctx) {
    one_child *s = ctx;
    const char *me_q = ln_job_queue(job), *me = ln_job_id(job);
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.job_id = "k1";
    o.parent_queue = me_q;
    o.parent_id = me;
    if (ln_jobs_add(s->c->jobs, s->kq, "k", "1", &o, NULL, 0) != 0) return ln_job_fail(job, "k1");
    o.job_id = "done1"; /* completed already: attached with its result */
    if (ln_jobs_add(s->c->jobs, s->dq, "k", "2", &o, NULL, 0) != 0)
        return ln_job_fail(job, "done1");
    s->rc_not_kid = ln_job_wait_child(job, s->kq, "nope");
    s->rc_done = ln_job_wait_child(job, s->dq, "done1");
    s->state_done = conf_state(s->c, me_q, me);
    s->rc_pending = ln_job_wait_child(job, s->kq, "k1");
    s->state_after = conf_state(s->c, me_q, me);
    s->rc_again = ln_job_wait_child(job, s->kq, "k1");
    return ln_job_fail(job, "ignored: the job waits");
}

/* Only the child named counts: a done one or a stranger leaves the job
 * active although another child is pending; a pending one moves it. */
void case_flowmore_wait_child(conf_ctx *c) {
    one_child s = {.c = c, .kq = conf_queue(c, "kids"), .dq = conf_queue(c, "done")};
    conf_add_kid(c, s.dq, "done1", "k", NULL, NULL);
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    conf_run(c, s.dq, conf_handler_by_name, NULL, &wo);
    conf_add_kid(c, c->queue, "p", "parent", NULL, NULL);
    ln_worker_stats st = conf_run(c, c->queue, one_child_handler, &s, &wo);
    CHECK_EQ(s.rc_not_kid, 0);
    CHECK_EQ(s.rc_done, 0);
    CHECK_EQ(s.state_done, LN_JOB_ACTIVE);
    CHECK_EQ(s.rc_pending, 1);
    CHECK_EQ(s.state_after, LN_JOB_WAITING_CHILDREN);
    CHECK_EQ(s.rc_again, LN_ESTALE);
    CHECK_EQ(st.waited, 1);
    CHECK_EQ(st.failed, 0);
    conf_run(c, s.kq, conf_handler_by_name, NULL, &wo);
    CHECK_EQ(conf_state(c, c->queue, "p"), LN_JOB_WAITING);
    conf_check_counts(c, c->queue);
}
