/* worker_int.h - private to the worker (worker.c: lifecycle and the
 * handler side; worker_run.c: the dispatcher): the worker's and a job's
 * state. See worker_run.c for the design and the invariants. */
#ifndef LN_JOBS_WORKER_INT_H
#define LN_JOBS_WORKER_INT_H

#include "front.h"

#include <pthread.h>
#include <stdatomic.h>

struct ln_job {
    ln_worker *w;
    ln__job_taken t;
    char *result;          /* ln_job_set_result copy (handler thread) */
    char *reason;          /* ln_job_fail copy (handler thread) */
    int rc;                /* handler's return value; published by the
                              release push on w->finished */
    ln_job *next_finished; /* link of w->finished (written before the push) */
    atomic_int canceled;   /* advisory flag: relaxed loads and stores, it
                              guards no other data */
    size_t slot;           /* index in w->slots (dispatcher only) */
    int collected;         /* in unrecorded[] or a step's done list
                              (dispatcher only) */
};

/* One step sent and not yet received (arrays of 'concurrency' entries). */
typedef struct flight {
    ln__jobs_step st;
    ln__job_done *done;
    ln_job **jobs;         /* the job of each done[] entry */
    ln__job_ref *refs;     /* leases renewed */
    ln_job **renewing;     /* the job of each refs[] entry */
    int *rcs;
    ln__job_taken *taken;
} flight;

struct ln_worker {
    ln_jobs *jobs;
    char queue[LN_JOB_QUEUE_MAX];
    ln_job_handler fn;
    void *ctx;
    ln_worker_opts opts;
    ln_pool *pool;
    int own_pool;
    int efd;               /* eventfd: a handler finished, or stop */
    _Atomic(ln_job *) finished; /* stack of jobs whose handler returned,
                                   linked by next_finished
                                   (ln__worker_run_job) */
    atomic_uint tasks;     /* pool tasks submitted and not yet past their
                              last touch of w (the wake-up after the push):
                              ln_worker_run returns only at 0, so w may be
                              destroyed then. Release decrement, acquire
                              load. */
    atomic_int stop;       /* relaxed: a flag carrying no data; the efd write
                              that follows wakes the dispatcher, which reads
                              it again */
    int running;           /* ln_worker_run active (dispatcher only) */

    pthread_mutex_t mu;    /* guards stats */
    ln_worker_stats stats;

    /* Dispatcher-only state, sized 'concurrency'. */
    ln_job **slots;
    size_t nslots;
    ln_job **unrecorded;
    size_t nunrecorded;
    ln__job_ref *refs;     /* scratch: jobs to release */
    ln_job **renewing;     /* scratch: jobs to release */
    int *rcs;
    flight fl[LN__PIPE_DEPTH]; /* steps sent, not yet received: a FIFO */
    unsigned fl_head, fl_count;
    size_t fl_done, fl_want;   /* outcomes and takes of the steps in flight */
    ln__jobs_pipe *pipe;       /* this run's, or NULL: steps are synchronous */
};

/* The pool task of one job: runs the handler, then pushes the job on the
 * finished stack and wakes the dispatcher (worker.c). */
void *ln__worker_run_job(void *arg);

#endif
