/* lanes/jobs.h - durable job queues: add jobs from any process, run them in
 * workers (C handlers on a lanes pool lane, or any program through
 * `lanes worker --exec`), with leases, retries, stalled-job recovery and
 * retention.
 *
 * A job is (queue, name, data JSON, options). Its states:
 *
 *   delayed --due--> waiting / prioritized --take--> active --+--> completed
 *      ^                   ^                                  |
 *      +---- retry with backoff (attempts left) --------------+--> failed
 *      +---- ln_job_delay_until (no attempt used) ------------+
 *                          +---- lease lapsed (stalled) -------+
 *
 * "paused" is what waiting and prioritized jobs of a paused queue report.
 *
 * The store is picked by URL:
 *   sqlite:PATH[?sync=normal|full&busy_timeout=MS&reserve=BYTES&events=E]
 *       embedded, one machine, many processes. Beside PATH live PATH-wal,
 *       PATH-shm (SQLite's) and PATH-reserve: disk space (default
 *       min(4 MiB, 1/6 of the volume), reserve=0 disables) kept so that on
 *       a full disk adds fail with LN_ENOSPC while the jobs already stored
 *       can still be finished, failed, cleaned and removed. events=
 *       outcomes|all|none: which events this handle writes (see "Events").
 *   redis://HOST[:PORT][/DB], unix:PATH
 *       BullMQ-compatible, when built with hiredis.
 *   postgresql://[USER[:PASSWORD]@]HOST[:PORT]/DB[?schema=NAME&PARAM=...]
 *   (or postgres://)
 *       a libpq connection URI (its parameters, such as sslmode or
 *       connect_timeout, pass to libpq; an unknown one is LN_EINVAL), when
 *       built with libpq. The tables of BullMQ 6.7's PostgreSQL backend in
 *       schema NAME (default "bullmq", BullMQ's; a plain identifier:
 *       a letter or '_', then letters, digits, '_' or '$', at most 63
 *       bytes), shared with Node processes using that backend. Opening a
 *       database nobody prepared creates BullMQ's first migration (its
 *       tables, no functions) under BullMQ's migrator lock, so a BullMQ
 *       started later with migrate: true completes it; a database whose
 *       migration ledger is newer than BullMQ 6.7 knows is refused
 *       (LN_ECORRUPT, nothing written); a server before 13 is LN_ENOTSUP.
 *       See docs/postgres.md. Where it differs (issue #28, first slice):
 *       JSON is stored as jsonb, which normalises it; lanes keeps the text
 *       a caller gave beside it (in the job's opts) and hands that back
 *       byte for byte while the column still holds the same value, but a
 *       Node process reads the normalised value, and JSON with \u0000
 *       (which jsonb refuses) is not stored (LN_EBACKEND). Counts scan the
 *       queue's rows. Flows use BullMQ's rows (job_dependency; a
 *       fail-parent child's failure is BullMQ's deferred failure, applied
 *       by the worker that claims the parent). Not yet on this store:
 *       Node workers in ln_jobs_workers (lanes' runs are listed); a
 *       blocking wait (workers poll) and pipelined steps.
 *
 * JSON (data, results, progress) is any JSON text JSON.parse takes, in
 * UTF-8 (RFC 8259): any value at top level, whitespace around it, numbers
 * of any size and exponent (100000000000000000000, 1e400), any escape
 * (\u0000, lone surrogates such as "\ud800"). It is stored byte for byte
 * and handed back unchanged; lanes never converts it. Refused: what
 * JSON.parse refuses (trailing commas, NaN, comments, single quotes,
 * leading zeros, a BOM, an empty text) and text that is not UTF-8.
 * Nesting up to 1000 levels is always taken; deeper may be refused (the
 * bound of the JSON libraries used, about 2000).
 *
 * Guarantees: a job is never lost once ln_jobs_add() has returned 0 (for
 * sqlite:...&sync=full also across power loss; with the default sync=normal
 * across crashes of any process, but the last commits may roll back on an OS
 * crash or power loss). Delivery is at least once: a job runs again only if
 * a worker died, froze past its lease, or was stopped before it finished.
 * A worker that lost its lease cannot complete or fail the job any more
 * (LN_ESTALE), so every job reaches exactly one terminal state.
 *
 * Threads: an ln_jobs handle may be used by any number of threads at once;
 * calls on one handle are serialised internally (one store connection per
 * handle; open one handle per thread for parallel adds). A handle must not
 * be used in a child process after fork(): every call there returns
 * LN_EFORK (open a new handle in the child).
 *
 * Errors: negative LN_E* codes from <lanes.h>; ln_jobs_errmsg() has the
 * detail of the last failure on a handle (which option, which SQLite error).
 * The library never prints: a risky store setting found at open is for
 * the caller to show (ln_jobs_warning).
 *
 * Names, the same for every store (so a queue moves between stores, and
 * BullMQ, whose rules these are, shares Redis queues with lanes):
 *  - a queue name is 1..LN_JOB_QUEUE_MAX-1 bytes without control
 *    characters and without ':' (it separates the parts of Redis keys);
 *  - a job name likewise, 1..LN_JOB_NAME_MAX-1 bytes (':' allowed);
 *  - a custom job id (ln_job_opts.job_id) is 1..LN_JOB_CUSTOM_ID_MAX-1
 *    bytes (64 KiB less one) without control characters, is not an
 *    integer (all digits, as "0" or "007", or '-' and digits without a
 *    leading zero, as "-12" or "-0"; "-012" is an id: the store numbers
 *    its own jobs so),
 *    and contains ':' only in the three-part form "a:b:c": exactly two
 *    ':', parts may be empty ("a::c", "::"), and the first part is not
 *    "0" ("0:a:b" is refused, as BullMQ's Queue refuses ids starting with
 *    "0:"; "00:a:b" and "a:0:b" are ids like any other).
 * A call given a name or id that breaks these returns LN_EINVAL and stores
 * nothing. Ids are read back whole whatever their length: a job another
 * program (BullMQ) stored with a longer id runs, is read and administered
 * like any other (the calls that name a job take any non-empty id without
 * control characters), and ln_job_info.id, ln_job_event.job_id and
 * ln_job_id() hold it in full.
 *
 * This header is the core: opening a store, adding jobs, inspecting and
 * administering queues. The other parts of the API are in headers of
 * their own, which this one includes (so <lanes/jobs.h> is the only one
 * to include):
 *   lanes/jobs_run.h         running a worker: options, run, stop, stats
 *   lanes/jobs_handler.h     what a handler may call on its job
 *   lanes/jobs_edit.h        editing a stored job
 *   lanes/jobs_limits.h      rate limits and global concurrency
 *   lanes/jobs_workers.h     the workers connected to a queue
 *   lanes/jobs_metrics.h     per-minute metrics
 *   lanes/jobs_cancel.h      cancelling a job from any process
 *   lanes/jobs_flows.h       flows (trees of jobs) and a parent's children
 *   lanes/jobs_events.h      a queue's events, waiting for an outcome
 *   lanes/jobs_schedulers.h  job schedulers (every N ms, cron)
 *   lanes/jobs_text.h        UTF-8 checks for text other programs wrote
 */
#ifndef LANES_JOBS_H
#define LANES_JOBS_H

#include <lanes.h>

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ln_jobs ln_jobs;
typedef struct ln_job ln_job;
typedef struct ln_worker ln_worker;

/* A buffer of LN_JOB_ID_MAX bytes always holds an id the store numbers
 * itself ("42"), so it is enough for ln_jobs_add's id output when no
 * custom id is given (custom ids may be longer: see ln_jobs_add). It no
 * longer bounds ids: ln_job_info.id, ln_job_event.job_id and ln_job_id()
 * are strings of any length. */
#define LN_JOB_ID_MAX 128
/* Longest custom id (ln_job_opts.job_id) and deduplication id
 * (ln_job_opts.dedup_id) an add takes, including the terminating NUL:
 * 64 KiB, far below Redis's key limit. BullMQ sets none; longer ids that
 * another program stored are read like any other. */
#define LN_JOB_CUSTOM_ID_MAX (64 * 1024)
/* Longest queue name and job name, including the terminating NUL. */
#define LN_JOB_QUEUE_MAX 128
#define LN_JOB_NAME_MAX 256
/* Default limit of a job's data (and of a result, a progress value and
 * the data of an edit) in bytes: 16 MiB (ln_jobs_opts.max_data_size sets
 * another, up to 1 GiB). BullMQ sets none; Redis takes up to 512 MB a
 * value (proto-max-bulk-len), SQLite 1 GB. */
#define LN_JOB_DATA_MAX_DEFAULT (16 * 1024 * 1024)
/* Highest priority number (BullMQ's limit); lower numbers run first. */
#define LN_JOB_PRIORITY_MAX 2097151 /* 2^21 - 1, BullMQ's limit */

/* A worker's default store_retry_ms (ln_worker_opts): how long it keeps
 * retrying a store that fails transiently before ln_worker_run gives up.
 * 30 s, independent of the lease: a Redis Cluster failover takes the
 * cluster-node-timeout (Redis's default 15 s) before the master is marked
 * failed, plus an election of about a second, and the old default (one
 * lease) let a worker with a short lease (3 s) exit before the replica was
 * promoted, leaving its jobs active until their leases lapsed. A worker
 * that gives up earlier helps nobody: its jobs stay active either way. */
#define LN_WORKER_STORE_RETRY_MS_DEFAULT 30000

/* ------------------------------------------------------------------------ */
/* Opening a store                                                           */

typedef struct ln_jobs_opts {
    size_t max_data_size;     /* bytes of data JSON accepted by add and of a
                                  result or progress value (2..2^30);
                                  default LN_JOB_DATA_MAX_DEFAULT. A handle
                                  holds a job's data and result in memory
                                  while a handler runs it, so a worker of
                                  concurrency N may hold N times two */
    unsigned busy_timeout_ms; /* how long a write waits for another writer
                                  before LN_EBACKEND; default 30000. URL
                                  parameter busy_timeout overrides. */
    /* Redis only (ignored by SQLite): 0 (default) = off; N = after each
     * add (ln_jobs_add, _add_bulk, _add_flow) and each worker step that
     * records outcomes, run Redis's WAIT N wait_timeout_ms on the node
     * that took the write, so the write is on N replicas before the call
     * returns. Redis replicates asynchronously: without it, a write the
     * primary acknowledged just before it died (kill -9, a crash) can be
     * lost when a replica takes over, and the id of a lost add reused.
     * An add WAIT confirms on fewer replicas fails LN_EIO ("reached 0 of
     * 1 replicas ..."): the job is on the primary and may or may not
     * survive a failover; its id (ln_jobs_add_bulk: the ids) is written
     * out as on success, so a caller can check it rather than add the job
     * again (a duplicate). A worker's step is not failed by it: its
     * outcomes are on the primary and cannot be sent again; it is counted
     * in ln_worker_stats.unreplicated. WAIT slows every write by a round
     * trip to the replicas. 0..64. URL parameter wait_replicas
     * overrides (docs/redis.md "Durability of an acknowledged write"). */
    unsigned wait_replicas;
    /* WAIT's timeout in ms: 0 (default) = 1000; below the connection's
     * reply timeout (URL timeout_ms, default 10000). URL parameter
     * wait_timeout_ms overrides. */
    unsigned wait_timeout_ms;
} ln_jobs_opts;

LN_EXTERN void ln_jobs_opts_init(ln_jobs_opts *opts);

/* Open the store named by url (NULL = "sqlite:lanes.db"), creating or
 * migrating its schema. On success *out owns the handle (ln_jobs_close).
 * LN_EINVAL: malformed URL or unknown URL parameter (see ln_jobs_errmsg);
 * LN_ENOTSUP: backend not built in; LN_EACCES / LN_EIO: file cannot be
 * opened or created; LN_ECORRUPT: not a database, or a newer schema;
 * LN_ENOMEM; LN_EBACKEND for other store errors. On failure *out is
 * unchanged; use ln_jobs_open_ex to get the detail. */
LN_EXTERN int ln_jobs_open(ln_jobs **out, const char *url);

/* Like ln_jobs_open with options (NULL = defaults). If errmsg is not NULL,
 * a failure's detail is copied there (errmsg_size bytes, NUL-terminated),
 * since no handle exists to ask. */
LN_EXTERN int ln_jobs_open_ex(ln_jobs **out, const char *url, const ln_jobs_opts *opts,
                              char *errmsg, size_t errmsg_size);

/* Close the handle. Workers created on it must be destroyed first. In a
 * child after fork() it only frees memory and leaves the parent's store
 * connection alone. NULL is a no-op. */
LN_EXTERN void ln_jobs_close(ln_jobs *jobs);

/* Detail of the last failed call on this handle (from this or any thread),
 * e.g. "data is not valid JSON: '[' or '{' expected near 'x' (line 1, col
 * 1)". "" when none. Valid until the next call on the handle. */
LN_EXTERN const char *ln_jobs_errmsg(const ln_jobs *jobs);

/* A warning about the store found when the handle was opened, or NULL when
 * none (and for a NULL handle): a setting that does not stop the store
 * from working but puts its jobs at risk, e.g. "redis maxmemory-policy is
 * 'allkeys-lru'; it should be 'noeviction' (...)". The library never
 * prints it; show or log it as you see fit. Fixed for the handle's life:
 * valid until ln_jobs_close, any thread. */
LN_EXTERN const char *ln_jobs_warning(const ln_jobs *jobs);

/* ------------------------------------------------------------------------ */
/* Adding jobs                                                               */

/* Backoff: the delay before a failed job runs again (BullMQ's job option
 * `backoff: {type, delay, jitter}`). With D = backoff_ms (fixed) or
 * backoff_ms * 2^(n-1) before retry n (exponential), a job with
 * backoff_jitter j > 0 waits floor(r * D * j + D * (1 - j)) ms, r drawn
 * uniformly from [0, 1) for each retry: a delay in [(1 - j) * D, D]
 * (BullMQ's formula; lanes' worker draws r from a per-thread generator).
 * LN_BACKOFF_CUSTOM names a type of the caller's (backoff_type, e.g.
 * "linear"): a worker's ln_worker_opts.backoff_strategy computes its
 * delay (see there); jitter is stored with it and not applied. */
enum { LN_BACKOFF_FIXED = 0, LN_BACKOFF_EXPONENTIAL = 1, LN_BACKOFF_CUSTOM = 2 };
/* Longest custom backoff type (ln_job_opts.backoff_type) an add takes,
 * including the terminating NUL. */
#define LN_BACKOFF_TYPE_MAX 128

/* Retention of finished jobs (remove_on_complete / remove_on_fail). A
 * job's LN_KEEP_ALL means "not set" (BullMQ's option left undefined): the
 * retention of the worker that finishes it applies (ln_worker_opts
 * remove_on_complete / remove_on_fail, BullMQ's worker options of those
 * names), which keeps every job by default. LN_KEEP_ALWAYS keeps the job
 * whatever the worker's retention (BullMQ's removeOnComplete: false). */
enum {
    LN_KEEP_ALL = 0,   /* keep every finished job (default; see above) */
    LN_KEEP_NONE = 1,  /* remove the job as soon as it finishes */
    LN_KEEP_COUNT = 2, /* keep the newest 'value' finished jobs of the queue */
    LN_KEEP_AGE = 3,   /* keep finished jobs younger than 'value' ms: a
                          job 'value' ms old or older goes (BullMQ's
                          {age}), so 0 keeps none, not even the job
                          finishing */
    LN_KEEP_ALWAYS = 4 /* keep it, whatever the worker's retention (a job
                          option only) */
};
typedef struct ln_job_keep {
    int mode;      /* LN_KEEP_* */
    int64_t value; /* count or age in ms, >= 0 */
} ln_job_keep;

typedef struct ln_job_opts {
    int64_t delay_ms;               /* >= 0; 0 = runnable now */
    int priority;                   /* 0 = none (runs before any prioritized job);
                               1..LN_JOB_PRIORITY_MAX, lower runs first */
    int attempts;                   /* >= 1 runs in total before failed; default 1 */
    int backoff;                    /* LN_BACKOFF_FIXED, _EXPONENTIAL or _CUSTOM */
    int64_t backoff_ms;             /* >= 0; delay before retry n is backoff_ms
                               (fixed) or backoff_ms * 2^(n-1) (exponential),
                               less the jitter; a custom type's strategy
                               gets it as the job's stored delay */
    double backoff_jitter;          /* 0 (default) = none; 0..1: each retry of a
                               fixed or exponential backoff waits a delay
                               drawn from [(1 - j) * D, D] (see above).
                               Else LN_EINVAL. On Redis opts.backoff.jitter
                               (a number, as BullMQ writes it; absent when
                               0), kept to 14 significant digits */
    const char *backoff_type;       /* NULL unless backoff is LN_BACKOFF_CUSTOM: then
                               the type's name, 1..LN_BACKOFF_TYPE_MAX-1
                               bytes without control characters, not
                               "fixed" or "exponential" (opts.backoff.type
                               on Redis, so a Node worker's
                               settings.backoffStrategy sees it too) */
    const char *job_id;             /* NULL = the store numbers the job. Otherwise
                               a custom id (see "Names" above: printable,
                               not an integer, ':' only as "a:b:c").
                               Adding an id that exists changes nothing
                               and returns that job's id. */
    int lifo;                       /* 1: run before older jobs of equal priority */
    ln_job_keep remove_on_complete; /* default LN_KEEP_ALL. Applied to the
                                       queue each time a job finishes;
                                       LN_KEEP_COUNT costs O(count) then */
    ln_job_keep remove_on_fail;     /* default LN_KEEP_ALL */
    const char *traceparent;        /* W3C trace context carried to the worker, or
                                NULL; must be a valid version-00 traceparent */
    const char *tracestate;         /* optional W3C tracestate, <= 512 bytes; kept
                                only with a traceparent, and "" is none
                                (both read back as NULL) */
    int64_t timeout_ms;             /* 0 (default) = the worker's timeout_ms;
                                1..2^31-1: this job's runs time out after
                                that long instead (see ln_worker_opts).
                                Stored with the job: on Redis as
                                opts.lanesTimeout, which BullMQ keeps and
                                ignores (a Node worker does not apply it) */
    /* Deduplication (BullMQ's `deduplication: {id, ttl, extend, replace,
     * keepLastIfActive, reschedule}`;
     * on Redis its `de:<id>` key). While a job of this queue holds
     * dedup_id, adding another job with it stores nothing and returns
     * the holder's id, reported as existing (as a duplicate custom id;
     * a "deduplicated" event on Redis). The id is held:
     *  - dedup_ttl_ms 0 (simple): until the holder completes or fails
     *    (or is removed);
     *  - dedup_ttl_ms > 0 (throttle): for that long from the add, whatever
     *    becomes of the job, unless it is removed (ln_jobs_remove,
     *    ln_jobs_drain free the id in every mode, as BullMQ's removal);
     *  - dedup_extend (debounce, with a TTL): each deduplicated add starts
     *    the TTL again;
     *  - dedup_replace (debounce): an add while the holder is still
     *    delayed removes it and adds this job in its place, holding the id
     *    (its TTL kept unless dedup_extend); a holder no longer delayed is
     *    kept and the add deduplicated;
     *  - dedup_keep_last_if_active (BullMQ's keepLastIfActive): the id is
     *    held without a TTL (dedup_ttl_ms is ignored for holding it) and an
     *    add while the holder runs (is active) is kept as the next job, the
     *    latest such add replacing an earlier one (on Redis the hash
     *    `dn:<id>`); when the holder completes or fails for good (also
     *    canceled, or failed as stalled) that next job is added with its
     *    own options (its custom id if it had one, else the id numbered
     *    for it at its add, though that add returned the holder's id) and
     *    holds dedup_id.
     *    At most one job runs and one waits per dedup_id. Removing the
     *    holder drops the next job;
     *  - dedup_reschedule (BullMQ's reschedule; not with dedup_replace,
     *    which wins): a deduplicated add while the holder is delayed moves
     *    the holder's run time to this add's delay_ms from now (0: due
     *    now), keeping its id and data.
     * A holder that no longer exists while its id is held without expiry
     * (a store restored from a copy, a key left by a crash) frees the id:
     * the next add takes it (BullMQ's stale key recovery). */
    const char *dedup_id;          /* NULL (default) = none; else
                                      1..LN_JOB_CUSTOM_ID_MAX-1 bytes without
                                      control characters */
    int64_t dedup_ttl_ms;          /* 0..2^31-1 ms; 0 = simple mode */
    int dedup_extend;              /* 0/1; needs dedup_ttl_ms > 0 */
    int dedup_replace;             /* 0/1 */
    int dedup_keep_last_if_active; /* 0/1 (opts.de.keepLastIfActive) */
    int dedup_reschedule;          /* 0/1 (opts.de.reschedule) */
    /* Add the job as a child of an existing job, its parent (BullMQ's
     * opts.parent on a plain add; see "Children of an existing parent" in
     * lanes/jobs_flows.h): parent_id of parent_queue (both, or neither:
     * NULL, the default, is no parent), in this store; on a Redis Cluster
     * of this queue's hash slot. The four options are a flow child's
     * (ln_flow_node): what this job's final failure does to its parent,
     * 0/1 each, and only with a parent. Not with dedup_id (BullMQ refuses
     * both together). LN_ENOENT from the add: no such parent. */
    const char *parent_queue;
    const char *parent_id;
    int fail_parent_on_failure;
    int continue_parent_on_failure;
    int ignore_dependency_on_failure;
    int remove_dependency_on_failure;
} ln_job_opts;

/* Defaults as listed above. */
LN_EXTERN void ln_job_opts_init(ln_job_opts *opts);

/* Add one job. queue and name: see "Names" above; data_json: valid JSON text of at most max_data_size bytes (NULL =
 * "{}"); opts NULL = defaults. The new (or, with opts->job_id or a held opts->dedup_id, existing)
 * job's id is written to id (may be NULL): id_size >= LN_JOB_ID_MAX holds
 * every id the store numbers itself; a custom id needs strlen(job_id) + 1
 * (LN_JOB_CUSTOM_ID_MAX always suffices for ids lanes accepts). When 0 is
 * returned the job is durable (see the guarantees above). LN_EINVAL (bad
 * argument or option, data not JSON, data too large: ln_jobs_errmsg says
 * which), LN_ERANGE (id_size too small for the id; nothing added: checked
 * before adding, or, when a held dedup_id names an existing job whose id
 * does not fit, that job is left as it is and nothing new was added for
 * it), LN_ENOENT (opts->parent_id names no job), LN_EEXIST (a custom id
 * that exists is a child of another parent: BullMQ's "cannot be
 * replaced"), LN_EBUSY (such an id is running: see lanes/jobs_flows.h),
 * LN_ENOSPC (disk full), LN_EFORK, LN_EBACKEND. On error nothing is
 * stored, except LN_EIO from a Redis WAIT that fell short
 * (ln_jobs_opts.wait_replicas): the job is stored and its id written. Any
 * thread. */
LN_EXTERN int ln_jobs_add(ln_jobs *jobs, const char *queue, const char *name, const char *data_json,
                          const ln_job_opts *opts, char *id, size_t id_size);

/* One job of a batch for ln_jobs_add_bulk. */
typedef struct ln_job_spec {
    const char *name;
    const char *data_json;   /* NULL = "{}" */
    const ln_job_opts *opts; /* NULL = defaults */
} ln_job_spec;

/* Add n jobs to queue in one atomic step: either every job is stored or
 * none is. ids, if not NULL, receives n ids of id_size bytes each (job i's
 * id at ids + i * id_size). Errors as ln_jobs_add; a validation error names
 * the index of the bad job in ln_jobs_errmsg. n = 0 returns 0. */
LN_EXTERN int ln_jobs_add_bulk(ln_jobs *jobs, const char *queue, const ln_job_spec *specs, size_t n,
                               char *ids, size_t id_size);

/* ------------------------------------------------------------------------ */
/* Inspecting and administering queues                                       */

typedef enum ln_job_state {
    LN_JOB_WAITING = 0,
    LN_JOB_DELAYED = 1,
    LN_JOB_PRIORITIZED = 2,
    LN_JOB_ACTIVE = 3,
    LN_JOB_COMPLETED = 4,
    LN_JOB_FAILED = 5,
    LN_JOB_PAUSED = 6,
    LN_JOB_WAITING_CHILDREN = 7, /* a flow parent waiting for its children
                                    (see "Flows") */
    LN_JOB_NSTATES = 8
} ln_job_state;

/* 1 if the len bytes at text are a JSON text the jobs store takes (see
 * "JSON" above), else 0. Any thread. */
LN_EXTERN int ln_jobs_json_valid(const char *text, size_t len);

/* "waiting", "delayed", ... ; "unknown" for other values. Static. */
LN_EXTERN const char *ln_job_state_name(int state);
/* The state named s (as ln_job_state_name), or LN_EINVAL. */
LN_EXTERN int ln_job_state_parse(const char *s);

typedef struct ln_job_counts {
    uint64_t waiting, delayed, prioritized, active, completed, failed, paused;
    uint64_t waiting_children; /* flow parents (LN_JOB_WAITING_CHILDREN) */
} ln_job_counts;

/* Number of jobs of queue in each state. A queue nobody used has all zero.
 * Cost: a few O(log n) lookups (the SQLite store keeps a counter per queue
 * and state; Redis reads the sizes of its lists and sets), never a count
 * of jobs. 0, LN_EINVAL, LN_EFORK, LN_EBACKEND. */
LN_EXTERN int ln_jobs_counts(ln_jobs *jobs, const char *queue, ln_job_counts *counts);

/* Everything stored about one job. Strings are owned by the struct and
 * freed by ln_job_info_clear(); NULL where there is nothing. */
typedef struct ln_job_info {
    char *id;  /* the whole id, any length; never NULL in a filled info */
    int state; /* ln_job_state */
    char *name;
    char *data;          /* JSON */
    char *result;        /* JSON the handler stored, or NULL */
    char *failed_reason; /* reason of the last failure, or NULL */
    char *progress;      /* JSON of the last progress update, or NULL */
    char *traceparent;
    char *tracestate;
    int priority;
    int lifo;
    int attempts;         /* runs allowed (opts.attempts) */
    int attempts_made;    /* runs that failed so far */
    int attempts_started; /* runs started so far (stalls included) */
    int stalled;          /* times its lease lapsed */
    int backoff;          /* LN_BACKOFF_*: CUSTOM for any type but fixed
                             and exponential (a Node job's too) */
    int64_t backoff_ms;
    double backoff_jitter; /* 0 = none (a Node job's jitter outside 0..1
                              reads as the nearest bound) */
    char *backoff_type;    /* LN_BACKOFF_CUSTOM: the type's name, else NULL */
    /* Store clock, ms since the Unix epoch; 0 = not yet. */
    int64_t created_ms;  /* when added */
    int64_t run_at_ms;   /* while delayed: when it becomes due (after
                                its delay or a retry's backoff); in any
                                other state: when it was first due,
                                created_ms + the delay_ms it was added
                                with (BullMQ keeps no later due time; a
                                retry or ln_jobs_promote does not change
                                it) */
    int64_t started_ms;  /* when the latest run started (0 again after
                                ln_jobs_retry) */
    int64_t finished_ms; /* when it completed or failed */
    char *cursor;        /* from ln_jobs_list / ln_jobs_list_after: this
                            row's place in its listing, to pass to
                            ln_jobs_list_after for the rows after it; NULL
                            from ln_jobs_get */
} ln_job_info;

/* Free the strings of *info and zero it. NULL is a no-op. */
LN_EXTERN void ln_job_info_clear(ln_job_info *info);
/* Clear and free an array from ln_jobs_list. */
LN_EXTERN void ln_job_info_free_array(ln_job_info *infos, size_t n);

/* Read one job. 0 and *info filled (clear it afterwards); LN_ENOENT if
 * queue has no job id; LN_EINVAL, LN_ENOMEM, LN_EFORK, LN_EBACKEND. */
LN_EXTERN int ln_jobs_get(ln_jobs *jobs, const char *queue, const char *id, ln_job_info *info);

/* List jobs of one state, in the order they run (waiting, prioritized,
 * paused), become due (delayed), started (active), or newest finished
 * first (completed, failed); skip 'offset' of them and return at most
 * 'limit' (1..10000). *out is a new array of *n entries (free with
 * ln_job_info_free_array), NULL when *n is 0. */
LN_EXTERN int ln_jobs_list(ln_jobs *jobs, const char *queue, int state, size_t offset, size_t limit,
                           ln_job_info **out, size_t *n);

/* Paging. Each row ln_jobs_list or ln_jobs_list_after returns carries a
 * cursor (info.cursor): an opaque printable text holding the row's
 * ordering key. ln_jobs_list_after returns up to limit (1..10000) jobs of
 * state that come after that row, in ln_jobs_list's order; after NULL or
 * "" gives the first page. A page costs the same at any depth:
 *   - SQLite: an index seek to the cursor's key, O(log n + limit);
 *     ln_jobs_list's offset is O(offset + limit) (SQLite steps over the
 *     skipped rows: tens of ms at 1M jobs).
 *   - Redis: delayed, prioritized, completed, failed and waiting-children
 *     are sorted sets: the cursor's job is found by rank, O(log n +
 *     limit), as an offset is. waiting, active and paused are lists: the
 *     cursor's job is looked for at its last position, O(limit) while
 *     the list is unchanged before it; else it is searched for from the
 *     running end (O(n) in the worst case), and an offset reaches a row in
 *     O(distance from the nearer end / ~100).
 * The cursor holds a key, not a count: rows added or removed elsewhere
 * neither repeat nor skip rows of the next page. If the cursor's own job
 * left the state, SQLite and Redis's sorted sets continue after its key;
 * Redis's lists continue at its last position (an offset). LN_EINVAL for a
 * cursor that is malformed, from another state or from another store's
 * kind. Errors as ln_jobs_list. */
LN_EXTERN int ln_jobs_list_after(ln_jobs *jobs, const char *queue, int state, const char *after,
                                 size_t limit, ln_job_info **out, size_t *n);

/* Check the store's own structure, as far as the store kind can: on
 * SQLite PRAGMA quick_check over the whole file (thorough = 0: b-trees,
 * cell bounds, NOT NULL columns; cost grows with the file, ~4 ms per MiB)
 * or PRAGMA integrity_check (thorough = 1: also that every index matches
 * its table; a few times slower). 0, or LN_ECORRUPT with what the check
 * found in ln_jobs_errmsg. Opening a store checks the whole file only when
 * it is small (up to 1 MiB); a larger store relies on the checks of the
 * pages each call reads (a damaged page read is LN_ECORRUPT) and on this
 * call (`lanes jobs URL check`). Redis: 0 (the server keeps its data's
 * structure; nothing to check from here). */
LN_EXTERN int ln_jobs_check(ln_jobs *jobs, int thorough);

/* Log lines a handler wrote with ln_job_log, oldest first: *lines gets a
 * new array of *n NUL-terminated strings (no NULL entry after the last;
 * NULL when *n is 0), freed with ln_jobs_free_lines(*lines, *n).
 * LN_ENOENT if there is no such job. */
LN_EXTERN int ln_jobs_logs(ln_jobs *jobs, const char *queue, const char *id, char ***lines,
                           size_t *n);
LN_EXTERN void ln_jobs_free_lines(char **lines, size_t n);

/* Move a failed job back to waiting with a fresh attempt budget (its
 * attempts_made restart at 0; started_ms, finished_ms and failed_reason are
 * cleared, as BullMQ's job.retry with resetAttemptsMade does (without it
 * BullMQ keeps attemptsMade); attempts_started keeps counting).
 * LN_ENOENT: no such job; LN_EINVAL: the job is not failed. */
LN_EXTERN int ln_jobs_retry(ln_jobs *jobs, const char *queue, const char *id);
/* Retry every failed job of queue (ln_jobs_retry_all_finished with
 * LN_JOB_FAILED and before_ms -1); *count (may be NULL) gets how many. */
LN_EXTERN int ln_jobs_retry_all(ln_jobs *jobs, const char *queue, size_t *count);

/* ln_jobs_retry for a job that finished either way (BullMQ's
 * job.retry(state) with resetAttemptsMade): state is LN_JOB_FAILED or
 * LN_JOB_COMPLETED, the state the job must be in. Retrying a completed job
 * clears its result (and started_ms, finished_ms) and leaves a
 * failed_reason of an earlier attempt, as BullMQ clears returnvalue and
 * not failedReason; a failed job's failed_reason goes. A flow child whose
 * result (or recorded failure) its parent holds is the parent's pending
 * dependency again; the parent is not moved back to waiting for its
 * children (BullMQ's neither), so a parent that is already ready or
 * active cannot complete until the child completes again. A 'waiting'
 * event with prev "completed" or "failed". LN_ENOENT: no such job;
 * LN_EINVAL: state is neither, or the job is not in it. */
LN_EXTERN int ln_jobs_retry_finished(ln_jobs *jobs, const char *queue, const char *id, int state);

/* Retry every job of queue in state (LN_JOB_FAILED or LN_JOB_COMPLETED)
 * that finished at or before before_ms (ms since the epoch on the store's
 * clock; < 0: when this call starts), oldest finished first (BullMQ's
 * queue.retryJobs({state, timestamp})). Steps of at most 1,000 jobs, each
 * atomic, the whole not; jobs that finish while it runs are after the
 * bound and stay, so workers that finish the retried jobs again cannot
 * keep it going. *count (may be NULL) gets how many, also on an error. */
LN_EXTERN int ln_jobs_retry_all_finished(ln_jobs *jobs, const char *queue, int state,
                                         int64_t before_ms, size_t *count);

/* Remove a job and its logs; a flow parent's children stay (as BullMQ's
 * remove with removeChildren false; ln_jobs_remove_tree takes them too).
 * LN_ENOENT: no such job; LN_EBUSY: the job is active (a worker holds its
 * lease), or is a job scheduler's current iteration (only its take makes
 * the next one: ln_jobs_unschedule removes it; BullMQ refuses it too). */
LN_EXTERN int ln_jobs_remove(ln_jobs *jobs, const char *queue, const char *id);

/* Remove a job together with its subtree of children, in every queue they
 * sit in (BullMQ's queue.remove / job.remove with removeChildren, their
 * default), all or nothing, in one Redis script call or SQLite
 * transaction. The subtree: every child a parent records (jobs_flows.h)
 * and theirs, and so on: pending ones, processed ones (completed), and
 * failed ones recorded with ignore_ / continue_ /
 * fail_parent_on_failure; a child failed with remove_dependency_on_failure
 * is no longer its parent's and stays. The job itself goes as
 * ln_jobs_remove takes it: its own flow parent, outside the subtree, loses
 * a pending dependency and is released when that was its last one. Each
 * job removed frees the deduplication id it holds and gets a "removed"
 * event {jobId, prev} in its own queue, children before their parents; a
 * parent of the subtree whose last pending child goes is first released (a
 * "waiting" event with prev "waiting-children", on both stores); on
 * Redis the subtree's writes are BullMQ's (the parent's queue's marker
 * set), so its "removed" says prev "wait", as does a waiting job (BullMQ's
 * name; ln_jobs_remove writes "waiting"); on SQLite prev is the state the
 * job was in when the call began, named as ln_jobs_remove names it.
 * *removed (may be NULL) gets the number of jobs removed (0 on error).
 * Errors, nothing removed: LN_ENOENT (no such job); LN_EBUSY (the job is a
 * job scheduler's current iteration, or a job of the subtree is active: a
 * worker holds it, which ln_jobs_errmsg names; BullMQ refuses it too);
 * LN_ETOOBIG (more than LN_JOBS_REMOVE_TREE_MAX entries: the job and the
 * children its parents record, counting records of children already gone,
 * which stay as BullMQ's do; every flow ln_jobs_add_flow makes fits, a
 * larger tree from another program is removed subtree by subtree). */
#define LN_JOBS_REMOVE_TREE_MAX 1000
LN_EXTERN int ln_jobs_remove_tree(ln_jobs *jobs, const char *queue, const char *id,
                                  size_t *removed);

/* Remove completed or failed jobs (state) of queue that finished more than
 * age_ms ago (age_ms < 0: any age) and are not among the newest 'keep' of
 * that state (keep = 0: none is spared). *removed (may be NULL) gets the
 * number removed. LN_EINVAL for another state. */
LN_EXTERN int ln_jobs_clean(ln_jobs *jobs, const char *queue, int state, int64_t age_ms,
                            uint64_t keep, size_t *removed);

/* Pause: workers take no new job of queue (running ones finish); waiting
 * jobs report LN_JOB_PAUSED. Resume undoes it. Adding still works. */
LN_EXTERN int ln_jobs_pause(ln_jobs *jobs, const char *queue);
LN_EXTERN int ln_jobs_resume(ln_jobs *jobs, const char *queue);
/* *paused = 1 if queue is paused, else 0. */
LN_EXTERN int ln_jobs_is_paused(ln_jobs *jobs, const char *queue, int *paused);

/* Remove every waiting, prioritized and delayed job of queue (active and
 * finished jobs stay), but the current iteration of each job scheduler of
 * the queue, which stays so the schedule goes on (as BullMQ's drain).
 * Each job goes as BullMQ's drain removes it: a deduplication id it held
 * is free again, and a flow parent it was the last pending child of is
 * released when it is in another queue and removed with it when it is in
 * this one, and so up its chain, at most 256 parents (a flow is at most
 * LN_FLOW_DEPTH_MAX deep): the one above is released. *removed (may be
 * NULL) gets the number (not counting such parents). The work goes in steps of at most 1,000 jobs (each a Redis
 * script call or SQLite transaction, each atomic, the drain as a whole
 * not: after an error the finished steps' jobs are gone, and *removed
 * still gets their number), and looks at most at as many jobs as the
 * queue held when it began: jobs added while it runs may stay or go, and
 * cannot keep it going. */
LN_EXTERN int ln_jobs_drain(ln_jobs *jobs, const char *queue, size_t *removed);

/* Remove queue and everything of it (BullMQ's queue.obliterate()): it is
 * paused first (workers take no more of it), then every job in every state
 * goes as ln_jobs_drain removes one (its logs; a deduplication id it held
 * is free again; a flow parent in another queue it was the last pending
 * child of is released), then its job schedulers, events, metrics, rate
 * limit and global concurrency, counters and pause flag: ln_jobs_queues no
 * longer lists it, and a job added to it later starts a new queue. With
 * active jobs it removes nothing and fails with LN_EBUSY, the queue left
 * paused (as BullMQ's), unless force is 1: then they go too, and the
 * worker holding one finds it gone (its outcome is LN_ESTALE, stored
 * nowhere). Steps of at most 1,000 jobs, each atomic, the whole not (as
 * ln_jobs_drain); LN_EBUSY too when the queue is resumed meanwhile, or when
 * jobs are added faster than the steps remove them. *removed (may be NULL)
 * gets the number of jobs removed, also on an error. LN_EINVAL: force not
 * 0 or 1. */
LN_EXTERN int ln_jobs_obliterate(ln_jobs *jobs, const char *queue, int force, size_t *removed);

/* Most queue names ln_jobs_queues returns. */
#define LN_JOB_QUEUES_MAX 1000

/* The names of the store's queues (every queue that has held a job or been
 * paused), sorted by byte value, at most LN_JOB_QUEUES_MAX of them: a new
 * array of NUL-terminated strings (*names, *n; NULL when *n is 0) freed
 * with ln_jobs_free_lines. Cost: SQLite reads its index of counters (one
 * row per queue and state); Redis SCANs the keyspace for BullMQ's
 * "<prefix>:<queue>:meta" keys (COUNT 1000 a round trip, so O(keys) on
 * the server: cache the answer rather than calling it per request).
 * 0, LN_EINVAL (names or n NULL), LN_ENOMEM, LN_EFORK, LN_EBACKEND. */
LN_EXTERN int ln_jobs_queues(ln_jobs *jobs, char ***names, size_t *n);

/* Make a delayed job runnable now (BullMQ's job.promote()): it moves to
 * waiting, or prioritized when it has a priority, behind the jobs already
 * there, and its delay is cleared (Redis emits the event "waiting").
 * LN_ENOENT: no such job; LN_EINVAL: the job is not delayed. */
LN_EXTERN int ln_jobs_promote(ln_jobs *jobs, const char *queue, const char *id);

#ifdef __cplusplus
}
#endif

/* The parts beside the core; each includes this header for the types above. */
#include <lanes/jobs_run.h>
#include <lanes/jobs_handler.h>
#include <lanes/jobs_limits.h>
#include <lanes/jobs_workers.h>
#include <lanes/jobs_metrics.h>
#include <lanes/jobs_cancel.h>
#include <lanes/jobs_flows.h>
#include <lanes/jobs_events.h>
#include <lanes/jobs_schedulers.h>
#include <lanes/jobs_edit.h>
#include <lanes/jobs_text.h>

#endif /* LANES_JOBS_H */
