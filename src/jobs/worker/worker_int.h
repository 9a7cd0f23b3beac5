/* worker_int.h - private to the job worker: a worker's and a job's state,
 * the run state of ln_worker_run, and the functions its files share.
 *
 *   worker.c         lifecycle, the handler side (pool task, ln_job_*)
 *   worker_run.c     ln_worker_run: the loop of phases
 *   worker_jobs.c    the jobs held: collect, start, release, abandon
 *   worker_steps.c   the steps in flight: send, receive, drain
 *   worker_idle.c    the idle phase: blocking wait or polling, the sleep
 *   worker_beat.c    the heartbeat that lists the run (ln_jobs_workers)
 *
 * The design, the phases and the invariants: docs/internals/worker-loop.md.
 * The worker reaches a store only through the front (store.h).
 */
#ifndef LN_JOBS_WORKER_INT_H
#define LN_JOBS_WORKER_INT_H

#include "front.h"
#include "store.h"

#include "internal.h"

#include <pthread.h>
#include <stdatomic.h>

struct ln_job {
    ln_worker *w;
    ln__job_taken t;
    char *result;          /* ln_job_set_result copy (handler thread) */
    int result_refused;    /* the last ln_job_set_result refused its JSON:
                              a run that returns 0 fails instead, with
                              refused_reason (handler thread) */
    char *refused_reason;  /*   malloc'd; NULL: out of memory */
    char *reason;          /* ln_job_fail copy (handler thread) */
    int unrecoverable;     /* ln_job_fail_unrecoverable (handler thread) */
    int delay_set;         /* ln_job_delay_until was called: delay_at_ms */
    int64_t delay_at_ms;   /*   is the outcome (handler thread) */
    int limit_set;         /* ln_job_rate_limited was called: back to
                              waiting, the queue limited for limit_ms */
    int64_t limit_ms;      /*   (handler thread; wins over delay_set) */
    int waited;            /* ln_job_wait_children moved it: nothing to
                              record (handler thread; worker_waited.c) */
    int rc;                /* handler's return value; published, with
                              the fields above, by the release push on
                              w->finished */
    ln_job *next_finished; /* link of w->finished (written before the push) */
    atomic_int canceled;   /* advisory flag: relaxed loads and stores, it
                              guards no other data */
    size_t slot;           /* index in w->slots (dispatcher only) */
    int collected;         /* in unrecorded[] or a step's done list
                              (dispatcher only) */
    int renew_sent;        /* a step in flight renews its lease: at most one
                              does, so the job freed after a lost lease is
                              referred to by no step (dispatcher only) */
    int lost;              /* found no longer held while its handler ran:
                              counted as stale once it returned, unless it
                              had waited (ln__worker_lost; dispatcher) */
    int stale_counted;     /* this take is in stats.stale: a refused
                              renewal and then a refused outcome count it
                              once (ln__worker_stale; dispatcher only) */
    /* Timeouts (dispatcher only; docs/internals/worker-loop.md
     * "Timeouts"). A timed-out job's outcome is the dispatcher's own
     * (timeout_reason), never rc/result/reason, which its handler may
     * still be writing; the job is freed once both 'recorded' and
     * 'returned' hold, whichever comes last. */
    uint64_t deadline;  /* monotonic ns the run times out; 0 = never */
    int64_t timeout_ms; /* the timeout that applies (for the reason) */
    int timed_out;      /* the timeout fired: canceled and collected are
                           set, the outcome is a failure */
    int returned;       /* timed_out: the handler has returned */
    int recorded;       /* timed_out: the outcome was stored (or given
                           up); only the handler's return is awaited */
    char timeout_reason[48];
    /* The retry of a failed run, decided once (dispatcher only): a step
     * sent again after a store error stores the same outcome. */
    int retry_decided;  /* retry_ms is set */
    int64_t retry_ms;   /* the delay; -1 none (fails for good) */
    char *retry_reason; /* a reason decide() made (worker_steps.c), or NULL */
};

/* One step sent and not yet received (arrays of 'concurrency' entries). */
typedef struct ln__flight {
    ln__jobs_step st;
    ln__job_done *done;
    ln_job **jobs;     /* the job of each done[] entry */
    ln__job_ref *refs; /* leases renewed */
    ln_job **renewing; /* the job of each refs[] entry */
    int *rcs;
    ln__job_taken *taken;
} ln__flight;

struct ln_worker {
    ln_jobs *jobs;
    char queue[LN_JOB_QUEUE_MAX];
    ln_job_handler fn;
    void *ctx;
    ln_worker_opts opts;
    ln_pool *pool;
    int own_pool;
    int efd;                    /* eventfd: a handler finished, or stop */
    _Atomic(ln_job *) finished; /* stack of jobs whose handler returned,
                                   linked by next_finished
                                   (ln__worker_run_job) */
    atomic_uint tasks;          /* pool tasks submitted and not yet past their
                                   last touch of w (the wake-up after the push):
                                   ln_worker_run returns only at 0, so w may be
                                   destroyed then. Release decrement, acquire
                                   load. */
    atomic_int stop;            /* relaxed: a flag carrying no data; the efd write
                                   that follows wakes the dispatcher, which reads
                                   it again */
    int running;                /* ln_worker_run active (dispatcher only) */

    pthread_mutex_t mu; /* guards stats */
    ln_worker_stats stats;

    /* Dispatcher-only state, arrays sized 'concurrency'. */
    ln_job **slots; /* every job taken and not yet freed */
    size_t nslots;
    ln_job **unrecorded; /* collected outcomes no step in flight carries */
    size_t nunrecorded;
    ln__job_ref *refs; /* scratch: jobs to release */
    ln_job **renewing; /* scratch: jobs to release */
    int *rcs;
    ln__flight fl[LN__PIPE_DEPTH]; /* steps sent, not yet received: a FIFO */
    unsigned fl_head, fl_count;
    size_t fl_done, fl_want; /* outcomes and takes of the steps in flight */
    ln__jobs_pipe *pipe;     /* this run's (ln__store_pipe_open) */
    uint64_t next_timeout;   /* earliest deadline of a running job (ns),
                                UINT64_MAX: none */
    size_t nwaited;          /* jobs ln_job_wait_children moved whose
                                renewal was in flight: freed by
                                ln__worker_waited_sweep (worker_waited.c) */
    size_t nhung_out;        /* timed-out jobs whose handler has not
                                returned and whose outcome is in
                                unrecorded[] or in flight: they still hold
                                a place (see ln__worker_running) */
};

/* ---- The run state of one ln_worker_run (dispatcher only). ---- */

typedef struct ln__run ln__run;

/* The idle phase's state. Whether the worker waits (the store has a
 * blocking wait) or polls is decided once, at ln__idle_open, by choosing
 * the two strategy functions. */
typedef struct ln__idle {
    void (*after_step)(ln__run *r);               /* a step was received */
    void (*sleep)(ln__run *r, uint64_t deadline); /* nothing to do now */
    ln__jobs_wait *wt;                            /* the blocking wait, or NULL: polling */
    int may_take;    /* steps ask for jobs. Cleared (waiting only) when a
                        step found too few; set again by a signal, a
                        wait's end, or due_at passing */
    uint64_t due_at; /* a delayed job is due (monotonic ns), or never */
    int armed;       /* a wait is armed on fd */
    int fd;
    uint64_t limit;       /* the armed wait's answer expected by then (ns) */
    unsigned idle_ms;     /* polling: the next backoff (1 ms .. poll_ms) */
    uint64_t limit_until; /* rate limited until then (monotonic ns): no
                             takes, no blocking wait; 0 = not limited
                             (worker_idle.c) */
} ln__idle;

/* What one round of the loop saw and did (reset by the collect phase). */
typedef struct ln__round {
    int stopping;     /* ln_worker_stop was called */
    int no_take;      /* stopping, or max_jobs reached: take no more */
    size_t running;   /* handlers not returned yet (the rest of slots[]
                         are outcomes, unrecorded or in flight) */
    int renew;        /* leases are due for renewal */
    int sent;         /* a step was sent */
    int received;     /* a step was received */
    int err;          /* the send or receive failed */
    size_t asked;     /* the received step's want */
    size_t ntaken;    /* what it took */
    int64_t next_due; /* its next_due_ms */
    int64_t limited;  /* its limited_ms (> 0: rate limited) */
} ln__round;

struct ln__run {
    ln_worker *w;
    unsigned depth; /* steps in flight at most: ln__pipe_depth */
    uint64_t now;   /* monotonic ns, read at each round's start */
    uint64_t renew_every, next_renew;
    uint64_t stall_every, next_stall;
    uint64_t grace_end;     /* 0: not stopping yet */
    uint64_t failing_since; /* first failure of a failing streak, or 0 */
    int lost_counted;       /* the streak outlived a retry: counted in
                               stats.store_lost (ln_worker_stats) */
    int released;           /* the jobs still running at grace_end were
                               given back */
    uint64_t next_cancel;   /* the next cancel poll (worker_cancel.c) */
    int64_t cancel_mark;    /* the store's cancel mark it last saw */
    int result;             /* what ln_worker_run returns */
    ln__idle idle;
    ln__round rd;
    uint64_t next_beat; /* the next heartbeat (worker_beat.c), 0: now */
    int64_t beat_id;    /* the store's id of this run, 0: unregistered */
};

#define LN__MS ((uint64_t)1000000) /* ns per ms */

/* How long a run retries a store failing transiently with err:
 * store_retry_ms, 0 = LN_WORKER_STORE_RETRY_MS_DEFAULT (not the lease:
 * jobs.h says why), except a full disk (LN_ENOSPC), which a failover does
 * not fix: retried for at most a lease, so the run gives its jobs back
 * (ln__worker_abandon) before their leases lapse. */
static inline unsigned ln__worker_retry_ms(const ln_worker_opts *o, int err) {
    if (o->store_retry_ms != 0) return o->store_retry_ms;
    if (err == LN_ENOSPC && o->lease_ms < LN_WORKER_STORE_RETRY_MS_DEFAULT) return o->lease_ms;
    return LN_WORKER_STORE_RETRY_MS_DEFAULT;
}

/* ---- worker.c ---- */

/* The pool task of one job: runs the handler, then pushes the job on the
 * finished stack and wakes the dispatcher. */
void *ln__worker_run_job(void *arg);

/* ---- worker_jobs.c: the jobs held (slots[], unrecorded[]) ---- */

/* Handlers that hold a place: not returned, or timed out and not
 * returned. Outcomes waiting to be recorded do not count, except those of
 * timed-out jobs whose handler still runs (their slot is not freed when
 * the outcome is stored). */
size_t ln__worker_running(const ln_worker *w);
/* Fire the timeouts due by now (monotonic ns): each such job is canceled
 * and its failure goes to unrecorded[]. Updates next_timeout. */
void ln__worker_timeouts(ln_worker *w, uint64_t now);
/* A step stored (or a store error gave up) job's outcome: free it, or,
 * for a timed-out job whose handler still runs, leave it to collect(). */
void ln__worker_outcome_done(ln_worker *w, ln_job *job);
/* Free a job (its taken record, result and reason). */
void ln__worker_job_free(ln_job *job);
/* Take a job out of slots[] (it is not freed). */
void ln__worker_slot_remove(ln_worker *w, ln_job *job);
/* Move what handlers finished to unrecorded[]; free given-up jobs. */
void ln__worker_collect(ln_worker *w);
/* A renewal refused, or the cancel poll found job no longer held: 1 when
 * it counts as stale now; 0 when its handler may still run, so whether it
 * moved itself to waiting-children (counted as waited, not stale) is not
 * known yet: job->lost is set and ln__worker_collect counts it. */
int ln__worker_lost(ln_job *job);
/* 1 the first time a take of job counts as stale (then 0): each take is
 * counted in ln_worker_stats.stale at most once. */
int ln__worker_stale(ln_job *job);
/* Give jobs back to the store at once, marking them canceled. */
void ln__worker_release(ln_worker *w, ln_job **jobs, size_t n);
/* Start the handlers of freshly taken jobs (a job that cannot start goes
 * back to the store at once). */
void ln__worker_start_taken(ln_worker *w, ln__job_taken *taken, size_t n);
/* Give every job up locally after a store error (err) and wait for their
 * handlers: receives every step in flight first. For LN_ENOSPC the jobs
 * are released to the store first; for other errors their leases lapse. */
void ln__worker_abandon(ln_worker *w, int err);

/* ---- worker_steps.c: the steps in flight (the FIFO fl[]) ---- */

/* Send a step: record unrecorded[], renew leases if renew, take up to
 * want. On error nothing was sent and unrecorded[] stays. */
int ln__steps_send(ln_worker *w, int renew, size_t want);
/* Receive the oldest step in flight into r->rd (asked, ntaken, next_due):
 * free the jobs it recorded, mark lost leases, start the jobs it took. On
 * error its outcomes go back to unrecorded[]. */
int ln__steps_recv(ln_worker *w, ln__round *rd);
/* Receive every step in flight, whatever the outcome. */
void ln__steps_drain(ln_worker *w);
/* Put the pipe's last failure in the handle's errmsg; returns err. With
 * failing_ms > 0 the run gives up after that long of transient failures
 * in a row, and the message says so. */
int ln__steps_failed(ln_worker *w, int err, uint64_t failing_ms);

/* ---- worker_cancel.c: cancels from other processes ---- */

/* When due (every LN_JOBS_CANCEL_POLL_MS while handlers run), ask the
 * store which running jobs are no longer ours (ln_jobs_cancel, or a lost
 * lease) and mark them canceled. */
void ln__worker_cancels(ln__run *r);

/* ---- worker_idle.c: the idle phase ---- */

/* Choose waiting or polling for this run; ln__idle_close ends it. */
void ln__idle_open(ln__run *r);
void ln__idle_close(ln__run *r);
/* At each round's start: a delayed job's due time passing allows takes. */
void ln__idle_tick(ln__run *r);
/* Nothing left to do this round: sleep until the next thing to do. */
void ln__idle_phase(ln__run *r);
/* Sleep until the eventfd fires, fd (if >= 0) is readable, or the
 * monotonic deadline (ns) passes. Returns 1 if fd is readable. */
int ln__worker_sleep(ln_worker *w, uint64_t deadline, int fd);

/* ---- worker_beat.c: the run's heartbeat ---- */

/* Pure: 1 if a beat is due at now (ns) when the next was due at next. */
int ln__beat_due(uint64_t next, uint64_t now);
/* The maintenance phase's beat, when due. */
void ln__beat_maintain(ln__run *r);
/* The run ends: unregister it. */
void ln__beat_leave(ln__run *r);

/* The dispatcher's side of ln_job_wait_children: collect (worker_jobs.c)
 * gives ln__worker_waited a job whose handler moved it to waiting-children
 * and returned; it is freed with nothing recorded, at once or, while a
 * step in flight renews its lease, by the sweep ln__steps_recv makes once
 * such a step is received (worker_steps.c; only while w->nwaited > 0). */
void ln__worker_waited(ln_worker *w, ln_job *job);
void ln__worker_waited_sweep(ln_worker *w);

#endif
