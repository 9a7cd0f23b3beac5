/* pool.c - the pool: options, create, drain, destroy and statistics.
 *
 * A pool is an array of independent lanes (lane.h): each has its own
 * queue, mutex and worker threads, and lanes share nothing, so a long task
 * on one lane never delays the start of a task on another. Submitting is
 * in submit.c, the worker threads in lane_thread.c, everything done under
 * a lane's mutex in lane.c.
 */
#include "pool.h"

#include "thread_local.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static unsigned online_cpus(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1;
}

void ln_pool_opts_init(ln_pool_opts *opts) {
    if (opts == NULL) return;
    memset(opts, 0, sizeof *opts);
    unsigned cpu = online_cpus();
    /* LANES_THREADS is the counterpart of UV_THREADPOOL_SIZE. */
    const char *env = getenv("LANES_THREADS");
    if (env != NULL && *env != '\0') {
        char *end = NULL;
        long v = strtol(env, &end, 10);
        if (end != NULL && *end == '\0' && v >= 1 && v <= 1024) cpu = (unsigned)v;
    }
    opts->nlanes = 2;
    opts->lanes[LN_LANE_CPU] = (ln_lane_opts){"cpu", cpu, cpu, 10000, NULL, 0};
    opts->lanes[LN_LANE_IO] = (ln_lane_opts){"io", 1, 4, 10000, NULL, 0};
    for (unsigned i = 2; i < LN_MAX_LANES; i++)
        opts->lanes[i] = (ln_lane_opts){NULL, 1, 1, 10000, NULL, 0};
    opts->when_full = LN_FULL_FAIL;
    opts->timing = LN_TIMING_SAMPLED;
    opts->spin_us = 50;
}

static int check_queue_ops(const ln_queue_ops *q) {
    return q->version == LN_QUEUE_OPS_VERSION && q->create && q->destroy && q->push && q->shift &&
           q->size;
}

static int check_opts(const ln_pool_opts *o) {
    if (o->nlanes < 1 || o->nlanes > LN_MAX_LANES) return LN_EINVAL;
    if (o->when_full != LN_FULL_FAIL && o->when_full != LN_FULL_BLOCK) return LN_EINVAL;
    if (o->timing > LN_TIMING_ALL || o->spin_us > 1000000) return LN_EINVAL;
    for (unsigned i = 0; i < o->nlanes; i++) {
        const ln_lane_opts *l = &o->lanes[i];
        if (l->max_threads < 1 || l->max_threads > 4096) return LN_EINVAL;
        if (l->min_threads > l->max_threads) return LN_EINVAL;
        if (l->queue != NULL && !check_queue_ops(l->queue)) return LN_EINVAL;
        if (l->name != NULL && strlen(l->name) >= sizeof(((ln__lane *)0)->name)) return LN_EINVAL;
    }
    return 0;
}

int ln_pool_create(ln_pool **out, const ln_pool_opts *opts) {
    if (out == NULL) return LN_EINVAL;
    ln_pool_opts defaults;
    if (opts == NULL) {
        ln_pool_opts_init(&defaults);
        opts = &defaults;
    }
    int rc = check_opts(opts);
    if (rc != 0) return rc;

    ln__barrier_init(); /* before any submit can use it (barrier.h) */
    ln_pool *pool = ln__calloc(1, sizeof *pool);
    if (pool == NULL) return LN_ENOMEM;
    pool->timing = (int)opts->timing;
    pool->spin_us = opts->spin_us;
    pool->when_full = opts->when_full;
    rc = ln__completions_init(pool);
    if (rc != 0) {
        ln__free(pool);
        return rc;
    }
    unsigned made = 0;
    for (; made < opts->nlanes; made++) {
        rc = ln__lane_init(&pool->lanes[made], pool, (int)made, &opts->lanes[made]);
        if (rc != 0) break;
    }
    pool->nlanes = made;
    for (unsigned i = 0; rc == 0 && i < pool->nlanes; i++) rc = ln__lane_start(&pool->lanes[i]);
    if (rc != 0) {
        ln_pool_destroy(pool);
        return rc;
    }
    *out = pool;
    return 0;
}

void ln_pool_destroy(ln_pool *pool) {
    if (pool == NULL) return;
    for (unsigned i = 0; i < pool->nlanes; i++) ln__lane_begin_stop(&pool->lanes[i]);
    for (unsigned i = 0; i < pool->nlanes; i++) ln__lane_finish_stop(&pool->lanes[i]);
    /* Only now is every worker of every lane joined: a task of one lane may
     * have pushed into another lane's ring past a stale stop_hint. */
    for (unsigned i = 0; i < pool->nlanes; i++) ln__lane_purge_rings(&pool->lanes[i]);
    /* Every item has ended; run the completions still pending so each
     * ln_submit_cb task gets exactly one. */
    ln_pool_run_completions(pool);
    for (unsigned i = 0; i < pool->nlanes; i++) ln__lane_fini(&pool->lanes[i]);
    ln__completions_fini(pool);
    ln__free(pool);
}

int ln_pool_drain(ln_pool *pool) {
    if (pool == NULL) return LN_EINVAL;
    if (ln__current_pool() == pool) return LN_EBUSY;
    for (unsigned i = 0; i < pool->nlanes; i++) ln__lane_wait_idle(&pool->lanes[i]);
    return 0;
}

int ln_pool_lanes(const ln_pool *pool) {
    return pool == NULL ? LN_EINVAL : (int)pool->nlanes;
}

int ln_pool_lane_index(const ln_pool *pool, const char *name) {
    if (pool == NULL || name == NULL) return LN_EINVAL;
    for (unsigned i = 0; i < pool->nlanes; i++)
        if (strcmp(pool->lanes[i].name, name) == 0) return (int)i;
    return LN_ENOENT;
}

int ln_pool_stats(ln_pool *pool, int lane, ln_lane_stats *out) {
    if (pool == NULL || out == NULL || lane < 0 || (unsigned)lane >= pool->nlanes) return LN_EINVAL;
    return ln__lane_stats(&pool->lanes[lane], out);
}
