/* jobs_load.c - the job-queue workloads; see jobs_load.h. */
#include "workloads/jobs_load.h"

#include <lanes.h>
#include <lanes/jobs.h>

#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define QUEUE "bench"
#define DATA "{\"n\":1}"
#define MAX_PROCS 8
#define HOLD_ID "lanes-bench-hold" /* e2e's placeholder job */

void bench_jobs_opts_init(bench_jobs_opts *opts) {
    const char *tmp = getenv("TMPDIR");
    opts->jobs = 100000;
    opts->dir = tmp != NULL && *tmp != '\0' ? tmp : "/tmp";
    opts->sync = "normal";
}

static int fail(bench_jobs_result *out, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(bench_jobs_result *out, int err, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out->errmsg, sizeof out->errmsg, fmt, ap);
    va_end(ap);
    return err;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* p50, p99 and mean of v[0..n) (sorted here) into out; -1 when n is 0. */
static void percentiles(double *v, size_t n, bench_jobs_result *out) {
    out->p50 = out->p99 = out->mean = -1;
    if (n == 0) return;
    qsort(v, n, sizeof *v, cmp_double);
    double sum = 0;
    for (size_t i = 0; i < n; i++) sum += v[i];
    out->p50 = v[n / 2];
    out->p99 = v[n * 99 / 100];
    out->mean = sum / (double)n;
}

static double secs_since(uint64_t t0) {
    return (double)(ln_now_ns() - t0) / 1e9;
}

/* ---------------------------------------------------------------- stores */

typedef struct store {
    char path[512];
    char url[600];
} store;

static const char *const store_files[] = {"", "-wal", "-shm", "-reserve"};

static void store_remove(const store *s) {
    for (size_t i = 0; i < sizeof store_files / sizeof *store_files; i++) {
        char p[540];
        snprintf(p, sizeof p, "%s%s", s->path, store_files[i]);
        unlink(p);
    }
}

/* A path no earlier run of this process used, with no leftover files. */
static int store_make(const bench_jobs_opts *o, store *s, bench_jobs_result *out) {
    static unsigned seq; /* one workload at a time (jobs.h) */
    if (o->jobs == 0 || o->dir == NULL || o->sync == NULL ||
        (strcmp(o->sync, "normal") != 0 && strcmp(o->sync, "full") != 0))
        return fail(out, LN_EINVAL, "need jobs >= 1, a directory and sync normal or full");
    int n = snprintf(s->path, sizeof s->path, "%s/lanes-bench-jobs-%ld-%u.db", o->dir,
                     (long)getpid(), seq++);
    if (n < 0 || (size_t)n >= sizeof s->path)
        return fail(out, LN_EINVAL, "directory name too long");
    snprintf(s->url, sizeof s->url, "sqlite:%s?sync=%s", s->path, o->sync);
    store_remove(s);
    return 0;
}

static int store_open(const store *s, ln_jobs **jobs, bench_jobs_result *out) {
    char msg[200];
    int err = ln_jobs_open_ex(jobs, s->url, NULL, msg, sizeof msg);
    return err == 0 ? 0 : fail(out, err, "open %s: %s", s->url, msg);
}

/* Add n jobs in batches of BENCH_JOBS_BATCH. */
static int add_batches(ln_jobs *jobs, size_t n, bench_jobs_result *out) {
    ln_job_spec specs[BENCH_JOBS_BATCH];
    for (size_t i = 0; i < BENCH_JOBS_BATCH; i++) specs[i] = (ln_job_spec){"bench", DATA, NULL};
    for (size_t done = 0; done < n;) {
        size_t k = n - done < BENCH_JOBS_BATCH ? n - done : BENCH_JOBS_BATCH;
        int err = ln_jobs_add_bulk(jobs, QUEUE, specs, k, NULL, 0);
        if (err != 0) return fail(out, err, "add_bulk: %s", ln_jobs_errmsg(jobs));
        done += k;
    }
    return 0;
}

/* Every job of the run is completed and none is anywhere else. */
static int check_completed(ln_jobs *jobs, size_t n, bench_jobs_result *out) {
    ln_job_counts c;
    int err = ln_jobs_counts(jobs, QUEUE, &c);
    if (err != 0) return fail(out, err, "counts: %s", ln_jobs_errmsg(jobs));
    if (c.completed != n ||
        c.waiting + c.delayed + c.prioritized + c.active + c.failed + c.paused != 0)
        return fail(out, LN_EFAILED, "%llu of %zu jobs completed", (unsigned long long)c.completed,
                    n);
    return 0;
}

/* ------------------------------------------------------------------ adds */

int bench_jobs_add(const bench_jobs_opts *o, size_t batch, bench_jobs_result *out) {
    memset(out, 0, sizeof *out);
    if (batch < 1 || batch > BENCH_JOBS_BATCH)
        return fail(out, LN_EINVAL, "batch must be 1..%d", BENCH_JOBS_BATCH);
    store s;
    ln_jobs *jobs = NULL;
    int err = store_make(o, &s, out);
    if (err == 0) err = store_open(&s, &jobs, out);
    if (err != 0) return err;
    size_t calls = (o->jobs + batch - 1) / batch;
    double *lat = malloc(calls * sizeof *lat);
    ln_job_spec specs[BENCH_JOBS_BATCH];
    for (size_t i = 0; i < batch; i++) specs[i] = (ln_job_spec){"bench", DATA, NULL};
    if (lat == NULL) err = fail(out, LN_ENOMEM, "out of memory");

    uint64_t t0 = ln_now_ns();
    for (size_t i = 0, k = 0; err == 0 && i < o->jobs; k++) {
        size_t n = o->jobs - i < batch ? o->jobs - i : batch;
        uint64_t a = ln_now_ns();
        err = batch == 1 ? ln_jobs_add(jobs, QUEUE, "bench", DATA, NULL, NULL, 0)
                         : ln_jobs_add_bulk(jobs, QUEUE, specs, n, NULL, 0);
        lat[k] = (double)(ln_now_ns() - a) / 1e3;
        i += n;
    }
    double elapsed = secs_since(t0);

    if (err != 0) {
        fail(out, err, "add: %s", ln_jobs_errmsg(jobs));
    } else {
        out->jobs_per_sec = (double)o->jobs / elapsed;
        percentiles(lat, calls, out);
    }
    free(lat);
    ln_jobs_close(jobs);
    store_remove(&s);
    return err;
}

/* ------------------------------------------------------------ processing */

static int noop(ln_job *job, void *ctx) {
    (void)job, (void)ctx;
    return 0;
}

static int worker_make(ln_jobs *jobs, unsigned concurrency, ln_worker **w, bench_jobs_result *out) {
    ln_worker_opts wo;
    ln_worker_opts_init(&wo);
    wo.concurrency = concurrency;
    wo.exit_when_empty = 1;
    wo.poll_ms = 5; /* the last empty poll ends the run: keep it short */
    int err = ln_worker_create(w, jobs, QUEUE, noop, NULL, &wo);
    return err == 0 ? 0 : fail(out, err, "worker: %s", ln_jobs_errmsg(jobs));
}

/* A worker process: its own handle and worker; exit status 0 when every
 * call succeeded. */
static void worker_process(const store *s, unsigned concurrency) {
    bench_jobs_result r;
    ln_jobs *jobs = NULL;
    ln_worker *w = NULL;
    int err = store_open(s, &jobs, &r);
    if (err == 0) err = worker_make(jobs, concurrency, &w, &r);
    if (err == 0) err = ln_worker_run(w);
    if (err != 0)
        fprintf(stderr, "bench worker %ld: %s\n", (long)getpid(),
                r.errmsg[0] ? r.errmsg : ln_strerror(err));
    ln_worker_destroy(w);
    ln_jobs_close(jobs);
    _exit(err == 0 ? 0 : 1);
}

static int run_procs(const store *s, unsigned concurrency, unsigned procs, bench_jobs_result *out) {
    pid_t pid[MAX_PROCS];
    unsigned started = 0;
    while (started < procs) {
        if ((pid[started] = fork()) == 0) worker_process(s, concurrency);
        if (pid[started] < 0) break;
        started++;
    }
    int ok = started == procs;
    for (unsigned i = 0; i < started; i++) {
        int st;
        ok &= waitpid(pid[i], &st, 0) == pid[i] && WIFEXITED(st) && WEXITSTATUS(st) == 0;
    }
    return ok ? 0 : fail(out, LN_EFAILED, "a worker process failed");
}

/* take -> complete of every completed job, in ms, from the store. */
static int run_latency(ln_jobs *jobs, size_t n, bench_jobs_result *out) {
    double *ms = malloc(n * sizeof *ms);
    if (ms == NULL) return fail(out, LN_ENOMEM, "out of memory");
    size_t got = 0;
    int err = 0;
    while (err == 0 && got < n) {
        ln_job_info *page;
        size_t k;
        err = ln_jobs_list(jobs, QUEUE, LN_JOB_COMPLETED, got, 10000, &page, &k);
        for (size_t i = 0; err == 0 && i < k && got < n; i++)
            ms[got++] = (double)(page[i].finished_ms - page[i].started_ms);
        if (err == 0) ln_job_info_free_array(page, k);
        if (err == 0 && k == 0) break;
    }
    if (err != 0)
        fail(out, err, "list: %s", ln_jobs_errmsg(jobs));
    else
        percentiles(ms, got, out);
    free(ms);
    return err;
}

int bench_jobs_run(const bench_jobs_opts *o, unsigned concurrency, unsigned procs,
                   bench_jobs_result *out) {
    memset(out, 0, sizeof *out);
    if (concurrency < 1 || procs < 1 || procs > MAX_PROCS)
        return fail(out, LN_EINVAL,
                    "need concurrency >= 1 and 1..%d "
                    "processes",
                    MAX_PROCS);
    store s;
    ln_jobs *jobs = NULL;
    ln_worker *w = NULL;
    int err = store_make(o, &s, out);
    if (err == 0) err = store_open(&s, &jobs, out);
    if (err == 0) err = add_batches(jobs, o->jobs, out);
    if (err == 0 && procs == 1) err = worker_make(jobs, concurrency, &w, out);

    uint64_t t0 = ln_now_ns();
    if (err == 0 && procs == 1) {
        if ((err = ln_worker_run(w)) != 0) fail(out, err, "worker: %s", ln_jobs_errmsg(jobs));
    } else if (err == 0) {
        err = run_procs(&s, concurrency, procs, out);
    }
    double elapsed = secs_since(t0);

    ln_worker_destroy(w);
    if (err == 0) err = check_completed(jobs, o->jobs, out);
    if (err == 0) err = run_latency(jobs, o->jobs, out);
    if (err == 0) out->jobs_per_sec = (double)o->jobs / elapsed;
    ln_jobs_close(jobs);
    store_remove(&s);
    return err;
}

/* ------------------------------------------------------------ end to end */

typedef struct producer {
    ln_jobs *jobs; /* the producer's own handle */
    ln_worker *w;  /* stopped if the producer fails */
    size_t n;
    int err;
    bench_jobs_result out; /* the producer's error message */
} producer;

static void *produce(void *arg) {
    producer *p = arg;
    p->err = add_batches(p->jobs, p->n, &p->out);
    /* Last: the queue may now look empty, and the worker exit, only once
     * every job is in. */
    int err = ln_jobs_remove(p->jobs, QUEUE, HOLD_ID);
    if (p->err == 0 && err != 0)
        p->err = fail(&p->out, err, "remove placeholder: %s", ln_jobs_errmsg(p->jobs));
    if (p->err != 0) ln_worker_stop(p->w);
    return NULL;
}

int bench_jobs_e2e(const bench_jobs_opts *o, unsigned concurrency, bench_jobs_result *out) {
    memset(out, 0, sizeof *out);
    store s;
    ln_jobs *jobs = NULL;
    producer p = {.n = o->jobs};
    ln_job_opts hold;
    ln_job_opts_init(&hold);
    hold.job_id = HOLD_ID;
    hold.delay_ms = 24 * 3600 * 1000; /* never due during the run */
    int err = store_make(o, &s, out);
    if (err == 0) err = store_open(&s, &jobs, out);
    if (err == 0) err = store_open(&s, &p.jobs, out);
    if (err == 0 && (err = ln_jobs_add(jobs, QUEUE, "hold", "{}", &hold, NULL, 0)) != 0)
        fail(out, err, "add placeholder: %s", ln_jobs_errmsg(jobs));
    if (err == 0) err = worker_make(jobs, concurrency, &p.w, out);

    pthread_t tid;
    uint64_t t0 = ln_now_ns();
    if (err == 0 && pthread_create(&tid, NULL, produce, &p) != 0)
        err = fail(out, LN_ENOMEM, "cannot start the producer thread");
    if (err == 0) {
        int werr = ln_worker_run(p.w);
        pthread_join(tid, NULL);
        if (p.err != 0)
            err = fail(out, p.err, "%s", p.out.errmsg);
        else if (werr != 0)
            err = fail(out, werr, "worker: %s", ln_jobs_errmsg(jobs));
    }
    double elapsed = secs_since(t0);

    ln_worker_destroy(p.w);
    if (err == 0) err = check_completed(jobs, o->jobs, out);
    if (err == 0) {
        out->jobs_per_sec = (double)o->jobs / elapsed;
        out->p50 = out->p99 = out->mean = -1;
    }
    ln_jobs_close(p.jobs);
    ln_jobs_close(jobs);
    store_remove(&s);
    return err;
}
