/* cmd_worker.c - `lanes worker URL QUEUE [options] --exec CMD [ARG...]`:
 * the command line, the lines the worker prints when it starts, loses or
 * regains its store, and stops, and the run itself. Running CMD per job is
 * worker_exec.c; the other parts are listed in worker.h. */
#include "cli.h"
#include "cli_err.h"
#include "cli_num.h"
#include "jobs_ratelimit.h"
#include "jobs_store.h"
#include "store_url.h"
#include "worker.h"
#include "worker_persist.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char prog[] = "lanes worker";

/* How often the watch thread looks at the worker's store counters. */
#define WATCH_MS 50

static const char usage_text[] =
    "usage: lanes worker URL QUEUE [options] --exec CMD [ARG...]\n"
    "       lanes worker URL QUEUE [options] --exec-persistent CMD [ARG...]\n"
    "       lanes worker QUEUE [options] --exec[-persistent] CMD [ARG...]\n"
    "       (the last: URL from $LANES_STORE)\n"
    "\n"
    "URL as for 'lanes jobs', e.g. sqlite:lanes.db; a redis:// URL may take its\n"
    "password from a file: ?password_file=PATH, or LANES_REDIS_PASSWORD_FILE=PATH.\n"
    "A store that cannot be reached when the worker starts (Redis not up yet)\n"
    "is waited for, retrying with backoff (0.1 s doubling to 5 s), unless\n"
    "--fail-fast.\n"
    "\n"
    "Runs CMD once per job of QUEUE: the job's data JSON on stdin, and\n"
    "LANES_JOB_ID, LANES_JOB_NAME, LANES_JOB_QUEUE, LANES_JOB_ATTEMPT,\n"
    "LANES_STORE_URL (URL as given) and TRACEPARENT (when the job has one) in\n"
    "the environment; a flow parent also gets LANES_CHILDREN_FILE, a JSON file\n"
    "of its children and their results. No shell is used.\n"
    "Exit 0 completes the job; stdout becomes its return value (JSON if it\n"
    "parses, else a JSON string). A non-zero exit or a signal fails it with\n"
    "the tail of stderr as the reason (retried while the job has attempts\n"
    "left), except four exit codes:\n"
    "  75  put the job back to delayed, without using an attempt, until the\n"
    "      time stdout names: {\"delay_until\": MS since the epoch} or\n"
    "      {\"delay_ms\": N} (other stdout: a plain failure)\n"
    "  76  fail the job for good, whatever attempts it has left\n"
    "  77  rate limited: put the job back at the front of waiting, without\n"
    "      using an attempt, and, if stdout is {\"rate_limit_ms\": N}, rate\n"
    "      limit the queue for N ms (empty stdout: only wait out the limit)\n"
    "  78  wait for the job's children (added with 'lanes jobs \"$LANES_STORE_URL\"\n"
    "      add --parent \"$LANES_JOB_QUEUE:$LANES_JOB_ID\" ...'): the job goes to\n"
    "      waiting-children, without using an attempt, and runs CMD again once\n"
    "      they are done; with none pending CMD runs again at once (at most 10\n"
    "      runs in a row, then the job fails); stdout is ignored\n"
    "A run past its timeout (the job's own timeout, else --timeout; the\n"
    "runs again after 78 share the first one's) fails with \"timed out\n"
    "after N ms\"; CMD's process group then gets\n"
    "SIGTERM, and SIGKILL after the --grace (2 s if --grace is not given);\n"
    "so does a run canceled with `lanes jobs URL cancel` (within a second).\n"
    "SIGTERM or SIGINT stop the worker gracefully.\n"
    "\n"
    "Progress and log lines: CMD may write JSON lines to file descriptor 3,\n"
    "one object a line: {\"progress\": <any JSON>} stores the job's progress\n"
    "(ln_job_progress), {\"log\": \"text\"} appends a log line (ln_job_log;\n"
    "see 'lanes jobs URL logs'). E.g. in sh: echo '{\"progress\":50}' >&3.\n"
    "A malformed line (not such an object, or over 256 KiB) is ignored, and\n"
    "the first of each run is reported on stderr. A program that does not\n"
    "use fd 3 is unaffected.\n"
    "\n"
    "--exec-persistent CMD: keep --concurrency CMD processes running, each\n"
    "taking one job at a time as JSON lines on stdin and stdout (no process\n"
    "per job): {\"type\":\"job\",\"id\",\"name\",\"queue\",\"attempt\",\"data\"} in;\n"
    "{\"type\":\"progress\"|\"log\",...} then one {\"type\":\"result\",\"result\":X}\n"
    "or {\"type\":\"error\",\"message\":\"...\"} out (docs/persistent.md; handler\n"
    "libraries for Python and Node in examples/handlers/). A handler that dies\n"
    "or writes a malformed line is restarted (0.1 s backoff doubling to 5 s)\n"
    "and its job goes back without using an attempt; after 3 such deaths on\n"
    "one job it fails. Timeouts, --grace and cancel kill the handler's process\n"
    "group as above and start a new one. Exit codes 75..78 and fd 3 are\n"
    "per-job mode's only.\n"
    "\n"
    "options:\n"
    "  --concurrency N      jobs run at once (default 1)\n"
    "  --lease MS           job lease, renewed while CMD runs (default 30000)\n"
    "  --max-stalled N      lease lapses allowed before a job fails (default 1)\n"
    "  --stalled-interval MS  how often to look for lapsed leases (default:\n"
    "                       the lease)\n"
    "  --max-started-attempts N  a job started more than N times (its runs\n"
    "                       stalled, or delayed themselves) fails without\n"
    "                       running, and one started N times is not retried\n"
    "                       (BullMQ's worker option maxStartedAttempts)\n"
    "  --exit-when-empty    exit once the queue has nothing left to run\n"
    "  --no-active-event    Redis: do not write the 'active' event of each job\n"
    "                       taken (less Redis CPU per job); a BullMQ\n"
    "                       QueueEvents listener then hears no 'active' for\n"
    "                       these jobs ('completed' and 'failed' unaffected)\n"
    "  --max-jobs N         exit after taking N jobs\n"
    "  --rate-limit MAX/MS  take at most MAX jobs per MS ms, counted with\n"
    "                       every worker of the queue that has a limit\n"
    "                       (BullMQ's limiter; a global limit set with 'lanes\n"
    "                       jobs URL rate-limit' wins over MAX)\n"
    "  --timeout S          fail a run after S seconds and kill CMD (jobs\n"
    "                       added with a timeout of their own use theirs)\n"
    "  --grace S            on SIGTERM, let running jobs finish for S seconds,\n"
    "                       then kill them and release the jobs (default 10);\n"
    "                       a timed-out or canceled CMD gets SIGKILL S seconds\n"
    "                       after its SIGTERM (default 2)\n"
    "  --poll MS            longest sleep while the queue is empty (default 100)\n"
    "  --wait-replicas N    Redis: after each step that records outcomes, WAIT\n"
    "                       until N replicas have it (at most the URL's\n"
    "                       wait_timeout_ms, default 1000); outcomes not\n"
    "                       confirmed stand and are logged (a warn line)\n"
    "  --store-retry MS     how long to keep retrying a store that fails (e.g.\n"
    "                       Redis unreachable, a Redis Cluster failover) before\n"
    "                       giving up (default 30000, whatever the lease: a\n"
    "                       failover takes cluster-node-timeout plus an\n"
    "                       election); the worker then exits 3, saying it gave up\n"
    "  --fail-fast          exit 3 at once when the store cannot be reached at\n"
    "                       start, rather than wait for it\n"
    "  --start-retry MS     how long to keep putting jobs back while CMD cannot\n"
    "                       be started (see below) before giving up (default\n"
    "                       60000; 0: never); the worker then exits 5\n"
    "  --max-data-size N    most bytes of a result (CMD's stdout), a progress\n"
    "                       value, or data (default 16777216, 16 MiB; up to\n"
    "                       1073741824); larger stdout fails the job, saying so\n"
    "  --create             make the sqlite: store if it does not exist (else a\n"
    "                       missing PATH is refused, exit 2)\n"
    "  --verbose            a line on stderr per run: id, name, outcome, ms; a\n"
    "                       failure says 'retry N/M in D ms' or 'for good', a\n"
    "                       run cut short by SIGTERM past --grace 'released'\n"
    "  --log-format F       text (default: each line starts with its UTC time)\n"
    "                       or json: every stderr line one JSON object with\n"
    "                       ts, level, msg, queue and fields\n"
    "  --metrics ADDR       serve Prometheus metrics at http://ADDR/metrics;\n"
    "                       ADDR is PORT (binds 127.0.0.1), HOST:PORT or\n"
    "                       [HOST]:PORT (port 0: any free port, named in the\n"
    "                       start line); GET /healthz there is 200 while the\n"
    "                       worker has its store, 503 while it has lost it\n"
    "  --remove-on-complete WHAT  which jobs this worker completes to remove,\n"
    "                       for jobs added without a retention of their own\n"
    "                       (BullMQ's worker option removeOnComplete; a job's\n"
    "                       own wins): none (the default: keep them), all\n"
    "                       (each as it completes), keep:N or N (the newest N\n"
    "                       completed jobs of the queue stay), age:S (older\n"
    "                       than S seconds go)\n"
    "  --remove-on-fail WHAT  the same for the jobs it fails for good\n"
    "  --metrics-points N   count completed and failed jobs per minute in the\n"
    "                       store, keeping N points (BullMQ's worker option\n"
    "                       metrics.maxDataPoints: Bull Board's chart and\n"
    "                       `lanes jobs URL metrics` read them; default 0, off)\n"
    "  --json               print the final counts as JSON on stdout; errors\n"
    "                       are then JSON objects on stderr\n"
    "\n"
    "CMD is checked before the first job is taken (found in PATH when it has\n"
    "no '/', executable); when it cannot be run the worker exits 2. After\n"
    "10 failed runs in a row it says so once on stderr. When CMD cannot be\n"
    "started for the worker's own fault (out of file descriptors, memory or\n"
    "processes; CMD removed or no longer executable, as in a deploy) the job\n"
    "goes back, without using an attempt, and is not failed; the worker backs\n"
    "off (0.1 s doubling to 5 s), tries one start at a time, runs fewer at once\n"
    "after running out of descriptors, and says so in one line when it begins\n"
    "and one when CMD starts again. stderr also gets a\n"
    "line when the worker starts (store, queue, concurrency, CMD, timeout),\n"
    "when it loses and regains its store, and when it stops (why, and the\n"
    "jobs done and failed).\n"
    "\n"
    "exit codes: 0 stopped or done; 1 the worker failed; 2 bad command line\n"
    "  or CMD cannot be run; 3 the store could not be opened or used; 5 CMD\n"
    "  could not be started for --start-retry (the jobs are left to run).\n";

static ln_worker *g_worker;            /* for the signal handler */
static volatile sig_atomic_t g_signal; /* the signal that stopped it, or 0 */

static void on_signal(int sig) {
    g_signal = sig;
    cli_wlog_stopping();      /* runs cut short now are released */
    ln_worker_stop(g_worker); /* async-signal-safe */
}

static int usage_error(const char *fmt, const char *arg) {
    return cli_error(CLI_EXIT_USAGE, prog, "LN_EINVAL", "(see 'lanes worker --help')", fmt, arg);
}

static int parse_u(const char *s, unsigned long long lo, unsigned long long hi,
                   unsigned long long *out) {
    char *end;
    if (s == NULL || *s < '0' || *s > '9') return -1;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || *end != '\0' || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

/* --exec or --exec-persistent: the options end, CMD follows. */
static int is_exec(const char *s) {
    return strcmp(s, "--exec") == 0 || strcmp(s, "--exec-persistent") == 0;
}

/* The command line, parsed. */
typedef struct wargs {
    const char *url, *queue, *metrics;
    ln_worker_opts o;
    char **argv;    /* CMD ARG... */
    int persistent; /* --exec-persistent: CMD stays up (worker_persist.c) */
    int json, create, verbose, log_format;
    int fail_fast;               /* --fail-fast: a store that cannot be opened is exit 3 at once */
    unsigned kill_after_ms;      /* cli_exec's: --grace, else CLI_EXEC_KILL_AFTER_MS */
    const char *wait_replicas;   /* --wait-replicas N, or NULL */
    unsigned start_retry_ms;     /* --start-retry, else CLI_GATE_GIVE_UP_MS */
    unsigned long long max_data; /* --max-data-size, else the store's default */
} wargs;

/* Options with a number: name, bounds, scale. Their order is the field
 * order of set_num. */
static const struct {
    const char *name;
    unsigned long long lo, hi, scale;
} num_opts[] = {
    {"--concurrency", 1, 4096, 1},
    {"--lease", 100, 86400000, 1},
    {"--max-stalled", 0, 1000000, 1},
    {"--stalled-interval", 0, 86400000, 1},
    {"--max-jobs", 1, UINT64_MAX, 1},
    {"--timeout", 1, 2147483, 1000},
    {"--grace", 0, 86400, 1000},
    {"--poll", 1, 60000, 1},
    {"--store-retry", 0, 86400000, 1},
    {"--metrics-points", 0, LN_JOB_METRICS_POINTS_MAX, 1},
    {"--max-started-attempts", 1, 1000000, 1},
};
#define NUM_OPTS (sizeof num_opts / sizeof num_opts[0])

static void set_num(ln_worker_opts *o, size_t k, unsigned long long v) {
    switch (k) {
    case 0:
        o->concurrency = (unsigned)v;
        break;
    case 1:
        o->lease_ms = (unsigned)v;
        break;
    case 2:
        o->max_stalled = (unsigned)v;
        break;
    case 3:
        o->stalled_interval_ms = (unsigned)v;
        break;
    case 4:
        o->max_jobs = v;
        break;
    case 5:
        o->timeout_ms = (unsigned)v;
        break;
    case 6:
        o->grace_ms = (unsigned)v;
        break;
    case 7:
        o->poll_ms = (unsigned)v;
        break;
    case 8:
        o->store_retry_ms = (unsigned)v;
        break;
    case 9:
        o->metrics_max_points = (unsigned)v;
        break;
    default:
        o->max_started_attempts = (unsigned)v;
        break;
    }
}

/* A flag: its slot in a, or NULL. */
static int *flag_slot(wargs *a, const char *s) {
    if (strcmp(s, "--exit-when-empty") == 0) return &a->o.exit_when_empty;
    if (strcmp(s, "--no-active-event") == 0) return &a->o.no_active_event;
    if (strcmp(s, "--json") == 0) return &a->json;
    if (strcmp(s, "--create") == 0) return &a->create;
    if (strcmp(s, "--verbose") == 0) return &a->verbose;
    if (strcmp(s, "--fail-fast") == 0) return &a->fail_fast;
    return NULL;
}

/* Parse argv[3..] (options, then --exec CMD...). 0, or an exit code. An
 * option given twice is an error: neither value would be the obvious one. */
static int parse_args(int argc, char **argv, wargs *a) {
    unsigned long long seen = 0; /* bit k: num_opts[k]; NUM_OPTS + 0..: others */
    const char *log_format = NULL, *rate_limit = NULL, *on_complete = NULL, *on_fail = NULL;
    const char *start_retry = NULL, *max_data = NULL;
    for (int i = 3; i < argc; i++) {
        const char *s = argv[i];
        unsigned long long v = 0;
        if (is_exec(s)) {
            if (i + 1 >= argc) return usage_error("%s needs CMD", s);
            a->argv = argv + i + 1;
            a->persistent = strcmp(s, "--exec-persistent") == 0;
            break;
        }
        int *flag = flag_slot(a, s);
        if (flag != NULL) {
            if (*flag) return usage_error("%s is given twice", s);
            *flag = 1;
            continue;
        }
        if (strncmp(s, "--", 2) != 0) return usage_error("unexpected argument '%s'", s);
        size_t k = 0;
        while (k < NUM_OPTS && strcmp(s, num_opts[k].name) != 0) k++;
        const char **str = strcmp(s, "--metrics") == 0              ? &a->metrics
                           : strcmp(s, "--log-format") == 0         ? &log_format
                           : strcmp(s, "--rate-limit") == 0         ? &rate_limit
                           : strcmp(s, "--remove-on-complete") == 0 ? &on_complete
                           : strcmp(s, "--remove-on-fail") == 0     ? &on_fail
                           : strcmp(s, "--wait-replicas") == 0      ? &a->wait_replicas
                           : strcmp(s, "--start-retry") == 0        ? &start_retry
                           : strcmp(s, "--max-data-size") == 0      ? &max_data
                                                                    : NULL;
        if (k == NUM_OPTS && str == NULL) return usage_error("unknown option '%s'", s);
        if (i + 1 >= argc || is_exec(argv[i + 1])) return usage_error("%s needs a value", s);
        const char *val = argv[++i];
        if (str != NULL) {
            if (*str != NULL) return usage_error("%s is given twice", s);
            *str = val;
            continue;
        }
        if (seen & (1ull << k)) return usage_error("%s is given twice", s);
        seen |= 1ull << k;
        if (parse_u(val, num_opts[k].lo, num_opts[k].hi, &v) != 0)
            return cli_error(CLI_EXIT_USAGE, prog, "LN_EINVAL", NULL,
                             "%s must be %llu..%llu, not '%s'", s, num_opts[k].lo, num_opts[k].hi,
                             val);
        set_num(&a->o, k, v * num_opts[k].scale);
        if (strcmp(s, "--grace") == 0) a->kill_after_ms = a->o.grace_ms;
    }
    if (log_format != NULL && strcmp(log_format, "json") == 0)
        a->log_format = CLI_LOG_JSON;
    else if (log_format != NULL && strcmp(log_format, "text") != 0)
        return usage_error("--log-format is text or json, not '%s'", log_format);
    if (rate_limit != NULL && cli_parse_rate(rate_limit, &a->o.rate_max, &a->o.rate_duration_ms))
        return usage_error("--rate-limit is MAX/DURATION_MS, both 1..2147483647, not '%s'",
                           rate_limit);
    if (on_complete != NULL && cli_parse_keep(on_complete, 1, &a->o.remove_on_complete) != 0)
        return usage_error("--remove-on-complete is none, all, keep:N, N or age:S, not '%s'",
                           on_complete);
    if (on_fail != NULL && cli_parse_keep(on_fail, 1, &a->o.remove_on_fail) != 0)
        return usage_error("--remove-on-fail is none, all, keep:N, N or age:S, not '%s'", on_fail);
    unsigned long long v = CLI_GATE_GIVE_UP_MS;
    if (start_retry != NULL && parse_u(start_retry, 0, 86400000, &v) != 0)
        return usage_error("--start-retry must be 0..86400000 ms, not '%s'", start_retry);
    a->start_retry_ms = (unsigned)v;
    a->max_data = LN_JOB_DATA_MAX_DEFAULT;
    if (max_data != NULL && parse_u(max_data, 2, 1ull << 30, &a->max_data) != 0)
        return usage_error("--max-data-size must be 2..1073741824 bytes, not '%s'", max_data);
    if (a->argv == NULL)
        return usage_error("%s", "--exec CMD (or --exec-persistent CMD) is required");
    return 0;
}

/* Before the full parse, so that its errors are JSON already: whether
 * --json or --log-format json is among the options. */
static void prescan_json(int argc, char **argv) {
    for (int i = 1; i < argc && !is_exec(argv[i]); i++)
        if (strcmp(argv[i], "--json") == 0 || (strcmp(argv[i], "--log-format") == 0 &&
                                               i + 1 < argc && strcmp(argv[i + 1], "json") == 0))
            cli_err_json(1);
}

/* Like `lanes jobs`: only --create makes a new sqlite: store; a mistyped
 * PATH is refused rather than silently becoming an empty store
 * (store_url.h). 0 to go on. */
static int check_store_exists(const char *url, int create) {
    if (create) return 0;
    return cli_check_store_exists(prog, url,
                                  "add --create, or add a job with 'lanes jobs', to make one");
}

/* The store's options: --wait-replicas N (a Redis store's WAIT after
 * each step that records outcomes, jobs.h ln_jobs_opts.wait_replicas).
 * 0, or a usage error. */
static int wait_opts(const wargs *a, ln_jobs_opts *jo) {
    ln_jobs_opts_init(jo);
    if (a->wait_replicas == NULL) return 0;
    unsigned long long n = 0;
    if (parse_u(a->wait_replicas, 0, 64, &n) != 0)
        return usage_error("--wait-replicas must be 0..64, not '%s'", a->wait_replicas);
    if (strncmp(a->url, "redis://", 8) != 0 && strncmp(a->url, "unix:", 5) != 0)
        return usage_error("%s", "--wait-replicas applies to a Redis store (redis://, unix:)");
    jo->wait_replicas = (unsigned)n;
    return 0;
}

/* ---- opening the store: a store not up yet is waited for */

static uint64_t mono_ms(void) {
    return ln_now_ns() / 1000000;
}

#define OPEN_BACKOFF_MIN_MS 100
#define OPEN_BACKOFF_MAX_MS 5000
#define OPEN_SAY_EVERY_MS 60000 /* a "still waiting" line */

static volatile sig_atomic_t g_open_signal; /* SIGTERM or SIGINT while waiting */

static void on_open_signal(int sig) {
    g_open_signal = sig;
}

/* Whether err from opening url may pass once the store is up: Redis not
 * reachable yet, or still loading its data. */
static int open_may_pass(const char *url, int err, const char *msg) {
    if (strncmp(url, "sqlite:", 7) == 0) return 0;
    return err == LN_ECONNREFUSED || err == LN_EIO || err == LN_ETIMEDOUT ||
           (err == LN_EBACKEND && strstr(msg, "LOADING") != NULL);
}

/* Open the store (url: with its secrets, shown: without), waiting for it
 * with backoff while it cannot be reached, unless --fail-fast. 0, or an
 * exit code. */
static int open_store(const wargs *a, const char *url, const char *shown, ln_jobs_opts *jo,
                      ln_jobs **jobs) {
    struct sigaction sa, old_term, old_int;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_open_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, &old_term);
    sigaction(SIGINT, &sa, &old_int);
    uint64_t since = mono_ms(), said = 0;
    unsigned backoff = OPEN_BACKOFF_MIN_MS;
    char msg[512];
    int err;
    while ((err = ln_jobs_open_ex(jobs, url, jo, msg, sizeof msg)) != 0) {
        if (a->fail_fast || !open_may_pass(url, err, msg) || g_open_signal != 0) break;
        uint64_t now = mono_ms();
        if (said == 0 || now - said >= OPEN_SAY_EVERY_MS) {
            said = now;
            cli_wlog("warn",
                     json_pack("{s:s,s:s,s:s,s:I}", "event", "store_wait", "queue", a->queue,
                               "error", ln_err_name(err), "waited_ms", (json_int_t)(now - since)),
                     "store %s not reachable (%s: %s); waiting for it, retrying with backoff "
                     "(--fail-fast to exit instead)",
                     shown, ln_err_name(err), msg);
        }
        for (unsigned slept = 0; slept < backoff && g_open_signal == 0; slept += 50) {
            struct timespec ts = {0, 50 * 1000000L};
            nanosleep(&ts, NULL);
        }
        backoff = backoff * 2 > OPEN_BACKOFF_MAX_MS ? OPEN_BACKOFF_MAX_MS : backoff * 2;
    }
    sigaction(SIGTERM, &old_term, NULL);
    sigaction(SIGINT, &old_int, NULL);
    if (err == 0 && said != 0) {
        json_int_t after = (json_int_t)(mono_ms() - since);
        cli_wlog(
            "info",
            json_pack("{s:s,s:s,s:I}", "event", "store_up", "queue", a->queue, "after_ms", after),
            "store %s is up after %lld ms", shown, (long long)after);
    }
    if (err == 0 && g_open_signal != 0) { /* stopped while waiting: nothing to run */
        ln_jobs_close(*jobs);
        err = LN_ESHUTDOWN;
    }
    if (err == LN_ESHUTDOWN || (err != 0 && g_open_signal != 0)) {
        cli_wlog("info", json_pack("{s:s,s:s}", "event", "stop", "queue", a->queue),
                 "stopped (signal %s) while waiting for the store",
                 g_open_signal == SIGINT ? "SIGINT" : "SIGTERM");
        return CLI_EXIT_OK;
    }
    if (err != 0)
        return cli_error(cli_jobs_open_exit(err), prog, ln_err_name(err), NULL,
                         "cannot open '%s': %s: %s", shown, ln_err_name(err), msg);
    return 0;
}

/* ---- the watch thread: says when the store is lost and regained */

typedef struct watch {
    ln_worker *w;
    unsigned retry_ms; /* how long the worker retries a lost store */
    atomic_int done;
    pthread_t th;
} watch;

/* The worker's counters say when a streak of store failures began
 * (store_lost) and ended (store_regained); both may have moved since the
 * last look, and then both lines are printed. */
static void *watch_main(void *arg) {
    watch *wt = arg;
    uint64_t lost = 0, regained = 0, lost_at = 0, unreplicated = 0;
    while (!atomic_load_explicit(&wt->done, memory_order_relaxed)) {
        ln_worker_stats st;
        ln_worker_get_stats(wt->w, &st);
        if (st.store_lost > lost) {
            lost = st.store_lost;
            lost_at = mono_ms();
            cli_wlog("warn",
                     json_pack("{s:s,s:i}", "event", "store_lost", "retry_ms", wt->retry_ms),
                     "lost the store; retrying for up to %u ms", wt->retry_ms);
        }
        if (st.store_regained > regained) {
            regained = st.store_regained;
            json_int_t after = (json_int_t)(mono_ms() - lost_at);
            cli_wlog("info", json_pack("{s:s,s:I}", "event", "store_regained", "after_ms", after),
                     "the store is back after %lld ms", (long long)after);
        }
        if (st.unreplicated > unreplicated) { /* --wait-replicas: at most a line a look */
            json_int_t n = (json_int_t)(st.unreplicated - unreplicated);
            unreplicated = st.unreplicated;
            cli_wlog("warn", json_pack("{s:s,s:I}", "event", "unreplicated", "outcomes", n),
                     "%lld outcomes are on the primary but WAIT did not confirm them on the "
                     "replicas (--wait-replicas): they may be lost if the primary fails now",
                     (long long)n);
        }
        struct timespec ts = {0, WATCH_MS * 1000000L};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

/* ---- the start and stop lines */

static void start_line(const wargs *a, const char *url, unsigned port) {
    const ln_worker_opts *o = &a->o;
    char timeout[32] = "none", metrics[128] = "";
    if (o->timeout_ms != 0) snprintf(timeout, sizeof timeout, "%u s", o->timeout_ms / 1000);
    if (a->metrics != NULL) {
        const char *colon = strrchr(a->metrics, ':');
        if (colon == NULL)
            snprintf(metrics, sizeof metrics, "http://127.0.0.1:%u/metrics", port);
        else
            snprintf(metrics, sizeof metrics, "http://%.*s:%u/metrics", (int)(colon - a->metrics),
                     a->metrics, port);
    }
    json_t *f = json_pack("{s:s,s:s,s:i,s:s,s:i,s:i}", "event", "start", "store", url,
                          "concurrency", (int)o->concurrency, "exec", a->argv[0], "timeout_ms",
                          (int)o->timeout_ms, "pid", (int)getpid());
    if (f != NULL) {
        json_object_set_new(f, "queue", json_string(a->queue));
        if (*metrics) json_object_set_new(f, "metrics", json_string(metrics));
        if (a->persistent) json_object_set_new(f, "persistent", json_true());
        if (o->metrics_max_points > 0)
            json_object_set_new(f, "metrics_points", json_integer(o->metrics_max_points));
    }
    char points[64] = "";
    if (o->metrics_max_points > 0)
        snprintf(points, sizeof points, ", per-minute metrics (%u points)", o->metrics_max_points);
    cli_wlog("info", f, "started: store %s, queue %s, concurrency %u, %s '%s', timeout %s%s%s%s",
             url, a->queue, o->concurrency, a->persistent ? "exec-persistent" : "exec", a->argv[0],
             timeout, *metrics ? ", metrics at " : "", metrics, points);
}

static void stop_line(const wargs *a, const ln_worker_stats *st, int err, uint64_t ms,
                      int no_start) {
    char why[64];
    if (err != 0)
        snprintf(why, sizeof why, "error");
    else if (no_start)
        snprintf(why, sizeof why, "cannot start CMD");
    else if (g_signal != 0)
        snprintf(why, sizeof why, "signal %s", g_signal == SIGINT ? "SIGINT" : "SIGTERM");
    else if (a->o.max_jobs != 0 && st->taken >= a->o.max_jobs)
        snprintf(why, sizeof why, "max-jobs");
    else
        snprintf(why, sizeof why, "exit-when-empty");
    json_t *f = json_pack("{s:s,s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "event", "stop", "why", why,
                          "taken", (json_int_t)st->taken, "completed", (json_int_t)st->completed,
                          "failed", (json_int_t)st->failed, "retried", (json_int_t)st->retried,
                          "stale", (json_int_t)st->stale, "released", (json_int_t)st->released,
                          "ms", (json_int_t)ms);
    if (f != NULL) json_object_set_new(f, "waited", json_integer((json_int_t)st->waited));
    if (f != NULL && err != 0) json_object_set_new(f, "error", json_string(ln_err_name(err)));
    cli_wlog(err != 0 ? "error" : "info", f,
             "stopped (%s) after %llu ms: %llu jobs done, %llu failed, %llu retried, %llu "
             "released",
             why, (unsigned long long)ms, (unsigned long long)st->completed,
             (unsigned long long)st->failed, (unsigned long long)st->retried,
             (unsigned long long)st->released);
}

/* The exit code of the run's error, by the table of `lanes jobs`
 * (cli_jobs_exit): 3 for a store that could not be used; any other error
 * is 1, the worker failed. Not 2: the command line was checked before the
 * run, so the library's LN_EINVAL now is no bad usage; not 4: a worker
 * looks no job up by id. */
static int exit_for_run(int err) {
    if (err == 0) return CLI_EXIT_OK;
    return cli_jobs_exit(err) == CLI_EXIT_UNAVAILABLE ? CLI_EXIT_UNAVAILABLE : CLI_EXIT_FAILURE;
}

/* Run w until it stops, with the watch thread and the signal handlers. */
static int run(const wargs *a, ln_jobs *jobs, ln_worker *w, ln_worker_stats *st,
               const cli_gate *g) {
    watch wt = {
        w, a->o.store_retry_ms != 0 ? a->o.store_retry_ms : LN_WORKER_STORE_RETRY_MS_DEFAULT, 0, 0};
    int watching = pthread_create(&wt.th, NULL, watch_main, &wt) == 0;
    g_worker = w;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    uint64_t t0 = mono_ms();
    int err = ln_worker_run(w);
    if (watching) {
        atomic_store_explicit(&wt.done, 1, memory_order_relaxed);
        pthread_join(wt.th, NULL);
    }
    ln_worker_get_stats(w, st);
    if (err != 0)
        cli_error(0, prog, ln_err_name(err), NULL, "%s: %s", ln_err_name(err),
                  ln_jobs_errmsg(jobs));
    stop_line(a, st, err, mono_ms() - t0, atomic_load(&g->gave_up));
    signal(SIGTERM, SIG_DFL);
    signal(SIGINT, SIG_DFL);
    g_worker = NULL;
    return err;
}

/* The pool the handlers run on: what ln_worker_create makes when given
 * none (one lane "jobs", one thread grown on demand up to concurrency),
 * made here so that /metrics can read its statistics. */
static int make_pool(ln_pool **pool, unsigned concurrency) {
    ln_pool_opts po;
    ln_pool_opts_init(&po);
    po.nlanes = 1;
    po.lanes[0] = (ln_lane_opts){"jobs", 1, concurrency, 10000, NULL, 0};
    return ln_pool_create(pool, &po);
}

/* With the store open and x made: pool, worker, metrics, run. The exit
 * code. */
static int serve_exec(wargs *a, ln_jobs *jobs, const char *shown_url, cli_exec *x,
                      cli_persist *pst) {
    ln_pool *pool = NULL;
    int err = make_pool(&pool, a->o.concurrency);
    if (err != 0)
        return cli_error(CLI_EXIT_FAILURE, prog, ln_err_name(err), NULL, "cannot start threads");
    a->o.pool = pool;
    a->o.lane = 0;
    ln_worker *w;
    if ((err = ln_worker_create(&w, jobs, a->queue, pst ? cli_persist_run : cli_exec_run,
                                pst ? (void *)pst : (void *)x, &a->o)) != 0) {
        ln_pool_destroy(pool);
        return cli_error(cli_jobs_exit(err), prog, ln_err_name(err), NULL, "%s: %s",
                         ln_err_name(err), ln_jobs_errmsg(jobs)); /* the table: EINVAL 2 */
    }
    x->gate.w = w;
    cli_wmetrics *m = NULL;
    unsigned port = 0;
    char why[512];
    if (a->metrics != NULL && cli_wmetrics_start(&m, a->metrics, a->queue, w, pool, x->hist, &port,
                                                 why, sizeof why) != 0) {
        ln_worker_destroy(w);
        ln_pool_destroy(pool);
        return cli_error(CLI_EXIT_USAGE, prog, "LN_EINVAL", NULL, "%s", why);
    }
    start_line(a, shown_url, port);
    ln_worker_stats st;
    err = run(a, jobs, w, &st, &x->gate);
    if (a->json)
        printf("{\"taken\":%llu,\"completed\":%llu,\"failed\":%llu,"
               "\"retried\":%llu,\"stale\":%llu,\"stalled_found\":%llu,"
               "\"released\":%llu,\"waited\":%llu,\"delayed\":%llu}\n",
               (unsigned long long)st.taken, (unsigned long long)st.completed,
               (unsigned long long)st.failed, (unsigned long long)st.retried,
               (unsigned long long)st.stale, (unsigned long long)st.stalled_found,
               (unsigned long long)st.released, (unsigned long long)st.waited,
               (unsigned long long)st.delayed);
    cli_wmetrics_stop(m); /* before the worker it reads goes */
    ln_worker_destroy(w);
    ln_pool_destroy(pool);
    if (err == 0 && atomic_load(&x->gate.gave_up)) return CLI_WORKER_EXIT_NO_START;
    return exit_for_run(err);
}

static int serve(wargs *a, ln_jobs *jobs, const char *shown_url) {
    cli_whist hist;
    memset(&hist, 0, sizeof hist);
    cli_exec x;
    memset(&x, 0, sizeof x);
    x.argv = a->argv;
    x.hist = &hist;
    x.kill_after_ms = a->kill_after_ms;
    x.url = a->url;
    x.jobs = jobs;
    x.max_data = (size_t)a->max_data;
    cli_gate_init(&x.gate, a->argv[0], a->o.concurrency, a->start_retry_ms);
    cli_persist *pst = NULL;
    if (a->persistent && cli_persist_create(&pst, a->argv, a->url, a->o.concurrency, x.max_data,
                                            x.kill_after_ms, &hist) != 0) {
        cli_gate_destroy(&x.gate);
        return cli_error(CLI_EXIT_FAILURE, prog, "LN_ENOMEM", NULL, "%s", "out of memory");
    }
    int rc = serve_exec(a, jobs, shown_url, &x, pst);
    cli_persist_destroy(pst); /* after the worker: its handlers returned */
    cli_gate_destroy(&x.gate);
    return rc;
}

/* Whether the command line names QUEUE and no URL ("lanes worker QUEUE
 * --exec ...") while $LANES_STORE names the store. */
static int needs_env_url(int argc, char **argv) {
    const char *env = getenv(CLI_STORE_ENV);
    if (env == NULL || *env == '\0' || argc < 2 || strncmp(argv[1], "--", 2) == 0) return 0;
    return argc == 2 || strncmp(argv[2], "--", 2) == 0;
}

/* argv with $LANES_STORE put in as URL: a new array of argc + 2 entries. */
static char **with_env_url(int argc, char **argv) {
    char **v = calloc((size_t)argc + 2, sizeof *v);
    if (v == NULL) return NULL;
    v[0] = argv[0];
    v[1] = getenv(CLI_STORE_ENV);
    memcpy(v + 2, argv + 1, (size_t)argc * sizeof *v); /* with argv's NULL */
    return v;
}

static int worker_main(int argc, char **argv);

int cmd_worker(int argc, char **argv) {
    /* --help anywhere before --exec (what follows --exec is CMD's). */
    for (int i = 1; i < argc && !is_exec(argv[i]); i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(usage_text, stdout);
            return CLI_EXIT_OK;
        }
    }
    prescan_json(argc, argv);
    if (argc < 3 && !needs_env_url(argc, argv)) {
        if (cli_err_is_json()) return usage_error("%s", "URL and QUEUE are required");
        fputs(usage_text, stderr);
        return CLI_EXIT_USAGE;
    }
    char **env_argv = NULL; /* URL QUEUE from $LANES_STORE and QUEUE */
    if (needs_env_url(argc, argv)) {
        if ((env_argv = with_env_url(argc, argv)) == NULL)
            return cli_error(CLI_EXIT_FAILURE, prog, "LN_ENOMEM", NULL, "out of memory");
        argv = env_argv;
        argc++;
    }
    int rc = worker_main(argc, argv);
    free(env_argv);
    return rc;
}

static int worker_main(int argc, char **argv) {
    wargs a;
    memset(&a, 0, sizeof a);
    a.url = argv[1];
    a.queue = argv[2];
    if (strncmp(a.url, "--", 2) == 0 || strncmp(a.queue, "--", 2) == 0)
        return usage_error("URL and QUEUE come first, not '%s'",
                           strncmp(a.url, "--", 2) == 0 ? a.url : a.queue);
    ln_worker_opts_init(&a.o);
    a.kill_after_ms = CLI_EXEC_KILL_AFTER_MS;
    int rc = parse_args(argc, argv, &a);
    if (rc != 0) return rc;
    cli_wlog_setup(a.log_format, a.verbose);
    cli_wlog_set_queue(a.queue);
    char why[PATH_MAX + 256];
    if (cli_exec_check(a.argv[0], why, sizeof why) != 0)
        return cli_error(CLI_EXIT_USAGE, prog, "LN_EINVAL", NULL, "%s", why);
    if ((rc = check_store_exists(a.url, a.create)) != 0) return rc;

    char shown[4096];
    cli_store_url_shown(shown, sizeof shown, a.url);
    ln_jobs *jobs;
    ln_jobs_opts jo;
    if ((rc = wait_opts(&a, &jo)) != 0) return rc;
    jo.max_data_size = (size_t)a.max_data;
    char *open_url = cli_store_url_resolve(a.url, why, sizeof why); /* a password file */
    if (open_url == NULL) return cli_error(CLI_EXIT_USAGE, prog, "LN_EINVAL", NULL, "%s", why);
    rc = open_store(&a, open_url, shown, &jo, &jobs);
    free(open_url);
    if (rc != 0 || g_open_signal != 0) return rc;
    if (ln_jobs_warning(jobs) != NULL) { /* the library never prints */
        if (a.log_format == CLI_LOG_JSON)
            cli_wlog("warn", NULL, "%s", ln_jobs_warning(jobs));
        else
            cli_warning("lanes", ln_jobs_warning(jobs));
    }
    rc = serve(&a, jobs, shown);
    ln_jobs_close(jobs);
    return rc;
}
