/* bench_pool.c - what a task costs in the pool, against the practical
 * limit of handing the same items from one thread to another.
 *
 * Workload (E1, docs/experiments.md#e1): 100,000 tasks of `value + 1`
 * submitted from one thread to the CPU lane, then wait for all; the result of
 * each task is written to results[i] and the count and last value are
 * checked. Pool creation, worker start and one warm-up task are outside the
 * timed span, as in Piscina's benchmark. Variants: groups (no handle per
 * task) and futures (one handle per task, waited and released), ring and list
 * queues, 1 and 2 worker threads, task timing sampled (the default,
 * LN_TIMING_SAMPLED), every task (LN_TIMING_ALL) and off, and "prefilled":
 * the workers are held at a gate until all 100,000 tasks are queued, which is
 * what Piscina's queue sees in E1 (its main thread submits everything before
 * a worker answers) and where the queue structure matters; and "batch": the
 * same tasks through one ln_group_submit_batch call.
 *
 * Fork-join (issue 32, docs/internals/forkjoin.md): fib(32) split to depth
 * 14 (each task above the leaves creates a group, submits its two children
 * and waits for them: 32,767 tasks), 2 CPU threads, against fib(32)
 * computed by plain recursion on the calling thread (the speedup).
 *
 * Baseline: a minimal single-producer single-consumer ring (power-of-two
 * slots, acquire/release indices) carrying the same 100,000 indices to one
 * consumer thread that computes the same results. It does no allocation,
 * no bookkeeping and never sleeps: the floor for any pool on this machine.
 *
 * Prints the median (and min-max) of the repeats, ns per task and tasks per
 * second, the ratio of each variant to the baseline, and whether the group
 * path with one worker (default options) is within the pool's target of 5x
 * of it (docs/experiments.md#e1).
 *   usage: bench_pool [--quick] [--repeats N] [--tasks N] [--only TEXT]
 * (--only runs the variants whose name contains TEXT)
 */
#include <lanes.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t ntasks = 100000;
static uint64_t *results;

static void *plus_one(void *arg) {
    size_t i = (size_t)(uintptr_t)arg;
    results[i] = (uint64_t)i + 1;
    return NULL;
}

static void check_results(const char *what) {
    for (size_t i = 0; i < ntasks; i++) {
        if (results[i] != i + 1) {
            fprintf(stderr, "%s: wrong result at %zu\n", what, i);
            exit(1);
        }
    }
    if (results[ntasks - 1] != ntasks) {
        fprintf(stderr, "%s: wrong last value\n", what);
        exit(1);
    }
}

/* ---- the SPSC baseline -------------------------------------------------- */

#define SPSC_SLOTS 4096 /* power of two */

typedef struct spsc {
    _Atomic size_t head; /* written by the consumer */
    char pad1[64];
    _Atomic size_t tail; /* written by the producer */
    char pad2[64];
    size_t slots[SPSC_SLOTS];
    _Atomic int go;
    _Atomic size_t done;
} spsc;

static void *spsc_consumer(void *arg) {
    spsc *q = arg;
    size_t head = 0;
    while (!atomic_load_explicit(&q->go, memory_order_acquire)) {
    }
    while (head < ntasks) {
        /* acquire: the slot written before the producer's release of tail */
        size_t tail = atomic_load_explicit(&q->tail, memory_order_acquire);
        while (head < tail) {
            size_t i = q->slots[head & (SPSC_SLOTS - 1)];
            results[i] = (uint64_t)i + 1;
            head++;
        }
        /* release: the producer may reuse the slots we have read */
        atomic_store_explicit(&q->head, head, memory_order_release);
    }
    atomic_store_explicit(&q->done, head, memory_order_release);
    return NULL;
}

static double run_spsc(void) {
    spsc *q = calloc(1, sizeof *q);
    pthread_t th;
    pthread_create(&th, NULL, spsc_consumer, q);
    uint64_t t0 = ln_now_ns();
    atomic_store_explicit(&q->go, 1, memory_order_release);
    size_t tail = 0, head_cache = 0;
    for (size_t i = 0; i < ntasks; i++) {
        while (tail - head_cache >= SPSC_SLOTS)
            head_cache = atomic_load_explicit(&q->head, memory_order_acquire);
        q->slots[tail & (SPSC_SLOTS - 1)] = i;
        tail++;
        atomic_store_explicit(&q->tail, tail, memory_order_release);
    }
    while (atomic_load_explicit(&q->done, memory_order_acquire) != ntasks) {
    }
    double ms = (double)(ln_now_ns() - t0) / 1e6;
    pthread_join(th, NULL);
    free(q);
    check_results("spsc");
    return ms;
}

/* ---- the pool ------------------------------------------------------------ */

typedef struct variant {
    const char *name;
    unsigned threads;
    const ln_queue_ops *queue;
    int futures;
    unsigned timing;
    int prefill; /* hold the workers until every task is queued */
    int batch;   /* submit through ln_group_submit_batch */
} variant;

static void **args;

/* A gate the prefill variants put in front of the tasks. */
static pthread_mutex_t gate = PTHREAD_MUTEX_INITIALIZER;
static void *wait_gate(void *arg) {
    (void)arg;
    pthread_mutex_lock(&gate);
    pthread_mutex_unlock(&gate);
    return NULL;
}

static double run_pool(const variant *v) {
    ln_pool_opts o;
    ln_pool_opts_init(&o);
    o.lanes[LN_LANE_CPU].min_threads = o.lanes[LN_LANE_CPU].max_threads = v->threads;
    o.lanes[LN_LANE_CPU].queue = v->queue;
    o.timing = v->timing;
    ln_pool *pool;
    if (ln_pool_create(&pool, &o) != 0) {
        fprintf(stderr, "ln_pool_create failed\n");
        exit(1);
    }
    ln_task *warm;
    ln_submit(pool, LN_LANE_CPU, plus_one, (void *)0, &warm);
    ln_task_wait(warm, NULL);
    ln_task_release(warm);
    memset(results, 0, ntasks * sizeof *results);

    double ms;
    if (!v->futures) {
        ln_group *g;
        ln_group_create(&g, pool);
        if (v->prefill) {
            pthread_mutex_lock(&gate);
            for (unsigned k = 0; k < v->threads; k++)
                ln_submit(pool, LN_LANE_CPU, wait_gate, NULL, NULL);
        }
        uint64_t t0 = ln_now_ns();
        if (v->batch) {
            size_t queued;
            if (ln_group_submit_batch(g, LN_LANE_CPU, plus_one, args, ntasks, &queued) != 0)
                exit(1);
        } else {
            for (size_t i = 0; i < ntasks; i++)
                if (ln_group_submit(g, LN_LANE_CPU, plus_one, (void *)(uintptr_t)i) != 0) exit(1);
        }
        if (v->prefill) pthread_mutex_unlock(&gate);
        ln_group_wait(g);
        ms = (double)(ln_now_ns() - t0) / 1e6;
        ln_group_destroy(g);
    } else {
        ln_task **t = malloc(ntasks * sizeof *t);
        uint64_t t0 = ln_now_ns();
        for (size_t i = 0; i < ntasks; i++)
            if (ln_submit(pool, LN_LANE_CPU, plus_one, (void *)(uintptr_t)i, &t[i]) != 0) exit(1);
        for (size_t i = 0; i < ntasks; i++) {
            ln_task_wait(t[i], NULL);
            ln_task_release(t[i]);
        }
        ms = (double)(ln_now_ns() - t0) / 1e6;
        free(t);
    }
    ln_pool_destroy(pool);
    check_results(v->name);
    return ms;
}

/* ---- fork-join: fib split with a group per task ----------------------------- */

#define FJ_N 32
#define FJ_SPLIT 14

typedef struct fj_job {
    ln_pool *pool;
    int n, split;
    long result;
} fj_job;

static long fib_seq(int n) {
    return n < 2 ? n : fib_seq(n - 1) + fib_seq(n - 2);
}

static void *fj_task(void *arg) {
    fj_job *j = arg;
    if (j->split == 0 || j->n < 2) {
        j->result = fib_seq(j->n);
        return NULL;
    }
    fj_job a = {j->pool, j->n - 1, j->split - 1, 0}, b = {j->pool, j->n - 2, j->split - 1, 0};
    ln_group *g;
    if (ln_group_create(&g, j->pool) != 0 || ln_group_submit(g, LN_LANE_CPU, fj_task, &a) != 0 ||
        ln_group_submit(g, LN_LANE_CPU, fj_task, &b) != 0 || ln_group_wait(g) != 0) {
        fprintf(stderr, "fork-join: a fork or join failed\n");
        exit(1);
    }
    ln_group_destroy(g);
    j->result = a.result + b.result;
    return NULL;
}

static double run_forkjoin(unsigned threads) {
    ln_pool_opts o;
    ln_pool_opts_init(&o);
    o.lanes[LN_LANE_CPU].min_threads = o.lanes[LN_LANE_CPU].max_threads = threads;
    ln_pool *pool;
    if (ln_pool_create(&pool, &o) != 0) exit(1);
    fj_job warm = {pool, 10, 3, 0}, root = {pool, FJ_N, FJ_SPLIT, 0};
    ln_task *t;
    if (ln_submit(pool, LN_LANE_CPU, fj_task, &warm, &t) != 0) exit(1);
    ln_task_wait(t, NULL);
    ln_task_release(t);
    uint64_t t0 = ln_now_ns();
    if (ln_submit(pool, LN_LANE_CPU, fj_task, &root, &t) != 0) exit(1);
    ln_task_wait(t, NULL);
    double ms = (double)(ln_now_ns() - t0) / 1e6;
    ln_task_release(t);
    ln_pool_destroy(pool);
    if (root.result != 2178309) { /* fib(32) */
        fprintf(stderr, "fork-join: wrong sum %ld\n", root.result);
        exit(1);
    }
    return ms;
}

static double run_fib_seq(void) {
    uint64_t t0 = ln_now_ns();
    volatile long r = fib_seq(FJ_N);
    (void)r;
    return (double)(ln_now_ns() - t0) / 1e6;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct summary {
    double median, min, max;
} summary;

static summary summarize(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    summary s = {n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2, v[0], v[n - 1]};
    return s;
}

int main(int argc, char **argv) {
    int repeats = 11;
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0)
            repeats = 5;
        else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc)
            only = argv[++i];
        else if (strcmp(argv[i], "--repeats") == 0 && i + 1 < argc)
            repeats = atoi(argv[++i]);
        else if (strcmp(argv[i], "--tasks") == 0 && i + 1 < argc)
            ntasks = (size_t)atol(argv[++i]);
        else {
            fprintf(stderr,
                    "usage: bench_pool [--quick] [--repeats N] [--tasks N] [--only TEXT]\n");
            return 2;
        }
    }
    if (repeats < 1 || repeats > 1000 || ntasks < 1 || ntasks > 100000000) {
        fprintf(stderr, "bench_pool: --repeats 1..1000, --tasks 1..1e8\n");
        return 2;
    }
    results = calloc(ntasks, sizeof *results);
    args = malloc(ntasks * sizeof *args);
    for (size_t i = 0; i < ntasks; i++) args[i] = (void *)(uintptr_t)i;

    /* name, threads, queue, futures, timing, prefill, batch */
    static const variant variants[] = {
        {"group, ring, 1 thread", 1, NULL, 0, LN_TIMING_SAMPLED, 0, 0},
        {"group, ring, 2 threads", 2, NULL, 0, LN_TIMING_SAMPLED, 0, 0},
        {"group, list, 1 thread", 1, &ln_queue_list, 0, LN_TIMING_SAMPLED, 0, 0},
        {"group, list, 2 threads", 2, &ln_queue_list, 0, LN_TIMING_SAMPLED, 0, 0},
        {"group, ring, 1 thread, timing all", 1, NULL, 0, LN_TIMING_ALL, 0, 0},
        {"group, ring, 1 thread, timing off", 1, NULL, 0, LN_TIMING_OFF, 0, 0},
        {"batch, ring, 1 thread", 1, NULL, 0, LN_TIMING_SAMPLED, 0, 1},
        {"batch, ring, 1 thread, timing off", 1, NULL, 0, LN_TIMING_OFF, 0, 1},
        {"futures, ring, 1 thread", 1, NULL, 1, LN_TIMING_SAMPLED, 0, 0},
        {"futures, ring, 2 threads", 2, NULL, 1, LN_TIMING_SAMPLED, 0, 0},
        {"prefilled, ring, 1 thread", 1, NULL, 0, LN_TIMING_SAMPLED, 1, 0},
        {"prefilled, list, 1 thread", 1, &ln_queue_list, 0, LN_TIMING_SAMPLED, 1, 0},
    };
    enum { NV = sizeof variants / sizeof variants[0] };
    double *raw = calloc((size_t)repeats, sizeof *raw);
    double *fj = calloc((size_t)repeats, sizeof *fj), *seq = calloc((size_t)repeats, sizeof *seq);
    const char *fj_name = "fork-join, fib(32)/14, 2 threads";
    const int do_fj = only == NULL || strstr(fj_name, only) != NULL;
    double *ms[NV];
    for (int v = 0; v < NV; v++) ms[v] = calloc((size_t)repeats, sizeof(double));

    /* Interleave repeats so drift on a noisy machine hits every variant. */
    run_spsc();
    for (int r = 0; r < repeats; r++) {
        raw[r] = run_spsc();
        for (int v = 0; v < NV; v++)
            if (only == NULL || strstr(variants[v].name, only) != NULL)
                ms[v][r] = run_pool(&variants[v]);
        if (do_fj) {
            seq[r] = run_fib_seq();
            fj[r] = run_forkjoin(2);
        }
    }

    summary base = summarize(raw, repeats);
    printf("bench_pool: %zu tasks of value+1, median of %d repeats (min-max)\n", ntasks, repeats);
    printf("%-36s %10s %14s %10s %12s\n", "variant", "ms", "min-max", "ns/task", "vs raw SPSC");
    printf("%-36s %10.3f %6.3f-%-7.3f %10.1f %11.2fx\n", "raw SPSC ring (baseline)", base.median,
           base.min, base.max, base.median * 1e6 / (double)ntasks, 1.0);
    for (int v = 0; v < NV; v++) {
        if (only != NULL && strstr(variants[v].name, only) == NULL) continue;
        summary s = summarize(ms[v], repeats);
        printf("%-36s %10.3f %6.3f-%-7.3f %10.1f %11.2fx\n", variants[v].name, s.median, s.min,
               s.max, s.median * 1e6 / (double)ntasks, s.median / base.median);
    }
    if (do_fj) {
        summary q = summarize(seq, repeats), f = summarize(fj, repeats);
        printf("%-36s %10.3f %6.3f-%-7.3f\n", "fib(32) recursive, calling thread", q.median, q.min,
               q.max);
        printf("%-36s %10.3f %6.3f-%-7.3f %10s %10.2fx speedup\n", fj_name, f.median, f.min, f.max,
               "", q.median / f.median);
    }
    if (only == NULL) {
        double group = summarize(ms[0], repeats).median;
        printf("tasks/s (group, ring, 1 thread): %.0f\n", (double)ntasks / (group / 1e3));
        printf("target (issue 2): group path, 1 thread, within 5x of the raw ring: %.2fx, %s\n",
               group / base.median, group <= 5 * base.median ? "meets" : "misses");
    }
    return 0;
}
