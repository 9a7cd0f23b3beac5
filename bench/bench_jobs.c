/* bench_jobs.c - throughput and latency of the SQLite job queue.
 *
 *   bench_jobs [--jobs N] [--repeats R] [--dir DIR] [--sync normal|full]
 *              [--quick]
 *
 * Measures, each as the median (min..max) of R repeats on a fresh store:
 *   add-1      N jobs added one by one (one transaction each): jobs/s and
 *              the latency of one ln_jobs_add (p50/p99);
 *   add-1000   N jobs added in batches of 1,000 (one transaction each);
 *   run cC pP  N pre-added jobs run by no-op handlers at concurrency C
 *              (1, 8, 50) in P processes (1, 2): jobs/s, and the
 *              take->complete latency from the store's own timestamps;
 *   e2e        a producer adding batches of 1,000 while a worker
 *              (concurrency 8) runs them: jobs/s from the first add to the
 *              last completion, the "end to end with batching".
 * --quick: 5,000 jobs, 1 repeat. Figures depend on the machine and its
 * load; this program prints them and asserts nothing.
 */
#include <lanes.h>
#include <lanes/jobs.h>

#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_REPEATS 15

static size_t njobs = 100000;
static int repeats = 3;
static const char *dir = "/tmp";
static const char *sync_mode = "normal";

static double secs(uint64_t ns) { return (double)ns / 1e9; }

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void fresh_store(char *url, size_t size, char *path, size_t psize) {
    snprintf(path, psize, "%s/bench-jobs-%ld.db", dir, (long)getpid());
    const char *suffix[] = {"", "-wal", "-shm", "-reserve"};
    for (int i = 0; i < 4; i++) {
        char p[600];
        snprintf(p, sizeof p, "%s%s", path, suffix[i]);
        unlink(p);
    }
    snprintf(url, size, "sqlite:%s?sync=%s", path, sync_mode);
}

static void die(const char *what, int err) {
    fprintf(stderr, "bench_jobs: %s: %s\n", what, ln_strerror(err));
    exit(1);
}

static ln_jobs *open_store(const char *url) {
    ln_jobs *jobs;
    char msg[512];
    int err = ln_jobs_open_ex(&jobs, url, NULL, msg, sizeof msg);
    if (err != 0) {
        fprintf(stderr, "bench_jobs: open %s: %s\n", url, msg);
        exit(1);
    }
    return jobs;
}

static void add_bulk(ln_jobs *jobs, size_t n) {
    static ln_job_spec specs[1000];
    for (size_t i = 0; i < 1000; i++)
        specs[i] = (ln_job_spec){"bench", "{\"n\":1}", NULL};
    for (size_t done = 0; done < n;) {
        size_t k = n - done < 1000 ? n - done : 1000;
        int err = ln_jobs_add_bulk(jobs, "bench", specs, k, NULL, 0);
        if (err != 0) die("add_bulk", err);
        done += k;
    }
}

/* ------------------------------------------------------------------ adds */

typedef struct result {
    double rate, p50_us, p99_us, mean; /* latencies in the unit printed */
} result;

static result bench_add(size_t batch) {
    char url[700], path[600];
    fresh_store(url, sizeof url, path, sizeof path);
    ln_jobs *jobs = open_store(url);
    size_t nlat = (njobs + batch - 1) / batch;
    double *lat = malloc(nlat * sizeof *lat);
    static ln_job_spec specs[1000];
    for (size_t i = 0; i < 1000; i++)
        specs[i] = (ln_job_spec){"bench", "{\"n\":1}", NULL};
    uint64_t t0 = ln_now_ns();
    for (size_t i = 0, k = 0; i < njobs; k++) {
        size_t n = njobs - i < batch ? njobs - i : batch;
        uint64_t a = ln_now_ns();
        int err = n == 1 ? ln_jobs_add(jobs, "bench", "bench", "{\"n\":1}",
                                       NULL, NULL, 0)
                         : ln_jobs_add_bulk(jobs, "bench", specs, n, NULL, 0);
        if (err != 0) die("add", err);
        lat[k] = (double)(ln_now_ns() - a) / 1e3;
        i += n;
    }
    double el = secs(ln_now_ns() - t0);
    ln_jobs_close(jobs);
    qsort(lat, nlat, sizeof *lat, cmp_double);
    double sum = 0;
    for (size_t i = 0; i < nlat; i++) sum += lat[i];
    result r = {(double)njobs / el, lat[nlat / 2], lat[nlat * 99 / 100],
                sum / (double)nlat};
    free(lat);
    return r;
}

/* ------------------------------------------------------------ processing */

static int noop(ln_job *job, void *ctx) {
    (void)job, (void)ctx;
    return 0;
}

static int run_worker(const char *url, unsigned concurrency) {
    ln_jobs *jobs = open_store(url);
    ln_worker_opts o;
    ln_worker_opts_init(&o);
    o.concurrency = concurrency;
    o.exit_when_empty = 1;
    ln_worker *w;
    int err = ln_worker_create(&w, jobs, "bench", noop, NULL, &o);
    if (err == 0) err = ln_worker_run(w);
    ln_worker_destroy(w);
    ln_jobs_close(jobs);
    return err;
}

/* take -> complete latency percentiles (ms) from the store's timestamps. */
static void store_latency(const char *path, double *p50, double *p99,
                          double *mean) {
    sqlite3 *db;
    sqlite3_stmt *s;
    *p50 = *p99 = *mean = -1;
    if (sqlite3_open(path, &db) != SQLITE_OK) return;
    const char *sql = "SELECT finished_at - started_at FROM lanes_jobs WHERE "
                      "state = 4 ORDER BY 1 LIMIT 1 OFFSET ?";
    /* The store keeps ms; the mean shows what p50 = 0 ms hides. */
    if (sqlite3_prepare_v2(db, "SELECT avg(finished_at - started_at) FROM "
                           "lanes_jobs WHERE state = 4", -1, &s,
                           NULL) == SQLITE_OK) {
        if (sqlite3_step(s) == SQLITE_ROW) *mean = sqlite3_column_double(s, 0);
        sqlite3_finalize(s);
    }
    if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(s, 1, (sqlite3_int64)(njobs / 2));
        if (sqlite3_step(s) == SQLITE_ROW) *p50 = sqlite3_column_double(s, 0);
        sqlite3_reset(s);
        sqlite3_bind_int64(s, 1, (sqlite3_int64)(njobs * 99 / 100));
        if (sqlite3_step(s) == SQLITE_ROW) *p99 = sqlite3_column_double(s, 0);
        sqlite3_finalize(s);
    }
    sqlite3_close(db);
}

static result bench_run(unsigned concurrency, int procs) {
    char url[700], path[600];
    fresh_store(url, sizeof url, path, sizeof path);
    ln_jobs *jobs = open_store(url);
    add_bulk(jobs, njobs);
    uint64_t t0 = ln_now_ns();
    if (procs == 1) {
        int err = run_worker(url, concurrency);
        if (err != 0) die("worker", err);
    } else {
        pid_t pid[2];
        for (int i = 0; i < procs; i++)
            if ((pid[i] = fork()) == 0) _exit(run_worker(url, concurrency) ? 1 : 0);
        for (int i = 0; i < procs; i++) {
            int st;
            waitpid(pid[i], &st, 0);
            if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) die("worker process", LN_EFAILED);
        }
    }
    double el = secs(ln_now_ns() - t0);
    ln_job_counts c;
    ln_jobs_counts(jobs, "bench", &c);
    if (c.completed != njobs) die("not every job completed", LN_EFAILED);
    ln_jobs_close(jobs);
    result r = {(double)njobs / el, 0, 0, 0};
    store_latency(path, &r.p50_us, &r.p99_us, &r.mean); /* ms */
    return r;
}

/* ------------------------------------------------------------ end to end */

typedef struct producer {
    const char *url;
} producer;

static void *produce(void *arg) {
    producer *p = arg;
    ln_jobs *jobs = open_store(p->url);
    add_bulk(jobs, njobs);
    ln_jobs_close(jobs);
    return NULL;
}

static void *stop_when_done(void *arg) {
    ln_worker *w = arg;
    ln_worker_stats st = {0};
    while (st.completed < njobs) {
        usleep(1000);
        ln_worker_get_stats(w, &st);
    }
    ln_worker_stop(w);
    return NULL;
}

static result bench_e2e(void) {
    char url[700], path[600];
    fresh_store(url, sizeof url, path, sizeof path);
    ln_jobs *jobs = open_store(url);
    ln_worker_opts o;
    ln_worker_opts_init(&o);
    o.concurrency = 8;
    o.poll_ms = 5;
    ln_worker *w;
    int err = ln_worker_create(&w, jobs, "bench", noop, NULL, &o);
    if (err != 0) die("worker", err);
    producer p = {url};
    pthread_t tp, ts;
    uint64_t t0 = ln_now_ns();
    pthread_create(&tp, NULL, produce, &p);
    pthread_create(&ts, NULL, stop_when_done, w);
    err = ln_worker_run(w);
    double el = secs(ln_now_ns() - t0);
    pthread_join(tp, NULL);
    pthread_join(ts, NULL);
    if (err != 0) die("worker", err);
    ln_worker_destroy(w);
    ln_jobs_close(jobs);
    result r = {(double)njobs / el, 0, 0, 0};
    return r;
}

/* ------------------------------------------------------------------ main */

static void report(const char *name, result *r, int n, const char *lat_unit) {
    double rate[MAX_REPEATS], p50[MAX_REPEATS], p99[MAX_REPEATS],
        mean[MAX_REPEATS];
    for (int i = 0; i < n; i++) {
        rate[i] = r[i].rate;
        p50[i] = r[i].p50_us;
        p99[i] = r[i].p99_us;
        mean[i] = r[i].mean;
    }
    double m = median(rate, n);
    printf("%-14s %10.0f jobs/s  (min %.0f, max %.0f)", name, m, rate[0],
           rate[n - 1]);
    if (lat_unit != NULL)
        printf("   %s: p50 %.1f  p99 %.1f  mean %.2f", lat_unit,
               median(p50, n), median(p99, n), median(mean, n));
    printf("\n");
    fflush(stdout);
}

int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) {
            njobs = 5000;
            repeats = 1;
        } else if (strcmp(argv[i], "--jobs") == 0 && i + 1 < argc) {
            njobs = (size_t)strtoul(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--repeats") == 0 && i + 1 < argc) {
            repeats = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc) {
            dir = argv[++i];
        } else if (strcmp(argv[i], "--sync") == 0 && i + 1 < argc) {
            sync_mode = argv[++i];
        } else {
            fprintf(stderr, "usage: bench_jobs [--jobs N] [--repeats R] "
                            "[--dir DIR] [--sync normal|full] [--quick]\n");
            return 2;
        }
    }
    if (njobs < 1000 || repeats < 1 || repeats > MAX_REPEATS) {
        fprintf(stderr, "bench_jobs: need --jobs >= 1000, 1 <= repeats <= %d\n",
                MAX_REPEATS);
        return 2;
    }
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    printf("bench_jobs: %zu jobs, %d repeat(s), sync=%s, store in %s, %ld CPUs, "
           "lanes %s, SQLite %s\n", njobs, repeats, sync_mode, dir, cpus,
           ln_version_string(), sqlite3_libversion());
    result r[MAX_REPEATS];
    for (int i = 0; i < repeats; i++) r[i] = bench_add(1);
    report("add-1", r, repeats, "add us");
    for (int i = 0; i < repeats; i++) r[i] = bench_add(1000);
    report("add-1000", r, repeats, "batch us");
    const unsigned conc[] = {1, 8, 50};
    for (int procs = 1; procs <= 2; procs++)
        for (int c = 0; c < 3; c++) {
            char name[32];
            snprintf(name, sizeof name, "run c%u p%d", conc[c], procs);
            for (int i = 0; i < repeats; i++) r[i] = bench_run(conc[c], procs);
            report(name, r, repeats, "take->done ms");
        }
    for (int i = 0; i < repeats; i++) r[i] = bench_e2e();
    report("e2e", r, repeats, NULL);
    char url[700], path[600];
    fresh_store(url, sizeof url, path, sizeof path); /* removes the files */
    return 0;
}
