/* dash_metrics.c - /metrics of `lanes dash`: Prometheus' text exposition
 * format (version 0.0.4) of what the store tells, read at each scrape:
 * jobs per queue and state (the store's counters, never a count of jobs),
 * whether each queue is paused, the workers connected to each queue, the
 * number of queues, and whether the store answered. Nothing is made up: lanes keeps no totals of completed
 * or failed runs and no run-time histogram in the store (docs/dash.md). */
#include "dash.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static void header(FILE *f, const char *name, const char *help) {
    fprintf(f, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
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
            for (size_t s = 0; s < sizeof states / sizeof states[0]; s++) {
                fputs("lanes_jobs{queue=\"", f);
                label(f, names[i]);
                fprintf(f, "\",state=\"%s\"} %llu\n", ln_job_state_name(states[s]),
                        (unsigned long long)v[s]);
            }
        }
        header(f, "lanes_queue_paused", "1 if the queue is paused (workers take no job).");
        for (size_t i = 0; i < n; i++) {
            fputs("lanes_queue_paused{queue=\"", f);
            label(f, names[i]);
            fprintf(f, "\"} %d\n", paused[i]);
        }
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
        fputs("lanes_workers{queue=\"", f);
        label(f, names[i]);
        fprintf(f, "\"} %zu\n", nw);
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
        header(f, "lanes_queues", "Queues the store has (the list stops at 1000).");
        fprintf(f, "lanes_queues %zu\n", n);
        err = queue_samples(d, f, names, n);
        if (err == 0) worker_samples(d, f, names, n);
    }
    header(f, "lanes_store_up", "1 if the store answered this scrape, else 0.");
    fprintf(f, "lanes_store_up{store=\"%s\"} %d\n", d->store, err == 0);
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    *len = size;
    return buf;
}
