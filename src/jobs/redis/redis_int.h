/* redis_int.h - the Redis store's own: the instance, the first line every
 * store method shares, and the methods, each of exactly the type of its
 * member of ln__store_methods (backend.h), listed by the file that holds
 * it. store.c's table points straight at them. Internal to
 * src/jobs/redis/; not API.
 *
 * One error convention: a method returns 0 or a negative LN_E* code with
 * the detail in be->errmsg (ln__jobs_be_err). The instance's connection
 * describes its own failures there too, and ln__redis_run and
 * ln__redis_cmd turn a lost or unreachable server into LN_EBACKEND, which
 * the worker treats as transient (backend.h). A method's documentation is
 * its member's in backend.h; what is said here is what Redis adds.
 */
#ifndef LN_JOBS_REDIS_INT_H
#define LN_JOBS_REDIS_INT_H

#include "backend.h"
#include "redis_conn.h"
#include "sched_record.h"

#include <hiredis/hiredis.h>

#include <stddef.h>
#include <stdint.h>

#define LN__REDIS_PREFIX_MAX 256 /* bytes of a key prefix, with its NUL */
/* "<prefix>:<queue>:", the base of a queue's keys, with its NUL. */
#define LN__REDIS_BASE_MAX (LN__REDIS_PREFIX_MAX + LN_JOB_QUEUE_MAX + 2)

/* The instance (store.c). The front serialises ops on it (backend.h), so
 * it needs no lock of its own. */
typedef struct ln__redis_be {
    ln__jobs_be base;
    ln__redis_cfg cfg;
    ln__redis_conn conn;
    char token_base[33];          /* hex of 16 random bytes */
    uint64_t token_seq;           /* lock tokens are "<token_base>:<seq>" */
    char key[LN__REDIS_BASE_MAX]; /* the base of the queue of the op running */
    char worker[24];              /* "lanes-<pid>": processedBy, and a worker
                                     run's client name (workers.c) */
} ln__redis_be;

/* ---- store.c: the instance and the calls every method makes ---- */

/* The first line of every method on a queue: the instance of be, with
 * key set to the queue's base and the connection routed to its slot
 * (Redis Cluster). The front refuses ':' in queue names for every store
 * (it would make these keys ambiguous). */
ln__redis_be *ln__redis_at(ln__jobs_be *be, const char *queue);

/* Embedded script which (LN__RS_*) with KEYS[1] = r->key and ARGV = a
 * (not freed); a->oom fails it with LN_ENOMEM. The reply, or NULL with
 * *rc set: LN_EBACKEND for a lost or unreachable server, else as
 * ln__redis_command; the detail in r's errmsg. */
redisReply *ln__redis_run(ln__redis_be *r, int which, ln__redis_args *a, int *rc);
/* One command on r's connection, errors as ln__redis_run. */
redisReply *ln__redis_cmd(ln__redis_be *r, int argc, const char **argv, int *rc);
/* A script that returns one integer, into *out; a is freed. */
int ln__redis_run_int(ln__redis_be *r, int which, ln__redis_args *a, int64_t *out);
/* LN_EBACKEND, "unexpected reply to <what>"; rep (may be NULL) is freed. */
int ln__redis_bad_reply(ln__jobs_be *be, redisReply *rep, const char *what);
/* A lost or unreachable server is LN_EBACKEND once the store is open. */
int ln__redis_public_rc(int rc);

void ln__redis_close(ln__jobs_be *be, int forked);
/* Redis keeps its own data's structure: nothing to check from here. */
int ln__redis_check(ln__jobs_be *be, int thorough);

/* ---- Jobs ---- */
/* add.c: add.lua; with opts.parent, its parent section (flow_parent.c). */
int ln__redis_add(ln__jobs_be *be, const char *queue, ln__job_new *jobs, size_t n);
/* view.c: get.lua, counts.lua, list.lua (a cursor: "r<state>.<position>:<id>"),
 * the logs list, and an EXISTS of the pending sets. */
int ln__redis_get(ln__jobs_be *be, const char *queue, const char *id, ln_job_info *info);
int ln__redis_counts(ln__jobs_be *be, const char *queue, ln_job_counts *c);
int ln__redis_list(ln__jobs_be *be, const char *queue, int state, size_t offset, size_t limit,
                   ln_job_info **out, size_t *n);
int ln__redis_list_after(ln__jobs_be *be, const char *queue, int state, const char *after,
                         size_t limit, ln_job_info **out, size_t *n);
int ln__redis_logs(ln__jobs_be *be, const char *queue, const char *id, char ***lines, size_t *n);
int ln__redis_pending(ln__jobs_be *be, const char *queue, int *pending);
/* retry.c: requeue.lua. */
int ln__redis_retry(ln__jobs_be *be, const char *queue, const char *id, int state,
                    int64_t *before_ms, size_t *count);
/* edit.c: remove.lua, promote.lua, and one script per change of
 * jobs_edit.h (docs/internals/edit.md). */
int ln__redis_remove(ln__jobs_be *be, const char *queue, const char *id);
int ln__redis_promote(ln__jobs_be *be, const char *queue, const char *id);
int ln__redis_edit(ln__jobs_be *be, const char *queue, ln__jobs_edit *e);
/* The errors remove.lua and remove_tree.lua share, for job id. */
int ln__redis_remove_err(ln__jobs_be *be, const char *queue, const char *id, int64_t res);
/* cancel.c: cancel.lua and cancel_poll.lua (docs/internals/cancel.md). */
int ln__redis_cancel(ln__jobs_be *be, const char *queue, const char *id, const char *reason);
int ln__redis_cancel_poll(ln__jobs_be *be, const char *queue, int64_t *mark,
                          const ln__job_ref *refs, int *gone, size_t n);

/* ---- Workers ---- */
/* step.c: step.lua, and touch.lua for progress and log lines. */
int ln__redis_step(ln__jobs_be *be, const char *queue, ln__jobs_step *st);
int ln__redis_progress(ln__jobs_be *be, const char *queue, const ln__job_ref *ref,
                       const char *json);
int ln__redis_log(ln__jobs_be *be, const char *queue, const ln__job_ref *ref, const char *line);
/* stalled.c: recover.lua and release.lua. */
int ln__redis_recover_stalled(ln__jobs_be *be, const char *queue, unsigned max_stalled,
                              const char *reason, size_t *requeued, size_t *failed);
int ln__redis_release(ln__jobs_be *be, const char *queue, const ln__job_ref *refs, int *rcs,
                      size_t n);
/* wait.c: BZPOPMIN on BullMQ's marker, on a connection of its own that
 * borrows the instance's configuration (the handle outlives every wait).
 * Does not connect. */
int ln__redis_wait_open(ln__jobs_be *be, const char *queue, ln__jobs_wait **out);
/* pipe.c: the pipelined steps of a worker run, on a connection of their
 * own named as BullMQ names a worker's for as long as the run lasts
 * (workers.c). Does not connect. */
int ln__redis_pipe_open(ln__jobs_be *be, const char *queue, ln__jobs_pipe **out);
/* workers.c: CLIENT LIST, then TIME for the clock. */
int ln__redis_workers(ln__jobs_be *be, const char *queue, size_t max, ln_worker_info **out,
                      size_t *n);

/* ---- Flows (docs/internals/flows.md) ---- */
/* flow.c: flow.lua and children.lua. */
int ln__redis_add_flow(ln__jobs_be *be, ln__flow_new *nodes, size_t n);
int ln__redis_children(ln__jobs_be *be, const char *queue, const char *id, ln_job_children *out);
/* flow_tree.c: remove_tree.lua, whole or the unprocessed children only. */
int ln__redis_remove_tree(ln__jobs_be *be, const char *queue, const char *id, size_t max,
                          size_t *removed);
int ln__redis_remove_unprocessed(ln__jobs_be *be, const char *queue, const char *id, size_t max,
                                 size_t *removed);
/* flow_parent.c: wait_children.lua. */
int ln__redis_wait_children(ln__jobs_be *be, const char *queue, const ln__job_ref *ref);
int ln__redis_wait_child(ln__jobs_be *be, const char *queue, const ln__job_ref *ref,
                         const char *child_queue, const char *child_id);
/* add.lua's parent section after the n jobs' groups, only when one of
 * them has a parent (so a plain add sends nothing more): the prefix, then
 * per job the parent's queue ("" = none), id and LN__FLOW_* bits. On a
 * Cluster each parent's queue base must hash to r->key's slot: LN_EINVAL. */
int ln__redis_parent_push(ln__redis_be *r, ln__redis_args *a, const ln__job_new *jobs, size_t n);
/* add.lua's refusal {RC, i} for job i (a missing parent, a parent that
 * cannot be replaced): the error, rep freed; 0 for any other reply. */
int ln__redis_parent_refused(ln__jobs_be *be, redisReply *rep, const ln__job_new *jobs, size_t n);

/* ---- Job schedulers (sched.c: sched.lua; docs/internals/schedules.md) ---- */
int ln__redis_sched_upsert(ln__jobs_be *be, const char *queue, const ln__sched_new *s,
                           char **job_id);
int ln__redis_sched_remove(ln__jobs_be *be, const char *queue, const char *id);
int ln__redis_sched_get(ln__jobs_be *be, const char *queue, const char *id, ln_job_scheduler *out);
int ln__redis_sched_list(ln__jobs_be *be, const char *queue, size_t offset, size_t limit,
                         ln_job_scheduler **out, size_t *n);
int ln__redis_sched_taken(ln__jobs_be *be, const char *queue, const char *job_id);

/* ---- Limits, events, metrics ---- */
/* limit.c: ratelimit.lua (docs/internals/ratelimit.md). */
int ln__redis_limits(ln__jobs_be *be, const char *queue, ln__jobs_limits *l);
/* events.c: XREAD BLOCK on "<base>events", on a connection of its own
 * that borrows the instance's configuration. Its connection errors are
 * its own: LN_ECONNREFUSED, LN_EIO as ln__redis_command. */
int ln__redis_events_open(ln__jobs_be *be, const char *queue, const char *from,
                          ln__jobs_events **out);
/* metrics.c: metrics.lua (docs/internals/metrics.md). */
int ln__redis_metrics(ln__jobs_be *be, const char *queue, int type, int64_t start, int64_t end,
                      ln_job_metrics *out);

/* ---- Admin (admin.c): queues as a whole ---- */
/* The queues under the prefix, found by their "<prefix>:<queue>:meta"
 * hash with SCAN (BullMQ keeps no registry of queues). */
int ln__redis_queues(ln__jobs_be *be, size_t max, char ***names, size_t *n);
int ln__redis_pause(ln__jobs_be *be, const char *queue, int paused);
int ln__redis_is_paused(ln__jobs_be *be, const char *queue, int *paused);
int ln__redis_clean(ln__jobs_be *be, const char *queue, int state, int64_t age_ms, uint64_t keep,
                    size_t *removed);
/* drain.lua in steps of at most 1,000 jobs: what the steps removed is in
 * *removed also on an error. */
int ln__redis_drain(ln__jobs_be *be, const char *queue, size_t *removed);
int ln__redis_obliterate(ln__jobs_be *be, const char *queue, int force, int64_t *left,
                         size_t *removed, int *more);

#endif /* LN_JOBS_REDIS_INT_H */
