/* backend.h - the store interface: what the jobs front (front/) calls and
 * a store (sqlite/, redis/) implements. Not API.
 *
 * Three method tables, as SQLite's sqlite3_vfs / sqlite3_io_methods:
 *  - ln__store_methods, on the instance (ln__jobs_be): every store op,
 *    and wait_open / pipe_open, which make the two objects below (NULL
 *    when the store has none);
 *  - ln__wait_methods, on a blocking wait for new work (ln__jobs_wait);
 *  - ln__pipe_methods, on a pipe of worker steps (ln__jobs_pipe).
 * The store table's members are grouped by concept (jobs, workers, flows,
 * schedulers, limits, events, metrics, admin); each store fills it with
 * designated initializers pointing straight at its functions, which take
 * (be, queue, ...) in the member's order. Each table has a version field,
 * bumped when a member is added or changes. Only the front calls them
 * (front/store.h is the worker's way in). A store includes this header,
 * model/ and the core's internal.h, nothing else of the wing.
 *
 * The rules every call obeys -- locking, fork, argument guarantees,
 * string ownership, return and error codes, the store's clock, job
 * identity, leases and tokens -- are in docs/internals/backend.md. In
 * short: a store op runs with the handle's mutex held, one at a time; a
 * wait or pipe method runs without it, by the one dispatcher that owns the
 * object; 0 or a negative LN_E* code, with the detail in errmsg
 * (ln__jobs_be_err); a failed op leaves the store unchanged.
 */
#ifndef LN_JOBS_BACKEND_H
#define LN_JOBS_BACKEND_H

#include "job_record.h"

#include <lanes.h>
#include <lanes/jobs.h>
#include <lanes/jobs_flows.h>

#include <stddef.h>
#include <stdint.h>

/* A table's version: a store built against another one is refused at open
 * (a stale build). docs/internals/backend.md keeps the history. */
#define LN__STORE_METHODS_VERSION 22
#define LN__WAIT_METHODS_VERSION 1
#define LN__PIPE_METHODS_VERSION 1
#define LN__EVENTS_METHODS_VERSION 1

/* Most steps a pipe keeps in flight. */
#define LN__PIPE_DEPTH 2

/* Most jobs and job schedulers one obliterate step removes (one Redis
 * script call, one SQLite transaction): as a drain's step. */
#define LN__OBLITERATE_STEP 1000

/* Most flow parents of its own queue that one job's removal (a drain, a
 * clean) takes with it up a chain, each released by the one below; the
 * parent above is released to wait instead. Flows are at most
 * LN_FLOW_DEPTH_MAX deep, so only hand-made chains reach it; it bounds a
 * call's work. lib_flow.lua's drop_job_hard has the same number. */
#define LN__PARENT_CLIMB_MAX (4 * LN_FLOW_DEPTH_MAX)
_Static_assert(LN__PARENT_CLIMB_MAX == 256, "lib_flow.lua's drop_job_hard spells it 256");

/* Most jobs one step of a retry of all finished jobs moves. */
#define LN__RETRY_STEP 1000

typedef struct ln__store_methods ln__store_methods;
typedef struct ln__wait_methods ln__wait_methods;
typedef struct ln__pipe_methods ln__pipe_methods;
typedef struct ln__events_methods ln__events_methods;
typedef struct ln__sched_new ln__sched_new; /* model/sched_record.h */

/* The first member of every backend instance: a backend allocates its own
 * struct with this at offset 0 and returns &self->base from open. */
struct ln__jobs_be {
    const ln__store_methods *methods;
    char errmsg[LN__JOBS_ERRMSG_MAX];  /* detail of the last failure */
    char warning[LN__JOBS_ERRMSG_MAX]; /* set at open, or "": a setting of
                                          the store that risks its data
                                          (ln_jobs_warning shows it) */
};

/* A blocking wait for new work on one queue; the backend's own struct has
 * this at offset 0. Owned by one worker run. */
typedef struct ln__jobs_wait {
    const ln__wait_methods *methods;
} ln__jobs_wait;

/* A pipe of worker steps on a connection of its own; the backend's own
 * struct has this at offset 0. Owned by one worker run. */
typedef struct ln__jobs_pipe {
    const ln__pipe_methods *methods;
    char errmsg[LN__JOBS_ERRMSG_MAX]; /* detail of the last failure */
} ln__jobs_pipe;

/* A follower of one queue's events on a connection of its own; the
 * backend's own struct has this at offset 0. Owned by one thread at a time
 * (the caller of ln_jobs_events_*); it borrows the instance's
 * configuration, so the handle outlives it. */
typedef struct ln__jobs_events {
    const ln__events_methods *methods;
    char errmsg[LN__JOBS_ERRMSG_MAX]; /* detail of the last failure */
} ln__jobs_events;

/* What a wait's read found. */
enum {
    LN__WAIT_PENDING = 0, /* no complete answer yet: poll the fd again */
    LN__WAIT_TIMEOUT = 1, /* the wait's timeout passed with no signal */
    LN__WAIT_WOKEN = 2    /* a signal: *due_in_ms says when to look */
};

/* One worker round trip: record outcomes, renew leases, promote due
 * delayed jobs, take new ones (the step method). */
typedef struct ln__jobs_step {
    /* in */
    ln__job_done *done; /* outcomes to record, may be NULL if ndone 0 */
    size_t ndone;
    ln__job_ref *renew; /* leases to extend by lease_ms */
    int *renew_rc;      /* out, one per renew: 0 or LN_ESTALE */
    size_t nrenew;
    size_t want;      /* take at most this many (0 = take none) */
    int64_t lease_ms; /* lease of taken and renewed jobs, > 0 */
    /* out */
    ln__job_taken *taken; /* array of capacity 'want' given by the front */
    size_t ntaken;
    int64_t next_due_ms; /* ms until the earliest delayed job of the queue
                            is due (0 = now), or -1 if none. Only required
                            when ntaken < want; backends that cannot tell
                            cheaply report -1. */
    /* in: > 0: count the completions and final failures recorded into the
     * queue's metrics keeping this many points (jobs.h "Metrics"); 0 off */
    unsigned metrics_max_points;
    /* Rate limits (docs/internals/ratelimit.md). */
    int64_t rate_max;         /* in: the worker's limiter, 0 = none */
    int64_t rate_duration_ms; /* in: its window, > 0 when rate_max is */
    int64_t limited_ms;       /* out: > 0 when the queue's rate limit (or a
                                 LN__DONE_LIMITED outcome of this step)
                                 stopped the take: ms until it lifts; the
                                 worker takes nothing meanwhile */
    /* in: 1 = take without writing the 'active' event of each
     * job taken (ln_worker_opts.no_active_event); every other event stays. */
    int no_active_event;
    /* in: the worker's retention (ln_worker_opts
     * remove_on_complete / remove_on_fail) for the jobs it completes /
     * fails for good whose own is LN_KEEP_ALL (not set). */
    ln_job_keep keep_complete, keep_fail;
    /* out (Redis with ln_jobs_opts.wait_replicas): the outcomes of this
     * step that WAIT did not confirm on the replicas; the step stands. */
    size_t unreplicated;
} ln__jobs_step;

/* What the limits method does. */
enum {
    LN__LIMITS_GET = 0,         /* out: max, duration_ms, concurrency */
    LN__LIMITS_SET_RATE = 1,    /* in: max, duration_ms (0, 0: clear) */
    LN__LIMITS_SET_CONCURRENCY, /* in: concurrency (0: clear) */
    LN__LIMITS_MANUAL,          /* in: ttl_ms (0: delete the counter) */
    LN__LIMITS_TTL              /* in: max (0: the global one); out: ttl_ms */
};
typedef struct ln__jobs_limits {
    int op; /* LN__LIMITS_* */
    int64_t max, duration_ms, concurrency, ttl_ms;
} ln__jobs_limits;

/* One node of a flow to add (validated by the front), in pre-order. */
typedef struct ln__flow_new {
    const char *queue;
    ln__job_new job;  /* job.opts has no dedup_id; job.id/existed are out */
    long parent;      /* index of the parent node (< this one's), -1: root */
    int on_fail;      /* LN__FLOW_* bits (0 on the root) */
    size_t nchildren; /* > 0: added in waiting-children */
} ln__flow_new;

/* What the edit method does (jobs_edit.h). */
enum {
    LN__EDIT_PRIORITY = 0,    /* in: id, priority, lifo */
    LN__EDIT_DELAY,           /* in: id, delay_ms */
    LN__EDIT_DATA,            /* in: id, data (data_len bytes of JSON) */
    LN__EDIT_DEDUP_GET,       /* in: dedup_id; out: job_id (ln__malloc'd) */
    LN__EDIT_DEDUP_REMOVE,    /* in: dedup_id; out: removed */
    LN__EDIT_PROMOTE_SOME,    /* in: max (1..1000); out: count, the delayed
                              jobs made ready, the first max by due time */
    LN__EDIT_PRIORITY_COUNTS, /* in: priorities[0..n); out: counts[0..n) */
    LN__EDIT_TRIM_EVENTS,     /* in: max (the length kept); out: count removed */
    LN__EDIT_ADD_LOG,         /* in: id, data (data_len bytes, a log line), max
                              (0, or the newest lines kept); out: count, the
                              job's lines after */
    LN__EDIT_CLEAR_LOGS,      /* in: id, max (0: none kept, else the newest kept) */
    LN__EDIT_DETACH           /* in: id; out: removed (1: it was a pending child) */
};
typedef struct ln__jobs_edit {
    int op; /* LN__EDIT_* */
    const char *id, *dedup_id, *data;
    size_t data_len;
    int priority, lifo;
    int64_t delay_ms;
    char *job_id; /* out, NULL when none */
    int removed;  /* out */
    size_t max, count, n;
    const int *priorities;
    uint64_t *counts;
} ln__jobs_edit;

/* ---- Store methods (the instance). WITH the handle's mutex. ---- */
struct ln__store_methods {
    /* ---- The store ---- */
    unsigned version; /* LN__STORE_METHODS_VERSION */
    const char *name; /* "sqlite", "redis" */
    /* Free the instance; forked = 1 in a child after fork(): free memory,
     * leave the parent's connection alone (no checkpoint, unlink, QUIT). */
    void (*close)(ln__jobs_be *be, int forked);
    /* jobs.h's ln_jobs_check: 0 or LN_ECORRUPT. */
    int (*check)(ln__jobs_be *be, int thorough);

    /* ---- Jobs: add, read, change ---- */
    /* Add n >= 1 jobs, all or nothing; fill jobs[i].id and .existed (an
     * existing opts.job_id is not changed; a held opts.dedup_id gives the
     * holder's id, docs/internals/backend.md). delay_ms > 0: delayed; else
     * priority > 0: prioritized; else waiting. */
    int (*add)(ln__jobs_be *be, const char *queue, ln__job_new *jobs, size_t n);
    /* Fill *info (zeroed) for job id; LN_ENOENT if none. */
    int (*get)(ln__jobs_be *be, const char *queue, const char *id, ln_job_info *info);
    /* Jobs per state (waiting/prioritized of a paused queue count as
     * paused); an unknown queue gives zeros. */
    int (*counts)(ln__jobs_be *be, const char *queue, ln_job_counts *counts);
    /* Up to limit (1..10000) jobs of state after offset, in jobs.h's
     * ln_jobs_list order; *out ln__malloc'd (NULL if *n == 0). */
    int (*list)(ln__jobs_be *be, const char *queue, int state, size_t offset, size_t limit,
                ln_job_info **out, size_t *n);
    /* Up to limit jobs of state after the row whose cursor is
     * after (not NULL or empty; the store made it, in list's cursor
     * field), in list's order, each with its cursor (ln__malloc'd);
     * LN_EINVAL for a cursor it did not make for state. */
    int (*list_after)(ln__jobs_be *be, const char *queue, int state, const char *after,
                      size_t limit, ln_job_info **out, size_t *n);
    /* A job's log lines, oldest first (ln__malloc'd); LN_ENOENT. */
    int (*logs)(ln__jobs_be *be, const char *queue, const char *id, char ***lines, size_t *n);
    /* One retry step (jobs.h's ln_jobs_retry_finished): finished job id of
     * state (LN_JOB_FAILED / LN_JOB_COMPLETED; the front checks it) back
     * to waiting with attempts_made = 0 (LN_ENOENT, LN_EINVAL: not in
     * state); or, id NULL, up to LN__RETRY_STEP jobs of state that finished
     * at or before *before_ms, oldest first, which the store sets to its
     * clock's now when < 0 (the front passes it on to the next steps).
     * *count: the jobs moved. */
    int (*retry)(ln__jobs_be *be, const char *queue, const char *id, int state, int64_t *before_ms,
                 size_t *count);
    /* Remove a job and its logs; LN_ENOENT, LN_EBUSY (active), LN_EINVAL
     * (a job scheduler's current iteration). */
    int (*remove)(ln__jobs_be *be, const char *queue, const char *id);
    /* Delayed job id to waiting / prioritized now, delay cleared;
     * LN_ENOENT, LN_EINVAL (not delayed). */
    int (*promote)(ln__jobs_be *be, const char *queue, const char *id);
    /* Cancel job id (jobs.h ln_jobs_cancel): a waiting,
     * prioritized or delayed job -> failed with reason (attempts_made
     * unchanged); an active one -> failed with attempts_made + 1, its
     * lease voided (every later op with the holder's token is
     * LN_ESTALE) and the store's cancel mark changed. LN_ENOENT,
     * LN_EINVAL (finished). One transaction / script. */
    int (*cancel)(ln__jobs_be *be, const char *queue, const char *id, const char *reason);
    /* One change of jobs_edit.h (e->op, arguments checked by
     * the front), one transaction / script: LN_ENOENT (no job id; for
     * LN__EDIT_DEDUP_GET: no holder), LN_EINVAL (the job's state refuses
     * it, errmsg names the state). */
    int (*edit)(ln__jobs_be *be, const char *queue, ln__jobs_edit *e);

    /* ---- Workers: the round trip and what runs beside it ---- */
    /* The worker round trip, one transaction where the store allows it, in
     * this order: record st->done (rc each), renew st->renew (renew_rc
     * each), then if want > 0 promote due delayed jobs and, unless paused,
     * take up to want in run order. Per-entry rcs tell what was stale; on
     * error st->ntaken is 0 (docs/internals/backend.md: what happened). */
    int (*step)(ln__jobs_be *be, const char *queue, ln__jobs_step *st);
    /* Active jobs whose lease expired: stalled + 1, then failed with
     * reason past max_stalled unless repeatable (an iteration of an
     * existing job scheduler), else back to waiting. */
    int (*recover_stalled)(ln__jobs_be *be, const char *queue, unsigned max_stalled,
                           const char *reason, size_t *requeued, size_t *failed);
    /* Give up n active jobs (graceful stop), one transaction; rc[i] is 0
     * or LN_ESTALE. */
    int (*release)(ln__jobs_be *be, const char *queue, const ln__job_ref *refs, int *rc, size_t n);
    /* Progress JSON or a log line on a job holding ref's token;
     * LN_ESTALE. */
    int (*progress)(ln__jobs_be *be, const char *queue, const ln__job_ref *ref, const char *json);
    int (*log)(ln__jobs_be *be, const char *queue, const ln__job_ref *ref, const char *line);
    /* *pending = 1 if any waiting, prioritized, delayed or active job;
     * cheap (an existence check). */
    int (*pending)(ln__jobs_be *be, const char *queue, int *pending);
    /* Make a wait / a pipe for queue, owned by the caller until its close.
     * Must not connect or block. NULL: the store has none (the front then
     * polls / gives its synchronous pipe). LN_ENOMEM. */
    int (*wait_open)(ln__jobs_be *be, const char *queue, ln__jobs_wait **out);
    int (*pipe_open)(ln__jobs_be *be, const char *queue, ln__jobs_pipe **out);
    /* Which of n jobs a worker holds are no longer active with their
     * token (canceled, or the lease lost): gone[i] = 1 for those, else
     * 0. *mark: the store's cancel mark the last call saw (-1 at
     * first); a backend may leave gone[] all 0 while the mark has not
     * changed, and updates it. Cheap when nothing was canceled: a worker
     * calls it every LN_JOBS_CANCEL_POLL_MS. */
    int (*cancel_poll)(ln__jobs_be *be, const char *queue, int64_t *mark, const ln__job_ref *refs,
                       int *gone, size_t n);
    /* A worker run's heartbeat on queue, at most every
     * LN_JOB_WORKER_BEAT_MS: *id 0 = the run starts (register it, set
     * *id > 0); else it is alive (register it again if its entry was
     * dropped); leaving 1 = it ends (unregister, *id = 0). One bounded
     * transaction. NULL: the store knows its workers otherwise (Redis: a
     * run's named connection). */
    int (*worker_beat)(ln__jobs_be *be, const char *queue, int64_t *id, int leaving);
    /* The workers connected to queue now (jobs.h
     * ln_jobs_workers), at most max, oldest first; *out ln__malloc'd with
     * ln__malloc'd strings (NULL if *n == 0). */
    int (*workers)(ln__jobs_be *be, const char *queue, size_t max, ln_worker_info **out, size_t *n);

    /* ---- Flows ---- */
    /* Add the n >= 2 nodes of a flow, all or nothing, filling
     * nodes[i].job.id; a custom id that exists refuses the flow
     * (LN_EINVAL). the root's opts.parent_* (only the root's)
     * make it a pending child of that existing job (LN_ENOENT: none); such
     * a flow may have n = 1. */
    int (*add_flow)(ln__jobs_be *be, ln__flow_new *nodes, size_t n);
    /* The parent and children of job id (jobs.h ln_jobs_children), *out
     * zeroed by the caller, strings ln__malloc'd; LN_ENOENT. */
    int (*children)(ln__jobs_be *be, const char *queue, const char *id, ln_job_children *out);
    /* Remove job id and its subtree of children (jobs.h
     * ln_jobs_remove_tree), all or nothing, refusing a subtree of more than
     * max entries (LN_ETOOBIG); *removed: the jobs removed (0 on error). */
    int (*remove_tree)(ln__jobs_be *be, const char *queue, const char *id, size_t max,
                       size_t *removed);
    /* Active job ref of queue (held with ref->token) to
     * waiting-children if it has pending dependencies (jobs_flows.h
     * ln_job_wait_children): 1 moved, 0 none pending (nothing changed),
     * LN_ESTALE (not active with that token), LN_EFAILED (a fail-parent
     * child failed). */
    int (*wait_children)(ln__jobs_be *be, const char *queue, const ln__job_ref *ref);
    /* As wait_children, but only child child_id of
     * child_queue pending counts (ln_job_wait_child): 0 when it is not a
     * pending dependency of the job (or does not exist). */
    int (*wait_child)(ln__jobs_be *be, const char *queue, const ln__job_ref *ref,
                      const char *child_queue, const char *child_id);
    /* The unprocessed children of job id and their
     * unprocessed subtrees (jobs_flows.h
     * ln_jobs_remove_unprocessed_children), the job kept, all or nothing,
     * at most max entries (LN_ETOOBIG); an active child is kept with its
     * subtree; *removed as remove_tree's. */
    int (*remove_unprocessed)(ln__jobs_be *be, const char *queue, const char *id, size_t max,
                              size_t *removed);

    /* ---- Job schedulers (model/sched_record.h, docs/internals/schedules.md) ---- */
    /* job schedulers (sched_record.h, docs/internals/schedules.md).
     * upsert: create or replace s and its pending iteration; *job_id the
     * iteration's id (ln__malloc'd) or NULL when none was made (nothing
     * changed); LN_EEXIST: that id is taken by a job not pending. */
    int (*sched_upsert)(ln__jobs_be *be, const char *queue, const ln__sched_new *s, char **job_id);
    /* Remove scheduler id and its iteration if delayed; LN_ENOENT. */
    int (*sched_remove)(ln__jobs_be *be, const char *queue, const char *id);
    /* Fill *out (zeroed); LN_ENOENT. */
    int (*sched_get)(ln__jobs_be *be, const char *queue, const char *id, ln_job_scheduler *out);
    /* Up to limit (1..1000) by next time after offset; *out ln__malloc'd. */
    int (*sched_list)(ln__jobs_be *be, const char *queue, size_t offset, size_t limit,
                      ln_job_scheduler **out, size_t *n);
    /* A worker took job_id, an iteration id ("repeat:<sid>:<ms>"): if it
     * is its scheduler's current iteration, make the next. NULL: the
     * store does that inside its take (step). */
    int (*sched_taken)(ln__jobs_be *be, const char *queue, const char *job_id);

    /* ---- Rate limits and global concurrency ---- */
    /* Read or change queue's rate limits and global concurrency
     * (l->op; arguments checked by the front). */
    int (*limits)(ln__jobs_be *be, const char *queue, ln__jobs_limits *l);

    /* ---- Events ---- */
    /* A follower of queue's events from 'from' (NULL or "$": after the
     * newest now, fixed before this returns; "0": the oldest kept; else an
     * event id). May connect. NULL: the store has none (LN_ENOTSUP). */
    int (*events_open)(ln__jobs_be *be, const char *queue, const char *from, ln__jobs_events **out);

    /* ---- Metrics ---- */
    /* Queue's metrics of type (LN_JOB_COMPLETED or
     * LN_JOB_FAILED) into *out (zeroed): the points start..end by LRANGE's
     * rule, at most LN_JOB_METRICS_POINTS_MAX, data ln__malloc'd. */
    int (*metrics)(ln__jobs_be *be, const char *queue, int type, int64_t start, int64_t end,
                   ln_job_metrics *out);

    /* ---- Admin: queues as a whole ---- */
    /* The store's queue names, at most max (any order; the
     * front sorts them), ln__malloc'd as logs' lines. */
    int (*queues)(ln__jobs_be *be, size_t max, char ***names, size_t *n);
    /* Set or clear the paused flag (idempotent); read it. */
    int (*pause)(ln__jobs_be *be, const char *queue, int paused);
    int (*is_paused)(ln__jobs_be *be, const char *queue, int *paused);
    /* Remove completed or failed jobs finished over age_ms ago (< 0: any)
     * but the newest 'keep'. */
    int (*clean)(ln__jobs_be *be, const char *queue, int state, int64_t age_ms, uint64_t keep,
                 size_t *removed);
    /* Remove every waiting, prioritized and delayed job. */
    int (*drain)(ln__jobs_be *be, const char *queue, size_t *removed);
    /* One step of jobs.h's ln_jobs_obliterate (the front
     * paused queue first and repeats the steps, bounding their number):
     * LN_EBUSY and nothing changed unless queue is still paused and, with
     * force 0, has no active job. Else, atomically, up to
     * LN__OBLITERATE_STEP of its jobs and schedulers go (*removed grows by
     * the jobs, *more = 1), or, none being left, the queue's own data
     * (*more = 0). left (may be NULL): the jobs and schedulers the queue
     * had when the step began. */
    int (*obliterate)(ln__jobs_be *be, const char *queue, int force, int64_t *left, size_t *removed,
                      int *more);
};

/* ---- Events methods. WITHOUT the mutex, by the follower's owner. ---- */
struct ln__events_methods {
    unsigned version; /* LN__EVENTS_METHODS_VERSION */
    /* The next event into *ev (zeroed by the caller), waiting up to
     * timeout_ms (0: no wait, < 0: no limit), in slices short enough that
     * a store error is seen within a second. 0, LN_ETIMEDOUT or an error
     * (errmsg set). */
    int (*next)(ln__jobs_events *e, int64_t timeout_ms, ln_job_event *ev);
    void (*close)(ln__jobs_events *e);
};

/* ---- Wait methods. WITHOUT the mutex, by the wait's owner only. ---- */
struct ln__wait_methods {
    unsigned version; /* LN__WAIT_METHODS_VERSION */
    /* Start one wait of at most timeout_ms (>= 1): *fd to poll for POLLIN,
     * *limit_ms after which no answer means a dead connection (cancel).
     * Not while armed. An error: no wait is armed. */
    int (*arm)(ln__jobs_wait *w, int64_t timeout_ms, int *fd, int64_t *limit_ms);
    /* The fd is readable: LN__WAIT_PENDING (still armed), _TIMEOUT, _WOKEN
     * with *due_in_ms (0: look now), or an error (connection dropped). */
    int (*read)(ln__jobs_wait *w, int64_t *due_in_ms);
    /* Abandon an armed wait (drop its connection); no-op when not armed. */
    void (*cancel)(ln__jobs_wait *w);
    /* Cancel if armed and free w. */
    void (*close)(ln__jobs_wait *w);
};

/* ---- Pipe methods. WITHOUT the mutex, by the pipe's owner only. ---- */
struct ln__pipe_methods {
    unsigned version; /* LN__PIPE_METHODS_VERSION */
    unsigned depth;   /* most steps in flight, 1..LN__PIPE_DEPTH */
    /* Send step st without waiting; steps run in the order sent. st stays
     * valid and unchanged until its recv. On error nothing was sent. */
    int (*send)(ln__jobs_pipe *p, ln__jobs_step *st);
    /* Wait for the reply of the OLDEST step sent and fill its outputs. On
     * error the step may or may not have happened, and every step still in
     * flight fails too. */
    int (*recv)(ln__jobs_pipe *p, ln__jobs_step *st);
    /* With a step in flight, without blocking: 1 if recv would not wait,
     * else 0 and *fd to poll for POLLIN. */
    int (*poll)(ln__jobs_pipe *p, int *fd);
    /* Free p; steps in flight are abandoned. */
    void (*close)(ln__jobs_pipe *p);
};

/* Write printf-style detail to be->errmsg and return code (for
 * `return ln__jobs_be_err(be, LN_EBACKEND, "...: %s", sqlite3_errmsg(db));`). */
int ln__jobs_be_err(ln__jobs_be *be, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Backend constructors. url is the caller's whole URL; opts is complete.
 * On failure *out is untouched, the detail is in errmsg and a negative
 * code returned (LN_EINVAL: malformed URL or unknown parameter). */
int ln__jobs_sqlite_open(ln__jobs_be **out, const char *url, const ln_jobs_opts *opts, char *errmsg,
                         size_t errmsg_size);
/* Only when LN_HAVE_REDIS is defined (built with hiredis). */
int ln__jobs_redis_open(ln__jobs_be **out, const char *url, const ln_jobs_opts *opts, char *errmsg,
                        size_t errmsg_size);
/* Only when LN_HAVE_POSTGRES is defined (built with libpq). */
int ln__jobs_postgres_open(ln__jobs_be **out, const char *url, const ln_jobs_opts *opts,
                           char *errmsg, size_t errmsg_size);

#endif /* LN_JOBS_BACKEND_H */
