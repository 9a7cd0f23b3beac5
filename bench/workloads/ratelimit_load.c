/* ratelimit_load.c - the rate-limited run of `lanes bench jobs` and
 * `lanes bench bullmq`; see ratelimit_load.h. */
#include "workloads/ratelimit_load.h"

#include <lanes.h>
#include <lanes/jobs.h>

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define BATCH 1000

static int fail(bench_ratelimit_result *out, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(bench_ratelimit_result *out, int err, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out->errmsg, sizeof out->errmsg, fmt, ap);
    va_end(ap);
    return err;
}

static int noop(ln_job *job, void *ctx) {
    (void)job;
    (void)ctx;
    return 0;
}

static int empty_queue(ln_jobs *jobs, const char *queue) {
    int err = ln_jobs_drain(jobs, queue, NULL);
    if (err == 0) err = ln_jobs_clean(jobs, queue, LN_JOB_COMPLETED, -1, 0, NULL);
    if (err == 0) err = ln_jobs_rate_limit(jobs, queue, 0); /* a window left by a run before */
    return err;
}

static int add_all(ln_jobs *jobs, const char *queue, size_t n) {
    ln_job_spec specs[BATCH];
    for (size_t i = 0; i < BATCH; i++) specs[i] = (ln_job_spec){"noop", "{}", NULL};
    int err = 0;
    for (size_t done = 0; done < n && err == 0; done += BATCH)
        err = ln_jobs_add_bulk(jobs, queue, specs, n - done < BATCH ? n - done : BATCH, NULL, 0);
    return err;
}

/* The timed worker run; *ns its length, *completed what it finished. */
static int run_worker(ln_jobs *jobs, const char *queue, const ln_worker_opts *o, uint64_t *ns,
                      uint64_t *completed) {
    ln_worker *w;
    int err = ln_worker_create(&w, jobs, queue, noop, NULL, o);
    if (err != 0) return err;
    uint64_t t0 = ln_now_ns();
    err = ln_worker_run(w);
    *ns = ln_now_ns() - t0;
    ln_worker_stats st;
    ln_worker_get_stats(w, &st);
    *completed = st.completed;
    ln_worker_destroy(w);
    return err;
}

int bench_ratelimit_run(const char *url, const char *queue, size_t jobs, unsigned concurrency,
                        unsigned max, unsigned duration_ms, bench_ratelimit_result *out) {
    memset(out, 0, sizeof *out);
    if (max == 0 || duration_ms == 0 || jobs < 2 * (size_t)max)
        return fail(out, LN_EINVAL, "need max, duration and jobs >= 2 * max");
    ln_jobs *h;
    char msg[200] = "";
    int err = ln_jobs_open_ex(&h, url, NULL, msg, sizeof msg);
    if (err != 0) return fail(out, err, "open %s: %s", url, msg);
    if ((err = empty_queue(h, queue)) != 0 || (err = add_all(h, queue, jobs)) != 0) {
        fail(out, err, "prepare: %s", ln_jobs_errmsg(h));
        ln_jobs_close(h);
        return err;
    }
    ln_worker_opts o;
    ln_worker_opts_init(&o);
    o.concurrency = concurrency;
    o.exit_when_empty = 1;
    o.poll_ms = 10;
    o.rate_max = max;
    o.rate_duration_ms = duration_ms;
    uint64_t ns = 0, completed = 0;
    err = run_worker(h, queue, &o, &ns, &completed);
    size_t windows = (jobs + max - 1) / max;
    double min_s = (double)(windows - 1) * duration_ms / 1000.0, s = (double)ns / 1e9;
    if (err != 0)
        fail(out, err, "worker: %s", ln_jobs_errmsg(h));
    else if (completed != jobs)
        err = fail(out, LN_EFAILED, "the worker completed %llu of %zu jobs",
                   (unsigned long long)completed, jobs);
    else if (s < min_s)
        err = fail(out, LN_EFAILED, "%zu jobs in %.3f s: the limit of %u per %u ms allows %.3f s",
                   jobs, s, max, duration_ms, min_s);
    out->jobs_per_sec = (double)jobs / s;
    out->bound_per_sec = (double)jobs / min_s;
    int err2 = empty_queue(h, queue);
    if (err == 0 && err2 != 0) err = fail(out, err2, "clean: %s", ln_jobs_errmsg(h));
    ln_jobs_close(h);
    return err;
}
