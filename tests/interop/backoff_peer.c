/* backoff_peer.c - the C side of the backoff interop cases
 * (tests/interop/cases/backoff.sh, tests/interop/node/backoff.mjs):
 *
 *   backoff_peer add  URL QUEUE   the jobs node/backoff.mjs's backoffAdd
 *                                 adds, added with the C API
 *   backoff_peer work URL QUEUE N a C worker that fails every job, with a
 *                                 backoff strategy for 'linear' (7000 ms
 *                                 times attempts_made), until it has taken
 *                                 N jobs
 *
 * Exit status 0 on success; errors go to stderr.
 */
#include <lanes.h>
#include <lanes/jobs.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NJIT 8 /* node/backoff.mjs's NJIT */

static int die(const char *what, int rc, ln_jobs *jobs) {
    fprintf(stderr, "backoff_peer: %s: %s (%s)\n", what, ln_strerror(rc), ln_jobs_errmsg(jobs));
    return 1;
}

static int add(ln_jobs *jobs, const char *queue) {
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.attempts = 2;
    o.backoff_ms = 60000;
    o.backoff_jitter = 0.5; /* node/backoff.mjs's JIT */
    for (int i = 0; i < NJIT; i++) {
        char data[32];
        snprintf(data, sizeof data, "{\"i\":%d}", i);
        int rc = ln_jobs_add(jobs, queue, "jit", data, &o, NULL, 0);
        if (rc) return die("add", rc, jobs);
    }
    ln_job_opts_init(&o);
    o.attempts = 3;
    o.backoff = LN_BACKOFF_CUSTOM;
    o.backoff_type = "linear";
    o.backoff_ms = 100;
    int rc = ln_jobs_add(jobs, queue, "lin", "{}", &o, NULL, 0);
    return rc ? die("add", rc, jobs) : 0;
}

static int fail_all(ln_job *job, void *ctx) {
    (void)ctx;
    ln_job_fail(job, "boom");
    return LN_EIO;
}

typedef struct seen {
    int calls, bad;
} seen;

static int64_t linear(int attempts_made, const char *type, const char *reason, const ln_job *job,
                      void *user) {
    seen *s = user;
    s->calls++;
    if (strcmp(type, "linear") || strcmp(reason, "boom") || strcmp(ln_job_name(job), "lin")) {
        fprintf(stderr, "backoff_peer: strategy got %s / %s / %s\n", type, reason,
                ln_job_name(job));
        s->bad++;
    }
    return 7000 * (int64_t)attempts_made;
}

static int work(ln_jobs *jobs, const char *queue, long n) {
    seen s = {0};
    ln_worker_opts o;
    ln_worker_opts_init(&o);
    o.max_jobs = (uint64_t)n;
    o.concurrency = 4;
    o.backoff_strategy = linear;
    o.backoff_user = &s;
    ln_worker *w;
    int rc = ln_worker_create(&w, jobs, queue, fail_all, NULL, &o);
    if (rc) return die("worker_create", rc, jobs);
    rc = ln_worker_run(w);
    ln_worker_stats st;
    ln_worker_get_stats(w, &st);
    ln_worker_destroy(w);
    if (rc) return die("worker_run", rc, jobs);
    printf("{\"taken\":%llu,\"retried\":%llu,\"failed\":%llu,\"strategy_calls\":%d}\n",
           (unsigned long long)st.taken, (unsigned long long)st.retried,
           (unsigned long long)st.failed, s.calls);
    if (s.calls != 1 || s.bad) {
        fprintf(stderr, "backoff_peer: the strategy ran %d times (%d wrong)\n", s.calls, s.bad);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv) {
    signal(SIGPIPE, SIG_IGN);
    if (argc < 4) {
        fprintf(stderr, "usage: backoff_peer add|work URL QUEUE [N]\n");
        return 2;
    }
    ln_jobs *jobs;
    char err[512];
    int rc = ln_jobs_open_ex(&jobs, argv[2], NULL, err, sizeof err);
    if (rc) {
        fprintf(stderr, "backoff_peer: open %s: %s (%s)\n", argv[2], ln_strerror(rc), err);
        return 1;
    }
    int status = 2;
    if (!strcmp(argv[1], "add"))
        status = add(jobs, argv[3]);
    else if (!strcmp(argv[1], "work") && argc == 5)
        status = work(jobs, argv[3], atol(argv[4]));
    else
        fprintf(stderr, "backoff_peer: unknown command or arguments: %s\n", argv[1]);
    ln_jobs_close(jobs);
    return status;
}
