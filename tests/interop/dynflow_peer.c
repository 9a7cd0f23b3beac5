/* dynflow_peer.c - the C side of lanes' interop tests of children added
 * to an existing parent and ln_job_wait_children (tests/interop/cases/
 * dynflow.sh; the Node twin is tests/interop/node/dynflow.mjs).
 *
 *   dynflow_peer step URL QUEUE        run the jobs of QUEUE-p until it is
 *                                      empty: a "step" job with no children
 *                                      adds two ("kid", {"k":1} and {"k":2})
 *                                      to QUEUE-c with itself as parent and
 *                                      waits for them; once it has children
 *                                      (a wait then says 0: none pending) it
 *                                      completes with {"children":N}, N its
 *                                      children's results
 *   dynflow_peer child URL QUEUE NAME DATA PQUEUE PID
 *                                      add one job with parent PID of
 *                                      PQUEUE; prints its id
 *
 * Exit status 0 on success; errors go to stderr.
 */
#include <lanes.h>
#include <lanes/jobs.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct stepper {
    ln_jobs *jobs;
    char kids[LN_JOB_QUEUE_MAX];
    int failures; /* handler-side calls that did not do what they should */
} stepper;

static int die(const char *what, int rc, ln_jobs *jobs) {
    fprintf(stderr, "dynflow_peer: %s: %s (%s)\n", what, ln_strerror(rc),
            jobs ? ln_jobs_errmsg(jobs) : "");
    return 1;
}

static int add_kids(stepper *s, ln_job *job) {
    for (int k = 1; k <= 2; k++) {
        ln_job_opts o;
        ln_job_opts_init(&o);
        o.parent_queue = ln_job_queue(job);
        o.parent_id = ln_job_id(job);
        char data[32];
        snprintf(data, sizeof data, "{\"k\":%d}", k);
        int rc = ln_jobs_add(s->jobs, s->kids, "kid", data, &o, NULL, 0);
        if (rc != 0) return die("add a child", rc, s->jobs);
    }
    return 0;
}

static int step(ln_job *job, void *ctx) {
    stepper *s = ctx;
    if (strcmp(ln_job_name(job), "step") != 0) return 0;
    ln_job_children rel;
    int rc = ln_job_children_read(job, &rel);
    if (rc != 0) return ln_job_fail(job, "children unreadable");
    size_t processed = 0, n = rel.n;
    for (size_t i = 0; i < rel.n; i++) processed += rel.children[i].status == LN_CHILD_PROCESSED;
    ln_job_children_clear(&rel);
    if (n > 0) { /* step 2: nothing pending any more, so the wait says 0 */
        if ((rc = ln_job_wait_children(job)) != 0) {
            s->failures++;
            die("wait for the children (step 2)", rc, s->jobs);
            return ln_job_fail(job, "waited with its children done");
        }
        char out[48];
        snprintf(out, sizeof out, "{\"children\":%zu}", processed);
        return ln_job_set_result(job, out);
    }
    if (add_kids(s, job) != 0) {
        s->failures++;
        return ln_job_fail(job, "children not added");
    }
    rc = ln_job_wait_children(job);
    if (rc != 1) {
        s->failures++;
        die("wait for the children", rc, s->jobs);
        return ln_job_fail(job, "did not wait for its children");
    }
    return 0; /* ignored: the job is in waiting-children */
}

static int run_step(const char *url, const char *queue) {
    stepper s = {0};
    int rc = ln_jobs_open(&s.jobs, url);
    if (rc != 0) return die("open", rc, NULL);
    char pq[LN_JOB_QUEUE_MAX];
    snprintf(pq, sizeof pq, "%s-p", queue);
    snprintf(s.kids, sizeof s.kids, "%s-c", queue);
    ln_worker_opts o;
    ln_worker_opts_init(&o);
    o.exit_when_empty = 1;
    o.poll_ms = 10;
    ln_worker *w = NULL;
    rc = ln_worker_create(&w, s.jobs, pq, step, &s, &o);
    if (rc == 0) rc = ln_worker_run(w);
    ln_worker_destroy(w);
    int out = rc != 0 ? die("worker", rc, s.jobs) : s.failures != 0;
    ln_jobs_close(s.jobs);
    return out;
}

static int add_child(char **argv) {
    ln_jobs *jobs = NULL;
    int rc = ln_jobs_open(&jobs, argv[2]);
    if (rc != 0) return die("open", rc, NULL);
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.parent_queue = argv[6];
    o.parent_id = argv[7];
    char id[LN_JOB_ID_MAX];
    rc = ln_jobs_add(jobs, argv[3], argv[4], argv[5], &o, id, sizeof id);
    int out = rc != 0 ? die("add", rc, jobs) : (printf("%s\n", id), 0);
    ln_jobs_close(jobs);
    return out;
}

int main(int argc, char **argv) {
    if (argc == 4 && strcmp(argv[1], "step") == 0) return run_step(argv[2], argv[3]);
    if (argc == 8 && strcmp(argv[1], "child") == 0) return add_child(argv);
    fprintf(stderr, "usage: dynflow_peer step URL QUEUE | child URL QUEUE NAME DATA PQUEUE PID\n");
    return 2;
}
