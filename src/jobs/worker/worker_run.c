/* worker_run.c - ln_worker_run, the dispatcher of a worker: a loop of
 * named phases over one run state (ln__run), as libuv's uv_run is:
 *
 *   collect   read the clock and the stop flag, take what handlers finished
 *   stop      at grace_end give the running jobs back; end when done
 *   maintain  the stalled sweep when due; whether leases are due
 *   send      one step: outcomes, renewals, takes (if the pipe has room)
 *   receive   the oldest step's reply, when the pipe is full or nothing
 *             more is worth sending; a failure ends or retries the run
 *   empty     exit_when_empty: end when the queue has nothing pending
 *   idle      sleep until the next thing to do (worker_idle.c)
 *
 * A phase returns NEXT (go on), AGAIN (start the next round) or END. The
 * store is reached only through the front (store.h); every store gives a
 * pipe (depth 1 for a synchronous one), so there is one path.
 * The design and the invariants: docs/internals/worker-loop.md.
 */
#include "worker_int.h"

#include <sched.h>
#include <stdio.h>
#include <string.h>

#define REPLY_POLL_MS                                                                              \
    1000 /* then a step's reply is read blocking (its own                                          \
            timeout bounds it) */
#define STALLED_REASON "job stalled more than allowable limit"

enum { NEXT, AGAIN, END };

static int transient(int err) {
    return err == LN_EBACKEND || err == LN_ENOSPC || err == LN_EIO || err == LN_ENOMEM;
}

/* ---------------------------------------------------------------- collect */

static void phase_collect(ln__run *r) {
    ln_worker *w = r->w;
    const ln_worker_opts *o = &w->opts;
    ln__round *rd = &r->rd;
    memset(rd, 0, sizeof *rd);
    rd->next_due = -1;
    r->now = ln__now_ns();
    rd->stopping = atomic_load_explicit(&w->stop, memory_order_relaxed);
    if (rd->stopping && r->grace_end == 0) r->grace_end = r->now + o->grace_ms * LN__MS;
    int at_limit = o->max_jobs != 0 && w->stats.taken + w->fl_want >= o->max_jobs;
    rd->no_take = rd->stopping || at_limit;
    ln__idle_tick(r);
    ln__worker_collect(w);
    ln__worker_timeouts(w, r->now);
    rd->running = ln__worker_running(w);
    /* Takes in flight and running handlers never exceed concurrency. */
    LN_ASSERT(rd->running + w->fl_want <= o->concurrency);
}

/* ------------------------------------------------------------------- stop */

static int phase_stop(ln__run *r) {
    ln_worker *w = r->w;
    const ln__round *rd = &r->rd;
    if (rd->stopping && rd->running > 0 && r->now >= r->grace_end && !r->released) {
        ln__steps_drain(w); /* no step in flight may refer to them */
        ln__worker_collect(w);
        size_t n = 0; /* renewing[] is free scratch here */
        for (size_t i = 0; i < w->nslots; i++)
            if (!w->slots[i]->collected) w->renewing[n++] = w->slots[i];
        ln__worker_release(w, w->renewing, n);
        r->released = 1;
        return AGAIN;
    }
    if (rd->no_take && w->nslots == 0 && w->fl_count == 0) return END;
    return NEXT;
}

/* --------------------------------------------------------------- maintain */

static int recover_stalled(ln_worker *w) {
    size_t requeued = 0, failed = 0;
    /* BullMQ's text exactly: Node code compares a job's failedReason with it. */
    int err = ln__store_recover_stalled(w->jobs, w->queue, w->opts.max_stalled, STALLED_REASON,
                                        &requeued, &failed);
    pthread_mutex_lock(&w->mu);
    w->stats.stalled_found += requeued + failed;
    pthread_mutex_unlock(&w->mu);
    return err;
}

static int phase_maintain(ln__run *r) {
    ln__round *rd = &r->rd;
    if (!rd->no_take && r->now >= r->next_stall) {
        int err = recover_stalled(r->w);
        if (err != 0 && !transient(err)) { /* transient: the step retries */
            r->result = err;
            return END;
        }
        r->next_stall = r->now + r->stall_every;
    }
    rd->renew = rd->running > 0 && r->now >= r->next_renew;
    ln__beat_maintain(r); /* listed by ln_jobs_workers */
    ln__worker_cancels(r);
    return NEXT;
}

/* ------------------------------------------------------------------- send */

/* How many jobs a step may take: none while idle or not taking, else the
 * free room (running handlers and takes in flight count), batch and
 * max_jobs permitting. */
static size_t want_now(const ln__run *r) {
    const ln_worker *w = r->w;
    const ln_worker_opts *o = &w->opts;
    if (r->rd.no_take || !r->idle.may_take || r->idle.limit_until != 0) return 0;
    size_t held = r->rd.running + w->fl_want; /* a take must not exceed */
    size_t want = held < o->concurrency ? o->concurrency - held : 0;
    if (want > o->batch) want = o->batch;
    if (o->max_jobs != 0 && want > o->max_jobs - w->stats.taken - w->fl_want)
        want = (size_t)(o->max_jobs - w->stats.taken - w->fl_want);
    return want;
}

static void phase_send(ln__run *r) {
    ln_worker *w = r->w;
    ln__round *rd = &r->rd;
    size_t want = want_now(r);
    if (w->fl_count >= r->depth || (w->nunrecorded == 0 && !rd->renew && want == 0)) return;
    if ((rd->err = ln__steps_send(w, rd->renew, want)) == 0) {
        rd->sent = 1;
        if (rd->renew) r->next_renew = r->now + r->renew_every;
    }
}

/* ---------------------------------------------------------------- receive */

/* With room in the pipe and nothing sent: 1 if the oldest reply is in, or
 * late (recv then waits out its timeout); 0 if a handler finished first,
 * whose outcome is worth another step the store runs right after. */
static int reply_or_late(ln__run *r) {
    int fd = -1;
    uint64_t until = r->now + REPLY_POLL_MS * LN__MS;
    return ln__pipe_poll(r->w->pipe, &fd) != 0 || ln__worker_sleep(r->w, until, fd) ||
           ln__now_ns() >= until;
}

/* A send or receive failed: steps behind it fail too (a lost connection
 * loses their replies), so take all their outcomes back; retry a
 * transient failure every poll_ms for up to store_retry_ms (default 30 s,
 * LN_WORKER_STORE_RETRY_MS_DEFAULT, whatever the lease: a Redis Cluster
 * failover takes longer than a short lease; a full disk only up to a
 * lease), else end the run, saying
 * that it gave up. */
static int step_failed(ln__run *r) {
    ln_worker *w = r->w;
    int err = r->rd.err;
    ln__steps_drain(w);
    if (!transient(err)) {
        r->result = ln__steps_failed(w, err, 0);
        return END;
    }
    if (r->failing_since == 0) {
        r->failing_since = r->now; /* a streak starts */
    } else if (!r->lost_counted) {
        /* The retry failed too: the store is lost. One failure that the
         * first retry fixes (Redis's NOSCRIPT on a fresh server) is not. */
        r->lost_counted = 1;
        pthread_mutex_lock(&w->mu);
        w->stats.store_lost++;
        pthread_mutex_unlock(&w->mu);
    }
    uint64_t failing = r->now - r->failing_since;
    if (failing > ln__worker_retry_ms(&w->opts, err) * LN__MS) {
        r->result = ln__steps_failed(w, err, failing / LN__MS);
        return END;
    }
    (void)ln__worker_sleep(w, r->now + w->opts.poll_ms * LN__MS, -1);
    return AGAIN;
}

static int phase_receive(ln__run *r) {
    ln_worker *w = r->w;
    ln__round *rd = &r->rd;
    if (rd->err == 0 && w->fl_count > 0 && w->fl_count < r->depth && !rd->sent && !reply_or_late(r))
        return AGAIN; /* a handler finished: send its outcome */
    if (rd->err == 0 && w->fl_count > 0 && (w->fl_count == r->depth || !rd->sent)) {
        rd->err = ln__steps_recv(w, rd);
        rd->received = rd->err == 0;
        if (rd->err != 0) r->next_renew = r->now; /* renewals may be lost too */
    }
    if (rd->err != 0) return step_failed(r);
    if (rd->sent && !rd->received) return AGAIN; /* the pipe has room: fill it */
    if (rd->received) {
        if (r->lost_counted) { /* the streak is over: regained */
            pthread_mutex_lock(&w->mu);
            w->stats.store_regained++;
            pthread_mutex_unlock(&w->mu);
        }
        r->failing_since = 0;
        r->lost_counted = 0;
        r->idle.after_step(r);
        if (w->fl_count > 0 || (rd->no_take && w->nslots == 0)) return AGAIN;
    }
    return NEXT;
}

/* ------------------------------------------------------------------ empty */

static int phase_empty(ln__run *r) {
    ln_worker *w = r->w;
    const ln__round *rd = &r->rd;
    if (!w->opts.exit_when_empty || rd->no_take || rd->ntaken != 0 || w->nslots != 0) return NEXT;
    int pending = 1;
    int err = ln__store_pending(w->jobs, w->queue, &pending);
    if (err != 0 && !transient(err)) {
        r->result = err;
        return END;
    }
    return err == 0 && !pending ? END : NEXT;
}

/* ------------------------------------------------------------------- loop */

static int run_round(ln__run *r) {
    int ph;
    phase_collect(r);
    if ((ph = phase_stop(r)) != NEXT) return ph;
    if ((ph = phase_maintain(r)) != NEXT) return ph;
    phase_send(r);
    if ((ph = phase_receive(r)) != NEXT) return ph;
    if ((ph = phase_empty(r)) != NEXT) return ph;
    ln__idle_phase(r);
    return AGAIN;
}

static int run_open(ln__run *r, ln_worker *w) {
    const ln_worker_opts *o = &w->opts;
    memset(r, 0, sizeof *r);
    r->w = w;
    w->next_timeout = UINT64_MAX; /* no job held between runs */
    int err = ln__store_pipe_open(w->jobs, w->queue, &w->pipe);
    if (err != 0) return err;
    r->depth = ln__pipe_depth(w->pipe);
    LN_ASSERT(r->depth >= 1 && r->depth <= LN__PIPE_DEPTH);
    ln__idle_open(r);
    r->now = ln__now_ns();
    r->renew_every = (uint64_t)o->lease_ms / 2 * LN__MS;
    r->next_renew = r->now + r->renew_every;
    r->stall_every =
        (uint64_t)(o->stalled_interval_ms != 0 ? o->stalled_interval_ms : o->lease_ms) * LN__MS;
    r->next_stall = r->now; /* a restarted worker recovers at once */
    r->cancel_mark = -1;    /* the first cancel poll looks at every job */
    r->next_cancel = r->now + (uint64_t)LN_JOBS_CANCEL_POLL_MS * LN__MS;
    return 0;
}

static void run_close(ln__run *r) {
    ln_worker *w = r->w;
    if (r->result != 0) ln__worker_abandon(w, r->result); /* else no step is in flight */
    LN_ASSERT(w->nslots == 0 && w->nunrecorded == 0 && w->fl_count == 0);
    /* Every job is freed, but a handler's thread may still be between its
     * push and its wake-up write: wait for it to leave w alone (acquire:
     * pairs with the release decrement). A few instructions and one
     * write(2) at most, so yielding is enough. */
    while (atomic_load_explicit(&w->tasks, memory_order_acquire) != 0) sched_yield();
    ln__beat_leave(r);
    ln__pipe_close(w->pipe);
    w->pipe = NULL;
    ln__idle_close(r);
}

int ln_worker_run(ln_worker *w) {
    if (w == NULL || w->running) return LN_EINVAL;
    int err = ln__jobs_enter(w->jobs); /* NULL and fork() checks */
    if (err != 0) return err;
    ln__jobs_leave(w->jobs, 0);
    ln__run r;
    if ((err = run_open(&r, w)) != 0) return err;
    w->running = 1;
    while (run_round(&r) != END) {
    }
    run_close(&r);
    /* A stop ends this run only; the next ln_worker_run starts afresh. */
    atomic_store_explicit(&w->stop, 0, memory_order_relaxed);
    w->running = 0;
    return r.result;
}
