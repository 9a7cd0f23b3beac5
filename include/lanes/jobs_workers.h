/* lanes/jobs_workers.h - part of <lanes/jobs.h>: the workers connected to a
 * queue (ln_jobs_workers). Include <lanes/jobs.h>, which includes this
 * header; its conventions (errors, threads, names, who owns what) hold here
 * too. */
#ifndef LANES_JOBS_WORKERS_H
#define LANES_JOBS_WORKERS_H

#include <lanes/jobs.h>

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What kind of worker an entry of ln_jobs_workers is. */
enum {
    LN_WORKER_UNKNOWN = 0,
    LN_WORKER_LANES = 1, /* an ln_worker_run (lanes worker, a C program) */
    LN_WORKER_BULLMQ = 2 /* a BullMQ worker (Node, or any client naming its
                            connection as BullMQ's workers do) */
};

/* One worker connected to a queue. Strings are owned by the entry (freed
 * by ln_jobs_workers_free); NULL where the store cannot tell. */
typedef struct ln_worker_info {
    char *id;           /* the store's id of it: on Redis the connection's
                           CLIENT ID, on SQLite the row of its run */
    char *name;         /* the worker's name: "lanes-<pid>" for lanes;
                           BullMQ's opts.name, or NULL when it has none */
    char *addr;         /* Redis: "ip:port" of its connection, as the
                           server sees it; SQLite: NULL */
    char *host;         /* SQLite: the host name it runs on; Redis: NULL */
    int64_t pid;        /* its process id where known (lanes), else 0 */
    int kind;           /* LN_WORKER_* */
    int64_t started_ms; /* store clock, ms since the Unix epoch: when it
                           connected (Redis) or its run started (SQLite) */
    int64_t seen_ms;    /* when the store last heard of it: its last
                           command (Redis) or heartbeat (SQLite) */
} ln_worker_info;

/* Most workers ln_jobs_workers returns. */
#define LN_JOB_WORKERS_MAX 1000

/* How often an ln_worker_run tells a SQLite store it is alive, and how
 * long after its last heartbeat it is still listed (3 heartbeats). A run
 * that stops cleanly is unlisted at once; one that crashed drops out
 * after the window. */
#define LN_JOB_WORKER_BEAT_MS 2000
#define LN_JOB_WORKER_WINDOW_MS (3 * LN_JOB_WORKER_BEAT_MS)

/* The workers connected to queue now, at most LN_JOB_WORKERS_MAX, oldest
 * first: *out is a new array of *n entries (free with
 * ln_jobs_workers_free), NULL when *n is 0.
 *  - Redis: every connection named as BullMQ names a worker's
 *    ("<prefix>:<base64(queue)>" or "<prefix>:<base64(queue)>:w:<name>"),
 *    read from CLIENT LIST (on a Redis Cluster, of the node serving the
 *    queue's slot), the way BullMQ's Queue.getWorkers() reads them. A
 *    running ln_worker_run names one connection of its own
 *    "<prefix>:<base64(queue)>:w:lanes-<pid>", so Node's getWorkers() and
 *    Bull Board list lanes workers too; it is gone once the run returns.
 *    Cost: CLIENT LIST is O(clients of the server).
 *  - SQLite: the runs whose last heartbeat (every LN_JOB_WORKER_BEAT_MS)
 *    is at most LN_JOB_WORKER_WINDOW_MS old; a run removes itself when it
 *    returns. One indexed range read.
 * 0, LN_EINVAL (bad queue, out or n NULL), LN_ENOMEM, LN_EFORK,
 * LN_EBACKEND; on Redis LN_EACCES when an ACL refuses CLIENT LIST (a
 * managed server that does not have it: LN_EBACKEND). */
LN_EXTERN int ln_jobs_workers(ln_jobs *jobs, const char *queue, ln_worker_info **out, size_t *n);

/* Free an array from ln_jobs_workers (its strings too). NULL is a no-op. */
LN_EXTERN void ln_jobs_workers_free(ln_worker_info *workers, size_t n);

#ifdef __cplusplus
}
#endif
#endif /* LANES_JOBS_WORKERS_H */
