/* dash_api.c - the JSON API of `lanes dash` (docs/dash.md), over the
 * public calls of lanes/jobs.h. Every answer is a bounded query: counts
 * are the store's counters, a page of jobs is one ln_jobs_list of at most
 * CLI_DASH_PAGE_MAX rows, and a search by name or data reads at most
 * CLI_DASH_SEARCH_WINDOW jobs from the page's offset (the reply says where
 * to go on), so a queue of a million jobs answers as fast as a small one. */
#include "cli_err.h"
#include "cli_num.h"
#include "dash.h"
#include "dash_reply.h"
#include "jobs_workers.h"

#include <lanes.h>

#include <stdlib.h>
#include <string.h>

static cli_dash_reply ok(json_t *body) {
    cli_dash_reply r = {200, body};
    return r;
}

/* ------------------------------------------------------------- queues */

void cli_dash_queues_invalidate(cli_dash *d) {
    d->queues_at_ms = 0;
}

int cli_dash_queue_names(cli_dash *d, char ***names, size_t *n) {
    if (d->nfixed > 0) {
        *names = d->fixed;
        *n = d->nfixed;
        return 0;
    }
    int64_t now = cli_dash_now_ms();
    if (d->queues_at_ms == 0 || now - d->queues_at_ms >= d->queues_ttl_ms) {
        char **fresh = NULL;
        size_t nf = 0;
        int err = ln_jobs_queues(d->jobs, &fresh, &nf);
        if (err != 0) return err;
        ln_jobs_free_lines(d->queues, d->nqueues);
        d->queues = fresh;
        d->nqueues = nf;
        d->queues_at_ms = now;
    }
    *names = d->queues;
    *n = d->nqueues;
    return 0;
}

static json_t *counts_json(const ln_job_counts *k) {
    return json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "waiting", (json_int_t)k->waiting,
                     "delayed", (json_int_t)k->delayed, "prioritized", (json_int_t)k->prioritized,
                     "active", (json_int_t)k->active, "completed", (json_int_t)k->completed,
                     "failed", (json_int_t)k->failed, "paused", (json_int_t)k->paused,
                     "waiting-children", (json_int_t)k->waiting_children);
}

/* {name, paused, counts} of one queue, or NULL with *err set. */
static json_t *queue_json(cli_dash *d, const char *q, int *err) {
    ln_job_counts k;
    int paused = 0;
    if ((*err = ln_jobs_counts(d->jobs, q, &k)) != 0) return NULL;
    if ((*err = ln_jobs_is_paused(d->jobs, q, &paused)) != 0) return NULL;
    return json_pack("{s:o,s:b,s:o}", "name", cli_json_text(q), "paused", paused, "counts",
                     counts_json(&k));
}

static cli_dash_reply get_queues(cli_dash *d) {
    char **names;
    size_t n;
    int err = cli_dash_queue_names(d, &names, &n);
    if (err != 0) return cli_dash_lib_error(d, err);
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++) {
        json_t *q = queue_json(d, names[i], &err);
        if (q == NULL) {
            json_decref(arr);
            return cli_dash_lib_error(d, err);
        }
        json_array_append_new(arr, q);
    }
    return ok(json_pack("{s:o,s:b}", "queues", arr, "truncated", n >= LN_JOB_QUEUES_MAX));
}

static cli_dash_reply get_queue(cli_dash *d, const char *q) {
    int err;
    json_t *j = queue_json(d, q, &err);
    return j != NULL ? ok(j) : cli_dash_lib_error(d, err);
}

/* --------------------------------------------------------------- jobs */

/* text as JSON if it parses, else as a string; null for NULL. */
static json_t *json_text(const char *text) {
    if (text == NULL) return json_null();
    json_t *v = json_loads(text, JSON_DECODE_ANY, NULL);
    return v != NULL ? v : cli_json_text(text);
}

/* The trace id of a W3C traceparent "00-<trace id>-<span id>-<flags>". */
static json_t *trace_id(const char *tp) {
    if (tp == NULL || strlen(tp) < 35 || tp[2] != '-') return json_null();
    return json_stringn(tp + 3, 32);
}

static json_t *job_json(const ln_job_info *j, int full) {
    json_t *o =
        json_pack("{s:o,s:o,s:s,s:i,s:i,s:i,s:i,s:i,s:I,s:I,s:I,s:I}", "id", cli_json_text(j->id),
                  "name", cli_json_text(j->name), "state", ln_job_state_name(j->state), "priority",
                  j->priority, "attempts", j->attempts, "attempts_made", j->attempts_made,
                  "attempts_started", j->attempts_started, "stalled", j->stalled, "created_ms",
                  (json_int_t)j->created_ms, "run_at_ms", (json_int_t)j->run_at_ms, "started_ms",
                  (json_int_t)j->started_ms, "finished_ms", (json_int_t)j->finished_ms);
    if (o == NULL) return NULL;
    /* In waiting-children after a run: its handler moved it there
     * (ln_job_wait_children, `--exec` exit 78); a flow parent added so
     * has not run. */
    json_object_set_new(
        o, "waited", json_boolean(j->state == LN_JOB_WAITING_CHILDREN && j->attempts_started > 0));
    if (!full) {
        json_object_set_new(o, "data_preview", cli_dash_preview(j->data));
        json_object_set_new(o, "failed_reason", cli_dash_preview(j->failed_reason));
        return o;
    }
    json_object_set_new(o, "data", json_text(j->data));
    json_object_set_new(o, "data_text", cli_json_text(j->data)); /* as stored, for the editor */
    json_object_set_new(o, "result", json_text(j->result));
    json_object_set_new(o, "progress", json_text(j->progress));
    json_object_set_new(o, "failed_reason", cli_json_text(j->failed_reason));
    json_object_set_new(o, "traceparent", cli_json_text(j->traceparent));
    json_object_set_new(o, "tracestate", cli_json_text(j->tracestate));
    json_object_set_new(o, "trace_id", trace_id(j->traceparent));
    json_object_set_new(o, "lifo", json_boolean(j->lifo));
    json_object_set_new(
        o, "backoff",
        j->backoff == LN_BACKOFF_CUSTOM
            ? cli_json_text(j->backoff_type)
            : json_string(j->backoff == LN_BACKOFF_EXPONENTIAL ? "exponential" : "fixed"));
    json_object_set_new(o, "backoff_ms", json_integer(j->backoff_ms));
    json_object_set_new(o, "backoff_custom", json_boolean(j->backoff == LN_BACKOFF_CUSTOM));
    json_object_set_new(o, "backoff_jitter", json_real(j->backoff_jitter));
    return o;
}

/* Whole-string number in [0, max], or -1. */
static long long parse_num(const char *s, long long max) {
    long long v;
    return cli_parse_ll(s, 0, max, &v) == 0 ? v : -1;
}

static uint64_t count_of(const ln_job_counts *k, int state) {
    const uint64_t v[] = {k->waiting,   k->delayed, k->prioritized, k->active,
                          k->completed, k->failed,  k->paused,      k->waiting_children};
    return state >= 0 && state < LN_JOB_NSTATES ? v[state] : 0;
}

/* The job whose id is q, if any (a search by id), as an array. */
static json_t *id_match(cli_dash *d, const char *queue, const char *q) {
    json_t *arr = json_array();
    ln_job_info info;
    if (ln_jobs_get(d->jobs, queue, q, &info) == 0) {
        json_array_append_new(arr, job_json(&info, 0));
        ln_job_info_clear(&info);
    }
    return arr;
}

/* A page: jobs [offset, offset + limit), or those after the row whose
 * cursor is after (not NULL: the same cost at any depth), or with q the
 * jobs among the next CLI_DASH_SEARCH_WINDOW whose name or data contains
 * q (at most limit). *next_after: the last row's cursor (strdup'd), NULL
 * if no row. */
static int list_page(cli_dash *d, const char *queue, int state, size_t offset, const char *after,
                     size_t limit, const char *q, json_t *out, size_t *scanned, char **next_after) {
    int search = q != NULL && *q != '\0';
    ln_job_info *jobs = NULL;
    size_t n = 0, want = search ? CLI_DASH_SEARCH_WINDOW : limit;
    int err = after != NULL ? ln_jobs_list_after(d->jobs, queue, state, after, want, &jobs, &n)
                            : ln_jobs_list(d->jobs, queue, state, offset, want, &jobs, &n);
    if (err != 0) return err;
    size_t i = 0, found = 0;
    for (; i < n && found < limit; i++) {
        if (search && !(jobs[i].name && strstr(jobs[i].name, q)) &&
            !(jobs[i].data && strstr(jobs[i].data, q)))
            continue;
        json_array_append_new(out, job_json(&jobs[i], 0));
        found++;
    }
    *scanned = i;
    *next_after = i > 0 && jobs[i - 1].cursor != NULL ? strdup(jobs[i - 1].cursor) : NULL;
    ln_job_info_free_array(jobs, n);
    return 0;
}

static cli_dash_reply get_jobs(cli_dash *d, const cli_dash_req *req, const char *queue) {
    const char *st = req->arg(req->arg_ctx, "state");
    int state = ln_job_state_parse(st != NULL ? st : "waiting");
    if (state < 0) return cli_dash_error(400, "bad_request", "state: unknown job state");
    const char *so = req->arg(req->arg_ctx, "offset"), *sl = req->arg(req->arg_ctx, "limit");
    long long offset = so ? parse_num(so, (long long)1 << 53) : 0;
    long long limit = sl ? parse_num(sl, CLI_DASH_PAGE_MAX) : 20;
    if (offset < 0 || limit < 1)
        return cli_dash_error(400, "bad_request", "offset must be >= 0 and limit 1..100");
    const char *q = req->arg(req->arg_ctx, "q"), *after = req->arg(req->arg_ctx, "after");
    if (after != NULL && *after == '\0') after = NULL; /* offset then only numbers the rows */
    ln_job_counts k;
    int err = ln_jobs_counts(d->jobs, queue, &k);
    if (err != 0) return cli_dash_lib_error(d, err);
    json_t *arr = json_array();
    size_t scanned = 0;
    char *next_after = NULL;
    err = list_page(d, queue, state, (size_t)offset, after, (size_t)limit, q, arr, &scanned,
                    &next_after);
    if (err != 0) {
        json_decref(arr);
        if (err == LN_EINVAL && after != NULL) /* a cursor not of this store and state */
            return cli_dash_error(400, "bad_request", ln_jobs_errmsg(d->jobs));
        return cli_dash_lib_error(d, err);
    }
    uint64_t total = count_of(&k, state);
    json_t *body = json_pack("{s:s,s:s,s:I,s:I,s:I,s:o,s:o}", "queue", queue, "state",
                             ln_job_state_name(state), "offset", (json_int_t)offset, "limit",
                             (json_int_t)limit, "total", (json_int_t)total, "counts",
                             counts_json(&k), "jobs", arr);
    json_object_set_new(body, "next_after",
                        next_after != NULL ? cli_json_text(next_after) : json_null());
    free(next_after);
    if (q != NULL && *q != '\0') {
        size_t next = (size_t)offset + scanned;
        json_object_set_new(body, "search",
                            json_pack("{s:s,s:I,s:I,s:b,s:o}", "q", q, "scanned",
                                      (json_int_t)scanned, "next_offset", (json_int_t)next, "more",
                                      next < total, "id_match", id_match(d, queue, q)));
    }
    return ok(body);
}

static cli_dash_reply get_job(cli_dash *d, const char *queue, const char *id) {
    ln_job_info info;
    int err = ln_jobs_get(d->jobs, queue, id, &info);
    if (err != 0) return cli_dash_lib_error(d, err == LN_EINVAL ? LN_ENOENT : err);
    json_t *o = job_json(&info, 1);
    ln_job_info_clear(&info);
    char **lines = NULL;
    size_t n = 0;
    json_t *logs = json_array();
    if (ln_jobs_logs(d->jobs, queue, id, &lines, &n) == 0)
        for (size_t i = 0; i < n; i++) json_array_append_new(logs, cli_json_text(lines[i]));
    ln_jobs_free_lines(lines, n);
    json_object_set_new(o, "logs", logs);
    json_object_set_new(o, "queue", cli_json_text(queue));
    return ok(o);
}

/* ------------------------------------------------------------- writes */

/* POST .../jobs/ID/remove-tree: the job with its subtree of children
 * (ln_jobs_remove_tree: all or nothing, at most LN_JOBS_REMOVE_TREE_MAX
 * entries), answering how many went. */
static cli_dash_reply remove_tree(cli_dash *d, const char *queue, const char *id) {
    size_t removed = 0;
    int err = ln_jobs_remove_tree(d->jobs, queue, id, &removed);
    if (err != 0) return cli_dash_lib_error(d, err);
    return ok(json_pack("{s:b,s:s,s:s,s:I}", "ok", 1, "id", id, "action", "remove-tree", "removed",
                        (json_int_t)removed));
}

/* The finished state ?state= names (completed or failed; dflt when not
 * given), or -1 for any other: retry and clean take one. */
static int finished_state(const cli_dash_req *req, int dflt) {
    const char *st = req->arg(req->arg_ctx, "state");
    int state = st != NULL ? ln_job_state_parse(st) : dflt;
    return state == LN_JOB_COMPLETED || state == LN_JOB_FAILED ? state : -1;
}

static cli_dash_reply bad_state(void) {
    return cli_dash_error(400, "bad_request", "state must be completed or failed");
}

/* POST .../jobs/ID/(retry[?state=]|remove|remove-tree|promote). */
static cli_dash_reply job_action(cli_dash *d, const cli_dash_req *req, const char *queue,
                                 const char *id, const char *act) {
    int err;
    if (strcmp(act, "remove-tree") == 0) return remove_tree(d, queue, id);
    if (strcmp(act, "retry") == 0) {
        int state = finished_state(req, LN_JOB_FAILED);
        if (state < 0) return bad_state();
        err = ln_jobs_retry_finished(d->jobs, queue, id, state);
    } else if (strcmp(act, "remove") == 0) {
        err = ln_jobs_remove(d->jobs, queue, id);
    } else if (strcmp(act, "promote") == 0) {
        err = ln_jobs_promote(d->jobs, queue, id);
    } else {
        return cli_dash_error(404, "not_found", "no such action");
    }
    if (err != 0) return cli_dash_lib_error(d, err);
    return ok(json_pack("{s:b,s:s,s:s}", "ok", 1, "id", id, "action", act));
}

static cli_dash_reply clean(cli_dash *d, const cli_dash_req *req, const char *queue) {
    int state = finished_state(req, -1);
    if (state < 0) return bad_state();
    const char *sa = req->arg(req->arg_ctx, "age_ms"), *sk = req->arg(req->arg_ctx, "keep");
    long long age = sa ? parse_num(sa, (long long)1 << 53) : 0;
    long long keep = sk ? parse_num(sk, (long long)1 << 53) : 0;
    if (age < 0 || keep < 0)
        return cli_dash_error(400, "bad_request", "age_ms and keep must be numbers >= 0");
    size_t removed = 0;
    int err = ln_jobs_clean(d->jobs, queue, state, age, (uint64_t)keep, &removed);
    if (err != 0) return cli_dash_lib_error(d, err);
    return ok(json_pack("{s:b,s:I}", "ok", 1, "removed", (json_int_t)removed));
}

/* POST /api/queues/Q/(retry-all[?state=]|clean|pause|resume). */
static cli_dash_reply queue_action(cli_dash *d, const cli_dash_req *req, const char *queue,
                                   const char *act) {
    int err;
    if (strcmp(act, "retry-all") == 0) {
        size_t count = 0;
        int state = finished_state(req, LN_JOB_FAILED);
        if (state < 0) return bad_state();
        if ((err = ln_jobs_retry_all_finished(d->jobs, queue, state, -1, &count)) != 0)
            return cli_dash_lib_error(d, err);
        return ok(json_pack("{s:b,s:I}", "ok", 1, "retried", (json_int_t)count));
    }
    if (strcmp(act, "clean") == 0) return clean(d, req, queue);
    if (strcmp(act, "pause") == 0)
        err = ln_jobs_pause(d->jobs, queue);
    else if (strcmp(act, "resume") == 0)
        err = ln_jobs_resume(d->jobs, queue);
    else
        return cli_dash_error(404, "not_found", "no such action");
    if (err != 0) return cli_dash_lib_error(d, err);
    return ok(json_pack("{s:b,s:b}", "ok", 1, "paused", strcmp(act, "pause") == 0));
}

/* ------------------------------------------------------------ workers */

/* The workers connected to queue q now (ln_jobs_workers: at most
 * LN_JOB_WORKERS_MAX; on Redis one CLIENT LIST). */
static cli_dash_reply get_workers(cli_dash *d, const char *q) {
    ln_worker_info *w = NULL;
    size_t n = 0;
    int err = ln_jobs_workers(d->jobs, q, &w, &n);
    if (err != 0) return cli_dash_lib_error(d, err);
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++) json_array_append_new(arr, cli_worker_json(&w[i]));
    ln_jobs_workers_free(w, n);
    return ok(json_pack("{s:s,s:o}", "queue", q, "workers", arr));
}

/* A queue's job schedulers, the next to run first: one page of at most
 * CLI_DASH_PAGE_MAX (bounded, as every answer). */
static cli_dash_reply get_schedulers(cli_dash *d, const char *queue) {
    ln_job_scheduler *list;
    size_t n;
    int err = ln_jobs_scheduler_list(d->jobs, queue, 0, CLI_DASH_PAGE_MAX, &list, &n);
    if (err != 0) return cli_dash_lib_error(d, err);
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++) {
        const ln_job_scheduler *c = &list[i];
        json_array_append_new(
            arr,
            json_pack("{s:o,s:o,s:I,s:I,s:s?,s:s?,s:I,s:I,s:I,s:I}", "id", cli_json_text(c->id),
                      "name", cli_json_text(c->name), "next_ms", (json_int_t)c->next_ms, "every_ms",
                      (json_int_t)c->every_ms, "pattern", c->pattern, "tz", c->tz, "limit",
                      (json_int_t)c->limit, "iterations", (json_int_t)c->iterations, "start_ms",
                      (json_int_t)c->start_ms, "end_ms", (json_int_t)c->end_ms));
    }
    ln_job_scheduler_free_array(list, n);
    return ok(json_pack("{s:o}", "schedulers", arr));
}

/* POST /api/queues/Q/schedulers/ID/remove: ln_jobs_unschedule (its
 * pending iteration goes too if delayed; one waiting or running stays). */
static cli_dash_reply scheduler_action(cli_dash *d, const char *queue, const char *id,
                                       const char *act) {
    if (strcmp(act, "remove") != 0) return cli_dash_error(404, "not_found", "no such action");
    int err = ln_jobs_unschedule(d->jobs, queue, id);
    if (err != 0) return cli_dash_lib_error(d, err);
    return ok(json_pack("{s:b,s:s,s:s}", "ok", 1, "id", id, "action", act));
}

/* ------------------------------------------------------------ routing */

static int is(const cli_dash_req *req, int nseg, const char *method) {
    return req->nseg == nseg && strcmp(req->method, method) == 0;
}

int cli_dash_api_is_write(const cli_dash_req *req) {
    return strcmp(req->method, "GET") != 0 && strcmp(req->method, "HEAD") != 0;
}

static cli_dash_reply info(cli_dash *d) {
    return ok(json_pack("{s:s,s:s,s:s,s:b,s:b,s:i,s:i,s:s?}", "version", ln_version_string(),
                        "store", d->store, "url", d->url_shown, "read_only", d->read_only,
                        "writes_need_token", d->token[0] != '\0', "page_max", CLI_DASH_PAGE_MAX,
                        "search_window", CLI_DASH_SEARCH_WINDOW, "warning",
                        ln_jobs_warning(d->jobs)));
}

cli_dash_reply cli_dash_api(cli_dash *d, const cli_dash_req *req) {
    char *const *s = req->seg;
    if (req->nseg == 0) return cli_dash_error(404, "not_found", "no such endpoint");
    if (is(req, 1, "GET") && strcmp(s[0], "info") == 0) return info(d);
    if (strcmp(s[0], "queues") != 0) return cli_dash_error(404, "not_found", "no such endpoint");
    cli_dash_reply r;
    if (cli_dash_edit(d, req, &r)) { /* dash_edit.c */
        if (cli_dash_api_is_write(req)) cli_dash_queues_invalidate(d);
        return r;
    }
    if (is(req, 1, "GET")) return get_queues(d);
    if (is(req, 2, "GET")) return get_queue(d, s[1]);
    if (is(req, 3, "GET") && strcmp(s[2], "jobs") == 0) return get_jobs(d, req, s[1]);
    if (is(req, 3, "GET") && strcmp(s[2], "metrics") == 0) return cli_dash_throughput(d, req, s[1]);
    if (is(req, 3, "GET") && strcmp(s[2], "schedulers") == 0) return get_schedulers(d, s[1]);
    if (is(req, 4, "GET") && strcmp(s[2], "jobs") == 0) return get_job(d, s[1], s[3]);
    if (is(req, 5, "GET") && strcmp(s[2], "jobs") == 0 && strcmp(s[4], "flow") == 0)
        return cli_dash_flow(d, req, s[1], s[3]);
    if (is(req, 3, "GET") && strcmp(s[2], "workers") == 0) return get_workers(d, s[1]);
    if (is(req, 3, "POST")) {
        r = queue_action(d, req, s[1], s[2]);
    } else if (is(req, 5, "POST") && strcmp(s[2], "jobs") == 0) {
        r = job_action(d, req, s[1], s[3], s[4]);
    } else if (is(req, 5, "POST") && strcmp(s[2], "schedulers") == 0) {
        r = scheduler_action(d, s[1], s[3], s[4]);
    } else if (req->nseg <= 5 && strcmp(req->method, "GET") != 0 &&
               strcmp(req->method, "POST") != 0) {
        return cli_dash_error(405, "method_not_allowed", "use GET to read and POST to act");
    } else {
        return cli_dash_error(404, "not_found", "no such endpoint");
    }
    cli_dash_queues_invalidate(d); /* a pause may add a queue, a clean end one */
    return r;
}
