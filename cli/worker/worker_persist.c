/* worker_persist.c - the handler of `lanes worker --exec-persistent CMD
 * [ARG...]` (docs/persistent.md). One CMD process per place of
 * concurrency stays up and runs one job at a time: the worker writes one
 * line {"type":"job",...,"data":DATA} to its stdin and reads JSON lines
 * from its stdout: "progress" and "log" lines as the job runs, then one
 * "result" or "error" line. Every line is parsed with jansson, except the
 * two raw members, which keep the stored bytes unchanged: DATA is the
 * job's data text, written as it is as the last member of the job line,
 * and a line that begins {"type":"result","result": and ends with } gives
 * the text between them to the store as it is (when the store takes it as
 * JSON; else the line is parsed and its "result" printed by jansson).
 *
 * A handler that dies, closes its stdout or writes a malformed line is
 * killed and restarted at the next job of its place, after a backoff;
 * the job it held goes back (ln_job_delay_until: no attempt used) unless
 * it was held by handlers that died CLI_PERSIST_KILLS_MAX times, then it
 * fails saying so. A canceled or timed-out job's handler is killed
 * (SIGTERM to its process group, SIGKILL after --grace) and restarted:
 * the handler never sees a cancel line. */
#include "worker_persist.h"

#include <errno.h>
#include <fcntl.h>
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

/* Jobs whose handler died, remembered per worker (the newest KILL_RING). */
#define KILL_RING 64
/* Most bytes of one line beyond --max-data-size (the result's framing). */
#define LINE_SLACK (64 * 1024)
/* How long a broken handler may take to exit by itself before SIGTERM. */
#define EXITING_MS 200
#define RESULT_PREFIX "{\"type\":\"result\",\"result\":"

typedef struct pbuf {
    char *p;
    size_t len, cap;
} pbuf;

static int pbuf_add(pbuf *b, const char *s, size_t n) {
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

/* One place: a handler process, or none (pid -1). */
typedef struct pslot {
    pid_t pid;
    int fin, fout;       /* our ends of its stdin and stdout */
    pbuf rd;             /* bytes of stdout not yet a whole line */
    int busy;            /* a job holds the place */
    unsigned backoff_ms; /* the next restart's backoff after a death */
    uint64_t start_at;   /* monotonic ms before which it is not restarted */
    unsigned starts;     /* handlers started in this place */
} pslot;

struct cli_persist {
    char **argv;
    const char *url;
    size_t max_data;
    unsigned kill_after_ms;
    cli_whist *hist;
    unsigned n;
    pslot *slots;
    pthread_mutex_t mu; /* busy flags and the kill ring */
    pthread_cond_t cv;
    char *kill_id[KILL_RING];
    unsigned kill_n[KILL_RING];
    unsigned kill_next;
};

static uint64_t mono_ms(void) {
    return ln_now_ns() / 1000000;
}

static int64_t wall_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int cli_persist_create(cli_persist **out, char **argv, const char *url, unsigned n, size_t max_data,
                       unsigned kill_after_ms, cli_whist *hist) {
    cli_persist *p = calloc(1, sizeof *p);
    if (p == NULL || (p->slots = calloc(n ? n : 1, sizeof *p->slots)) == NULL) {
        free(p);
        return -1;
    }
    p->argv = argv;
    p->url = url;
    p->n = n ? n : 1;
    p->max_data = max_data;
    p->kill_after_ms = kill_after_ms;
    p->hist = hist;
    for (unsigned i = 0; i < p->n; i++) {
        p->slots[i].pid = -1;
        p->slots[i].fin = p->slots[i].fout = -1;
        p->slots[i].backoff_ms = CLI_PERSIST_BACKOFF_MIN_MS;
    }
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    *out = p;
    return 0;
}

static void close_fd(int *fd) {
    if (*fd >= 0) close(*fd);
    *fd = -1;
}

/* Wait up to ms for pid to exit; 1 once reaped (status set). */
static int reap_within(pid_t pid, unsigned ms, int *status) {
    uint64_t until = mono_ms() + ms;
    for (;;) {
        pid_t got = waitpid(pid, status, WNOHANG);
        if (got == pid || (got < 0 && errno != EINTR)) return 1;
        if (mono_ms() >= until) return 0;
        poll(NULL, 0, 10);
    }
}

/* End the place's handler: close its pipes (a handler reading stdin sees
 * EOF), give it wait_ms to exit, then SIGTERM its group, and SIGKILL
 * after kill_after_ms. The exit status goes to *status when not NULL. */
static void slot_end(cli_persist *p, pslot *s, unsigned wait_ms, int *status) {
    int st = 0;
    close_fd(&s->fin);
    close_fd(&s->fout);
    s->rd.len = 0;
    if (s->pid > 0) {
        if (!reap_within(s->pid, wait_ms, &st)) {
            kill(-s->pid, SIGTERM);
            if (!reap_within(s->pid, p->kill_after_ms, &st)) {
                kill(-s->pid, SIGKILL);
                while (waitpid(s->pid, &st, 0) < 0 && errno == EINTR) {
                }
            }
        }
        kill(-s->pid, SIGKILL); /* what is left of its group */
    }
    s->pid = -1;
    if (status != NULL) *status = st;
}

void cli_persist_destroy(cli_persist *p) {
    if (p == NULL) return;
    for (unsigned i = 0; i < p->n; i++) {
        slot_end(p, &p->slots[i], p->kill_after_ms, NULL);
        free(p->slots[i].rd.p);
    }
    for (unsigned i = 0; i < KILL_RING; i++) free(p->kill_id[i]);
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    free(p->slots);
    free(p);
}

/* ---- starting a handler */

/* Our environment without LANES_JOB_* and LANES_STORE_URL, plus
 * LANES_STORE_URL=url (when set) in 'extra' (freed by the caller with the
 * array). NULL when out of memory. */
static char **make_env(const char *url, char **extra) {
    size_t n = 0;
    while (environ[n] != NULL) n++;
    char **env = malloc((n + 2) * sizeof *env);
    *extra = NULL;
    if (env == NULL) return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], "LANES_JOB_", 10) != 0 &&
            strncmp(environ[i], "LANES_STORE_URL=", 16) != 0 &&
            strncmp(environ[i], "LANES_CHILDREN_FILE=", 20) != 0)
            env[k++] = environ[i];
    if (url != NULL) {
        size_t len = strlen("LANES_STORE_URL=") + strlen(url) + 1;
        if ((*extra = malloc(len)) == NULL) {
            free(env);
            return NULL;
        }
        snprintf(*extra, len, "LANES_STORE_URL=%s", url);
        env[k++] = *extra;
    }
    env[k] = NULL;
    return env;
}

/* A pipe whose child end (index 'child') is above 2, both close-on-exec. */
static int pipe_above2(int fds[2], int child) {
    if (pipe2(fds, O_CLOEXEC) != 0) return -1;
    if (fds[child] > 2) return 0;
    int moved = fcntl(fds[child], F_DUPFD_CLOEXEC, 3);
    int err = errno;
    close(fds[child]);
    fds[child] = moved;
    if (moved >= 0) return 0;
    close(fds[!child]);
    errno = err;
    return -1;
}

/* Start CMD in s: its stdin and stdout are pipes to us, stderr is ours,
 * its own process group, a clean signal mask. 0, or an errno. */
static int slot_start(cli_persist *p, pslot *s) {
    int in[2], out[2];
    if (pipe_above2(in, 0) != 0) return errno;
    if (pipe_above2(out, 1) != 0) {
        int err = errno;
        close(in[0]), close(in[1]);
        return err;
    }
    char *extra;
    char **env = make_env(p->url, &extra);
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawnattr_init(&at);
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
    int err = env == NULL ? ENOMEM : posix_spawnp(&pid, p->argv[0], &fa, &at, p->argv, env);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    free(env);
    free(extra);
    close(in[0]);
    close(out[1]);
    if (err != 0) {
        close(in[1]);
        close(out[0]);
        return err;
    }
    fcntl(in[1], F_SETFL, O_NONBLOCK);
    s->pid = pid;
    s->fin = in[1];
    s->fout = out[0];
    s->rd.len = 0;
    s->starts++;
    return 0;
}

/* ---- the kill ring: how often a job's handler died on this worker */

/* Count one more death for id; returns the count, and forgets id once it
 * reached CLI_PERSIST_KILLS_MAX (its run then fails: a retry counts anew). */
static unsigned kill_count(cli_persist *p, const char *id) {
    pthread_mutex_lock(&p->mu);
    unsigned n = 0, i = 0;
    for (; i < KILL_RING; i++)
        if (p->kill_id[i] != NULL && strcmp(p->kill_id[i], id) == 0) break;
    if (i == KILL_RING) {
        i = p->kill_next;
        p->kill_next = (p->kill_next + 1) % KILL_RING;
        free(p->kill_id[i]);
        p->kill_id[i] = strdup(id);
        p->kill_n[i] = 0;
    }
    n = ++p->kill_n[i];
    if (n >= CLI_PERSIST_KILLS_MAX) p->kill_n[i] = 0;
    pthread_mutex_unlock(&p->mu);
    return n;
}

/* ---- one job on one handler */

enum { GO_ON = 0, DONE = 1, BROKEN = 2 };

typedef struct pjob {
    cli_persist *p;
    pslot *s;
    ln_job *job;
    int rc;           /* the handler's return value, once DONE */
    char why[512];    /* BROKEN: what the handler did */
    int canceled;     /* the worker gave the job up: handler killed */
    int too_large;    /* a line past the result limit: the job fails */
    const char *what; /* for --verbose: "completed", "failed", ... */
} pjob;

/* The job line: the metadata printed by jansson, then ,"data": and the
 * data text as it is. A line break in the data (JSON whitespace between
 * tokens) is sent as a space, so the line stays one line. */
static char *job_line(ln_job *job, size_t *len) {
    json_t *o =
        json_pack("{s:s,s:s,s:s,s:s,s:i}", "type", "job", "id", ln_job_id(job), "name",
                  ln_job_name(job), "queue", ln_job_queue(job), "attempt", ln_job_attempt(job));
    if (o != NULL && ln_job_traceparent(job) != NULL)
        json_object_set_new(o, "traceparent", json_string(ln_job_traceparent(job)));
    char *meta = o != NULL ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(o);
    if (meta == NULL) return NULL;
    const char *data = ln_job_data(job);
    if (data == NULL || *data == '\0') data = "null";
    size_t mlen = strlen(meta) - 1, dlen = strlen(data); /* meta without its '}' */
    char *line = malloc(mlen + dlen + 16);
    if (line != NULL) {
        memcpy(line, meta, mlen);
        memcpy(line + mlen, ",\"data\":", 8);
        memcpy(line + mlen + 8, data, dlen);
        for (size_t i = mlen + 8; i < mlen + 8 + dlen; i++)
            if (line[i] == '\n' || line[i] == '\r') line[i] = ' ';
        memcpy(line + mlen + 8 + dlen, "}\n", 3);
        *len = mlen + dlen + 10;
    }
    free(meta);
    return line;
}

static int broken(pjob *j, const char *fmt, const char *arg) {
    snprintf(j->why, sizeof j->why, fmt, arg);
    return BROKEN;
}

/* A result line in the canonical layout: its raw text to the store. 1 if
 * the store took it; 0 to parse the line instead. */
static int raw_result(pjob *j, char *line, size_t n) {
    size_t pl = sizeof RESULT_PREFIX - 1;
    if (n < pl + 2 || memcmp(line, RESULT_PREFIX, pl) != 0 || line[n - 1] != '}') return 0;
    line[n - 1] = '\0'; /* the line is ours: cut the object's '}' */
    int rc = ln_job_set_result(j->job, line + pl);
    line[n - 1] = '}';
    return rc == 0;
}

static int on_result(pjob *j, json_t *v) {
    char *text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_PRESERVE_ORDER);
    int rc = text != NULL ? ln_job_set_result(j->job, text) : LN_ENOMEM;
    free(text);
    j->rc = rc;
    if (rc == LN_EINVAL) {
        char reason[160];
        snprintf(reason, sizeof reason,
                 "the result was refused by the store (larger than %zu bytes?)", j->p->max_data);
        j->rc = ln_job_fail(j->job, reason);
    }
    j->what = j->rc == 0 ? "completed" : "failed";
    return DONE;
}

static int on_error(pjob *j, json_t *o) {
    json_t *msg = json_object_get(o, "message");
    if (msg != NULL && !json_is_string(msg)) return broken(j, "%s", "\"message\" is not a string");
    const char *m = msg != NULL ? json_string_value(msg) : "failed";
    j->what = "failed";
    j->rc = json_is_true(json_object_get(o, "unrecoverable")) ? ln_job_fail_unrecoverable(j->job, m)
                                                              : ln_job_fail(j->job, m);
    return DONE;
}

/* One whole line (without its newline) from the handler. */
static int handle_line(pjob *j, char *line, size_t n) {
    while (n > 0 && (line[n - 1] == '\r' || line[n - 1] == ' ' || line[n - 1] == '\t')) n--;
    if (n == 0) return GO_ON;
    if (raw_result(j, line, n)) {
        j->rc = 0, j->what = "completed";
        return DONE;
    }
    json_error_t e;
    json_t *o = json_loadb(line, n, JSON_REJECT_DUPLICATES, &e);
    if (o == NULL) return broken(j, "a line that is not JSON (%s)", e.text);
    int r = GO_ON;
    const char *type = json_string_value(json_object_get(o, "type"));
    json_t *v;
    if (!json_is_object(o) || type == NULL) {
        r = broken(j, "%s", "a line that is not an object with a string \"type\"");
    } else if (strcmp(type, "result") == 0) {
        r = (v = json_object_get(o, "result")) != NULL
                ? on_result(j, v)
                : broken(j, "%s", "a \"result\" line without \"result\"");
    } else if (strcmp(type, "error") == 0) {
        r = on_error(j, o);
    } else if (strcmp(type, "progress") == 0 && (v = json_object_get(o, "progress")) != NULL) {
        char *text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_PRESERVE_ORDER);
        if (text != NULL) (void)ln_job_progress(j->job, text); /* as fd 3's: best effort */
        free(text);
    } else if (strcmp(type, "log") == 0 && json_is_string(v = json_object_get(o, "line"))) {
        (void)ln_job_log(j->job, json_string_value(v));
    } else {
        r = broken(j, "an unknown or incomplete line of type \"%.100s\"", type);
    }
    json_decref(o);
    return r;
}

/* New bytes of stdout: handle each whole line. */
static int feed(pjob *j, const char *bytes, size_t n) {
    pbuf *b = &j->s->rd;
    if (pbuf_add(b, bytes, n) != 0) return broken(j, "%s", "out of memory reading its stdout");
    size_t at = 0;
    int r = GO_ON;
    while (r == GO_ON) {
        char *nl = memchr(b->p + at, '\n', b->len - at);
        if (nl == NULL) break;
        size_t len = (size_t)(nl - (b->p + at));
        r = handle_line(j, b->p + at, len);
        at += len + 1;
    }
    memmove(b->p, b->p + at, b->len - at);
    b->len -= at;
    if (r == GO_ON && b->len > j->p->max_data + LINE_SLACK) {
        j->too_large = 1;
        return broken(j, "%s", "a line longer than the result size limit (--max-data-size)");
    }
    return r;
}

/* Write the job line and read lines until the handler says DONE, breaks,
 * or the job is given up. */
static int converse(pjob *j, const char *line, size_t len) {
    pslot *s = j->s;
    size_t sent = 0;
    for (;;) {
        struct pollfd pf[2] = {{sent < len ? s->fin : -1, POLLOUT, 0}, {s->fout, POLLIN, 0}};
        if (poll(pf, 2, 100) < 0 && errno != EINTR) return broken(j, "poll: %s", strerror(errno));
        if (ln_job_canceled(j->job)) {
            j->canceled = 1;
            return BROKEN;
        }
        if (sent < len && (pf[0].revents & (POLLOUT | POLLERR | POLLHUP))) {
            ssize_t w = write(s->fin, line + sent, len - sent);
            if (w > 0) sent += (size_t)w;
            if (w < 0 && errno != EAGAIN && errno != EINTR)
                return broken(j, "its stdin was closed (%s)", strerror(errno));
        }
        if (pf[1].revents & (POLLIN | POLLHUP | POLLERR)) {
            char chunk[65536];
            ssize_t n = read(s->fout, chunk, sizeof chunk);
            if (n == 0) return broken(j, "%s", "it closed its stdout");
            if (n < 0 && errno != EINTR && errno != EAGAIN)
                return broken(j, "reading its stdout: %s", strerror(errno));
            int r = n > 0 ? feed(j, chunk, (size_t)n) : GO_ON;
            if (r != GO_ON) return r;
        }
    }
}

/* Why a handler ended, from its status, after 'what' it did. */
static void describe_end(char *out, size_t size, const char *what, int status) {
    if (WIFSIGNALED(status))
        snprintf(out, size, "%s; killed by signal %d (%s)", what, WTERMSIG(status),
                 strsignal(WTERMSIG(status)));
    else if (WIFEXITED(status))
        snprintf(out, size, "%s; exit status %d", what, WEXITSTATUS(status));
    else
        snprintf(out, size, "%s", what);
}

/* The handler broke while holding the job: restart it later, and put the
 * job back, or fail it once handlers died on it CLI_PERSIST_KILLS_MAX
 * times. */
static int after_break(pjob *j) {
    cli_persist *p = j->p;
    pslot *s = j->s;
    int status = 0;
    pid_t pid = s->pid;
    /* One that is exiting by itself (it closed its stdout) gets a moment
     * first, so that its own exit status is the one reported. */
    slot_end(p, s, EXITING_MS, &status);
    char why[700];
    describe_end(why, sizeof why, j->why, status);
    s->start_at = mono_ms() + s->backoff_ms;
    unsigned backoff = s->backoff_ms;
    s->backoff_ms = s->backoff_ms * 2 > CLI_PERSIST_BACKOFF_MAX_MS ? CLI_PERSIST_BACKOFF_MAX_MS
                                                                   : s->backoff_ms * 2;
    char reason[800];
    if (j->too_large) {
        snprintf(reason, sizeof reason, "the handler wrote %s", j->why);
        j->what = "failed";
        j->rc = ln_job_fail(j->job, reason);
    } else {
        unsigned deaths = kill_count(p, ln_job_id(j->job));
        if (deaths >= CLI_PERSIST_KILLS_MAX) {
            snprintf(reason, sizeof reason,
                     "the handler broke %u times running this job (the latest: %s)", deaths, why);
            j->what = "failed";
            j->rc = ln_job_fail(j->job, reason);
        } else {
            j->what = "put back (handler broke)";
            j->rc = ln_job_delay_until(j->job, wall_ms() + backoff);
        }
    }
    cli_wlog("warn",
             json_pack("{s:s,s:s,s:i,s:s,s:s,s:i}", "event", "handler_broke", "id",
                       ln_job_id(j->job), "pid", (int)pid, "why", why, "job", j->what,
                       "restart_in_ms", (int)backoff),
             "handler %d broke running job %s (%s): %s; job %s; restarting it in %u ms", (int)pid,
             ln_job_id(j->job), ln_job_name(j->job), why, j->what, backoff);
    return j->rc;
}

/* Make sure the place has a live handler: restart one that exited while
 * idle, waiting out a backoff of at most CLI_GATE_HOLD_MS. 0, or an errno
 * (the job then goes back). */
static int ensure_handler(cli_persist *p, pslot *s, ln_job *job, int64_t *wait_ms) {
    int status;
    if (s->pid > 0 && waitpid(s->pid, &status, WNOHANG) == s->pid) {
        char why[200];
        describe_end(why, sizeof why, "exited while idle", status);
        cli_wlog(
            "warn",
            json_pack("{s:s,s:i,s:s}", "event", "handler_exited", "pid", (int)s->pid, "why", why),
            "handler %d %s; restarting it", (int)s->pid, why);
        s->pid = -1;
        close_fd(&s->fin);
        close_fd(&s->fout);
        s->start_at = mono_ms() + s->backoff_ms;
    }
    if (s->pid > 0) return 0;
    uint64_t now = mono_ms();
    /* A short backoff is waited out (as the gate holds a job for a place)
     * rather than putting the job back for it. */
    while (now < s->start_at && s->start_at - now <= CLI_GATE_HOLD_MS && !ln_job_canceled(job)) {
        poll(NULL, 0, (int)(s->start_at - now));
        now = mono_ms();
    }
    if (now < s->start_at) {
        *wait_ms = (int64_t)(s->start_at - now);
        return EAGAIN;
    }
    int err = slot_start(p, s);
    if (err != 0) {
        *wait_ms = s->backoff_ms;
        cli_wlog("warn",
                 json_pack("{s:s,s:s,s:s}", "event", "handler_start_failed", "exec", p->argv[0],
                           "error", strerror(err)),
                 "cannot start handler '%s': %s; the job goes back", p->argv[0], strerror(err));
        s->start_at = now + s->backoff_ms;
        s->backoff_ms = s->backoff_ms * 2 > CLI_PERSIST_BACKOFF_MAX_MS ? CLI_PERSIST_BACKOFF_MAX_MS
                                                                       : s->backoff_ms * 2;
    } else if (s->starts > 1) {
        cli_wlog("info", json_pack("{s:s,s:i}", "event", "handler_restarted", "pid", (int)s->pid),
                 "handler restarted (pid %d)", (int)s->pid);
    }
    return err;
}

/* The job on place s. */
static int run_on(pjob *j) {
    cli_persist *p = j->p;
    pslot *s = j->s;
    int64_t wait_ms = 0;
    if (ensure_handler(p, s, j->job, &wait_ms) != 0) {
        j->what = "put back (no handler)";
        return ln_job_delay_until(j->job, wall_ms() + wait_ms);
    }
    size_t len = 0;
    char *line = job_line(j->job, &len);
    if (line == NULL) return ln_job_fail(j->job, "out of memory");
    int r = converse(j, line, len);
    free(line);
    if (r == DONE) {
        s->backoff_ms = CLI_PERSIST_BACKOFF_MIN_MS;
        return j->rc;
    }
    if (j->canceled) { /* the worker recorded the outcome already */
        slot_end(p, s, 0, NULL);
        j->what = "canceled";
        return ln_job_fail(j->job, "canceled");
    }
    return after_break(j);
}

int cli_persist_run(ln_job *job, void *arg) {
    cli_persist *p = arg;
    uint64_t t0 = ln_now_ns();
    pthread_mutex_lock(&p->mu);
    pslot *s = NULL;
    while (s == NULL) {
        for (unsigned i = 0; i < p->n && s == NULL; i++)
            if (!p->slots[i].busy) s = &p->slots[i];
        if (s == NULL) pthread_cond_wait(&p->cv, &p->mu);
    }
    s->busy = 1;
    pthread_mutex_unlock(&p->mu);
    pjob j = {.p = p, .s = s, .job = job, .what = "failed"};
    int rc = run_on(&j);
    pthread_mutex_lock(&p->mu);
    s->busy = 0;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
    uint64_t ns = ln_now_ns() - t0;
    if (p->hist != NULL) cli_whist_observe(p->hist, ns);
    if (cli_wlog_verbose())
        cli_wlog(rc == 0 ? "info" : "warn",
                 json_pack("{s:s,s:s,s:i,s:s,s:I}", "id", ln_job_id(job), "name", ln_job_name(job),
                           "attempt", ln_job_attempt(job), "outcome", j.what, "ms",
                           (json_int_t)(ns / 1000000)),
                 "job %s (%s, attempt %d) %s in %llu ms", ln_job_id(job), ln_job_name(job),
                 ln_job_attempt(job), j.what, (unsigned long long)(ns / 1000000));
    return rc;
}
