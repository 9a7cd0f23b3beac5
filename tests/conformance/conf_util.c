/* conf_util.c - helpers the conformance cases share (see conf.h). */
#include "conf.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

void conf_check_str(const char *file, int line, const char *expr, const char *a, const char *b) {
    if (a == b || (a != NULL && b != NULL && strcmp(a, b) == 0)) return;
    fprintf(stderr, "%s:%d: %s is \"%s\", expected \"%s\"\n", file, line, expr, a ? a : "(null)",
            b ? b : "(null)");
    ln_test_fail(file, line, expr);
}

void conf_check_has(const char *file, int line, const char *expr, const char *s, const char *sub) {
    if (s != NULL && strstr(s, sub) != NULL) return;
    fprintf(stderr, "%s:%d: %s is \"%s\", which lacks \"%s\"\n", file, line, expr, s ? s : "(null)",
            sub);
    ln_test_fail(file, line, expr);
}

const char *conf_queue(conf_ctx *c, const char *suffix) {
    CHECK(c->nqueues_ < 8);
    char *q = c->queues_[c->nqueues_++];
    snprintf(q, LN_JOB_QUEUE_MAX, "%s-%s", c->queue, suffix);
    return q;
}

const char *conf_url_with(const conf_ctx *c, const char *param, char *buf, size_t size) {
    snprintf(buf, size, "%s%c%s", c->url, strchr(c->url, '?') ? '&' : '?', param);
    return buf;
}

ln_jobs *conf_open(const conf_ctx *c, const ln_jobs_opts *opts) {
    ln_jobs *jobs = NULL;
    char msg[512];
    int rc = ln_jobs_open_ex(&jobs, c->url, opts, msg, sizeof msg);
    if (rc != 0) fprintf(stderr, "open %s: %s\n", c->url, msg);
    CHECK_EQ(rc, 0);
    return jobs;
}

ln_jobs *conf_open_all_events(conf_ctx *c) {
    if (strcmp(c->store, "sqlite") != 0) return conf_open(c, NULL);
    char url[1200];
    ln_jobs *j = NULL;
    CHECK_EQ(ln_jobs_open(&j, conf_url_with(c, "events=all", url, sizeof url)), 0);
    return j;
}

void conf_next_named(ln_jobs_events *ev, const char *name, ln_job_event *e) {
    for (;;) {
        int rc = ln_jobs_events_next(ev, 3000, e);
        if (rc != 0)
            fprintf(stderr, "waiting for %s: %d %s\n", name, rc, ln_jobs_events_errmsg(ev));
        CHECK_EQ(rc, 0);
        if (strcmp(e->name, name) == 0) return;
        ln_job_event_clear(e);
    }
}

size_t conf_count_events(conf_ctx *c, const char *queue, char *last) {
    ln_jobs_events *ev = NULL;
    CHECK_EQ(ln_jobs_events_open(c->jobs, queue, "0", &ev), 0);
    size_t n = 0;
    ln_job_event e;
    if (last != NULL) last[0] = '\0';
    while (ln_jobs_events_next(ev, 0, &e) == 0) {
        n++;
        if (last != NULL) snprintf(last, 48, "%s", e.id);
        ln_job_event_clear(&e);
    }
    ln_jobs_events_close(ev);
    return n;
}

void conf_schedule(conf_ctx *c, const char *id, int64_t every_ms, const char *pattern,
                   char *job_id) {
    ln_job_schedule s;
    ln_job_schedule_init(&s);
    s.every_ms = every_ms;
    s.pattern = pattern;
    int rc = ln_jobs_schedule(c->jobs, c->queue, id, &s, "tick", NULL, NULL, job_id, LN_JOB_ID_MAX);
    if (rc != 0) fprintf(stderr, "schedule: %s\n", ln_jobs_errmsg(c->jobs));
    CHECK_EQ(rc, 0);
}

void conf_add(conf_ctx *c, const char *queue, const char *name, const char *data,
              const ln_job_opts *o, char *id) {
    char buf[LN_JOB_ID_MAX];
    int rc = ln_jobs_add(c->jobs, queue, name, data, o, id ? id : buf, LN_JOB_ID_MAX);
    if (rc != 0) fprintf(stderr, "add: %s\n", ln_jobs_errmsg(c->jobs));
    CHECK_EQ(rc, 0);
}

void conf_add_id(conf_ctx *c, const char *queue, const char *id, int priority, int lifo,
                 int64_t delay_ms) {
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.job_id = id;
    o.priority = priority;
    o.lifo = lifo;
    o.delay_ms = delay_ms;
    conf_add(c, queue, id, "{}", &o, NULL);
}

int conf_state(conf_ctx *c, const char *queue, const char *id) {
    ln_job_info info;
    int rc = ln_jobs_get(c->jobs, queue, id, &info);
    if (rc != 0) return rc;
    int state = info.state;
    ln_job_info_clear(&info);
    return state;
}

static void list_field(conf_ctx *c, const char *queue, int state, size_t offset, size_t limit,
                       int names, char *out, size_t size) {
    ln_job_info *infos = NULL;
    size_t n = 0;
    int rc = ln_jobs_list(c->jobs, queue, state, offset, limit, &infos, &n);
    if (rc != 0) fprintf(stderr, "list: %s\n", ln_jobs_errmsg(c->jobs));
    CHECK_EQ(rc, 0);
    CHECK(n <= limit);
    CHECK((n == 0) == (infos == NULL));
    out[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(out);
        snprintf(out + len, size - len, "%s ", names ? infos[i].name : infos[i].id);
        CHECK_EQ(infos[i].state, state);
    }
    ln_job_info_free_array(infos, n);
}

void conf_list_ids(conf_ctx *c, const char *queue, int state, size_t offset, size_t limit,
                   char *out, size_t size) {
    list_field(c, queue, state, offset, limit, 0, out, size);
}

void conf_list_names(conf_ctx *c, const char *queue, int state, char *out, size_t size) {
    list_field(c, queue, state, 0, 10000, 1, out, size);
}

static uint64_t count_of(const ln_job_counts *k, int state) {
    switch (state) {
    case LN_JOB_WAITING:
        return k->waiting;
    case LN_JOB_DELAYED:
        return k->delayed;
    case LN_JOB_PRIORITIZED:
        return k->prioritized;
    case LN_JOB_ACTIVE:
        return k->active;
    case LN_JOB_COMPLETED:
        return k->completed;
    case LN_JOB_FAILED:
        return k->failed;
    case LN_JOB_WAITING_CHILDREN:
        return k->waiting_children;
    default:
        return k->paused;
    }
}

uint64_t conf_total(conf_ctx *c, const char *queue) {
    ln_job_counts k;
    CHECK_EQ(ln_jobs_counts(c->jobs, queue, &k), 0);
    uint64_t sum = 0;
    for (int s = 0; s < LN_JOB_NSTATES; s++) sum += count_of(&k, s);
    return sum;
}

void conf_check_counts(conf_ctx *c, const char *queue) {
    ln_job_counts k;
    CHECK_EQ(ln_jobs_counts(c->jobs, queue, &k), 0);
    for (int s = 0; s < LN_JOB_NSTATES; s++) {
        ln_job_info *infos = NULL;
        size_t n = 0;
        CHECK_EQ(ln_jobs_list(c->jobs, queue, s, 0, 10000, &infos, &n), 0);
        ln_job_info_free_array(infos, n);
        if (n != count_of(&k, s))
            fprintf(stderr, "state %s: counts %llu, list %zu\n", ln_job_state_name(s),
                    (unsigned long long)count_of(&k, s), n);
        CHECK_EQ(n, count_of(&k, s));
    }
}

void conf_worker_opts(ln_worker_opts *o) {
    ln_worker_opts_init(o);
    o->exit_when_empty = 1;
    o->poll_ms = 10;
}

ln_worker_stats conf_run(conf_ctx *c, const char *queue, ln_job_handler fn, void *ctx,
                         const ln_worker_opts *o) {
    ln_worker *w = NULL;
    int rc = ln_worker_create(&w, c->jobs, queue, fn, ctx, o);
    if (rc != 0) fprintf(stderr, "worker: %s\n", ln_jobs_errmsg(c->jobs));
    CHECK_EQ(rc, 0);
    rc = ln_worker_run(w);
    if (rc != 0) fprintf(stderr, "run: %s\n", ln_jobs_errmsg(c->jobs));
    CHECK_EQ(rc, 0);
    ln_worker_stats st;
    ln_worker_get_stats(w, &st);
    ln_worker_destroy(w);
    return st;
}

struct conf_bg {
    ln_worker *w;
    pthread_t t;
    int rc;
    atomic_int done;
};

static void *bg_main(void *arg) {
    conf_bg *b = arg;
    b->rc = ln_worker_run(b->w);
    atomic_store(&b->done, 1);
    return NULL;
}

int conf_bg_done(conf_bg *b) {
    return atomic_load(&b->done);
}

int conf_handler_by_name(ln_job *job, void *ctx) {
    if (ctx != NULL) atomic_fetch_add((atomic_int *)ctx, 1);
    const char *name = ln_job_name(job);
    if (strcmp(name, "bad") == 0) return ln_job_fail(job, "nope");
    if (strcmp(name, "code") == 0) return LN_EIO;
    if (strcmp(name, "plain") == 0) return 0;
    char buf[512];
    snprintf(buf, sizeof buf, "{\"ok\":%s}", ln_job_data(job));
    return ln_job_set_result(job, buf);
}

conf_bg *conf_bg_start(ln_jobs *jobs, const char *queue, ln_job_handler fn, void *ctx,
                       const ln_worker_opts *o) {
    conf_bg *b = calloc(1, sizeof *b);
    CHECK(b != NULL);
    int rc = ln_worker_create(&b->w, jobs, queue, fn, ctx, o);
    if (rc != 0) fprintf(stderr, "worker: %s\n", ln_jobs_errmsg(jobs));
    CHECK_EQ(rc, 0);
    CHECK_EQ(pthread_create(&b->t, NULL, bg_main, b), 0);
    return b;
}

ln_worker *conf_bg_worker(conf_bg *b) {
    return b->w;
}

int conf_bg_join(conf_bg *b, ln_worker_stats *st) {
    CHECK_EQ(pthread_join(b->t, NULL), 0);
    if (st != NULL) ln_worker_get_stats(b->w, st);
    int rc = b->rc;
    ln_worker_destroy(b->w);
    free(b);
    return rc;
}

int conf_hold_handler(ln_job *job, void *ctx) {
    conf_hold *h = ctx;
    atomic_fetch_add(&h->entered, 1);
    while (!atomic_load(&h->release)) {
        if (ln_job_canceled(job)) {
            atomic_fetch_add(&h->canceled, 1);
            break;
        }
        ln_test_sleep_ms(1);
    }
    return ln_job_set_result(job, "{\"held\":1}");
}

void conf_hold_wait(conf_hold *h, int n) {
    int64_t end = conf_deadline(5000);
    while (atomic_load(&h->entered) < n && conf_now_ms() < end) ln_test_sleep_ms(1);
    CHECK(atomic_load(&h->entered) >= n);
}

int64_t conf_now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

int64_t conf_deadline(unsigned ms) {
    return conf_now_ms() + (int64_t)ms * (ln_test_sanitized() ? 8 : 1);
}

void conf_wait_state(conf_ctx *c, const char *queue, const char *id, int state,
                     unsigned timeout_ms) {
    int64_t end = conf_deadline(timeout_ms);
    int now;
    while ((now = conf_state(c, queue, id)) != state && conf_now_ms() < end) ln_test_sleep_ms(5);
    if (now != state)
        fprintf(stderr, "job %s: state %s, waited for %s\n", id, ln_job_state_name(now),
                ln_job_state_name(state));
    CHECK_EQ(now, state);
}

ln_flow_node conf_flow_node(const char *queue, const char *name, const char *id, ln_job_opts *o) {
    ln_job_opts_init(o);
    o->job_id = id;
    ln_flow_node n = {0};
    n.queue = queue;
    n.name = name;
    n.opts = o;
    return n;
}

ln_job_info conf_info(conf_ctx *c, const char *id) {
    ln_job_info i;
    SAYS(c->jobs, 0, ln_jobs_get(c->jobs, c->queue, id, &i));
    return i;
}

int conf_record_run(ln_job *job, void *ctx) {
    conf_run_order *r = ctx;
    pthread_mutex_lock(&r->mu);
    size_t l = strlen(r->ids);
    snprintf(r->ids + l, sizeof r->ids - l, "%s ", ln_job_id(job));
    pthread_mutex_unlock(&r->mu);
    return 0;
}
