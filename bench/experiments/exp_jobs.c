/* exp_jobs.c - E5 (docs/experiments.md): how fast is the embedded job queue?
 * Jobs added one by one and in batches of 1,000, and end to end (batched
 * adds while a worker of 8 no-op handlers runs them), on a SQLite store
 * with sync=normal in a temporary directory. lanes only: the targets the
 * store was built to and the BullMQ figure they assumed are drawn for scale, not measured here
 * (`lanes bench bullmq` measures BullMQ itself). The workloads are those of
 * bench/bench_jobs.c, in bench/workloads/jobs_load.c. */
#include "experiments/experiment.h"
#include "experiments/exp_ratelimit.h"

#include "workloads/jobs_load.h"

#include <lanes.h>

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

enum { P_JOBS };

#define TARGET_SINGLE 5000.0 /* target: adds one by one, jobs/s */
#define TARGET_E2E 20000.0   /* target: end to end with batching */
#define BULLMQ_ISSUE 5000.0  /* the assumed BullMQ figure, not measured */

typedef enum { ADD_ONE, ADD_BATCH, END_TO_END } jobs_case;

static int measure(exp_ctx *ctx, const void *arg) {
    jobs_case c = *(const jobs_case *)arg;
    const char *tmp = getenv("TMPDIR");
    char dir[512];
    snprintf(dir, sizeof dir, "%s/lanes-bench-jobs-XXXXXX",
             tmp != NULL && *tmp != '\0' ? tmp : "/tmp");
    if (mkdtemp(dir) == NULL) return exp_fail(ctx, "cannot make a directory in %s", dir);
    bench_jobs_opts o;
    bench_jobs_opts_init(&o);
    o.jobs = (size_t)exp_param(ctx, P_JOBS);
    o.dir = dir;
    o.sync = "normal";
    bench_jobs_result r;
    int err = c == ADD_ONE     ? bench_jobs_add(&o, 1, &r)
              : c == ADD_BATCH ? bench_jobs_add(&o, BENCH_JOBS_BATCH, &r)
                               : bench_jobs_e2e(&o, 8, &r);
    rmdir(dir); /* the workload removed the store's files */
    if (err != 0) return exp_fail(ctx, "lanes: %s (%s)", r.errmsg, ln_strerror(err));
    exp_put(ctx, "jobsPerSec", r.jobs_per_sec);
    switch (c) {
    case ADD_ONE:
        exp_put(ctx, "p50Us", r.p50);
        exp_put(ctx, "p99Us", r.p99);
        exp_put(ctx, "target", TARGET_SINGLE);
        break;
    case ADD_BATCH:
        exp_put(ctx, "p50Us", r.p50);
        exp_put(ctx, "p99Us", r.p99);
        break;
    case END_TO_END:
        exp_put(ctx, "target", TARGET_E2E);
        exp_put(ctx, "bullmqIssue", BULLMQ_ISSUE);
        break;
    }
    return 0;
}

static const jobs_case add_one = ADD_ONE, add_batch = ADD_BATCH, end_to_end = END_TO_END;

/* The declaration tables read best as written. */
/* clang-format off */
#define RATE(key, variant, value) {key, "jobs/s", EXP_HIGHER_IS_BETTER, variant, value}
#define LATENCY(key, variant, value) {key, "us", EXP_LOWER_IS_BETTER, variant, value}
#define SERIES(id_, role_, ko_, en_, sko_, sen_) {id_, role_, {ko_, en_}, {sko_, sen_}}

static const exp_experiment jobs_experiment = {
    .name = "jobs",
    .title = "The embedded job queue: adds one by one, in batches, and end to end",
    .seeds = "003",
    .order = 5,
    .claim = {
        .quote = "Targets on a 2-core machine: at least 20,000 jobs/s end to end (add + "
                 "process + complete) with batching and `synchronous=NORMAL`, at least "
                 "5,000 jobs/s added one by one -- for scale, BullMQ's Node worker on "
                 "Redis processes about 5,000 jobs/s on such a machine.",
        .source = "lanes issue 5 (durable job queue), section \"Speed\"; the BullMQ figure "
                  "is the issue's, not a measurement of this experiment",
        .url = "",
        .numbers = {20000, 5000, 5000},
        .nnumbers = 3,
    },
    .hypothesis = "Issue targets: on this 2-core machine the SQLite store adds at least "
                  "5,000 jobs/s one by one and runs at least 20,000 jobs/s end to end with "
                  "batched adds and sync=normal. Checked here: the medians of both figures "
                  "against those targets (ratios > 1 mean met), and what batching buys.",
    .conditions = {
        "A fresh store per run: sqlite:DIR/...?sync=normal (WAL, synchronous=NORMAL: "
        "durable across process crashes, the last commits may roll back on power loss) "
        "in a new directory under $TMPDIR or /tmp, removed afterwards.",
        "Every job is (queue \"bench\", name \"bench\", data {\"n\":1}) with default "
        "options; handlers return at once.",
        "Adds one by one: ln_jobs_add on one handle, one transaction per job, timed from "
        "the first call to the last; p50/p99 are of one call.",
        "Adds in batches: ln_jobs_add_bulk with 1,000 jobs per call (one transaction "
        "each); p50/p99 are of one batch.",
        "End to end: a producer thread with its own handle adds the jobs in batches of "
        "1,000 while a worker (concurrency 8, a private pool of 8 threads, "
        "exit_when_empty) in the same process runs them; timed from the first add to "
        "the worker's return, after the last completion. A delayed placeholder job, "
        "removed after the last batch, keeps the worker from exiting early.",
        "Every job is checked completed (ln_jobs_counts) after the timed span.",
    },
    .limits = {
        "lanes only: no peer runs in this experiment. The BullMQ series is the figure "
        "the issue quotes, drawn for scale; it was not measured here (the bullmq "
        "experiment runs BullMQ itself on this machine).",
        "The target series are the issue's requirements, constants, not measurements.",
        "The machine's two cores are shared by the producer, the worker's dispatcher, "
        "its 8 handler threads and anything else running; figures move with the load.",
        "The store is on the temporary directory's file system; with sync=normal no "
        "fsync happens per commit, so the figures say little about power-loss-durable "
        "rates (bench_jobs --sync full measures those).",
    },
    .sources = {"bench/experiments/exp_jobs.c", "bench/workloads/jobs_load.c", "bench/workloads/jobs_load.h"},
    .params = {{"jobs", 100000, 20000}},
    .variants = {
        EXP_LANES("add-one", "lanes, ln_jobs_add one by one", measure, &add_one),
        EXP_LANES("add-batch", "lanes, ln_jobs_add_bulk, 1,000 per batch", measure,
                     &add_batch),
        EXP_LANES("e2e-8", "lanes, batched adds + a worker of concurrency 8", measure,
                     &end_to_end),
        EXP_LANES("limited", "lanes, a worker limited to 300 jobs per 100 ms", exp_ratelimit_sqlite, NULL),
    },
    .figures = {
        RATE("addOneJobsPerSec", "add-one", "jobsPerSec"),
        LATENCY("addOneP50Us", "add-one", "p50Us"),
        LATENCY("addOneP99Us", "add-one", "p99Us"),
        RATE("addBatchJobsPerSec", "add-batch", "jobsPerSec"),
        LATENCY("addBatchP50Us", "add-batch", "p50Us"),
        LATENCY("addBatchP99Us", "add-batch", "p99Us"),
        RATE("e2eJobsPerSec", "e2e-8", "jobsPerSec"),
        RATE("targetAddOneJobsPerSec", "add-one", "target"),
        RATE("targetE2eJobsPerSec", "e2e-8", "target"),
        RATE("bullmqIssueJobsPerSec", "e2e-8", "bullmqIssue"),
        RATE("limitedJobsPerSec", "limited", "limitedJobsPerSec"),
        RATE("limitBoundJobsPerSec", "limited", "limitBoundJobsPerSec"),
    },
    .compares = {
        {EXP_CMP_COUNTERPART, "e2eJobsPerSec", "targetE2eJobsPerSec",
         "end to end vs the issue's target of 20,000 jobs/s (> 1: met)", NULL, 0},
        {EXP_CMP_COUNTERPART, "addOneJobsPerSec", "targetAddOneJobsPerSec",
         "adds one by one vs the issue's target of 5,000 jobs/s (> 1: met)", NULL, 0},
        {EXP_CMP_COUNTERPART, "addBatchJobsPerSec", "addOneJobsPerSec",
         "adds in batches of 1,000 vs one by one", NULL, 0},
        {EXP_CMP_COUNTERPART, "limitedJobsPerSec", "limitBoundJobsPerSec",
         "rate limited run vs the most its limit allows (<= 1; near 1: met)", NULL, 0},
    },
    .chart = {
        .title = {"내장 작업 큐 (SQLite, sync=normal)",
                  "The embedded job queue (SQLite, sync=normal)"},
        .series = {
            SERIES("single", "target", "lanes, 한 건씩 추가", "lanes, one by one",
                   "한 건씩", "single"),
            SERIES("batch", "target", "lanes, 1,000건 묶음 추가", "lanes, batches of 1,000",
                   "묶음", "batch"),
            SERIES("e2e", "target", "lanes, 추가 + 처리 + 완료", "lanes, add + run + complete",
                   "lanes", "lanes"),
            SERIES("goal", "reference", "이슈의 목표 (측정 아님)",
                   "the issue's target (not measured)", "목표", "target"),
            SERIES("bullmq", "reference", "BullMQ, 이슈의 수치 (여기서 측정 안 함)",
                   "BullMQ, the issue's figure (not measured here)", "BullMQ", "BullMQ"),
        },
        .panels = {
            {{"작업 추가", "Adding jobs"}, "jobs/s", "rate", EXP_HIGHER_IS_BETTER,
             {{"single", "addOneJobsPerSec"}, {"batch", "addBatchJobsPerSec"},
              {"goal", "targetAddOneJobsPerSec"}}},
            {{"끝에서 끝까지 (동시성 8)", "End to end (concurrency 8)"}, "jobs/s", "rate",
             EXP_HIGHER_IS_BETTER,
             {{"e2e", "e2eJobsPerSec"}, {"goal", "targetE2eJobsPerSec"},
              {"bullmq", "bullmqIssueJobsPerSec"}}},
            {{"한 건 추가 지연 p99", "p99 latency of one add"}, "us", "time",
             EXP_LOWER_IS_BETTER, {{"single", "addOneP99Us"}}},
        },
    },
    /* No .peer: lanes only. */
};

/* clang-format on */

EXP_REGISTER(jobs_experiment)
