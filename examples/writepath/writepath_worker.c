/* writepath_worker.c - the worker process of the async mode: runs the
 * follow-ups of each comment or like the service added as a job (count
 * UPDATE, notify-targets SELECT, notification INSERTs, then the 30 ms push),
 * with an ln_worker.
 *
 * The jobs come from the service's outbox (outbox.h); their data may carry
 * more keys than the four read here. A job whose id names another
 * database (wp-TAG-N with another instance tag: a queue shared by two
 * data databases) fails instead of counting this database's rows.
 *
 * Tracing: a job carries the traceparent of the service's "queue.add" span;
 * the job's span continues it, so the worker's spans sit in the request's
 * trace, after its response boundary.
 *
 * Threads: ln_worker runs up to --concurrency handlers at once on its own
 * pool; each handler takes a database connection from a pool of the same
 * size for its transaction and gives it back before the push. SIGTERM or
 * SIGINT stops the worker (ln_worker_stop is async-signal-safe); jobs still
 * running after the grace period go back to waiting.
 */
#include "dbpool.h"
#include "outbox.h"
#include "service.h"
#include "trace.h"
#include "writes.h"

#include <lanes.h>
#include <lanes/jobs.h>

#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct worker_ctx {
    wp_dbpool *pool;
    wp_tracer *tracer;
    unsigned push_ms;
    char tag[WP_TAG_LEN + 1]; /* this database's instance tag */
} worker_ctx;

/* 1 if the job's id is an outbox job id of another database. */
static int foreign_job(const worker_ctx *ctx, const char *id) {
    return strncmp(id, "wp-", 3) == 0 &&
           (strncmp(id + 3, ctx->tag, WP_TAG_LEN) != 0 || id[3 + WP_TAG_LEN] != '-');
}

/* Set once before the handlers are installed, read by the signal handler. */
static ln_worker *volatile the_worker;

static void on_signal(int sig) {
    (void)sig;
    if (the_worker) ln_worker_stop(the_worker);
}

static int parse_job(const ln_job *job, wp_write *w) {
    json_t *doc = json_loads(ln_job_data(job), 0, NULL);
    const char *kind = NULL;
    json_int_t id = 0, post = 0, user = 0;
    int rc = doc && json_unpack(doc, "{s:s,s:I,s:I,s:I}", "kind", &kind, "id", &id, "post_id",
                                &post, "user_id", &user) == 0
                 ? 0
                 : -1;
    memset(w, 0, sizeof *w);
    if (rc == 0 && (!strcmp(kind, "comment") || !strcmp(kind, "like"))) {
        w->kind = !strcmp(kind, "comment") ? WP_COMMENT : WP_LIKE;
        w->id = id;
        w->post_id = post;
        w->user_id = user;
    } else {
        rc = -1;
    }
    json_decref(doc);
    return rc;
}

static int run_job(ln_job *job, void *arg) {
    worker_ctx *ctx = arg;
    wp_write w;
    if (parse_job(job, &w)) return ln_job_fail(job, "job data is not a writepath write");
    if (foreign_job(ctx, ln_job_id(job)))
        return ln_job_fail(job, "job of another writepath database (instance tag differs)");

    wp_span_ctx parent;
    const char *tp = ln_job_traceparent(job);
    int continued = tp && wp_traceparent_parse(tp, &parent) == 0;
    wp_trace tr;
    wp_trace_begin(&tr, ctx->tracer, continued ? &parent : NULL, 1);
    wp_span *root =
        wp_span_start(&tr, NULL, continued ? &parent : NULL,
                      w.kind == WP_COMMENT ? "worker comment" : "worker like", WP_KIND_CONSUMER);
    wp_span_str(root, "messaging.system", "lanes");
    wp_span_str(root, "messaging.destination.name", WP_QUEUE);
    wp_span_int(root, "writepath.row_id", w.id);
    wp_span_int(root, "job.attempt", ln_job_attempt(job));

    wp_conn *conn = wp_dbpool_acquire(ctx->pool);
    int targets = 0;
    int rc = wp_write_followups(conn, &tr, root, &w, &targets);
    wp_dbpool_release(ctx->pool, conn);
    if (rc == WP_OK) wp_write_push(&tr, root, ctx->push_ms, targets);

    root->error = rc != WP_OK;
    wp_span_end(root);
    wp_trace_flush(&tr, ctx->tracer);
    return rc == WP_OK ? 0 : ln_job_fail(job, "database error in the follow-ups");
}

/* The schema, the pool and the instance tag. 0, or -1 (printed). */
static int open_db(worker_ctx *ctx, const char *db, unsigned pool_size) {
    if (wp_db_init(db) || wp_dbpool_open(&ctx->pool, db, pool_size)) return -1;
    wp_conn *conn = wp_dbpool_acquire(ctx->pool);
    int rc = wp_outbox_tag(conn, ctx->tag);
    wp_dbpool_release(ctx->pool, conn);
    return rc;
}

static void usage(void) {
    fprintf(stderr, "usage: writepath_worker --db PATH [--queue URL] [--concurrency N]\n"
                    "                        [--push-ms N] [--trace FILE] [--exit-when-empty]\n"
                    "  --queue        job store URL (default sqlite:DB" WP_QUEUE_SUFFIX ")\n"
                    "  --concurrency  jobs run at once (default 64)\n"
                    "  --push-ms      simulated push call (default 30)\n"
                    "  --trace        append spans as OTLP/JSON lines to FILE\n"
                    "  --exit-when-empty  return once the queue has nothing left to run\n");
}

int main(int argc, char **argv) {
    const char *db = NULL, *queue = NULL, *trace = NULL;
    long concurrency = 64, push_ms = 30;
    int exit_when_empty = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        char *end = NULL;
        if (!strcmp(a, "--exit-when-empty")) {
            exit_when_empty = 1;
            continue;
        }
        if (!v) {
            usage();
            return 2;
        }
        if (!strcmp(a, "--db"))
            db = v;
        else if (!strcmp(a, "--queue"))
            queue = v;
        else if (!strcmp(a, "--trace"))
            trace = v;
        else if (!strcmp(a, "--concurrency"))
            concurrency = strtol(v, &end, 10);
        else if (!strcmp(a, "--push-ms"))
            push_ms = strtol(v, &end, 10);
        else {
            usage();
            return 2;
        }
        if (end && (*end || *v == '\0')) {
            usage();
            return 2;
        }
        i++;
    }
    if (!db || concurrency < 1 || concurrency > 1024 || push_ms < 0 || push_ms > 60000) {
        usage();
        return 2;
    }

    worker_ctx ctx = {.push_ms = (unsigned)push_ms};
    char *default_queue = NULL;
    ln_jobs *jobs = NULL;
    ln_worker *w = NULL;
    int rc = 1;
    if (open_db(&ctx, db, (unsigned)concurrency)) goto out;
    if (trace && wp_tracer_open(&ctx.tracer, trace, "writepath-worker")) {
        perror("writepath_worker: trace file");
        goto out;
    }
    if (!queue) queue = default_queue = wp_default_queue_url(db);
    char err[256] = "";
    int e = queue ? ln_jobs_open_ex(&jobs, queue, NULL, err, sizeof err) : LN_ENOMEM;
    if (e == 0) {
        ln_worker_opts opts;
        ln_worker_opts_init(&opts);
        opts.concurrency = (unsigned)concurrency;
        opts.exit_when_empty = exit_when_empty;
        opts.poll_ms = 10;
        e = ln_worker_create(&w, jobs, WP_QUEUE, run_job, &ctx, &opts);
    }
    if (e) {
        fprintf(stderr, "writepath_worker: queue %s: %s%s%s\n", queue ? queue : "", ln_strerror(e),
                *err ? ": " : "",
                *err   ? err
                : jobs ? ln_jobs_errmsg(jobs)
                       : "");
        goto out;
    }

    the_worker = w;
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    fprintf(stderr, "writepath_worker: running, concurrency %ld, queue %s\n", concurrency, queue);
    e = ln_worker_run(w);
    if (e) fprintf(stderr, "writepath_worker: %s: %s\n", ln_strerror(e), ln_jobs_errmsg(jobs));
    ln_worker_stats st;
    ln_worker_get_stats(w, &st);
    fprintf(stderr,
            "writepath_worker: stopped: taken %llu, completed %llu, failed %llu, "
            "retried %llu\n",
            (unsigned long long)st.taken, (unsigned long long)st.completed,
            (unsigned long long)st.failed, (unsigned long long)st.retried);
    rc = e ? 1 : 0;
out:
    signal(SIGTERM, SIG_DFL);
    signal(SIGINT, SIG_DFL);
    the_worker = NULL;
    ln_worker_destroy(w);
    ln_jobs_close(jobs);
    wp_dbpool_close(ctx.pool);
    wp_tracer_close(ctx.tracer);
    free(default_queue);
    return rc;
}
