/* jobs_depth.c - `bench_jobs --depth`: what a listing and an open cost as
 * the store grows (issue 33's figures).
 *
 *   bench_jobs --depth [--sizes N,N,...] [--page P] [--repeats R]
 *                      [--dir DIR] [--redis URL]
 *
 * For each size N (default 10000,100000), a fresh store gets N waiting and
 * N delayed jobs (~150 bytes of data each, in batches of 1,000); then,
 * each the median of R (default 7) runs in this process, in ms:
 *   open      ln_jobs_open + ln_jobs_counts + ln_jobs_close (what a
 *             `lanes jobs URL counts` costs beyond starting the process);
 *   first     the first page of P (default 50) waiting jobs;
 *   mid/last  the page at N/2 and the last page, by offset (ln_jobs_list)
 *             and by cursor (ln_jobs_list_after, from the row before it;
 *             finding that row is not timed);
 * and the same three pages of the delayed jobs. SQLite in DIR (default
 * /tmp), and Redis at URL if given (its keys under a prefix of this run,
 * obliterated after). Prints figures, asserts nothing.
 */
#include "jobs_depth.h"

#include <lanes.h>
#include <lanes/jobs.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_SIZES 8
#define MAX_REPEATS 31

typedef struct depth_opts {
    size_t sizes[MAX_SIZES];
    int nsizes;
    size_t page;
    int repeats;
    const char *dir;
    const char *redis;
} depth_opts;

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return v[n / 2];
}

/* N waiting and N delayed jobs into queue "depth". */
static int fill(ln_jobs *jobs, size_t n) {
    enum { BATCH = 1000 };
    static ln_job_spec specs[BATCH];
    static ln_job_opts opts[BATCH];
    static char data[BATCH][160];
    for (int kind = 0; kind < 2; kind++) {
        for (size_t i = 0; i < n; i += BATCH) {
            size_t k = n - i < BATCH ? n - i : BATCH;
            for (size_t j = 0; j < k; j++) {
                ln_job_opts_init(&opts[j]);
                if (kind == 1) opts[j].delay_ms = 3600000 + (int64_t)(i + j);
                snprintf(data[j], sizeof data[j], "{\"user\":%zu,\"text\":\"%0120zu\"}", i + j,
                         i + j);
                specs[j] = (ln_job_spec){"n", data[j], &opts[j]};
            }
            int err = ln_jobs_add_bulk(jobs, "depth", specs, k, NULL, 0);
            if (err != 0) return err;
        }
    }
    return 0;
}

/* ms of one page of state at offset (cursor NULL) or after cursor. */
static double page_ms(ln_jobs *jobs, int state, size_t offset, const char *cursor, size_t page,
                      int *err) {
    ln_job_info *rows = NULL;
    size_t n = 0;
    double t0 = now_ms();
    *err = cursor != NULL ? ln_jobs_list_after(jobs, "depth", state, cursor, page, &rows, &n)
                          : ln_jobs_list(jobs, "depth", state, offset, page, &rows, &n);
    double t = now_ms() - t0;
    ln_job_info_free_array(rows, n);
    return t;
}

/* The cursor of the row at offset - 1 of state into buf ("" for 0). */
static int cursor_before(ln_jobs *jobs, int state, size_t offset, char *buf, size_t size) {
    buf[0] = '\0';
    if (offset == 0) return 0;
    ln_job_info *rows = NULL;
    size_t n = 0;
    int err = ln_jobs_list(jobs, "depth", state, offset - 1, 1, &rows, &n);
    if (err == 0 && n == 1 && rows[0].cursor != NULL) snprintf(buf, size, "%s", rows[0].cursor);
    ln_job_info_free_array(rows, n);
    return err;
}

/* The figures of one state: first, mid and last pages by offset and by
 * cursor. */
static int report_state(ln_jobs *jobs, const depth_opts *o, int state, size_t n) {
    size_t at[3] = {0, n / 2, n > o->page ? n - o->page : 0};
    double by_off[3], by_cur[3], v[MAX_REPEATS];
    int err = 0;
    for (int p = 0; p < 3; p++) {
        char cursor[512];
        if ((err = cursor_before(jobs, state, at[p], cursor, sizeof cursor)) != 0) return err;
        for (int r = 0; r < o->repeats && err == 0; r++)
            v[r] = page_ms(jobs, state, at[p], NULL, o->page, &err);
        by_off[p] = median(v, o->repeats);
        for (int r = 0; r < o->repeats && err == 0; r++)
            v[r] = page_ms(jobs, state, 0, cursor[0] ? cursor : NULL, o->page, &err);
        by_cur[p] = median(v, o->repeats);
        if (err != 0) return err;
    }
    printf("  %-8s offset: first %7.2f  mid %7.2f  last %7.2f | cursor: first %7.2f  mid %7.2f  "
           "last %7.2f\n",
           ln_job_state_name(state), by_off[0], by_off[1], by_off[2], by_cur[0], by_cur[1],
           by_cur[2]);
    return 0;
}

static int open_ms(const char *url, int repeats, double *out) {
    double v[MAX_REPEATS];
    for (int r = 0; r < repeats; r++) {
        double t0 = now_ms();
        ln_jobs *jobs = NULL;
        ln_job_counts c;
        int err = ln_jobs_open(&jobs, url);
        if (err == 0) err = ln_jobs_counts(jobs, "depth", &c);
        ln_jobs_close(jobs);
        if (err != 0) return err;
        v[r] = now_ms() - t0;
    }
    *out = median(v, repeats);
    return 0;
}

static int one_store(const depth_opts *o, const char *kind, const char *url, size_t n) {
    ln_jobs *jobs = NULL;
    int err = ln_jobs_open(&jobs, url);
    double t0 = now_ms(), open = 0;
    if (err == 0) err = fill(jobs, n);
    if (err != 0) {
        fprintf(stderr, "bench_jobs --depth: %s: %s\n", url,
                jobs != NULL ? ln_jobs_errmsg(jobs) : ln_strerror(err));
        ln_jobs_close(jobs);
        return err;
    }
    double filled = now_ms() - t0;
    err = open_ms(url, o->repeats, &open);
    printf("%s, %zu waiting + %zu delayed (filled in %.1f s): open+counts %.2f ms; pages of "
           "%zu, ms:\n",
           kind, n, n, filled / 1e3, open, o->page);
    if (err == 0) err = report_state(jobs, o, LN_JOB_WAITING, n);
    if (err == 0) err = report_state(jobs, o, LN_JOB_DELAYED, n);
    if (err != 0) fprintf(stderr, "bench_jobs --depth: %s\n", ln_jobs_errmsg(jobs));
    if (strcmp(kind, "redis") == 0) {
        ln_jobs_pause(jobs, "depth");
        ln_jobs_obliterate(jobs, "depth", 1, NULL);
    }
    ln_jobs_close(jobs);
    return err;
}

static int parse_sizes(depth_opts *o, const char *s) {
    o->nsizes = 0;
    while (*s != '\0' && o->nsizes < MAX_SIZES) {
        char *end;
        unsigned long long v = strtoull(s, &end, 10);
        if (end == s || v < 100 || v > 10000000) return -1;
        o->sizes[o->nsizes++] = (size_t)v;
        s = *end == ',' ? end + 1 : end;
        if (*end != ',' && *end != '\0') return -1;
    }
    return o->nsizes > 0 && *s == '\0' ? 0 : -1;
}

int bench_jobs_depth(int argc, char **argv) {
    depth_opts o = {{10000, 100000}, 2, 50, 7, "/tmp", NULL};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--depth") == 0) continue;
        if (v == NULL) goto usage;
        i++;
        if (strcmp(a, "--sizes") == 0 && parse_sizes(&o, v) == 0) continue;
        if (strcmp(a, "--page") == 0 && atoi(v) >= 1 && atoi(v) <= 10000) {
            o.page = (size_t)atoi(v);
        } else if (strcmp(a, "--repeats") == 0 && atoi(v) >= 1 && atoi(v) <= MAX_REPEATS) {
            o.repeats = atoi(v);
        } else if (strcmp(a, "--dir") == 0) {
            o.dir = v;
        } else if (strcmp(a, "--redis") == 0) {
            o.redis = v;
        } else {
            goto usage;
        }
    }
    printf("bench_jobs --depth: lanes %s, %ld CPUs, median of %d\n", ln_version_string(),
           sysconf(_SC_NPROCESSORS_ONLN), o.repeats);
    for (int k = 0; k < o.nsizes; k++) {
        char url[1024];
        snprintf(url, sizeof url, "sqlite:%s/bench-depth-%ld-%zu.db", o.dir, (long)getpid(),
                 o.sizes[k]);
        int err = one_store(&o, "sqlite", url, o.sizes[k]);
        const char *path = url + strlen("sqlite:");
        char side[1100];
        const char *ext[] = {"", "-wal", "-shm", "-reserve"};
        for (size_t e = 0; e < sizeof ext / sizeof *ext; e++) {
            snprintf(side, sizeof side, "%s%s", path, ext[e]);
            unlink(side);
        }
        if (err != 0) return 1;
        if (o.redis != NULL) {
            snprintf(url, sizeof url, "%s%sprefix=bdepth%ld", o.redis,
                     strchr(o.redis, '?') ? "&" : "?", (long)getpid());
            if (one_store(&o, "redis", url, o.sizes[k]) != 0) return 1;
        }
    }
    return 0;
usage:
    fprintf(stderr, "usage: bench_jobs --depth [--sizes N,N,...] [--page P] [--repeats R] "
                    "[--dir DIR] [--redis URL]\n");
    return 2;
}
