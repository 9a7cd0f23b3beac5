/* worker.c - ln_worker: options, create/stop/destroy, the handler side
 * of a job (its pool task, and what a handler may call: ln_job_*). The
 * dispatcher that takes, records, renews and waits is worker_run.c and
 * the files worker_int.h lists; the design is docs/internals/worker-loop.md.
 *
 * Threads: ln_job_* are called by the job's handler on a pool thread;
 * ln_job_progress / ln_job_log go through the handle's mutex. A finished
 * handler publishes its job with one release CAS (see
 * ln__worker_run_job); ln_worker_stop may be called from any thread or a
 * signal handler (an atomic store and a write(2)).
 */
#include "worker_int.h"

#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#define MAX_CONCURRENCY 4096

/* ------------------------------------------------------------- handler side */

static void wake(ln_worker *w) {
    uint64_t one = 1;
    ssize_t r = write(w->efd, &one, sizeof one);
    (void)r; /* EAGAIN only when the counter is saturated: already awake */
}

void *ln__worker_run_job(void *arg) {
    ln_job *job = arg;
    ln_worker *w = job->w;
    int rc = w->fn(job, w->ctx);
    job->rc = rc;
    /* Push (Treiber stack; only the dispatcher pops, all at once, so there
     * is no ABA). Release: the dispatcher's acquire exchange in collect()
     * then sees rc, result, reason and next_finished. */
    ln_job *top = atomic_load_explicit(&w->finished, memory_order_relaxed);
    do {
        job->next_finished = top;
    } while (!atomic_compare_exchange_weak_explicit(&w->finished, &top, job, memory_order_release,
                                                    memory_order_relaxed));
    /* The job may be freed from here on: do not touch it. The push onto an
     * empty stack wakes the dispatcher: every later push before its next
     * collect() finds the stack non-empty and skips the syscall, and the
     * first push after collect() emptied it writes again. */
    if (top == NULL) wake(w);
    /* The last touch of w: the run may return and w be destroyed after. */
    atomic_fetch_sub_explicit(&w->tasks, 1, memory_order_release);
    return NULL;
}

/* --------------------------------------------------------------- lifecycle */

void ln_worker_opts_init(ln_worker_opts *opts) {
    if (opts == NULL) return;
    memset(opts, 0, sizeof *opts);
    opts->concurrency = 1;
    opts->lane = LN_LANE_IO;
    opts->lease_ms = 30000;
    opts->max_stalled = 1;
    opts->poll_ms = 100;
    opts->grace_ms = 10000;
}

static void free_arrays(ln_worker *w) {
    ln__free(w->slots);
    ln__free(w->unrecorded);
    ln__free(w->refs);
    ln__free(w->renewing);
    ln__free(w->rcs);
    for (int i = 0; i < LN__PIPE_DEPTH; i++) {
        ln__flight *f = &w->fl[i];
        ln__free(f->done);
        ln__free(f->jobs);
        ln__free(f->refs);
        ln__free(f->renewing);
        ln__free(f->rcs);
        ln__free(f->taken);
    }
}

static int check_worker_opts(const ln_worker_opts *o, char *msg, size_t size) {
    if (o->concurrency < 1 || o->concurrency > MAX_CONCURRENCY)
        snprintf(msg, size, "concurrency must be 1..%d", MAX_CONCURRENCY);
    else if (o->lease_ms < 100)
        snprintf(msg, size, "lease_ms must be >= 100");
    else if (o->timeout_ms > INT32_MAX)
        snprintf(msg, size, "timeout_ms must be 0..%d", INT32_MAX);
    else if (o->metrics_max_points > LN_JOB_METRICS_POINTS_MAX)
        snprintf(msg, size, "metrics_max_points must be 0..%d", LN_JOB_METRICS_POINTS_MAX);
    else if (o->poll_ms < 1)
        snprintf(msg, size, "poll_ms must be >= 1");
    else if ((o->rate_max == 0) != (o->rate_duration_ms == 0) || o->rate_max > INT32_MAX ||
             o->rate_duration_ms > INT32_MAX)
        snprintf(msg, size, "rate_max and rate_duration_ms must both be 1..%d (or both 0)",
                 INT32_MAX);
    else if (o->remove_on_complete.mode < LN_KEEP_ALL || o->remove_on_complete.mode > LN_KEEP_AGE ||
             o->remove_on_fail.mode < LN_KEEP_ALL || o->remove_on_fail.mode > LN_KEEP_AGE ||
             o->remove_on_complete.value < 0 || o->remove_on_fail.value < 0)
        snprintf(msg, size,
                 "remove_on_complete / remove_on_fail: mode LN_KEEP_ALL.._AGE, "
                 "value >= 0");
    else if (o->pool != NULL && (o->lane < 0 || o->lane >= ln_pool_lanes(o->pool)))
        snprintf(msg, size, "lane %d does not exist in the pool", o->lane);
    else
        return 0;
    return LN_EINVAL;
}

int ln_worker_create(ln_worker **out, ln_jobs *jobs, const char *queue, ln_job_handler fn,
                     void *ctx, const ln_worker_opts *opts) {
    ln_worker_opts o;
    ln_worker_opts_init(&o);
    if (opts != NULL) o = *opts;
    if (o.batch == 0 || o.batch > o.concurrency) o.batch = o.concurrency;
    int err = ln__jobs_enter(jobs); /* NULL and fork() checks */
    if (err != 0) return err;
    char msg[LN__JOBS_ERRMSG_MAX] = "";
    err = ln__jobs_check_queue(queue, msg, sizeof msg);
    if (err == 0 && (out == NULL || fn == NULL)) {
        snprintf(msg, sizeof msg, "out and fn must not be NULL");
        err = LN_EINVAL;
    }
    if (err == 0) err = check_worker_opts(&o, msg, sizeof msg);
    if (err != 0) ln__jobs_err(jobs, err, "%s", msg);
    if ((err = ln__jobs_leave(jobs, err)) != 0) return err;
    ln_worker *w = ln__calloc(1, sizeof *w);
    if (w == NULL) return LN_ENOMEM;
    w->jobs = jobs;
    snprintf(w->queue, sizeof w->queue, "%s", queue);
    w->fn = fn;
    w->ctx = ctx;
    w->opts = o;
    w->efd = -1;
    w->next_timeout = UINT64_MAX;
    size_t c = o.concurrency;
    w->slots = ln__calloc(c, sizeof *w->slots);
    w->unrecorded = ln__calloc(c, sizeof *w->unrecorded);
    w->refs = ln__calloc(c, sizeof *w->refs);
    w->renewing = ln__calloc(c, sizeof *w->renewing);
    w->rcs = ln__calloc(c, sizeof *w->rcs);
    err = LN_ENOMEM;
    if (!w->slots || !w->unrecorded || !w->refs || !w->renewing || !w->rcs) goto fail;
    for (int i = 0; i < LN__PIPE_DEPTH; i++) {
        ln__flight *f = &w->fl[i];
        f->done = ln__calloc(c, sizeof *f->done);
        f->jobs = ln__calloc(c, sizeof *f->jobs);
        f->refs = ln__calloc(c, sizeof *f->refs);
        f->renewing = ln__calloc(c, sizeof *f->renewing);
        f->rcs = ln__calloc(c, sizeof *f->rcs);
        f->taken = ln__calloc(c, sizeof *f->taken);
        if (!f->done || !f->jobs || !f->refs || !f->renewing || !f->rcs || !f->taken) goto fail;
    }
    if ((w->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0) {
        err = LN_EAGAIN;
        goto fail;
    }
    if (pthread_mutex_init(&w->mu, NULL) != 0) goto fail_fd;
    if (o.pool != NULL) {
        w->pool = o.pool;
    } else {
        ln_pool_opts po;
        ln_pool_opts_init(&po);
        po.nlanes = 1;
        /* One thread to start, grown on demand up to concurrency (a
         * handler that blocks makes the lane grow), and the pool's default
         * spin before an idle thread sleeps: short jobs then run on the few
         * threads already awake instead of waking a sleeper per job, which
         * cost more than the jobs (no-op jobs at concurrency 50 on Redis:
         * about 2x the jobs/s of min = max threads without spinning). */
        po.lanes[0] = (ln_lane_opts){"jobs", 1, o.concurrency, 10000, NULL, 0};
        if ((err = ln_pool_create(&w->pool, &po)) != 0) goto fail_mu;
        w->own_pool = 1;
        w->opts.lane = 0;
    }
    *out = w;
    return 0;
fail_mu:
    pthread_mutex_destroy(&w->mu);
fail_fd:
    close(w->efd);
fail:
    free_arrays(w);
    ln__free(w);
    return err;
}

void ln_worker_stop(ln_worker *w) {
    if (w == NULL) return;
    atomic_store_explicit(&w->stop, 1, memory_order_relaxed);
    wake(w); /* write(2) is async-signal-safe */
}

void ln_worker_get_stats(const ln_worker *w, ln_worker_stats *out) {
    if (w == NULL || out == NULL) return;
    ln_worker *mw = (ln_worker *)w; /* the lock, not the stats, is mutated */
    pthread_mutex_lock(&mw->mu);
    *out = w->stats;
    pthread_mutex_unlock(&mw->mu);
}

void ln_worker_destroy(ln_worker *w) {
    if (w == NULL) return;
    if (w->own_pool) ln_pool_destroy(w->pool);
    pthread_mutex_destroy(&w->mu);
    close(w->efd);
    free_arrays(w);
    ln__free(w);
}

/* ---------------------------------------------------------- inside a job */

const char *ln_job_id(const ln_job *job) {
    return job != NULL ? job->t.ref.id : NULL;
}
const char *ln_job_name(const ln_job *job) {
    return job != NULL ? job->t.name : NULL;
}
const char *ln_job_queue(const ln_job *job) {
    return job != NULL ? job->w->queue : NULL;
}
const char *ln_job_data(const ln_job *job) {
    return job != NULL ? job->t.data : NULL;
}
int ln_job_attempt(const ln_job *job) {
    return job != NULL ? job->t.attempts_started : LN_EINVAL;
}
const char *ln_job_traceparent(const ln_job *job) {
    return job != NULL ? job->t.traceparent : NULL;
}
const char *ln_job_tracestate(const ln_job *job) {
    return job != NULL ? job->t.tracestate : NULL;
}
int ln_job_canceled(const ln_job *job) {
    return job != NULL && atomic_load_explicit(&((ln_job *)job)->canceled, memory_order_relaxed);
}

/* ln_job_set_result refused a result (msg says why): the run fails with
 * that reason if the handler returns 0, instead of completing with none. */
static int result_refused(ln_job *job, int err, const char *msg) {
    static const char fmt[] = "ln_job_set_result refused the result: %s";
    size_t n = strlen(msg) + sizeof fmt;
    ln__free(job->refused_reason);
    if ((job->refused_reason = ln__malloc(n)) != NULL) snprintf(job->refused_reason, n, fmt, msg);
    job->result_refused = 1;
    return err;
}

int ln_job_set_result(ln_job *job, const char *json) {
    if (job == NULL) return LN_EINVAL;
    if (json == NULL) return result_refused(job, LN_EINVAL, "json is NULL");
    char msg[LN__JOBS_ERRMSG_MAX];
    size_t len;
    int err = ln__jobs_check_json(json, job->w->jobs->opts.max_data_size, &len, "result", msg,
                                  sizeof msg);
    if (err != 0) return result_refused(job, err, msg);
    char *copy = ln__malloc(len + 1);
    if (copy == NULL) return result_refused(job, LN_ENOMEM, "out of memory");
    memcpy(copy, json, len + 1);
    ln__free(job->result);
    job->result = copy;
    job->result_refused = 0;
    return 0;
}

int ln_job_fail(ln_job *job, const char *reason) {
    if (job == NULL) return LN_EFAILED;
    char *copy = ln__strdup(reason != NULL ? reason : "failed");
    if (copy != NULL) { /* without memory the reason is ln_strerror's */
        ln__free(job->reason);
        job->reason = copy;
    }
    return LN_EFAILED;
}

int ln_job_fail_unrecoverable(ln_job *job, const char *reason) {
    if (job == NULL) return LN_EFAILED;
    job->unrecoverable = 1;
    return ln_job_fail(job, reason);
}

int ln_job_delay_until(ln_job *job, int64_t at_ms) {
    if (job == NULL || at_ms < 0) return LN_EINVAL;
    job->delay_at_ms = at_ms;
    job->delay_set = 1;
    return 0;
}

int ln_job_rate_limited(ln_job *job, int64_t ms) {
    if (job == NULL || ms < 0 || ms > INT32_MAX) return LN_EINVAL;
    job->limit_ms = ms;
    job->limit_set = 1;
    return 0;
}

/* progress and log: a fenced write through the handle. */
static int job_write(ln_job *job, const char *text, int is_log) {
    ln_worker *w = job->w;
    return is_log ? ln__store_log(w->jobs, w->queue, &job->t.ref, text)
                  : ln__store_progress(w->jobs, w->queue, &job->t.ref, text);
}

int ln_job_progress(ln_job *job, const char *json) {
    if (job == NULL || json == NULL) return LN_EINVAL;
    char msg[LN__JOBS_ERRMSG_MAX];
    size_t len;
    int err = ln__jobs_check_json(json, job->w->jobs->opts.max_data_size, &len, "progress", msg,
                                  sizeof msg);
    return err != 0 ? err : job_write(job, json, 0);
}

int ln_job_log(ln_job *job, const char *line) {
    if (job == NULL || line == NULL ||
        strnlen(line, LN__JOB_LOG_LINE_MAX + 1) > LN__JOB_LOG_LINE_MAX)
        return LN_EINVAL;
    return job_write(job, line, 1);
}
