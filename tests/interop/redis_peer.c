/* redis_peer.c - the C side of lanes' BullMQ interop tests
 * (tests/interop/test_redis_interop.sh): adds jobs with the C API and runs a C
 * ln_worker whose handler is the twin of tests/interop/interop.mjs's.
 *
 *   redis_peer add  URL QUEUE             the scenario jobs, as the Node
 *                                         producer adds them
 *   redis_peer bulk URL QUEUE N [NAME]    N jobs named NAME (default "noop"),
 *                                         1000 per bulk add
 *   redis_peer one  URL QUEUE NAME DATA   one job
 *   redis_peer trace URL QUEUE TP         job "c-trace" carrying traceparent TP
 *   redis_peer work URL QUEUE [options]   run jobs until the queue is empty
 *     --concurrency N   handlers at once (default 1)
 *     --lease-ms N      lease, and stalled-check interval (default 30000)
 *     --sleep-ms N      jobs named "sleep" sleep this long (default 0)
 *     --hold FILE       ... or until FILE exists (--sleep-ms the most)
 *     --log FILE        append "<id>\n" to FILE as each handler starts
 *     --forever         keep waiting when the queue is empty (until SIGTERM)
 *
 * Exit status 0 on success; errors go to stderr.
 */
#include <lanes.h>
#include <lanes/jobs.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct peer {
    unsigned sleep_ms;
    const char *hold; /* with it, a "sleep" job ends once this file exists */
    int log_fd;
} peer;

/* A "sleep" job's wait: sleep_ms, or with p->hold until that file exists
 * (sleep_ms then bounds the wait), so a test can keep a job running for
 * exactly as long as its steps take on a loaded machine. */
static void sleep_job(const peer *p) {
    unsigned left = p->sleep_ms;
    while (left > 0 && !(p->hold && access(p->hold, F_OK) == 0)) {
        unsigned step = p->hold && left > 10 ? 10 : left;
        struct timespec ts = {step / 1000, (long)(step % 1000) * 1000000L};
        while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
        }
        left -= step;
    }
}

static ln_worker *g_worker;

static void on_term(int sig) {
    (void)sig;
    if (g_worker) ln_worker_stop(g_worker);
}

static int die(const char *what, int rc, ln_jobs *jobs) {
    fprintf(stderr, "redis_peer: %s: %s (%s)\n", what, ln_strerror(rc),
            jobs ? ln_jobs_errmsg(jobs) : "");
    return 1;
}

/* The handler twin of interop.mjs: "flaky" fails its first two attempts,
 * "doomed" always fails, "sleep" sleeps, "trace" returns its trace context,
 * "logs5" logs "line 1" .. "line 5" (ln_job_log) before it completes;
 * every other job returns {"name": name, "data": data}. */
static int handle(ln_job *job, void *ctx) {
    peer *p = ctx;
    const char *name = ln_job_name(job);
    if (p->log_fd >= 0) {
        size_t n = strlen(ln_job_id(job)) + 1; /* ids of any length; one write a line */
        char *line = malloc(n + 1);
        if (line == NULL) return ln_job_fail(job, "out of memory");
        snprintf(line, n + 1, "%s\n", ln_job_id(job));
        ssize_t w = write(p->log_fd, line, n);
        free(line);
        if (w != (ssize_t)n) return ln_job_fail(job, "log write failed");
    }
    if (!strcmp(name, "flaky") && ln_job_attempt(job) <= 2) {
        char reason[64];
        snprintf(reason, sizeof reason, "flaky attempt %d", ln_job_attempt(job));
        return ln_job_fail(job, reason);
    }
    if (!strcmp(name, "doomed")) return ln_job_fail(job, "doomed");
    for (int i = 1; !strcmp(name, "logs5") && i <= 5; i++) {
        char line[16];
        snprintf(line, sizeof line, "line %d", i);
        if (ln_job_log(job, line) != 0) return ln_job_fail(job, "log refused");
    }
    if (!strcmp(name, "sleep")) sleep_job(p);
    if (!strcmp(name, "noop")) return 0;
    if (!strcmp(name, "trace")) {
        const char *tp = ln_job_traceparent(job), *ts = ln_job_tracestate(job);
        char result[256];
        snprintf(result, sizeof result, "{\"traceparent\":\"%s\",\"tracestate\":\"%s\"}",
                 tp ? tp : "", ts ? ts : "");
        return ln_job_set_result(job, result);
    }
    const char *data = ln_job_data(job);
    size_t size = strlen(name) + strlen(data) + 32;
    char *result = malloc(size);
    if (!result) return ln_job_fail(job, "out of memory");
    snprintf(result, size, "{\"name\":\"%s\",\"data\":%s}", name, data);
    int rc = ln_job_set_result(job, result);
    free(result);
    return rc;
}

/* The jobs interop.mjs's produce() adds, through the C API. */
static int add_scenario(ln_jobs *jobs, const char *queue) {
    ln_job_opts custom, later, p5, p1, lifo, retry, doomed, gone, bulk2, bulk3;
    ln_job_opts *all[] = {&custom, &later, &p5, &p1, &lifo, &retry, &doomed, &gone, &bulk2, &bulk3};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) ln_job_opts_init(all[i]);
    custom.job_id = "cust-1";
    later.delay_ms = 300;
    p5.priority = 5;
    p1.priority = 1;
    lifo.lifo = 1;
    retry.attempts = 3;
    retry.backoff = LN_BACKOFF_EXPONENTIAL;
    retry.backoff_ms = 100;
    doomed.attempts = 2;
    doomed.backoff = LN_BACKOFF_FIXED;
    doomed.backoff_ms = 50;
    gone.remove_on_complete.mode = LN_KEEP_NONE;
    bulk2.job_id = "bulk-2";
    bulk3.priority = 3;
    struct {
        const char *name, *data;
        const ln_job_opts *opts;
    } one[] = {
        {"plain", "{\"n\":1,\"s\":\"h\xc3\xa9llo\"}", NULL},
        {"plain", "[1,2,3]", NULL},
        {"custom", "{\"c\":1}", &custom},
        {"custom", "{\"c\":2}", &custom},
        {"later", "{\"d\":1}", &later},
        {"prio", "{\"p\":5}", &p5},
        {"prio", "{\"p\":1}", &p1},
        {"lifo", "\"a string payload\"", &lifo},
        {"flaky", "{\"f\":1}", &retry},
        {"doomed", "{\"x\":1}", &doomed},
        {"gone", "{\"g\":1}", &gone},
    };
    char id[LN_JOB_ID_MAX];
    for (size_t i = 0; i < sizeof one / sizeof one[0]; i++) {
        int rc = ln_jobs_add(jobs, queue, one[i].name, one[i].data, one[i].opts, id, sizeof id);
        if (rc) return die("add", rc, jobs);
    }
    ln_job_spec specs[] = {
        {"bulk", "{\"b\":1}", NULL},
        {"bulk", "{\"b\":2}", &bulk2},
        {"bulk", "{\"b\":3}", &bulk3},
    };
    int rc = ln_jobs_add_bulk(jobs, queue, specs, 3, NULL, 0);
    if (rc) return die("add_bulk", rc, jobs);
    printf("{\"added\":14}\n");
    return 0;
}

static int add_many(ln_jobs *jobs, const char *queue, long n, const char *name) {
    enum { CHUNK = 1000 };
    static ln_job_spec specs[CHUNK];
    for (int i = 0; i < CHUNK; i++) specs[i] = (ln_job_spec){name, "{}", NULL};
    for (long done = 0; done < n;) {
        size_t k = n - done < CHUNK ? (size_t)(n - done) : CHUNK;
        int rc = ln_jobs_add_bulk(jobs, queue, specs, k, NULL, 0);
        if (rc) return die("add_bulk", rc, jobs);
        done += (long)k;
    }
    return 0;
}

static int add_one(ln_jobs *jobs, const char *queue, const char *name, const char *data) {
    char id[LN_JOB_ID_MAX];
    int rc = ln_jobs_add(jobs, queue, name, data, NULL, id, sizeof id);
    if (rc) return die("add", rc, jobs);
    printf("%s\n", id);
    return 0;
}

static int add_traced(ln_jobs *jobs, const char *queue, const char *traceparent) {
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.job_id = "c-trace";
    o.traceparent = traceparent;
    int rc = ln_jobs_add(jobs, queue, "trace-c", "{}", &o, NULL, 0);
    return rc ? die("add", rc, jobs) : 0;
}

static int work(ln_jobs *jobs, const char *queue, int argc, char **argv) {
    peer p = {.sleep_ms = 0, .log_fd = -1};
    ln_worker_opts o;
    ln_worker_opts_init(&o);
    o.exit_when_empty = 1;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--forever")) {
            o.exit_when_empty = 0;
            continue;
        }
        if (!v) {
            fprintf(stderr, "redis_peer: %s needs a value\n", a);
            return 2;
        }
        i++;
        if (!strcmp(a, "--concurrency"))
            o.concurrency = (unsigned)atoi(v);
        else if (!strcmp(a, "--lease-ms")) /* and look for lapsed ones as often */
            o.lease_ms = o.stalled_interval_ms = (unsigned)atoi(v);
        else if (!strcmp(a, "--sleep-ms"))
            p.sleep_ms = (unsigned)atoi(v);
        else if (!strcmp(a, "--hold"))
            p.hold = v;
        else if (!strcmp(a, "--log")) {
            p.log_fd = open(v, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
            if (p.log_fd < 0) {
                perror(v);
                return 1;
            }
        } else {
            fprintf(stderr, "redis_peer: unknown option %s\n", a);
            return 2;
        }
    }
    ln_worker *w;
    int rc = ln_worker_create(&w, jobs, queue, handle, &p, &o);
    if (rc) return die("worker_create", rc, jobs);
    g_worker = w;
    signal(SIGTERM, on_term);
    signal(SIGINT, on_term);
    fprintf(stderr, "redis_peer: working\n");
    rc = ln_worker_run(w);
    ln_worker_stats st;
    ln_worker_get_stats(w, &st);
    g_worker = NULL;
    ln_worker_destroy(w);
    if (p.log_fd >= 0) close(p.log_fd);
    if (rc) return die("worker_run", rc, jobs);
    printf("{\"taken\":%llu,\"completed\":%llu,\"failed\":%llu,\"retried\":%llu,"
           "\"stale\":%llu,\"stalled_found\":%llu}\n",
           (unsigned long long)st.taken, (unsigned long long)st.completed,
           (unsigned long long)st.failed, (unsigned long long)st.retried,
           (unsigned long long)st.stale, (unsigned long long)st.stalled_found);
    return 0;
}

int main(int argc, char **argv) {
    /* As docs/redis.md asks of every program using the Redis store: a write
     * to a connection the server closed (a restart) must fail, not kill. */
    signal(SIGPIPE, SIG_IGN);
    if (argc < 4) {
        fprintf(stderr, "usage: redis_peer add|bulk|one|work URL QUEUE [args]\n");
        return 2;
    }
    ln_jobs *jobs;
    char err[512];
    int rc = ln_jobs_open_ex(&jobs, argv[2], NULL, err, sizeof err);
    if (rc) {
        fprintf(stderr, "redis_peer: open %s: %s (%s)\n", argv[2], ln_strerror(rc), err);
        return 1;
    }
    const char *cmd = argv[1], *queue = argv[3];
    int status;
    if (!strcmp(cmd, "add"))
        status = add_scenario(jobs, queue);
    else if (!strcmp(cmd, "bulk") && argc >= 5)
        status = add_many(jobs, queue, atol(argv[4]), argc > 5 ? argv[5] : "noop");
    else if (!strcmp(cmd, "one") && argc == 6)
        status = add_one(jobs, queue, argv[4], argv[5]);
    else if (!strcmp(cmd, "trace") && argc == 5)
        status = add_traced(jobs, queue, argv[4]);
    else if (!strcmp(cmd, "work"))
        status = work(jobs, queue, argc - 4, argv + 4);
    else {
        fprintf(stderr, "redis_peer: unknown command or arguments: %s\n", cmd);
        status = 2;
    }
    ln_jobs_close(jobs);
    return status;
}
