/* flowmore_peer.c - the C side of lanes' interop tests of three flow calls
 * (tests/interop/cases/flowmore.sh; the Node twin is
 * tests/interop/node/flowmore.mjs).
 *
 *   flowmore_peer unprocessed URL QUEUE ID
 *        ln_jobs_remove_unprocessed_children of job ID; prints the count
 *   flowmore_peer wait-child URL QUEUE CQ1 CID1 CQ2 CID2
 *        run the jobs of QUEUE until it is empty: each calls
 *        ln_job_wait_child for child CID1 of CQ1, then (if that said 0)
 *        for CID2 of CQ2; prints the two answers ("0 1")
 *   flowmore_peer flow-parent URL QUEUE PQUEUE PID
 *        add the flow root "r" (custom id r) of QUEUE with one child "x"
 *        (id x), the root a child of job PID of PQUEUE
 *   flowmore_peer add URL QUEUE ID [PQUEUE PID]
 *        add job ID (name "k", data {"k":1}), a child of PID of PQUEUE if
 *        given
 *   flowmore_peer run URL QUEUE
 *        a C worker runs QUEUE until it is empty; each job completes with
 *        {"by":"c","name":NAME}
 *   flowmore_peer state URL QUEUE ID
 *        prints the job's state, or "none"
 *   flowmore_peer children URL QUEUE ID
 *        prints one line per child: "ID STATUS VALUE" (ln_job_child's
 *        status number, "-" for no value)
 *
 * Exit status 0 on success; errors go to stderr.
 */
#include <lanes.h>
#include <lanes/jobs.h>

#include <stdio.h>
#include <string.h>

static int die(const char *what, int rc, ln_jobs *jobs) {
    fprintf(stderr, "flowmore_peer: %s: %s (%s)\n", what, ln_strerror(rc),
            jobs ? ln_jobs_errmsg(jobs) : "");
    return 1;
}

static int unprocessed(char **argv) {
    ln_jobs *jobs = NULL;
    int rc = ln_jobs_open(&jobs, argv[2]);
    if (rc != 0) return die("open", rc, NULL);
    size_t n = 0;
    rc = ln_jobs_remove_unprocessed_children(jobs, argv[3], argv[4], &n);
    int out = rc != 0 ? die("remove unprocessed children", rc, jobs) : (printf("%zu\n", n), 0);
    ln_jobs_close(jobs);
    return out;
}

typedef struct waiter {
    char **argv;
    int rc1, rc2;
} waiter;

static int wait_handler(ln_job *job, void *ctx) {
    waiter *w = ctx;
    w->rc1 = ln_job_wait_child(job, w->argv[4], w->argv[5]);
    if (w->rc1 == 0) w->rc2 = ln_job_wait_child(job, w->argv[6], w->argv[7]);
    return w->rc2 == 1 ? 0 : ln_job_fail(job, "did not wait");
}

static int wait_child(char **argv) {
    ln_jobs *jobs = NULL;
    int rc = ln_jobs_open(&jobs, argv[2]);
    if (rc != 0) return die("open", rc, NULL);
    waiter st = {.argv = argv, .rc1 = -1, .rc2 = -1};
    ln_worker_opts o;
    ln_worker_opts_init(&o);
    o.exit_when_empty = 1;
    o.poll_ms = 10;
    ln_worker *w = NULL;
    rc = ln_worker_create(&w, jobs, argv[3], wait_handler, &st, &o);
    if (rc == 0) rc = ln_worker_run(w);
    ln_worker_destroy(w);
    int out = rc != 0 ? die("worker", rc, jobs) : (printf("%d %d\n", st.rc1, st.rc2), 0);
    ln_jobs_close(jobs);
    return out;
}

static int flow_parent(char **argv) {
    ln_jobs *jobs = NULL;
    int rc = ln_jobs_open(&jobs, argv[2]);
    if (rc != 0) return die("open", rc, NULL);
    ln_job_opts ko, ro;
    ln_job_opts_init(&ko);
    ko.job_id = "x";
    ln_job_opts_init(&ro);
    ro.job_id = "r";
    ro.parent_queue = argv[4];
    ro.parent_id = argv[5];
    ln_flow_node kid = {.name = "x", .data_json = "{\"k\":1}", .opts = &ko};
    ln_flow_node root = {.queue = argv[3],
                         .name = "r",
                         .data_json = "{\"k\":2}",
                         .opts = &ro,
                         .children = &kid,
                         .nchildren = 1};
    rc = ln_jobs_add_flow(jobs, &root, NULL, 0, 0);
    int out = rc != 0 ? die("add the flow", rc, jobs) : 0;
    ln_jobs_close(jobs);
    return out;
}

static int add_one(int argc, char **argv) {
    ln_jobs *jobs = NULL;
    int rc = ln_jobs_open(&jobs, argv[2]);
    if (rc != 0) return die("open", rc, NULL);
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.job_id = argv[4];
    if (argc == 7) {
        o.parent_queue = argv[5];
        o.parent_id = argv[6];
    }
    rc = ln_jobs_add(jobs, argv[3], "k", "{\"k\":1}", &o, NULL, 0);
    int out = rc != 0 ? die("add", rc, jobs) : 0;
    ln_jobs_close(jobs);
    return out;
}

static int run_handler(ln_job *job, void *ctx) {
    (void)ctx;
    char res[160];
    snprintf(res, sizeof res, "{\"by\":\"c\",\"name\":\"%s\"}", ln_job_name(job));
    return ln_job_set_result(job, res);
}

static int run(char **argv) {
    ln_jobs *jobs = NULL;
    int rc = ln_jobs_open(&jobs, argv[2]);
    if (rc != 0) return die("open", rc, NULL);
    ln_worker_opts o;
    ln_worker_opts_init(&o);
    o.exit_when_empty = 1;
    o.poll_ms = 10;
    ln_worker *w = NULL;
    rc = ln_worker_create(&w, jobs, argv[3], run_handler, NULL, &o);
    if (rc == 0) rc = ln_worker_run(w);
    ln_worker_destroy(w);
    int out = rc != 0 ? die("worker", rc, jobs) : 0;
    ln_jobs_close(jobs);
    return out;
}

static int state(char **argv) {
    ln_jobs *jobs = NULL;
    int rc = ln_jobs_open(&jobs, argv[2]);
    if (rc != 0) return die("open", rc, NULL);
    ln_job_info info;
    rc = ln_jobs_get(jobs, argv[3], argv[4], &info);
    int out = 0;
    if (rc == LN_ENOENT) {
        printf("none\n");
    } else if (rc != 0) {
        out = die("get", rc, jobs);
    } else {
        printf("%s\n", ln_job_state_name(info.state));
        ln_job_info_clear(&info);
    }
    ln_jobs_close(jobs);
    return out;
}

static int children(char **argv) {
    ln_jobs *jobs = NULL;
    int rc = ln_jobs_open(&jobs, argv[2]);
    if (rc != 0) return die("open", rc, NULL);
    ln_job_children rel;
    rc = ln_jobs_children(jobs, argv[3], argv[4], &rel);
    int out = rc != 0 ? die("children", rc, jobs) : 0;
    for (size_t i = 0; rc == 0 && i < rel.n; i++)
        printf("%s %d %s\n", rel.children[i].id ? rel.children[i].id : rel.children[i].key,
               rel.children[i].status, rel.children[i].value ? rel.children[i].value : "-");
    if (rc == 0) ln_job_children_clear(&rel);
    ln_jobs_close(jobs);
    return out;
}

int main(int argc, char **argv) {
    if (argc == 5 && strcmp(argv[1], "unprocessed") == 0) return unprocessed(argv);
    if (argc == 8 && strcmp(argv[1], "wait-child") == 0) return wait_child(argv);
    if (argc == 6 && strcmp(argv[1], "flow-parent") == 0) return flow_parent(argv);
    if ((argc == 5 || argc == 7) && strcmp(argv[1], "add") == 0) return add_one(argc, argv);
    if (argc == 4 && strcmp(argv[1], "run") == 0) return run(argv);
    if (argc == 5 && strcmp(argv[1], "state") == 0) return state(argv);
    if (argc == 5 && strcmp(argv[1], "children") == 0) return children(argv);
    fprintf(stderr, "usage: flowmore_peer unprocessed URL QUEUE ID | wait-child URL QUEUE CQ1 "
                    "CID1 CQ2 CID2 | flow-parent URL QUEUE PQUEUE PID | add URL QUEUE ID "
                    "[PQUEUE PID] | run URL QUEUE | state URL QUEUE ID | children URL QUEUE ID\n");
    return 2;
}
