/* dash_metrics.c - /metrics of `lanes dash`: Prometheus' text exposition
 * format (version 0.0.4) of what the store tells, read at each scrape:
 * jobs per queue and state (the store's counters, never a count of jobs),
 * whether each queue is paused, the workers connected to each queue, the
 * number of queues (and whether its list stopped at its cap), and whether the store answered; and the series of
 * BullMQ's queue.exportPrometheusMetrics() (bullmq_job_count by BullMQ's
 * states, bullmq_job_completed_total / _failed_total from the queue's
 * metrics count), so a scrape of a Node team's exporter can move here.
 * Nothing is made up: the store keeps no other totals and no run-time
 * histogram (docs/dash.md). */
#include "dash.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A label value with \, " and newline escaped, as the format wants. */
static void label(FILE *f, const char *s) {
    for (; *s != '\0'; s++) {
        if (*s == '\\' || *s == '"')
            fprintf(f, "\\%c", *s);
        else if (*s == '\n')
            fputs("\\n", f);
        else
            fputc(*s, f);
    }
}

static void typed_header(FILE *f, const char *name, const char *help, const char *type) {
    fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void header(FILE *f, const char *name, const char *help) {
    typed_header(f, name, help, "gauge");
}

/* One sample "name{queue="q"[,state="s"]} v". */
static void sample(FILE *f, const char *name, const char *queue, const char *state, uint64_t v) {
    fprintf(f, "%s{queue=\"", name);
    label(f, queue);
    if (state != NULL) fprintf(f, "\",state=\"%s", state);
    fprintf(f, "\"} %llu\n", (unsigned long long)v);
}

/* BullMQ's counts of queue i: getJobCounts() (a paused queue's jobs stay
 * waiting or prioritized: v6 keeps them in wait) and its metrics counts;
 * 0 or the store's error. */
typedef struct bull_counts {
    uint64_t waiting, prioritized, completed_total, failed_total;
} bull_counts;

static int bull_counts_of(cli_dash *d, const char *queue, const ln_job_counts *k, int paused,
                          bull_counts *b) {
    b->waiting = k->waiting;
    b->prioritized = k->prioritized;
    int err = 0;
    if (paused) { /* lanes counts both as paused: split them by priority 0 */
        const int zero = 0;
        uint64_t w = 0;
        err = ln_jobs_counts_per_priority(d->jobs, queue, &zero, 1, &w);
        b->waiting = w <= k->paused ? w : k->paused;
        b->prioritized = k->paused - b->waiting;
    }
    ln_job_metrics m;
    if (err == 0 && (err = ln_jobs_metrics(d->jobs, queue, LN_JOB_COMPLETED, 0, 0, &m)) == 0) {
        b->completed_total = m.count;
        ln_job_metrics_clear(&m);
        err = ln_jobs_metrics(d->jobs, queue, LN_JOB_FAILED, 0, 0, &m);
        b->failed_total = m.count;
        ln_job_metrics_clear(&m);
    }
    return err;
}

/* The series of BullMQ's exportPrometheusMetrics, its names and states. */
static int bullmq_samples(cli_dash *d, FILE *f, char **names, size_t n, const ln_job_counts *k,
                          const int *paused) {
    bull_counts *b = calloc(n > 0 ? n : 1, sizeof *b);
    int err = b == NULL ? LN_ENOMEM : 0;
    for (size_t i = 0; i < n && err == 0; i++)
        err = bull_counts_of(d, names[i], &k[i], paused[i], &b[i]);
    if (err == 0) {
        header(f, "bullmq_job_count", "Number of jobs in the queue by state");
        for (size_t i = 0; i < n; i++) {
            const char *states[] = {"active",      "completed", "delayed",         "failed",
                                    "prioritized", "waiting",   "waiting-children"};
            const uint64_t v[] = {k[i].active,          k[i].completed,   k[i].delayed,
                                  k[i].failed,          b[i].prioritized, b[i].waiting,
                                  k[i].waiting_children};
            for (size_t s = 0; s < sizeof v / sizeof v[0]; s++)
                sample(f, "bullmq_job_count", names[i], states[s], v[s]);
        }
        typed_header(f, "bullmq_job_completed_total", "Total number of completed jobs", "counter");
        for (size_t i = 0; i < n; i++)
            sample(f, "bullmq_job_completed_total", names[i], NULL, b[i].completed_total);
        typed_header(f, "bullmq_job_failed_total", "Total number of failed jobs", "counter");
        for (size_t i = 0; i < n; i++)
            sample(f, "bullmq_job_failed_total", names[i], NULL, b[i].failed_total);
    }
    free(b);
    return err;
}

/* The lanes_jobs and lanes_queue_paused samples; 0 or the store's error. */
static int queue_samples(cli_dash *d, FILE *f, char **names, size_t n) {
    static const int states[] = {LN_JOB_WAITING, LN_JOB_DELAYED,         LN_JOB_PRIORITIZED,
                                 LN_JOB_ACTIVE,  LN_JOB_COMPLETED,       LN_JOB_FAILED,
                                 LN_JOB_PAUSED,  LN_JOB_WAITING_CHILDREN};
    ln_job_counts *k = calloc(n > 0 ? n : 1, sizeof *k);
    int *paused = calloc(n > 0 ? n : 1, sizeof *paused);
    int err = k == NULL || paused == NULL ? LN_ENOMEM : 0;
    for (size_t i = 0; i < n && err == 0; i++) {
        err = ln_jobs_counts(d->jobs, names[i], &k[i]);
        if (err == 0) err = ln_jobs_is_paused(d->jobs, names[i], &paused[i]);
    }
    if (err == 0) {
        header(f, "lanes_jobs", "Jobs of a queue in a state, as the store counts them now.");
        for (size_t i = 0; i < n; i++) {
            const uint64_t v[] = {k[i].waiting, k[i].delayed,         k[i].prioritized,
                                  k[i].active,  k[i].completed,       k[i].failed,
                                  k[i].paused,  k[i].waiting_children};
            for (size_t s = 0; s < sizeof states / sizeof states[0]; s++)
                sample(f, "lanes_jobs", names[i], ln_job_state_name(states[s]), v[s]);
        }
        header(f, "lanes_queue_paused", "1 if the queue is paused (workers take no job).");
        for (size_t i = 0; i < n; i++) sample(f, "lanes_queue_paused", names[i], NULL, paused[i]);
        err = bullmq_samples(d, f, names, n, k, paused);
    }
    free(k);
    free(paused);
    return err;
}

/* lanes_workers: the workers connected to each queue (ln_jobs_workers; on
 * Redis one CLIENT LIST per queue). A queue whose listing fails (a server
 * refusing CLIENT LIST) has no sample; the scrape goes on. */
static void worker_samples(cli_dash *d, FILE *f, char **names, size_t n) {
    header(f, "lanes_workers", "Workers connected to the queue now (lanes and BullMQ's).");
    for (size_t i = 0; i < n; i++) {
        ln_worker_info *w = NULL;
        size_t nw = 0;
        if (ln_jobs_workers(d->jobs, names[i], &w, &nw) != 0) continue;
        ln_jobs_workers_free(w, nw);
        sample(f, "lanes_workers", names[i], NULL, nw);
    }
}

/* lanes_build_info: 1, with the version and the commit built (a define
 * the build may give, LANES_BUILD_COMMIT; else "unknown"). */
static void build_info(FILE *f) {
#ifdef LANES_BUILD_COMMIT
    const char *commit = LANES_BUILD_COMMIT;
#else
    const char *commit = "unknown";
#endif
    header(f, "lanes_build_info", "The lanes build: version and commit, value 1.");
    fprintf(f, "lanes_build_info{version=\"%d.%d.%d\",commit=\"%s\"} 1\n", LN_VERSION_MAJOR,
            LN_VERSION_MINOR, LN_VERSION_PATCH, commit);
}

/* Since when the job next to run in state has been ready (ms since the
 * epoch; the later of its add and the end of its delay), 0 if none. */
static int64_t ready_since(cli_dash *d, const char *queue, int state, int *err) {
    ln_job_info *infos = NULL;
    size_t n = 0;
    int64_t since = 0;
    *err = ln_jobs_list(d->jobs, queue, state, 0, 1, &infos, &n);
    if (*err == 0 && n > 0)
        since = infos[0].run_at_ms > infos[0].created_ms ? infos[0].run_at_ms : infos[0].created_ms;
    ln_job_info_free_array(infos, n);
    return since;
}

/* lanes_queue_oldest_waiting_seconds: how long the job next to run has
 * been waiting (waiting and prioritized; a paused queue's too), 0 with none
 * waiting: the queue's latency, for autoscalers. A queue whose listing
 * fails has no sample. */
static void oldest_samples(cli_dash *d, FILE *f, char **names, size_t n) {
    header(f, "lanes_queue_oldest_waiting_seconds",
           "Seconds the job next to run of the queue has waited (0: none waiting).");
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t now = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    static const int states[] = {LN_JOB_WAITING, LN_JOB_PRIORITIZED, LN_JOB_PAUSED};
    for (size_t i = 0; i < n; i++) {
        int64_t oldest = 0;
        int err = 0;
        for (size_t s = 0; s < sizeof states / sizeof states[0] && err == 0; s++) {
            int64_t since = ready_since(d, names[i], states[s], &err);
            if (since > 0 && (oldest == 0 || since < oldest)) oldest = since;
        }
        if (err != 0) continue;
        double age = oldest > 0 && now > oldest ? (double)(now - oldest) / 1000.0 : 0.0;
        fprintf(f, "lanes_queue_oldest_waiting_seconds{queue=\"");
        label(f, names[i]);
        fprintf(f, "\"} %.3f\n", age);
    }
}

char *cli_dash_metrics(cli_dash *d, size_t *len) {
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    if (f == NULL) return NULL;
    char **names = NULL;
    size_t n = 0;
    /* The cached list: on Redis a fresh one costs a SCAN of the keyspace. */
    int err = cli_dash_queue_names(d, &names, &n);
    if (err == 0) {
        /* The list stops at LN_JOB_QUEUES_MAX: say so rather than show
         * the cap as the store's count (--queue's list is never cut). */
        header(f, "lanes_queues",
               "Queues the store has, at most the list's cap (see lanes_queues_capped).");
        fprintf(f, "lanes_queues %zu\n", n);
        fprintf(f,
                "# HELP lanes_queues_capped 1 if the queue list stopped at its cap of %d: "
                "the store may have more queues than lanes_queues.\n"
                "# TYPE lanes_queues_capped gauge\n",
                LN_JOB_QUEUES_MAX);
        fprintf(f, "lanes_queues_capped %d\n", d->nfixed == 0 && n >= LN_JOB_QUEUES_MAX);
        err = queue_samples(d, f, names, n);
        if (err == 0) worker_samples(d, f, names, n);
        if (err == 0) oldest_samples(d, f, names, n);
    }
    build_info(f);
    header(f, "lanes_store_up", "1 if the store answered this scrape, else 0.");
    fprintf(f, "lanes_store_up{store=\"%s\"} %d\n", d->store, err == 0);
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    *len = size;
    return buf;
}
