/* exp_rails.c - E2 (docs/experiments.md): N tasks of random duration at concurrency C,
 * run in chunks (each chunk waits for its slowest task, like chunked
 * Promise.all) or on C rolling rails (each free rail takes the next task,
 * like @supercharge/promise-pool). lanes runs the workload of
 * bench/workloads/rails_load.h with ln_limiter (libuv timers, no thread per
 * task) and with ln_map (a sleeping task per item on a lane of C threads). */
#include "experiments/experiment.h"

#include "workloads/rails_load.h"

#include <lanes.h>

enum { P_TASKS, P_CONCURRENCY, P_SCALE_DIV, P_SEED };

typedef int (*rails_fn)(const bench_rails_plan *plan, double *ms);

static int make_plan(exp_ctx *ctx, bench_rails_plan *plan) {
    bench_rails_opts opts;
    bench_rails_opts_init(&opts);
    opts.tasks = (unsigned)exp_param(ctx, P_TASKS);
    opts.concurrency = (unsigned)exp_param(ctx, P_CONCURRENCY);
    opts.time_scale = 1.0 / (double)exp_param(ctx, P_SCALE_DIV);
    opts.seed = (uint64_t)exp_param(ctx, P_SEED);
    return bench_rails_plan_make(plan, &opts);
}

/* One scheduled run of the plan; arg is the rails_fn. The bounds computed
 * from the same durations are put too, so every repeat carries them. */
static int rails(exp_ctx *ctx, const void *arg) {
    const rails_fn *run = arg;
    bench_rails_plan plan;
    int err = make_plan(ctx, &plan);
    if (err != 0) return exp_fail(ctx, "plan: %s", ln_strerror(err));
    double ms = 0;
    err = (*run)(&plan, &ms);
    bench_rails_bounds b;
    bench_rails_bounds_of(&plan, &b);
    bench_rails_plan_free(&plan);
    if (err == LN_ENOTSUP) return exp_fail(ctx, "lanes was built without libuv");
    if (err != 0) return exp_fail(ctx, "lanes: %s", ln_strerror(err));
    exp_put(ctx, "ms", ms);
    exp_put(ctx, "lowerBoundMs", b.lower_bound_ms);
    exp_put(ctx, "greedyMs", b.greedy_ms);
    exp_put(ctx, "chunkedIdealMs", b.chunked_ideal_ms);
    return 0;
}

static const rails_fn chunked = bench_rails_run_chunked;
static const rails_fn limiter = bench_rails_run_limiter;
static const rails_fn map = bench_rails_run_map;

/* The declaration tables read best as written. */
/* clang-format off */
#define FIGURE(key, variant, value) {key, "ms", EXP_LOWER_IS_BETTER, variant, value}
#define SERIES(id_, role_, ko_, en_) {id_, role_, {ko_, en_}, {ko_, en_}}
#define PUBLISHED "26.4 s vs 39.4 s (1.49x, \"33% faster\")"

static const exp_experiment rails_experiment = {
    .name = "rails",
    .title = "1,000 tasks of 0.5-2 s at concurrency 50: chunks vs rolling rails",
    .seeds = "002",
    .order = 2,
    .claim = {
        .quote = "테스트 결과, PromisePool로 인해 Promise.all 보다 33% 더 성능이 "
                 "개선되었다. 50개의 레일에서 작업이 끝나는대로 다음 Promise들을 "
                 "수행하기 때문이다.",
        .translation =
            "1,000 sleeps of random 0.5-2 s, concurrency 50: chunked Promise.all (20 "
            "chunks of 50) took 39.4 s, PromisePool 26.4 s -- 33% better, because "
            "the pool starts the next promise on each of its 50 rails as soon as "
            "one finishes.",
        .source = "Seed 002, \"Promise Pool로 성능 개선하기 (feat. Promise.all)\"; "
                  "the link is the post's full example code",
        .url = "https://github.com/jojoldu/nodejs-unit-test/blob/master/src/"
               "promisepool/promisePool.ts",
        .numbers = {1000, 50, 39.4, 26.4, 33},
        .nnumbers = 5,
    },
    .hypothesis = "Seed claim: on 50 rolling rails 1,000 random sleeps finish about a third "
                  "sooner than in 20 chunks of 50. Checked here at a time scale of 1/100: "
                  "PromisePool beats chunked Promise.all; lanes' ln_limiter and ln_map beat "
                  "lanes' own chunked run by a similar factor and stay within a few percent "
                  "of the lower bound max(sum / 50, longest) and of the ideal greedy "
                  "schedule.",
    .conditions = {
        "Task durations: 500 + floor(u * 1501) ms for u from splitmix64 with a fixed "
        "seed, times the time scale, rounded to whole ms (libuv's and Node's timer "
        "resolution); lanes and Node.js sleep exactly the same plan.",
        "Chunked: the tasks in chunks of 50, each chunk started when the previous "
        "one has finished (lanes: libuv timers on one loop; Node.js: await "
        "Promise.all per chunk).",
        "Rolling: at most 50 in flight, the next task started as soon as one ends "
        "(lanes ln_limiter: a uv_timer per task, ln_done from its callback; lanes "
        "ln_map: a nanosleep per item on a lane of 50 threads; Node.js: "
        "PromisePool.for(durations).withConcurrency(50)).",
        "Only the scheduled work is timed; loop, pool and timer setup are outside "
        "the span. Node.js: one fresh process per run, one untimed warm-up.",
        "The lower bound, the ideal greedy makespan and the ideal chunked makespan "
        "are computed from the durations, not measured.",
    },
    .limits = {
        "The seed's tasks were 0.5-2 s; here they are 5-20 ms, so timer resolution "
        "(1 ms) and scheduling costs weigh about 100 times more relative to the "
        "work. The ratios, not the seconds, compare.",
        "The seed's durations came from Math.random(); a fixed seed here makes "
        "every run and both sides sleep the same plan, so the chunked/rolling "
        "ratio depends on that one plan.",
        "Sleeping tasks cost no CPU: the experiment measures scheduling, not "
        "throughput. ln_map ties up a thread per rail for the sleep, which is what "
        "ln_limiter exists to avoid; both are shown.",
        "lanes against PromisePool compares two schedulers that wait on timers; "
        "a ratio near 1 is the expected answer.",
    },
    .sources = {"bench/experiments/exp_rails.c", "bench/workloads/rails_load.c"},
    .params = {
        {"tasks", 1000, 250},
        {"concurrency", 50, 50},
        {"scaleDiv", 100, 100},
        {"seed", BENCH_RAILS_SEED, BENCH_RAILS_SEED},
    },
    .variants = {
        EXP_LANES("lanes-chunked", "lanes chunked (libuv timers)", rails, &chunked),
        EXP_LANES("lanes-limiter", "lanes ln_limiter (libuv timers)", rails, &limiter),
        EXP_LANES("lanes-map", "lanes ln_map (50 threads)", rails, &map),
        EXP_PEER("node-chunked", "Node.js chunked Promise.all", NULL, "promise-pool.mjs",
                    "chunked"),
        EXP_PEER("node-pool", "Node.js @supercharge/promise-pool", NULL, "promise-pool.mjs",
                    "pool"),
    },
    .figures = {
        FIGURE("lanesChunkedMs", "lanes-chunked", "ms"),
        FIGURE("lanesLimiterMs", "lanes-limiter", "ms"),
        FIGURE("lanesMapMs", "lanes-map", "ms"),
        FIGURE("nodeChunkedMs", "node-chunked", "ms"),
        FIGURE("nodePoolMs", "node-pool", "ms"),
        FIGURE("lowerBoundMs", "lanes-limiter", "lowerBoundMs"),
        FIGURE("idealGreedyMs", "lanes-limiter", "greedyMs"),
        FIGURE("idealChunkedMs", "lanes-limiter", "chunkedIdealMs"),
    },
    .compares = {
        {EXP_CMP_CLAIM, "nodePoolMs", "nodeChunkedMs",
         "Node.js PromisePool vs chunked Promise.all", PUBLISHED, 39.4 / 26.4},
        {EXP_CMP_COUNTERPART, "lanesLimiterMs", "lanesChunkedMs", "lanes ln_limiter vs chunked",
         PUBLISHED, 39.4 / 26.4},
        {EXP_CMP_COUNTERPART, "lanesMapMs", "lanesChunkedMs", "lanes ln_map vs chunked",
         PUBLISHED, 39.4 / 26.4},
        {EXP_CMP_BOUND, "lanesLimiterMs", "lowerBoundMs",
         "lanes ln_limiter vs the lower bound max(sum / 50, longest)", NULL, 0},
        {EXP_CMP_BOUND, "lanesLimiterMs", "idealGreedyMs",
         "lanes ln_limiter vs the ideal greedy schedule", NULL, 0},
        {EXP_CMP_BOUND, "lanesMapMs", "idealGreedyMs",
         "lanes ln_map vs the ideal greedy schedule", NULL, 0},
        {EXP_CMP_BOUND, "nodePoolMs", "idealGreedyMs",
         "Node.js PromisePool vs the ideal greedy schedule", NULL, 0},
        {EXP_CMP_BOUND, "lanesChunkedMs", "idealChunkedMs",
         "lanes chunked vs the ideal chunked schedule", NULL, 0},
        {EXP_CMP_BOUND, "nodeChunkedMs", "idealChunkedMs",
         "Node.js chunked Promise.all vs the ideal chunked schedule", NULL, 0},
        {EXP_CMP_VERSUS, "lanesLimiterMs", "nodePoolMs",
         "lanes ln_limiter vs Node.js PromisePool", NULL, 0},
    },
    .chart = {
        .title = {"작업 1,000개, 동시성 50: 청크 대 레일",
                  "1,000 tasks at concurrency 50: chunks vs rails"},
        .series = {
            SERIES("lanes-chunked", "target", "lanes 청크", "lanes chunked"),
            SERIES("lanes-limiter", "target", "lanes ln_limiter", "lanes ln_limiter"),
            SERIES("lanes-map", "target", "lanes ln_map", "lanes ln_map"),
            SERIES("node-chunked", "baseline", "Node.js 청크 Promise.all",
                   "Node.js chunked Promise.all"),
            SERIES("node-pool", "baseline", "Node.js PromisePool", "Node.js PromisePool"),
            SERIES("ideal-chunked", "reference", "이상적 청크 (계산)",
                   "ideal chunked (computed)"),
            SERIES("ideal-greedy", "reference", "이상적 레일 (계산)",
                   "ideal rails (computed)"),
            SERIES("lower-bound", "reference", "하한 (계산)", "lower bound (computed)"),
        },
        .panels = {
            {{"전체 처리 시간", "Total time"},
             "ms",
             "time",
             EXP_LOWER_IS_BETTER,
             {{"lanes-chunked", "lanesChunkedMs"},
              {"node-chunked", "nodeChunkedMs"},
              {"ideal-chunked", "idealChunkedMs"},
              {"lanes-limiter", "lanesLimiterMs"},
              {"lanes-map", "lanesMapMs"},
              {"node-pool", "nodePoolMs"},
              {"ideal-greedy", "idealGreedyMs"},
              {"lower-bound", "lowerBoundMs"}}},
        },
    },
    .peer = {"@supercharge/promise-pool", "supercharge/promise-pool",
             "@supercharge/promise-pool", "3.3.0", {"promise-pool.mjs"}},
};

/* clang-format on */

EXP_REGISTER(rails_experiment)
