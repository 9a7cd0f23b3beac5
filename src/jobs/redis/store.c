/* store.c - the Redis store of lanes jobs, wire-compatible with BullMQ 6.7:
 * the same keys, job hash fields, scores and events, so BullMQ producers,
 * workers and dashboards share queues with lanes (docs/internals/redis-layout.md).
 *
 * DESIGN
 * Every op is one Lua script (lua/, embedded by
 * scripts/embed-lua.sh into redis_scripts.c) run with EVALSHA on the
 * instance's connection, so each move is atomic on the server and the
 * lock-token check sits in the same script as the move out of 'active'.
 * Scripts read the time with TIME, so leases and due times use the
 * server's clock (backend.h). A queue's keys are "<prefix>:<queue>:<suffix>"
 * (prefix "bull" unless the URL says ?prefix=); the scripts get the queue
 * base as KEYS[1] and build the rest from it.
 *
 * Leases are BullMQ locks: the key <id>:lock holds the token with a PX
 * expiry. A token is "<128 random bits in hex>:<per-instance counter>", so
 * it is unique for every take ever. Once a lock lapsed, its holder can no
 * longer finish the job (LN_ESTALE, BullMQ's "Missing lock").
 *
 * Connection failures: a dropped, killed or timed-out connection costs the
 * op in flight (LN_EBACKEND) and a later op reconnects, with backoff
 * (conn.c), so ops fail fast while the server is down and the worker
 * loop, which treats LN_EBACKEND as transient, rides out a restart. A step
 * repeated after a lost reply is safe but not exact: outcomes it had
 * already recorded report LN_ESTALE the second time, and jobs it had taken
 * stay active until their lease lapses and the stalled check puts them
 * back (at least once, never lost).
 *
 * Workers: a worker run gets two connections of its own besides the
 * instance's: its steps go through a pipe (pipe.c: up to two steps
 * in flight, so Redis runs one while the worker starts the jobs of the
 * last), and when idle it blocks in BZPOPMIN on BullMQ's marker
 * (wait.c) instead of polling, as BullMQ's Node workers do. The
 * pipe's connection is named as BullMQ names a worker's for as long as
 * the run lasts, so dashboards list the run (workers.c).
 *
 * Threads: the front serialises ops on an instance (backend.h), so the
 * instance needs no lock of its own; wait and pipe objects share only the
 * instance's read-only configuration.
 *
 * Files: this one opens and closes the instance and holds the method
 * table; each method lives in the file of its concept, the same name as
 * in sqlite/ (add.c, view.c, edit.c, retry.c, cancel.c, step.c,
 * stalled.c, flow.c, flow_tree.c, flow_parent.c, sched.c, limit.c,
 * events.c, metrics.c, workers.c, admin.c); redis_int.h lists them. The
 * plumbing is Redis's own: conn.c and cluster.c (connections, Redis
 * Cluster), replicas.c (WAIT), pipe.c and wait.c (a worker's own
 * connections), backoff.c (a job's backoff in BullMQ's form).
 */
#include "redis_int.h"

#include "internal.h"
#include "redis_replicas.h"
#include "redis_scripts.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

ln__redis_be *ln__redis_at(ln__jobs_be *be, const char *queue) {
    ln__redis_be *r = (ln__redis_be *)be;
    snprintf(r->key, sizeof r->key, "%s:%s:", r->cfg.prefix, queue);
    ln__redis_route(&r->conn, r->key); /* Redis Cluster: the queue's slot */
    return r;
}

int ln__redis_public_rc(int rc) {
    return ln__redis_conn_lost(rc) ? LN_EBACKEND : rc;
}

redisReply *ln__redis_run(ln__redis_be *r, int which, ln__redis_args *a, int *rc) {
    if (a->oom) {
        *rc = ln__jobs_be_err(&r->base, LN_ENOMEM, "out of memory");
        return NULL;
    }
    redisReply *rep = ln__redis_eval(&r->conn, which, r->key, (int)a->n, a->v, a->len, rc);
    if (!rep) *rc = ln__redis_public_rc(*rc);
    return rep;
}

redisReply *ln__redis_cmd(ln__redis_be *r, int argc, const char **argv, int *rc) {
    redisReply *rep = ln__redis_command(&r->conn, argc, argv, NULL, rc);
    if (!rep) *rc = ln__redis_public_rc(*rc);
    return rep;
}

int ln__redis_run_int(ln__redis_be *r, int which, ln__redis_args *a, int64_t *out) {
    int rc;
    redisReply *rep = ln__redis_run(r, which, a, &rc);
    ln__redis_args_free(a);
    if (!rep) return rc;
    if (rep->type != REDIS_REPLY_INTEGER)
        return ln__redis_bad_reply(&r->base, rep, ln__redis_scripts[which].name);
    *out = rep->integer;
    freeReplyObject(rep);
    return 0;
}

int ln__redis_bad_reply(ln__jobs_be *be, redisReply *rep, const char *what) {
    if (rep) freeReplyObject(rep);
    return ln__jobs_be_err(be, LN_EBACKEND, "redis: unexpected reply to %s", what);
}

int ln__redis_check(ln__jobs_be *be, int thorough) {
    (void)be;
    (void)thorough;
    return 0;
}

void ln__redis_close(ln__jobs_be *be, int forked) {
    ln__redis_be *r = (ln__redis_be *)be;
    if (!r) return;
    /* redisFree only closes the socket (no QUIT), so the child of a fork
     * leaves the parent's connection alone either way. */
    LN_UNUSED(forked);
    ln__redis_conn_free(&r->conn);
    ln__redis_cfg_free(&r->cfg);
    ln__free(r);
}

/* The method table, in backend.h's order and groups: each member points
 * straight at the function of the file of its concept. No worker_beat: a
 * worker run is known by its named connection (pipe.c, workers.c). */
static const ln__store_methods redis_methods = {
    /* the store: here */
    .version = LN__STORE_METHODS_VERSION,
    .name = "redis",
    .close = ln__redis_close,
    .check = ln__redis_check,
    /* jobs: add.c, view.c, retry.c, edit.c, cancel.c */
    .add = ln__redis_add,
    .get = ln__redis_get,
    .counts = ln__redis_counts,
    .list = ln__redis_list,
    .list_after = ln__redis_list_after,
    .logs = ln__redis_logs,
    .retry = ln__redis_retry,
    .remove = ln__redis_remove,
    .promote = ln__redis_promote,
    .cancel = ln__redis_cancel,
    .edit = ln__redis_edit,
    /* workers: step.c, stalled.c, view.c, wait.c, pipe.c, cancel.c, workers.c */
    .step = ln__redis_step,
    .recover_stalled = ln__redis_recover_stalled,
    .release = ln__redis_release,
    .progress = ln__redis_progress,
    .log = ln__redis_log,
    .pending = ln__redis_pending,
    .wait_open = ln__redis_wait_open,
    .pipe_open = ln__redis_pipe_open,
    .cancel_poll = ln__redis_cancel_poll,
    .worker_beat = NULL,
    .workers = ln__redis_workers,
    /* flows: flow.c, flow_tree.c, flow_parent.c */
    .add_flow = ln__redis_add_flow,
    .children = ln__redis_children,
    .remove_tree = ln__redis_remove_tree,
    .wait_children = ln__redis_wait_children,
    .wait_child = ln__redis_wait_child,
    .remove_unprocessed = ln__redis_remove_unprocessed,
    /* job schedulers: sched.c */
    .sched_upsert = ln__redis_sched_upsert,
    .sched_remove = ln__redis_sched_remove,
    .sched_get = ln__redis_sched_get,
    .sched_list = ln__redis_sched_list,
    .sched_taken = ln__redis_sched_taken,
    /* rate limits and global concurrency: limit.c */
    .limits = ln__redis_limits,
    /* events: events.c */
    .events_open = ln__redis_events_open,
    /* metrics: metrics.c */
    .metrics = ln__redis_metrics,
    /* a queue as a whole: admin.c */
    .queues = ln__redis_queues,
    .pause = ln__redis_pause,
    .is_paused = ln__redis_is_paused,
    .clean = ln__redis_clean,
    .drain = ln__redis_drain,
    .obliterate = ln__redis_obliterate,
};

/* BullMQ's requirements: Redis >= 6.0.6 for our scripts (LPOS), and
 * maxmemory-policy noeviction (evicting a lock or job key corrupts a queue),
 * which only earns a warning (r->base.warning, ln_jobs_warning) since
 * hosted Redis may hide the setting. */
static int check_server(ln__redis_be *r) {
    int rc;
    redisReply *rep = ln__redis_cmd(r, 2, (const char *[]){"INFO", "server"}, &rc);
    if (!rep) return rc;
    const char *v = rep->type == REDIS_REPLY_STRING ? strstr(rep->str, "redis_version:") : NULL;
    int major = 0, minor = 0, patch = 0;
    if (v) sscanf(v + 14, "%d.%d.%d", &major, &minor, &patch);
    freeReplyObject(rep);
    if (major * 10000 + minor * 100 + patch < 60006)
        return ln__jobs_be_err(&r->base, LN_ENOTSUP,
                               "redis %d.%d.%d is too old: lanes needs 6.0.6 or newer", major,
                               minor, patch);
    rep = ln__redis_command(&r->conn, 3, (const char *[]){"CONFIG", "GET", "maxmemory-policy"},
                            NULL, &rc);
    if (!rep) /* CONFIG may be disabled */
        return ln__redis_conn_lost(rc) ? ln__redis_public_rc(rc) : 0;
    if (rep->type == REDIS_REPLY_ARRAY && rep->elements == 2 &&
        rep->element[1]->type == REDIS_REPLY_STRING && strcmp(rep->element[1]->str, "noeviction"))
        snprintf(r->base.warning, sizeof r->base.warning,
                 "redis maxmemory-policy is '%s'; it should be 'noeviction' (an evicted job "
                 "or lock key corrupts a queue)",
                 rep->element[1]->str);
    freeReplyObject(rep);
    return 0;
}

int ln__jobs_redis_open(ln__jobs_be **out, const char *url, const ln_jobs_opts *opts, char *errmsg,
                        size_t errmsg_size) {
    ln__redis_be *r = ln__calloc(1, sizeof *r);
    if (!r) {
        snprintf(errmsg, errmsg_size, "out of memory");
        return LN_ENOMEM;
    }
    r->base.methods = &redis_methods;
    int rc = ln__redis_cfg_parse(&r->cfg, url, errmsg, errmsg_size);
    if (rc) {
        ln__free(r);
        return rc;
    }
    if ((rc = ln__redis_wait_settle(&r->cfg, opts, errmsg, errmsg_size)) != 0) goto fail;
    if (strlen(r->cfg.prefix) >= LN__REDIS_PREFIX_MAX) {
        snprintf(errmsg, errmsg_size, "redis key prefix longer than %d bytes",
                 LN__REDIS_PREFIX_MAX - 1);
        rc = LN_EINVAL;
        goto fail;
    }
    unsigned char rnd[16];
    if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd) {
        char ebuf[128];
        snprintf(errmsg, errmsg_size, "getrandom failed: %s", strerror_r(errno, ebuf, sizeof ebuf));
        rc = LN_EBACKEND;
        goto fail;
    }
    for (int i = 0; i < 16; i++) snprintf(r->token_base + 2 * i, 3, "%02x", rnd[i]);
    snprintf(r->worker, sizeof r->worker, "lanes-%d", (int)getpid());
    r->conn.cfg = &r->cfg;
    r->conn.err = r->base.errmsg;
    r->conn.err_size = sizeof r->base.errmsg;
    if ((rc = ln__redis_connect(&r->conn)) < 0 ||
        (rc = ln__redis_cluster_detect(&r->conn, &r->cfg)) < 0 || (rc = check_server(r)) < 0) {
        snprintf(errmsg, errmsg_size, "%s", r->base.errmsg);
        if (rc == LN_EIO) rc = LN_EBACKEND;
        goto fail;
    }
    *out = &r->base;
    return 0;
fail:
    ln__redis_close(&r->base, 0);
    return rc;
}
