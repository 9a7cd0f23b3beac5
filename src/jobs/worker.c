/* worker.c - ln_worker: takes jobs of one queue with leases, runs the
 * handler on a pool lane, records outcomes, retries with backoff, renews
 * leases, recovers stalled jobs, and stops gracefully.
 *
 * DESIGN
 * One dispatcher (the thread in ln_worker_run) talks to the store; the
 * handlers run on pool threads and never touch the store except through
 * ln_job_progress / ln_job_log. A handler that returns puts its job on the
 * 'finished' array (under w->mu) and writes the eventfd; the dispatcher
 * wakes, takes the whole array, and in ONE backend step records every
 * outcome, renews leases when due, and takes as many new jobs as slots are
 * free. So the store sees one transaction per round trip however many jobs
 * it carries: completions batch themselves under load, and a new job is
 * fetched in the same transaction that completes the previous one.
 *
 * Invariants
 *  - Every job taken and not yet freed is in slots[]. Once its handler
 *    returned it is also in finished[] (under mu), and once the dispatcher
 *    collected it, in unrecorded[] instead (job->collected) until the store
 *    recorded the outcome. Only the dispatcher frees jobs: after the
 *    outcome was stored, or when the job was given up (released, lease
 *    lost, or the run ends on a store error) and its handler returned.
 *  - nslots (jobs not yet recorded) <= concurrency: the dispatcher takes at
 *    most concurrency - running jobs, in a step that also records every
 *    collected outcome. Hence every array has 'concurrency' entries.
 *  - Timers use CLOCK_MONOTONIC (ln__now_ns); leases use the store's clock
 *    (the backend adds lease_ms to its own "now").
 *  - A lost lease (renew says stale) or a release sets job->canceled; the
 *    outcome of such a job is dropped, the store has moved on.
 */
#include "front.h"

#include "../internal.h"

#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#define MAX_CONCURRENCY 4096
#define STALLED_REASON "job stalled more than allowable limit"

struct ln_job {
    ln_worker *w;
    ln__job_taken t;
    char *result;          /* ln_job_set_result copy (handler thread) */
    char *reason;          /* ln_job_fail copy (handler thread) */
    int rc;                /* handler's return value; published via w->mu */
    atomic_int canceled;   /* advisory flag: relaxed loads and stores, it
                              guards no other data */
    size_t slot;           /* index in w->slots (dispatcher only) */
    int collected;         /* in unrecorded[] (dispatcher only) */
};

struct ln_worker {
    ln_jobs *jobs;
    char queue[LN_JOB_QUEUE_MAX];
    ln_job_handler fn;
    void *ctx;
    ln_worker_opts opts;
    ln_pool *pool;
    int own_pool;
    int efd;               /* eventfd: a handler finished, or stop */
    atomic_int stop;       /* relaxed: a flag carrying no data; the efd write
                              that follows wakes the dispatcher, which reads
                              it again */
    int running;           /* ln_worker_run active (dispatcher only) */

    pthread_mutex_t mu;    /* guards finished[], nfinished and stats */
    ln_job **finished;
    size_t nfinished;
    ln_worker_stats stats;

    /* Dispatcher-only state, sized 'concurrency'. */
    ln_job **slots;
    size_t nslots;
    ln_job **unrecorded;
    size_t nunrecorded;
    ln__job_done *done;
    ln__job_ref *refs;     /* leases to renew or jobs to release */
    ln_job **renewing;     /* the job of each refs[] entry */
    int *rcs;
    ln__job_taken *taken;
};

/* ------------------------------------------------------------- handler side */

static void wake(ln_worker *w) {
    uint64_t one = 1;
    ssize_t r = write(w->efd, &one, sizeof one);
    (void)r; /* EAGAIN only when the counter is saturated: already awake */
}

static void *run_job(void *arg) {
    ln_job *job = arg;
    ln_worker *w = job->w;
    int rc = w->fn(job, w->ctx);
    job->rc = rc;
    pthread_mutex_lock(&w->mu);
    w->finished[w->nfinished++] = job; /* < concurrency: see invariants */
    pthread_mutex_unlock(&w->mu);
    wake(w); /* the job may be freed from here on: do not touch it */
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
    ln__free(w->finished);
    ln__free(w->slots);
    ln__free(w->unrecorded);
    ln__free(w->done);
    ln__free(w->refs);
    ln__free(w->renewing);
    ln__free(w->rcs);
    ln__free(w->taken);
}

static int check_worker_opts(const ln_worker_opts *o, char *msg, size_t size) {
    if (o->concurrency < 1 || o->concurrency > MAX_CONCURRENCY)
        snprintf(msg, size, "concurrency must be 1..%d", MAX_CONCURRENCY);
    else if (o->lease_ms < 100)
        snprintf(msg, size, "lease_ms must be >= 100");
    else if (o->poll_ms < 1)
        snprintf(msg, size, "poll_ms must be >= 1");
    else if (o->pool != NULL &&
             (o->lane < 0 || o->lane >= ln_pool_lanes(o->pool)))
        snprintf(msg, size, "lane %d does not exist in the pool", o->lane);
    else
        return 0;
    return LN_EINVAL;
}

int ln_worker_create(ln_worker **out, ln_jobs *jobs, const char *queue,
                     ln_job_handler fn, void *ctx,
                     const ln_worker_opts *opts) {
    ln_worker_opts o;
    ln_worker_opts_init(&o);
    if (opts != NULL) o = *opts;
    if (o.batch == 0 || o.batch > o.concurrency) o.batch = o.concurrency;
    int err = ln__jobs_enter(jobs); /* NULL and fork() checks */
    if (err != 0) return err;
    char msg[LN__JOBS_ERRMSG_MAX] = "";
    err = ln__jobs_check_name(queue, LN_JOB_QUEUE_MAX, "queue name", msg,
                              sizeof msg);
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
    size_t c = o.concurrency;
    w->finished = ln__calloc(c, sizeof *w->finished);
    w->slots = ln__calloc(c, sizeof *w->slots);
    w->unrecorded = ln__calloc(c, sizeof *w->unrecorded);
    w->done = ln__calloc(c, sizeof *w->done);
    w->refs = ln__calloc(c, sizeof *w->refs);
    w->renewing = ln__calloc(c, sizeof *w->renewing);
    w->rcs = ln__calloc(c, sizeof *w->rcs);
    w->taken = ln__calloc(c, sizeof *w->taken);
    err = LN_ENOMEM;
    if (!w->finished || !w->slots || !w->unrecorded || !w->done || !w->refs ||
        !w->renewing || !w->rcs || !w->taken)
        goto fail;
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
        po.lanes[0] = (ln_lane_opts){"jobs", o.concurrency, o.concurrency,
                                     10000, NULL, 0};
        po.spin_us = 0; /* the dispatcher needs the CPU more than spinners */
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


/* ------------------------------------------------------------ dispatcher */

static void job_free(ln_job *job) {
    ln__free(job->t.name);
    ln__free(job->t.data);
    ln__free(job->t.traceparent);
    ln__free(job->t.tracestate);
    ln__free(job->result);
    ln__free(job->reason);
    ln__free(job);
}

static void slot_remove(ln_worker *w, ln_job *job) {
    size_t i = job->slot;
    w->slots[i] = w->slots[--w->nslots];
    w->slots[i]->slot = i;
}

/* Move what handlers finished to unrecorded[]; drop given-up jobs. */
static void collect(ln_worker *w) {
    pthread_mutex_lock(&w->mu);
    for (size_t i = 0; i < w->nfinished; i++) {
        ln_job *job = w->finished[i];
        if (atomic_load_explicit(&job->canceled, memory_order_relaxed)) {
            slot_remove(w, job);
            job_free(job);
        } else {
            job->collected = 1;
            w->unrecorded[w->nunrecorded++] = job;
        }
    }
    w->nfinished = 0;
    pthread_mutex_unlock(&w->mu);
}

/* Delay before the retry that follows failed run number attempts_made + 1. */
static int64_t backoff_delay(const ln__job_taken *t) {
    if (t->backoff == LN_BACKOFF_FIXED) return t->backoff_ms;
    const int64_t cap = 100LL * 366 * 24 * 3600 * 1000;
    int shift = t->attempts_made < 40 ? t->attempts_made : 40;
    return t->backoff_ms > (cap >> shift) ? cap : t->backoff_ms << shift;
}

/* The front's retry policy: what to store for a finished run. */
static void decide(const ln_job *job, ln__job_done *d) {
    memset(d, 0, sizeof *d);
    d->ref = job->t.ref;
    if (job->rc == 0) {
        d->kind = LN__DONE_COMPLETE;
        d->result = job->result;
        return;
    }
    d->reason = job->reason != NULL ? job->reason
                : job->rc < 0       ? ln_strerror(job->rc)
                                    : "handler returned a positive value";
    if (job->t.attempts_made + 1 < job->t.attempts) {
        d->kind = LN__DONE_RETRY;
        d->delay_ms = backoff_delay(&job->t);
    } else {
        d->kind = LN__DONE_FAIL;
    }
}

/* Give jobs back to the store at once (graceful stop, or a job that could
 * not be started here). Marks them canceled. */
static void release_jobs(ln_worker *w, ln_job **jobs, size_t n) {
    for (size_t i = 0; i < n; i++) {
        w->refs[i] = jobs[i]->t.ref;
        atomic_store_explicit(&jobs[i]->canceled, 1, memory_order_relaxed);
    }
    if (n == 0 || ln__jobs_enter(w->jobs) != 0) return;
    ln__jobs_be *be = w->jobs->be;
    int err = be->ops->release(be, w->queue, w->refs, w->rcs, n);
    ln__jobs_leave(w->jobs, err); /* on error the leases lapse instead */
    pthread_mutex_lock(&w->mu);
    w->stats.released += err == 0 ? n : 0;
    pthread_mutex_unlock(&w->mu);
}

/* Start the handlers of freshly taken jobs. A job that cannot start here
 * (no memory, pool refused it) goes back to the store at once. */
static void start_taken(ln_worker *w, size_t ntaken) {
    size_t nfailed = 0; /* collected in renewing[], free scratch here */
    for (size_t i = 0; i < ntaken; i++) {
        ln_job *job = ln__calloc(1, sizeof *job);
        if (job == NULL) {
            ln__job_taken *t = &w->taken[i];
            ln__free(t->name);
            ln__free(t->data);
            ln__free(t->traceparent);
            ln__free(t->tracestate);
            w->refs[0] = t->ref;
            if (ln__jobs_enter(w->jobs) == 0)
                ln__jobs_leave(w->jobs, w->jobs->be->ops->release(
                                            w->jobs->be, w->queue, w->refs,
                                            w->rcs, 1));
            continue;
        }
        job->w = w;
        job->t = w->taken[i];
        job->slot = w->nslots;
        w->slots[w->nslots++] = job;
        if (ln_submit(w->pool, w->opts.lane, run_job, job, NULL) != 0)
            w->renewing[nfailed++] = job;
    }
    if (nfailed == 0) return;
    release_jobs(w, w->renewing, nfailed);
    for (size_t i = 0; i < nfailed; i++) {
        slot_remove(w, w->renewing[i]);
        job_free(w->renewing[i]);
    }
}

/* One store round trip: record unrecorded[], renew leases if renew, take up
 * to want jobs and start them. */
static int do_step(ln_worker *w, int renew, size_t want, size_t *ntaken,
                   int64_t *next_due) {
    size_t nd = w->nunrecorded, nr = 0;
    for (size_t i = 0; i < nd; i++) decide(w->unrecorded[i], &w->done[i]);
    for (size_t i = 0; renew && i < w->nslots; i++) {
        ln_job *job = w->slots[i];
        if (job->collected ||
            atomic_load_explicit(&job->canceled, memory_order_relaxed))
            continue;
        w->renewing[nr] = job;
        w->refs[nr++] = job->t.ref;
    }
    ln__jobs_step st = {.done = w->done, .ndone = nd, .renew = w->refs,
                        .renew_rc = w->rcs, .nrenew = nr, .want = want,
                        .lease_ms = w->opts.lease_ms, .taken = w->taken};
    int err = ln__jobs_enter(w->jobs);
    if (err != 0) return err;
    err = ln__jobs_leave(w->jobs,
                         w->jobs->be->ops->step(w->jobs->be, w->queue, &st));
    if (err != 0) return err; /* nothing happened; unrecorded[] stays */
    ln_worker_stats d = {0};
    for (size_t i = 0; i < nd; i++) {
        ln_job *job = w->unrecorded[i];
        if (w->done[i].rc != 0) d.stale++;
        else if (w->done[i].kind == LN__DONE_COMPLETE) d.completed++;
        else if (w->done[i].kind == LN__DONE_RETRY) d.retried++;
        else d.failed++;
        slot_remove(w, job);
        job_free(job);
    }
    w->nunrecorded = 0;
    for (size_t i = 0; i < nr; i++)
        if (w->rcs[i] != 0) { /* lease lost: the outcome will be refused */
            atomic_store_explicit(&w->renewing[i]->canceled, 1,
                                  memory_order_relaxed);
            d.stale++;
        }
    d.taken = st.ntaken;
    pthread_mutex_lock(&w->mu);
    w->stats.taken += d.taken;
    w->stats.completed += d.completed;
    w->stats.failed += d.failed;
    w->stats.retried += d.retried;
    w->stats.stale += d.stale;
    pthread_mutex_unlock(&w->mu);
    *ntaken = st.ntaken;
    *next_due = st.next_due_ms;
    start_taken(w, st.ntaken);
    return 0;
}

static int recover_stalled(ln_worker *w) {
    size_t requeued = 0, failed = 0;
    char reason[128];
    snprintf(reason, sizeof reason, "%s (max_stalled=%u)", STALLED_REASON,
             w->opts.max_stalled);
    int err = ln__jobs_enter(w->jobs);
    if (err != 0) return err;
    ln__jobs_be *be = w->jobs->be;
    err = ln__jobs_leave(w->jobs,
                         be->ops->recover_stalled(be, w->queue,
                                                  w->opts.max_stalled, reason,
                                                  &requeued, &failed));
    pthread_mutex_lock(&w->mu);
    w->stats.stalled_found += requeued + failed;
    pthread_mutex_unlock(&w->mu);
    return err;
}

static int queue_pending(ln_worker *w, int *pending) {
    int err = ln__jobs_enter(w->jobs);
    if (err != 0) return err;
    return ln__jobs_leave(w->jobs,
                          w->jobs->be->ops->pending(w->jobs->be, w->queue,
                                                    pending));
}

/* Sleep until the eventfd fires or the monotonic deadline (ns) passes. */
static void wait_until(ln_worker *w, uint64_t deadline) {
    uint64_t now = ln__now_ns();
    int ms = deadline <= now ? 0 : (int)((deadline - now + 999999) / 1000000);
    struct pollfd p = {.fd = w->efd, .events = POLLIN};
    if (poll(&p, 1, ms) > 0) {
        uint64_t v;
        ssize_t r = read(w->efd, &v, sizeof v);
        (void)r; /* only resets the counter */
    }
}

static int transient(int err) {
    return err == LN_EBACKEND || err == LN_ENOSPC || err == LN_EIO ||
           err == LN_ENOMEM;
}

static uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }

/* End of a run after a store error: give up the running jobs locally (the
 * store gets them back when their leases lapse) and wait for the handlers. */
static void abandon_all(ln_worker *w) {
    for (size_t i = 0; i < w->nunrecorded; i++) {
        slot_remove(w, w->unrecorded[i]);
        job_free(w->unrecorded[i]);
    }
    w->nunrecorded = 0;
    for (size_t i = 0; i < w->nslots; i++)
        atomic_store_explicit(&w->slots[i]->canceled, 1, memory_order_relaxed);
    while (w->nslots > 0) {
        collect(w);
        if (w->nslots > 0) wait_until(w, ln__now_ns() + 100000000u);
    }
}

int ln_worker_run(ln_worker *w) {
    if (w == NULL || w->running) return LN_EINVAL;
    int err = ln__jobs_enter(w->jobs);
    if (err != 0) return err;
    ln__jobs_leave(w->jobs, 0);
    w->running = 1;
    const ln_worker_opts *o = &w->opts;
    const uint64_t ms = 1000000u;
    uint64_t now = ln__now_ns();
    uint64_t renew_every = (uint64_t)o->lease_ms / 2 * ms;
    uint64_t next_renew = now + renew_every;
    uint64_t stall_every = (uint64_t)(o->stalled_interval_ms != 0
                                          ? o->stalled_interval_ms
                                          : o->lease_ms) * ms;
    uint64_t next_stall = now; /* a restarted worker recovers at once */
    uint64_t grace_end = 0, failing_since = 0;
    unsigned idle_ms = 1;
    int released = 0, result = 0;

    for (;;) {
        now = ln__now_ns();
        int stopping = atomic_load_explicit(&w->stop, memory_order_relaxed);
        if (stopping && grace_end == 0) grace_end = now + o->grace_ms * ms;
        int at_limit = o->max_jobs != 0 && w->stats.taken >= o->max_jobs;
        int no_take = stopping || at_limit;
        collect(w);
        size_t running = w->nslots - w->nunrecorded;
        if (stopping && running > 0 && now >= grace_end && !released) {
            size_t n = 0; /* renewing[] is free scratch between steps */
            for (size_t i = 0; i < w->nslots; i++)
                if (!w->slots[i]->collected) w->renewing[n++] = w->slots[i];
            release_jobs(w, w->renewing, n);
            released = 1;
        }
        if (no_take && w->nslots == 0) break;

        if (!no_take && now >= next_stall) {
            if ((err = recover_stalled(w)) != 0 && !transient(err)) {
                result = err;
                break;
            }
            next_stall = now + stall_every;
        }
        int renew = running > 0 && now >= next_renew;
        size_t want = 0;
        if (!no_take) {
            want = o->concurrency - running;
            if (want > o->batch) want = o->batch;
            if (o->max_jobs != 0 && want > o->max_jobs - w->stats.taken)
                want = (size_t)(o->max_jobs - w->stats.taken);
        }
        size_t ntaken = 0;
        int64_t next_due = -1;
        if (w->nunrecorded > 0 || renew || want > 0) {
            err = do_step(w, renew, want, &ntaken, &next_due);
            if (err != 0) {
                if (failing_since == 0) failing_since = now;
                if (!transient(err) ||
                    now - failing_since > (uint64_t)o->lease_ms * ms) {
                    result = err;
                    break;
                }
                wait_until(w, now + o->poll_ms * ms);
                continue;
            }
            failing_since = 0;
            if (renew) next_renew = now + renew_every;
            if (no_take && w->nslots == 0) break; /* last outcomes stored */
        }
        if (ntaken > 0) idle_ms = 1;
        if (o->exit_when_empty && !no_take && ntaken == 0 && w->nslots == 0) {
            int pending = 1;
            if ((err = queue_pending(w, &pending)) != 0 && !transient(err)) {
                result = err;
                break;
            }
            if (err == 0 && !pending) break;
        }
        if (ntaken > 0 && ntaken == want && w->nslots < o->concurrency)
            continue; /* there may be more right away */

        uint64_t deadline = now + 3600000 * ms;
        if (w->nslots > 0) deadline = min_u64(deadline, next_renew);
        if (!no_take) deadline = min_u64(deadline, next_stall);
        if (stopping && !released) deadline = min_u64(deadline, grace_end);
        if (want > ntaken) { /* free slots but nothing to take: poll */
            deadline = min_u64(deadline, now + idle_ms * ms);
            if (next_due >= 0)
                deadline = min_u64(deadline, now + (uint64_t)next_due * ms);
            idle_ms = idle_ms * 2 > o->poll_ms ? o->poll_ms : idle_ms * 2;
        }
        wait_until(w, deadline);
    }
    if (result != 0) abandon_all(w);
    /* A stop ends this run only; the next ln_worker_run starts afresh. */
    atomic_store_explicit(&w->stop, 0, memory_order_relaxed);
    w->running = 0;
    return result;
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
    return job != NULL &&
           atomic_load_explicit(&((ln_job *)job)->canceled,
                                memory_order_relaxed);
}

int ln_job_set_result(ln_job *job, const char *json) {
    if (job == NULL || json == NULL) return LN_EINVAL;
    char msg[LN__JOBS_ERRMSG_MAX];
    size_t len;
    int err = ln__jobs_check_json(json, job->w->jobs->opts.max_data_size, &len,
                                  "result", msg, sizeof msg);
    if (err != 0) return err;
    char *copy = ln__strdup(json);
    if (copy == NULL) return LN_ENOMEM;
    ln__free(job->result);
    job->result = copy;
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

/* progress and log: a fenced write through the handle. */
static int job_write(ln_job *job, const char *text, int is_log) {
    ln_jobs *jobs = job->w->jobs;
    int err = ln__jobs_enter(jobs);
    if (err != 0) return err;
    ln__jobs_be *be = jobs->be;
    err = is_log ? be->ops->log(be, job->w->queue, &job->t.ref, text)
                 : be->ops->progress(be, job->w->queue, &job->t.ref, text);
    return ln__jobs_leave(jobs, err);
}

int ln_job_progress(ln_job *job, const char *json) {
    if (job == NULL || json == NULL) return LN_EINVAL;
    char msg[LN__JOBS_ERRMSG_MAX];
    size_t len;
    int err = ln__jobs_check_json(json, job->w->jobs->opts.max_data_size, &len,
                                  "progress", msg, sizeof msg);
    return err != 0 ? err : job_write(job, json, 0);
}

int ln_job_log(ln_job *job, const char *line) {
    if (job == NULL || line == NULL || strnlen(line, 65537) > 65536)
        return LN_EINVAL;
    return job_write(job, line, 1);
}
