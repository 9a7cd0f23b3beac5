/* worker_metrics.c - `lanes worker --metrics ADDR`: the worker's counters,
 * its run-time histogram and its pool's lane statistics in the Prometheus
 * text format (version 0.0.4) at GET /metrics, served by libmicrohttpd from
 * a thread of its own (docs/cli.md lists the metrics). */
#include "worker.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

const double cli_whist_bounds[CLI_WHIST_BUCKETS] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                                    1,     2.5,  5,     10,   30,  60,   300};

void cli_whist_observe(cli_whist *h, uint64_t ns) {
    double s = (double)ns / 1e9;
    size_t i = 0;
    while (i < CLI_WHIST_BUCKETS && s > cli_whist_bounds[i]) i++;
    /* Relaxed: each counter is read on its own (worker.h). */
    atomic_fetch_add_explicit(&h->bucket[i], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&h->sum_ns, ns, memory_order_relaxed);
    atomic_fetch_add_explicit(&h->count, 1, memory_order_relaxed);
}

struct cli_wmetrics {
    struct MHD_Daemon *d;
    char queue[512];        /* as a label value: escaped */
    const char *queue_name; /* as given */
    ln_worker *w;
    ln_pool *pool;
    cli_whist *h;
};

/* s as a Prometheus label value: backslash, double quote and newline
 * escaped. */
static void label_value(char *out, size_t size, const char *s) {
    size_t n = 0;
    for (; *s && n + 3 < size; s++) {
        if (*s == '\\' || *s == '"' || *s == '\n') {
            out[n++] = '\\';
            out[n++] = *s == '\n' ? 'n' : *s;
        } else {
            out[n++] = *s;
        }
    }
    out[n] = '\0';
}

/* lanes_build_info: 1, with the version and the commit built (a define
 * the build may give, LANES_BUILD_COMMIT; else "unknown"). */
static void put_build_info(FILE *f) {
#ifdef LANES_BUILD_COMMIT
    const char *commit = LANES_BUILD_COMMIT;
#else
    const char *commit = "unknown";
#endif
    fprintf(f,
            "# HELP lanes_build_info The lanes build: version and commit, value 1.\n"
            "# TYPE lanes_build_info gauge\n"
            "lanes_build_info{version=\"%d.%d.%d\",commit=\"%s\"} 1\n",
            LN_VERSION_MAJOR, LN_VERSION_MINOR, LN_VERSION_PATCH, commit);
}

static void put_counters(FILE *f, const cli_wmetrics *m) {
    ln_worker_stats st;
    ln_worker_get_stats(m->w, &st);
    fprintf(f, "# HELP lanes_worker_jobs_total Runs this worker recorded, by outcome.\n"
               "# TYPE lanes_worker_jobs_total counter\n");
    const struct {
        const char *outcome;
        uint64_t n;
    } rows[] = {{"completed", st.completed},
                {"failed", st.failed},
                {"retried", st.retried},
                {"stale", st.stale},
                {"waited", st.waited}}; /* moved to waiting-children (exit 78) */
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        fprintf(f, "lanes_worker_jobs_total{queue=\"%s\",outcome=\"%s\"} %llu\n", m->queue,
                rows[i].outcome, (unsigned long long)rows[i].n);
    fprintf(f,
            "# HELP lanes_worker_jobs_taken_total Jobs this worker took from the store.\n"
            "# TYPE lanes_worker_jobs_taken_total counter\n"
            "lanes_worker_jobs_taken_total{queue=\"%s\"} %llu\n"
            "# HELP lanes_worker_store_lost_total Times the worker lost its store (and "
            "retried it).\n"
            "# TYPE lanes_worker_store_lost_total counter\n"
            "lanes_worker_store_lost_total{queue=\"%s\"} %llu\n",
            m->queue, (unsigned long long)st.taken, m->queue, (unsigned long long)st.store_lost);
}

static void put_histogram(FILE *f, const cli_wmetrics *m) {
    cli_whist *h = m->h;
    fprintf(f, "# HELP lanes_worker_job_duration_seconds How long runs took, start to exit.\n"
               "# TYPE lanes_worker_job_duration_seconds histogram\n");
    uint64_t cum = 0;
    for (size_t i = 0; i <= CLI_WHIST_BUCKETS; i++) {
        cum += atomic_load_explicit(&h->bucket[i], memory_order_relaxed);
        char le[32];
        if (i < CLI_WHIST_BUCKETS)
            snprintf(le, sizeof le, "%g", cli_whist_bounds[i]);
        else
            snprintf(le, sizeof le, "+Inf");
        fprintf(f, "lanes_worker_job_duration_seconds_bucket{queue=\"%s\",le=\"%s\"} %llu\n",
                m->queue, le, (unsigned long long)cum);
    }
    /* The count is the +Inf bucket, so that the two always agree. */
    uint64_t sum = atomic_load_explicit(&h->sum_ns, memory_order_relaxed);
    fprintf(f,
            "lanes_worker_job_duration_seconds_sum{queue=\"%s\"} %.9f\n"
            "lanes_worker_job_duration_seconds_count{queue=\"%s\"} %llu\n",
            m->queue, (double)sum / 1e9, m->queue, (unsigned long long)cum);
}

/* One gauge family over every lane of the pool. */
static void put_lane_gauge(FILE *f, const ln_lane_stats *ls, int n, const char *name,
                           const char *help, int which) {
    fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, which <= 2 ? "gauge" : "summary");
    for (int i = 0; i < n; i++) {
        char lane[80];
        label_value(lane, sizeof lane, ls[i].name);
        if (which <= 2) {
            unsigned long long v = which == 0   ? ls[i].threads
                                   : which == 1 ? ls[i].busy
                                                : (unsigned long long)ls[i].queued;
            fprintf(f, "%s{lane=\"%s\"} %llu\n", name, lane, v);
            continue;
        }
        /* A summary: quantiles (1 = the max) and the _sum and _count of
         * the tasks timed. */
        const ln_latency *l = which == 3 ? &ls[i].wait : &ls[i].run;
        const struct {
            const char *q;
            uint64_t ns;
        } qs[] = {{"0.5", l->p50_ns}, {"0.9", l->p90_ns}, {"0.99", l->p99_ns}, {"1", l->max_ns}};
        for (size_t k = 0; k < sizeof qs / sizeof qs[0]; k++)
            fprintf(f, "%s{lane=\"%s\",quantile=\"%s\"} %.9f\n", name, lane, qs[k].q,
                    (double)qs[k].ns / 1e9);
        fprintf(f, "%s_sum{lane=\"%s\"} %.9f\n%s_count{lane=\"%s\"} %llu\n", name, lane,
                (double)l->mean_ns * (double)l->count / 1e9, name, lane,
                (unsigned long long)l->count);
    }
}

static void put_pool(FILE *f, const cli_wmetrics *m) {
    ln_lane_stats ls[LN_MAX_LANES];
    int n = 0;
    for (int i = 0; i < ln_pool_lanes(m->pool) && n < LN_MAX_LANES; i++)
        if (ln_pool_stats(m->pool, i, &ls[n]) == 0) n++;
    put_lane_gauge(f, ls, n, "lanes_pool_lane_threads", "Threads of the lane alive now.", 0);
    put_lane_gauge(f, ls, n, "lanes_pool_lane_busy", "Threads of the lane running a task now.", 1);
    put_lane_gauge(f, ls, n, "lanes_pool_lane_queued", "Tasks waiting in the lane now.", 2);
    put_lane_gauge(f, ls, n, "lanes_pool_lane_wait_seconds",
                   "Time tasks waited from submit to start: a summary, by quantile (1 = max).", 3);
    put_lane_gauge(f, ls, n, "lanes_pool_lane_run_seconds",
                   "Time tasks ran: a summary, by quantile (1 = max).", 4);
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned code, const char *type, char *body,
                             size_t len) {
    struct MHD_Response *r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
    if (r == NULL) {
        free(body);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    enum MHD_Result ok = MHD_queue_response(c, code, r);
    MHD_destroy_response(r);
    return ok;
}

/* GET /healthz: 200 while the worker has its store, 503 from losing it
 * until it is back (the worker retries it for --store-retry meanwhile). */
static enum MHD_Result healthz(struct MHD_Connection *c, const cli_wmetrics *m) {
    ln_worker_stats st;
    ln_worker_get_stats(m->w, &st);
    int down = st.store_lost > st.store_regained;
    json_t *j = json_pack("{s:s,s:s}", "status", down ? "down" : "up", "queue", m->queue_name);
    char *body = j != NULL ? json_dumps(j, JSON_COMPACT) : NULL;
    json_decref(j);
    if (body == NULL) return MHD_NO;
    return reply(c, down ? MHD_HTTP_SERVICE_UNAVAILABLE : MHD_HTTP_OK, "application/json", body,
                 strlen(body));
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload,
                                  size_t *upload_size, void **con_cls) {
    (void)version, (void)upload, (void)con_cls;
    cli_wmetrics *m = cls;
    if (*upload_size != 0) return MHD_NO; /* a GET has no body */
    if (strcmp(url, "/healthz") == 0) return healthz(c, m);
    if (strcmp(url, "/metrics") != 0) {
        char *body = strdup("not found: the metrics are at /metrics (health at /healthz)\n");
        return body ? reply(c, MHD_HTTP_NOT_FOUND, "text/plain", body, strlen(body)) : MHD_NO;
    }
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
        char *body = strdup("only GET\n");
        return body ? reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", body, strlen(body))
                    : MHD_NO;
    }
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (f == NULL) return MHD_NO;
    put_build_info(f);
    put_counters(f, m);
    put_histogram(f, m);
    put_pool(f, m);
    if (fclose(f) != 0) {
        free(text);
        return MHD_NO;
    }
    return reply(c, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", text, len);
}

/* addr as a socket address: "PORT" (127.0.0.1), "HOST:PORT" (IPv4) or
 * "[HOST]:PORT" (IPv6). 0, or -1. */
static int parse_addr(const char *addr, struct sockaddr_storage *ss, socklen_t *len) {
    char host[64] = "127.0.0.1";
    const char *port = addr;
    int v6 = 0;
    if (addr[0] == '[') {
        const char *end = strchr(addr, ']');
        if (end == NULL || end[1] != ':' || (size_t)(end - addr - 1) >= sizeof host) return -1;
        memcpy(host, addr + 1, (size_t)(end - addr - 1));
        host[end - addr - 1] = '\0';
        port = end + 2;
        v6 = 1;
    } else if (strrchr(addr, ':') != NULL) {
        const char *colon = strrchr(addr, ':');
        if ((size_t)(colon - addr) >= sizeof host) return -1;
        memcpy(host, addr, (size_t)(colon - addr));
        host[colon - addr] = '\0';
        port = colon + 1;
    }
    char *end;
    long p = strtol(port, &end, 10);
    if (*port < '0' || *port > '9' || *end != '\0' || p < 0 || p > 65535) return -1;
    memset(ss, 0, sizeof *ss);
    if (v6) {
        struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
        s6->sin6_family = AF_INET6;
        s6->sin6_port = htons((uint16_t)p);
        if (inet_pton(AF_INET6, host, &s6->sin6_addr) != 1) return -1;
        *len = sizeof *s6;
    } else {
        struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
        s4->sin_family = AF_INET;
        s4->sin_port = htons((uint16_t)p);
        if (inet_pton(AF_INET, host, &s4->sin_addr) != 1) return -1;
        *len = sizeof *s4;
    }
    return 0;
}

int cli_wmetrics_start(cli_wmetrics **out, const char *addr, const char *queue, ln_worker *w,
                       ln_pool *pool, cli_whist *h, unsigned *port, char *why, size_t whysize) {
    struct sockaddr_storage ss;
    socklen_t sl = 0;
    if (parse_addr(addr, &ss, &sl) != 0) { /* MHD takes the family from ss */
        snprintf(why, whysize,
                 "--metrics takes PORT, HOST:PORT or [HOST]:PORT with a numeric address, not "
                 "'%s'",
                 addr);
        return -1;
    }
    cli_wmetrics *m = calloc(1, sizeof *m);
    if (m == NULL) {
        snprintf(why, whysize, "out of memory");
        return -1;
    }
    label_value(m->queue, sizeof m->queue, queue);
    m->queue_name = queue;
    m->w = w;
    m->pool = pool;
    m->h = h;
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_USE_ITC;
    if (ss.ss_family == AF_INET6) flags |= MHD_USE_IPv6;
    m->d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, m, MHD_OPTION_SOCK_ADDR, &ss,
                            MHD_OPTION_CONNECTION_TIMEOUT, 10u, MHD_OPTION_CONNECTION_LIMIT, 16u,
                            MHD_OPTION_END);
    if (m->d == NULL) {
        snprintf(why, whysize, "cannot serve --metrics on %s (in use, or not an address here)",
                 addr);
        free(m);
        return -1;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(m->d, MHD_DAEMON_INFO_BIND_PORT);
    *port = info != NULL ? info->port : 0;
    *out = m;
    return 0;
}

void cli_wmetrics_stop(cli_wmetrics *m) {
    if (m == NULL) return;
    MHD_stop_daemon(m->d);
    free(m);
}
