/* jobs_metrics.c - `lanes jobs URL metrics QUEUE [--type completed|failed]`:
 * a queue's per-minute metrics of completed and failed jobs, read with
 * ln_jobs_metrics (jobs.h "Metrics"), as text or --json. */
#include "jobs_metrics.h"

#include "cli.h"
#include "cli_err.h"
#include "cli_opts.h"
#include "jobs_store.h"

#include <lanes.h>

#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_t *metrics_json(const ln_job_metrics *m) {
    json_t *data = json_array();
    for (size_t i = 0; i < m->ndata; i++)
        json_array_append_new(data, json_integer((json_int_t)m->data[i]));
    return json_pack("{s:I,s:I,s:I,s:I,s:o}", "count", (json_int_t)m->count, "prevTS",
                     (json_int_t)m->prev_ts, "prevCount", (json_int_t)m->prev_count, "points",
                     (json_int_t)m->npoints, "data", data);
}

static void metrics_text(const char *type, const ln_job_metrics *m) {
    printf("%s: count %" PRIu64 ", prevTS %" PRId64 ", prevCount %" PRIu64 ", %" PRIu64 " points\n",
           type, m->count, m->prev_ts, m->prev_count, m->npoints);
    if (m->ndata == 0) return;
    fputs("  newest first:", stdout);
    for (size_t i = 0; i < m->ndata; i++) printf(" %" PRIu64, m->data[i]);
    putchar('\n');
}

int cli_jobs_metrics(ln_jobs *jobs, const char *prog, const char *const *pos, int npos,
                     const char *type, int json) {
    if (npos != 1) return cli_usage(prog, "%s", "metrics needs QUEUE");
    if (type != NULL && strcmp(type, "completed") != 0 && strcmp(type, "failed") != 0)
        return cli_usage(prog, "--type is completed or failed, not '%s'", type);
    static const char *const names[] = {"completed", "failed"};
    static const int types[] = {LN_JOB_COMPLETED, LN_JOB_FAILED};
    json_t *out = json ? json_object() : NULL;
    for (int i = 0; i < 2; i++) {
        if (type != NULL && strcmp(type, names[i]) != 0) continue;
        ln_job_metrics m;
        int err = ln_jobs_metrics(jobs, pos[0], types[i], 0, -1, &m);
        if (err != 0) {
            json_decref(out);
            return cli_jobs_fail(jobs, prog, err);
        }
        if (json)
            json_object_set_new(out, names[i], metrics_json(&m));
        else
            metrics_text(names[i], &m);
        ln_job_metrics_clear(&m);
    }
    if (json) cli_jobs_print_json(out);
    return CLI_EXIT_OK;
}
