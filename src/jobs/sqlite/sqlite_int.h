/* sqlite_int.h - private to the SQLite store (the files of this folder):
 * the instance, the statement cache, the schema's states and counters, and
 * what each file gives the others. */
#ifndef LN_JOBS_SQLITE_INT_H
#define LN_JOBS_SQLITE_INT_H

#include "backend.h"

#include <sqlite3.h>
#include <stdlib.h>

/* Schema version this code writes; stored in PRAGMA user_version. The
 * steps that reach it: migrations[] in schema.c. */
#define SQ_SCHEMA_VERSION 16
/* PRAGMA application_id of a lanes store: "LNJB". */
#define SQ_APPLICATION_ID 0x4C4E4A42

/* Job states as stored in lanes_jobs.state. "prioritized" and "paused" are
 * not stored: a ready job with priority > 0 is prioritized, and ready jobs
 * of a paused queue report paused. */
/* pflags bit of a flow parent (the LN__FLOW_* bits below it are a
 * child's failure options). */
#define SQ_FLOW_PARENT 16

enum {
    ST_READY = 0,
    ST_DELAYED = 1,
    ST_ACTIVE = 3,
    ST_COMPLETED = 4,
    ST_FAILED = 5,
    ST_WAITING_CHILDREN = 7 /* = LN_JOB_WAITING_CHILDREN (a flow parent) */
};

/* Invariant: lanes_counts(queue, state).n is the number of lanes_jobs rows
 * of that queue whose SQ_COUNT_KEY is state, at every commit. Who keeps it:
 *  - INSERT (only S_ADD): ln__sq_add, per batch;
 *  - ready -> active (only S_TAKE): take() in step.c, per step;
 *  - active -> completed (only S_COMPLETE): step_once, per step;
 *  - every other UPDATE OF state, and every DELETE: the triggers of
 *    schema version 2 (schema.c), which skip exactly the two moves above.
 * So a new statement that inserts jobs, takes them or completes them must
 * call ln__sq_count in the same transaction; any other statement is counted
 * by the triggers. Counter changes commute (each adds to n), so their
 * order within a transaction does not matter.
 *
 * The lanes_counts key of a lanes_jobs row, as SQL (r: the row's prefix,
 * "new.", "old." or ""): its ln_job_state, stored state ST_READY split into
 * waiting and prioritized by priority, which no statement changes once the
 * job is inserted. */
#define SQ_COUNT_KEY(r) "CASE WHEN " r "state = 0 AND " r "priority > 0 THEN 2 ELSE " r "state END"

/* For tests: one row, the number of (queue, state) pairs whose counter in
 * lanes_counts differs from a COUNT(*) of lanes_jobs (a full scan); 0 when
 * every counter is exact. */
#define SQ_COUNTS_AUDIT_SQL                                                                        \
    "WITH c AS (SELECT queue, state, n FROM lanes_counts WHERE n <> 0), "                          \
    "j AS (SELECT queue, " SQ_COUNT_KEY(                                                           \
        "") " AS state, count(*) AS n "                                                            \
            "FROM lanes_jobs GROUP BY 1, 2) "                                                      \
            "SELECT (SELECT count(*) FROM (SELECT * FROM c EXCEPT SELECT * FROM j)) "              \
            "+ (SELECT count(*) FROM (SELECT * FROM j EXCEPT SELECT * FROM c))"

/* Every statement the backend runs, prepared once on first use and reused
 * (SQLITE_PREPARE_PERSISTENT). The SQL lives in sql.c (ln__sq_sql_text). */
typedef enum sq_stmt {
    S_BEGIN_W,
    S_BEGIN_R,
    S_COMMIT,
    S_ROLLBACK,
    S_NOW,
    S_ADD,
    S_ADD_LIFO,
    S_COUNT,
    S_GET_RID,
    S_GET_CID,
    S_RID_OF_CID,
    S_COUNTS,
    S_LIST_WAITING,
    S_LIST_PRIORITIZED,
    S_LIST_READY,
    S_LIST_DELAYED,
    S_LIST_ACTIVE,
    S_LIST_COMPLETED,
    S_LIST_FAILED,
    S_LOGS,
    S_STATE_OF,
    S_RETRY_ONE,
    S_RETRY_PICK_C,
    S_RETRY_PICK_F,
    S_REMOVE,
    S_CLEAN_COMPLETED,
    S_CLEAN_FAILED,
    S_CLEAN_CHUNK_C,
    S_CLEAN_CHUNK_F,
    S_PAUSE,
    S_IS_PAUSED,
    S_DRAIN_READY,
    S_DRAIN_DELAYED,
    S_COMPLETE,
    S_RETRY_RUN,
    S_FAIL,
    S_DELETE_RID,
    S_TRIM_COUNT_C,
    S_TRIM_COUNT_F,
    S_TRIM_AGE_C,
    S_TRIM_AGE_F,
    S_RENEW,
    S_PROMOTE,
    S_TAKE,
    S_READY_ANY,
    S_NEXT_DUE,
    S_HAS_WORK,
    S_DRAINED,
    S_STALLED,
    S_RELEASE,
    S_PROGRESS,
    S_LOG,
    S_PENDING,
    S_DELAY_RUN,
    S_DEDUP_GET,
    S_DEDUP_PUT,
    S_DEDUP_PURGE,
    S_EVENT,
    S_EVENT_TRIM,
    S_EVENT_PROMOTE,
    S_METRICS_GET,
    S_METRICS_PUT,
    S_METRICS_PUSH,
    S_METRICS_TRIM,
    S_METRICS_DATA,
    S_LIMIT_GET, /* rate limits and global concurrency: limit.c */
    S_LIMIT_COUNT,
    S_LIMIT_RATE,
    S_LIMIT_CONC,
    S_LIMIT_ACTIVE,
    S_LIMIT_REQUEUE,
    /* Flows (flow.c). */
    S_LIST_WAITING_CHILDREN,
    S_FLOW_SET,
    S_DEP_ADD,
    S_DEP_DONE,
    S_FLOW_DEPS_DEC,
    S_FLOW_RELEASE,
    S_FLOW_FAIL_PARENT,
    S_FLOW_BLOCKED,
    S_FLOW_CHILDREN,
    S_FLOW_PARENT,
    S_REMOVE_DEDUP,
    S_CLEAN_DEDUP_C, /* a clean frees the TTL ids of the jobs it removes */
    S_CLEAN_DEDUP_F,
    S_RETRY_DEPS_INC, /* a retried child is its parent's dependency again */
    S_RETRY_DEPS,
    S_CLEAN_PARENTS, /* a clean's flow parents of its queue (flow.c) */
    S_CLEAN_PARENT_UP,
    S_DRAIN_SIZE,
    S_DRAIN_READY_TIE,
    S_DRAIN_DELAYED_TIE,
    S_DRAIN_RELEASED,
    S_ADD_BACKOFF,
    /* Keyset pages (view.c), in ln_job_state order. */
    S_PAGE_WAITING,
    S_PAGE_DELAYED,
    S_PAGE_PRIORITIZED,
    S_PAGE_ACTIVE,
    S_PAGE_COMPLETED,
    S_PAGE_FAILED,
    S_PAGE_READY,
    S_PAGE_WAITING_CHILDREN,
    S_COUNT_
} sq_stmt;

/* Which events a handle writes (?events=, events.c): none; the
 * outcomes and administration (completed, failed, progress, stalled,
 * removed, ... : enough for ln_jobs_wait; the default); or all, with each
 * job's added, waiting, delayed and active too. */
enum { SQ_EVENTS_NONE = 0, SQ_EVENTS_OUTCOMES = 1, SQ_EVENTS_ALL = 2 };

typedef struct sq_be {
    ln__jobs_be base; /* must be first */
    sqlite3 *db;
    sqlite3_stmt *st[S_COUNT_];
    int full_sync;          /* ?sync=full */
    unsigned busy_ms;       /* how long a write waits for the lock */
    uint64_t busy_since_ns; /* start of the current wait (busy_wait,
                                   which runs inside an op: mu held) */
    int reserve_fd;         /* PATH-reserve, or -1 (see reserve.c) */
    int64_t reserve_bytes;  /* ?reserve=BYTES; 0 = no reserve, -1 (until
                                   the open) = sized to the volume */
    int events;             /* ?events=: SQ_EVENTS_* this handle writes */
    int reserve_low;        /* the reserve was found not whole (set by
                                   reserve_release, refreshed by relieve):
                                   no events are written, the room is kept
                                   for finishing jobs */
    int secure_delete;      /* PRAGMA secure_delete at the open (0-2) */
    int lean_delete;        /* secure_delete is FAST for a full disk
                               (ln__sq_room_begin) */
    int room_op;            /* inside room_begin .. room_end */
    int ckpt_behind;        /* the last checkpoint found no room to grow
                               the database: writes that add wait */
    int dedup_due;          /* a finish this transaction made a kept next
                               job due (dedup_next.c); like every
                               member, used with the handle's mutex held */
    const char *hard_queue; /* the queue a clean or drain of this handle is
                               deleting from (else NULL): a parent of it
                               that the delete releases is removed too,
                               so gets no release event (events.c) */
} sq_be;

/* The disk-space reserve (reserve.c has the design). reserve_open:
 * open or create PATH-reserve and size the WAL to it (at open). Adds call
 * reserve_check first: LN_ENOSPC unless the reserve is in place (it is
 * restored when space came back). reserve_free: at open, before the store
 * is configured, free PATH-reserve (1 if it held space). A write that
 * finishes, fails or deletes stored jobs runs as
 *     err = once(); if (ln__sq_retry_for_space(be, err, 0)) err = once();
 *     return ln__sq_relieved(be, err);
 * retry_for_space: 1 if err is LN_ENOSPC and (part of) the reserve was
 * just freed: an eighth stays for writes that delete jobs (for_delete 1);
 * relieved: after a successful write with the reserve freed, checkpoint so
 * the WAL is reused instead of growing; returns err. */
int ln__sq_reserve_open(sq_be *be, const char *path);
int ln__sq_reserve_check(sq_be *be);
/* An add failed with LN_ENOSPC from SQLite: say so truthfully. */
int ln__sq_add_full(sq_be *be);
int ln__sq_reserve_free(const char *path);
int ln__sq_reserve_release(sq_be *be, int for_delete);
void ln__sq_relieve(sq_be *be);
int ln__sq_retry_for_space(sq_be *be, int err, int for_delete);
int ln__sq_relieved(sq_be *be, int err);
/* Around an operation that frees space (clean, remove, drain, obliterate,
 * trim) or releases jobs: room_begin before it (1 when the reserve is not
 * whole: the operation then runs in small transactions), room_end after
 * it, whatever it returned: the emergency part of the reserve is taken
 * back for the next one. */
int ln__sq_room_begin(sq_be *be);
void ln__sq_room_end(sq_be *be);
/* At the start of every write transaction: LN_ENOSPC for a write outside
 * room_begin .. room_end while the WAL cannot be checkpointed for lack of
 * room (it would grow the WAL past what a checkpoint can copy). */
int ln__sq_room_gate(sq_be *be);
/* Before a COMMIT: LN_ENOSPC for a write outside room_begin .. room_end,
 * the reserve not whole, that grew the database by more than the volume
 * has free for the checkpoint that copies it (and the WAL frames that
 * carry it), so a committed write can always be checkpointed. */
int ln__sq_room_commit(sq_be *be);

/* The checks of a file at open (file.c), each read-only; 0 or
 * LN_E* with errmsg set. check_schema: a lanes store or an empty database
 * (*version: its schema version), else LN_ECORRUPT. check_pages: PRAGMA
 * quick_check for files up to ln__sq_quick_check_max bytes (what it costs
 * is in file.c; tests set it to 0 to reach the checks of the run).
 * open_denied: after a failed open, LN_EACCES if the directory refuses a
 * new file, else 0. check_kind: before the open, LN_EINVAL for a path that
 * exists and is not a regular file (a device, a FIFO, a directory). */
int ln__sq_check_schema(sq_be *be, int64_t *version);
int ln__sq_check_pages(sq_be *be, const char *path);
int ln__sq_open_denied(sq_be *be, const char *path);
int ln__sq_check_kind(sq_be *be, const char *path);
extern int64_t ln__sq_quick_check_max;
/* jobs.h's ln_jobs_check: quick_check or (thorough) integrity_check of the
 * whole file. */
int ln__sq_check(ln__jobs_be *b, int thorough);

/* A one-row, one-column query's value into *out (left as is without a
 * row). 0 or LN_E*. */
int ln__sq_pragma_int(sq_be *be, const char *sql, int64_t *out);

/* The SQL of a statement (tests check every one's query plan). */
const char *ln__sq_sql_text(sq_stmt id);

/* The store clock in SQL: ms since the Unix epoch (julianday('now')). */
#define SQ_NOW_SQL "CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER)"

/* Run sql (any number of statements, no rows wanted); what names it in
 * the error. 0 or LN_E* with errmsg set. */
int ln__sq_exec_sql(sq_be *be, const char *sql, const char *what);

/* Create or migrate the schema to SQ_SCHEMA_VERSION (schema.c),
 * all under one write lock. 0 or LN_E* with errmsg set. */
int ln__sq_migrate(sq_be *be);

/* The prepared statement id, reset and with bindings cleared, or NULL
 * (be->base.errmsg set). */
sqlite3_stmt *ln__sq_stmt_get(sq_be *be, sq_stmt id);

/* LN_ECORRUPT with "store is corrupt: <what>" in errmsg: for a row that
 * cannot be (a NULL in a NOT NULL column, an unknown state), or indexes
 * that disagree with their table. */
int ln__sq_corrupt(sq_be *be, const char *what, long long rid);

/* Map a SQLite result code to LN_E*, put "what: sqlite message" in errmsg. */
int ln__sq_err(sq_be *be, int rc, const char *what);

/* Run a statement that returns no rows (BEGIN, COMMIT...). 0 or LN_E*. */
int ln__sq_exec(sq_be *be, sq_stmt id);

/* Start a write transaction (BEGIN IMMEDIATE, waiting up to the busy
 * timeout) and read the store clock into *now_ms. On error nothing is open. */
int ln__sq_begin_write(sq_be *be, int64_t *now_ms);
/* COMMIT; on failure ROLLBACK. */
int ln__sq_commit(sq_be *be);
/* ROLLBACK if a transaction is open; keeps be->base.errmsg. */
void ln__sq_rollback(sq_be *be);

/* Bind the rowid and token of ref (a job a worker holds) to parameters 1
 * and 2 of a fenced statement ("... WHERE rid = ?1 AND token = ?2"). */
static inline void ln__sq_bind_ref(sqlite3_stmt *s, const ln__job_ref *ref) {
    sqlite3_bind_int64(s, 1, (sqlite3_int64)ref->key);
    sqlite3_bind_int64(s, 2, strtoll(ref->token, NULL, 10));
}

/* Step a statement that returns no rows or whose rows are ignored:
 * 0 or LN_E*. */
int ln__sq_run(sq_be *be, sqlite3_stmt *s, const char *what);
/* *out: a copy of column col's text (NULL for SQL NULL); 0 or LN_ENOMEM. */
int ln__sq_dup_text(sqlite3_stmt *s, int col, char **out);

/* Run the one-shot statement sql (prepared, bound, stepped, finalized
 * here): its parameters ?1, ?2, ... by the letters of binds, each taking
 * its argument(s): 'i' an int64_t; 'j' an int64_t, NULL when <= 0; 't' a
 * text (const char *, copied); 'd' a text and its length (const char *,
 * size_t). With out (may be NULL), the first column of the row it
 * returns, if any (0 without a row). 0, or LN_E* naming what. */
int ln__sq_run_once(sq_be *be, const char *what, int64_t *out, const char *sql, const char *binds,
                    ...);

/* Add delta (may be negative; 0 does nothing) to the counter of queue's
 * jobs in ln_job_state state, inside the caller's write transaction. */
int ln__sq_count(sq_be *be, const char *queue, int state, int64_t delta);

/* Parse a public job id: > 0 for a store-numbered id (decimal), 0 for a
 * caller id. */
int64_t ln__sq_numeric_id(const char *id);

/* ---- The methods and their helpers, by file, in backend.h's order ---- */

/* add.c: the add method. insert_job: one S_ADD insert of job j into queue
 * (every binding, and the move to the front of a lifo job, with a write
 * transaction open): 0 inserted (sqlite3_last_insert_rowid is its rid), 1
 * its caller id exists (nothing inserted), or an error; what names the
 * operation in its message. The add, the flow add and the scheduler's
 * iterations share it. new_state: the ln_job_state S_ADD gives a new job
 * of options o (the counter to raise): delayed, prioritized or waiting.
 * add_events: a new job's events, as BullMQ's add writes them: added, then
 * delayed (with its due time) or waiting. */
int ln__sq_add(ln__jobs_be *b, const char *queue, ln__job_new *jobs, size_t n);
int ln__sq_insert_job(sq_be *be, const char *queue, const ln__job_new *j, int64_t now,
                      const char *what);
int ln__sq_new_state(const ln_job_opts *o);
int ln__sq_add_events(sq_be *be, const char *queue, const ln__job_new *j, int64_t now);
/* add.c: deduplication at add, inside its transaction: check j's dedup
 * id: 1 = deduplicated (j->id = the holder, j->existed = 1; nothing to
 * add), 0 = add it (a replaced delayed holder was deleted) and then hold
 * the id with ln__sq_dedup_hold(..., *expires) (-1 = none), or an error. */
int ln__sq_dedup_check(sq_be *be, const char *queue, ln__job_new *j, int64_t now, int64_t *expires);
int ln__sq_dedup_hold(sq_be *be, const char *queue, const ln_job_opts *o, int64_t rid,
                      int64_t expires);
/* dedup_next.c: keep-last's next job and reschedule. _open at open (the
 * TEMP trigger, the function it calls); _requeue from ln__sq_commit when
 * be->dedup_due: add the due next jobs; the others from
 * ln__sq_dedup_check. */
int ln__sq_dedup_next_open(sq_be *be);
int ln__sq_dedup_requeue(sq_be *be);
int ln__sq_dedup_store_next(sq_be *be, const char *queue, const ln__job_new *j);
int ln__sq_dedup_drop_next(sq_be *be, const char *queue, const char *deid);
int ln__sq_dedup_reschedule(sq_be *be, int64_t rid, int64_t delay_ms, int64_t now);
char *ln__sq_dedup_opts_json(const ln_job_opts *o);
/* backoff.c: store o's backoff jitter and custom type on the job just
 * inserted (sqlite3_last_insert_rowid), a no-op without them; read them
 * from columns col (jitter) and col + 1 (type, copied into *type). 0 or an
 * error code. */
int ln__sq_add_backoff(sq_be *be, const ln_job_opts *o);
int ln__sq_read_backoff(sq_be *be, sqlite3_stmt *s, int col, double *jitter, char **type);

/* view.c: get, counts, list, list_after, logs. stmt_by_id: cached
 * statement by_rid or by_cid (by the id's form) with queue bound as ?1 and
 * id as ?2; NULL (LN_EBACKEND, errmsg set) on failure. find_job: a job by
 * public id: its rowid and stored state; LN_ENOENT. read_info: fill info
 * from a row of INFO_COLS (sql.c). */
int ln__sq_get(ln__jobs_be *b, const char *queue, const char *id, ln_job_info *info);
int ln__sq_counts(ln__jobs_be *b, const char *queue, ln_job_counts *c);
int ln__sq_list(ln__jobs_be *b, const char *queue, int state, size_t offset, size_t limit,
                ln_job_info **out, size_t *n);
int ln__sq_list_after(ln__jobs_be *b, const char *queue, int state, const char *after, size_t limit,
                      ln_job_info **out, size_t *n);
int ln__sq_logs(ln__jobs_be *b, const char *queue, const char *id, char ***lines, size_t *n);
sqlite3_stmt *ln__sq_stmt_by_id(sq_be *be, sq_stmt by_rid, sq_stmt by_cid, const char *queue,
                                const char *id);
int ln__sq_find_job(sq_be *be, const char *queue, const char *id, int64_t *rid, int *state);
int ln__sq_read_info(sq_be *be, sqlite3_stmt *s, ln_job_info *info);

/* retry.c */
int ln__sq_retry(ln__jobs_be *b, const char *queue, const char *id, int state, int64_t *before_ms,
                 size_t *count);

/* edit.c: remove, promote, edit. remove_row: delete job rid (not active)
 * and free the deduplication id it holds (any TTL); *priority gets its
 * priority; what names the caller in an error. prev_name: the "removed"
 * event's prev for a job of state and priority. trim_small: trim queue's
 * events to its newest max in small transactions, for a full disk;
 * *count (may be NULL): how many went. */
int ln__sq_remove(ln__jobs_be *b, const char *queue, const char *id);
int ln__sq_promote(ln__jobs_be *b, const char *queue, const char *id);
int ln__sq_edit(ln__jobs_be *b, const char *queue, ln__jobs_edit *e);
int ln__sq_remove_row(sq_be *be, const char *queue, int64_t rid, int *priority, const char *what);
const char *ln__sq_prev_name(int state, int priority);
int ln__sq_trim_small(sq_be *be, const char *queue, size_t max, size_t *count);

/* cancel.c */
int ln__sq_cancel(ln__jobs_be *b, const char *queue, const char *id, const char *reason);
int ln__sq_cancel_poll(ln__jobs_be *b, const char *queue, int64_t *mark, const ln__job_ref *refs,
                       int *gone, size_t n);

/* step.c: the worker's round trip, and progress, log, pending beside it.
 * apply_keep: a queue's retention after a job of queue finished in
 * 'state' (completed / failed) with the job's keep mode and value;
 * uncounted: jobs this transaction moved into 'state' that lanes_counts
 * does not show yet (the inline-counted completions, see above);
 * keep-count trims use it. */
int ln__sq_step(ln__jobs_be *b, const char *queue, ln__jobs_step *st);
int ln__sq_progress(ln__jobs_be *b, const char *queue, const ln__job_ref *ref, const char *json);
int ln__sq_log(ln__jobs_be *b, const char *queue, const ln__job_ref *ref, const char *line);
int ln__sq_pending(ln__jobs_be *b, const char *queue, int *pending);
int ln__sq_apply_keep(sq_be *be, const char *queue, int64_t rid, int state, int mode, int64_t value,
                      int64_t now_ms, int64_t uncounted);

/* stalled.c */
int ln__sq_recover_stalled(ln__jobs_be *b, const char *queue, unsigned max_stalled,
                           const char *reason, size_t *requeued, size_t *failed);
int ln__sq_release(ln__jobs_be *b, const char *queue, const ln__job_ref *refs, int *rc, size_t n);

/* workers.c (lanes_workers) */
int ln__sq_workers(ln__jobs_be *b, const char *queue, size_t max, ln_worker_info **out, size_t *n);
int ln__sq_worker_beat(ln__jobs_be *b, const char *queue, int64_t *id, int leaving);

/* flow.c: add_flow, children, and the hook of the completion transaction:
 * child 'rid' (of queue, public id) with parent prid and failure options
 * pflags (LN__FLOW_*) finished (completed 1: with result text; 0: failed
 * for good with reason text). */
int ln__sq_add_flow(ln__jobs_be *b, ln__flow_new *nodes, size_t n);
int ln__sq_children(ln__jobs_be *b, const char *queue, const char *id, ln_job_children *out);
/* The worker recording a failure: its queue and remove_on_fail, for the
 * fail-parent parents of that queue the failure fails (NULL: none, as for
 * a cancel or the stalled check). */
typedef struct ln__sq_wkeep {
    const char *queue;
    ln_job_keep keep;
} ln__sq_wkeep;
int ln__sq_flow_child_done(sq_be *be, const char *queue, const char *id, int64_t rid, int64_t prid,
                           int pflags, int completed, const char *text, int64_t now,
                           const ln__sq_wkeep *wk);
/* A completion refused by the job's dependencies: with a failed
 * fail-parent child, *d turned into the final failure that replaces it
 * (1); with pending ones, 2: nothing to write, the worker records the
 * failure with its backoff (LN__DONE_PENDING_DEPS); 0 when the job is
 * simply not held (stale). */
int ln__sq_flow_refused(sq_be *be, ln__job_done *d, char *reason, size_t reason_size);
/* A clean of failed jobs takes the parents of its queue that it leaves
 * without a dependency: collect them before its delete, remove those it
 * released after. */
int ln__sq_flow_clean_parents(sq_be *be, const char *queue, int64_t keep, int64_t cutoff, int chunk,
                              int64_t **out, size_t *n);
int ln__sq_flow_clean_drop(sq_be *be, const char *queue, const int64_t *parents, size_t n);
/* Parent prid out of waiting-children (force: even with deps left), with
 * its event. */
int ln__sq_flow_release(sq_be *be, int64_t prid, int force, int64_t now);
/* flow_tree.c */
int ln__sq_remove_tree(ln__jobs_be *b, const char *queue, const char *id, size_t max,
                       size_t *removed);
int ln__sq_remove_unprocessed(ln__jobs_be *b, const char *queue, const char *id, size_t max,
                              size_t *removed);
/* flow_parent.c: wait_children, wait_child; and dynflow_link: job j of
 * queue (job i of n), just inserted as row rid, or (rid 0) a custom id
 * that exists, added with opts.parent_*: linked to its parent in
 * ln__sq_add's transaction. */
int ln__sq_wait_children(ln__jobs_be *b, const char *queue, const ln__job_ref *ref);
int ln__sq_wait_child(ln__jobs_be *b, const char *queue, const ln__job_ref *ref,
                      const char *child_queue, const char *child_id);
int ln__sq_dynflow_link(sq_be *be, const char *queue, const ln__job_new *j, int64_t rid, size_t i,
                        size_t n, int64_t now);

/* sched.c: job schedulers. sched_taken runs inside the take's transaction
 * (step.c) for the n jobs it took: each that is its scheduler's current
 * iteration makes the next. is_current_iteration: 1 if id is the job of a
 * scheduler's current iteration ("repeat:<id>:<ms>", <ms> its next_at),
 * which remove and cancel leave (its take makes the next: the schedule
 * would end), as on Redis; else 0. */
int ln__sq_sched_upsert(ln__jobs_be *b, const char *queue, const ln__sched_new *s, char **job_id);
int ln__sq_sched_remove(ln__jobs_be *b, const char *queue, const char *id);
int ln__sq_sched_get(ln__jobs_be *b, const char *queue, const char *id, ln_job_scheduler *out);
int ln__sq_sched_list(ln__jobs_be *b, const char *queue, size_t offset, size_t limit,
                      ln_job_scheduler **out, size_t *n);
int ln__sq_sched_taken(sq_be *be, const char *queue, const ln__job_taken *taken, size_t n,
                       int64_t now);
int ln__sq_is_current_iteration(sq_be *be, const char *queue, const char *id);

/* limit.c: rate limits and global concurrency, inside the step's write
 * transaction. limit_take, before the take: how many of st->want the
 * limits let through (*allowed; 0 with st->limited_ms set when the rate
 * limit is reached), *counted = 1 when the take must then be counted by
 * limit_count (ntaken jobs). limit_requeue: a LN__DONE_LIMITED outcome
 * (d->rc as record_one's in step.c), and st->limited_ms. */
int ln__sq_limits(ln__jobs_be *b, const char *queue, ln__jobs_limits *l);
int ln__sq_limit_take(sq_be *be, const char *queue, ln__jobs_step *st, int64_t now, size_t *allowed,
                      int *counted);
int ln__sq_limit_count(sq_be *be, const char *queue, const ln__jobs_step *st, int64_t now);
int ln__sq_limit_requeue(sq_be *be, const char *queue, ln__job_done *d, ln__jobs_step *st,
                         int64_t now);

/* events.c (has the design): the method; write one event of queue, named
 * name, of job job_id (NULL: none), with up to two more string fields
 * (k1/v1, k2/v2; a NULL key ends the list), in the caller's write
 * transaction at the store time now. Every LN__SQ_EVENTS_TRIM_EVERY-th
 * event also deletes a bounded chunk of events older than the newest
 * LN_JOBS_EVENTS_KEEP. */
int ln__sq_events_open(ln__jobs_be *b, const char *queue, const char *from, ln__jobs_events **out);
int ln__sq_event(sq_be *be, const char *queue, const char *name, const char *job_id, const char *k1,
                 const char *v1, const char *k2, const char *v2, int64_t now);
/* The event of a run of statement id (S_EVENT_PROMOTE:
 * one event per job they are about to move) with ?1 = queue, ?2 = now. */
int ln__sq_events_for(sq_be *be, sq_stmt id, const char *queue, int64_t now);
/* The public id of row rid with caller id cid (NULL: store-numbered):
 * cid itself, or rid written into num (size bytes, >= 21). */
const char *ln__sq_public_id(char *num, size_t size, int64_t rid, const char *cid);
/* ln__sq_public_id's id as a new string (ln__free), NULL without memory. */
char *ln__sq_id_dup(int64_t rid, const char *cid);
/* At open: the TEMP trigger that writes the event of a flow parent the
 * schema's trigger releases when its last pending child is deleted. */
int ln__sq_parent_events_open(sq_be *be);

/* metrics.c (jobs.h "Metrics"): the read method; and count the completions
 * and final failures of st->done that were recorded (rc 0) into queue's
 * metrics, in the step's write transaction at store time now. */
int ln__sq_metrics(ln__jobs_be *b, const char *queue, int type, int64_t start, int64_t end,
                   ln_job_metrics *out);
int ln__sq_metrics_collect(sq_be *be, const char *queue, const ln__jobs_step *st, int64_t now);

/* admin.c: a queue as a whole. */
int ln__sq_queues(ln__jobs_be *b, size_t max, char ***names, size_t *n);
int ln__sq_pause(ln__jobs_be *b, const char *queue, int paused);
int ln__sq_is_paused(ln__jobs_be *b, const char *queue, int *paused);
int ln__sq_clean(ln__jobs_be *b, const char *queue, int state, int64_t age_ms, uint64_t keep,
                 size_t *removed);
int ln__sq_drain(ln__jobs_be *b, const char *queue, size_t *removed);
int ln__sq_obliterate(ln__jobs_be *b, const char *queue, int force, int64_t *left, size_t *removed,
                      int *more);

#endif
