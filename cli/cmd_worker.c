/* cmd_worker.c - `lanes worker URL QUEUE ... --exec CMD [ARG...]`: run a
 * program once per job. The job's data goes to the program's stdin, its id,
 * name and attempt to the environment; exit 0 completes the job with stdout
 * as the return value, anything else fails it with the tail of stderr. The
 * program is started with posix_spawnp (no shell: job data can never be
 * interpreted as a command line) in its own process group, so a Ctrl-C
 * stops the worker gracefully instead of killing running jobs. */
#include "cli.h"

#include <lanes.h>
#include <lanes/jobs.h>

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define STDERR_TAIL 2048

static const char usage_text[] =
    "usage: lanes worker URL QUEUE [options] --exec CMD [ARG...]\n"
    "\n"
    "URL as for 'lanes jobs', e.g. sqlite:lanes.db.\n"
    "Runs CMD once per job of QUEUE: the job's data JSON on stdin, and\n"
    "LANES_JOB_ID, LANES_JOB_NAME, LANES_JOB_QUEUE, LANES_JOB_ATTEMPT (and\n"
    "TRACEPARENT when the job has one) in the environment. No shell is used.\n"
    "Exit 0 completes the job; stdout becomes its return value (JSON if it\n"
    "parses, else a JSON string). A non-zero exit, a signal or the timeout\n"
    "fails it with the tail of stderr as the reason (retried while the job\n"
    "has attempts left). SIGTERM or SIGINT stop the worker gracefully.\n"
    "\n"
    "options:\n"
    "  --concurrency N      jobs run at once (default 1)\n"
    "  --lease MS           job lease, renewed while CMD runs (default 30000)\n"
    "  --max-stalled N      lease lapses allowed before a job fails (default 1)\n"
    "  --stalled-interval MS  how often to look for lapsed leases (default:\n"
    "                       the lease)\n"
    "  --exit-when-empty    exit once the queue has nothing left to run\n"
    "  --max-jobs N         exit after taking N jobs\n"
    "  --timeout S          kill CMD after S seconds (fails the run)\n"
    "  --grace S            on SIGTERM, let running jobs finish for S seconds,\n"
    "                       then kill them and release the jobs (default 10)\n"
    "  --poll MS            longest sleep while the queue is empty (default 100)\n"
    "  --json               print the final counts as JSON on stdout\n"
    "\n"
    "exit codes: 0 stopped or done; 1 the worker failed; 2 bad command line;\n"
    "  3 the store could not be opened or used.\n";

typedef struct exec_ctx {
    char **argv;       /* CMD ARG... (NULL-terminated) */
    unsigned timeout_s;
} exec_ctx;

static ln_worker *g_worker; /* for the signal handler */

static void on_signal(int sig) {
    (void)sig;
    ln_worker_stop(g_worker); /* async-signal-safe */
}

static double mono_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

typedef struct buf {
    char *p;
    size_t len, cap;
} buf;

static int buf_add(buf *b, const char *s, size_t n) {
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n + 1) cap *= 2;
        char *p = realloc(b->p, cap);
        if (p == NULL) return -1;
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
    return 0;
}

/* Keep only the last STDERR_TAIL bytes of b. */
static void buf_tail(buf *b) {
    if (b->len <= STDERR_TAIL) return;
    memmove(b->p, b->p + b->len - STDERR_TAIL, STDERR_TAIL);
    b->len = STDERR_TAIL;
    b->p[b->len] = '\0';
}

/* Make text safe for a reason string: printable ASCII, newlines, tabs. */
static void sanitize(char *s) {
    for (unsigned char *p = (unsigned char *)s; *p; p++)
        if ((*p < 0x20 && *p != '\n' && *p != '\t') || *p >= 0x7f) *p = '?';
}

/* The child's environment: ours without stale LANES_JOB_* / TRACEPARENT,
 * plus this job's. Returns a malloc'd array whose added strings are in
 * 'extra' (freed by the caller). */
static char **make_env(ln_job *job, char extra[5][512]) {
    size_t n = 0;
    while (environ[n] != NULL) n++;
    char **env = malloc((n + 6) * sizeof *env);
    if (env == NULL) return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], "LANES_JOB_", 10) != 0 &&
            strncmp(environ[i], "TRACEPARENT=", 12) != 0)
            env[k++] = environ[i];
    snprintf(extra[0], 512, "LANES_JOB_ID=%s", ln_job_id(job));
    snprintf(extra[1], 512, "LANES_JOB_NAME=%s", ln_job_name(job));
    snprintf(extra[2], 512, "LANES_JOB_QUEUE=%s", ln_job_queue(job));
    snprintf(extra[3], 512, "LANES_JOB_ATTEMPT=%d", ln_job_attempt(job));
    for (int i = 0; i < 4; i++) env[k++] = extra[i];
    if (ln_job_traceparent(job) != NULL) {
        snprintf(extra[4], 512, "TRACEPARENT=%s", ln_job_traceparent(job));
        env[k++] = extra[4];
    }
    env[k] = NULL;
    return env;
}

static pid_t spawn(ln_job *job, exec_ctx *x, int in[2], int out[2],
                   int err[2], int *spawn_err) {
    char extra[5][512];
    char **env = make_env(job, extra);
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_adddup2(&fa, err[1], 2);
    posix_spawnattr_init(&at);
    /* Pool threads may block signals, and we ignore SIGPIPE: give the
     * child a clean mask and default dispositions, in its own group. */
    sigset_t none, dflt;
    sigemptyset(&none);
    sigemptyset(&dflt);
    sigaddset(&dflt, SIGPIPE);
    sigaddset(&dflt, SIGTERM);
    sigaddset(&dflt, SIGINT);
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setsigdefault(&at, &dflt);
    posix_spawnattr_setpgroup(&at, 0);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK |
                                      POSIX_SPAWN_SETSIGDEF |
                                      POSIX_SPAWN_SETPGROUP);
    pid_t pid = -1;
    *spawn_err = env == NULL ? ENOMEM
                             : posix_spawnp(&pid, x->argv[0], &fa, &at,
                                            x->argv, env);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    free(env);
    return *spawn_err == 0 ? pid : -1;
}

/* Store stdout as the result: JSON as is, other text as a JSON string. */
static int set_output(ln_job *job, buf *out) {
    while (out->len > 0 && (out->p[out->len - 1] == '\n' ||
                            out->p[out->len - 1] == '\r' ||
                            out->p[out->len - 1] == ' '))
        out->p[--out->len] = '\0';
    if (out->len == 0) return 0;
    json_t *v = json_loadb(out->p, out->len, JSON_DECODE_ANY, NULL);
    int rc;
    if (v != NULL) {
        json_decref(v);
        rc = ln_job_set_result(job, out->p);
    } else {
        json_t *s = json_stringn(out->p, out->len);
        if (s == NULL) { /* not UTF-8 */
            sanitize(out->p);
            s = json_stringn(out->p, out->len);
        }
        char *text = s ? json_dumps(s, JSON_ENCODE_ANY) : NULL;
        rc = text ? ln_job_set_result(job, text) : LN_ENOMEM;
        free(text);
        json_decref(s);
    }
    /* The text is valid JSON by now, so LN_EINVAL can only mean too large. */
    if (rc == LN_EINVAL)
        return ln_job_fail(job, "stdout is larger than the result size limit");
    return rc;
}

static int run_exec(ln_job *job, void *arg) {
    exec_ctx *x = arg;
    int in[2], out[2], err[2];
    if (pipe2(in, O_CLOEXEC) != 0) return ln_job_fail(job, "pipe failed");
    if (pipe2(out, O_CLOEXEC) != 0) {
        close(in[0]), close(in[1]);
        return ln_job_fail(job, "pipe failed");
    }
    if (pipe2(err, O_CLOEXEC) != 0) {
        close(in[0]), close(in[1]), close(out[0]), close(out[1]);
        return ln_job_fail(job, "pipe failed");
    }
    int serr;
    pid_t pid = spawn(job, x, in, out, err, &serr);
    close(in[0]), close(out[1]), close(err[1]);
    if (pid < 0) {
        close(in[1]), close(out[0]), close(err[0]);
        char reason[512];
        snprintf(reason, sizeof reason, "cannot run '%s': %s", x->argv[0],
                 strerror(serr));
        return ln_job_fail(job, reason);
    }
    fcntl(in[1], F_SETFL, O_NONBLOCK);
    const char *data = ln_job_data(job);
    size_t dlen = strlen(data), sent = 0;
    buf bo = {0}, be = {0};
    int fin = in[1], fout = out[0], ferr = err[0];
    double deadline = x->timeout_s ? mono_s() + x->timeout_s : 0;
    int timed_out = 0, killed = 0;
    if (dlen == 0) close(fin), fin = -1;
    while (fout >= 0 || ferr >= 0) {
        struct pollfd p[3] = {{fin, POLLOUT, 0}, {fout, POLLIN, 0},
                              {ferr, POLLIN, 0}};
        if (poll(p, 3, 100) < 0 && errno != EINTR) break;
        if (fin >= 0 && (p[0].revents & (POLLOUT | POLLERR | POLLHUP))) {
            ssize_t w = write(fin, data + sent, dlen - sent);
            if (w > 0) sent += (size_t)w;
            if ((w < 0 && errno != EAGAIN) || sent == dlen) close(fin), fin = -1;
        }
        char chunk[8192];
        int fds[2] = {fout, ferr};
        for (int i = 0; i < 2; i++) {
            if (fds[i] < 0 || !(p[i + 1].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            ssize_t r = read(fds[i], chunk, sizeof chunk);
            if (r > 0) {
                /* stdout beyond the result limit is dropped (the job then
                 * fails as too large); stderr keeps only its tail */
                if (i == 1 || bo.len <= LN_JOB_DATA_MAX_DEFAULT)
                    buf_add(i == 0 ? &bo : &be, chunk, (size_t)r);
                if (i == 1) buf_tail(&be);
            } else if (r == 0 || errno != EINTR) {
                close(fds[i]);
                if (i == 0) fout = -1; else ferr = -1;
            }
        }
        if (!killed && deadline > 0 && mono_s() > deadline) timed_out = 1;
        if (!killed && (timed_out || ln_job_canceled(job))) {
            kill(-pid, SIGKILL); /* its whole process group */
            killed = 1;
        }
        if (killed) break; /* a grandchild may hold the pipes open */
    }
    if (fin >= 0) close(fin);
    if (fout >= 0) close(fout);
    if (ferr >= 0) close(ferr);
    /* The child may outlive its pipes: the timeout and a cancel still
     * apply while we wait for it. */
    int status = 0;
    for (;;) {
        pid_t r = waitpid(pid, &status, killed ? 0 : WNOHANG);
        if (r == pid || (r < 0 && errno != EINTR)) break;
        if (r == 0) {
            if (deadline > 0 && mono_s() > deadline) timed_out = 1;
            if (timed_out || ln_job_canceled(job)) {
                kill(-pid, SIGKILL); /* its whole process group */
                killed = 1;
            } else {
                poll(NULL, 0, 10);
            }
        }
    }
    int rc;
    char reason[STDERR_TAIL + 128];
    if (be.p != NULL) {
        sanitize(be.p);
        while (be.len > 0 && (be.p[be.len - 1] == '\n' ||
                              be.p[be.len - 1] == ' '))
            be.p[--be.len] = '\0';
    }
    const char *tail = be.p ? be.p : "";
    if (timed_out) {
        snprintf(reason, sizeof reason, "timed out after %u s%s%s",
                 x->timeout_s, *tail ? ": " : "", tail);
        rc = ln_job_fail(job, reason);
    } else if (WIFSIGNALED(status)) {
        snprintf(reason, sizeof reason, "killed by signal %d (%s)%s%s",
                 WTERMSIG(status), strsignal(WTERMSIG(status)),
                 *tail ? ": " : "", tail);
        rc = ln_job_fail(job, reason);
    } else if (WEXITSTATUS(status) != 0) {
        snprintf(reason, sizeof reason, "exit status %d%s%s",
                 WEXITSTATUS(status), *tail ? ": " : "", tail);
        rc = ln_job_fail(job, reason);
    } else {
        rc = bo.p != NULL ? set_output(job, &bo) : 0;
    }
    free(bo.p);
    free(be.p);
    return rc;
}

static int usage_error(const char *fmt, const char *arg) {
    fprintf(stderr, "lanes worker: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n(see 'lanes worker --help')\n");
    return LN_EXIT_USAGE;
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

int cmd_worker(int argc, char **argv) {
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 ||
                      strcmp(argv[1], "-h") == 0)) {
        fputs(usage_text, stdout);
        return LN_EXIT_OK;
    }
    if (argc < 3) {
        fputs(usage_text, stderr);
        return LN_EXIT_USAGE;
    }
    const char *url = argv[1], *queue = argv[2];
    ln_worker_opts o;
    ln_worker_opts_init(&o);
    exec_ctx x = {NULL, 0};
    int json = 0;
    for (int i = 3; i < argc; i++) {
        const char *s = argv[i];
        unsigned long long v = 0;
        if (strcmp(s, "--exec") == 0) {
            if (i + 1 >= argc) return usage_error("%s", "--exec needs CMD");
            x.argv = argv + i + 1;
            break;
        }
        if (strcmp(s, "--exit-when-empty") == 0) {
            o.exit_when_empty = 1;
            continue;
        }
        if (strcmp(s, "--json") == 0) {
            json = 1;
            continue;
        }
        if (i + 1 >= argc || strncmp(s, "--", 2) != 0)
            return usage_error("unexpected argument '%s'", s);
        const char *val = argv[++i];
        /* Options with a number: name, bounds, scale, and where it goes. */
        static const struct {
            const char *name;
            unsigned long long lo, hi, scale;
            int field;
        } num[] = {
            {"--concurrency", 1, 4096, 1, 0},   {"--lease", 100, 86400000, 1, 1},
            {"--max-stalled", 0, 1000000, 1, 2}, {"--stalled-interval", 0, 86400000, 1, 3},
            {"--max-jobs", 1, UINT64_MAX, 1, 4}, {"--timeout", 1, 31536000, 1, 5},
            {"--grace", 0, 86400, 1000, 6},      {"--poll", 1, 60000, 1, 7},
        };
        size_t k = 0;
        while (k < sizeof num / sizeof num[0] && strcmp(s, num[k].name) != 0) k++;
        if (k == sizeof num / sizeof num[0])
            return usage_error("unknown option '%s'", s);
        if (parse_u(val, num[k].lo, num[k].hi, &v) != 0) {
            fprintf(stderr, "lanes worker: %s must be %llu..%llu, not '%s'\n",
                    s, num[k].lo, num[k].hi, val);
            return LN_EXIT_USAGE;
        }
        v *= num[k].scale;
        switch (num[k].field) {
        case 0: o.concurrency = (unsigned)v; break;
        case 1: o.lease_ms = (unsigned)v; break;
        case 2: o.max_stalled = (unsigned)v; break;
        case 3: o.stalled_interval_ms = (unsigned)v; break;
        case 4: o.max_jobs = v; break;
        case 5: x.timeout_s = (unsigned)v; break;
        case 6: o.grace_ms = (unsigned)v; break;
        default: o.poll_ms = (unsigned)v; break;
        }
    }
    if (x.argv == NULL) return usage_error("%s", "--exec CMD is required");

    ln_jobs *jobs;
    char msg[512];
    int err = ln_jobs_open_ex(&jobs, url, NULL, msg, sizeof msg);
    if (err != 0) {
        fprintf(stderr, "lanes worker: cannot open '%s': %s: %s\n", url,
                ln_err_name(err), msg);
        return err == LN_EINVAL ? LN_EXIT_USAGE : LN_EXIT_UNAVAILABLE;
    }
    if (ln_jobs_warning(jobs) != NULL) /* the library never prints */
        fprintf(stderr, "lanes: warning: %s\n", ln_jobs_warning(jobs));
    ln_worker *w;
    if ((err = ln_worker_create(&w, jobs, queue, run_exec, &x, &o)) != 0) {
        fprintf(stderr, "lanes worker: %s: %s\n", ln_err_name(err),
                ln_jobs_errmsg(jobs));
        ln_jobs_close(jobs);
        return err == LN_EINVAL ? LN_EXIT_USAGE : LN_EXIT_FAILURE;
    }
    g_worker = w;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    err = ln_worker_run(w);
    ln_worker_stats st;
    ln_worker_get_stats(w, &st);
    if (err != 0)
        fprintf(stderr, "lanes worker: %s: %s\n", ln_err_name(err),
                ln_jobs_errmsg(jobs));
    if (json)
        printf("{\"taken\":%llu,\"completed\":%llu,\"failed\":%llu,"
               "\"retried\":%llu,\"stale\":%llu,\"stalled_found\":%llu,"
               "\"released\":%llu}\n",
               (unsigned long long)st.taken, (unsigned long long)st.completed,
               (unsigned long long)st.failed, (unsigned long long)st.retried,
               (unsigned long long)st.stale,
               (unsigned long long)st.stalled_found,
               (unsigned long long)st.released);
    signal(SIGTERM, SIG_DFL);
    signal(SIGINT, SIG_DFL);
    g_worker = NULL;
    ln_worker_destroy(w);
    ln_jobs_close(jobs);
    if (err == 0) return LN_EXIT_OK;
    return err == LN_EBACKEND || err == LN_ECORRUPT || err == LN_EACCES ||
                   err == LN_EIO || err == LN_ENOSPC
               ? LN_EXIT_UNAVAILABLE
               : LN_EXIT_FAILURE;
}
