/* serve.c - the write-path HTTP service (docs/writepath.md): POST /comment
 * and POST /like, in naive or async mode.
 *
 * DESIGN: every served connection has a thread of its own (gate.h; like a
 * Node process keeps every virtual user's request in flight at once), so a
 * request that waits blocks only its own connection. Every request takes a
 * database connection from a pool of 10 (the original Node.js service's
 * mysql2 pool) for its statements:
 *
 *   naive  INSERT, then the follow-up transaction (count UPDATE, notify
 *          SELECT, notification INSERTs) and the 30 ms push, all while
 *          holding the pool connection; then the answer.
 *   async  INSERT with its outbox row (carrying the request's trace
 *          context) in one transaction, give the connection back, wake
 *          the outbox relay, answer. The relay thread adds the jobs of the
 *          committed outbox rows in batches and then deletes the rows
 *          (outbox.h); writepath_worker does the rest. The answer comes
 *          only once the write and its outbox row are committed, so the
 *          follow-up work can no longer be lost.
 *
 * The HTTP layer (http.h, over llhttp) calls on_request once per request
 * with the whole request, or with the error of a request it refused
 * (malformed, head or body too large, a Transfer-Encoding, another HTTP
 * version): every answer, also those, is the API's JSON with the trace id.
 * The request span ends once the answer is sent -- the response boundary
 * of the waterfall -- and the request's spans are written. A request's
 * state lives on its connection's thread. Shared state (pool, queue
 * handle, tracer) is thread-safe.
 */
#include "dbpool.h"
#include "gate.h"
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
#include <sys/resource.h>

typedef struct service {
    int async;
    unsigned push_ms;
    unsigned sample_every;
    wp_dbpool *pool;
    ln_jobs *jobs;
    wp_relay *relay; /* outbox rows -> jobs */
    wp_tracer *tracer;
} service;

typedef struct request {
    const char *body;
    size_t len;
    int status;
    wp_span *root;
    wp_trace trace;
} request;

/* ------------------------------------------------------------ responses */

/* The answer: status and JSON object (taken), sent by send_answer. */
static json_t *reply(request *r, int status, json_t *obj) {
    r->status = status;
    return obj;
}

static json_t *reply_error(request *r, int status, const char *code, const char *message) {
    r->root->error = status >= 500;
    return reply(r, status, json_pack("{s:s,s:s}", "error", code, "message", message));
}

/* Send obj (taken) with the request's trace id in it and its traceparent
 * in the headers. 0, or -1 when it could not be sent. */
static int send_answer(wp_http_conn *c, request *r, json_t *obj) {
    char tid[33], tp[WP_TRACEPARENT_LEN + 1];
    wp_hex(r->root->ctx.trace_id, 16, tid);
    if (obj) json_object_set_new(obj, "trace_id", json_string(tid));
    char *text = obj ? json_dumps(obj, JSON_COMPACT) : NULL;
    json_decref(obj);
    const char *body = text ? text : "{\"error\":\"unavailable\",\"message\":\"out of memory\"}";
    if (!text) { /* still an answer in the API's shape */
        r->status = 503;
        r->root->error = 1;
    }
    wp_traceparent_format(&r->root->ctx, tp);
    int rc = wp_http_respond(c, r->status, body, strlen(body), tp,
                             r->status == 405 ? "Allow: POST\r\n" : NULL);
    free(text);
    return rc;
}

/* ------------------------------------------------------------ the body */

/* Parse the JSON body into w. NULL on success, else the error message
 * (static) and *status. w->body points into *doc, which the caller frees. */
static const char *parse_body(const request *r, wp_kind kind, wp_write *w, json_t **doc,
                              int *status) {
    json_error_t err;
    *status = 400;
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

/* Do the write of w in the service's mode. WP_OK, WP_ALREADY or an error.
 * async: the outbox row carries the traceparent of a "queue.add" span
 * around its transaction, so the worker's span becomes that span's child. */
static int handle_write(service *svc, request *r, wp_write *w) {
    wp_span *acq = wp_span_start(&r->trace, r->root, NULL, "pool.acquire", WP_KIND_INTERNAL);
    wp_conn *conn = wp_dbpool_acquire(svc->pool);
    wp_span_end(acq);
    int rc, targets = 0;
    if (svc->async) {
        char tp[WP_TRACEPARENT_LEN + 1];
        wp_span *s = wp_span_start(&r->trace, r->root, NULL, "queue.add", WP_KIND_PRODUCER);
        wp_span_str(s, "messaging.system", "lanes");
        wp_span_str(s, "messaging.destination.name", WP_QUEUE);
        wp_span_str(s, "messaging.operation", "outbox");
        wp_traceparent_format(&s->ctx, tp);
        rc = wp_write_insert_outbox(conn, &r->trace, r->root, w, tp);
        s->error = rc < 0;
        wp_span_end(s);
        wp_dbpool_release(svc->pool, conn);
        if (rc == WP_OK) wp_relay_notify(svc->relay);
        return rc;
    }
    rc = wp_write_insert(conn, &r->trace, r->root, w);
    if (rc == WP_OK) rc = wp_write_followups(conn, &r->trace, r->root, w, &targets);
    if (rc == WP_OK) wp_write_push(&r->trace, r->root, svc->push_ms, targets);
    wp_dbpool_release(svc->pool, conn);
    return rc;
}

static json_t *answer(service *svc, request *r, const wp_http_request *q) {
    wp_kind kind;
    if (strcmp(q->url, "/comment") == 0) {
        kind = WP_COMMENT;
        r->root->name = "POST /comment";
    } else if (strcmp(q->url, "/like") == 0) {
        kind = WP_LIKE;
        r->root->name = "POST /like";
    } else {
        return reply_error(r, 404, "not_found", "no such endpoint");
    }
    if (strcmp(q->method, "POST") != 0)
        return reply_error(r, 405, "method_not_allowed", "use POST");
    wp_write w;
    json_t *doc;
    int status;
    const char *bad = parse_body(r, kind, &w, &doc, &status);
    if (bad) {
        json_decref(doc);
        return reply_error(r, status, "invalid_request", bad);
    }
    int rc = handle_write(svc, r, &w);
    json_decref(doc); /* w.body pointed into it */
    switch (rc) {
    case WP_OK:
        return reply(r, 201,
                     json_pack("{s:s,s:I,s:I,s:I,s:s}", "kind", wp_kind_name(kind), "id",
                               (json_int_t)w.id, "post_id", (json_int_t)w.post_id, "user_id",
                               (json_int_t)w.user_id, "mode", svc->async ? "async" : "naive"));
    case WP_ALREADY:
        return reply_error(r, 409, "already_liked", "the user already likes this post");
    case WP_ENOPOST:
        return reply_error(r, 404, "unknown_post", "no such post");
    case WP_ENOUSER:
        return reply_error(r, 404, "unknown_user", "no such user");
    default:
        return reply_error(r, 503, "unavailable", "the database failed; nothing was written");
    }
}

/* ------------------------------------------------------------ the handler */

/* One request (or the error of one the HTTP layer refused), on its
 * connection's thread: trace it, answer it, write its spans. */
static void on_request(void *cls, wp_http_conn *c, const wp_http_request *q) {
    service *svc = cls;
    request r = {.body = q->body, .len = q->body_len};
    wp_span_ctx in;
    int continued = q->traceparent && wp_traceparent_parse(q->traceparent, &in) == 0;
    wp_trace_begin(&r.trace, svc->tracer, continued ? &in : NULL, svc->sample_every);
    r.root = wp_span_start(&r.trace, NULL, continued ? &in : NULL, "HTTP request", WP_KIND_SERVER);
    json_t *obj =
        q->error ? reply_error(&r, q->error, q->error_code, q->error_message) : answer(svc, &r, q);
    if (send_answer(c, &r, obj)) r.root->error = 1;
    wp_span_end(r.root);
    wp_span_str(r.root, "http.request.method", *q->method ? q->method : "POST");
    wp_span_int(r.root, "http.response.status_code", r.status);
    wp_trace_flush(&r.trace, svc->tracer);
}

/* ------------------------------------------------------------ main */

typedef struct config {
    const char *db, *queue, *trace, *mode;
    long port, pool, push_ms, sample, max_conns, idle_s, request_s;
} config;

static void usage(void) {
    fprintf(stderr, "usage: writepath serve --db PATH [--mode naive|async] [--queue URL]\n"
                    "                       [--port N] [--pool N] [--push-ms N]\n"
                    "                       [--trace FILE] [--sample N] [--max-connections N]\n"
                    "                       [--idle-timeout S] [--request-timeout S]\n"
                    "  --mode    naive (default): everything before answering; async: insert,\n"
                    "            add a job, answer (run writepath_worker for the rest)\n"
                    "  --queue   job store URL (default sqlite:DB" WP_QUEUE_SUFFIX ")\n"
                    "  --port    TCP port on 127.0.0.1 (default 8080; 0 = any free port)\n"
                    "  --pool    database connections (default 10)\n"
                    "  --push-ms simulated push call (default 30)\n"
                    "  --trace   append spans as OTLP/JSON lines to FILE\n"
                    "  --sample  trace 1 in N requests without a sampled traceparent (default 1)\n"
                    "  --max-connections  open connections served (default 4096); when all are\n"
                    "            taken, the keep-alive connection idle the longest is closed\n"
                    "            for a new one; with none idle, a new one gets 503\n"
                    "            {\"error\":\"overloaded\"} at once\n"
                    "  --idle-timeout     close a connection idle this long (default 15 s;\n"
                    "            1 to 86400)\n"
                    "  --request-timeout  a request's head and body must arrive whole within\n"
                    "            this long (from the connect, or from its first byte on a\n"
                    "            keep-alive connection; default 10 s; 1 to 86400), else 408\n"
                    "Prints \"port=N\" on stdout once it listens; stops on SIGTERM or SIGINT.\n");
}

/* 0, or 2 (usage printed). */
static int parse_args(int argc, char **argv, config *c) {
    *c = (config){.mode = "naive",
                  .port = 8080,
                  .pool = 10,
                  .push_ms = 30,
                  .sample = 1,
                  .max_conns = 4096,
                  .idle_s = 15,
                  .request_s = 10};
    for (int i = 1; i < argc; i += 2) { /* every option takes a value */
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        long *num = !strcmp(a, "--port")              ? &c->port
                    : !strcmp(a, "--pool")            ? &c->pool
                    : !strcmp(a, "--push-ms")         ? &c->push_ms
                    : !strcmp(a, "--sample")          ? &c->sample
                    : !strcmp(a, "--max-connections") ? &c->max_conns
                    : !strcmp(a, "--idle-timeout")    ? &c->idle_s
                    : !strcmp(a, "--request-timeout") ? &c->request_s
                                                      : NULL;
        const char **str = !strcmp(a, "--db")      ? &c->db
                           : !strcmp(a, "--queue") ? &c->queue
                           : !strcmp(a, "--trace") ? &c->trace
                           : !strcmp(a, "--mode")  ? &c->mode
                                                   : NULL;
        char *end = NULL;
        if (num) *num = strtol(v ? v : "", &end, 10);
        long max = num == &c->idle_s || num == &c->request_s ? 86400 : 65535;
        if ((!num && !str) || !v || (num && (*end || *num < 0 || *num > max))) {
            usage();
            return 2;
        }
        if (str) *str = v;
    }
    if (c->db && (!strcmp(c->mode, "async") || !strcmp(c->mode, "naive")) && c->pool >= 1 &&
        c->pool <= 1000 && c->sample >= 1 && c->max_conns >= 1 && c->idle_s >= 1 &&
        c->request_s >= 1)
        return 0;
    usage();
    return 2;
}

/* Raise the open-file limit to its hard limit if the connections need it,
 * and split the descriptors there are between the served connections (up
 * to o->max_conns) and those answered 503 (up to WP_GATE_REJECT_MAX); 256 stay
 * for the databases, the queue and stdio. */
static void fit_fd_limit(wp_gate_opts *o) {
    struct rlimit rl;
    o->reject_max = WP_GATE_REJECT_MAX;
    if (getrlimit(RLIMIT_NOFILE, &rl)) return;
    rlim_t need = (rlim_t)o->max_conns + WP_GATE_REJECT_MAX + 256;
    if (rl.rlim_cur < need && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max < need ? rl.rlim_max : need;
        setrlimit(RLIMIT_NOFILE, &rl);
        getrlimit(RLIMIT_NOFILE, &rl);
    }
    if (rl.rlim_cur >= need) return;
    unsigned avail = rl.rlim_cur > 256 + 16 ? (unsigned)(rl.rlim_cur - 256) : 16;
    unsigned want = o->max_conns;
    if (o->max_conns > avail * 3 / 4) o->max_conns = avail * 3 / 4;
    o->reject_max = avail - o->max_conns;
    fprintf(stderr, "writepath: open-file limit %llu: serving %u connections, not %u\n",
            (unsigned long long)rl.rlim_cur, o->max_conns, want);
}

/* The async mode's queue and outbox relay. The relay first adds the jobs
 * of the outbox rows an earlier run left (killed before it relayed them),
 * before the service listens. 0, or -1 (printed). */
static int start_async(service *svc, const config *c, const char *queue) {
    char err[256] = "";
    int e = ln_jobs_open_ex(&svc->jobs, queue, NULL, err, sizeof err);
    if (e) {
        fprintf(stderr, "writepath: cannot open queue %s: %s%s%s\n", queue, ln_strerror(e),
                *err ? ": " : "", err);
        return -1;
    }
    if (wp_relay_open(&svc->relay, c->db, svc->jobs, WP_QUEUE)) return -1;
    long n = wp_relay_drain(svc->relay);
    if (n > 0) fprintf(stderr, "writepath: outbox: %ld jobs of an earlier run added\n", n);
    /* n < 0 was printed; the relay's thread tries again. */
    return wp_relay_start(svc->relay);
}

int wp_serve_main(int argc, char **argv) {
    config c;
    if (parse_args(argc, argv, &c)) return 2;
    int async = !strcmp(c.mode, "async");
    service svc = {
        .async = async, .push_ms = (unsigned)c.push_ms, .sample_every = (unsigned)c.sample};
    char *default_queue = NULL;
    const char *queue = c.queue;
    wp_gate *gate = NULL;
    int rc = 1;
    /* SIGTERM/SIGINT are blocked in every thread and taken by sigwait below:
     * block them before any thread starts (the relay's, the HTTP ones), so
     * that every thread inherits the mask. */
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    signal(SIGPIPE, SIG_IGN);
    if (wp_db_init(c.db) || wp_dbpool_open(&svc.pool, c.db, (unsigned)c.pool)) goto out;
    if (c.trace && wp_tracer_open(&svc.tracer, c.trace, "writepath-app")) {
        perror("writepath: trace file");
        goto out;
    }
    if (async) {
        if (!queue) queue = default_queue = wp_default_queue_url(c.db);
        if (!queue || start_async(&svc, &c, queue)) goto out;
    }

    wp_gate_opts go = {.port = (uint16_t)c.port,
                       .max_conns = (unsigned)c.max_conns,
                       .idle_timeout_s = (unsigned)c.idle_s,
                       .request_timeout_s = (unsigned)c.request_s,
                       .handler = on_request,
                       .cls = &svc};
    fit_fd_limit(&go);
    if (wp_gate_start(&gate, &go)) goto out;
    printf("port=%u\n", (unsigned)wp_gate_port(gate));
    fflush(stdout);
    fprintf(stderr, "writepath: %s mode on 127.0.0.1:%u, pool %ld, %u connections%s%s\n", c.mode,
            (unsigned)wp_gate_port(gate), c.pool, go.max_conns, async ? ", queue " : "",
            async ? queue : "");

    int sig;
    sigwait(&stop, &sig);
    fprintf(stderr, "writepath: %s, stopping\n", sig == SIGTERM ? "SIGTERM" : "SIGINT");
    rc = 0;
out:
    wp_gate_stop(gate);        /* ends connections, waits for their threads */
    wp_relay_close(svc.relay); /* relays what the last requests committed */
    ln_jobs_close(svc.jobs);
    wp_dbpool_close(svc.pool);
    wp_tracer_close(svc.tracer);
    free(default_queue);
    return rc;
}
