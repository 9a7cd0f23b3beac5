/* dash_throughput.c - GET /api/queues/Q/metrics?points=N for the
 * dashboard's throughput chart (docs/dash.md): the queue's per-minute
 * metrics of completed and failed jobs (ln_jobs_metrics, jobs.h
 * "Metrics"), the newest N points of each (default 60, at most
 * CLI_DASH_METRICS_POINTS_MAX): two bounded reads. */
#include "dash.h"
#include "dash_reply.h"

#include <lanes.h>

#include <stdlib.h>
#include <string.h>

#define DEFAULT_POINTS 60

static json_t *type_json(const ln_job_metrics *m) {
    json_t *data = json_array();
    for (size_t i = 0; i < m->ndata; i++)
        json_array_append_new(data, json_integer((json_int_t)m->data[i]));
    return json_pack("{s:I,s:I,s:I,s:I,s:o}", "count", (json_int_t)m->count, "prev_ts",
                     (json_int_t)m->prev_ts, "prev_count", (json_int_t)m->prev_count, "points",
                     (json_int_t)m->npoints, "data", data);
}

cli_dash_reply cli_dash_throughput(cli_dash *d, const cli_dash_req *req, const char *queue) {
    const char *p = req->arg(req->arg_ctx, "points");
    long n = DEFAULT_POINTS;
    if (p != NULL) {
        char *end;
        n = strtol(p, &end, 10);
        if (*p == '\0' || *end != '\0' || n < 1 || n > CLI_DASH_METRICS_POINTS_MAX)
            return cli_dash_error(400, "bad_request", "points must be 1..1440");
    }
    static const char *const names[] = {"completed", "failed"};
    static const int types[] = {LN_JOB_COMPLETED, LN_JOB_FAILED};
    json_t *out = json_object();
    for (int i = 0; i < 2; i++) {
        ln_job_metrics m;
        int err = ln_jobs_metrics(d->jobs, queue, types[i], 0, n - 1, &m);
        if (err != 0) {
            json_decref(out);
            const char *msg = ln_jobs_errmsg(d->jobs);
            return cli_dash_error(err == LN_EINVAL ? 409 : 503,
                                  err == LN_EINVAL ? "invalid" : "store",
                                  msg != NULL && *msg ? msg : ln_strerror(err));
        }
        json_object_set_new(out, names[i], type_json(&m));
        ln_job_metrics_clear(&m);
    }
    cli_dash_reply r = {200, out};
    return r;
}
