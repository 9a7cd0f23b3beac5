/* serve.c - the write-path HTTP service of seed 003 over libmicrohttpd:
 * POST /comment and POST /like, in naive or async mode.
 *
 * DESIGN: libmicrohttpd runs one thread per HTTP connection (like a Node
 * process keeps every virtual user's request in flight at once), so a
 * request that waits blocks only its own connection. Every request takes a
 * database connection from a pool of 10 (the seed's mysql2 pool) for its
 * statements:
 *
 *   naive  INSERT, then the follow-up transaction (count UPDATE, notify
 *          SELECT, notification INSERTs) and the 30 ms push, all while
 *          holding the pool connection; then the answer.
 *   async  INSERT, give the connection back, add a job carrying the
 *          request's trace context, answer. writepath_worker does the rest.
 *          Adds that arrive while another is being committed are committed
 *          together (enqueue.h); each request still answers only once its
 *          own job is stored.
 *
 * libmicrohttpd calls the access handler several times per request: first
 * with the headers (we start the request span), then with pieces of the
 * body (we copy up to WP_REQUEST_MAX bytes), then once with none (we
 * answer). The completion callback ends the request span when the response
 * has been sent -- the response boundary of the waterfall -- and writes the
 * request's spans. A request's state is touched only by its connection's
 * thread. Shared state (pool, queue handle, tracer) is thread-safe.
 */
#include "dbpool.h"
#include "enqueue.h"
#include "service.h"
#include "trace.h"
#include "writes.h"

#include <lanes.h>
#include <lanes/jobs.h>

#include <arpa/inet.h>
#include <jansson.h>
#include <microhttpd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WP_REQUEST_MAX 16384 /* bytes of request body accepted */
#define WP_MAX_BATCH 64      /* most jobs added in one store transaction */

typedef struct service {
    int async;
    unsigned push_ms;
    unsigned sample_every;
    wp_dbpool *pool;
    ln_jobs *jobs;
    wp_enqueuer *enqueuer; /* group commit of the adds on jobs */
    wp_tracer *tracer;
} service;

typedef struct request {
    char *body;
    size_t len;
    int too_big;
    int status;
    wp_span *root;
    wp_trace trace;
} request;

/* ------------------------------------------------------------ responses */

static enum MHD_Result reply(struct MHD_Connection *conn, request *r, int status, json_t *obj) {
    char tid[33], tp[WP_TRACEPARENT_LEN + 1];
    wp_hex(r->root->ctx.trace_id, 16, tid);
    json_object_set_new(obj, "trace_id", json_string(tid));
    char *text = json_dumps(obj, JSON_COMPACT);
    json_decref(obj);
    if (!text) return MHD_NO;
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
    if (!resp) {
        free(text);
        return MHD_NO;
    }
    wp_traceparent_format(&r->root->ctx, tp);
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
    MHD_add_response_header(resp, "traceparent", tp);
    if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, "POST");
    r->status = status;
    enum MHD_Result ret = MHD_queue_response(conn, (unsigned)status, resp);
    MHD_destroy_response(resp);
    return ret;
}

static enum MHD_Result reply_error(struct MHD_Connection *conn, request *r, int status,
                                   const char *code, const char *message) {
    r->root->error = status >= 500;
    return reply(conn, r, status, json_pack("{s:s,s:s}", "error", code, "message", message));
}

/* ------------------------------------------------------------ the body */

/* Parse the JSON body into w. NULL on success, else the error message
 * (static) and *status. w->body points into *doc, which the caller frees. */
static const char *parse_body(const request *r, wp_kind kind, wp_write *w, json_t **doc,
                              int *status) {
    json_error_t err;
    *status = MHD_HTTP_BAD_REQUEST;
    *doc = json_loadb(r->body ? r->body : "", r->len, JSON_REJECT_DUPLICATES, &err);
    if (!*doc) return "body is not valid JSON";
    if (!json_is_object(*doc)) return "body must be a JSON object";
    json_t *post = json_object_get(*doc, "post_id");
    json_t *user = json_object_get(*doc, "user_id");
    if (!post || !user) return "post_id and user_id are required";
    if (!json_is_integer(post) || json_integer_value(post) <= 0)
        return "post_id must be a positive integer";
    if (!json_is_integer(user) || json_integer_value(user) <= 0)
        return "user_id must be a positive integer";
    memset(w, 0, sizeof *w);
    w->kind = kind;
    w->post_id = json_integer_value(post);
    w->user_id = json_integer_value(user);
    if (kind == WP_COMMENT) {
        json_t *text = json_object_get(*doc, "body");
        if (!text) return "body is required";
        if (!json_is_string(text)) return "body must be a string";
        size_t n = json_string_length(text);
        if (n == 0 || n > WP_BODY_MAX) return "body must have 1 to 1000 bytes";
        if (memchr(json_string_value(text), '\0', n)) return "body must not contain NUL";
        w->body = json_string_value(text);
    }
    return NULL;
}

/* ------------------------------------------------------------ the modes */

/* Add the follow-up job of w; its traceparent is the enqueue span's, so the
 * worker's span becomes that span's child. The store numbers the job (row
 * ids restart with a fresh data file, the queue store may be older). Up to
 * 5 attempts: a follow-up that met a busy database runs again. 0 or a
 * negative LN_E* code. */
static int enqueue(service *svc, request *r, const wp_write *w) {
    char data[160], tp[WP_TRACEPARENT_LEN + 1];
    snprintf(data, sizeof data, "{\"kind\":\"%s\",\"id\":%lld,\"post_id\":%lld,\"user_id\":%lld}",
             wp_kind_name(w->kind), (long long)w->id, (long long)w->post_id, (long long)w->user_id);
    wp_span *s = wp_span_start(&r->trace, r->root, NULL, "queue.add", WP_KIND_PRODUCER);
    wp_span_str(s, "messaging.system", "lanes");
    wp_span_str(s, "messaging.destination.name", WP_QUEUE);
    wp_traceparent_format(&s->ctx, tp);
    ln_job_opts opts;
    ln_job_opts_init(&opts);
    opts.traceparent = tp;
    opts.attempts = 5;
    opts.backoff = LN_BACKOFF_EXPONENTIAL;
    opts.backoff_ms = 100;
    opts.remove_on_complete.mode = LN_KEEP_NONE;
    ln_job_spec spec = {.name = wp_kind_name(w->kind), .data_json = data, .opts = &opts};
    unsigned batch = 0;
    int rc = wp_enqueue(svc->enqueuer, &spec, &batch);
    s->error = rc != 0;
    wp_span_int(s, "messaging.batch.message_count", batch);
    wp_span_end(s);
    if (rc)
        fprintf(stderr, "writepath: add job: %s: %s\n", ln_strerror(rc), ln_jobs_errmsg(svc->jobs));
    return rc;
}

/* Do the write of w in the service's mode. WP_OK, WP_ALREADY or an error. */
static int handle_write(service *svc, request *r, wp_write *w) {
    wp_span *acq = wp_span_start(&r->trace, r->root, NULL, "pool.acquire", WP_KIND_INTERNAL);
    wp_conn *conn = wp_dbpool_acquire(svc->pool);
    wp_span_end(acq);
    int rc = wp_write_insert(conn, &r->trace, r->root, w);
    if (rc != WP_OK || !svc->async) {
        int targets = 0;
        if (rc == WP_OK) rc = wp_write_followups(conn, &r->trace, r->root, w, &targets);
        if (rc == WP_OK) wp_write_push(&r->trace, r->root, svc->push_ms, targets);
        wp_dbpool_release(svc->pool, conn);
        return rc;
    }
    wp_dbpool_release(svc->pool, conn);
    if (enqueue(svc, r, w) == 0) return WP_OK;
    /* No job, so nobody would ever count the row: take it back. */
    conn = wp_dbpool_acquire(svc->pool);
    if (wp_write_undo(conn, &r->trace, r->root, w) != WP_OK)
        fprintf(stderr, "writepath: could not undo %s %lld after a failed add\n",
                wp_kind_name(w->kind), (long long)w->id);
    wp_dbpool_release(svc->pool, conn);
    return WP_EDB;
}

static enum MHD_Result answer(service *svc, struct MHD_Connection *conn, request *r,
                              const char *url, const char *method) {
    wp_kind kind;
    if (strcmp(url, "/comment") == 0) {
        kind = WP_COMMENT;
        r->root->name = "POST /comment";
    } else if (strcmp(url, "/like") == 0) {
        kind = WP_LIKE;
        r->root->name = "POST /like";
    } else {
        return reply_error(conn, r, MHD_HTTP_NOT_FOUND, "not_found", "no such endpoint");
    }
    if (strcmp(method, MHD_HTTP_METHOD_POST) != 0)
        return reply_error(conn, r, MHD_HTTP_METHOD_NOT_ALLOWED, "method_not_allowed", "use POST");
    if (r->too_big)
        return reply_error(conn, r, MHD_HTTP_CONTENT_TOO_LARGE, "too_large",
                           "request body larger than 16384 bytes");
    wp_write w;
    json_t *doc;
    int status;
    const char *bad = parse_body(r, kind, &w, &doc, &status);
    if (bad) {
        json_decref(doc);
        return reply_error(conn, r, status, "invalid_request", bad);
    }
    int rc = handle_write(svc, r, &w);
    json_decref(doc); /* w.body pointed into it */
    switch (rc) {
    case WP_OK:
        return reply(conn, r, MHD_HTTP_CREATED,
                     json_pack("{s:s,s:I,s:I,s:I,s:s}", "kind", wp_kind_name(kind), "id",
                               (json_int_t)w.id, "post_id", (json_int_t)w.post_id, "user_id",
                               (json_int_t)w.user_id, "mode", svc->async ? "async" : "naive"));
    case WP_ALREADY:
        return reply_error(conn, r, MHD_HTTP_CONFLICT, "already_liked",
                           "the user already likes this post");
    case WP_ENOPOST:
        return reply_error(conn, r, MHD_HTTP_NOT_FOUND, "unknown_post", "no such post");
    case WP_ENOUSER:
        return reply_error(conn, r, MHD_HTTP_NOT_FOUND, "unknown_user", "no such user");
    default:
        return reply_error(conn, r, MHD_HTTP_SERVICE_UNAVAILABLE, "unavailable",
                           "the database or the queue failed; nothing was written");
    }
}

/* ------------------------------------------------------------ callbacks */

static enum MHD_Result on_access(void *cls, struct MHD_Connection *conn, const char *url,
                                 const char *method, const char *version, const char *upload,
                                 size_t *upload_size, void **req_cls) {
    service *svc = cls;
    request *r = *req_cls;
    (void)version;
    if (!r) { /* headers received */
        r = calloc(1, sizeof *r);
        if (!r) return MHD_NO;
        wp_span_ctx in;
        const char *tp = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "traceparent");
        int continued = tp && wp_traceparent_parse(tp, &in) == 0;
        wp_trace_begin(&r->trace, svc->tracer, continued ? &in : NULL, svc->sample_every);
        r->root =
            wp_span_start(&r->trace, NULL, continued ? &in : NULL, "HTTP request", WP_KIND_SERVER);
        *req_cls = r;
        return MHD_YES;
    }
    if (*upload_size) { /* a piece of the body */
        size_t n = *upload_size;
        *upload_size = 0;
        if (r->too_big || r->len + n > WP_REQUEST_MAX) {
            r->too_big = 1;
            return MHD_YES; /* keep reading, drop the bytes, answer 413 */
        }
        char *grown = realloc(r->body, r->len + n);
        if (!grown) return MHD_NO;
        memcpy(grown + r->len, upload, n);
        r->body = grown;
        r->len += n;
        return MHD_YES;
    }
    return answer(svc, conn, r, url, method);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **req_cls,
                         enum MHD_RequestTerminationCode toe) {
    service *svc = cls;
    request *r = *req_cls;
    (void)conn;
    if (!r) return;
    wp_span_end(r->root);
    wp_span_str(r->root, "http.request.method", "POST");
    wp_span_int(r->root, "http.response.status_code", r->status);
    if (toe != MHD_REQUEST_TERMINATED_COMPLETED_OK) r->root->error = 1;
    wp_trace_flush(&r->trace, svc->tracer);
    free(r->body);
    free(r);
    *req_cls = NULL;
}

/* ------------------------------------------------------------ main */

static void usage(void) {
    fprintf(stderr, "usage: writepath serve --db PATH [--mode naive|async] [--queue URL]\n"
                    "                       [--port N] [--pool N] [--push-ms N]\n"
                    "                       [--trace FILE] [--sample N]\n"
                    "  --mode    naive (default): everything before answering; async: insert,\n"
                    "            add a job, answer (run writepath_worker for the rest)\n"
                    "  --queue   job store URL (default sqlite:DB" WP_QUEUE_SUFFIX ")\n"
                    "  --port    TCP port on 127.0.0.1 (default 8080; 0 = any free port)\n"
                    "  --pool    database connections (default 10)\n"
                    "  --push-ms simulated push call (default 30)\n"
                    "  --trace   append spans as OTLP/JSON lines to FILE\n"
                    "  --sample  trace 1 in N requests without a sampled traceparent (default 1)\n"
                    "Prints \"port=N\" on stdout once it listens; stops on SIGTERM or SIGINT.\n");
}

int wp_serve_main(int argc, char **argv) {
    const char *db = NULL, *queue = NULL, *trace = NULL, *mode = "naive";
    long port = 8080, pool_size = 10, push_ms = 30, sample = 1;
    for (int i = 1; i < argc; i += 2) { /* every option takes a value */
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        long *num = !strcmp(a, "--port")      ? &port
                    : !strcmp(a, "--pool")    ? &pool_size
                    : !strcmp(a, "--push-ms") ? &push_ms
                    : !strcmp(a, "--sample")  ? &sample
                                              : NULL;
        const char **str = !strcmp(a, "--db")      ? &db
                           : !strcmp(a, "--queue") ? &queue
                           : !strcmp(a, "--trace") ? &trace
                           : !strcmp(a, "--mode")  ? &mode
                                                   : NULL;
        if ((!num && !str) || !v) {
            usage();
            return 2;
        }
        if (num) {
            char *end;
            *num = strtol(v, &end, 10);
            if (*end || *num < 0 || *num > 65535) {
                usage();
                return 2;
            }
        } else {
            *str = v;
        }
    }
    int async = !strcmp(mode, "async");
    if (!db || (!async && strcmp(mode, "naive")) || pool_size < 1 || pool_size > 1000 ||
        sample < 1) {
        usage();
        return 2;
    }

    service svc = {.async = async, .push_ms = (unsigned)push_ms, .sample_every = (unsigned)sample};
    char *default_queue = NULL;
    struct MHD_Daemon *d = NULL;
    int rc = 1;
    if (wp_db_init(db) || wp_dbpool_open(&svc.pool, db, (unsigned)pool_size)) goto out;
    if (trace && wp_tracer_open(&svc.tracer, trace, "writepath-app")) {
        perror("writepath: trace file");
        goto out;
    }
    if (async) {
        if (!queue) queue = default_queue = wp_default_queue_url(db);
        char err[256] = "";
        int e = queue ? ln_jobs_open_ex(&svc.jobs, queue, NULL, err, sizeof err) : LN_ENOMEM;
        if (e) {
            fprintf(stderr, "writepath: cannot open queue %s: %s%s%s\n", queue ? queue : "",
                    ln_strerror(e), *err ? ": " : "", err);
            goto out;
        }
        if (wp_enqueuer_create(&svc.enqueuer, svc.jobs, WP_QUEUE, WP_MAX_BATCH)) goto out;
    }

    /* SIGTERM/SIGINT are blocked in every thread and taken by sigwait below;
     * the HTTP threads inherit the mask. */
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    signal(SIGPIPE, SIG_IGN);

    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
                             MHD_USE_AUTO | MHD_USE_ERROR_LOG,
                         0, NULL, NULL, on_access, &svc, MHD_OPTION_SOCK_ADDR, &addr,
                         MHD_OPTION_NOTIFY_COMPLETED, on_completed, &svc,
                         MHD_OPTION_CONNECTION_TIMEOUT, 60u, MHD_OPTION_END);
    if (!d) {
        fprintf(stderr, "writepath: cannot listen on 127.0.0.1:%ld\n", port);
        goto out;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    printf("port=%u\n", info ? (unsigned)info->port : (unsigned)port);
    fflush(stdout);
    fprintf(stderr, "writepath: %s mode on 127.0.0.1:%u, pool %ld%s%s\n", mode,
            info ? (unsigned)info->port : (unsigned)port, pool_size, async ? ", queue " : "",
            async ? queue : "");

    int sig;
    sigwait(&stop, &sig);
    fprintf(stderr, "writepath: %s, stopping\n", sig == SIGTERM ? "SIGTERM" : "SIGINT");
    rc = 0;
out:
    if (d) MHD_stop_daemon(d); /* closes connections, joins their threads */
    wp_enqueuer_destroy(svc.enqueuer);
    ln_jobs_close(svc.jobs);
    wp_dbpool_close(svc.pool);
    wp_tracer_close(svc.tracer);
    free(default_queue);
    return rc;
}
