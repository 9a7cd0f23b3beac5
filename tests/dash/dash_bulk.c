/* dash_bulk.c - builds the big stores of tests/dash/test_caps.py fast,
 * with few transactions:
 *
 *   dash_bulk URL queues N              one job in each of N queues
 *                                       (cq00000, cq00001, ...)
 *   dash_bulk URL children QUEUE ID N   a job ID of QUEUE and N children
 *                                       of it in QUEUE, in bulk adds
 *
 * Exit status 0 on success; errors go to stderr. */
#include <lanes.h>
#include <lanes/jobs.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK 5000

static int die(const char *what, int rc, ln_jobs *jobs) {
    fprintf(stderr, "dash_bulk: %s: %s (%s)\n", what, ln_strerror(rc),
            jobs ? ln_jobs_errmsg(jobs) : "");
    return 1;
}

static int queues(ln_jobs *jobs, long n) {
    for (long i = 0; i < n; i++) {
        char q[32];
        snprintf(q, sizeof q, "cq%05ld", i);
        int rc = ln_jobs_add(jobs, q, "n", NULL, NULL, NULL, 0);
        if (rc != 0) return die("add", rc, jobs);
    }
    return 0;
}

static int children(ln_jobs *jobs, const char *queue, const char *id, long n) {
    ln_job_opts po;
    ln_job_opts_init(&po);
    po.job_id = id;
    int rc = ln_jobs_add(jobs, queue, "parent", NULL, &po, NULL, 0);
    if (rc != 0) return die("add the parent", rc, jobs);
    ln_job_opts co;
    ln_job_opts_init(&co);
    co.parent_queue = queue;
    co.parent_id = id;
    ln_job_spec *specs = calloc(CHUNK, sizeof *specs);
    if (specs == NULL) return die("calloc", LN_ENOMEM, NULL);
    for (size_t i = 0; i < CHUNK; i++) specs[i] = (ln_job_spec){.name = "kid", .opts = &co};
    for (long done = 0; done < n && rc == 0;) {
        size_t k = n - done < CHUNK ? (size_t)(n - done) : CHUNK;
        rc = ln_jobs_add_bulk(jobs, queue, specs, k, NULL, 0);
        done += (long)k;
    }
    free(specs);
    return rc != 0 ? die("add the children", rc, jobs) : 0;
}

int main(int argc, char **argv) {
    int is_queues = argc == 4 && strcmp(argv[2], "queues") == 0;
    int is_children = argc == 6 && strcmp(argv[2], "children") == 0;
    if (!is_queues && !is_children) {
        fprintf(stderr, "usage: dash_bulk URL queues N | URL children QUEUE ID N\n");
        return 2;
    }
    long n = strtol(argv[argc - 1], NULL, 10);
    ln_jobs *jobs = NULL;
    int rc = ln_jobs_open(&jobs, argv[1]);
    if (rc != 0) return die("open", rc, NULL);
    rc = is_queues ? queues(jobs, n) : children(jobs, argv[3], argv[4], n);
    ln_jobs_close(jobs);
    return rc;
}
