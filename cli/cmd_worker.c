/* cmd_worker.c - `lanes worker URL QUEUE ... --exec CMD [ARG...]`: run a
 * program once per job. The job's data goes to the program's stdin, its id,
 * name and attempt to the environment; exit 0 completes the job with stdout
 * as the return value, anything else fails it with the tail of stderr. The
 * program is started with posix_spawnp (no shell: job data can never be
 * interpreted as a command line) in its own process group, so a Ctrl-C
 * stops the worker gracefully instead of killing running jobs.
 *
 * Before it takes a job the worker checks that CMD can be run (resolved
 * through PATH the way posix_spawnp does), so a typo exits 2 instead of
 * failing every job of the queue; and a worker whose runs keep failing says
 * so once on stderr (FAIL_STREAK). */
#include "cli.h"

#include <lanes.h>
#include <lanes/jobs.h>

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
/* A canceled run (timed out, or the worker stopped past its grace): its
 * process group gets SIGTERM, and SIGKILL this long after if it is still
 * there. */
#define KILL_GRACE_S 2.0
/* After this many failed runs in a row (no completed run between them) the
 * worker prints one line on stderr: the queue is likely being emptied
 * into failed by a broken program. */
#define FAIL_STREAK 10
/* Longest part of a failure reason quoted in that line. */
#define STREAK_REASON_MAX 300

static const char usage_text[] =
    "usage: lanes worker URL QUEUE [options] --exec CMD [ARG...]\n"
    "\n"
    "URL as for 'lanes jobs', e.g. sqlite:lanes.db.\n"
    "Runs CMD once per job of QUEUE: the job's data JSON on stdin, and\n"
    "LANES_JOB_ID, LANES_JOB_NAME, LANES_JOB_QUEUE, LANES_JOB_ATTEMPT (and\n"
    "TRACEPARENT when the job has one) in the environment. No shell is used.\n"
    "Exit 0 completes the job; stdout becomes its return value (JSON if it\n"
    "parses, else a JSON string). A non-zero exit or a signal fails it with\n"
    "the tail of stderr as the reason (retried while the job has attempts\n"
    "left), except two exit codes:\n"
    "  75  put the job back to delayed, without using an attempt, until the\n"
    "      time stdout names: {\"delay_until\": MS since the epoch} or\n"
    "      {\"delay_ms\": N} (other stdout: a plain failure)\n"
    "  76  fail the job for good, whatever attempts it has left\n"
    "A run past its timeout (the job's own timeout, else --timeout)\n"
    "fails with \"timed out after N ms\"; CMD's process group then gets\n"
    "SIGTERM, and SIGKILL 2 s later. SIGTERM or SIGINT stop the worker\n"
    "gracefully.\n"
    "\n"
    "options:\n"
    "  --concurrency N      jobs run at once (default 1)\n"
    "  --lease MS           job lease, renewed while CMD runs (default 30000)\n"
    "  --max-stalled N      lease lapses allowed before a job fails (default 1)\n"
    "  --stalled-interval MS  how often to look for lapsed leases (default:\n"
    "                       the lease)\n"
    "  --exit-when-empty    exit once the queue has nothing left to run\n"
    "  --max-jobs N         exit after taking N jobs\n"
    "  --timeout S          fail a run after S seconds and kill CMD (jobs\n"
    "                       added with a timeout of their own use theirs)\n"
    "  --grace S            on SIGTERM, let running jobs finish for S seconds,\n"
    "                       then kill them and release the jobs (default 10)\n"
    "  --poll MS            longest sleep while the queue is empty (default 100)\n"
    "  --store-retry MS     how long to keep retrying a store that fails (e.g.\n"
    "                       Redis unreachable) before giving up (default: the\n"
    "                       lease); the worker then exits 3, saying it gave up\n"
    "  --json               print the final counts as JSON on stdout\n"
    "\n"
    "CMD is checked before the first job is taken (found in PATH when it has\n"
    "no '/', executable); when it cannot be run the worker exits 2. After\n"
    "10 failed runs in a row it says so once on stderr.\n"
    "\n"
    "exit codes: 0 stopped or done; 1 the worker failed; 2 bad command line\n"
    "  or CMD cannot be run; 3 the store could not be opened or used.\n";

typedef struct exec_ctx {
    char **argv; /* CMD ARG... (NULL-terminated) */
    /* Failed runs since the last completed one. Handlers run on several
     * pool threads: only the count itself is shared, so relaxed order is
     * enough (the line it triggers is printed by the thread that reached
     * FAIL_STREAK, and a completion racing with it only resets the count). */
    atomic_uint fail_streak;
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

/* Length of the well-formed UTF-8 sequence at s[0..n) (RFC 3629: no
 * overlong form, no surrogate, nothing above U+10FFFF), or 0 when there is
 * none; then *bad is the length of its maximal subpart (>= 1), the bytes
 * one U+FFFD replaces (Unicode's recommended practice). */
static size_t utf8_seq(const unsigned char *s, size_t n, size_t *bad) {
    unsigned char c = s[0], lo = 0x80, hi = 0xbf; /* range of the 2nd byte */
    size_t need;
    if (c < 0x80) return 1;
    if (c >= 0xc2 && c <= 0xdf) {
        need = 2;
    } else if (c >= 0xe0 && c <= 0xef) {
        need = 3;
        if (c == 0xe0) lo = 0xa0; /* overlong */
        if (c == 0xed) hi = 0x9f; /* surrogates */
    } else if (c >= 0xf0 && c <= 0xf4) {
        need = 4;
        if (c == 0xf0) lo = 0x90; /* overlong */
        if (c == 0xf4) hi = 0x8f; /* above U+10FFFF */
    } else {
        *bad = 1;
        return 0;
    }
    size_t i = 1;
    while (i < need && i < n && s[i] >= (i == 1 ? lo : 0x80) && s[i] <= (i == 1 ? hi : 0xbf)) i++;
    if (i == need) return need;
    *bad = i;
    return 0;
}

/* Append text[0..n) to out as valid UTF-8: well-formed sequences as they
 * are, each ill-formed one as U+FFFD. With controls set (a failure
 * reason), ASCII control characters other than newline and tab become
 * '?'. 0, or -1 when out of memory. */
static int utf8_clean(buf *out, const char *text, size_t n, int controls) {
    const unsigned char *s = (const unsigned char *)text;
    size_t run = 0, i = 0; /* text[run..i) is copied as it is */
    while (i < n) {
        size_t bad = 0, k = utf8_seq(s + i, n - i, &bad);
        int ctl =
            controls && k == 1 && ((s[i] < 0x20 && s[i] != '\n' && s[i] != '\t') || s[i] == 0x7f);
        if (k != 0 && !ctl) {
            i += k;
            continue;
        }
        if (buf_add(out, text + run, i - run) != 0) return -1;
        if (buf_add(out, ctl ? "?" : "\xef\xbf\xbd", ctl ? 1 : 3) != 0) return -1;
        i += ctl ? 1 : bad;
        run = i;
    }
    return buf_add(out, text + run, i - run);
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

static pid_t spawn(ln_job *job, exec_ctx *x, int in[2], int out[2], int err[2], int *spawn_err) {
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
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
                                      POSIX_SPAWN_SETPGROUP);
    pid_t pid = -1;
    *spawn_err = env == NULL ? ENOMEM : posix_spawnp(&pid, x->argv[0], &fa, &at, x->argv, env);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    free(env);
    return *spawn_err == 0 ? pid : -1;
}

/* A run failed with reason: count it toward FAIL_STREAK, then fail the
 * job. A run cut short because the worker is stopping does not count. */
static int fail_run(ln_job *job, exec_ctx *x, const char *reason) {
    if (!ln_job_canceled(job) &&
        atomic_fetch_add_explicit(&x->fail_streak, 1, memory_order_relaxed) + 1 == FAIL_STREAK) {
        /* One line: the reason's newlines become spaces, and it is cut at
         * STREAK_REASON_MAX bytes (not inside a UTF-8 sequence). */
        char shown[STREAK_REASON_MAX + 1];
        size_t n = 0;
        for (const char *r = reason; *r && n < STREAK_REASON_MAX; r++)
            shown[n++] = *r == '\n' || *r == '\r' ? ' ' : *r;
        if (reason[n] != '\0')
            while (n > 0 && ((unsigned char)reason[n] & 0xc0) == 0x80) n--;
        shown[n] = '\0';
        fprintf(stderr,
                "lanes worker: the last %d runs of '%s' all failed (the latest: %s%s); "
                "still taking jobs\n",
                FAIL_STREAK, x->argv[0], shown, reason[n] ? "..." : "");
    }
    return ln_job_fail(job, reason);
}

/* A run completed: the streak of failures is over. */
static void run_completed(exec_ctx *x) {
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
static int check_program(const char *cmd, char *why, size_t whysize) {
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
static int set_output(ln_job *job, exec_ctx *x, buf *out) {
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
    /* The command opens its store with the default limits. */
    if (rc == LN_EINVAL && stored > LN_JOB_DATA_MAX_DEFAULT)
        return fail_run(job, x, "stdout is larger than the result size limit");
    if (rc == LN_EINVAL) return fail_run(job, x, "stdout was refused as a result by the store");
    return rc;
}

/* The exit codes with an outcome of their own (docs/cli.md "lanes
 * worker"): EXIT_DELAY puts the job back to delayed, without using an
 * attempt, until the time stdout names ({"delay_until": MS since the
 * epoch} or {"delay_ms": N}); EXIT_UNRECOVERABLE fails it without retries. */
#define EXIT_DELAY 75
#define EXIT_UNRECOVERABLE 76

static int64_t wall_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int special_exit(ln_job *job, exec_ctx *x, int code, const buf *out, const char *tail) {
    char reason[3 * STDERR_TAIL + 128];
    if (code == EXIT_UNRECOVERABLE) {
        snprintf(reason, sizeof reason, "exit status %d (unrecoverable)%s%s", code,
                 *tail ? ": " : "", tail);
        (void)fail_run(job, x, reason);
        return ln_job_fail_unrecoverable(job, reason);
    }
    json_t *doc = out->p ? json_loadb(out->p, out->len, JSON_DECODE_ANY, NULL) : NULL;
    json_t *until = json_object_get(doc, "delay_until"), *in = json_object_get(doc, "delay_ms");
    int64_t at = -1;
    if (json_is_integer(until) && json_integer_value(until) >= 0)
        at = json_integer_value(until);
    else if (json_is_integer(in) && json_integer_value(in) >= 0 &&
             json_integer_value(in) <= INT64_MAX / 2)
        at = wall_ms() + json_integer_value(in);
    json_decref(doc);
    if (at >= 0) return ln_job_delay_until(job, at);
    snprintf(reason, sizeof reason,
             "exit status %d (delay) without {\"delay_until\": MS} or {\"delay_ms\": N} "
             "on stdout%s%s",
             code, *tail ? ": " : "", tail);
    return fail_run(job, x, reason);
}

static int run_exec(ln_job *job, void *arg) {
    exec_ctx *x = arg;
    int in[2], out[2], err[2];
    if (pipe2(in, O_CLOEXEC) != 0) return fail_run(job, x, "pipe failed");
    if (pipe2(out, O_CLOEXEC) != 0) {
        close(in[0]), close(in[1]);
        return fail_run(job, x, "pipe failed");
    }
    if (pipe2(err, O_CLOEXEC) != 0) {
        close(in[0]), close(in[1]), close(out[0]), close(out[1]);
        return fail_run(job, x, "pipe failed");
    }
    int serr;
    pid_t pid = spawn(job, x, in, out, err, &serr);
    close(in[0]), close(out[1]), close(err[1]);
    if (pid < 0) {
        close(in[1]), close(out[0]), close(err[0]);
        char reason[512];
        snprintf(reason, sizeof reason, "cannot run '%s': %s", x->argv[0], strerror(serr));
        return fail_run(job, x, reason);
    }
    fcntl(in[1], F_SETFL, O_NONBLOCK);
    const char *data = ln_job_data(job);
    size_t dlen = strlen(data), sent = 0;
    buf bo = {0}, be = {0};
    int fin = in[1], fout = out[0], ferr = err[0];
    /* The worker cancels the run when it times out (ln_worker_opts and
     * ln_job_opts timeout_ms) or is stopped past its grace: then the
     * group gets SIGTERM at term_at, SIGKILL KILL_GRACE_S later. */
    double term_at = 0;
    int killed = 0;
    if (dlen == 0) close(fin), fin = -1;
    while (fout >= 0 || ferr >= 0) {
        struct pollfd p[3] = {{fin, POLLOUT, 0}, {fout, POLLIN, 0}, {ferr, POLLIN, 0}};
        if (poll(p, 3, 100) < 0 && errno != EINTR) break;
        if (fin >= 0 && (p[0].revents & (POLLOUT | POLLERR | POLLHUP))) {
            ssize_t w = write(fin, data + sent, dlen - sent);
            if (w > 0) sent += (size_t)w;
            if ((w < 0 && errno != EAGAIN) || sent == dlen) close(fin), fin = -1;
        }
        char chunk[8192];
        int fds[2] = {fout, ferr};
        for (int i = 0; i < 2; i++) {
            if (fds[i] < 0 || !(p[i + 1].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            ssize_t r = read(fds[i], chunk, sizeof chunk);
            if (r > 0) {
                /* stdout beyond the result limit is dropped (the job then
                 * fails as too large); stderr keeps only its tail */
                if (i == 1 || bo.len <= LN_JOB_DATA_MAX_DEFAULT)
                    buf_add(i == 0 ? &bo : &be, chunk, (size_t)r);
                if (i == 1) buf_tail(&be);
            } else if (r == 0 || errno != EINTR) {
                close(fds[i]);
                if (i == 0)
                    fout = -1;
                else
                    ferr = -1;
            }
        }
        if (ln_job_canceled(job)) {
            kill(-pid, SIGTERM); /* its whole process group */
            term_at = mono_s();
            break; /* a grandchild may hold the pipes open */
        }
    }
    if (fin >= 0) close(fin);
    if (fout >= 0) close(fout);
    if (ferr >= 0) close(ferr);
    /* The child may outlive its pipes: a cancel still applies while we
     * wait for it. */
    int status = 0;
    for (;;) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid || (r < 0 && errno != EINTR)) break;
        if (r != 0) continue;
        if (term_at == 0 && ln_job_canceled(job)) {
            kill(-pid, SIGTERM);
            term_at = mono_s();
        }
        if (term_at > 0 && !killed && mono_s() > term_at + KILL_GRACE_S) {
            kill(-pid, SIGKILL);
            killed = 1;
        }
        poll(NULL, 0, 10);
    }
    /* What is left of a canceled run's group (children of CMD that
     * outlived it, or ignored SIGTERM) goes too. */
    if (term_at > 0) kill(-pid, SIGKILL);
    int rc;
    /* Each invalid byte of the tail may become a 3-byte U+FFFD. */
    char reason[3 * STDERR_TAIL + 128];
    buf ce = {0}; /* the tail of stderr as valid UTF-8 */
    if (be.p != NULL && utf8_clean(&ce, be.p, be.len, 1) == 0 && ce.p != NULL) {
        while (ce.len > 0 && (ce.p[ce.len - 1] == '\n' || ce.p[ce.len - 1] == ' '))
            ce.p[--ce.len] = '\0';
    }
    const char *tail = ce.p ? ce.p : "";
    if (term_at > 0) { /* the worker recorded the outcome already */
        rc = fail_run(job, x, "canceled");
    } else if (WIFSIGNALED(status)) {
        snprintf(reason, sizeof reason, "killed by signal %d (%s)%s%s", WTERMSIG(status),
                 strsignal(WTERMSIG(status)), *tail ? ": " : "", tail);
        rc = fail_run(job, x, reason);
    } else if (WEXITSTATUS(status) == EXIT_DELAY || WEXITSTATUS(status) == EXIT_UNRECOVERABLE) {
        rc = special_exit(job, x, WEXITSTATUS(status), &bo, tail);
    } else if (WEXITSTATUS(status) != 0) {
        snprintf(reason, sizeof reason, "exit status %d%s%s", WEXITSTATUS(status),
                 *tail ? ": " : "", tail);
        rc = fail_run(job, x, reason);
    } else {
        rc = bo.p != NULL ? set_output(job, x, &bo) : 0;
        if (rc == 0) run_completed(x);
    }
    free(bo.p);
    free(be.p);
    free(ce.p);
    return rc;
}

static int usage_error(const char *fmt, const char *arg) {
    fprintf(stderr, "lanes worker: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n(see 'lanes worker --help')\n");
    return CLI_EXIT_USAGE;
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
    /* --help anywhere before --exec (what follows --exec is CMD's). */
    for (int i = 1; i < argc && strcmp(argv[i], "--exec") != 0; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(usage_text, stdout);
            return CLI_EXIT_OK;
        }
    }
    if (argc < 3) {
        fputs(usage_text, stderr);
        return CLI_EXIT_USAGE;
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
            {"--concurrency", 1, 4096, 1, 0},     {"--lease", 100, 86400000, 1, 1},
            {"--max-stalled", 0, 1000000, 1, 2},  {"--stalled-interval", 0, 86400000, 1, 3},
            {"--max-jobs", 1, UINT64_MAX, 1, 4},  {"--timeout", 1, 2147483, 1000, 5},
            {"--grace", 0, 86400, 1000, 6},       {"--poll", 1, 60000, 1, 7},
            {"--store-retry", 0, 86400000, 1, 8},
        };
        size_t k = 0;
        while (k < sizeof num / sizeof num[0] && strcmp(s, num[k].name) != 0) k++;
        if (k == sizeof num / sizeof num[0]) return usage_error("unknown option '%s'", s);
        if (parse_u(val, num[k].lo, num[k].hi, &v) != 0) {
            fprintf(stderr, "lanes worker: %s must be %llu..%llu, not '%s'\n", s, num[k].lo,
                    num[k].hi, val);
            return CLI_EXIT_USAGE;
        }
        v *= num[k].scale;
        switch (num[k].field) {
        case 0:
            o.concurrency = (unsigned)v;
            break;
        case 1:
            o.lease_ms = (unsigned)v;
            break;
        case 2:
            o.max_stalled = (unsigned)v;
            break;
        case 3:
            o.stalled_interval_ms = (unsigned)v;
            break;
        case 4:
            o.max_jobs = v;
            break;
        case 5:
            o.timeout_ms = (unsigned)v;
            break;
        case 6:
            o.grace_ms = (unsigned)v;
            break;
        case 7:
            o.poll_ms = (unsigned)v;
            break;
        default:
            o.store_retry_ms = (unsigned)v;
            break;
        }
    }
    if (x.argv == NULL) return usage_error("%s", "--exec CMD is required");
    char why[PATH_MAX + 256];
    if (check_program(x.argv[0], why, sizeof why) != 0) {
        fprintf(stderr, "lanes worker: %s\n", why);
        return CLI_EXIT_USAGE;
    }

    ln_jobs *jobs;
    char msg[512];
    int err = ln_jobs_open_ex(&jobs, url, NULL, msg, sizeof msg);
    if (err != 0) {
        fprintf(stderr, "lanes worker: cannot open '%s': %s: %s\n", url, ln_err_name(err), msg);
        return err == LN_EINVAL ? CLI_EXIT_USAGE : CLI_EXIT_UNAVAILABLE;
    }
    if (ln_jobs_warning(jobs) != NULL) /* the library never prints */
        fprintf(stderr, "lanes: warning: %s\n", ln_jobs_warning(jobs));
    ln_worker *w;
    if ((err = ln_worker_create(&w, jobs, queue, run_exec, &x, &o)) != 0) {
        fprintf(stderr, "lanes worker: %s: %s\n", ln_err_name(err), ln_jobs_errmsg(jobs));
        ln_jobs_close(jobs);
        return err == LN_EINVAL ? CLI_EXIT_USAGE : CLI_EXIT_FAILURE;
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
    if (err != 0) fprintf(stderr, "lanes worker: %s: %s\n", ln_err_name(err), ln_jobs_errmsg(jobs));
    if (json)
        printf("{\"taken\":%llu,\"completed\":%llu,\"failed\":%llu,"
               "\"retried\":%llu,\"stale\":%llu,\"stalled_found\":%llu,"
               "\"released\":%llu}\n",
               (unsigned long long)st.taken, (unsigned long long)st.completed,
               (unsigned long long)st.failed, (unsigned long long)st.retried,
               (unsigned long long)st.stale, (unsigned long long)st.stalled_found,
               (unsigned long long)st.released);
    signal(SIGTERM, SIG_DFL);
    signal(SIGINT, SIG_DFL);
    g_worker = NULL;
    ln_worker_destroy(w);
    ln_jobs_close(jobs);
    if (err == 0) return CLI_EXIT_OK;
    return err == LN_EBACKEND || err == LN_ECORRUPT || err == LN_EACCES || err == LN_EIO ||
                   err == LN_ENOSPC
               ? CLI_EXIT_UNAVAILABLE
               : CLI_EXIT_FAILURE;
}
