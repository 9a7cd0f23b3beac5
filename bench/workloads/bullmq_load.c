/* bullmq_load.c - the C side of E6, the Redis store's speed figures; see
 * bullmq_load.h. */
#include "workloads/bullmq_load.h"

#include <lanes.h>
#include <lanes/jobs.h>

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#ifdef BENCH_HAVE_HIREDIS
#include <hiredis/hiredis.h>
#endif

#define NAME "noop"
#define DATA "{}"

static int fail(bench_bullmq_result *out, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(bench_bullmq_result *out, int err, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out->errmsg, sizeof out->errmsg, fmt, ap);
    va_end(ap);
    return err;
}

static int open_store(const char *url, ln_jobs **jobs, bench_bullmq_result *out) {
    char msg[200] = "";
    int err = ln_jobs_open_ex(jobs, url, NULL, msg, sizeof msg);
    return err == 0 ? 0 : fail(out, err, "open %s: %s (%s)", url, msg, ln_strerror(err));
}

/* Remove queue a run leaves and everything of it (ln_jobs_obliterate, as
 * bench.mjs obliterates BullMQ's), so the next run starts on a server
 * holding no more than the one before did. Its error, if any, is kept in
 * out unless one is there already. */
static int forget(ln_jobs *jobs, const char *queue, bench_bullmq_result *out) {
    int err = ln_jobs_obliterate(jobs, queue, 0, NULL);
    if (err != 0 && out->errmsg[0] == '\0')
        fail(out, err, "obliterating queue %s: %s", queue, ln_jobs_errmsg(jobs));
    return err;
}

/* Add n jobs, batch per call (1: ln_jobs_add). */
static int add_jobs(ln_jobs *jobs, const char *queue, size_t n, size_t batch,
                    bench_bullmq_result *out) {
    ln_job_spec specs[BENCH_BULLMQ_BATCH];
    for (size_t i = 0; i < batch; i++) specs[i] = (ln_job_spec){NAME, DATA, NULL};
    for (size_t done = 0; done < n;) {
        size_t k = n - done < batch ? n - done : batch;
        int err = batch == 1 ? ln_jobs_add(jobs, queue, NAME, DATA, NULL, NULL, 0)
                             : ln_jobs_add_bulk(jobs, queue, specs, k, NULL, 0);
        if (err != 0) return fail(out, err, "add: %s", ln_jobs_errmsg(jobs));
        done += k;
    }
    return 0;
}

/* The queue holds exactly 'waiting' waiting and 'completed' completed jobs
 * and nothing else. */
static int check_counts(ln_jobs *jobs, const char *queue, uint64_t waiting, uint64_t completed,
                        bench_bullmq_result *out) {
    ln_job_counts c;
    int err = ln_jobs_counts(jobs, queue, &c);
    if (err != 0) return fail(out, err, "counts: %s", ln_jobs_errmsg(jobs));
    if (c.waiting != waiting || c.completed != completed ||
        c.delayed + c.prioritized + c.active + c.failed + c.paused != 0)
        return fail(out, LN_EFAILED,
                    "queue %s holds %llu waiting and %llu completed jobs, expected %llu and %llu",
                    queue, (unsigned long long)c.waiting, (unsigned long long)c.completed,
                    (unsigned long long)waiting, (unsigned long long)completed);
    return 0;
}

/* ------------------------------------------------- the server's counters */

/* What the server says it spent: CPU seconds (user + sys) and commands
 * run, in total and as scripts, since it started. ok 0: not read. */
typedef struct server_stats {
    int ok;
    double cpu_s;
    double calls, scripts;
} server_stats;

#ifdef BENCH_HAVE_HIREDIS
/* A connection to url's server (redis://[[USER]:PASSWORD@]HOST[:PORT]...
 * or unix:/PATH..., as <lanes/jobs.h> reads them, without %-escapes), or
 * NULL. INFO needs no database, so /DB and the query are ignored. */
static redisContext *stats_connect(const char *url) {
    char host[256], user[128] = "", pass[256] = "";
    int port = 6379;
    redisContext *c = NULL;
    struct timeval tv = {2, 0};
    if (strncmp(url, "unix:", 5) == 0) {
        snprintf(host, sizeof host, "%.*s", (int)strcspn(url + 5, "?"), url + 5);
        c = redisConnectUnixWithTimeout(host, tv);
    } else if (strncmp(url, "redis://", 8) == 0) {
        const char *p = url + 8, *at = strchr(p, '@');
        if (at) {
            size_t ulen = strcspn(p, ":@");
            snprintf(user, sizeof user, "%.*s", (int)ulen, p);
            if (p[ulen] == ':')
                snprintf(pass, sizeof pass, "%.*s", (int)(at - p - ulen - 1), p + ulen + 1);
            p = at + 1;
        }
        size_t hlen = strcspn(p, ":/?");
        snprintf(host, sizeof host, "%.*s", (int)hlen, p);
        if (p[hlen] == ':') port = atoi(p + hlen + 1);
        c = redisConnectWithTimeout(host, port, tv);
    }
    if (c && !c->err && pass[0]) {
        redisReply *r =
            user[0] ? redisCommand(c, "AUTH %s %s", user, pass) : redisCommand(c, "AUTH %s", pass);
        if (!r || r->type == REDIS_REPLY_ERROR) c->err = REDIS_ERR_OTHER;
        if (r) freeReplyObject(r);
    }
    if (c && c->err) {
        redisFree(c);
        c = NULL;
    }
    return c;
}

/* The number after "<name>:" on a line of INFO text, or -1. */
static double info_field(const char *text, const char *name) {
    size_t n = strlen(name);
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        if (strncmp(p, name, n) == 0 && p[n] == ':') return strtod(p + n + 1, NULL);
    return -1;
}

/* Sum of calls=N over every "cmdstat_<cmd>:calls=N,..." line of INFO
 * commandstats, and of the script commands alone. */
static void count_calls(const char *text, server_stats *st) {
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        if (strncmp(p, "cmdstat_", 8) != 0) continue;
        const char *calls = strstr(p, ":calls=");
        const char *eol = strchr(p, '\n');
        if (!calls || (eol && calls > eol)) continue;
        double v = strtod(calls + 7, NULL);
        st->calls += v;
        if (!strncmp(p, "cmdstat_evalsha:", 16) || !strncmp(p, "cmdstat_eval:", 13))
            st->scripts += v;
    }
}

static server_stats stats_read(redisContext *c) {
    server_stats st = {0};
    if (!c) return st;
    redisReply *cpu = redisCommand(c, "INFO cpu");
    redisReply *cmds = redisCommand(c, "INFO commandstats");
    if (cpu && cpu->type == REDIS_REPLY_STRING && cmds && cmds->type == REDIS_REPLY_STRING) {
        double u = info_field(cpu->str, "used_cpu_user"), s = info_field(cpu->str, "used_cpu_sys");
        if (u >= 0 && s >= 0) {
            st.ok = 1;
            st.cpu_s = u + s;
            count_calls(cmds->str, &st);
        }
    }
    if (cpu) freeReplyObject(cpu);
    if (cmds) freeReplyObject(cmds);
    return st;
}
#else
typedef void redisContext;
static redisContext *stats_connect(const char *url) {
    (void)url;
    return NULL;
}
static server_stats stats_read(redisContext *c) {
    (void)c;
    return (server_stats){0};
}
static void redisFree(redisContext *c) {
    (void)c;
}
#endif

/* The server's work between a and b, per job, into out (-1: unknown). The
 * two INFO reads of b count as calls too: 2 of them, not subtracted. */
static void stats_put(server_stats a, server_stats b, size_t jobs, bench_bullmq_result *out) {
    int ok = a.ok && b.ok && jobs > 0;
    out->redis_cpu_us_per_job = ok ? (b.cpu_s - a.cpu_s) * 1e6 / (double)jobs : -1;
    out->redis_calls_per_job = ok ? (b.calls - a.calls) / (double)jobs : -1;
    out->redis_scripts_per_job = ok ? (b.scripts - a.scripts) / (double)jobs : -1;
}

/* This process's CPU seconds so far, user + sys, every thread. */
static double self_cpu_s(void) {
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0) return -1;
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static int noop(ln_job *job, void *ctx) {
    (void)job;
    (void)ctx;
    return 0;
}

/* A pool with one fixed lane of n threads (min = max = n), or NULL. */
static ln_pool *fixed_pool(unsigned n) {
    ln_pool_opts po;
    ln_pool_opts_init(&po);
    po.nlanes = 1;
    po.lanes[0] = (ln_lane_opts){"jobs", n, n, 0, NULL, 0};
    ln_pool *pool = NULL;
    return ln_pool_create(&pool, &po) == 0 ? pool : NULL;
}

int bench_bullmq_worker(const char *url, const char *queue, size_t jobs, unsigned concurrency,
                        unsigned threads, int no_active_event, bench_bullmq_result *out) {
    if (!out) return LN_EINVAL;
    out->jobs_per_sec = 0;
    out->redis_cpu_us_per_job = out->redis_calls_per_job = out->redis_scripts_per_job = -1;
    out->worker_cpu_us_per_job = -1;
    out->errmsg[0] = '\0';
    if (!url || !queue || jobs == 0 || concurrency == 0 || concurrency > 1000 || threads > 64)
        return fail(out, LN_EINVAL,
                    "need a URL, a queue, jobs >= 1, concurrency 1..1000 and threads 0..64");
    ln_jobs *store;
    int err = open_store(url, &store, out);
    if (err != 0) return err;
    ln_worker *w = NULL;
    ln_pool *pool = NULL;
    if (threads > 0 && !(pool = fixed_pool(threads)))
        err = fail(out, LN_ENOMEM, "cannot create a pool of %u threads", threads);
    if (err == 0) err = forget(store, queue, out);
    if (err == 0) err = add_jobs(store, queue, jobs, BENCH_BULLMQ_BATCH, out);
    if (err == 0) {
        ln_worker_opts o;
        ln_worker_opts_init(&o);
        o.concurrency = concurrency;
        o.exit_when_empty = 1;
        o.no_active_event = no_active_event;
        if (pool) {
            o.pool = pool;
            o.lane = 0;
        }
        err = ln_worker_create(&w, store, queue, noop, NULL, &o);
        if (err != 0) fail(out, err, "worker_create: %s", ln_strerror(err));
    }
    if (err == 0) {
        redisContext *info = stats_connect(url);
        server_stats before = stats_read(info);
        double cpu0 = self_cpu_s();
        uint64_t t0 = ln_now_ns();
        err = ln_worker_run(w);
        double secs = (double)(ln_now_ns() - t0) / 1e9;
        double cpu1 = self_cpu_s();
        stats_put(before, stats_read(info), jobs, out);
        if (cpu0 >= 0 && cpu1 >= 0) out->worker_cpu_us_per_job = (cpu1 - cpu0) * 1e6 / (double)jobs;
        if (info) redisFree(info);
        ln_worker_stats st;
        ln_worker_get_stats(w, &st);
        if (err != 0)
            fail(out, err, "worker_run: %s", ln_jobs_errmsg(store));
        else if (st.completed != jobs)
            err = fail(out, LN_EFAILED, "the worker completed %llu of %zu jobs",
                       (unsigned long long)st.completed, jobs);
        else
            out->jobs_per_sec = (double)jobs / secs;
    }
    if (err == 0) err = check_counts(store, queue, 0, jobs, out);
    ln_worker_destroy(w);
    if (pool) ln_pool_destroy(pool);
    int cleaned = forget(store, queue, out);
    ln_jobs_close(store);
    return err != 0 ? err : cleaned;
}

int bench_bullmq_add(const char *url, const char *queue, size_t jobs, size_t batch,
                     bench_bullmq_result *out) {
    if (!out) return LN_EINVAL;
    out->jobs_per_sec = 0;
    out->redis_cpu_us_per_job = out->redis_calls_per_job = out->redis_scripts_per_job = -1;
    out->worker_cpu_us_per_job = -1;
    out->errmsg[0] = '\0';
    if (!url || !queue || jobs == 0 || batch == 0 || batch > BENCH_BULLMQ_BATCH)
        return fail(out, LN_EINVAL, "need a URL, a queue, jobs >= 1 and batch 1..%d",
                    BENCH_BULLMQ_BATCH);
    ln_jobs *store;
    int err = open_store(url, &store, out);
    if (err != 0) return err;
    err = forget(store, queue, out);
    if (err == 0) {
        uint64_t t0 = ln_now_ns();
        err = add_jobs(store, queue, jobs, batch, out);
        double secs = (double)(ln_now_ns() - t0) / 1e9;
        if (err == 0) out->jobs_per_sec = (double)jobs / secs;
    }
    if (err == 0) err = check_counts(store, queue, jobs, 0, out);
    int cleaned = forget(store, queue, out);
    ln_jobs_close(store);
    return err != 0 ? err : cleaned;
}
