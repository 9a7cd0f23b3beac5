/* conf_logs.c - a job's log lines from outside its run (jobs_edit.h
 * ln_jobs_add_log, ln_jobs_clear_logs; BullMQ's queue.addJobLog and
 * job.clearLogs): in any state, with a keep count that leaves the newest
 * lines (one larger than any log keeps them all), beside the lines its
 * handler wrote with ln_job_log. */
#include "conf.h"

#include <stdlib.h>

/* The job's lines, each followed by '|', into out. */
static void lines_of(conf_ctx *c, const char *id, char *out, size_t size) {
    char **lines = NULL;
    size_t n = 0;
    CHECK_EQ(ln_jobs_logs(c->jobs, c->queue, id, &lines, &n), 0);
    out[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        size_t l = strlen(out);
        snprintf(out + l, size - l, "%s|", lines[i]);
    }
    ln_jobs_free_lines(lines, n);
}

static size_t add(conf_ctx *c, const char *id, const char *line, size_t keep) {
    size_t count = 99;
    int rc = ln_jobs_add_log(c->jobs, c->queue, id, line, keep, &count);
    if (rc != 0) fprintf(stderr, "add_log: %s\n", ln_jobs_errmsg(c->jobs));
    CHECK_EQ(rc, 0);
    return count;
}

/* A waiting job: lines append, keep leaves the newest, 0 keeps all. */
void case_logs_add_keep(conf_ctx *c) {
    char id[LN_JOB_ID_MAX], got[256];
    conf_add(c, c->queue, "n", "{}", NULL, id);
    CHECK_EQ(add(c, id, "a", 0), 1);
    CHECK_EQ(add(c, id, "b", 0), 2);
    CHECK_EQ(add(c, id, "c", 0), 3);
    lines_of(c, id, got, sizeof got);
    CONF_CHECK_STR(got, "a|b|c|");
    CHECK_EQ(add(c, id, "d", 2), 2); /* the newest two stay */
    lines_of(c, id, got, sizeof got);
    CONF_CHECK_STR(got, "c|d|");
    CHECK_EQ(add(c, id, "e", 5), 3); /* keep above the count: nothing goes */
    CHECK_EQ(add(c, id, "", 0), 4);  /* an empty line is a line */
    lines_of(c, id, got, sizeof got);
    CONF_CHECK_STR(got, "c|d|e||");
    CHECK_EQ(ln_jobs_add_log(c->jobs, c->queue, id, "f", 1, NULL), 0);
    lines_of(c, id, got, sizeof got);
    CONF_CHECK_STR(got, "f|");
    CHECK_EQ(conf_state(c, c->queue, id), LN_JOB_WAITING); /* the job is unchanged */
}

/* clear keeps the newest keep lines, or none with 0. */
void case_logs_clear(conf_ctx *c) {
    char id[LN_JOB_ID_MAX], got[256];
    conf_add(c, c->queue, "n", "{}", NULL, id);
    const char *l[] = {"1", "2", "3", "4", "5"};
    for (size_t i = 0; i < 5; i++) add(c, id, l[i], 0);
    CHECK_EQ(ln_jobs_clear_logs(c->jobs, c->queue, id, 2), 0);
    lines_of(c, id, got, sizeof got);
    CONF_CHECK_STR(got, "4|5|");
    CHECK_EQ(ln_jobs_clear_logs(c->jobs, c->queue, id, 9), 0);
    lines_of(c, id, got, sizeof got);
    CONF_CHECK_STR(got, "4|5|");
    CHECK_EQ(ln_jobs_clear_logs(c->jobs, c->queue, id, 0), 0);
    lines_of(c, id, got, sizeof got);
    CONF_CHECK_STR(got, "");
    CHECK_EQ(ln_jobs_clear_logs(c->jobs, c->queue, id, 0), 0); /* none left: still 0 */
    CHECK_EQ(add(c, id, "again", 0), 1);
}

static int log_twice(ln_job *job, void *ctx) {
    (void)ctx;
    CHECK_EQ(ln_job_log(job, "run 1"), 0);
    CHECK_EQ(ln_job_log(job, "run 2"), 0);
    return 0;
}

/* The lines a handler wrote and those added after it finished are one
 * log; a finished job takes lines too. */
void case_logs_after_run(conf_ctx *c) {
    char id[LN_JOB_ID_MAX], got[256];
    conf_add(c, c->queue, "n", "{}", NULL, id);
    CHECK_EQ(add(c, id, "before", 0), 1);
    ln_worker_opts o;
    conf_worker_opts(&o);
    ln_worker_stats st = conf_run(c, c->queue, log_twice, NULL, &o);
    CHECK_EQ(st.completed, 1);
    CHECK_EQ(conf_state(c, c->queue, id), LN_JOB_COMPLETED);
    CHECK_EQ(add(c, id, "after", 0), 4);
    lines_of(c, id, got, sizeof got);
    CONF_CHECK_STR(got, "before|run 1|run 2|after|");
    CHECK_EQ(ln_jobs_clear_logs(c->jobs, c->queue, id, 1), 0);
    lines_of(c, id, got, sizeof got);
    CONF_CHECK_STR(got, "after|");
}

/* No such job, a NULL or too long line, bad names: errors, nothing kept. */
void case_logs_bad_input(conf_ctx *c) {
    size_t count = 7;
    CHECK_EQ(ln_jobs_add_log(c->jobs, c->queue, "nope", "x", 0, &count), LN_ENOENT);
    CHECK_EQ(count, 0);
    CONF_CHECK_HAS(ln_jobs_errmsg(c->jobs), "nope");
    CHECK_EQ(ln_jobs_clear_logs(c->jobs, c->queue, "nope", 0), LN_ENOENT);
    char id[LN_JOB_ID_MAX];
    conf_add(c, c->queue, "n", "{}", NULL, id);
    CHECK_EQ(ln_jobs_add_log(c->jobs, c->queue, id, NULL, 0, NULL), LN_EINVAL);
    char *big = malloc(65538);
    CHECK(big != NULL);
    memset(big, 'x', 65537);
    big[65537] = '\0';
    CHECK_EQ(ln_jobs_add_log(c->jobs, c->queue, id, big, 0, NULL), LN_EINVAL);
    CONF_CHECK_HAS(ln_jobs_errmsg(c->jobs), "65536");
    big[65536] = '\0'; /* the longest line there is */
    CHECK_EQ(add(c, id, big, 0), 1);
    free(big);
    CHECK_EQ(ln_jobs_add_log(c->jobs, "a:b", id, "x", 0, NULL), LN_EINVAL);
    CHECK_EQ(ln_jobs_add_log(c->jobs, c->queue, NULL, "x", 0, NULL), LN_EINVAL);
    CHECK_EQ(ln_jobs_clear_logs(c->jobs, c->queue, NULL, 0), LN_EINVAL);
    char **lines;
    size_t n;
    CHECK_EQ(ln_jobs_logs(c->jobs, c->queue, id, &lines, &n), 0);
    CHECK_EQ(n, 1);
    ln_jobs_free_lines(lines, n);
}

/* A clear or an add whose keep is larger than any list (jobs_edit.h takes
 * any size_t) keeps every line, on both stores: on Redis a keep past 1e17
 * reached LTRIM written with an exponent, which Redis refused. */
void case_logs_huge_keep(conf_ctx *c) {
    char id[LN_JOB_ID_MAX];
    conf_add(c, c->queue, "n", "{}", NULL, id);
    size_t n = 0;
    CHECK_EQ(ln_jobs_add_log(c->jobs, c->queue, id, "a", 0, &n), 0);
    CHECK_EQ(ln_jobs_add_log(c->jobs, c->queue, id, "b", SIZE_MAX, &n), 0);
    CHECK_EQ(n, 2);
    SAYS(c->jobs, 0, ln_jobs_clear_logs(c->jobs, c->queue, id, SIZE_MAX));
    SAYS(c->jobs, 0, ln_jobs_clear_logs(c->jobs, c->queue, id, (size_t)1 << 57));
    char **lines = NULL;
    CHECK_EQ(ln_jobs_logs(c->jobs, c->queue, id, &lines, &n), 0);
    CHECK_EQ(n, 2);
    CONF_CHECK_STR(lines[0], "a");
    CONF_CHECK_STR(lines[1], "b");
    ln_jobs_free_lines(lines, n);
}
