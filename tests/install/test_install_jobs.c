/* test_install_jobs.c - a small program of the job queue, built by
 * tests/install/test_install.sh against the installed liblanes-jobs alone:
 *   cc test_install_jobs.c $(pkg-config --cflags --libs lanes-jobs)
 * Adds three jobs to an SQLite store, runs a worker until the queue is
 * empty, and checks they completed. Usage: test_install_jobs DIR */
#include <lanes.h>
#include <lanes/jobs.h>

#include <stdio.h>

static int handle(ln_job *job, void *ctx) {
    (void)ctx;
    return ln_job_set_result(job, ln_job_data(job));
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: test_install_jobs DIR\n");
        return 2;
    }
    char url[4096];
    snprintf(url, sizeof url, "sqlite:%s/install.db", argv[1]);
    ln_jobs *jobs;
    int rc = ln_jobs_open(&jobs, url);
    if (rc != 0) {
        fprintf(stderr, "open %s: %s\n", url, ln_strerror(rc));
        return 1;
    }
    for (int i = 0; i < 3 && rc == 0; i++)
        rc = ln_jobs_add(jobs, "install", "echo", "{\"n\":1}", NULL, NULL, 0);
    ln_worker_opts o;
    ln_worker_opts_init(&o);
    o.exit_when_empty = 1;
    o.poll_ms = 10;
    ln_worker *w = NULL;
    if (rc == 0) rc = ln_worker_create(&w, jobs, "install", handle, NULL, &o);
    if (rc == 0) rc = ln_worker_run(w);
    ln_job_counts c = {0};
    if (rc == 0) rc = ln_jobs_counts(jobs, "install", &c);
    if (rc != 0) fprintf(stderr, "jobs: %s: %s\n", ln_err_name(rc), ln_jobs_errmsg(jobs));
    ln_worker_destroy(w);
    ln_jobs_close(jobs);
    if (rc != 0) return 1;
    printf("lanes %s: %llu jobs completed\n", ln_version_string(), (unsigned long long)c.completed);
    return c.completed == 3 ? 0 : 1;
}
