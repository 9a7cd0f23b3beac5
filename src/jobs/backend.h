/* backend.h - the contract between the jobs front (jobs.c, validate.c,
 * worker.c) and a store backend (sqlite*.c, redis*.c). Not API.
 *
 * DESIGN
 * The front owns everything that is the same for every store: URL dispatch,
 * argument and option checks, JSON validation (jansson), the size limit,
 * fork detection, the worker loop, retry/backoff decisions, the stalled-job
 * policy, lease renewal timing and graceful stop. A backend only stores and
 * moves jobs, each op atomically. So a backend never parses JSON, never
 * checks options the front already checked, and never decides *whether* a
 * job is retried -- only applies what the front decided.
 *
 * Calling rules (the front guarantees them; a backend may rely on them):
 *  - One op at a time per backend instance: the front holds the handle's
 *    mutex around every call. A backend needs no locking of its own.
 *    Exception: the wait_* and pipe_* ops on a wait or pipe object (not
 *    on the instance) run without the mutex, by one thread per object;
 *    such an object has its own connection and touches no mutable state
 *    of the instance.
 *  - Ops are never called in a process other than the one that opened the
 *    instance (the front returns LN_EFORK first); only close(be, 1) is.
 *  - Every string argument is non-NULL and NUL-terminated unless the op says
 *    otherwise; queue names are 1..LN_JOB_QUEUE_MAX-1 bytes, ids are
 *    1..LN_JOB_ID_MAX-1 bytes without control characters; JSON arguments
 *    are valid JSON within the handle's size limit.
 *  - Strings a backend returns (ln_job_info fields, ln__job_taken fields,
 *    log lines) are allocated with ln__malloc/ln__strdup; ownership passes
 *    to the front, which frees them with ln__free.
 *
 * Return codes: 0 or a negative LN_E* code. On any failure the backend
 * writes a human-readable detail into be->errmsg (ln__jobs_be_err does
 * both), which the front shows through ln_jobs_errmsg. Map store errors:
 *   disk full -> LN_ENOSPC; file/DB not writable -> LN_EACCES;
 *   not a lanes store / corrupt / newer schema -> LN_ECORRUPT;
 *   out of memory -> LN_ENOMEM; lock wait timed out, connection lost or any
 *   other store failure -> LN_EBACKEND; server unreachable -> LN_ECONNREFUSED.
 * An op that fails must leave the store unchanged (roll back), except where
 * the op says otherwise.
 *
 * Clock: every time stored or compared (created, run_at, lease expiry,
 * finished) is ms since the Unix epoch read from the STORE's clock (SQLite:
 * the host clock read inside the statement; Redis: the TIME command / Lua
 * `redis.call('TIME')`), never a client clock, so processes with skewed
 * clocks agree on leases. Durations passed in (delay_ms, lease_ms, age_ms)
 * are relative and the backend adds them to its own "now".
 *
 * Job identity: a job is (queue, id). A backend numbers jobs without a
 * caller id with decimal integers that are never reused within a store
 * (caller ids are never all digits, so they cannot clash). It may also hand
 * the front a private 64-bit key per job (ln__job_ref.key, e.g. a rowid) to
 * find it faster; the front passes it back unchanged and treats 0 as "none".
 *
 * Leases and tokens: take gives each taken job a fresh token (unique for
 * that job among all its takes ever, e.g. a per-job counter, or a random
 * string). complete / retry / fail / renew / release / progress / log must
 * act only if the job is still active with that token; otherwise they
 * change nothing and report LN_ESTALE for that job. Whether an active job
 * whose lease expired but that nobody reclaimed yet may still be completed
 * is the backend's choice (SQLite: yes, the token is unchanged; Redis: no,
 * the lock key expired); the front handles both.
 *
 * Versioning: LN__JOBS_BACKEND_VERSION changes when an op is added or its
 * meaning changes; new ops are appended. Every change is logged with a date
 * in /work/coord/backend-changes.md (project-internal; see git history).
 */
#ifndef LN_JOBS_BACKEND_H
#define LN_JOBS_BACKEND_H

#include <lanes.h>
#include <lanes/jobs.h>

#include <stddef.h>
#include <stdint.h>

#define LN__JOBS_BACKEND_VERSION 2
#define LN__JOBS_ERRMSG_MAX 512
#define LN__JOBS_TOKEN_MAX 64

typedef struct ln__jobs_ops ln__jobs_ops;

/* The first member of every backend instance. A backend allocates its own
 * struct with this at offset 0 and returns &self->base from open. */
typedef struct ln__jobs_be {
    const ln__jobs_ops *ops;
    char errmsg[LN__JOBS_ERRMSG_MAX]; /* detail of the last failure */
} ln__jobs_be;

/* Write printf-style detail to be->errmsg and return code (for
 * `return ln__jobs_be_err(be, LN_EBACKEND, "...: %s", sqlite3_errmsg(db));`). */
int ln__jobs_be_err(ln__jobs_be *be, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* How a job is addressed after take: id, backend key, lease token. */
typedef struct ln__job_ref {
    char id[LN_JOB_ID_MAX];
    uint64_t key;                     /* backend-private; 0 = none */
    char token[LN__JOBS_TOKEN_MAX];   /* NUL-terminated lease token */
} ln__job_ref;

/* One job to add (validated by the front). */
typedef struct ln__job_new {
    const char *name;
    const char *data;        /* valid JSON */
    size_t data_len;         /* strlen(data) */
    ln_job_opts opts;        /* complete: defaults filled, checked; job_id,
                                traceparent, tracestate may be NULL */
    /* out */
    char id[LN_JOB_ID_MAX];  /* the new or existing job's id */
    int existed;             /* 1 if opts.job_id already existed (no-op) */
} ln__job_new;

/* One job handed out by take. The backend fills every field; strings are
 * ln__malloc'd and owned by the front afterwards (tracestate/traceparent may
 * be NULL). */
typedef struct ln__job_taken {
    ln__job_ref ref;
    char *name;
    char *data;
    char *traceparent;
    char *tracestate;
    int attempts_started;    /* including this run: 1 on the first run */
    int attempts_made;       /* failed runs before this one */
    int attempts;            /* opts.attempts at add */
    int backoff;             /* LN_BACKOFF_* */
    int64_t backoff_ms;
} ln__job_taken;

/* What the front decided for a finished run. */
enum {
    LN__DONE_COMPLETE = 0, /* -> completed, store result; apply
                              remove_on_complete */
    LN__DONE_RETRY = 1,    /* -> delayed for delay_ms (or waiting when 0),
                              attempts_made + 1, store reason */
    LN__DONE_FAIL = 2      /* -> failed, attempts_made + 1, store reason;
                              apply remove_on_fail */
};

typedef struct ln__job_done {
    ln__job_ref ref;
    int kind;                /* LN__DONE_* */
    const char *result;      /* COMPLETE: JSON, or NULL for no result */
    const char *reason;      /* RETRY / FAIL: non-NULL text */
    int64_t delay_ms;        /* RETRY: >= 0 */
    int rc;                  /* out: 0 or LN_ESTALE (job not active with
                                that token any more: nothing changed) */
} ln__job_done;

/* A blocking wait for new work on one queue (the optional wait_* ops).
 * The backend allocates its own struct with this at offset 0. Owned by one
 * worker run: only that run's dispatcher thread calls the wait_* ops on it,
 * one at a time, WITHOUT the handle's mutex and concurrently with the
 * other ops of the instance (a backend gives each wait its own store
 * connection and never touches the instance's mutable state from it). */
typedef struct ln__jobs_wait {
    const ln__jobs_ops *ops;
} ln__jobs_wait;

/* A pipe of worker steps on a connection of its own (the optional pipe_*
 * ops): up to LN__PIPE_DEPTH steps sent before the first reply is read,
 * so the store runs the next step while the worker handles the last
 * reply. Owned by one worker run like a wait (called without the handle's
 * mutex by its dispatcher only). errmsg: detail of the last failure. */
#define LN__PIPE_DEPTH 2
typedef struct ln__jobs_pipe {
    const ln__jobs_ops *ops;
    char errmsg[LN__JOBS_ERRMSG_MAX];
} ln__jobs_pipe;

/* What wait_read found. */
enum {
    LN__WAIT_PENDING = 0, /* no complete answer yet: poll the fd again */
    LN__WAIT_TIMEOUT = 1, /* the wait's timeout passed with no signal */
    LN__WAIT_WOKEN = 2    /* a signal: *due_in_ms says when to look */
};

/* One worker round trip: record outcomes, renew leases, promote due delayed
 * jobs, take new ones -- see the step op. */
typedef struct ln__jobs_step {
    /* in */
    ln__job_done *done;      /* outcomes to record, may be NULL if ndone 0 */
    size_t ndone;
    ln__job_ref *renew;      /* leases to extend by lease_ms */
    int *renew_rc;           /* out, one per renew: 0 or LN_ESTALE */
    size_t nrenew;
    size_t want;             /* take at most this many (0 = take none) */
    int64_t lease_ms;        /* lease of taken and renewed jobs, > 0 */
    /* out */
    ln__job_taken *taken;    /* array of capacity 'want' given by the front */
    size_t ntaken;
    int64_t next_due_ms;     /* ms until the earliest delayed job of the
                                queue is due (0 = now), or -1 if none. Only
                                required when ntaken < want; backends that
                                cannot tell cheaply report -1. */
} ln__jobs_step;

struct ln__jobs_ops {
    unsigned version;        /* LN__JOBS_BACKEND_VERSION */
    const char *name;        /* "sqlite", "redis" */

    /* Free the instance. forked = 0: close the store connection normally.
     * forked = 1: called in a child after fork(): free memory but do not
     * touch the connection in any way that affects the parent (no
     * checkpoint, no unlink, no QUIT; closing a socket fd is fine). */
    void (*close)(ln__jobs_be *be, int forked);

    /* Add n >= 1 jobs to queue, ALL OR NOTHING (one transaction / one
     * script). For each job fill jobs[i].id and .existed. A job whose
     * opts.job_id exists in queue (any state) is not changed; its id is
     * returned with existed = 1. delay_ms > 0 -> delayed with run_at =
     * now + delay; else priority > 0 -> prioritized; else waiting. LIFO jobs
     * run before older jobs of the same priority, newest first. Errors:
     * LN_ENOSPC, LN_EACCES, LN_EBACKEND, LN_ENOMEM. */
    int (*add)(ln__jobs_be *be, const char *queue, ln__job_new *jobs,
               size_t n);

    /* Fill *info (zeroed by the front) for job id of queue. State reported
     * as LN_JOB_PAUSED for a waiting/prioritized job of a paused queue.
     * LN_ENOENT if none. */
    int (*get)(ln__jobs_be *be, const char *queue, const char *id,
               ln_job_info *info);

    /* Count jobs of queue per state (waiting/prioritized of a paused queue
     * count as paused instead). An unknown queue gives zeros. */
    int (*counts)(ln__jobs_be *be, const char *queue, ln_job_counts *counts);

    /* Up to limit (1..10000) jobs of state (any ln_job_state; PAUSED lists
     * waiting + prioritized of a paused queue, and WAITING/PRIORITIZED list
     * nothing while paused) after skipping offset, ordered as jobs.h
     * ln_jobs_list says. *out: ln__malloc'd array (NULL if *n == 0). */
    int (*list)(ln__jobs_be *be, const char *queue, int state, size_t offset,
                size_t limit, ln_job_info **out, size_t *n);

    /* Log lines of a job, oldest first: *lines ln__malloc'd array of *n
     * ln__malloc'd strings (NULL if none). LN_ENOENT if no such job. */
    int (*logs)(ln__jobs_be *be, const char *queue, const char *id,
                char ***lines, size_t *n);

    /* id != NULL: move that failed job to waiting (prioritized if it has a
     * priority), attempts_made = 0, failed_reason and finished time cleared;
     * LN_ENOENT if no such job, LN_EINVAL if it is not failed (errmsg says
     * its state). id == NULL: the same for every failed job of queue.
     * *count = jobs moved. */
    int (*retry)(ln__jobs_be *be, const char *queue, const char *id,
                 size_t *count);

    /* Remove a job (and its logs) in any state but active. LN_ENOENT,
     * LN_EBUSY (active). */
    int (*remove)(ln__jobs_be *be, const char *queue, const char *id);

    /* state is LN_JOB_COMPLETED or LN_JOB_FAILED. Remove the jobs of that
     * state finished more than age_ms ago (age_ms < 0: regardless of age)
     * except the newest 'keep' of that state (by finish time). *removed =
     * how many. */
    int (*clean)(ln__jobs_be *be, const char *queue, int state,
                 int64_t age_ms, uint64_t keep, size_t *removed);

    /* Set (paused = 1) or clear the queue's paused flag. Idempotent. */
    int (*pause)(ln__jobs_be *be, const char *queue, int paused);
    int (*is_paused)(ln__jobs_be *be, const char *queue, int *paused);

    /* Remove every waiting, prioritized and delayed job of queue (paused
     * ones too). *removed = how many. Active and finished jobs stay. */
    int (*drain)(ln__jobs_be *be, const char *queue, size_t *removed);

    /* The worker round trip, as ONE transaction where the store allows it
     * (a backend that cannot must still make each part atomic on its own
     * and apply them in this order):
     *  1. record each st->done[i] (rc per entry; a stale one is skipped and
     *     does not fail the step);
     *  2. extend the lease of each st->renew[i] to now + lease_ms (rc per
     *     entry in renew_rc);
     *  3. if want > 0: promote delayed jobs of queue that are due, then,
     *     unless the queue is paused, take up to want runnable jobs in run
     *     order (priority 0 first, then ascending priority; LIFO newest
     *     first, else oldest first): state active, attempts_started + 1, a
     *     fresh token, lease until now + lease_ms, started time now. Taking
     *     must be one statement / script per job set so two workers never
     *     take the same job.
     * Returns 0 (per-entry rcs tell what was stale), or an error, and then
     * NOTHING of the step happened (SQLite) or the backend documents which
     * parts may have (Redis); st->ntaken is 0 on error. */
    int (*step)(ln__jobs_be *be, const char *queue, ln__jobs_step *st);

    /* Recover stalled jobs: every active job of queue whose lease expired
     * before now gets stalled + 1; if the new stalled count > max_stalled it
     * fails with 'reason' (attempts_made + 1, remove_on_fail applies), else
     * it goes back to waiting (prioritized if it has a priority). Their
     * tokens become invalid. *requeued / *failed = how many. */
    int (*recover_stalled)(ln__jobs_be *be, const char *queue,
                           unsigned max_stalled, const char *reason,
                           size_t *requeued, size_t *failed);

    /* Give up n active jobs at once (graceful stop): each one still active
     * with its token goes back to waiting (prioritized if it has a priority)
     * with attempts_started - 1 and no lease; others are skipped
     * (rc[i] = LN_ESTALE). One transaction. */
    int (*release)(ln__jobs_be *be, const char *queue, const ln__job_ref *refs,
                   int *rc, size_t n);

    /* Store progress JSON on an active job holding ref's token, or append a
     * log line. LN_ESTALE if the lease is lost. */
    int (*progress)(ln__jobs_be *be, const char *queue, const ln__job_ref *ref,
                    const char *json);
    int (*log)(ln__jobs_be *be, const char *queue, const ln__job_ref *ref,
               const char *line);

    /* *pending = 1 if queue has any waiting, prioritized, delayed or active
     * job (paused waiting jobs count), else 0. Must be cheap (an existence
     * check), it runs whenever an exit_when_empty worker is idle. */
    int (*pending)(ln__jobs_be *be, const char *queue, int *pending);

    /* ---- Version 2: blocking wait (all five NULL, or all set). ----
     * A worker that found its queue empty sleeps in poll() on its eventfd
     * and on the fd of an armed wait instead of stepping every poll_ms. The
     * store signals "a job may be ready" (added, promoted, released,
     * resumed) or "the earliest delayed job is due at T"; a signal is
     * consumed by ONE waiting worker (the store wakes the next one when
     * that worker's take leaves jobs behind), and spurious signals are
     * allowed. Without these ops (SQLite) the worker polls as before. */

    /* Make a wait object for queue (called WITH the handle's mutex, at the
     * start of a worker run). It must not connect or block; *out is owned
     * by the caller until wait_close. LN_ENOMEM. */
    int (*wait_open)(ln__jobs_be *be, const char *queue, ln__jobs_wait **out);

    /* Start one wait of at most timeout_ms (>= 1) and return the fd the
     * caller polls for POLLIN (valid until the wait ends) and *limit_ms:
     * if no answer came that long from now, the connection is presumed
     * dead and the caller calls wait_cancel. Must not be called while a
     * wait is armed. Bounded: connects if needed within the store's
     * connect timeout. An error (unreachable store, in reconnect backoff)
     * means no wait is armed: the caller sleeps a little and steps. */
    int (*wait_arm)(ln__jobs_wait *w, int64_t timeout_ms, int *fd, int64_t *limit_ms);

    /* The fd is readable: read without blocking. LN__WAIT_PENDING (still
     * armed), or the wait ended: LN__WAIT_TIMEOUT, LN__WAIT_WOKEN with
     * *due_in_ms = 0 (look now) or ms until the signalled delayed job is
     * due (estimated with the host clock; the step corrects it), or an
     * error (connection lost or refused: dropped, the next arm
     * reconnects with backoff). */
    int (*wait_read)(ln__jobs_wait *w, int64_t *due_in_ms);

    /* Abandon an armed wait (no answer by limit_ms): drop its connection
     * so a late answer cannot desynchronise it. A signal the store had
     * already handed to this wait is lost (others see the queue at their
     * next timeout). No-op when not armed. */
    void (*wait_cancel)(ln__jobs_wait *w);

    /* Cancel if armed and free w (NULL is a no-op). */
    void (*wait_close)(ln__jobs_wait *w);

    /* ---- Version 2: pipelined steps (all five NULL, or all set). ----
     * The step op, split in two so that steps overlap the worker's own
     * work. Without these ops the worker calls step. */

    /* Make a pipe for queue (WITH the handle's mutex, at the start of a
     * worker run); must not connect or block. LN_ENOMEM. */
    int (*pipe_open)(ln__jobs_be *be, const char *queue, ln__jobs_pipe **out);

    /* Send step st (its inputs, as for step) without waiting for it. At
     * most LN__PIPE_DEPTH sent and not yet received; steps run in the
     * order sent, each as atomic as the step op. st and all it points to
     * stay valid and unchanged until its pipe_recv. On error nothing was
     * sent (the caller keeps its outcomes); p->errmsg says why. */
    int (*pipe_send)(ln__jobs_pipe *p, ln__jobs_step *st);

    /* Wait (at most the store's reply timeout) for the reply of the
     * OLDEST step sent and fill its outputs, with the step op's return
     * codes. After an error the step may or may not have happened (as
     * for a failed step op: record its outcomes again, a repeat reports
     * LN_ESTALE), and every step still in flight fails too (the
     * connection is dropped; the next send reconnects). */
    int (*pipe_recv)(ln__jobs_pipe *p, ln__jobs_step *st);

    /* Without blocking, with a step in flight: 1 if pipe_recv would not
     * wait for the store (the oldest reply is in, or an error is known),
     * else 0 and *fd to poll for POLLIN before calling pipe_recv (which
     * may still wait for the rest of a reply). */
    int (*pipe_poll)(ln__jobs_pipe *p, int *fd);

    /* Free p (NULL: no-op). Steps in flight are abandoned: their outcomes
     * may or may not be recorded, their takes lapse into stalled jobs. */
    void (*pipe_close)(ln__jobs_pipe *p);
};

/* Backend constructors. url is the whole URL the caller gave ("sqlite:..."
 * / "redis://..." / "unix:..."); opts is complete (defaults filled). On
 * success *out is the new instance. On failure *out is untouched, a detail
 * is written to errmsg (errmsg_size bytes, NUL-terminated) and a negative
 * code returned: LN_EINVAL for a malformed URL or an unknown parameter,
 * otherwise as the ops. */
int ln__jobs_sqlite_open(ln__jobs_be **out, const char *url,
                         const ln_jobs_opts *opts, char *errmsg,
                         size_t errmsg_size);

/* Implemented by src/jobs/redis.c; only called when LN_HAVE_REDIS is
 * defined (CMake defines it when hiredis is found and redis.c exists). */
int ln__jobs_redis_open(ln__jobs_be **out, const char *url,
                        const ln_jobs_opts *opts, char *errmsg,
                        size_t errmsg_size);

#endif /* LN_JOBS_BACKEND_H */
