/* jobs_workers.c - `lanes jobs URL workers QUEUE [--json]`: the workers
 * connected to a queue now (ln_jobs_workers): lanes runs on either store,
 * and on Redis BullMQ's Node workers too. */
#include "cli.h"
#include "cli_err.h"
#include "jobs_store.h"
#include "jobs_workers.h"

#include <lanes.h>
#include <lanes/jobs.h>

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static const char *kind_name(int kind) {
    return kind == LN_WORKER_LANES ? "lanes" : kind == LN_WORKER_BULLMQ ? "bullmq" : "unknown";
}

json_t *cli_worker_json(const ln_worker_info *w) {
    return json_pack("{s:s,s:s,s:s?,s:s?,s:s?,s:I,s:I,s:I}", "id", w->id, "kind",
                     kind_name(w->kind), "name", w->name, "addr", w->addr, "host", w->host, "pid",
                     (json_int_t)w->pid, "startedOn", (json_int_t)w->started_ms, "seenOn",
                     (json_int_t)w->seen_ms);
}

/* Seconds from ms to now (the local clock; the store's may differ a little). */
static long long secs_ago(int64_t ms) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    long long d = ((long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000 - ms) / 1000;
    return d > 0 ? d : 0;
}

int cli_jobs_workers(ln_jobs *jobs, const char *prog, const char *queue, int json) {
    ln_worker_info *w = NULL;
    size_t n = 0;
    int err = ln_jobs_workers(jobs, queue, &w, &n);
    if (err != 0) return cli_jobs_fail(jobs, prog, err);
    if (json) {
        json_t *arr = json_array();
        for (size_t i = 0; i < n; i++) json_array_append_new(arr, cli_worker_json(&w[i]));
        cli_jobs_print_json(arr);
    } else {
        for (size_t i = 0; i < n; i++) {
            const char *where = w[i].addr ? w[i].addr : w[i].host ? w[i].host : "-";
            printf("%s %s %s %s pid=%lld up=%llds seen=%llds-ago\n", w[i].id, kind_name(w[i].kind),
                   w[i].name ? w[i].name : "-", where, (long long)w[i].pid,
                   secs_ago(w[i].started_ms), secs_ago(w[i].seen_ms));
        }
    }
    ln_jobs_workers_free(w, n);
    return CLI_EXIT_OK;
}
