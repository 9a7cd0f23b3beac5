/* dash.h - `lanes dash`: a web dashboard of a job store (docs/dash.md).
 *
 *   cmd_dash.c      the command line, the listening address, the token
 *   dash_http.c     the libmicrohttpd handler: routing, access rules,
 *                   replies, the embedded page
 *   dash_api.c      the JSON API over lanes/jobs.h (every answer one
 *                   bounded query)
 *   dash_metrics.c  /metrics in Prometheus' text format
 *   dash_throughput.c  the per-minute metrics for the throughput chart
 *   dash_flow.c     a job's flow: parent, children, the tree (bounded)
 *   dash_edit.c     a job's priority, delay and data, promote all, the
 *                   counts per priority, a dedup id's holder (jobs_edit.h)
 *   dash_conn.c     the connection guard: the request deadline and the
 *                   connection limit (dash_conn.h)
 *   dash_health.c   /healthz: the store's health, read in the background
 *                   (dash_health.h)
 *   dash_reply.c    what the parts above share: error replies, a failed
 *                   library call as a reply, previews, the clock
 *                   (dash_reply.h)
 *   dash_assets.c   GENERATED (scripts/embed-assets.sh): the page's files
 *
 * Calls go one way (no cycle); these are all the edges between files:
 *   cmd_dash.c -> dash_http.c, dash_health.c
 *   dash_http.c -> dash_api.c, dash_metrics.c, dash_conn.c, dash_health.c
 *   dash_metrics.c -> dash_api.c (the queue names)
 *   dash_api.c -> dash_edit.c, dash_flow.c, dash_throughput.c
 *   dash_http.c, dash_api.c, dash_edit.c, dash_flow.c, dash_throughput.c,
 *   dash_conn.c -> dash_reply.c, which calls none of them.
 *
 * Threads: libmicrohttpd runs every request on its one internal thread
 * (MHD_USE_INTERNAL_POLLING_THREAD without a thread pool), so the state
 * below is used by that thread alone once the daemon started (port is
 * written once as it starts). The guard's timer thread touches only the
 * guard's own slots, under its mutex. */
#ifndef CLI_DASH_H
#define CLI_DASH_H

#include <lanes/jobs.h>

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/* One embedded file of cli/dash/dash_assets/. */
typedef struct cli_dash_asset {
    const char *path; /* "/index.html" */
    const char *type; /* Content-Type */
    const unsigned char *data;
    size_t size;
} cli_dash_asset;

/* The table, ending with an entry whose path is NULL. */
extern const cli_dash_asset cli_dash_assets[];

/* Most rows of a jobs page, and most jobs a search looks at per request. */
#define CLI_DASH_PAGE_MAX 100
#define CLI_DASH_SEARCH_WINDOW 1000
/* How long the queue list is kept before it is asked for again: SQLite
 * reads it from an index, Redis finds queues with a SCAN of the whole
 * keyspace (ln_jobs_queues), 0.25 s for 200,000 keys. */
#define CLI_DASH_QUEUES_TTL_SQLITE_MS 2000
#define CLI_DASH_QUEUES_TTL_REDIS_MS 30000
/* Most --queue options. */
#define CLI_DASH_FIXED_MAX 64
/* Most --allow-host options. */
#define CLI_DASH_ALLOW_MAX 16
/* The doors (docs/dash.md, "Access and limits"; dash_conn.c): connections
 * served at once (--max-connections; libmicrohttpd takes as many more, at
 * least MARGIN_MIN, to answer them 503: cli_dash_conns_margin), the
 * seconds a connection has for a whole request (--request-timeout), and
 * the connections of one client address off loopback. */
#define CLI_DASH_CONNS_DEFAULT 512
#define CLI_DASH_CONNS_MAX 16384
#define CLI_DASH_CONNS_MARGIN_MIN 32
#define CLI_DASH_REQUEST_TIMEOUT_DEFAULT 10
#define CLI_DASH_REQUEST_TIMEOUT_MAX 3600
#define CLI_DASH_PER_IP_MAX 32

typedef struct cli_dash {
    ln_jobs *jobs;
    const char *store;   /* "sqlite" or "redis" */
    char url_shown[512]; /* the store URL without a password */
    int read_only;       /* --read-only: every write is refused */
    int loopback;        /* listening on a loopback address */
    char token[256];     /* from --token-file, or "" */
    /* --allow-host: more names the Host header may give ("NAME" with any
     * port, or "NAME:PORT"). */
    const char *allow[CLI_DASH_ALLOW_MAX];
    size_t nallow;
    unsigned max_conns;         /* --max-connections */
    unsigned request_timeout_s; /* --request-timeout */
    /* Set by cli_dash_http_start: the listening address as a Host names
     * it ("127.0.0.1", "[::1]") and the bound port. */
    char self_host[64];
    _Atomic unsigned port;
    void *guard; /* dash_conn.c's */
    /* --queue: show these queues, found by no listing (else NULL). */
    char *fixed[CLI_DASH_FIXED_MAX];
    size_t nfixed;
    /* The queue list cache (CLI_DASH_QUEUES_TTL_*). */
    int64_t queues_ttl_ms;
    char **queues;
    size_t nqueues;
    int64_t queues_at_ms; /* monotonic; 0 = not read yet */
} cli_dash;

/* A reply of the API: an HTTP status and a JSON body (owned). */
typedef struct cli_dash_reply {
    unsigned status;
    json_t *body;
} cli_dash_reply;

/* The request as dash_http.c hands it to the API: the path split into
 * unescaped segments after "/api/", and the query arguments. */
typedef struct cli_dash_req {
    const char *method; /* "GET" or "POST" */
    char *seg[6];
    int nseg;
    const char *(*arg)(void *ctx, const char *name); /* NULL when absent */
    void *arg_ctx;
    const char *body; /* the request's body, NUL-terminated (NULL: none) */
    size_t body_len;  /* its bytes (a NUL inside is the endpoint's to refuse) */
} cli_dash_req;

/* Most bytes of a request's body (a job's data: the handle's
 * max_data_size, --max-data-size, else LN_JOB_DATA_MAX_DEFAULT; set by
 * cmd_dash.c before the server starts). */
extern size_t cli_dash_body_max;
#define CLI_DASH_BODY_MAX cli_dash_body_max

/* Answer an API request (dash_api.c). Writes are only routed here after
 * dash_http.c checked the access rules. */
cli_dash_reply cli_dash_api(cli_dash *d, const cli_dash_req *req);
/* 1 if the request is a write (a POST the API knows). */
int cli_dash_api_is_write(const cli_dash_req *req);

/* GET /api/queues/Q/metrics?points=N (dash_throughput.c): the queue's
 * per-minute metrics, the newest N (1..CLI_DASH_METRICS_POINTS_MAX,
 * default 60) points of each type, for the throughput chart. */
#define CLI_DASH_METRICS_POINTS_MAX 1440
cli_dash_reply cli_dash_throughput(cli_dash *d, const cli_dash_req *req, const char *queue);

/* GET /api/queues/Q/jobs/ID/flow?nodes=N&depth=L (dash_flow.c): the job's
 * parent, children and flow tree, at most N nodes (1..NODES_MAX, default
 * NODES_MAX) and L levels (1..DEPTH_MAX, default DEPTH_MAX) from the top;
 * the walk up to the root reads at most UP_MAX ancestors. */
#define CLI_DASH_FLOW_NODES_MAX 200
#define CLI_DASH_FLOW_DEPTH_MAX 10
#define CLI_DASH_FLOW_UP_MAX LN_FLOW_DEPTH_MAX
cli_dash_reply cli_dash_flow(cli_dash *d, const cli_dash_req *req, const char *queue,
                             const char *id);

/* The routes of dash_edit.c (docs/dash.md): 1 and *r set if req is one
 * of them, else 0. At most CLI_DASH_PRIORITIES_MAX priorities are counted,
 * found with at most CLI_DASH_PRIORITY_PROBES reads of 1 or 2 jobs. */
#define CLI_DASH_PRIORITIES_MAX 20
#define CLI_DASH_PRIORITY_PROBES 64
int cli_dash_edit(cli_dash *d, const cli_dash_req *req, cli_dash_reply *r);

/* The queue names: --queue's, or the store's (cached for queues_ttl_ms,
 * and read again after a write). Owned by d. 0 or a negative LN_E* code. */
int cli_dash_queue_names(cli_dash *d, char ***names, size_t *n);
void cli_dash_queues_invalidate(cli_dash *d);

/* /metrics: the Prometheus text exposition (a malloc'd string). */
char *cli_dash_metrics(cli_dash *d, size_t *len);

/* Start serving on host:port (port 0: any free port); *bound_port gets the
 * port. Returns the daemon (opaque) or NULL with a message on stderr. */
void *cli_dash_http_start(cli_dash *d, const char *host, unsigned port, unsigned *bound_port);
void cli_dash_http_stop(cli_dash *d, void *daemon);

/* A Host header's "NAME[:PORT]" or "[V6][:PORT]": NAME (brackets kept)
 * into name, PORT into *port (0 when absent). 0, or -1 if malformed. */
int cli_dash_split_host(const char *h, char *name, size_t size, unsigned *port);

/* The connections libmicrohttpd takes past max (see above). */
static inline unsigned cli_dash_conns_margin(unsigned max) {
    return max > CLI_DASH_CONNS_MARGIN_MIN ? max : CLI_DASH_CONNS_MARGIN_MIN;
}

#endif
