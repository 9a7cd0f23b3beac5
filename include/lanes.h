/* lanes.h - the public core API of liblanes: a worker-thread pool with lanes,
 * pluggable task queues, futures, groups, rolling concurrency (ln_map,
 * ln_limiter), event-loop completions and per-lane statistics.
 *
 * This header is the specification. Every function says what it does, what
 * it returns, who owns each pointer and which threads may call it.
 *
 * Conventions
 *  - Every fallible function returns int: 0 on success or a negative LN_E*
 *    code. ln_strerror() gives static text for a code, ln_err_name() its name.
 *  - Handles are opaque. Every *_destroy(NULL) / *_release(NULL) is a no-op.
 *  - Options structs are filled with defaults by ln_*_opts_init() before the
 *    caller changes fields, so new fields can be appended later.
 *  - Unless a comment says otherwise, a function may be called from any
 *    thread, and callbacks run on a lane's worker thread without any lanes
 *    lock held.
 */
#ifndef LANES_H
#define LANES_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(LN_BUILDING_SHARED) && defined(__GNUC__)
#define LN_EXTERN __attribute__((visibility("default")))
#else
#define LN_EXTERN /* nothing */
#endif

/* ------------------------------------------------------------------------ */
/* Version                                                                   */

#define LN_VERSION_MAJOR 0
#define LN_VERSION_MINOR 1
#define LN_VERSION_PATCH 0
#define LN_VERSION_HEX ((LN_VERSION_MAJOR << 16) | (LN_VERSION_MINOR << 8) | LN_VERSION_PATCH)
#define LN_AT_LEAST_VERSION(maj, min, pat)                                                         \
    (LN_VERSION_HEX >= (((maj) << 16) | ((min) << 8) | (pat)))

/* "0.1.0". Static storage. */
LN_EXTERN const char *ln_version_string(void);
/* LN_VERSION_HEX of the library actually linked. */
LN_EXTERN unsigned ln_version(void);

/* ------------------------------------------------------------------------ */
/* Errors: one table. Codes are negative and never renumbered; errno values
 * are reused where they fit, the rest live at -4000 and below.             */

#define LN_ERRNO_MAP(XX)                                                                           \
    XX(EINVAL, -EINVAL, "invalid argument")                                                        \
    XX(ENOMEM, -ENOMEM, "out of memory")                                                           \
    XX(EAGAIN, -EAGAIN, "resource temporarily unavailable (queue full)")                           \
    XX(ECANCELED, -ECANCELED, "operation canceled")                                                \
    XX(EBUSY, -EBUSY, "resource busy (task already started)")                                      \
    XX(ENOENT, -ENOENT, "no such entry")                                                           \
    XX(EEXIST, -EEXIST, "entry already exists")                                                    \
    XX(ETIMEDOUT, -ETIMEDOUT, "operation timed out")                                               \
    XX(EIO, -EIO, "i/o error")                                                                     \
    XX(ENOSPC, -ENOSPC, "no space left on device")                                                 \
    XX(EACCES, -EACCES, "permission denied")                                                       \
    XX(ENOTSUP, -ENOTSUP, "operation not supported")                                               \
    XX(ERANGE, -ERANGE, "value out of range")                                                      \
    XX(ESHUTDOWN, -ESHUTDOWN, "pool or worker is shutting down")                                   \
    XX(ESTALE, -ESTALE, "lease lost: another worker owns the job now")                             \
    XX(ECONNREFUSED, -ECONNREFUSED, "connection refused")                                          \
    XX(EBACKEND, -4001, "backend error (see the handle's error message)")                          \
    XX(EJSON, -4002, "invalid JSON")                                                               \
    XX(ECORRUPT, -4003, "store is corrupt or not a lanes store")                                   \
    XX(EFORK, -4004, "handle used in a child process after fork()")                                \
    XX(ETOOBIG, -4005, "value too large")                                                          \
    XX(EFAILED, -4006, "task or job failed")

typedef enum ln_errno {
#define LN_XX_(name, value, text) LN_##name = (value),
    LN_ERRNO_MAP(LN_XX_)
#undef LN_XX_
        LN_OK = 0
} ln_errno;

/* Static text for err, e.g. "invalid argument"; "unknown error" otherwise. */
LN_EXTERN const char *ln_strerror(int err);
/* Static name for err, e.g. "LN_EINVAL"; "LN_UNKNOWN" otherwise. */
LN_EXTERN const char *ln_err_name(int err);

/* ------------------------------------------------------------------------ */
/* Allocator hook (libuv uv_replace_allocator). Call before creating any
 * lanes object, or while none exists; all four functions must be given.
 * Returns 0 or LN_EINVAL. Not thread-safe with other lanes calls.
 * ln_reset_allocator() restores libc's functions.                            */

typedef void *(*ln_malloc_fn)(size_t size);
typedef void *(*ln_realloc_fn)(void *ptr, size_t size);
typedef void *(*ln_calloc_fn)(size_t count, size_t size);
typedef void (*ln_free_fn)(void *ptr);

LN_EXTERN int ln_set_allocator(ln_malloc_fn m, ln_realloc_fn r, ln_calloc_fn c, ln_free_fn f);
LN_EXTERN void ln_reset_allocator(void);

/* ------------------------------------------------------------------------ */
/* Handles and callback types                                                */

typedef struct ln_pool ln_pool;
typedef struct ln_task ln_task;
typedef struct ln_group ln_group;
typedef struct ln_limiter ln_limiter;
typedef struct ln_done_token ln_done_token;

/* The work of a task. Runs once on a worker thread of the chosen lane; its
 * return value is what ln_task_wait() hands back. */
typedef void *(*ln_fn)(void *arg);

/* Completion of an ln_submit_cb() task, run by ln_pool_run_completions() on
 * the caller's (event loop's) thread. status is 0 (result valid) or
 * LN_ECANCELED (the task never ran: canceled or the pool was destroyed). */
typedef void (*ln_complete_fn)(void *arg, void *result, int status);

/* ------------------------------------------------------------------------ */
/* Task queues: pluggable per lane (Piscina's taskQueue).
 *
 * A queue stores ln_queue_item values by copy. Its functions are always
 * called with the owning lane's lock held, so an implementation needs no
 * locking of its own, and they are never called concurrently for one state.
 * They must not call back into lanes or block.                              */

typedef struct ln_queue_item {
    ln_fn fn;
    void *arg;
    void *owner;     /* lanes' bookkeeping; copy, never interpret */
    uint64_t enq_ns; /* lanes' bookkeeping; copy, never interpret */
} ln_queue_item;

#define LN_QUEUE_OPS_VERSION 1

typedef struct ln_queue_ops {
    unsigned version; /* LN_QUEUE_OPS_VERSION */
    const char *name; /* short name for stats and errors, e.g. "ring" */
    /* Create an empty queue in *state. 0, or LN_ENOMEM. */
    int (*create)(void **state);
    /* Free the queue; any items still in it are dropped (lanes empties the
     * queue itself before calling this). */
    void (*destroy)(void *state);
    /* Append a copy of *item at the tail. 0, or LN_ENOMEM (nothing added). */
    int (*push)(void *state, const ln_queue_item *item);
    /* Remove the head into *out: 1 if an item was taken, 0 if empty. */
    int (*shift)(void *state, ln_queue_item *out);
    /* Number of items stored. */
    size_t (*size)(const void *state);
} ln_queue_ops;

/* Ring of fixed-size chunks (Piscina's FixedQueue): the default. */
LN_EXTERN extern const ln_queue_ops ln_queue_ring;
/* Linked list of individually allocated nodes (Piscina's array queue). */
LN_EXTERN extern const ln_queue_ops ln_queue_list;

/* ------------------------------------------------------------------------ */
/* Pool and lanes                                                            */

enum { LN_LANE_CPU = 0, LN_LANE_IO = 1 };
#define LN_MAX_LANES 16

/* A lane whose thread count is fixed (min == max), unbounded, and using a
 * built-in queue takes submissions through a lock-free ring of 1024 slots
 * in front of its queue; the queue then holds only the overflow, in the
 * same FIFO order. Other lanes use their queue under the lane's lock.
 * Such a lane also gives each worker a deque for the group tasks it forks
 * on that lane (ln_group_submit), run newest first by that worker and
 * stolen oldest first by the lane's other workers. */
typedef struct ln_lane_opts {
    const char *name;          /* copied; NULL = "lane<N>" */
    unsigned min_threads;      /* started at create, never retired */
    unsigned max_threads;      /* >= min_threads, >= 1; grown on demand:
                                  when queued tasks have waited ~100 us
                                  while every thread awake runs a task */
    unsigned idle_timeout_ms;  /* surplus thread exits after this idle time */
    const ln_queue_ops *queue; /* NULL = &ln_queue_ring; must outlive pool */
    size_t max_queue;          /* 0 = unbounded; else submit blocks or
                                  returns LN_EAGAIN when this many wait */
} ln_lane_opts;

/* Per-pool behaviour when a bounded lane is full. */
enum { LN_FULL_FAIL = 0, LN_FULL_BLOCK = 1 };

/* Per-pool task timing, for the wait and run histograms of ln_pool_stats.
 * SAMPLED (the default) times every task, except while a lane's workers
 * run batches of short tasks (under 20 us each on average) or its locked
 * queue holds 64 tasks or more: then one task in 16 per submitting thread
 * is timed, so a stream of tiny tasks does not
 * pay two clock reads each; tasks a worker forks into its own deque
 * (ln_group_submit from a task, to its own fixed lane) are always timed
 * one in 16. The histograms are then a sample (their count
 * is the number of tasks timed; their max is the largest sampled). ALL
 * times every task; OFF keeps the counters only. Busy time (utilization)
 * is measured per batch (two clock reads) in every mode. */
enum { LN_TIMING_OFF = 0, LN_TIMING_SAMPLED = 1, LN_TIMING_ALL = 2 };

typedef struct ln_pool_opts {
    unsigned nlanes;                  /* 1..LN_MAX_LANES; default 2 */
    ln_lane_opts lanes[LN_MAX_LANES]; /* lanes[0] CPU, lanes[1] I/O */
    int when_full;                    /* LN_FULL_FAIL (default) or _BLOCK */
    unsigned timing;                  /* LN_TIMING_SAMPLED (default), _ALL or
                                          _OFF: see above */
    unsigned spin_us;                 /* how long an idle worker polls before
                                          sleeping; default 50 */
} ln_pool_opts;

/* Defaults: lanes[0] "cpu" with min = max = online CPUs, or LANES_THREADS
 * (1..1024) when set; lanes[1] "io" with min 1, max 4, idle 10 s. Both use
 * the ring queue and are unbounded. Not thread-safe only for *opts. */
LN_EXTERN void ln_pool_opts_init(ln_pool_opts *opts);

/* Create a pool and start each lane's min_threads workers. opts NULL means
 * defaults. On success *out owns the pool (free with ln_pool_destroy).
 * LN_EINVAL for bad opts, LN_ENOMEM, LN_EAGAIN if a thread cannot start. */
LN_EXTERN int ln_pool_create(ln_pool **out, const ln_pool_opts *opts);

/* Stop the pool: tasks already running finish, queued tasks are canceled
 * (their waiters get LN_ECANCELED, their completions fire with
 * LN_ECANCELED), then every worker is joined and the pool freed. Must not be
 * called from a worker of this pool. Task handles and groups stay valid and
 * must still be released / destroyed by their owners. */
LN_EXTERN void ln_pool_destroy(ln_pool *pool);

/* Wait until the pool is idle: a moment when every task accepted so far
 * (all lanes, including tasks submitted meanwhile) has finished or been
 * canceled. Tasks that keep submitting successors keep it waiting.
 * 0, LN_EINVAL, or LN_EBUSY if called from a worker of this pool (it would
 * wait for itself). */
LN_EXTERN int ln_pool_drain(ln_pool *pool);

/* Number of lanes, and a lane's index by name (LN_ENOENT if none). */
LN_EXTERN int ln_pool_lanes(const ln_pool *pool);
LN_EXTERN int ln_pool_lane_index(const ln_pool *pool, const char *name);

/* ------------------------------------------------------------------------ */
/* Tasks (futures)                                                           */

/* Flags for the *_ex submit calls. */
enum {
    LN_SUBMIT_DEFAULT = 0, /* pool's when_full behaviour */
    LN_SUBMIT_NOWAIT = 1,  /* bounded lane full: return LN_EAGAIN */
    LN_SUBMIT_WAIT = 2     /* bounded lane full: block until there is room */
};

/* Queue fn(arg) on lane. If task is not NULL, *task receives a handle the
 * caller owns and must pass to ln_task_release(); if NULL, the task is
 * fire-and-forget. 0; LN_EINVAL (NULL pool/fn, bad lane); LN_EAGAIN (lane
 * full and not blocking -- also for LN_SUBMIT_WAIT from a worker of that
 * same lane, which could otherwise wait for itself); LN_ESHUTDOWN (pool
 * being destroyed); LN_ENOMEM. On error nothing was queued and *task is
 * unchanged. A canceled task keeps its queue slot (and counts against
 * max_queue) until a worker reaches and drops it. */
LN_EXTERN int ln_submit(ln_pool *pool, int lane, ln_fn fn, void *arg, ln_task **task);
LN_EXTERN int ln_submit_ex(ln_pool *pool, int lane, ln_fn fn, void *arg, unsigned flags,
                           ln_task **task);

/* Wait until the task has finished; *result (if result is not NULL) gets the
 * return value of fn. 0, LN_ECANCELED if it never ran, LN_EINVAL. Any
 * thread, any number of times, until released.
 * From a worker of the task's pool (inside a task) waiting for a task of
 * its own lane, the wait helps: until the task is final, the worker runs
 * queued tasks of its own lane (so a task may wait for one queued behind
 * it on its own lane), and naps when there are none. A wait for a task of
 * another lane blocks, running nothing: a task that holds a mutex while it
 * waits for an I/O task never runs an unrelated task that takes it. Helping waits nest at most 64 deep on one worker; past
 * that a task wait only naps until the task is final (it then relies on
 * the lane's other workers or another lane). See ln_group_wait for what
 * helping costs a lane's latency. */
LN_EXTERN int ln_task_wait(ln_task *task, void **result);

/* Like ln_task_wait but gives up after timeout_ms: LN_ETIMEDOUT (a helping
 * wait returns only between the tasks it runs, so it can be late by the
 * longest of them). */
LN_EXTERN int ln_task_wait_for(ln_task *task, unsigned timeout_ms, void **result);

/* Remove a task that has not started: 0 (also if already canceled), then a
 * later wait returns LN_ECANCELED. LN_EBUSY once it has started. O(1). */
LN_EXTERN int ln_task_cancel(ln_task *task);

/* Non-blocking: 1 if the task has finished or was canceled, 0 if not,
 * LN_EINVAL for NULL. */
LN_EXTERN int ln_task_done(const ln_task *task);

/* Drop the caller's handle. The task itself still runs (unless canceled). */
LN_EXTERN void ln_task_release(ln_task *task);

/* ------------------------------------------------------------------------ */
/* Groups: wait for a batch without a handle per task (the fast path).       */

/* Create a group that submits to pool. Submitting needs the pool alive;
 * waiting and destroying do not, so a group may be waited on (it then
 * reports LN_ECANCELED for tasks the pool's destroy canceled) and destroyed
 * after the pool. 0, LN_EINVAL, LN_ENOMEM. */
LN_EXTERN int ln_group_create(ln_group **out, ln_pool *pool);

/* Like ln_submit(pool, lane, fn, arg, NULL) but counted in the group.
 * Any thread. Same errors as ln_submit. Fork-join: from a worker of a
 * fixed lane (the CPU lane) to that same lane, the task goes to the
 * worker's own deque, not the lane's shared FIFO: that worker runs its
 * newest first (a joining task runs its own children, depth first), idle
 * workers of the same lane steal the oldest. Other lanes never see it. */
LN_EXTERN int ln_group_submit(ln_group *group, int lane, ln_fn fn, void *arg);
LN_EXTERN int ln_group_submit_ex(ln_group *group, int lane, ln_fn fn, void *arg, unsigned flags);

/* Queue fn(args[i]) for i in 0..n-1 on lane, counted in the group: the
 * fast way to submit an array of work (on a fixed lane, many ring slots are
 * claimed at once and the clock is read once for the batch). Tasks start in
 * args order. 0 when all n were queued; else the error that stopped it,
 * and *queued (if not NULL) says how many, from args[0], were queued and
 * will run. args is read during the call only. */
LN_EXTERN int ln_group_submit_batch(ln_group *group, int lane, ln_fn fn, void *const *args,
                                    size_t n, size_t *queued);

/* Wait until the group's unfinished count is zero: every task submitted to
 * it has finished, including tasks that its tasks submitted to it during
 * the wait (a task that adds children before it returns keeps the wait
 * going until they are done too). 0 if all ran, LN_ECANCELED if any was
 * canceled (pool destroyed), LN_EINVAL. A group that another thread keeps
 * feeding keeps its waiter waiting, like ln_pool_drain.
 *
 * Why children are covered (memory order): a submit counts the task
 * (relaxed) before it queues it, and a worker reports a finished task
 * under the group's mutex after the task function returned. So a child's
 * count is sequenced before its parent's report, which the mutex's
 * unlock/lock orders before the waiter's check of "finished == submitted"
 * made under the same mutex: a waiter that sees the parent finished also
 * sees every child the parent added, and cannot end while one is pending.
 * (Submits by threads outside the group's tasks, racing with the wait,
 * are covered only if counted before the check.)
 *
 * From a worker of the group's pool (inside a task) whose lane the group
 * has had tasks submitted to, the wait helps instead of blocking, so
 * nested fork-join never deadlocks, whatever the thread count (a group
 * whose tasks are all on other lanes is waited for by blocking, running
 * nothing; exception: children submitted with ln_group_submit_batch go to
 * the lane's queue, not the worker's deque, so past the depth bound below
 * a wait does not find them, and a fork tree that batches its children
 * can deadlock there): until the group is done, the worker runs queued tasks of its own
 * lane -- its own deque's newest (its children), the lane's shared queue,
 * then the oldest of another worker's deque of the same lane; never a task
 * of another lane -- and naps (20 us, doubling up to 0.5 ms) when there is none.
 * Helping waits nest at most 64 deep on one worker; past that a wait runs
 * only this group's own queued tasks (so recursion goes as deep as the
 * program's fork tree, no deeper) and otherwise naps. That guarantee is
 * for fixed lanes (min == max threads, unbounded, a built-in queue: the
 * CPU lane), which have the deques; on other lanes forks go to the lane's
 * queue, helping takes the oldest first, and a fork tree wide and deep
 * enough to put every thread of the lane past 64 nested waits can still
 * deadlock (a growing lane first grows to max_threads). Latency: a helping
 * wait returns only when the task it is running returns, so a task that
 * waits may end later than its group by the length of an unrelated task
 * of its lane, and a lane's queued tasks may run on a worker whose task is
 * waiting (earlier than they would otherwise). */
LN_EXTERN int ln_group_wait(ln_group *group);

/* Counts: tasks submitted, and finished (ran or canceled) so far. */
LN_EXTERN int ln_group_counts(const ln_group *group, uint64_t *submitted, uint64_t *finished);

/* Wait for the group's tasks (as ln_group_wait, helping when called from a
 * worker of the pool, so a task may destroy its group without waiting
 * first), then free it. */
LN_EXTERN void ln_group_destroy(ln_group *group);

/* ------------------------------------------------------------------------ */
/* Event-loop completions: a file descriptor that becomes readable when
 * completions of ln_submit_cb() tasks are ready, and a call that runs them on
 * the caller's thread (see include/lanes/uv.h for libuv).                   */

/* Queue fn(arg) on lane; when it has finished (or was canceled), done(arg,
 * result, status) is run by the next ln_pool_run_completions() call.
 * Exactly one completion per accepted task. Errors as ln_submit, and then
 * done never runs. task may be NULL. */
LN_EXTERN int ln_submit_cb(ln_pool *pool, int lane, ln_fn fn, void *arg, ln_complete_fn done,
                           ln_task **task);

/* A descriptor (an eventfd) that polls readable while completions are
 * pending. Owned by the pool; do not close or read it. Returns the fd (>= 0)
 * or LN_EINVAL. */
LN_EXTERN int ln_pool_completion_fd(ln_pool *pool);

/* Run every pending completion on the calling thread, and clear the fd's
 * readiness. Returns the number run (>= 0) or LN_EINVAL. Call from one
 * thread at a time (the loop thread). Completions pending when the pool is
 * destroyed are run by ln_pool_destroy itself. */
LN_EXTERN int ln_pool_run_completions(ln_pool *pool);

/* ------------------------------------------------------------------------ */
/* Statistics (per lane)                                                     */

typedef struct ln_latency {
    uint64_t count; /* tasks timed (see LN_TIMING_SAMPLED) */
    uint64_t p50_ns, p90_ns, p99_ns, max_ns, mean_ns;
} ln_latency;

typedef struct ln_lane_stats {
    char name[32];
    unsigned threads;     /* workers alive now */
    unsigned busy;        /* workers running a task now */
    uint64_t submitted;   /* tasks accepted */
    uint64_t completed;   /* tasks that ran to the end */
    uint64_t canceled;    /* tasks canceled before they started */
    uint64_t queued;      /* tasks waiting now */
    uint64_t peak_queued; /* highest 'queued' seen */
    double utilization;   /* busy time / (thread time alive), 0..1 */
    ln_latency wait;      /* submit -> start (when timing is on) */
    ln_latency run;       /* start -> end (when timing is on) */
    unsigned min_threads; /* the lane's configuration */
    unsigned max_threads;
} ln_lane_stats;

/* Fill *out for lane. 0, LN_EINVAL, LN_ENOMEM. Workers update the counters
 * once per batch of tasks, so right after a task or group wait they may lag
 * by a batch; after ln_pool_drain they are exact. */
LN_EXTERN int ln_pool_stats(ln_pool *pool, int lane, ln_lane_stats *out);

/* Seconds-free monotonic clock used by lanes, in nanoseconds. */
LN_EXTERN uint64_t ln_now_ns(void);

/* ------------------------------------------------------------------------ */
/* ln_map: rolling concurrency over n items on a pool lane.                  */

typedef int (*ln_map_fn)(size_t index, void *ctx);
typedef struct ln_map_stop ln_map_stop;

/* Result codes stored per item in ln_map_result.codes: fn's return value
 * (0 = success, anything else = failure), or LN_MAP_NOT_RUN. */
#define LN_MAP_NOT_RUN (-4100)

typedef struct ln_map_opts {
    int lane;             /* default LN_LANE_CPU */
    unsigned concurrency; /* max calls in flight; 0 = lane's max_threads */
    int stop_on_error;    /* 1: start nothing new after the first failure */
    /* Optional progress hooks, called on the worker thread. */
    void (*on_start)(size_t index, void *ctx);
    void (*on_finish)(size_t index, int code, void *ctx);
    /* Optional: a stop handle another thread may trigger (ln_map_stop_*). */
    ln_map_stop *stop;
} ln_map_opts;

typedef struct ln_map_result {
    int *codes;             /* in: NULL (keep counts only) or a caller-owned
                               array of n ints; out: each item's code in
                               index order */
    size_t ran;             /* items whose fn was called */
    size_t failed;          /* items whose fn returned non-zero */
    size_t not_run;         /* items never started (stop_on_error / stop) */
    size_t first_failed;    /* lowest failing index, or (size_t)-1 */
    unsigned max_in_flight; /* highest number of rails running at once (a
                               rail runs one call at a time, so this is >=
                               the calls in flight and <= concurrency) */
} ln_map_result;

LN_EXTERN void ln_map_opts_init(ln_map_opts *opts);

/* Run fn(i, ctx) for i in 0..n-1 on opts->lane with at most
 * opts->concurrency calls in flight, refilling each free rail at once
 * (concurrency 0 = the lane's max_threads). Blocks until all started calls
 * have returned. result may be NULL; if result->codes is non-NULL it must
 * hold n ints. Items that take >= 2 us are claimed one by one in index
 * order; faster ones up to 64 at a time per rail, so after a stop, items a
 * rail had claimed but not started count as not run. If some rails cannot
 * be queued (bounded lane full, no memory) the map runs on fewer; only when
 * none can is that error returned (and nothing ran).
 * Returns 0 if every item ran and succeeded, LN_EFAILED if any failed,
 * LN_ECANCELED if stopped, LN_EINVAL, LN_ENOMEM, LN_EBUSY when called from
 * a worker of pool on the same lane (its rails would queue behind the
 * caller), LN_ERANGE for n > SIZE_MAX / 2. n = 0 returns 0 at once. */
LN_EXTERN int ln_map(ln_pool *pool, size_t n, ln_map_fn fn, void *ctx, const ln_map_opts *opts,
                     ln_map_result *result);

/* A stop handle: create, pass in opts->stop, trigger from any thread. */
LN_EXTERN int ln_map_stop_create(ln_map_stop **out);
LN_EXTERN void ln_map_stop_trigger(ln_map_stop *stop);
LN_EXTERN void ln_map_stop_destroy(ln_map_stop *stop);

/* ------------------------------------------------------------------------ */
/* ln_limiter: rolling concurrency for asynchronous operations that finish
 * later, on any thread. No thread per operation.                            */

typedef void (*ln_start_fn)(void *arg, ln_done_token *token);

typedef struct ln_limiter_opts {
    unsigned concurrency; /* >= 1 */
    size_t max_pending;   /* 0 = unbounded; else submit blocks or fails */
    int when_full;        /* LN_FULL_FAIL (default) or LN_FULL_BLOCK */
} ln_limiter_opts;

LN_EXTERN void ln_limiter_opts_init(ln_limiter_opts *opts);

/* ln_limiter_create(out, c) == create_ex with concurrency c, other defaults.
 * LN_EINVAL for concurrency 0, LN_ENOMEM. */
LN_EXTERN int ln_limiter_create(ln_limiter **out, unsigned concurrency);
LN_EXTERN int ln_limiter_create_ex(ln_limiter **out, const ln_limiter_opts *opts);

/* Call start(arg, token) now if fewer than concurrency operations are in
 * flight (on the calling thread), else queue it; it is then started by the
 * thread whose ln_done frees a rail. 0, LN_EINVAL, LN_EAGAIN (bound reached,
 * not blocking), LN_ENOMEM. */
LN_EXTERN int ln_limiter_submit(ln_limiter *lim, ln_start_fn start, void *arg);

/* Finish the operation of token with err (0 = success). Exactly once per
 * token, from any thread, including from inside start. The token is invalid
 * afterwards. */
LN_EXTERN void ln_done(ln_done_token *token, int err);

/* Block until every submitted operation has finished. 0 if none failed,
 * else LN_EFAILED. ln_limiter_failed() gives the count. */
LN_EXTERN int ln_limiter_wait(ln_limiter *lim);
LN_EXTERN uint64_t ln_limiter_failed(const ln_limiter *lim);

/* Wait for everything, then free. Must not run concurrently with any other
 * call on lim (a submit, or the ln_done of an operation submitted
 * meanwhile). With concurrency 1 the limiter orders operations: what one
 * did before its ln_done happens-before the next start. A start that
 * submits to its own limiter with LN_FULL_BLOCK can deadlock (the room it
 * waits for may be owed to a frame further up its own stack). */
LN_EXTERN void ln_limiter_destroy(ln_limiter *lim);

#ifdef __cplusplus
}
#endif
#endif /* LANES_H */
