/* dash_http.c - the HTTP side of `lanes dash`, on libmicrohttpd (which
 * parses HTTP; this file only routes): the embedded page, /metrics, the
 * JSON API (dash_api.c), and the access rules of docs/dash.md:
 *  - writes are POSTs; --read-only refuses each (403);
 *  - with a token (--token-file) a write needs it, in "Authorization:
 *    Bearer T" or "X-Lanes-Token: T" (401 without it); off loopback,
 *    reads of /api and /metrics need it too;
 *  - on loopback without a token a write needs the header X-Lanes-Dash
 *    (any value), which a page of another site cannot send without a CORS
 *    preflight this server never grants (other local users can: the
 *    token keeps them out);
 *  - on loopback every request's Host header must name this dashboard
 *    (host_ok: no DNS rebinding), else 403 before any handler runs;
 *  - a connection that came while the server was full (dash_conn.c) is
 *    answered 503 and closed.
 * A request's body (at most CLI_DASH_BODY_MAX bytes, else 413) is handed
 * to the API, which reads it only for a job's new data.
 * Every error is JSON. Runs on libmicrohttpd's one internal thread
 * (dash.h). */
#include "dash.h"
#include "dash_reply.h"
#include "dash_health.h"
#include "dash_conn.h"

#include <microhttpd.h>

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>

#define PATH_MAX_LEN 16384 /* a job id of ~5000 bytes, each byte escaped */
#define ARGS_MAX 8

/* A request's query arguments, unescaped on first use (the daemon's
 * unescape callback leaves the raw text, so a '/' escaped inside a queue
 * name stays inside its path segment). */
typedef struct req_args {
    struct MHD_Connection *conn;
    char buf[ARGS_MAX][PATH_MAX_LEN];
    int used;
} req_args;

static const char *get_arg(void *ctx, const char *name) {
    req_args *a = ctx;
    const char *raw = MHD_lookup_connection_value(a->conn, MHD_GET_ARGUMENT_KIND, name);
    if (raw == NULL || a->used == ARGS_MAX || strlen(raw) >= PATH_MAX_LEN) return NULL;
    char *b = a->buf[a->used++];
    strcpy(b, raw);
    size_t n = MHD_http_unescape(b);
    return strlen(b) == n ? b : NULL; /* an escaped NUL: treat as absent */
}

static size_t keep_escaped(void *cls, struct MHD_Connection *c, char *s) {
    (void)cls;
    (void)c;
    return strlen(s);
}

/* ------------------------------------------------------------- replies */

static void common_headers(struct MHD_Response *resp, const char *type) {
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(resp, "Referrer-Policy", "no-referrer");
    MHD_add_response_header(resp, "Cache-Control", "no-store");
}

static enum MHD_Result send_text(struct MHD_Connection *conn, unsigned status, const char *type,
                                 char *text, size_t len) {
    struct MHD_Response *resp = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
    if (resp == NULL) {
        free(text);
        return MHD_NO;
    }
    common_headers(resp, type);
    if (cli_dash_guard_over(conn)) { /* came while full: this is its one answer */
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
        MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, "1");
    }
    enum MHD_Result ret = MHD_queue_response(conn, status, resp);
    MHD_destroy_response(resp);
    return ret;
}

static enum MHD_Result send_json(struct MHD_Connection *conn, cli_dash_reply r) {
    char *text = r.body != NULL ? json_dumps(r.body, JSON_COMPACT) : NULL;
    json_decref(r.body);
    if (text == NULL) {
        r.status = 500;
        text = strdup("{\"error\":{\"code\":\"internal\",\"message\":\"out of memory\"}}");
        if (text == NULL) return MHD_NO;
    }
    size_t len = strlen(text);
    return send_text(conn, r.status, "application/json", text, len);
}

static enum MHD_Result send_error(struct MHD_Connection *conn, unsigned status, const char *code,
                                  const char *msg) {
    return send_json(conn, cli_dash_error(status, code, msg));
}

static enum MHD_Result send_asset(struct MHD_Connection *conn, const cli_dash_asset *a) {
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(a->size, (void *)a->data, MHD_RESPMEM_PERSISTENT);
    if (resp == NULL) return MHD_NO;
    common_headers(resp, a->type);
    MHD_add_response_header(resp, "Content-Security-Policy",
                            "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'");
    MHD_add_response_header(resp, "X-Frame-Options", "DENY");
    enum MHD_Result ret = MHD_queue_response(conn, MHD_HTTP_OK, resp);
    MHD_destroy_response(resp);
    return ret;
}

/* -------------------------------------------------------- access rules */

/* Compare without an early exit, so timing tells nothing of the token. */
static int same_token(const char *given, const char *token) {
    size_t lg = strlen(given), lt = strlen(token);
    unsigned char diff = lg != lt;
    for (size_t i = 0; i < lt; i++) diff |= (unsigned char)(token[i] ^ given[i < lg ? i : 0]);
    return diff == 0 && lg > 0;
}

static int has_token(cli_dash *d, struct MHD_Connection *conn) {
    if (d->token[0] == '\0') return 0;
    const char *h = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "X-Lanes-Token");
    if (h != NULL && same_token(h, d->token)) return 1;
    h = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
    return h != NULL && strncasecmp(h, "Bearer ", 7) == 0 && same_token(h + 7, d->token);
}

int cli_dash_split_host(const char *h, char *name, size_t size, unsigned *port) {
    const char *colon;
    if (h[0] == '[') {
        const char *end = strchr(h, ']');
        if (end == NULL || (end[1] != '\0' && end[1] != ':')) return -1;
        colon = end[1] == ':' ? end + 1 : NULL;
    } else {
        colon = strchr(h, ':');
        if (colon != NULL && strchr(colon + 1, ':') != NULL) return -1;
    }
    size_t n = colon != NULL ? (size_t)(colon - h) : strlen(h);
    if (n == 0 || n >= size) return -1;
    memcpy(name, h, n);
    name[n] = '\0';
    *port = 0;
    if (colon == NULL) return 0;
    size_t digits = strspn(colon + 1, "0123456789");
    if (digits == 0 || digits > 5 || colon[1 + digits] != '\0') return -1;
    unsigned long p = strtoul(colon + 1, NULL, 10);
    if (p == 0 || p > 65535) return -1;
    *port = (unsigned)p;
    return 0;
}

/* name:port (port 0: none given) is want:want_port (want_port 0: any). */
static int host_is(const char *name, unsigned port, const char *want, unsigned want_port) {
    if (strcasecmp(name, want) != 0) return 0;
    return want_port == 0 || port == want_port || (port == 0 && want_port == 80);
}

/* The Host header names this dashboard (docs/dash.md, "Access and
 * limits"): on loopback 127.0.0.1, localhost, [::1] or the listening
 * address, with the bound port; or a name of --allow-host. Off loopback
 * any Host passes unless --allow-host was given. No DNS rebinding: a name
 * of the attacker's that resolves to 127.0.0.1 is none of these. */
static int host_ok(cli_dash *d, struct MHD_Connection *conn) {
    if (!d->loopback && d->nallow == 0) return 1;
    const char *h = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
    char name[256], want[256];
    unsigned port, want_port;
    if (h == NULL || cli_dash_split_host(h, name, sizeof name, &port) != 0) return 0;
    for (size_t i = 0; i < d->nallow; i++)
        if (cli_dash_split_host(d->allow[i], want, sizeof want, &want_port) == 0 &&
            host_is(name, port, want, want_port))
            return 1;
    unsigned bound = d->port; /* 0 for the moment before it is known */
    if (bound != 0 && host_is(name, port, d->self_host, bound)) return 1;
    static const char *const loopback[] = {"127.0.0.1", "localhost", "[::1]"};
    for (size_t i = 0; bound != 0 && d->loopback && i < sizeof loopback / sizeof loopback[0]; i++)
        if (host_is(name, port, loopback[i], bound)) return 1;
    return 0;
}

/* 0 if the request may go on, else 1 and the refusal was sent (*ret;
 * ret NULL: only say whether it would be refused). */
static int refuse(cli_dash *d, struct MHD_Connection *conn, int write, enum MHD_Result *ret) {
    if (write && d->read_only) {
        if (ret)
            *ret =
                send_error(conn, 403, "read_only", "this dashboard was started with --read-only");
        return 1;
    }
    int need_token = d->token[0] != '\0' && (write || !d->loopback);
    if (need_token && !has_token(d, conn)) {
        if (ret)
            *ret = send_error(conn, 401, "unauthorized",
                              "this needs the dashboard's token (Authorization: Bearer TOKEN)");
        return 1;
    }
    if (write && d->token[0] == '\0' &&
        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "X-Lanes-Dash") == NULL) {
        if (ret)
            *ret = send_error(conn, 403, "forbidden", "a write needs the header X-Lanes-Dash: 1");
        return 1;
    }
    return 0;
}

/* ------------------------------------------------------------- routing */

/* Split "/api/a/b%2Fc" into unescaped segments {"a", "b/c"} in buf. */
static int split_api(const char *url, char *buf, cli_dash_req *req) {
    if (strlen(url) >= PATH_MAX_LEN) return -1;
    strcpy(buf, url + strlen("/api/"));
    req->nseg = 0;
    for (char *p = buf, *next; p != NULL; p = next) {
        next = strchr(p, '/');
        if (next != NULL) *next++ = '\0';
        if (*p == '\0' && next == NULL) break; /* a trailing '/' */
        if (*p == '\0' || req->nseg == (int)(sizeof req->seg / sizeof req->seg[0])) return -1;
        size_t n = MHD_http_unescape(p);
        if (strlen(p) != n) return -1; /* an escaped NUL */
        req->seg[req->nseg++] = p;
    }
    return 0;
}

/* A request's body, gathered as libmicrohttpd hands it in (one per
 * connection's request; freed when the request completes). At most
 * CLI_DASH_BODY_MAX bytes are kept: past them, over is set and the rest
 * is read and dropped, so that the answer is a JSON 413, not a reset. */
typedef struct req_body {
    char *buf;
    size_t len, cap;
    int over;
    int busy; /* the bodies held at once would pass bodies_max(): 503 */
    int drop; /* not an API POST, or one to be refused: keep nothing */
} req_body;

/* The bytes all requests' bodies hold at once (their buffers' capacity).
 * Only libmicrohttpd's one thread touches it (dash.h), so no atomics. A
 * body of CLI_DASH_BODY_MAX on each of --max-connections connections
 * would be gigabytes: past bodies_max() a body is dropped and its request
 * answered 503, as a full server answers. */
static size_t bodies_held;

static size_t bodies_max(void) {
    size_t floor = (size_t)64 << 20;
    return CLI_DASH_BODY_MAX > floor / 2 ? 2 * CLI_DASH_BODY_MAX : floor;
}

static int body_add(req_body *b, const char *data, size_t n) {
    if (b->drop || b->over || b->busy || n == 0) return 0;
    if (b->len + n > CLI_DASH_BODY_MAX) {
        b->over = 1;
        return 0;
    }
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n + 1) cap *= 2;
        if (bodies_held - b->cap + cap > bodies_max()) {
            b->busy = 1;
            return 0;
        }
        char *nb = realloc(b->buf, cap);
        if (nb == NULL) return -1;
        bodies_held += cap - b->cap;
        b->buf = nb;
        b->cap = cap;
    }
    memcpy(b->buf + b->len, data, n);
    b->len += n;
    b->buf[b->len] = '\0';
    return 0;
}

static void request_done(void *cls, struct MHD_Connection *conn, void **state,
                         enum MHD_RequestTerminationCode code) {
    cli_dash *d = cls;
    (void)code;
    cli_dash_guard_done(d->guard, conn);
    req_body *b = *state;
    if (b == NULL) return;
    bodies_held -= b->cap;
    free(b->buf);
    free(b);
    *state = NULL;
}

static enum MHD_Result api(cli_dash *d, struct MHD_Connection *conn, const char *url,
                           const char *method, const req_body *body) {
    static req_args args; /* big: not on the stack (one thread: dash.h) */
    static char path[PATH_MAX_LEN];
    cli_dash_req req = {.method = method, .arg = get_arg, .arg_ctx = &args};
    args.conn = conn;
    args.used = 0;
    if (split_api(url, path, &req) != 0) return send_error(conn, 404, "not_found", "bad path");
    enum MHD_Result ret;
    if (refuse(d, conn, cli_dash_api_is_write(&req), &ret)) return ret;
    if (body->over)
        return send_error(conn, 413, "too_large",
                          "the request's body is larger than the store's data limit");
    if (body->busy)
        return send_error(conn, 503, "busy",
                          "the dashboard holds as many request bodies as it keeps at once: "
                          "try again");
    req.body = body->buf != NULL ? body->buf : "";
    req.body_len = body->len;
    return send_json(conn, cli_dash_api(d, &req));
}

static enum MHD_Result static_file(struct MHD_Connection *conn, const char *url) {
    if (strcmp(url, "/") == 0) url = "/index.html";
    for (const cli_dash_asset *a = cli_dash_assets; a->path != NULL; a++)
        if (strcmp(a->path, url) == 0) return send_asset(conn, a);
    return send_error(conn, 404, "not_found", "no such page");
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url,
                              const char *method, const char *version, const char *upload,
                              size_t *upload_size, void **state) {
    cli_dash *d = cls;
    (void)version;
    if (*state == NULL) { /* headers only so far: answer once the body is in */
        req_body *b = calloc(1, sizeof(req_body));
        if (b == NULL) return MHD_NO;
        b->drop = strncmp(url, "/api/", 5) != 0 || strcmp(method, "POST") != 0 ||
                  cli_dash_guard_over(conn) || !host_ok(d, conn) || refuse(d, conn, 1, NULL);
        *state = b;
        return MHD_YES;
    }
    req_body *body = *state;
    if (*upload_size != 0) { /* the body (only the API's POSTs read it) */
        if (body_add(body, upload, *upload_size) != 0) return MHD_NO;
        *upload_size = 0;
        return MHD_YES;
    }
    cli_dash_guard_answering(d->guard, conn); /* the request is in: its answer's deadline */
    if (cli_dash_guard_over(conn))
        return send_error(conn, 503, "busy",
                          "the dashboard has as many connections as it serves "
                          "(--max-connections): try again");
    if (strcmp(url, "/healthz") == 0 &&
        (strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0)) {
        /* Before the Host check: a load balancer or systemd probe names any
         * host, and the answer tells nothing but up or down. */
        json_t *health = NULL;
        unsigned status = cli_dash_health(d, &health);
        return send_json(conn, (cli_dash_reply){status, health});
    }
    if (!host_ok(d, conn))
        return send_error(conn, 403, "bad_host",
                          "the Host header names no address of this dashboard (see --allow-host)");
    int get = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
    if (strncmp(url, "/api/", 5) == 0) return api(d, conn, url, method, body);
    if (!get) return send_error(conn, 405, "method_not_allowed", "only GET here");
    if (strcmp(url, "/metrics") == 0) {
        enum MHD_Result ret;
        if (refuse(d, conn, 0, &ret)) return ret;
        size_t len = 0;
        char *text = cli_dash_metrics(d, &len);
        if (text == NULL) return send_error(conn, 500, "internal", "out of memory");
        return send_text(conn, 200, "text/plain; version=0.0.4; charset=utf-8", text, len);
    }
    return static_file(conn, url);
}

/* ------------------------------------------------------------- daemon */

static int is_loopback(const struct sockaddr *sa) {
    if (sa->sa_family == AF_INET)
        return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
    if (sa->sa_family == AF_INET6)
        return IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)sa)->sin6_addr);
    return 0;
}

/* Descriptors for the connections: the soft RLIMIT_NOFILE raised as far
 * as the hard one allows; d->max_conns lowered (with a note) if it still
 * falls short. -1 if not even a few connections fit. */
#define FDS_KEPT 64 /* the store's, the listening socket's, stdio's */
static int fit_fd_limit(cli_dash *d) {
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return 0;
    rlim_t need = (rlim_t)d->max_conns + cli_dash_conns_margin(d->max_conns) + FDS_KEPT;
    if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < need) {
        rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > need ? need : rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
        getrlimit(RLIMIT_NOFILE, &rl);
    }
    if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= need) return 0;
    rlim_t avail = rl.rlim_cur > FDS_KEPT ? rl.rlim_cur - FDS_KEPT : 0;
    if (avail < 16 + CLI_DASH_CONNS_MARGIN_MIN) {
        fprintf(stderr, "lanes dash: too few file descriptors (ulimit -n %llu)\n",
                (unsigned long long)rl.rlim_cur);
        return -1;
    }
    unsigned fit =
        (unsigned)(avail >= 2 * CLI_DASH_CONNS_MARGIN_MIN ? avail / 2
                                                          : avail - CLI_DASH_CONNS_MARGIN_MIN);
    fprintf(stderr, "lanes dash: --max-connections %u lowered to %u (ulimit -n %llu)\n",
            d->max_conns, fit, (unsigned long long)rl.rlim_cur);
    d->max_conns = fit;
    return 0;
}

/* The daemon on sa, with the connection guard (dash_conn.c). */
static struct MHD_Daemon *start_daemon(cli_dash *d, struct sockaddr_storage *sa, int v6) {
    if (fit_fd_limit(d) != 0) return NULL;
    unsigned slots = d->max_conns + cli_dash_conns_margin(d->max_conns);
    d->guard = cli_dash_guard_new(d->max_conns, slots, d->request_timeout_s);
    if (d->guard == NULL) {
        fprintf(stderr, "lanes dash: out of memory\n");
        return NULL;
    }
    /* Off loopback, one client address holds at most PER_IP_MAX of them
     * (on loopback every client shares 127.0.0.1: the deadline and the
     * 503 keep it served). */
    unsigned per_ip = d->loopback ? 0 : CLI_DASH_PER_IP_MAX;
    unsigned flags = MHD_USE_POLL_INTERNAL_THREAD | (v6 ? MHD_USE_IPv6 : 0);
    struct MHD_Daemon *daemon = MHD_start_daemon(
        flags, 0, NULL, NULL, handle, d, MHD_OPTION_SOCK_ADDR, sa, MHD_OPTION_UNESCAPE_CALLBACK,
        keep_escaped, NULL, MHD_OPTION_NOTIFY_COMPLETED, request_done, d,
        MHD_OPTION_NOTIFY_CONNECTION, cli_dash_guard_notify, d->guard,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)30, MHD_OPTION_CONNECTION_LIMIT, slots,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_ip, MHD_OPTION_END);
    if (daemon == NULL) {
        cli_dash_guard_free(d->guard);
        d->guard = NULL;
    }
    return daemon;
}

void *cli_dash_http_start(cli_dash *d, const char *host, unsigned port, unsigned *bound_port) {
    struct addrinfo hints = {
        .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE};
    struct addrinfo *ai = NULL;
    char service[16];
    snprintf(service, sizeof service, "%u", port);
    int rc = getaddrinfo(host, service, &hints, &ai);
    if (rc != 0 || ai == NULL) {
        fprintf(stderr, "lanes dash: cannot resolve '%s': %s\n", host, gai_strerror(rc));
        return NULL;
    }
    struct sockaddr_storage sa;
    memcpy(&sa, ai->ai_addr, ai->ai_addrlen);
    int v6 = ai->ai_family == AF_INET6;
    freeaddrinfo(ai);
    d->loopback = is_loopback((struct sockaddr *)&sa);
    if (!d->loopback && d->token[0] == '\0') {
        fprintf(stderr,
                "lanes dash: '%s' is not a loopback address: give --token-file "
                "(anyone who reaches it could change the queues)\n",
                host);
        return NULL;
    }
    char addr[INET6_ADDRSTRLEN];
    const void *in = v6 ? (const void *)&((struct sockaddr_in6 *)&sa)->sin6_addr
                        : (const void *)&((struct sockaddr_in *)&sa)->sin_addr;
    if (inet_ntop(v6 ? AF_INET6 : AF_INET, in, addr, sizeof addr) == NULL) addr[0] = '\0';
    snprintf(d->self_host, sizeof d->self_host, v6 ? "[%s]" : "%s", addr);
    struct MHD_Daemon *daemon = start_daemon(d, &sa, v6);
    if (daemon == NULL) {
        fprintf(stderr,
                "lanes dash: cannot listen on %s:%u (in use, or not an address "
                "of this machine)\n",
                host, port);
        return NULL;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    *bound_port = info != NULL ? info->port : port;
    d->port = *bound_port;
    return daemon;
}

void cli_dash_http_stop(cli_dash *d, void *daemon) {
    MHD_stop_daemon(daemon);
    cli_dash_guard_free(d->guard);
    d->guard = NULL;
}
