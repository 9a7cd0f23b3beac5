/* bench_bullmq.c - lanes' Redis backend against BullMQ 6.7.0 on one
 * redis-server, in the same run (issue 6's speed targets):
 *
 *   worker  no-op jobs, concurrency 50: jobs/s of a C ln_worker vs a BullMQ
 *           Node Worker (jobs added beforehand, untimed)
 *   add     jobs/s added one call at a time, C ln_jobs_add vs awaited
 *           Queue.add
 *   bulk    jobs/s added 1000 per call, ln_jobs_add_bulk vs Queue.addBulk
 *
 * Each figure is the median of --repeats runs (min and max shown); ratios
 * are C / BullMQ. The Node side is bench/peers-bullmq/bench.mjs, run with
 * `node` from PATH and tests/interop's pinned npm install.
 *
 *   bench_bullmq [--quick] [--repeats N] [--url redis://...] [--json FILE]
 *
 * Without --url it starts its own redis-server (no persistence) on a free
 * loopback port and stops it at the end.
 */
#include <lanes.h>
#include <lanes/jobs.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define MAX_REPEATS 15
#define CHUNK 1000
#define CONCURRENCY 50

typedef struct sizes {
    long worker_jobs, add_jobs, bulk_jobs;
} sizes;

static const sizes full = {20000, 5000, 50000}, quick = {3000, 1000, 5000};

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct series {
    double v[MAX_REPEATS];
    int n;
} series;

static double median(const series *s) {
    double tmp[MAX_REPEATS];
    memcpy(tmp, s->v, sizeof(double) * (size_t)s->n);
    qsort(tmp, (size_t)s->n, sizeof(double), cmp_double);
    return s->n % 2 ? tmp[s->n / 2] : (tmp[s->n / 2 - 1] + tmp[s->n / 2]) / 2;
}

static double min_of(const series *s) {
    double m = s->v[0];
    for (int i = 1; i < s->n; i++) m = s->v[i] < m ? s->v[i] : m;
    return m;
}

static double max_of(const series *s) {
    double m = s->v[0];
    for (int i = 1; i < s->n; i++) m = s->v[i] > m ? s->v[i] : m;
    return m;
}

static void die(const char *what, int rc, ln_jobs *jobs) {
    fprintf(stderr, "bench_bullmq: %s: %s (%s)\n", what, ln_strerror(rc),
            jobs ? ln_jobs_errmsg(jobs) : "");
    exit(1);
}

/* ------------------------------------------------------------- the C side */

static int noop(ln_job *job, void *ctx) {
    (void)job;
    (void)ctx;
    return 0;
}

static void add_bulk(ln_jobs *jobs, const char *queue, long n) {
    static ln_job_spec specs[CHUNK];
    for (int i = 0; i < CHUNK; i++) specs[i] = (ln_job_spec){"noop", "{}", NULL};
    for (long done = 0; done < n; done += CHUNK) {
        size_t k = n - done < CHUNK ? (size_t)(n - done) : CHUNK;
        int rc = ln_jobs_add_bulk(jobs, queue, specs, k, NULL, 0);
        if (rc) die("add_bulk", rc, jobs);
    }
}

static void forget(ln_jobs *jobs, const char *queue) {
    size_t n;
    ln_jobs_drain(jobs, queue, &n);
    ln_jobs_clean(jobs, queue, LN_JOB_COMPLETED, -1, 0, &n);
}

static double c_worker(ln_jobs *jobs, const char *queue, long n) {
    add_bulk(jobs, queue, n);
    ln_worker_opts o;
    ln_worker_opts_init(&o);
    o.concurrency = CONCURRENCY;
    o.exit_when_empty = 1;
    ln_worker *w;
    int rc = ln_worker_create(&w, jobs, queue, noop, NULL, &o);
    if (rc) die("worker_create", rc, jobs);
    double t0 = now_s();
    if ((rc = ln_worker_run(w)) != 0) die("worker_run", rc, jobs);
    double t = now_s() - t0;
    ln_worker_stats st;
    ln_worker_get_stats(w, &st);
    ln_worker_destroy(w);
    if ((long)st.completed != n) {
        fprintf(stderr, "bench_bullmq: C worker completed %llu of %ld\n",
                (unsigned long long)st.completed, n);
        exit(1);
    }
    forget(jobs, queue);
    return (double)n / t;
}

static double c_add(ln_jobs *jobs, const char *queue, long n) {
    double t0 = now_s();
    for (long i = 0; i < n; i++) {
        int rc = ln_jobs_add(jobs, queue, "noop", "{}", NULL, NULL, 0);
        if (rc) die("add", rc, jobs);
    }
    double t = now_s() - t0;
    forget(jobs, queue);
    return (double)n / t;
}

static double c_bulk(ln_jobs *jobs, const char *queue, long n) {
    double t0 = now_s();
    add_bulk(jobs, queue, n);
    double t = now_s() - t0;
    forget(jobs, queue);
    return (double)n / t;
}

/* ---------------------------------------------------------- the Node side */

static char peer_script[4096];

/* Run bench.mjs and return jobs/s from its {"seconds": S} line. */
static double node_run(const char *cmd, const char *url, const char *queue, long n) {
    char count[32], conc[16];
    snprintf(count, sizeof count, "%ld", n);
    snprintf(conc, sizeof conc, "%d", CONCURRENCY);
    char *argv[] = {"node",        peer_script, (char *)cmd, (char *)url,
                    (char *)queue, count,       conc,        NULL};
    int out[2];
    if (pipe(out) != 0) {
        perror("pipe");
        exit(1);
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_addclose(&fa, out[0]);
    pid_t pid;
    int rc = posix_spawnp(&pid, "node", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(out[1]);
    if (rc != 0) {
        fprintf(stderr, "bench_bullmq: cannot run node: %s\n", strerror(rc));
        exit(1);
    }
    char buf[512];
    size_t len = 0;
    ssize_t r;
    while ((r = read(out[0], buf + len, sizeof buf - 1 - len)) > 0) len += (size_t)r;
    buf[len] = '\0';
    close(out[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    const char *s = strstr(buf, "\"seconds\":");
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !s) {
        fprintf(stderr, "bench_bullmq: node %s failed: %s\n", cmd, buf);
        exit(1);
    }
    return (double)n / strtod(s + 10, NULL);
}

/* ------------------------------------------------------------ redis-server */

static pid_t redis_pid = -1;

static int free_port(void) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) != 0) {
        perror("free port");
        exit(1);
    }
    close(fd);
    return ntohs(a.sin_port);
}

static void start_redis(char *url, size_t size) {
    char port[16];
    snprintf(port, sizeof port, "%d", free_port());
    char *argv[] = {"redis-server", "--port", port,    "--bind", "127.0.0.1",  "--save",  "",
                    "--appendonly", "no",     "--dir", "/tmp",   "--loglevel", "warning", NULL};
    posix_spawn_file_actions_t fa; /* its log would interleave with ours */
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    int rc = posix_spawnp(&redis_pid, "redis-server", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        fprintf(stderr, "bench_bullmq: cannot run redis-server: %s\n", strerror(rc));
        exit(1);
    }
    snprintf(url, size, "redis://127.0.0.1:%s/0", port);
    for (int i = 0; i < 200; i++) { /* until it answers */
        ln_jobs *probe;
        if (ln_jobs_open(&probe, url) == 0) {
            ln_jobs_close(probe);
            return;
        }
        struct timespec ts = {0, 50000000};
        nanosleep(&ts, NULL);
    }
    fprintf(stderr, "bench_bullmq: redis-server did not start\n");
    exit(1);
}

static void stop_redis(void) {
    if (redis_pid > 0) {
        kill(redis_pid, SIGTERM);
        waitpid(redis_pid, NULL, 0);
        redis_pid = -1;
    }
}

/* --------------------------------------------------------------------- main */

typedef struct row {
    const char *what;
    series c, node;
} row;

static void print_series_json(FILE *f, const series *s) {
    fprintf(f, "{\"median\": %.1f, \"min\": %.1f, \"max\": %.1f, \"runs\": [", median(s), min_of(s),
            max_of(s));
    for (int i = 0; i < s->n; i++) fprintf(f, "%s%.1f", i ? ", " : "", s->v[i]);
    fprintf(f, "]}");
}

int main(int argc, char **argv) {
    const sizes *sz = &full;
    int repeats = 5, quick_mode = 0;
    const char *url_arg = NULL, *json_path = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) {
            sz = &quick;
            repeats = 3;
            quick_mode = 1;
        } else if (!strcmp(argv[i], "--repeats") && i + 1 < argc) {
            repeats = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--url") && i + 1 < argc) {
            url_arg = argv[++i];
        } else if (!strcmp(argv[i], "--json") && i + 1 < argc) {
            json_path = argv[++i];
        } else {
            fprintf(stderr,
                    "usage: %s [--quick] [--repeats N] [--url redis://...] "
                    "[--json FILE]\n",
                    argv[0]);
            return 2;
        }
    }
    if (repeats < 1 || repeats > MAX_REPEATS) {
        fprintf(stderr, "bench_bullmq: --repeats must be 1..%d\n", MAX_REPEATS);
        return 2;
    }
    /* bench.mjs sits beside this file (CMake compiles it by absolute path);
     * LANES_SOURCE_DIR overrides for a moved tree. */
    const char *src = getenv("LANES_SOURCE_DIR");
    if (src) {
        snprintf(peer_script, sizeof peer_script, "%s/bench/peers-bullmq/bench.mjs", src);
    } else {
        const char *slash = strrchr(__FILE__, '/');
        int dir_len = slash ? (int)(slash - __FILE__) : 1;
        snprintf(peer_script, sizeof peer_script, "%.*s/peers-bullmq/bench.mjs", dir_len,
                 slash ? __FILE__ : ".");
    }

    char url[256];
    if (url_arg)
        snprintf(url, sizeof url, "%s", url_arg);
    else
        start_redis(url, sizeof url);
    atexit(stop_redis);
    ln_jobs *jobs;
    int rc = ln_jobs_open(&jobs, url);
    if (rc) die("open", rc, NULL);

    row rows[3] = {{"worker jobs/s (no-op, concurrency 50)", {{0}, 0}, {{0}, 0}},
                   {"single adds/s", {{0}, 0}, {{0}, 0}},
                   {"bulk adds/s (1000 per call)", {{0}, 0}, {{0}, 0}}};
    char queue[64];
    static const char *const node_cmd[3] = {"worker", "add", "bulk"};
    const long njobs[3] = {sz->worker_jobs, sz->add_jobs, sz->bulk_jobs};
    double (*const c_run[3])(ln_jobs *, const char *, long) = {c_worker, c_add, c_bulk};
    for (int r = 0; r < repeats; r++) {
        /* Each C run sits next to its BullMQ run, so both see the same
         * machine; who goes first alternates, so neither always gets the
         * warmer server. */
        for (int m = 0; m < 3; m++) {
            for (int side = 0; side < 2; side++) {
                int c_side = (side + r + m) % 2 == 0;
                snprintf(queue, sizeof queue, "bench-%s-%s-%d", node_cmd[m], c_side ? "c" : "node",
                         r);
                if (c_side)
                    rows[m].c.v[rows[m].c.n++] = c_run[m](jobs, queue, njobs[m]);
                else
                    rows[m].node.v[rows[m].node.n++] = node_run(node_cmd[m], url, queue, njobs[m]);
            }
        }
        fprintf(stderr, "repeat %d/%d done\n", r + 1, repeats);
    }
    ln_jobs_close(jobs);

    printf("%-40s %12s %12s %8s\n", "", "lanes (C)", "BullMQ", "ratio");
    for (int i = 0; i < 3; i++)
        printf("%-40s %12.0f %12.0f %7.2fx\n", rows[i].what, median(&rows[i].c),
               median(&rows[i].node), median(&rows[i].c) / median(&rows[i].node));
    printf("(medians of %d runs; jobs: worker %ld, add %ld, bulk %ld%s)\n", repeats,
           sz->worker_jobs, sz->add_jobs, sz->bulk_jobs, quick_mode ? "; --quick" : "");

    if (json_path) {
        FILE *f = fopen(json_path, "w");
        if (!f) {
            perror(json_path);
            return 1;
        }
        static const char *const keys[3] = {"worker", "add", "bulk"};
        fprintf(f,
                "{\"experiment\": \"bullmq\", \"repeats\": %d, \"quick\": %s,\n"
                "  \"jobs\": {\"worker\": %ld, \"add\": %ld, \"bulk\": %ld},\n"
                "  \"concurrency\": %d, \"unit\": \"jobs/s\",\n  \"results\": {\n",
                repeats, quick_mode ? "true" : "false", sz->worker_jobs, sz->add_jobs,
                sz->bulk_jobs, CONCURRENCY);
        for (int i = 0; i < 3; i++) {
            fprintf(f, "    \"%s\": {\"lanes\": ", keys[i]);
            print_series_json(f, &rows[i].c);
            fprintf(f, ",\n      \"bullmq\": ");
            print_series_json(f, &rows[i].node);
            fprintf(f, ",\n      \"ratio\": %.2f}%s\n", median(&rows[i].c) / median(&rows[i].node),
                    i < 2 ? "," : "");
        }
        fprintf(f, "  }\n}\n");
        fclose(f);
    }
    return 0;
}
