/* worker_run.c - ln_worker_run, the dispatcher of a worker: takes jobs of
 * one queue with leases, runs the handlers on a pool lane, records
 * outcomes, retries with backoff, renews leases, recovers stalled jobs,
 * waits for work when idle, and stops gracefully.
 *
 * DESIGN
 * One dispatcher (the thread in ln_worker_run) talks to the store; the
 * handlers run on pool threads and never touch the store except through
 * ln_job_progress / ln_job_log. A handler that returns pushes its job on
 * the lock-free 'finished' stack and, if the stack was empty, writes the
 * eventfd; the dispatcher wakes, takes the whole stack, and in ONE backend
 * step records every outcome, renews leases when due, and takes as many
 * new jobs as slots are free. So the store sees one transaction per round
 * trip however many jobs it carries: completions batch themselves under
 * load, and a new job is fetched in the same transaction that completes
 * the previous one.
 *
 * Pipelined steps. With a backend that has the pipe ops (Redis), up to
 * LN__PIPE_DEPTH steps are in flight (a FIFO of 'flights'): while the store
 * runs step k, the dispatcher starts the jobs of step k-1 and, as soon as
 * a handler finishes, sends step k+1 with its outcome, so the store never
 * idles for the dispatcher's round trip. A step's takes are counted
 * against concurrency from the moment it is sent (fl_want). Without the
 * pipe ops (SQLite) the depth is 1: each step is sent and received at once.
 *
 * Idle workers. When a step finds nothing to take, the worker stops asking
 * for jobs until the store says there may be some. With a backend that
 * has the blocking wait (backend.h wait_*, Redis: BZPOPMIN on BullMQ's
 * marker) the dispatcher arms one wait and sleeps in poll() on its eventfd
 * AND the wait's fd: a job added anywhere wakes it at once, a delayed job
 * wakes it when due, a finished handler or a lease renewal is served
 * meanwhile by steps that record and renew without taking, and no step is
 * made on a timer. Every wait is bounded (WAIT_MAX_MS, or the due time of
 * the next delayed job), and after a bounded wait that ended without a
 * signal the worker takes a look anyway, as BullMQ's workers do, so a
 * signal lost to a dead connection costs at most WAIT_MAX_MS. A wait that
 * cannot be armed (store unreachable) degrades to stepping every poll_ms.
 * Without the wait ops (SQLite) the worker polls with a backoff of 1 ms
 * doubling up to poll_ms.
 *
 * Invariants
 *  - Every job taken and not yet freed is in slots[]. Once its handler
 *    returned it is also on the finished stack; once the dispatcher
 *    collected it (job->collected), it is in unrecorded[] or in the done
 *    list of exactly one step in flight, until a step recorded its outcome
 *    (a failed step puts it back in unrecorded[]). Only the dispatcher
 *    frees jobs: after the outcome was stored, or when the job was given
 *    up (released, lease lost, or the run ends on a store error) and its
 *    handler returned. A job referred to by a step in flight (its outcome
 *    or its renewal) is never freed before that step is received: release
 *    and abandon receive every step in flight first.
 *  - nslots + fl_want <= concurrency: a step takes at most concurrency -
 *    running - fl_want jobs (running: handlers not returned), and the
 *    outcomes it and the steps before it record leave slots[] before its
 *    takes arrive. Hence every array has 'concurrency' entries.
 *  - Timers use CLOCK_MONOTONIC (ln__now_ns); leases use the store's clock
 *    (the backend adds lease_ms to its own "now").
 *  - A lost lease (renew says stale) or a release sets job->canceled; the
 *    outcome of such a job is dropped, the store has moved on.
 */
#include "worker_int.h"

#include "store.h"

#include "../internal.h"

#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define WAIT_MAX_MS 5000   /* longest blocking wait (BullMQ: drainDelay 5 s) */
#define REPLY_POLL_MS 1000 /* then a step's reply is read blocking (its own
                              timeout bounds it) */
#define STALLED_REASON "job stalled more than allowable limit"

/* ------------------------------------------------------------ dispatcher */

static void job_free(ln_job *job) {
    ln__job_taken_free(&job->t);
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
    ln_job *next = atomic_exchange_explicit(&w->finished, NULL,
                                            memory_order_acquire);
    while (next != NULL) {
        ln_job *job = next;
        next = job->next_finished;
        if (atomic_load_explicit(&job->canceled, memory_order_relaxed)) {
            slot_remove(w, job);
            job_free(job);
        } else {
            job->collected = 1;
            w->unrecorded[w->nunrecorded++] = job;
        }
    }
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
    if (n == 0) return;
    /* on error the leases lapse instead */
    int err = ln__store_release(w->jobs, w->queue, w->refs, w->rcs, n);
    pthread_mutex_lock(&w->mu);
    w->stats.released += err == 0 ? n : 0;
    pthread_mutex_unlock(&w->mu);
}

/* Start the handlers of freshly taken jobs. A job that cannot start here
 * (no memory, pool refused it) goes back to the store at once. */
static void start_taken(ln_worker *w, ln__job_taken *taken, size_t ntaken) {
    size_t nfailed = 0; /* collected in renewing[], free scratch here */
    for (size_t i = 0; i < ntaken; i++) {
        ln_job *job = ln__calloc(1, sizeof *job);
        if (job == NULL) {
            ln__job_taken *t = &taken[i];
            w->refs[0] = t->ref;
            ln__job_taken_free(t);
            (void)ln__store_release(w->jobs, w->queue, w->refs, w->rcs, 1);
            continue;
        }
        job->w = w;
        job->t = taken[i];
        job->slot = w->nslots;
        w->slots[w->nslots++] = job;
        /* relaxed: the submit publishes the job; only the count matters */
        atomic_fetch_add_explicit(&w->tasks, 1, memory_order_relaxed);
        if (ln_submit(w->pool, w->opts.lane, ln__worker_run_job, job, NULL) != 0) {
            atomic_fetch_sub_explicit(&w->tasks, 1, memory_order_relaxed);
            w->renewing[nfailed++] = job;
        }
    }
    if (nfailed == 0) return;
    release_jobs(w, w->renewing, nfailed);
    for (size_t i = 0; i < nfailed; i++) {
        slot_remove(w, w->renewing[i]);
        job_free(w->renewing[i]);
    }
}

/* Send a step: record unrecorded[], renew leases if renew, take up to
 * want jobs. With a pipe it runs while the dispatcher goes on; without one
 * it runs at recv_step. On error nothing was sent and unrecorded[] stays. */
static int send_step(ln_worker *w, int renew, size_t want) {
    flight *f = &w->fl[(w->fl_head + w->fl_count) % LN__PIPE_DEPTH];
    size_t nd = w->nunrecorded, nr = 0;
    for (size_t i = 0; i < nd; i++) {
        decide(w->unrecorded[i], &f->done[i]);
        f->jobs[i] = w->unrecorded[i];
    }
    for (size_t i = 0; renew && i < w->nslots; i++) {
        ln_job *job = w->slots[i];
        if (job->collected ||
            atomic_load_explicit(&job->canceled, memory_order_relaxed))
            continue;
        f->renewing[nr] = job;
        f->refs[nr++] = job->t.ref;
    }
    f->st = (ln__jobs_step){.done = f->done, .ndone = nd, .renew = f->refs,
                            .renew_rc = f->rcs, .nrenew = nr, .want = want,
                            .lease_ms = w->opts.lease_ms, .taken = f->taken};
    if (w->pipe != NULL) {
        int err = ln__pipe_send(w->pipe, &f->st);
        if (err != 0) return err;
    }
    w->nunrecorded = 0;
    w->fl_count++;
    w->fl_done += nd;
    w->fl_want += want;
    return 0;
}

/* A pipe's failure in the handle's errmsg, for ln_jobs_errmsg. */
static int pipe_failed(ln_worker *w, int err) {
    if (ln__jobs_enter(w->jobs) == 0) {
        ln__jobs_err(w->jobs, err, "%s", ln__pipe_errmsg(w->pipe));
        ln__jobs_leave(w->jobs, err);
    }
    return err;
}

/* Receive the oldest step sent: free the jobs it recorded, mark lost
 * leases, start the jobs it took. On error its outcomes go back to
 * unrecorded[] (recorded again by a later step). */
static int recv_step(ln_worker *w, size_t *ntaken, int64_t *next_due,
                     size_t *want) {
    flight *f = &w->fl[w->fl_head];
    int err;
    if (w->pipe != NULL)
        err = ln__pipe_recv(w->pipe, &f->st);
    else
        err = ln__store_step(w->jobs, w->queue, &f->st);
    size_t nd = f->st.ndone, nr = f->st.nrenew;
    w->fl_head = (w->fl_head + 1) % LN__PIPE_DEPTH;
    w->fl_count--;
    w->fl_done -= nd;
    w->fl_want -= f->st.want;
    *want = f->st.want;
    *ntaken = 0;
    *next_due = -1;
    if (err != 0) {
        for (size_t i = 0; i < nd; i++)
            w->unrecorded[w->nunrecorded++] = f->jobs[i];
        return err;
    }
    ln_worker_stats d = {0};
    for (size_t i = 0; i < nd; i++) {
        ln_job *job = f->jobs[i];
        if (f->done[i].rc != 0) d.stale++;
        else if (f->done[i].kind == LN__DONE_COMPLETE) d.completed++;
        else if (f->done[i].kind == LN__DONE_RETRY) d.retried++;
        else d.failed++;
        slot_remove(w, job);
        job_free(job);
    }
    for (size_t i = 0; i < nr; i++)
        if (f->rcs[i] != 0) { /* lease lost: the outcome will be refused */
            atomic_store_explicit(&f->renewing[i]->canceled, 1,
                                  memory_order_relaxed);
            d.stale++;
        }
    d.taken = f->st.ntaken;
    pthread_mutex_lock(&w->mu);
    w->stats.taken += d.taken;
    w->stats.completed += d.completed;
    w->stats.failed += d.failed;
    w->stats.retried += d.retried;
    w->stats.stale += d.stale;
    pthread_mutex_unlock(&w->mu);
    *ntaken = f->st.ntaken;
    *next_due = f->st.next_due_ms;
    start_taken(w, f->taken, f->st.ntaken);
    return 0;
}

/* Receive every step in flight, whatever the outcome (before releasing or
 * abandoning jobs a step in flight still refers to). */
static void drain_steps(ln_worker *w) {
    while (w->fl_count > 0) {
        size_t ntaken, want;
        int64_t next_due;
        (void)recv_step(w, &ntaken, &next_due, &want);
    }
}

static int recover_stalled(ln_worker *w) {
    size_t requeued = 0, failed = 0;
    char reason[128];
    snprintf(reason, sizeof reason, "%s (max_stalled=%u)", STALLED_REASON,
             w->opts.max_stalled);
    int err = ln__store_recover_stalled(w->jobs, w->queue, w->opts.max_stalled,
                                        reason, &requeued, &failed);
    pthread_mutex_lock(&w->mu);
    w->stats.stalled_found += requeued + failed;
    pthread_mutex_unlock(&w->mu);
    return err;
}

static int queue_pending(ln_worker *w, int *pending) {
    return ln__store_pending(w->jobs, w->queue, pending);
}

/* Sleep until the eventfd fires, fd (if >= 0) is readable, or the
 * monotonic deadline (ns) passes. Returns 1 if fd is readable. */
static int wait_fd_until(ln_worker *w, uint64_t deadline, int fd) {
    uint64_t now = ln__now_ns();
    uint64_t left = deadline <= now ? 0 : (deadline - now + 999999) / 1000000;
    int ms = left > 3600000 ? 3600000 : (int)left;
    struct pollfd p[2] = {{.fd = w->efd, .events = POLLIN}, {.fd = fd, .events = POLLIN}};
    if (poll(p, fd >= 0 ? 2 : 1, ms) <= 0) return 0;
    if (p[0].revents) {
        uint64_t v;
        ssize_t r = read(w->efd, &v, sizeof v);
        (void)r; /* only resets the counter */
    }
    /* POLLHUP / POLLERR: the read reports the lost connection. */
    return fd >= 0 && p[1].revents != 0;
}

static void wait_until(ln_worker *w, uint64_t deadline) {
    (void)wait_fd_until(w, deadline, -1);
}

static int transient(int err) {
    return err == LN_EBACKEND || err == LN_ENOSPC || err == LN_EIO ||
           err == LN_ENOMEM;
}

static uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }

/* End of a run after a store error: give up the running jobs locally (the
 * store gets them back when their leases lapse) and wait for the handlers. */
static void abandon_all(ln_worker *w) {
    drain_steps(w);
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

/* The blocking wait of one run (see DESIGN "Idle workers"). */
typedef struct idle_wait {
    ln__jobs_wait *wt;  /* NULL: the backend has none, poll instead */
    int armed;          /* a wait is armed on fd */
    int fd;
    uint64_t limit;     /* answer expected by then (monotonic ns) */
} idle_wait;

static void idle_wait_open(ln_worker *w, idle_wait *iw) {
    memset(iw, 0, sizeof *iw);
    iw->fd = -1;
    /* without one the worker polls */
    if (ln__store_wait_open(w->jobs, w->queue, &iw->wt) != 0) iw->wt = NULL;
}

static void idle_wait_close(ln_worker *w, idle_wait *iw) {
    (void)w;
    ln__wait_close(iw->wt);
    iw->wt = NULL;
}

/* The step pipe of one run, if the backend has one (NULL: synchronous). */
static void pipe_open(ln_worker *w) {
    /* the store's, or the front's synchronous one; NULL only without
     * memory: then steps are synchronous here */
    if (ln__store_pipe_open(w->jobs, w->queue, &w->pipe) != 0) w->pipe = NULL;
}

static void pipe_close(ln_worker *w) {
    ln__pipe_close(w->pipe);
    w->pipe = NULL;
}

static uint64_t ms_until(uint64_t now, uint64_t t) {
    return t <= now ? 0 : (t - now + 999999) / 1000000;
}

int ln_worker_run(ln_worker *w) {
    if (w == NULL || w->running) return LN_EINVAL;
    int err = ln__jobs_enter(w->jobs);
    if (err != 0) return err;
    ln__jobs_leave(w->jobs, 0);
    w->running = 1;
    const ln_worker_opts *o = &w->opts;
    const uint64_t ms = 1000000u, never = UINT64_MAX;
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
    /* may_take: steps ask for jobs. Cleared (with a wait) when a step found
     * too few; set again by a signal, a wait's end, or due_at passing. */
    int may_take = 1;
    uint64_t due_at = never; /* a delayed job is due (monotonic ns) */
    idle_wait iw;
    idle_wait_open(w, &iw);
    pipe_open(w);
    const unsigned depth = w->pipe != NULL ? ln__pipe_depth(w->pipe) : 1;

    for (;;) {
        now = ln__now_ns();
        int stopping = atomic_load_explicit(&w->stop, memory_order_relaxed);
        if (stopping && grace_end == 0) grace_end = now + o->grace_ms * ms;
        int at_limit = o->max_jobs != 0 &&
                       w->stats.taken + w->fl_want >= o->max_jobs;
        int no_take = stopping || at_limit;
        if (!may_take && !iw.armed && now >= due_at) may_take = 1;
        collect(w);
        /* running: handlers not returned yet (the rest of slots[] are
         * outcomes, unrecorded or in flight) */
        size_t running = w->nslots - w->nunrecorded - w->fl_done;
        if (stopping && running > 0 && now >= grace_end && !released) {
            drain_steps(w); /* no step in flight may refer to them */
            collect(w);
            size_t n = 0; /* renewing[] is free scratch here */
            for (size_t i = 0; i < w->nslots; i++)
                if (!w->slots[i]->collected) w->renewing[n++] = w->slots[i];
            release_jobs(w, w->renewing, n);
            released = 1;
            continue;
        }
        if (no_take && w->nslots == 0 && w->fl_count == 0) break;

        if (!no_take && now >= next_stall) {
            if ((err = recover_stalled(w)) != 0 && !transient(err)) {
                result = err;
                break;
            }
            next_stall = now + stall_every;
        }
        err = 0; /* a transient failure of the check: the step retries */
        int renew = running > 0 && now >= next_renew;
        size_t want = 0;
        if (!no_take && may_take) {
            size_t held = running + w->fl_want; /* jobs a take must not exceed */
            want = held < o->concurrency ? o->concurrency - held : 0;
            if (want > o->batch) want = o->batch;
            if (o->max_jobs != 0 && want > o->max_jobs - w->stats.taken - w->fl_want)
                want = (size_t)(o->max_jobs - w->stats.taken - w->fl_want);
        }
        int sent = 0;
        if (w->fl_count < depth && (w->nunrecorded > 0 || renew || want > 0)) {
            if ((err = send_step(w, renew, want)) == 0) {
                sent = 1;
                if (renew) next_renew = now + renew_every;
            }
        }
        size_t ntaken = 0, asked = 0;
        int64_t next_due = -1;
        int received = 0;
        /* Receive when the pipe is full, or when nothing more was worth
         * sending -- but with room in the pipe, a handler that finishes
         * before the reply comes is worth another step, which the store
         * then runs right after this one. */
        if (err == 0 && w->fl_count > 0 && w->fl_count < depth && !sent) {
            int fd = -1;
            uint64_t until = now + REPLY_POLL_MS * ms;
            if (ln__pipe_poll(w->pipe, &fd) == 0 &&
                !wait_fd_until(w, until, fd) && ln__now_ns() < until)
                continue; /* a handler finished: send its outcome */
            /* else the reply is in, or is late: recv waits out its timeout */
        }
        if (err == 0 && w->fl_count > 0 && (w->fl_count == depth || !sent)) {
            err = recv_step(w, &ntaken, &next_due, &asked);
            received = err == 0;
            if (err != 0) next_renew = now; /* renewals may be lost too */
        }
        if (err != 0) {
            /* Steps still in flight behind a failure fail too (a lost
             * connection loses their replies): take their outcomes back. */
            drain_steps(w);
            if (failing_since == 0) failing_since = now;
            if (!transient(err) ||
                now - failing_since > (uint64_t)o->lease_ms * ms) {
                result = w->pipe != NULL ? pipe_failed(w, err) : err;
                break;
            }
            wait_until(w, now + o->poll_ms * ms);
            continue;
        }
        if (sent && !received) continue; /* the pipe has room: fill it */
        if (received) {
            failing_since = 0;
            if (iw.wt != NULL && asked > ntaken) { /* seen empty: wait */
                may_take = 0;
                due_at = next_due < 0 ? never
                                      : now + (uint64_t)(next_due > 0 ? next_due : 1) * ms;
            } else if (asked > 0) { /* a later step found more after all */
                may_take = 1;
            }
            if (ntaken > 0) idle_ms = 1;
            if (w->fl_count > 0 || (no_take && w->nslots == 0)) continue;
        }
        if (o->exit_when_empty && !no_take && ntaken == 0 && w->nslots == 0) {
            int pending = 1;
            if ((err = queue_pending(w, &pending)) != 0 && !transient(err)) {
                result = err;
                break;
            }
            if (err == 0 && !pending) break;
        }
        if (received && ntaken > 0 && ntaken == asked && w->nslots < o->concurrency)
            continue; /* there may be more right away */

        /* A wake-up read while waiting for a reply leaves jobs on the
         * finished stack that wrote no new one: collect before sleeping.
         * Acquire pairs with the release push; that wake-up's read came
         * after the push's write (eventfd), so the load sees the push. */
        if (atomic_load_explicit(&w->finished, memory_order_acquire) != NULL)
            continue;
        uint64_t deadline = now + 3600000 * ms;
        if (w->nslots > 0) deadline = min_u64(deadline, next_renew);
        if (!no_take) deadline = min_u64(deadline, next_stall);
        if (stopping && !released) deadline = min_u64(deadline, grace_end);
        int wfd = -1;
        if (iw.wt != NULL && !may_take && !no_take) {
            if (!iw.armed) { /* block until a signal, the due time or a cap */
                uint64_t block = WAIT_MAX_MS;
                /* Nothing signals "the queue became empty" (other workers'
                 * jobs finishing): an exit_when_empty worker looks every
                 * poll_ms for that, as without a wait. */
                if (o->exit_when_empty) block = min_u64(block, o->poll_ms);
                if (due_at != never) block = min_u64(block, ms_until(now, due_at));
                int64_t limit_ms = 0;
                if (ln__wait_arm(iw.wt, block > 0 ? (int64_t)block : 1, &iw.fd,
                                  &limit_ms) == 0) {
                    iw.armed = 1;
                    iw.limit = now + (uint64_t)limit_ms * ms;
                } else { /* unreachable: look again after poll_ms */
                    due_at = min_u64(due_at, now + o->poll_ms * ms);
                }
            }
            if (iw.armed) {
                wfd = iw.fd;
                deadline = min_u64(deadline, iw.limit);
            } else {
                deadline = min_u64(deadline, due_at);
            }
        } else if (iw.wt == NULL && received && asked > ntaken) {
            /* free slots but nothing to take, no wait: poll */
            deadline = min_u64(deadline, now + idle_ms * ms);
            if (next_due >= 0)
                deadline = min_u64(deadline, now + (uint64_t)next_due * ms);
            idle_ms = idle_ms * 2 > o->poll_ms ? o->poll_ms : idle_ms * 2;
        }
        int readable = wait_fd_until(w, deadline, wfd);
        if (wfd < 0) continue;
        if (readable) {
            int64_t due_in = 0;
            int got = ln__wait_read(iw.wt, &due_in);
            if (got == LN__WAIT_PENDING) continue;
            iw.armed = 0;
            if (got == LN__WAIT_WOKEN && due_in > 0) /* a delayed job, later */
                due_at = min_u64(due_at, ln__now_ns() + (uint64_t)due_in * ms);
            else /* a job may be ready; or the wait ended: look anyway */
                may_take = 1;
        } else if (ln__now_ns() >= iw.limit) { /* no answer: dead link */
            ln__wait_cancel(iw.wt);
            iw.armed = 0;
            may_take = 1;
        }
    }
    if (result != 0) abandon_all(w); /* else no step is in flight here */
    /* Every job is freed, but a handler's thread may still be between its
     * push and its wake-up write: wait for it to leave w alone (acquire:
     * pairs with the release decrement). A few instructions and one
     * write(2) at most, so yielding is enough. */
    while (atomic_load_explicit(&w->tasks, memory_order_acquire) != 0) sched_yield();
    pipe_close(w);
    idle_wait_close(w, &iw);
    /* A stop ends this run only; the next ln_worker_run starts afresh. */
    atomic_store_explicit(&w->stop, 0, memory_order_relaxed);
    w->running = 0;
    return result;
}
