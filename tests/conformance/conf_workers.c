/* conf_workers.c - the workers connected to a queue (jobs.h "Workers
 * connected"), on every store: none at first, a running ln_worker_run
 * listed while it runs (on its own queue only) and gone once it returned. */
#include "conf.h"

#include <unistd.h>

/* The workers of queue now (CHECKed to succeed); free with
 * ln_jobs_workers_free. */
static ln_worker_info *workers_of(ln_jobs *jobs, const char *queue, size_t *n) {
    ln_worker_info *w = NULL;
    int rc = ln_jobs_workers(jobs, queue, &w, n);
    if (rc != 0) fprintf(stderr, "workers: %s\n", ln_jobs_errmsg(jobs));
    CHECK_EQ(rc, 0);
    CHECK((*n == 0) == (w == NULL));
    return w;
}

/* Poll until queue has want workers; CHECKs it gets there within 2 s. */
static void wait_workers(ln_jobs *jobs, const char *queue, size_t want) {
    int64_t until = conf_deadline(2000);
    size_t n = 0;
    for (;;) {
        ln_worker_info *w = workers_of(jobs, queue, &n); /* sets n before the free reads it */
        ln_jobs_workers_free(w, n);
        if (n == want || conf_now_ms() > until) break;
        ln_test_sleep_ms(5);
    }
    CHECK_EQ(n, want);
}

/* A worker that runs until stopped. */
static conf_bg *start_worker(ln_jobs *jobs, const char *queue) {
    ln_worker_opts o;
    conf_worker_opts(&o);
    o.exit_when_empty = 0;
    return conf_bg_start(jobs, queue, conf_handler_by_name, NULL, &o);
}

static void stop_worker(conf_bg *b) {
    ln_worker_stop(conf_bg_worker(b));
    CHECK_EQ(conf_bg_join(b, NULL), 0);
}

void case_workers_none(conf_ctx *c) {
    size_t n = 7;
    ln_worker_info *w = workers_of(c->jobs, c->queue, &n);
    CHECK_EQ(n, 0);
    CHECK(w == NULL);
    ln_jobs_workers_free(NULL, 0); /* a no-op */
}

void case_workers_bad_input(conf_ctx *c) {
    ln_worker_info *w = NULL;
    size_t n = 0;
    CHECK_EQ(ln_jobs_workers(c->jobs, c->queue, NULL, &n), LN_EINVAL);
    CHECK_EQ(ln_jobs_workers(c->jobs, c->queue, &w, NULL), LN_EINVAL);
    CHECK_EQ(ln_jobs_workers(c->jobs, "a:b", &w, &n), LN_EINVAL);
    CONF_CHECK_HAS(ln_jobs_errmsg(c->jobs), "queue");
    CHECK_EQ(ln_jobs_workers(c->jobs, NULL, &w, &n), LN_EINVAL);
    CHECK_EQ(ln_jobs_workers(NULL, c->queue, &w, &n), LN_EINVAL);
}

/* A running worker is listed with what the store knows of it, on its own
 * queue only (also not on a queue whose name extends its queue's), and
 * is gone once ln_worker_run returned. */
void case_workers_running_listed(conf_ctx *c) {
    const char *other = conf_queue(c, "x");
    conf_bg *b = start_worker(c->jobs, c->queue);
    wait_workers(c->jobs, c->queue, 1);
    size_t n = 0;
    ln_worker_info *w = workers_of(c->jobs, c->queue, &n);
    CHECK_EQ(n, 1);
    CHECK_EQ(w[0].kind, LN_WORKER_LANES);
    CHECK_EQ(w[0].pid, (int64_t)getpid());
    char name[32];
    snprintf(name, sizeof name, "lanes-%ld", (long)getpid());
    CONF_CHECK_STR(w[0].name, name);
    CHECK(w[0].id != NULL && w[0].id[0] != '\0');
    CHECK(w[0].started_ms > 0 && w[0].seen_ms >= w[0].started_ms);
    CHECK(w[0].seen_ms <= w[0].started_ms + 60000); /* it started just now */
    if (strcmp(c->store, "sqlite") == 0) CHECK(w[0].host != NULL && w[0].host[0] != '\0');
    if (strcmp(c->store, "redis") == 0) CONF_CHECK_HAS(w[0].addr, ":");
    ln_jobs_workers_free(w, n);
    ln_jobs_workers_free(workers_of(c->jobs, other, &n), n);
    CHECK_EQ(n, 0);
    stop_worker(b);
    wait_workers(c->jobs, c->queue, 0);
}

/* Two runs on one queue (one handle each) are two entries; a run on
 * another queue of the same handle is listed there. */
void case_workers_two_runs(conf_ctx *c) {
    const char *other = conf_queue(c, "b");
    ln_jobs *second = conf_open(c, NULL);
    conf_bg *a = start_worker(c->jobs, c->queue);
    conf_bg *b = start_worker(second, c->queue);
    conf_bg *d = start_worker(c->jobs, other);
    wait_workers(c->jobs, c->queue, 2);
    wait_workers(second, other, 1);
    size_t n = 0;
    ln_worker_info *w = workers_of(c->jobs, c->queue, &n);
    CHECK_EQ(n, 2);
    CHECK(strcmp(w[0].id, w[1].id) != 0);
    ln_jobs_workers_free(w, n);
    stop_worker(b);
    wait_workers(c->jobs, c->queue, 1);
    wait_workers(c->jobs, other, 1);
    stop_worker(a);
    stop_worker(d);
    wait_workers(c->jobs, c->queue, 0);
    wait_workers(c->jobs, other, 0);
    ln_jobs_close(second);
}
