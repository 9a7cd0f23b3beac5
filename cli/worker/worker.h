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
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* ---- worker_log.c: every line the worker prints on stderr */

enum { CLI_LOG_TEXT = 0, CLI_LOG_JSON = 1 };

/* Set once, before any thread starts. */
void cli_wlog_setup(int format, int verbose);
int cli_wlog_format(void);
int cli_wlog_verbose(void);
/* The queue every JSON line names ("queue"); set before any thread starts. */
void cli_wlog_set_queue(const char *queue);
/* The worker is stopping (SIGTERM, SIGINT): runs cut short from now on are
 * jobs handed back (released), not canceled. Async-signal-safe. */
void cli_wlog_stopping(void);
int cli_wlog_is_stopping(void);

/* The --verbose line of a run of job: outcome ("completed", "failed",
 * "canceled", "delayed", ...), reason (NULL: none) and its time. A failure
 * says "failed in T ms, retry N/M in D ms" or "failed in T ms, for good"
 * (for_good: the run asked for no retry), as the job's attempts and
 * backoff in the store (jobs) say. On the job's handler thread. */
void cli_wlog_run(ln_jobs *jobs, ln_job *job, const char *outcome, const char *reason, int for_good,
                  long long ms);

/* One line on stderr: as text "2026-...Z lanes worker: MSG" (the time in
 * RFC 3339 UTC with ms), or (CLI_LOG_JSON) one JSON object
 * {"ts":"2026-...Z","level":LEVEL,"msg":MSG,"queue":Q, FIELDS...}.
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

/* ---- worker_gate.c: starting CMD while the worker itself is short of
 * something (descriptors, memory, processes) or CMD is gone */

/* The exit code of a worker that could not start CMD for --start-retry. */
#define CLI_WORKER_EXIT_NO_START 5
/* --start-retry's default: a minute. */
#define CLI_GATE_GIVE_UP_MS 60000
/* Backoff between tries to start CMD after a fault: doubling, bounded. */
#define CLI_GATE_BACKOFF_MIN_MS 100
#define CLI_GATE_BACKOFF_MAX_MS 5000
/* Longest a job waits in the gate for a place before it is put back. */
#define CLI_GATE_HOLD_MS 1000

/* Every run of CMD passes the gate. It admits at most 'limit' runs at
 * once (the concurrency, lowered when starting one ran out of file
 * descriptors), none during a backoff, and only one at a time (the probe)
 * during a streak of faults until one starts CMD. A job that finds no place is held
 * until it has one (no new take); put back (ln_job_delay_until: no attempt used) only
 * when the worker gives up or stops. Handlers call it from several
 * pool threads: all fields are under mu. */
typedef struct cli_gate {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    const char *cmd;     /* CMD, for the lines it prints */
    unsigned limit;      /* runs at once, 1..concurrency */
    unsigned conc;       /* the concurrency asked for */
    unsigned running;    /* runs admitted and not over */
    int probe;           /* a run admitted during a streak has not started yet */
    int lifted;          /* one admitted during the streak started CMD: the
                            one-at-a-time rule is off until the next fault */
    uint64_t until;      /* monotonic ms before which nothing starts */
    uint64_t since;      /* monotonic ms of the streak's first fault; 0 none */
    unsigned backoff;    /* ms, during a streak */
    uint64_t put_back;   /* jobs put back during the streak */
    uint64_t said;       /* monotonic ms of the last streak line, 0 never */
    int said_streak;     /* this streak has its line (so it gets an end line) */
    unsigned give_up_ms; /* --start-retry; 0: never */
    atomic_int gave_up;
    ln_worker *w; /* stopped on giving up (set before it runs) */
} cli_gate;

void cli_gate_init(cli_gate *g, const char *cmd, unsigned concurrency, unsigned give_up_ms);
void cli_gate_destroy(cli_gate *g);
/* Wait for a place to run CMD for job, holding it, as long as it takes.
 * 1: admitted, *ticket set (then cli_gate_started or cli_gate_fault, and
 * cli_gate_leave); 0: the worker gave up or the job was canceled: put it
 * back, *delay_ms from now. */
int cli_gate_enter(cli_gate *g, ln_job *job, int64_t *delay_ms, uint64_t *ticket);
/* CMD started for the run admitted with ticket: during a streak of
 * faults that began before it was admitted, others may start again. */
void cli_gate_started(cli_gate *g, uint64_t ticket);
/* The run admitted with ticket is over; ok: without a fault (a streak
 * that began before it was admitted is then over, said in a line). */
void cli_gate_leave(cli_gate *g, uint64_t ticket, int ok);
/* Whether errno err, met starting CMD, is the worker's fault (short of a
 * resource, CMD gone or not runnable) rather than the job's. */
int cli_gate_is_fault(int err);
/* An admitted run could not start CMD (what: "pipe", "spawn"; err:
 * errno): counts the fault, backs off, may lower the limit or give up
 * (stopping the worker). Returns the delay in ms to put the job back by.
 * cli_gate_leave follows. */
int64_t cli_gate_fault(cli_gate *g, int err, const char *what);

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
    ln_jobs *jobs;   /* the worker's store, for the lines of --verbose */
    size_t max_data; /* the store's max_data_size: most bytes of stdout */
    cli_gate gate;   /* starting CMD (worker_gate.c) */
} cli_exec;

#define CLI_EXEC_KILL_AFTER_MS 2000

/* The ln_job_handler of `--exec` (arg: a cli_exec). */
int cli_exec_run(ln_job *job, void *arg);

/* Whether cmd can be run: found the way posix_spawnp finds it, a regular
 * file, executable. 0, or -1 with the reason in why. */
int cli_exec_check(const char *cmd, char *why, size_t whysize);

#endif
