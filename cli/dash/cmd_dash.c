/* cmd_dash.c - `lanes dash URL [--listen HOST:PORT] [--read-only]
 * [--token-file F] [--allow-host NAME]... [--max-connections N]
 * [--request-timeout S] [--queue Q]...`: serve a web dashboard of a job store (docs/dash.md)
 * until SIGINT or SIGTERM. This file reads the command line and the token,
 * opens the store and waits; dash_http.c serves. */
#include "cli.h"
#include "jobs_store.h"
#include "store_url.h"

#include "dash.h"
#include "dash_health.h"

#include <lanes.h>
#include <lanes/jobs.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_LISTEN "127.0.0.1:7700"

static const char usage_text[] =
    "usage: lanes dash URL [--listen HOST:PORT] [--read-only] [--token-file F]\n"
    "                      [--allow-host NAME]... [--max-connections N]\n"
    "                      [--request-timeout S] [--queue Q]...\n"
    "\n"
    "Serve a web dashboard of the job store URL (as for 'lanes jobs', e.g.\n"
    "sqlite:lanes.db or redis://127.0.0.1:6379/0): queues with their counts,\n"
    "jobs by state with paging and search, a job's data, result, reason and\n"
    "logs, and actions (retry, remove, promote, retry all failed, clean,\n"
    "pause, resume). Prometheus metrics at /metrics. Stops on SIGINT/SIGTERM.\n"
    "GET /healthz: 200 {\"status\":\"up\"} while the store answers, 503\n"
    "{\"status\":\"down\",...} while it does not (no token, any Host); stderr\n"
    "gets a line when the store stops answering and one when it is back.\n"
    "\n"
    "Environment: LANES_STORE is the URL when none is given; LANES_TOKEN_FILE\n"
    "is --token-file when none is given; a redis:// URL takes its password\n"
    "from ?password_file=PATH or LANES_REDIS_PASSWORD_FILE=PATH.\n"
    "\n"
    "options:\n"
    "  --listen HOST:PORT  address to serve on (default " DEFAULT_LISTEN "; port 0\n"
    "                      picks a free one; the address is printed on stderr).\n"
    "                      A non-loopback address needs --token-file.\n"
    "  --read-only         refuse every action (403)\n"
    "  --token-file F      the first line of F is the token: actions need it\n"
    "                      (header 'Authorization: Bearer TOKEN' or\n"
    "                      'X-Lanes-Token: TOKEN'); off loopback, reads too.\n"
    "                      On loopback too: other users and programs of this\n"
    "                      machine can then not change the queues\n"
    "  --allow-host NAME   also accept requests whose Host header is NAME (any\n"
    "                      port) or NAME:PORT (repeatable, e.g. a reverse\n"
    "                      proxy's name). On loopback only 127.0.0.1, localhost,\n"
    "                      [::1] and the listening address, with its port, are\n"
    "                      accepted besides (403 for any other: no DNS\n"
    "                      rebinding); off loopback, giving it refuses others\n"
    "  --max-connections N connections served at once (default 512); one more\n"
    "                      closes the longest idle keep-alive connection, else\n"
    "                      the oldest still without a request (0.25 s or\n"
    "                      more), else is answered 503\n"
    "  --request-timeout S seconds a connection has to send a whole request,\n"
    "                      from its opening or its previous answer (default 10;\n"
    "                      a deadline, not an idle timeout)\n"
    "  --queue Q           show queue Q (repeatable): only these, and the store\n"
    "                      is not searched for queues (a Redis SCAN)\n"
    "  --max-data-size N   most bytes of a job's data an edit takes (the body of\n"
    "                      a request; default 16777216, 16 MiB)\n"
    "\n"
    "exit codes: 0 stopped by a signal; 2 bad command line, or no store at a\n"
    "  sqlite: PATH; 3 the store or the address could not be used.\n";

size_t cli_dash_body_max = LN_JOB_DATA_MAX_DEFAULT;

typedef struct dash_args {
    const char *url, *listen, *token_file, *max_data;
    int read_only;
    const char *allow[CLI_DASH_ALLOW_MAX]; /* --allow-host */
    size_t nallow;
    unsigned max_conns, request_timeout_s;
    char *queues[CLI_DASH_FIXED_MAX]; /* --queue */
    size_t nqueues;
} dash_args;

static int usage_error(const char *msg, const char *arg) {
    fprintf(stderr, "lanes dash: %s%s%s\n(see 'lanes dash --help')\n", msg, arg ? " " : "",
            arg ? arg : "");
    return CLI_EXIT_USAGE;
}

/* The value of a number option: 1..max, else an exit code. */
static int number_arg(const char *opt, const char *v, unsigned max, unsigned *out) {
    char *end;
    errno = 0;
    unsigned long n = strtoul(v, &end, 10);
    if (v[0] < '0' || v[0] > '9' || *end != '\0' || errno != 0 || n < 1 || n > max) {
        fprintf(stderr, "lanes dash: %s wants a number 1..%u, not '%s'\n", opt, max, v);
        return CLI_EXIT_USAGE;
    }
    *out = (unsigned)n;
    return 0;
}

/* --allow-host NAME, --max-connections N, --request-timeout S: 1 if s is
 * one of them (*rc 0 or an exit code), else 0. */
static int door_option(int argc, char **argv, int *i, dash_args *a, int *rc) {
    const char *s = argv[*i];
    if (strcmp(s, "--allow-host") != 0 && strcmp(s, "--max-connections") != 0 &&
        strcmp(s, "--request-timeout") != 0)
        return 0;
    if (*i + 1 >= argc) {
        *rc = usage_error("missing value of", s);
        return 1;
    }
    const char *v = argv[++*i];
    if (strcmp(s, "--max-connections") == 0) {
        *rc = number_arg(s, v, CLI_DASH_CONNS_MAX, &a->max_conns);
    } else if (strcmp(s, "--request-timeout") == 0) {
        *rc = number_arg(s, v, CLI_DASH_REQUEST_TIMEOUT_MAX, &a->request_timeout_s);
    } else {
        char name[256];
        unsigned port;
        if (cli_dash_split_host(v, name, sizeof name, &port) != 0)
            *rc = usage_error("--allow-host wants NAME or NAME:PORT, not", v);
        else if (a->nallow == CLI_DASH_ALLOW_MAX)
            *rc = usage_error("too many --allow-host", NULL);
        else
            a->allow[a->nallow++] = v;
    }
    return 1;
}

/* 0, or an exit code (after printing why); -1 for --help. */
static int parse_args(int argc, char **argv, dash_args *a) {
    memset(a, 0, sizeof *a);
    a->listen = DEFAULT_LISTEN;
    a->max_conns = CLI_DASH_CONNS_DEFAULT;
    a->request_timeout_s = CLI_DASH_REQUEST_TIMEOUT_DEFAULT;
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        int rc = 0;
        if (strcmp(s, "--help") == 0 || strcmp(s, "-h") == 0) return -1;
        if (door_option(argc, argv, &i, a, &rc)) {
            if (rc != 0) return rc;
        } else if (strcmp(s, "--read-only") == 0) {
            a->read_only = 1;
        } else if (strcmp(s, "--queue") == 0) {
            if (i + 1 >= argc) return usage_error("missing value of", s);
            if (a->nqueues == CLI_DASH_FIXED_MAX) return usage_error("too many --queue", NULL);
            a->queues[a->nqueues++] = argv[++i];
        } else if (strcmp(s, "--listen") == 0 || strcmp(s, "--token-file") == 0 ||
                   strcmp(s, "--max-data-size") == 0) {
            if (i + 1 >= argc) return usage_error("missing value of", s);
            *(strcmp(s, "--listen") == 0       ? &a->listen
              : strcmp(s, "--token-file") == 0 ? &a->token_file
                                               : &a->max_data) = argv[++i];
        } else if (strncmp(s, "--", 2) == 0) {
            return usage_error("unknown option", s);
        } else if (a->url == NULL) {
            a->url = s;
        } else {
            return usage_error("unexpected argument", s);
        }
    }
    if (a->url == NULL) a->url = getenv(CLI_STORE_ENV); /* nothing on the command line */
    if (a->url != NULL && a->url[0] == '\0') a->url = NULL;
    if (a->url == NULL) return usage_error("needs a store URL (or LANES_STORE)", NULL);
    if (a->token_file == NULL) a->token_file = getenv("LANES_TOKEN_FILE");
    if (a->token_file != NULL && a->token_file[0] == '\0') a->token_file = NULL;
    return 0;
}

/* "HOST:PORT" or "[V6]:PORT" into host and *port. */
static int split_listen(const char *s, char *host, size_t size, unsigned *port) {
    const char *colon = strrchr(s, ':');
    if (colon == NULL || colon == s) return -1;
    const char *h = s;
    size_t hl = (size_t)(colon - s);
    if (h[0] == '[' && hl >= 2 && h[hl - 1] == ']') {
        h++;
        hl -= 2;
    }
    char *end;
    long p = strtol(colon + 1, &end, 10);
    if (hl == 0 || hl >= size || *end != '\0' || colon[1] == '\0' || p < 0 || p > 65535) return -1;
    memcpy(host, h, hl);
    host[hl] = '\0';
    *port = (unsigned)p;
    return 0;
}

/* The first line of path, without trailing blanks, into tok. */
static int read_token(const char *path, char *tok, size_t size) {
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        fprintf(stderr, "lanes dash: --token-file %s: %s\n", path, strerror(errno));
        return -1;
    }
    char line[1024];
    int got = fgets(line, sizeof line, f) != NULL;
    fclose(f);
    size_t n = got ? strcspn(line, "\r\n") : 0;
    while (n > 0 && (line[n - 1] == ' ' || line[n - 1] == '\t')) n--;
    if (n == 0 || n >= size) {
        fprintf(stderr,
                "lanes dash: --token-file %s: the first line must hold a token of "
                "1..%zu bytes\n",
                path, size - 1);
        return -1;
    }
    memcpy(tok, line, n);
    tok[n] = '\0';
    return 0;
}

/* Serve until SIGINT or SIGTERM (blocked before the daemon's thread
 * starts, so it inherits the mask and only sigwait sees them). */
static int serve(cli_dash *d, const char *host, unsigned port) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
    unsigned bound = 0;
    void *daemon = cli_dash_http_start(d, host, port, &bound);
    if (daemon == NULL) return CLI_EXIT_UNAVAILABLE;
    cli_dash_health_start(d); /* says when the store stops answering, and when it is back */
    int v6 = strchr(host, ':') != NULL;
    fprintf(stderr, "lanes dash: serving %s on http://%s%s%s:%u/ (%s)\n", d->url_shown,
            v6 ? "[" : "", host, v6 ? "]" : "", bound,
            d->read_only          ? "read-only"
            : d->token[0] != '\0' ? "actions need the token"
                                  : "actions open to this machine");
    int sig = 0;
    sigwait(&set, &sig);
    fprintf(stderr, "lanes dash: stopping (%s)\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
    cli_dash_health_stop();
    cli_dash_http_stop(d, daemon);
    return CLI_EXIT_OK;
}

int cmd_dash(int argc, char **argv) {
    dash_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc == -1) {
        fputs(usage_text, stdout);
        return CLI_EXIT_OK;
    }
    if (rc != 0) return rc;
    char host[256];
    unsigned port;
    if (split_listen(a.listen, host, sizeof host, &port) != 0)
        return usage_error("--listen wants HOST:PORT, e.g. 127.0.0.1:7700, not", a.listen);
    static cli_dash d; /* big; lives as long as the daemon */
    memset(&d, 0, sizeof d);
    d.read_only = a.read_only;
    d.store = strncmp(a.url, "sqlite:", 7) == 0 ? "sqlite" : "redis";
    d.queues_ttl_ms = strcmp(d.store, "sqlite") == 0 ? CLI_DASH_QUEUES_TTL_SQLITE_MS
                                                     : CLI_DASH_QUEUES_TTL_REDIS_MS;
    memcpy(d.fixed, a.queues, sizeof d.fixed);
    d.nfixed = a.nqueues;
    memcpy(d.allow, a.allow, sizeof d.allow);
    d.nallow = a.nallow;
    d.max_conns = a.max_conns;
    d.request_timeout_s = a.request_timeout_s;
    cli_store_url_shown(d.url_shown, sizeof d.url_shown, a.url);
    if (a.token_file != NULL && read_token(a.token_file, d.token, sizeof d.token) != 0)
        return CLI_EXIT_USAGE;
    rc = cli_check_store_exists("lanes dash", a.url, "'lanes jobs URL add ...' creates one");
    if (rc != 0) return rc;
    ln_jobs_opts jo;
    ln_jobs_opts_init(&jo);
    char *end = NULL;
    if (a.max_data != NULL) {
        unsigned long long v =
            a.max_data[0] >= '0' && a.max_data[0] <= '9' ? strtoull(a.max_data, &end, 10) : 0;
        if (end == NULL || *end != '\0' || v < 2 || v > (1ull << 30))
            return usage_error("--max-data-size must be 2..1073741824 bytes, not", a.max_data);
        jo.max_data_size = cli_dash_body_max = (size_t)v;
    }
    char msg[512];
    char *open_url = cli_store_url_resolve(a.url, msg, sizeof msg); /* a password file */
    if (open_url == NULL) return usage_error(msg, NULL);
    int err = ln_jobs_open_ex(&d.jobs, open_url, &jo, msg, sizeof msg);
    free(open_url);
    if (err != 0) {
        fprintf(stderr, "lanes dash: %s: %s\n", d.url_shown, msg[0] ? msg : ln_strerror(err));
        return cli_jobs_open_exit(err); /* as every command that opens a store */
    }
    const char *warn = ln_jobs_warning(d.jobs);
    if (warn != NULL) fprintf(stderr, "lanes dash: warning: %s\n", warn);
    rc = serve(&d, host, port);
    ln_jobs_free_lines(d.queues, d.nqueues);
    ln_jobs_close(d.jobs);
    return rc;
}
