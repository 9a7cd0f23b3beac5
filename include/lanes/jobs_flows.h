/* lanes/jobs_flows.h - part of <lanes/jobs.h>: flows, trees of jobs added in
 * one step, and a parent's children. Include <lanes/jobs.h>, which includes
 * this header; its conventions (errors, threads, names, who owns what) hold
 * here too. */
#ifndef LANES_JOBS_FLOWS_H
#define LANES_JOBS_FLOWS_H

#include <lanes/jobs.h>

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A flow is a tree of jobs added in one atomic step (BullMQ's
 * FlowProducer): a node with children is added in LN_JOB_WAITING_CHILDREN
 * and becomes waiting (or prioritized, or delayed by its own delay_ms)
 * once every child is done; children may sit in any queue of the store
 * and have children of their own. A parent released (its last pending
 * child completed, failed with an option that releases it, or was removed,
 * cleaned or trimmed) gets the event BullMQ writes, in its own queue, on
 * both stores: "waiting" {prev: "waiting-children"} (also in a paused
 * queue), or "delayed" {delay: its due time} when it has a delay_ms;
 * none when a clean or drain of its own queue removes it with the child. A child's result goes to its parent,
 * which reads them in its handler (ln_job_children) or from anywhere
 * (ln_jobs_children).
 *
 * What a child's final failure (no attempts left, or unrecoverable) does
 * to its parent, BullMQ's four options; the first set of these wins:
 *  - fail_parent_on_failure: the parent fails with the reason
 *    "child <key> failed" (on Redis as BullMQ: the parent goes to wait
 *    with a deferred failure that the next worker to take it records;
 *    an active parent only gets the deferred failure, and its completion
 *    is then refused);
 *  - continue_parent_on_failure: the failure is recorded
 *    (LN_CHILD_FAILED) and the parent is released at once, even with
 *    other children still pending;
 *  - ignore_dependency_on_failure: the failure is recorded
 *    (LN_CHILD_FAILED) and counts as done: the parent is released once no
 *    child is pending;
 *  - remove_dependency_on_failure: as ignore, and nothing is recorded;
 *  - none: the child stays a pending dependency (the parent waits until it
 *    is retried, ln_jobs_retry, and completes, or is removed).
 *
 * A parent refuses to complete while a child is pending or failed with
 * fail_parent_on_failure (BullMQ's moveToFinished): the handler's success
 * is then recorded as a failure instead, "Job <id> has pending
 * dependencies. moveToFinished" (retried while attempts remain, with the
 * job's backoff: its jitter, a custom type's backoff_strategy; the worker
 * counts the run as retried or failed), or, with such a failed child,
 * "Cannot complete job <id> because it has at least one failed child.
 * moveToFinished" (final).
 *
 * On Redis the layout is BullMQ 6.7's (parentKey and parent on the child,
 * <parent>:dependencies, :processed, :failed, :unsuccessful and the
 * queue's waiting-children), so trees added by Node's FlowProducer run on
 * lanes workers and trees added here run on Node workers. On a Redis
 * Cluster every queue of a flow must hash to one slot: the prefix is the
 * hash tag (as {bull}), not the queue names. A child's key is its Redis
 * key ("bull:q:7") on Redis and "<queue>:<id>" on SQLite. */

/* Most nodes of one flow, and the deepest nesting (root = depth 1). */
#define LN_FLOW_NODES_MAX 1000
#define LN_FLOW_DEPTH_MAX 64

typedef struct ln_flow_node {
    const char *queue;       /* NULL = the parent's queue (required on the root) */
    const char *name;        /* job name */
    const char *data_json;   /* NULL = "{}" */
    const ln_job_opts *opts; /* NULL = defaults. Not allowed in a flow:
                                dedup_id, and a job_id that exists;
                                parent_* only on the root */
    /* What this child's final failure does to its parent (see above);
     * 0/1 each, ignored on the root. */
    int fail_parent_on_failure;
    int continue_parent_on_failure;
    int ignore_dependency_on_failure;
    int remove_dependency_on_failure;
    const struct ln_flow_node *children; /* nchildren nodes, or NULL */
    size_t nchildren;
} ln_flow_node;

/* Add the tree under root, all or nothing. ids (may be NULL) receives one
 * id per node, nids of them at most, id_size bytes each, in pre-order
 * (root first, then each child's subtree in order). 0; LN_EINVAL (a bad
 * node: ln_jobs_errmsg names it by its pre-order index; more than
 * LN_FLOW_NODES_MAX nodes or LN_FLOW_DEPTH_MAX levels; queues of other
 * hash slots on a Redis Cluster), LN_ERANGE (nids or id_size too small;
 * nothing added) and ln_jobs_add's errors. Cost O(nodes), one store
 * transaction (one script call on Redis). */
LN_EXTERN int ln_jobs_add_flow(ln_jobs *jobs, const ln_flow_node *root, char *ids, size_t nids,
                               size_t id_size);
/* A flow whose root has a parent (FlowProducer's opts.parent on the
 * root): the root's opts.parent_queue / parent_id name an existing job,
 * and its opts' four failure options (not the node's, which the root
 * ignores) say what its final failure does to that parent. The root
 * becomes a pending child of the parent in the flow's one step, as a job
 * added with a parent does (ln_jobs_add; nothing about the parent
 * changes); the tree's result reaches the parent when the root finishes.
 * Refused, nothing stored: LN_ENOENT when the parent does not exist
 * ("missing key for parent job ...", also a parent that is a node of the
 * same flow), LN_EINVAL when the root names itself or, on a Redis
 * Cluster, the parent's queue hashes to another slot. A root with a
 * parent and no children is a flow of one node (its custom id that exists
 * refuses it, as in any flow; ln_jobs_add would attach it instead). */

/* A dependency of a parent, as its parent records it. */
enum {
    LN_CHILD_PENDING = 0,     /* not done yet */
    LN_CHILD_PROCESSED = 1,   /* completed: value is its result JSON */
    LN_CHILD_FAILED = 2,      /* failed, ignored or continued past:
                                 value is its reason */
    LN_CHILD_UNSUCCESSFUL = 3 /* failed with fail_parent_on_failure */
};

typedef struct ln_job_child {
    char *key;   /* "bull:q:7" (Redis) or "q:7" (SQLite) */
    char *queue; /* parsed from key; NULL if the key is of another prefix */
    char *id;
    int status;  /* LN_CHILD_* */
    char *value; /* see LN_CHILD_*; NULL for pending and unsuccessful */
} ln_job_child;

/* Most children ln_jobs_children reads per status. */
#define LN_JOB_CHILDREN_MAX 10000

typedef struct ln_job_children {
    char *parent_key;               /* the job's own parent, or NULL (not a child) */
    char *parent_queue, *parent_id; /* parsed, as ln_job_child's */
    ln_job_child *children;         /* processed, failed, unsuccessful,
                                       then pending; sorted by key within
                                       each */
    size_t n;
} ln_job_children;

/* The flow relations of job id of queue: its parent and its children
 * (BullMQ's getChildrenValues is the LN_CHILD_PROCESSED ones,
 * getFailedChildrenValues the LN_CHILD_FAILED ones). Clear *out with
 * ln_job_children_clear. A job of no flow has none. 0, LN_ENOENT,
 * LN_EINVAL, LN_ENOMEM, LN_EFORK, LN_EBACKEND. */
LN_EXTERN int ln_jobs_children(ln_jobs *jobs, const char *queue, const char *id,
                               ln_job_children *out);
LN_EXTERN void ln_job_children_clear(ln_job_children *c);
/* Inside a handler: ln_jobs_children of the job itself. */
LN_EXTERN int ln_job_children_read(ln_job *job, ln_job_children *out);

/* Children of an existing parent (BullMQ's queue.add with opts.parent,
 * job.moveToWaitingChildren and WaitingChildrenError): a job added with
 * ln_job_opts.parent_queue / parent_id becomes a dependency of that job,
 * whatever state the parent is in. Nothing about the parent changes: a
 * parent waiting, active, delayed or finished is not moved, one already
 * in waiting-children waits for this child too. The child's result or
 * failure reaches the parent by the flow rules above; while it is pending
 * the parent's completion is refused. Parent and child may sit in any
 * queues of the store (on a Redis Cluster of one hash slot, as a flow's:
 * else LN_EINVAL). A job scheduler's template and a flow node other than
 * the root cannot have a parent (LN_EINVAL); a flow's root can (below).
 *  - A parent that does not exist refuses the add: LN_ENOENT, "missing
 *    key for parent job ..." (in a bulk add nothing is stored). A bulk add
 *    goes job after job, as BullMQ's: a custom id an earlier job of it
 *    adds is a parent that exists for a later job, and an earlier job's
 *    parent counts for the rules below.
 *  - A custom job_id that exists is attached to the parent instead (as
 *    BullMQ's duplicated add): its result is recorded at once if it
 *    completed, else it becomes a pending dependency. Refused: LN_EEXIST
 *    when it is the child of another parent that exists (BullMQ's "cannot
 *    be replaced"), LN_EINVAL when it is the parent named or an ancestor
 *    of it (up to LN_JOBS_REMOVE_TREE_MAX levels: the two would wait for
 *    each other for good; BullMQ does not check), LN_EBUSY while
 *    it runs (BullMQ attaches a running job too; lanes refuses, since on
 *    Redis that run's completion may not reach the parent).
 *
 * The "process in steps" pattern: a running handler adds children with
 * its own queue and id as their parent, then calls ln_job_wait_children;
 * when that returns 1 the handler returns at once (what it returns and
 * sets is ignored), and the job runs again, on any worker of its queue (C
 * or Node), once every child is done: its children's results
 * (ln_job_children_read) tell it which step it is at. */

/* Inside a handler: if the job has pending dependencies, move it from
 * active to waiting-children now (BullMQ's moveToWaitingChildren): its
 * lease is released, no attempt is used (the run counts in
 * attempts_started), and the worker records nothing for this run (no
 * completion, failure or retry; its place frees when the handler
 * returns); the job is waiting again (or prioritized, or delayed by its
 * own delay_ms) once its last child is done. Returns 1 (moved: return
 * from the handler), 0 (no pending dependency: the job stays active and
 * the handler goes on), or an error: LN_ESTALE (the lease was lost, the
 * job is no longer active with it), LN_EFAILED (a child failed with
 * fail_parent_on_failure: the job can never complete; BullMQ's
 * UnrecoverableError "Cannot complete job <id> because it has at least
 * one failed child"), LN_EINVAL (job NULL), LN_EBACKEND; the detail is
 * in ln_jobs_errmsg of the worker's handle. A synchronous store call on
 * the handler's thread, like ln_job_children_read; on Redis it checks
 * the lock token as BullMQ does. A second call after a move returns
 * LN_ESTALE. The worker counts such runs in ln_worker_stats.waited. */
LN_EXTERN int ln_job_wait_children(ln_job *job);

/* As ln_job_wait_children, but only child child_id of child_queue counts
 * (BullMQ's moveToWaitingChildren with opts.child): the job moves (1)
 * when that child is a pending dependency of it, else it stays active
 * (0: the child is done, failed out of the dependencies, not its child, or
 * does not exist), whatever its other children are. Once moved, the job
 * waits for ALL its pending children as before (waiting-children is left
 * when the last one is done). A fail-parent child that failed still gives
 * LN_EFAILED first. LN_EINVAL also for a bad or NULL child queue / id. */
LN_EXTERN int ln_job_wait_child(ln_job *job, const char *child_queue, const char *child_id);

/* Remove the unprocessed children of job id of queue (BullMQ's
 * job.removeUnprocessedChildren): its pending dependencies but those that
 * failed (a failed child with no failure option, which the parent still
 * waits for, is kept), each with its own unprocessed children, level
 * after level; processed, failed and unsuccessful children are kept, as
 * their records in the job. The job itself is kept, in any state (it may
 * be running); one left without pending dependencies while in
 * waiting-children is released as when a child is removed (BullMQ moves it
 * to wait; the SQLite store to waiting, or delayed by its own delay_ms).
 * A removed child that had processed children of its own drops their
 * records with it (they stay, as completed jobs without a parent), as
 * BullMQ's does. A child that is active (a worker holds it) is skipped
 * with its whole subtree, as BullMQ skips a locked one: it stays a pending
 * dependency of its parent (which is then not released), and an active
 * grandchild of a removed child stays without its parent, as on BullMQ.
 * All or nothing for the rest: LN_ETOOBIG past LN_JOBS_REMOVE_TREE_MAX
 * entries (each child a parent of the walk records counts, with the job,
 * a skipped active one too), nothing removed. *removed (may be NULL): the
 * jobs removed. 0, LN_ENOENT (no such job), LN_EINVAL, LN_ETOOBIG,
 * LN_EBACKEND. One store transaction
 * (one script call on Redis; on a Redis Cluster of one hash slot, as a
 * flow's), O(entries). */
LN_EXTERN int ln_jobs_remove_unprocessed_children(ln_jobs *jobs, const char *queue, const char *id,
                                                  size_t *removed);

/* Child id of queue stops being a dependency of its parent (BullMQ's
 * job.removeChildDependency()): while its parent still waits for it (it
 * has not completed, nor failed in a way its parent recorded), it leaves
 * the parent's pending children and loses its parent (ln_jobs_children's
 * parent_key, and its failure options), and a parent in waiting-children
 * left with no pending child is released as the removal of that child
 * would release it (ready by its priority, or delayed by its own delay,
 * with its event). The child itself stays as it is, in any state; when it
 * finishes later nothing reaches the parent. *removed (may be NULL): 1,
 * or 0 when the job was no pending dependency (no parent, or already
 * processed): nothing changes then. LN_ENOENT: no such job, or its parent
 * no longer exists. One transaction / script. */
LN_EXTERN int ln_jobs_remove_child_dependency(ln_jobs *jobs, const char *queue, const char *id,
                                              int *removed);

#ifdef __cplusplus
}
#endif
#endif /* LANES_JOBS_FLOWS_H */
