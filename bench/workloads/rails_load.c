/* rails_load.c - the E2 "rails" workload (see rails_load.h). */
#include "rails_load.h"

#include <lanes.h>

#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__has_include)
#if __has_include(<uv.h>)
#define BENCH_RAILS_HAVE_UV 1
#include <uv.h>
#endif
#endif

void bench_rails_opts_init(bench_rails_opts *opts) {
    opts->tasks = 1000;
    opts->concurrency = 50;
    opts->min_ms = 500;
    opts->max_ms = 2000;
    opts->time_scale = 0.01;
    opts->seed = BENCH_RAILS_SEED;
}

/* splitmix64: one 64-bit state, add the golden-ratio increment, mix. */
static uint64_t splitmix64(uint64_t *state) {
    uint64_t z = (*state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

int bench_rails_plan_make(bench_rails_plan *plan, const bench_rails_opts *opts) {
    if (plan == NULL || opts == NULL || opts->tasks == 0 || opts->concurrency == 0 ||
        opts->min_ms > opts->max_ms || !(opts->time_scale > 0))
        return LN_EINVAL;
    uint32_t *ms = malloc(opts->tasks * sizeof(*ms));
    if (ms == NULL) return LN_ENOMEM;
    uint64_t state = opts->seed;
    const unsigned span = opts->max_ms - opts->min_ms + 1;
    for (unsigned i = 0; i < opts->tasks; i++) {
        double u = (double)(splitmix64(&state) >> 11) * 0x1.0p-53; /* [0, 1) */
        double nominal = opts->min_ms + (double)(unsigned)(u * span);
        double scaled = nominal * opts->time_scale + 0.5;
        ms[i] = scaled < 1 ? 1 : (uint32_t)scaled;
    }
    plan->tasks = opts->tasks;
    plan->concurrency = opts->concurrency;
    plan->ms = ms;
    return 0;
}

void bench_rails_plan_free(bench_rails_plan *plan) {
    if (plan == NULL) return;
    free(plan->ms);
    plan->ms = NULL;
}

void bench_rails_bounds_of(const bench_rails_plan *plan, bench_rails_bounds *out) {
    const unsigned n = plan->tasks, c = plan->concurrency;
    double sum = 0, max = 0, chunked = 0, chunk_max = 0;
    for (unsigned i = 0; i < n; i++) {
        double d = plan->ms[i];
        sum += d;
        if (d > max) max = d;
        if (d > chunk_max) chunk_max = d;
        if ((i + 1) % c == 0 || i + 1 == n) {
            chunked += chunk_max;
            chunk_max = 0;
        }
    }
    /* In-order greedy: each task, in index order, goes to the rail that
     * frees first; the makespan is the latest rail end. O(n * c), which for
     * the sizes of E2 is nothing. */
    double *free_at = calloc(c, sizeof(*free_at));
    double greedy = 0;
    if (free_at != NULL) {
        for (unsigned i = 0; i < n; i++) {
            unsigned best = 0;
            for (unsigned r = 1; r < c; r++)
                if (free_at[r] < free_at[best]) best = r;
            free_at[best] += plan->ms[i];
            if (free_at[best] > greedy) greedy = free_at[best];
        }
        free(free_at);
    }
    out->sum_ms = sum;
    out->max_ms = max;
    out->lower_bound_ms = sum / c > max ? sum / c : max;
    out->greedy_ms = greedy;
    out->chunked_ideal_ms = chunked;
}

static double ms_since(uint64_t t0) {
    return (double)(ln_now_ns() - t0) / 1e6;
}

/* ---- timers on a libuv loop: chunked and limiter ------------------------ */

#ifdef BENCH_RAILS_HAVE_UV

typedef struct timer_task {
    uv_timer_t timer;
    ln_done_token *token; /* limiter variant */
    uint32_t ms;
    struct timer_run *run;
} timer_task;

typedef struct timer_run {
    uv_loop_t loop;
    const bench_rails_plan *plan;
    timer_task *tasks;
    ln_limiter *lim;
    unsigned fired;
    unsigned next_chunk, chunk_left; /* chunked variant */
} timer_run;

static int timers_open(timer_run *run, const bench_rails_plan *plan) {
    memset(run, 0, sizeof(*run));
    run->plan = plan;
    run->tasks = calloc(plan->tasks, sizeof(*run->tasks));
    if (run->tasks == NULL) return LN_ENOMEM;
    int rc = uv_loop_init(&run->loop);
    if (rc != 0) {
        free(run->tasks);
        return rc;
    }
    for (unsigned i = 0; i < plan->tasks; i++) {
        uv_timer_init(&run->loop, &run->tasks[i].timer);
        run->tasks[i].ms = plan->ms[i];
        run->tasks[i].run = run;
    }
    return 0;
}

static void timers_close(timer_run *run) {
    for (unsigned i = 0; i < run->plan->tasks; i++)
        uv_close((uv_handle_t *)&run->tasks[i].timer, NULL);
    uv_run(&run->loop, UV_RUN_DEFAULT);
    uv_loop_close(&run->loop);
    free(run->tasks);
}

/* chunked: a chunk's timers all start together; the last one to fire
 * starts the next chunk. */
static void chunk_start(timer_run *run);

static void on_chunk_timer(uv_timer_t *t) {
    timer_task *task = (timer_task *)t;
    timer_run *run = task->run;
    run->fired++;
    if (--run->chunk_left == 0) chunk_start(run);
}

static void chunk_start(timer_run *run) {
    const unsigned n = run->plan->tasks, c = run->plan->concurrency;
    unsigned from = run->next_chunk * c;
    if (from >= n) return;
    unsigned to = from + c < n ? from + c : n;
    run->chunk_left = to - from;
    run->next_chunk++;
    for (unsigned i = from; i < to; i++)
        uv_timer_start(&run->tasks[i].timer, on_chunk_timer, run->tasks[i].ms, 0);
}

int bench_rails_run_chunked(const bench_rails_plan *plan, double *ms) {
    if (plan == NULL || ms == NULL) return LN_EINVAL;
    timer_run run;
    int rc = timers_open(&run, plan);
    if (rc != 0) return rc;
    uv_update_time(&run.loop); /* timers count from now, not from init */
    uint64_t t0 = ln_now_ns();
    chunk_start(&run);
    uv_run(&run.loop, UV_RUN_DEFAULT);
    *ms = ms_since(t0);
    rc = run.fired == plan->tasks ? 0 : LN_EFAILED;
    timers_close(&run);
    return rc;
}

/* limiter: start arms the task's timer; the timer callback finishes the
 * operation, and ln_done starts the next queued one right here, on the loop
 * thread, which is what lets it arm its timer. */
static void on_limited_timer(uv_timer_t *t) {
    timer_task *task = (timer_task *)t;
    task->run->fired++;
    ln_done(task->token, 0);
}

static void limited_start(void *arg, ln_done_token *token) {
    timer_task *task = arg;
    task->token = token;
    uv_timer_start(&task->timer, on_limited_timer, task->ms, 0);
}

int bench_rails_run_limiter(const bench_rails_plan *plan, double *ms) {
    if (plan == NULL || ms == NULL) return LN_EINVAL;
    timer_run run;
    int rc = timers_open(&run, plan);
    if (rc != 0) return rc;
    rc = ln_limiter_create(&run.lim, plan->concurrency);
    if (rc != 0) {
        timers_close(&run);
        return rc;
    }
    uv_update_time(&run.loop);
    uint64_t t0 = ln_now_ns();
    for (unsigned i = 0; i < plan->tasks && rc == 0; i++)
        rc = ln_limiter_submit(run.lim, limited_start, &run.tasks[i]);
    uv_run(&run.loop, UV_RUN_DEFAULT); /* until the last timer fired */
    *ms = ms_since(t0);
    if (rc == 0) rc = ln_limiter_wait(run.lim); /* returns at once */
    if (rc == 0 && run.fired != plan->tasks) rc = LN_EFAILED;
    ln_limiter_destroy(run.lim);
    timers_close(&run);
    return rc;
}

#else /* no libuv */

int bench_rails_run_chunked(const bench_rails_plan *plan, double *ms) {
    (void)plan;
    (void)ms;
    return LN_ENOTSUP;
}

int bench_rails_run_limiter(const bench_rails_plan *plan, double *ms) {
    (void)plan;
    (void)ms;
    return LN_ENOTSUP;
}

#endif

/* ---- ln_map on a lane of C threads ------------------------------------- */

static int sleep_item(size_t index, void *ctx) {
    const bench_rails_plan *plan = ctx;
    uint64_t ns = (uint64_t)plan->ms[index] * 1000000u;
    struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    while (nanosleep(&ts, &ts) != 0) {
    }
    return 0;
}

int bench_rails_run_map(const bench_rails_plan *plan, double *ms) {
    if (plan == NULL || ms == NULL) return LN_EINVAL;
    ln_pool_opts po;
    ln_pool_opts_init(&po);
    po.nlanes = 1;
    po.lanes[0].name = "rails";
    po.lanes[0].min_threads = plan->concurrency;
    po.lanes[0].max_threads = plan->concurrency;
    po.timing = 0;
    ln_pool *pool = NULL;
    int rc = ln_pool_create(&pool, &po);
    if (rc != 0) return rc;
    ln_map_opts mo;
    ln_map_opts_init(&mo);
    mo.lane = 0;
    mo.concurrency = plan->concurrency;
    ln_map_result res = {0};
    uint64_t t0 = ln_now_ns();
    rc = ln_map(pool, plan->tasks, sleep_item, (void *)plan, &mo, &res);
    *ms = ms_since(t0);
    if (rc == 0 && res.ran != plan->tasks) rc = LN_EFAILED;
    ln_pool_destroy(pool);
    return rc;
}

int bench_rails_run_all(const bench_rails_plan *plan, bench_rails_result *out) {
    if (plan == NULL || out == NULL) return LN_EINVAL;
    bench_rails_bounds_of(plan, &out->bounds);
    int rc = bench_rails_run_chunked(plan, &out->chunked_ms);
    if (rc == 0) rc = bench_rails_run_limiter(plan, &out->limiter_ms);
    if (rc == 0) rc = bench_rails_run_map(plan, &out->map_ms);
    return rc;
}

/* ---- overhead ------------------------------------------------------------ */

static void immediate_start(void *arg, ln_done_token *token) {
    (void)arg;
    ln_done(token, 0);
}

int bench_rails_limiter_overhead(size_t ops, unsigned concurrency, double *ns_per_op) {
    if (ops == 0 || ns_per_op == NULL) return LN_EINVAL;
    ln_limiter *lim = NULL;
    int rc = ln_limiter_create(&lim, concurrency);
    if (rc != 0) return rc;
    uint64_t t0 = ln_now_ns();
    for (size_t i = 0; i < ops && rc == 0; i++) rc = ln_limiter_submit(lim, immediate_start, NULL);
    if (rc == 0) rc = ln_limiter_wait(lim);
    *ns_per_op = (double)(ln_now_ns() - t0) / (double)ops;
    ln_limiter_destroy(lim);
    return rc;
}

static int noop_item(size_t index, void *ctx) {
    (void)index;
    (void)ctx;
    return 0;
}

int bench_rails_map_overhead(size_t items, double *ns_per_item) {
    if (items == 0 || ns_per_item == NULL) return LN_EINVAL;
    int *codes = malloc(items * sizeof(*codes));
    if (codes == NULL) return LN_ENOMEM;
    memset(codes, 0xff, items * sizeof(*codes)); /* no page faults in the span */
    ln_pool *pool = NULL;
    int rc = ln_pool_create(&pool, NULL);
    if (rc != 0) {
        free(codes);
        return rc;
    }
    ln_map_result res = {.codes = codes};
    uint64_t t0 = ln_now_ns();
    rc = ln_map(pool, items, noop_item, NULL, NULL, &res);
    *ns_per_item = (double)(ln_now_ns() - t0) / (double)items;
    if (rc == 0 && res.ran != items) rc = LN_EFAILED;
    ln_pool_destroy(pool);
    free(codes);
    return rc;
}
