/* worker_exec.c - the handler of `lanes worker --exec CMD [ARG...]`: run a
 * program once per job. The job's data goes to the program's stdin, its id,
 * name and attempt to the environment; exit 0 completes the job with stdout
 * as the return value, 75..78 have outcomes of their own (delay,
 * unrecoverable, rate limited, wait for children: EXIT_*), anything else
 * fails it with the tail of stderr. The
 * program is started with posix_spawnp (no shell: job data can never be
 * interpreted as a command line) in its own process group, so a Ctrl-C
 * stops the worker gracefully instead of killing running jobs. Its fd 3 is
 * the write end of a pipe the worker reads progress and log lines from
 * (worker_fd3.c).
 *
 * Before it takes a job the worker checks that CMD can be run (resolved
 * through PATH the way posix_spawnp does, cli_exec_check), so a typo exits 2
 * instead of failing every job of the queue; and a worker whose runs keep
 * failing says so once on stderr (FAIL_STREAK). Every run passes the gate
 * of worker_gate.c: a run that cannot start CMD for the worker's own fault
 * (out of descriptors, memory or processes; CMD gone) puts its job back
 * without using an attempt instead of failing it. */
#include "worker.h"

#include "jobs_flow.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define STDERR_TAIL 2048
/* After this many failed runs in a row (no completed run between them) the
 * worker prints one line on stderr: the queue is likely being emptied
 * into failed by a broken program. */
#define FAIL_STREAK 10
/* Longest part of a failure reason quoted in that line. */
#define STREAK_REASON_MAX 300

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

/* Keep only the last STDERR_TAIL bytes of b, less the continuation bytes
 * (at most 3) of a UTF-8 sequence the cut went through. */
static void buf_tail(buf *b) {
    if (b->len <= STDERR_TAIL) return;
    size_t from = b->len - STDERR_TAIL, skip = 0;
    while (skip < 3 && ((unsigned char)b->p[from + skip] & 0xc0) == 0x80) skip++;
    from += skip;
    memmove(b->p, b->p + from, b->len - from);
    b->len -= from;
    b->p[b->len] = '\0';
}

/* Append text[0..n) to out as valid UTF-8: well-formed sequences as they
 * are, each ill-formed one as one U+FFFD per maximal subpart (the
 * library's ln_utf8_bad, Unicode's recommended practice). With controls set (a failure
 * reason), ASCII control characters other than newline and tab become
 * '?'. 0, or -1 when out of memory. */
static int utf8_clean(buf *out, const char *text, size_t n, int controls) {
    const unsigned char *s = (const unsigned char *)text;
    size_t run = 0, i = 0; /* text[run..i) is copied as it is */
    while (i < n) {
        size_t k = ln_utf8_seq(text + i, n - i); /* lanes/jobs_text.h */
        int ctl =
            controls && k == 1 && ((s[i] < 0x20 && s[i] != '\n' && s[i] != '\t') || s[i] == 0x7f);
        if (k != 0 && !ctl) {
            i += k;
            continue;
        }
        if (buf_add(out, text + run, i - run) != 0) return -1;
        if (buf_add(out, ctl ? "?" : "\xef\xbf\xbd", ctl ? 1 : 3) != 0) return -1;
        i += ctl ? 1 : ln_utf8_bad(text + i, n - i);
        run = i;
    }
    return buf_add(out, text + run, i - run);
}

/* The child's environment: ours without stale LANES_JOB_*,
 * LANES_CHILDREN_FILE, LANES_STORE_URL and TRACEPARENT, plus this job's.
 * Returns a malloc'd array whose added strings are in 'extra' (freed by
 * the caller). */
static char **make_env(ln_job *job, const cli_exec *x, char extra[6][512],
                       const char *children_file) {
    size_t n = 0;
    while (environ[n] != NULL) n++;
    /* LANES_JOB_ID=<id> and LANES_STORE_URL=<url> follow the array in the
     * same block: any length */
    size_t idlen = strlen("LANES_JOB_ID=") + strlen(ln_job_id(job)) + 1;
    size_t urllen = x->url != NULL ? strlen("LANES_STORE_URL=") + strlen(x->url) + 1 : 0;
    char **env = malloc((n + 8) * sizeof *env + idlen + urllen);
    if (env == NULL) return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], "LANES_JOB_", 10) != 0 &&
            strncmp(environ[i], "LANES_CHILDREN_FILE=", 20) != 0 &&
            strncmp(environ[i], "LANES_STORE_URL=", 16) != 0 &&
            strncmp(environ[i], "TRACEPARENT=", 12) != 0)
            env[k++] = environ[i];
    char *id_env = (char *)(env + n + 8);
    snprintf(id_env, idlen, "LANES_JOB_ID=%s", ln_job_id(job));
    env[k++] = id_env;
    if (x->url != NULL) { /* for `lanes jobs "$LANES_STORE_URL" add --parent ...` */
        snprintf(id_env + idlen, urllen, "LANES_STORE_URL=%s", x->url);
        env[k++] = id_env + idlen;
    }
    snprintf(extra[1], 512, "LANES_JOB_NAME=%s", ln_job_name(job));
    snprintf(extra[2], 512, "LANES_JOB_QUEUE=%s", ln_job_queue(job));
    snprintf(extra[3], 512, "LANES_JOB_ATTEMPT=%d", ln_job_attempt(job));
    for (int i = 1; i < 4; i++) env[k++] = extra[i]; /* extra[0]: unused */
    if (ln_job_traceparent(job) != NULL) {
        snprintf(extra[4], 512, "TRACEPARENT=%s", ln_job_traceparent(job));
        env[k++] = extra[4];
    }
    if (children_file[0] != '\0') { /* a flow parent's children (jobs_flow.h) */
        snprintf(extra[5], 512, "LANES_CHILDREN_FILE=%.255s", children_file);
        env[k++] = extra[5];
    }
    env[k] = NULL;
    return env;
}

static pid_t spawn(ln_job *job, cli_exec *x, const int fds[4], int *spawn_err,
                   const char *children_file) {
    char extra[6][512];
    char **env = make_env(job, x, extra, children_file);
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    posix_spawn_file_actions_init(&fa);
    /* fds[] are the child's ends, all above 3 (pipes_open), so each
     * dup2 clears the close-on-exec flag of a copy and none overwrites an
     * end still to be copied. */
    for (int i = 0; i < 4; i++) posix_spawn_file_actions_adddup2(&fa, fds[i], i);
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
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
                                      POSIX_SPAWN_SETPGROUP);
    pid_t pid = -1;
    *spawn_err = env == NULL ? ENOMEM : posix_spawnp(&pid, x->argv[0], &fa, &at, x->argv, env);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    free(env);
    return *spawn_err == 0 ? pid : -1;
}

/* One run of CMD (on the job's handler thread). */
typedef struct run {
    cli_exec *x;
    pid_t pid;
    int fin, fout, ferr, f3; /* our ends of CMD's fds 0..3, -1 once closed */
    buf bo, be;              /* stdout, the tail of stderr */
    cli_fd3 c3;
    /* The worker cancels the run when it times out (ln_worker_opts and
     * ln_job_opts timeout_ms), is canceled or is stopped past its grace:
     * then the group gets SIGTERM at term_at, and SIGKILL
     * x->kill_after_ms later if it is still there. */
    double term_at;
    int killed;
    char reason[STREAK_REASON_MAX + 4]; /* of a failure, for --verbose */
    /* "delayed", "rate limited" (exit 75, 77), "waiting for children" or
     * "run again (no child pending)" (exit 78), or NULL */
    const char *put_back;
    int wait;               /* CMD exited EXIT_WAIT_CHILDREN */
    int start_err;          /* CMD could not be started, the worker's fault: errno */
    const char *start_what; /* what failed: "pipe", "spawn" or "exec" */
    uint64_t ticket;        /* of the gate's admission */
} run;

/* reason as one line: newlines become spaces, cut at STREAK_REASON_MAX
 * bytes (not inside a UTF-8 sequence, "..." then follows). */
static void one_line(char *shown, const char *reason) {
    size_t n = 0;
    for (const char *r = reason; *r && n < STREAK_REASON_MAX; r++)
        shown[n++] = *r == '\n' || *r == '\r' ? ' ' : *r;
    if (reason[n] != '\0') {
        while (n > 0 && ((unsigned char)reason[n] & 0xc0) == 0x80) n--;
        memcpy(shown + n, "...", 3);
        n += 3;
    }
    shown[n] = '\0';
}

/* A run failed with reason: count it toward FAIL_STREAK, then fail the
 * job. A run cut short because the worker is stopping does not count. */
static int fail_run(ln_job *job, run *r, const char *reason) {
    cli_exec *x = r->x;
    one_line(r->reason, reason);
    if (!ln_job_canceled(job) &&
        atomic_fetch_add_explicit(&x->fail_streak, 1, memory_order_relaxed) + 1 == FAIL_STREAK) {
        cli_wlog("warn",
                 json_pack("{s:i,s:s,s:s}", "failed_in_a_row", FAIL_STREAK, "exec", x->argv[0],
                           "latest", reason),
                 "the last %d runs of '%s' all failed (the latest: %s); still taking jobs",
                 FAIL_STREAK, x->argv[0], r->reason);
    }
    return ln_job_fail(job, reason);
}

/* A run completed: the streak of failures is over. */
static void run_completed(cli_exec *x) {
    atomic_store_explicit(&x->fail_streak, 0, memory_order_relaxed);
}

/* Check the file posix_spawnp would run for cmd: it exists, is a regular
 * file and we may execute it. 0, or -1 with the reason in why. */
static int check_file(const char *path, const char *cmd, char *why, size_t whysize) {
    struct stat st;
    if (stat(path, &st) != 0) {
        snprintf(why, whysize, "cannot run '%s': %s", cmd, strerror(errno));
        return -1;
    }
    if (S_ISDIR(st.st_mode)) {
        snprintf(why, whysize, "cannot run '%s': it is a directory", cmd);
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(why, whysize, "cannot run '%s': not a regular file", cmd);
        return -1;
    }
    if (access(path, X_OK) != 0) {
        snprintf(why, whysize, "cannot run '%s': not executable (%s)", cmd, strerror(errno));
        return -1;
    }
    return 0;
}

/* Whether CMD can be run: a name with a '/' is a path; any other name is
 * looked up in each directory of PATH in turn (an empty entry is the
 * current directory; no PATH: /bin:/usr/bin), as execvp and posix_spawnp
 * do. 0, or -1 with the reason in why. Runs before any thread starts. */
int cli_exec_check(const char *cmd, char *why, size_t whysize) {
    if (*cmd == '\0') {
        snprintf(why, whysize, "the program name given to --exec is empty");
        return -1;
    }
    if (strchr(cmd, '/') != NULL) return check_file(cmd, cmd, why, whysize);
    const char *path = getenv("PATH");
    if (path == NULL) path = "/bin:/usr/bin";
    int refused = 0; /* a file of that name was found, but cannot run */
    char full[PATH_MAX], msg[PATH_MAX + 128];
    for (const char *dir = path;;) {
        const char *end = strchrnul(dir, ':');
        int n = (int)(end - dir);
        int len = n == 0 ? snprintf(full, sizeof full, "%s", cmd)
                         : snprintf(full, sizeof full, "%.*s/%s", n, dir, cmd);
        if (len > 0 && (size_t)len < sizeof full) {
            struct stat st;
            if (stat(full, &st) == 0) {
                /* The first refusal is the one reported. */
                char *dst = refused ? msg : why;
                if (check_file(full, full, dst, refused ? sizeof msg : whysize) == 0) return 0;
                refused = 1;
            }
        }
        if (*end == '\0') break;
        dir = end + 1;
    }
    if (!refused) snprintf(why, whysize, "cannot run '%s': not found in PATH (%s)", cmd, path);
    return -1;
}

/* Store stdout as the result: JSON as is, other text as a JSON string. */
static int set_output(ln_job *job, run *x, buf *out) {
    /* The result is handed on as a C string: a NUL byte would cut it. */
    if (memchr(out->p, '\0', out->len) != NULL)
        return fail_run(job, x, "stdout contains a NUL byte");
    while (out->len > 0 && (out->p[out->len - 1] == '\n' || out->p[out->len - 1] == '\r' ||
                            out->p[out->len - 1] == ' '))
        out->p[--out->len] = '\0';
    if (out->len == 0) return 0;
    /* JSON is what the store takes as JSON (RFC 8259, as JSON.parse reads
     * it: numbers past 64 bits, lone surrogate escapes), stored as printed;
     * a refusal (not JSON, or too large) has no effect on the job. */
    int rc = ln_job_set_result(job, out->p);
    size_t stored = out->len; /* bytes of the JSON text given to the store */
    if (rc == LN_EINVAL) {
        json_t *s = json_stringn(out->p, out->len);
        if (s == NULL) { /* not UTF-8: replace only what is not */
            buf clean = {0};
            if (utf8_clean(&clean, out->p, out->len, 0) == 0)
                s = json_stringn(clean.p ? clean.p : "", clean.len);
            free(clean.p);
        }
        char *text = s ? json_dumps(s, JSON_ENCODE_ANY) : NULL;
        rc = text ? ln_job_set_result(job, text) : LN_ENOMEM;
        stored = text ? strlen(text) : 0;
        free(text);
        json_decref(s);
    }
    if (rc == LN_EINVAL && stored > x->x->max_data) {
        char reason[160];
        snprintf(reason, sizeof reason,
                 "stdout is larger than the result size limit of %zu bytes (--max-data-size)",
                 x->x->max_data);
        return fail_run(job, x, reason);
    }
    if (rc == LN_EINVAL) return fail_run(job, x, "stdout was refused as a result by the store");
    return rc;
}

/* ---- one run */

/* Four pipes, CMD's fds 0..3: child[i] is CMD's end of fd i, parent[i]
 * ours. All are close-on-exec (other runs' children must not inherit
 * them); CMD's ends are moved above 3 so that spawn's dup2 onto 0..3 never
 * overwrites one before it is copied. 0, or -1 with errno set and nothing
 * left open. */
static int pipes_open(int child[4], int parent[4]) {
    int n = 0;
    for (; n < 4; n++) {
        int p[2];
        if (pipe2(p, O_CLOEXEC) != 0) break;
        child[n] = p[n == 0 ? 0 : 1];
        parent[n] = p[n == 0 ? 1 : 0];
        if (child[n] <= 3) {
            int moved = fcntl(child[n], F_DUPFD_CLOEXEC, 4);
            close(child[n]);
            child[n] = moved;
            if (moved < 0) {
                close(parent[n]);
                break;
            }
        }
    }
    if (n == 4) return 0;
    int err = errno; /* the caller tells the worker's faults by it */
    for (int i = 0; i < n; i++) close(child[i]), close(parent[i]);
    errno = err;
    return -1;
}

static void close_fd(int *fd) {
    if (*fd >= 0) close(*fd);
    *fd = -1;
}

/* Feed stdin, read stdout, stderr and fd 3 until CMD (and whatever holds
 * its ends) closed them, or the run is canceled. */
static void pump(run *r, ln_job *job) {
    const char *data = ln_job_data(job);
    size_t dlen = strlen(data), sent = 0;
    if (dlen == 0) close_fd(&r->fin);
    while (r->fout >= 0 || r->ferr >= 0 || r->f3 >= 0) {
        struct pollfd p[4] = {
            {r->fin, POLLOUT, 0}, {r->fout, POLLIN, 0}, {r->ferr, POLLIN, 0}, {r->f3, POLLIN, 0}};
        if (poll(p, 4, 100) < 0 && errno != EINTR) break;
        if (r->fin >= 0 && (p[0].revents & (POLLOUT | POLLERR | POLLHUP))) {
            ssize_t w = write(r->fin, data + sent, dlen - sent);
            if (w > 0) sent += (size_t)w;
            if ((w < 0 && errno != EAGAIN) || sent == dlen) close_fd(&r->fin);
        }
        char chunk[8192];
        int *fds[3] = {&r->fout, &r->ferr, &r->f3};
        for (int i = 0; i < 3; i++) {
            if (*fds[i] < 0 || !(p[i + 1].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            ssize_t n = read(*fds[i], chunk, sizeof chunk);
            if (n > 0 && i == 2) {
                cli_fd3_feed(&r->c3, job, chunk, (size_t)n);
            } else if (n > 0) {
                /* stdout beyond the result limit is dropped (the job then
                 * fails as too large); stderr keeps only its tail */
                if (i == 1 || r->bo.len <= r->x->max_data)
                    buf_add(i == 0 ? &r->bo : &r->be, chunk, (size_t)n);
                if (i == 1) buf_tail(&r->be);
            } else if (n == 0 || errno != EINTR) {
                close_fd(fds[i]);
            }
        }
        if (ln_job_canceled(job)) {
            kill(-r->pid, SIGTERM); /* its whole process group */
            r->term_at = mono_s();
            break; /* a grandchild may hold the pipes open */
        }
    }
    close_fd(&r->fin);
    close_fd(&r->fout);
    close_fd(&r->ferr);
    close_fd(&r->f3);
}

/* Wait for CMD: it may outlive its pipes, so a cancel still applies. */
static int reap(run *r, ln_job *job) {
    int status = 0;
    for (;;) {
        pid_t got = waitpid(r->pid, &status, WNOHANG);
        if (got == r->pid || (got < 0 && errno != EINTR)) break;
        if (got != 0) continue;
        if (r->term_at == 0 && ln_job_canceled(job)) {
            kill(-r->pid, SIGTERM);
            r->term_at = mono_s();
        }
        if (r->term_at > 0 && !r->killed && mono_s() >= r->term_at + r->x->kill_after_ms / 1000.0) {
            kill(-r->pid, SIGKILL);
            r->killed = 1;
        }
        poll(NULL, 0, 10);
    }
    /* What is left of a canceled run's group (children of CMD that
     * outlived it, or ignored SIGTERM) goes too. */
    if (r->term_at > 0) kill(-r->pid, SIGKILL);
    return status;
}

/* The exit codes with an outcome of their own (docs/cli.md "lanes
 * worker"): EXIT_DELAY puts the job back to delayed, without using an
 * attempt, until the time stdout names ({"delay_until": MS since the
 * epoch} or {"delay_ms": N}); EXIT_UNRECOVERABLE fails it without retries;
 * EXIT_RATE_LIMITED puts it back to waiting, without using an attempt,
 * and rate limits the queue for the ms stdout names ({"rate_limit_ms": N};
 * empty stdout: 0). */
#define EXIT_DELAY 75
#define EXIT_UNRECOVERABLE 76
#define EXIT_RATE_LIMITED 77
/* EXIT_WAIT_CHILDREN: the job waits for its children (ln_job_wait_children:
 * to waiting-children, no attempt used, nothing recorded for the run);
 * with no child pending CMD runs again at once, as a handler goes on past
 * a wait that says 0 (see wait_children). */
#define EXIT_WAIT_CHILDREN 78
/* Runs of CMD one take of the job makes at most, each ending in
 * EXIT_WAIT_CHILDREN with no child pending, before the job fails: a
 * program that exits 78 without adding children would else run for good. */
#define WAIT_RUNS_MAX 10

static int64_t wall_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int special_exit(ln_job *job, run *r, int code, const char *tail) {
    char reason[3 * STDERR_TAIL + 128];
    if (code == EXIT_UNRECOVERABLE) {
        snprintf(reason, sizeof reason, "exit status %d (unrecoverable)%s%s", code,
                 *tail ? ": " : "", tail);
        (void)fail_run(job, r, reason);
        return ln_job_fail_unrecoverable(job, reason);
    }
    const buf *out = &r->bo;
    json_t *doc = out->p ? json_loadb(out->p, out->len, JSON_DECODE_ANY, NULL) : NULL;
    if (code == EXIT_RATE_LIMITED) {
        json_t *ms = json_object_get(doc, "rate_limit_ms");
        int ok = out->p == NULL || out->len == 0 ||
                 (json_is_integer(ms) && json_integer_value(ms) >= 0 &&
                  json_integer_value(ms) <= INT32_MAX);
        int64_t n = ok && ms != NULL ? json_integer_value(ms) : 0;
        json_decref(doc);
        if (ok) r->put_back = "rate limited";
        if (ok) return ln_job_rate_limited(job, n);
        snprintf(reason, sizeof reason,
                 "exit status %d (rate limited) with stdout other than {\"rate_limit_ms\": "
                 "0..2147483647}%s%s",
                 code, *tail ? ": " : "", tail);
        return fail_run(job, r, reason);
    }
    json_t *until = json_object_get(doc, "delay_until"), *in = json_object_get(doc, "delay_ms");
    int64_t at = -1;
    if (json_is_integer(until) && json_integer_value(until) >= 0)
        at = json_integer_value(until);
    else if (json_is_integer(in) && json_integer_value(in) >= 0 &&
             json_integer_value(in) <= INT64_MAX / 2)
        at = wall_ms() + json_integer_value(in);
    json_decref(doc);
    if (at >= 0) r->put_back = "delayed";
    if (at >= 0) return ln_job_delay_until(job, at);
    snprintf(reason, sizeof reason,
             "exit status %d (delay) without {\"delay_until\": MS} or {\"delay_ms\": N} "
             "on stdout%s%s",
             code, *tail ? ": " : "", tail);
    return fail_run(job, r, reason);
}

/* A run that failed while CMD can no longer be run (a deploy removed it
 * as it started: a script's interpreter then fails to open it) says
 * nothing about its job: the worker's fault, as if it had not started. */
static int cmd_gone(run *r) {
    char why[256];
    errno = 0;
    if (cli_exec_check(r->x->argv[0], why, sizeof why) == 0) return 0;
    int e = errno; /* stat's; 0 for a file that is no longer executable */
    r->start_err = e != 0 && cli_gate_is_fault(e) ? e : e == 0 ? EACCES : ENOENT;
    r->start_what = "exec";
    return 1;
}

/* The job's outcome from CMD's exit status, stdout and stderr. */
static int outcome(run *r, ln_job *job, int status) {
    int rc;
    /* Each invalid byte of the tail may become a 3-byte U+FFFD. */
    char reason[3 * STDERR_TAIL + 128];
    buf ce = {0}; /* the tail of stderr as valid UTF-8 */
    if (r->be.p != NULL && utf8_clean(&ce, r->be.p, r->be.len, 1) == 0 && ce.p != NULL) {
        while (ce.len > 0 && (ce.p[ce.len - 1] == '\n' || ce.p[ce.len - 1] == ' '))
            ce.p[--ce.len] = '\0';
    }
    const char *tail = ce.p ? ce.p : "";
    if (r->term_at > 0) { /* the worker recorded the outcome already */
        rc = fail_run(job, r, "canceled");
    } else if (WIFSIGNALED(status)) {
        snprintf(reason, sizeof reason, "killed by signal %d (%s)%s%s", WTERMSIG(status),
                 strsignal(WTERMSIG(status)), *tail ? ": " : "", tail);
        rc = fail_run(job, r, reason);
    } else if (WEXITSTATUS(status) == EXIT_WAIT_CHILDREN) {
        r->wait = 1; /* stdout and stderr are dropped: nothing is recorded */
        rc = 0;
    } else if (WEXITSTATUS(status) == EXIT_DELAY || WEXITSTATUS(status) == EXIT_UNRECOVERABLE ||
               WEXITSTATUS(status) == EXIT_RATE_LIMITED) {
        rc = special_exit(job, r, WEXITSTATUS(status), tail);
    } else if (WEXITSTATUS(status) != 0 && cmd_gone(r)) {
        rc = 0; /* cli_exec_run puts the job back */
    } else if (WEXITSTATUS(status) != 0) {
        snprintf(reason, sizeof reason, "exit status %d%s%s", WEXITSTATUS(status),
                 *tail ? ": " : "", tail);
        rc = fail_run(job, r, reason);
    } else {
        rc = r->bo.p != NULL ? set_output(job, r, &r->bo) : 0;
        if (rc == 0) run_completed(r->x);
    }
    free(ce.p);
    return rc;
}

/* --verbose: one line per run (worker_log.c). */
static void job_line(const run *r, ln_job *job, int rc, uint64_t ns) {
    const char *what = r->term_at > 0        ? "canceled"
                       : rc != 0             ? "failed"
                       : r->put_back != NULL ? r->put_back
                                             : "completed";
    int with_reason = rc != 0 && r->term_at == 0;
    int for_good = with_reason && (strstr(r->reason, "(unrecoverable)") != NULL ||
                                   strstr(r->reason, "cannot complete") != NULL);
    cli_wlog_run(r->x->jobs, job, what, with_reason ? r->reason : NULL, for_good,
                 (long long)(ns / 1000000));
}

/* CMD exited EXIT_WAIT_CHILDREN on its run number 'runs' of this take:
 * move the job to waiting-children. Returns the handler's return value;
 * *again = 1 when no child is pending and CMD is to run again now (the
 * job stays active: its children are all done, so the next run sees
 * them, in LANES_CHILDREN_FILE, as it would after a wait). */
static int wait_children(ln_job *job, run *r, int runs, int *again) {
    char reason[256];
    *again = 0;
    int rc = ln_job_wait_children(job);
    if (rc == 1) {
        r->put_back = "waiting for children";
        run_completed(r->x);
        return 0;
    }
    if (rc == 0 && ln_job_canceled(job)) return fail_run(job, r, "canceled");
    if (rc == 0 && runs < WAIT_RUNS_MAX) {
        r->put_back = "run again (no child pending)";
        *again = 1;
        return 0;
    }
    if (rc == 0) {
        snprintf(reason, sizeof reason,
                 "exit status %d (wait for children) %d runs in a row with no child pending",
                 EXIT_WAIT_CHILDREN, runs);
        return fail_run(job, r, reason);
    }
    if (rc == LN_EFAILED) { /* it can never complete: no retry */
        snprintf(reason, sizeof reason,
                 "exit status %d (wait for children): a child failed with "
                 "fail_parent_on_failure, so job %.100s cannot complete",
                 EXIT_WAIT_CHILDREN, ln_job_id(job));
        (void)fail_run(job, r, reason);
        return ln_job_fail_unrecoverable(job, reason);
    }
    snprintf(reason, sizeof reason, "exit status %d (wait for children): cannot wait: %s (%s)",
             EXIT_WAIT_CHILDREN, ln_err_name(rc), ln_strerror(rc));
    return fail_run(job, r, reason);
}

/* One run of CMD for job, to its outcome (r->wait: it asked to wait). */
static int run_once(run *r, ln_job *job) {
    int child[4], parent[4], serr;
    if (pipes_open(child, parent) != 0) {
        if (cli_gate_is_fault(errno)) { /* cli_exec_run puts the job back */
            r->start_err = errno, r->start_what = "pipe";
            return 0;
        }
        char reason[160];
        snprintf(reason, sizeof reason, "pipe failed: %s", strerror(errno));
        return fail_run(job, r, reason);
    }
    r->fin = parent[0], r->fout = parent[1], r->ferr = parent[2], r->f3 = parent[3];
    char cf[256]; /* fits extra[5] with its name */
    cli_jobs_children_file(job, cf, sizeof cf);
    r->pid = spawn(job, r->x, child, &serr, cf);
    if (cf[0] != '\0' && r->pid < 0) unlink(cf);
    if (r->pid >= 0) cli_gate_started(&r->x->gate, r->ticket);
    for (int i = 0; i < 4; i++) close(child[i]);
    if (r->pid < 0) {
        close_fd(&r->fin), close_fd(&r->fout), close_fd(&r->ferr), close_fd(&r->f3);
        if (cli_gate_is_fault(serr)) {
            r->start_err = serr, r->start_what = "spawn";
            return 0;
        }
        char reason[512];
        snprintf(reason, sizeof reason, "cannot run '%s': %s", r->x->argv[0], strerror(serr));
        return fail_run(job, r, reason);
    }
    fcntl(r->fin, F_SETFL, O_NONBLOCK);
    pump(r, job);
    int status = reap(r, job);
    if (cf[0] != '\0') unlink(cf);
    cli_fd3_end(&r->c3, job);
    return outcome(r, job, status);
}

/* Run CMD once past the gate (worker_gate.c). When it has no place, or
 * CMD cannot be started for the worker's fault, the job is held (the
 * worker renews its lease) and tried again past the backoff: a put-back
 * would be a new take, counted by --max-started-attempts. It goes back to
 * delayed (due when the backoff ends, no attempt used) only when the
 * worker gives up (--start-retry) or the job is canceled or the worker
 * stops. */
static int gated_run(run *r, ln_job *job) {
    cli_gate *g = &r->x->gate;
    int64_t delay = 0;
    while (cli_gate_enter(g, job, &delay, &r->ticket)) {
        int rc = run_once(r, job);
        if (r->start_err == 0) {
            cli_gate_leave(g, r->ticket, 1);
            return rc;
        }
        (void)cli_gate_fault(g, r->start_err, r->start_what);
        cli_gate_leave(g, r->ticket, 0);
        free(r->bo.p); /* a fresh run for the next try */
        free(r->be.p);
        *r = (run){.x = r->x, .fin = -1, .fout = -1, .ferr = -1, .f3 = -1};
    }
    r->put_back = "put back (cannot start)";
    return ln_job_delay_until(job, wall_ms() + delay);
}

int cli_exec_run(ln_job *job, void *arg) {
    for (int runs = 1;; runs++) {
        run r = {.x = arg, .fin = -1, .fout = -1, .ferr = -1, .f3 = -1};
        uint64_t t0 = ln_now_ns();
        int again = 0, rc = gated_run(&r, job);
        if (rc == 0 && r.wait) rc = wait_children(job, &r, runs, &again);
        uint64_t ns = ln_now_ns() - t0;
        if (r.x->hist != NULL) cli_whist_observe(r.x->hist, ns);
        if (cli_wlog_verbose()) job_line(&r, job, rc, ns);
        free(r.bo.p);
        free(r.be.p);
        if (!again) return rc;
    }
}
