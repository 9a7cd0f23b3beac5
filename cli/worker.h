/* worker.h - the parts of `lanes worker` (docs/cli.md), shared by its files:
 *
 *   cmd_worker.c      the command line, the start and stop lines, the watch
 *                     of the store's outages
 *   worker_exec.c     running an --exec program once per job
 *   worker_fd3.c      the program's fd-3 channel (progress and log lines)
 *   worker_log.c      the worker's lines on stderr, as text or JSON
 *   worker_metrics.c  the Prometheus endpoint of --metrics
 */
#ifndef CLI_WORKER_H
#define CLI_WORKER_H

#include <lanes.h>
#include <lanes/jobs.h>

#include <jansson.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* ---- worker_log.c: every line the worker prints on stderr */

enum { CLI_LOG_TEXT = 0, CLI_LOG_JSON = 1 };

/* Set once, before any thread starts. */
void cli_wlog_setup(int format, int verbose);
int cli_wlog_format(void);
int cli_wlog_verbose(void);

/* One line on stderr: as text "lanes worker: MSG", or (CLI_LOG_JSON) one
 * JSON object {"ts":"2026-...Z","level":LEVEL,"msg":MSG, FIELDS...}.
 * fields (may be NULL) is stolen. Any thread: a line is written by one
 * stdio call, so lines of several threads never mix. */
void cli_wlog(const char *level, json_t *fields, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- worker_metrics.c: the run-time histogram and the /metrics server */

#define CLI_WHIST_BUCKETS 14
extern const double cli_whist_bounds[CLI_WHIST_BUCKETS]; /* seconds, rising */

/* Runs by duration. Handlers on several threads add to it while /metrics
 * reads it: each counter is its own relaxed atomic (a scrape may see a run
 * in 'count' and not yet in its bucket; the next one sees both). */
typedef struct cli_whist {
    atomic_uint_fast64_t bucket[CLI_WHIST_BUCKETS + 1]; /* last: +Inf */
    atomic_uint_fast64_t count;
    atomic_uint_fast64_t sum_ns;
} cli_whist;

void cli_whist_observe(cli_whist *h, uint64_t ns);

typedef struct cli_wmetrics cli_wmetrics;

/* Serve GET /metrics on addr ("PORT", "HOST:PORT" with an IPv4 HOST, or
 * "[IPV6]:PORT"; a bare PORT binds 127.0.0.1) from a thread of its own:
 * the worker's counters (ln_worker_get_stats), h, and the lanes of pool
 * (ln_pool_stats). w, pool and h must outlive the server. 0, or -1 with
 * the reason in why. *port gets the port bound (useful with port 0). */
int cli_wmetrics_start(cli_wmetrics **out, const char *addr, const char *queue, ln_worker *w,
                       ln_pool *pool, cli_whist *h, unsigned *port, char *why, size_t whysize);
/* Stop serving and free; NULL is a no-op. */
void cli_wmetrics_stop(cli_wmetrics *m);

/* ---- worker_fd3.c: the fd-3 channel of an --exec program */

/* Longest line the channel takes (its JSON text, without the newline);
 * longer lines are dropped as malformed. */
#define CLI_FD3_LINE_MAX (256 * 1024)

typedef struct cli_fd3 {
    char *line; /* the line being read (CLI_FD3_LINE_MAX + 1 bytes), lazily */
    size_t len;
    int too_long; /* the line being read is past CLI_FD3_LINE_MAX: drop it */
    int warned;   /* a malformed line was reported for this run */
} cli_fd3;

/* Bytes the program wrote to fd 3: each complete line is handled
 * (ln_job_progress / ln_job_log). On the job's handler thread. */
void cli_fd3_feed(cli_fd3 *c, ln_job *job, const char *bytes, size_t n);
/* fd 3 was closed: handle a last line without its newline, free c. */
void cli_fd3_end(cli_fd3 *c, ln_job *job);

/* ---- worker_exec.c: the handler that runs CMD once per job */

typedef struct cli_exec {
    char **argv; /* CMD ARG... (NULL-terminated) */
    /* Failed runs since the last completed one. Handlers run on several
     * pool threads: only the count itself is shared, so relaxed order is
     * enough (the line it triggers is printed by the thread that reached
     * FAIL_STREAK, and a completion racing with it only resets the count). */
    atomic_uint fail_streak;
    cli_whist *hist; /* run times, for /metrics */
    /* After the SIGTERM of a canceled, timed-out or stopped run, how long
     * before its group gets SIGKILL: --grace, else CLI_EXEC_KILL_AFTER_MS. */
    unsigned kill_after_ms;
    /* The store's URL as the worker was given it, handed to CMD as
     * LANES_STORE_URL (so it can add children of its job); NULL: none. */
    const char *url;
} cli_exec;

#define CLI_EXEC_KILL_AFTER_MS 2000

/* The ln_job_handler of `--exec` (arg: a cli_exec). */
int cli_exec_run(ln_job *job, void *arg);

/* Whether cmd can be run: found the way posix_spawnp finds it, a regular
 * file, executable. 0, or -1 with the reason in why. */
int cli_exec_check(const char *cmd, char *why, size_t whysize);

#endif
