/* pg_int.h - private to the PostgreSQL store (the files of this folder):
 * the instance, the statement helpers, the job row as read, and what each
 * file gives the others.
 *
 * The store shares BullMQ 6.7's PostgreSQL tables (docs/internals/postgres.md):
 * every statement names them qualified by the store's schema. SQL text is
 * written with '@' where the quoted schema and a '.' go ("@job" becomes
 * "bullmq".job); everything from callers travels as parameters. */
#ifndef LN_JOBS_PG_INT_H
#define LN_JOBS_PG_INT_H

#include "backend.h"

#include <lanes/jobs_metrics.h>
#include <lanes/jobs_schedulers.h>
#include <lanes/jobs_workers.h>

#include <libpq-fe.h>
#include <stddef.h>
#include <stdint.h>

/* The server's clock in ms since the epoch, fixed for the transaction. */
#define PG_NOW "(extract(epoch from now()) * 1000)::bigint"

/* The highest BullMQ migration (and client version) this store knows. */
#define PG_LEDGER_MAX 11
#define PG_CLIENT_VERSION 6

/* Most rows one bounded statement touches (promotions in a step, stalled
 * jobs in one pass, a drain's or a clean's step). */
#define PG_BATCH 1000
#define PG_BATCH_S "1000"

typedef struct pg_be {
    ln__jobs_be base; /* must be first */
    PGconn *conn;
    char *conninfo;   /* the URL without lanes' parameters */
    char schema[64];  /* a plain identifier */
    char qschema[72]; /* "schema" */
    char *sql;        /* scratch: the last statement expanded */
    size_t sql_cap;
} pg_be;

static inline pg_be *pgbe(ln__jobs_be *be) {
    return (pg_be *)be;
}

/* Run sql ('@' expanded) with n text parameters (NULL = SQL null). The
 * result when it is COMMAND_OK or TUPLES_OK, else NULL with errmsg set and
 * *rc the mapped LN_E* code. Reconnects a lost connection first. */
PGresult *ln__pg_q(pg_be *be, const char *sql, int n, const char *const *params, int *rc);
/* As ln__pg_q for a statement whose rows are not wanted: 0 or LN_E*. */
int ln__pg_exec(pg_be *be, const char *sql, int n, const char *const *params);
/* BEGIN / COMMIT / ROLLBACK (ROLLBACK ignores errors). */
int ln__pg_begin(pg_be *be);
int ln__pg_commit(pg_be *be);
void ln__pg_rollback(pg_be *be);
/* The rc of a failed step inside a transaction: roll back, return rc. */
int ln__pg_fail(pg_be *be, int rc);
/* Out of memory: errmsg, LN_ENOMEM. */
int ln__pg_oom(pg_be *be);

/* A field as an int64 (0 for null) or an ln__strdup'd string (NULL for
 * null; *oom set when the copy failed). */
int64_t ln__pg_i64(const PGresult *r, int row, int col);
char *ln__pg_dup(const PGresult *r, int row, int col, int *oom);

/* Decimal text of v into buf (24 bytes). */
const char *ln__pg_itoa(char *buf, int64_t v);

/* JSON as the caller gave it, byte for byte. BullMQ's columns are jsonb,
 * which normalises (spaces, key order, duplicate keys); when the text a
 * lanes caller gave differs from its jsonb form, the store keeps it in the
 * job's opts under a lanes key (PG_RAW_SET) and reads it back while it
 * still equals the column (a Node process that changed the column wins). */
#define PG_RAW(col, key)                                                                           \
    "CASE WHEN j.opts ? '" key "' AND (j.opts->>'" key "')::jsonb = " col " THEN j.opts->>'" key   \
    "' ELSE " col "::text END"
/* opts with key set to the text $n when it differs from its jsonb form,
 * else without it (an UPDATE's SET expression). */
#define PG_RAW_SET(n, key)                                                                         \
    "CASE WHEN " n "::text::jsonb::text = " n "::text THEN opts - '" key "' ELSE opts || "         \
    "jsonb_build_object('" key "', " n "::text) END"

/* A new place at the back of its priority's line, or at the front for a
 * job added with lifo (retries and requeues read the job's own option,
 * as BullMQ's); in an UPDATE of @job j. */
#define PG_SEQ_BY_LIFO                                                                             \
    "CASE WHEN coalesce((j.opts->>'lifo')::boolean, false) THEN -nextval('@job_seq'::regclass) "   \
    "ELSE nextval('@job_seq'::regclass) END"

/* The job row as every read selects it (PG_JOB_COLS, in this order), and
 * its conversion into an ln_job_info (paused: the queue is paused). */
/* clang-format off */
#define PG_RAW_DATA PG_RAW("j.data", "lanesData")
#define PG_RAW_RESULT PG_RAW("j.return_value", "lanesResult")
#define PG_RAW_PROGRESS PG_RAW("j.progress", "lanesProgress")
#define PG_JOB_COLS                                                                                \
    "j.id, j.state::text, j.name, " PG_RAW_DATA ", "                                              \
    "CASE WHEN j.state = 'completed' THEN coalesce(" PG_RAW_RESULT ", 'null') "                   \
    "ELSE " PG_RAW_RESULT " END, j.failed_reason, " PG_RAW_PROGRESS ", "                           \
    "(j.opts->>'tm')::jsonb->>'traceparent', (j.opts->>'tm')::jsonb->>'tracestate', "             \
    "j.priority, coalesce((j.opts->>'lifo')::boolean, false)::int, "                              \
    "coalesce((j.opts->>'attempts')::int, j.max_attempts), "                                      \
    "CASE WHEN j.state = 'completed' THEN greatest(j.attempts_made - 1, 0) "                      \
    "ELSE j.attempts_made END, j.attempts_started, j.stalled_count, "                             \
    "j.opts->'backoff'->>'type', coalesce((j.opts->'backoff'->>'delay')::bigint, 0), "            \
    "coalesce((j.opts->'backoff'->>'jitter')::float8, 0), j.added_at_ms, "                        \
    "CASE WHEN j.state = 'delayed' THEN j.process_at_ms "                                         \
    "ELSE j.added_at_ms + coalesce((j.opts->>'delay')::bigint, 0) END, "                          \
    "j.processed_at_ms, j.finished_at_ms, "                                                       \
    "coalesce((j.opts->>'lanesTimeout')::bigint, 0), j.seq"
/* clang-format on */
#define PG_JOB_NCOLS 24
int ln__pg_job_info(pg_be *be, const PGresult *r, int row, int paused, ln_job_info *info);
/* The backoff kind of a stored type name (NULL: fixed) and its custom
 * name (ln__strdup'd, NULL for fixed/exponential; *oom on failure). */
int ln__pg_backoff_kind(const char *type);

/* 1 if the queue is paused (meta.paused), 0, or a negative LN_E*. */
int ln__pg_paused(pg_be *be, const char *queue);
/* The queue's meta rows a lanes add writes when absent (version, event
 * length), so `queues` lists it. */
int ln__pg_touch_queue(pg_be *be, const char *queue);
/* NOTIFY bullmq_jobs with the queue's name (a worker may have work), and
 * bullmq_events as ln__pg_notify_events: every caller wrote events too. */
int ln__pg_notify_jobs(pg_be *be, const char *queue);
/* NOTIFY bullmq_events with the queue's name (new event rows: a Node
 * QueueEvents wakes), unless another transaction holds the queue's
 * notify lock (BullMQ's 'bullmq:evnotify:' try-lock). */
int ln__pg_notify_events(pg_be *be, const char *queue);
/* Write one event row; fields: a jsonb_build_object argument list in SQL
 * over parameters $2.. (e.g. "'jobId', $2::text"), n the parameter count
 * including $1 = queue. */
int ln__pg_event(pg_be *be, const char *queue, const char *event, const char *fields, int n,
                 const char *const *params);
/* Apply a job's retention after it finished in state (completed /
 * failed): the job's own option, else keep (the worker's). */
int ln__pg_retain(pg_be *be, const char *queue, const char *id, int completed,
                  const ln_job_keep *worker_keep);

/* Deduplication (dedup_next.c): job id finalized: free the ids it holds
 * without a TTL and add the jobs kept for them; keep a deduplicated add
 * as the id's next job; move a delayed holder's due time; drop the next
 * jobs of the ids job id holds (it is removed). */
int ln__pg_dedup_release(pg_be *be, const char *queue, const char *id);
int ln__pg_dedup_keep(pg_be *be, const char *queue, const ln__job_new *job);
int ln__pg_dedup_reschedule(pg_be *be, const char *queue, const char *holder, int64_t delay_ms);
int ln__pg_dedup_drop_next(pg_be *be, const char *queue, const char *id);
/* The queue's id sequence, made if missing, into seq (add.c). */
int ln__pg_id_sequence(pg_be *be, const char *queue, char *seq, size_t cap);

/* Rate limits and global concurrency (limit.c): how many of st->want a
 * take may have (st->limited_ms set when the limiter is full), and whether
 * the take is counted; then count what was taken. */
int ln__pg_limit_take(pg_be *be, const char *queue, ln__jobs_step *st, size_t *allowed, int *count);
int ln__pg_limit_count(pg_be *be, const char *queue, const ln__jobs_step *st);
int ln__pg_limits(ln__jobs_be *be, const char *queue, ln__jobs_limits *l);

/* Add one job inside the caller's transaction (add.c): seq the queue's id
 * sequence when job has no custom id. Fills job->id and job->existed. */
int ln__pg_add_one(pg_be *be, const char *queue, const char *seq, ln__job_new *job);

/* A flow node's link (flow.c): its child count (> 0: a parent, added
 * waiting-children), its parent (NULL: none) and LN__FLOW_* bits. */
typedef struct ln__pg_link {
    size_t nchildren;
    const char *parent_queue, *parent_id;
    int on_fail;
} ln__pg_link;
/* ln__pg_add_one with a flow link (NULL: none). */
int ln__pg_add_linked(pg_be *be, const char *queue, const char *seq, ln__job_new *job,
                      const ln__pg_link *link);

/* Flows (flow.c): child cq:cid of pq:pid finished (completed: with its
 * result JSON text, else failed for good with that reason), inside the
 * caller's transaction, before the child's retention; releases the parent
 * as docs/internals/flows.md says. Parent pq:pid out of waiting-children
 * (force: even with children pending), with its event and a NOTIFY. */
int ln__pg_flow_child_done(pg_be *be, const char *cq, const char *cid, const char *pq,
                           const char *pid, int completed, const char *text);
int ln__pg_flow_release(pg_be *be, const char *pq, const char *pid, int force);
/* Job queue:id (maybe a child) finished outside the step (a cancel), as
 * ln__pg_flow_child_done. */
int ln__pg_flow_finished(pg_be *be, const char *queue, const char *id, int completed,
                         const char *text);
/* After jobs of queue were deleted: their pending dependencies dropped,
 * their parents released when none is left (flows.md "parent events");
 * cascade (a clean, a drain): such a parent of queue is removed instead,
 * and so on up, a bounded climb. */
int ln__pg_flow_gone(pg_be *be, const char *queue, int cascade);
int ln__pg_add_flow(ln__jobs_be *be, ln__flow_new *nodes, size_t n);
/* An add with opts.parent_* (flow_parent.c), job i of n, inside the add's
 * transaction: a new child, or an existing custom id attached. */
int ln__pg_add_child(pg_be *be, const char *queue, const char *seq, ln__job_new *j, size_t i,
                     size_t n);
int ln__pg_remove_tree(ln__jobs_be *be, const char *queue, const char *id, size_t max,
                       size_t *removed);
int ln__pg_remove_unprocessed(ln__jobs_be *be, const char *queue, const char *id, size_t max,
                              size_t *removed);
/* An add's parent (opts.parent_*) checked under its advisory lock: it
 * exists (LN_ENOENT), it is not the job itself (LN_EINVAL); what prefixes
 * the message. Then the dependency row of cq:cid (processed when done)
 * and the parent's count. */
int ln__pg_parent_check(pg_be *be, const char *queue, const ln__job_new *j, const char *what);
int ln__pg_dep_add(pg_be *be, const char *pq, const char *pid, const char *cq, const char *cid,
                   int done);
int ln__pg_wait_children(ln__jobs_be *be, const char *queue, const ln__job_ref *ref);
int ln__pg_wait_child(ln__jobs_be *be, const char *queue, const ln__job_ref *ref,
                      const char *child_queue, const char *child_id);
int ln__pg_children(ln__jobs_be *be, const char *queue, const char *id, ln_job_children *out);

/* Schema preparation (schema.c): check the ledger, prepare a fresh one. */
int ln__pg_prepare(pg_be *be);

/* The members, by concept file. */
int ln__pg_add(ln__jobs_be *be, const char *queue, ln__job_new *jobs, size_t n);
int ln__pg_get(ln__jobs_be *be, const char *queue, const char *id, ln_job_info *info);
int ln__pg_counts(ln__jobs_be *be, const char *queue, ln_job_counts *counts);
int ln__pg_list(ln__jobs_be *be, const char *queue, int state, size_t offset, size_t limit,
                ln_job_info **out, size_t *n);
int ln__pg_list_after(ln__jobs_be *be, const char *queue, int state, const char *after,
                      size_t limit, ln_job_info **out, size_t *n);
int ln__pg_logs(ln__jobs_be *be, const char *queue, const char *id, char ***lines, size_t *n);
int ln__pg_pending(ln__jobs_be *be, const char *queue, int *pending);
/* The job's state (text into st, 32 bytes) under a row lock; LN_ENOENT
 * (edit.c; remove, promote, retry and cancel take it first). */
int ln__pg_lock_job(pg_be *be, const char *queue, const char *id, char *st);
int ln__pg_remove(ln__jobs_be *be, const char *queue, const char *id);
int ln__pg_promote(ln__jobs_be *be, const char *queue, const char *id);
int ln__pg_retry(ln__jobs_be *be, const char *queue, const char *id, int state, int64_t *before_ms,
                 size_t *count);
int ln__pg_cancel(ln__jobs_be *be, const char *queue, const char *id, const char *reason);
int ln__pg_edit(ln__jobs_be *be, const char *queue, ln__jobs_edit *e);
int ln__pg_metrics(ln__jobs_be *be, const char *queue, int type, int64_t start, int64_t end,
                   ln_job_metrics *out);
/* Count n final outcomes (completed 1, failed 0) keeping max points. */
int ln__pg_metrics_count(pg_be *be, const char *queue, int completed, uint64_t n, unsigned max);
int ln__pg_step(ln__jobs_be *be, const char *queue, ln__jobs_step *st);
int ln__pg_recover_stalled(ln__jobs_be *be, const char *queue, unsigned max_stalled,
                           const char *reason, size_t *requeued, size_t *failed);
int ln__pg_release(ln__jobs_be *be, const char *queue, const ln__job_ref *refs, int *rc, size_t n);
int ln__pg_progress(ln__jobs_be *be, const char *queue, const ln__job_ref *ref, const char *json);
int ln__pg_log(ln__jobs_be *be, const char *queue, const ln__job_ref *ref, const char *line);
int ln__pg_cancel_poll(ln__jobs_be *be, const char *queue, int64_t *mark, const ln__job_ref *refs,
                       int *gone, size_t n);
int ln__pg_queues(ln__jobs_be *be, size_t max, char ***names, size_t *n);
int ln__pg_pause(ln__jobs_be *be, const char *queue, int paused);
int ln__pg_is_paused(ln__jobs_be *be, const char *queue, int *paused);
int ln__pg_clean(ln__jobs_be *be, const char *queue, int state, int64_t age_ms, uint64_t keep,
                 size_t *removed);
int ln__pg_drain(ln__jobs_be *be, const char *queue, size_t *removed);
int ln__pg_obliterate(ln__jobs_be *be, const char *queue, int force, int64_t *left, size_t *removed,
                      int *more);
int ln__pg_events_open(ln__jobs_be *be, const char *queue, const char *from, ln__jobs_events **out);
int ln__pg_sched_upsert(ln__jobs_be *be, const char *queue, const ln__sched_new *s, char **job_id);
int ln__pg_sched_remove(ln__jobs_be *be, const char *queue, const char *id);
int ln__pg_sched_get(ln__jobs_be *be, const char *queue, const char *id, ln_job_scheduler *out);
int ln__pg_sched_list(ln__jobs_be *be, const char *queue, size_t offset, size_t limit,
                      ln_job_scheduler **out, size_t *n);
int ln__pg_sched_taken(ln__jobs_be *be, const char *queue, const char *job_id);
int ln__pg_worker_beat(ln__jobs_be *be, const char *queue, int64_t *id, int leaving);
int ln__pg_workers(ln__jobs_be *be, const char *queue, size_t max, ln_worker_info **out, size_t *n);
/* lanes' own table of worker runs, made at open when missing. */
int ln__pg_workers_prepare(pg_be *be);
int ln__pg_check(ln__jobs_be *be, int thorough);

#endif /* LN_JOBS_PG_INT_H */
