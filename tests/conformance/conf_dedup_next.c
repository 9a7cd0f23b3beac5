/* conf_dedup_next.c - deduplication's keep-last-if-active and reschedule
 * (jobs.h ln_job_opts.dedup_keep_last_if_active, dedup_reschedule): an
 * add while the holder runs is kept and becomes a job when the holder
 * completes or fails for good, the latest such add winning; an add while
 * the holder is delayed moves its run time; the kept add's options, a
 * retried holder, and a holder (or another job) removed or drained. The
 * holder is held by a handler that waits for a flag, so "while it runs" is
 * certain. */
#include "conf.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

/* A held handler: counts its entries, waits for release, then fails
 * ("bad") or completes with {"ok":<data>}. */
typedef struct next_hold {
    atomic_int entered, release;
} next_hold;

static int next_handler(ln_job *job, void *ctx) {
    next_hold *h = ctx;
    atomic_fetch_add(&h->entered, 1);
    int64_t end = conf_deadline(5000);
    while (!atomic_load(&h->release) && conf_now_ms() < end) ln_test_sleep_ms(1);
    return conf_handler_by_name(job, NULL);
}

static void wait_entered(next_hold *h, int n) {
    int64_t end = conf_deadline(5000);
    while (atomic_load(&h->entered) < n && conf_now_ms() < end) ln_test_sleep_ms(1);
    CHECK(atomic_load(&h->entered) >= n);
}

/* Add with keep-last (and the given ttl); *existed = the add was a no-op. */
static void add_keep(conf_ctx *c, const char *name, const char *data, int64_t ttl, char *id,
                     int *existed) {
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.dedup_id = "kl";
    o.dedup_ttl_ms = ttl;
    o.dedup_keep_last_if_active = 1;
    uint64_t before = conf_total(c, c->queue);
    int rc = ln_jobs_add(c->jobs, c->queue, name, data, &o, id, LN_JOB_ID_MAX);
    if (rc != 0) fprintf(stderr, "add: %s\n", ln_jobs_errmsg(c->jobs));
    CHECK_EQ(rc, 0);
    *existed = conf_total(c, c->queue) == before;
}

/* Wait until queue has n finished jobs (completed + failed). */
static void wait_finished(conf_ctx *c, uint64_t n) {
    int64_t end = conf_deadline(5000);
    ln_job_counts k;
    do {
        ln_test_sleep_ms(5);
        CHECK_EQ(ln_jobs_counts(c->jobs, c->queue, &k), 0);
    } while (k.completed + k.failed < n && conf_now_ms() < end);
    CHECK_EQ(k.completed + k.failed, n);
}

/* The holder named holder_name runs; two keep-last adds meanwhile are
 * deduplicated (the holder's id); its finalization adds exactly one job,
 * the last add's, which runs and completes. */
static void keep_last_then_finish(conf_ctx *c, const char *holder_name, int holder_state) {
    char h[LN_JOB_ID_MAX], a[LN_JOB_ID_MAX], b[LN_JOB_ID_MAX];
    int ex;
    next_hold hold = {0};
    add_keep(c, holder_name, "{\"n\":1}", 0, h, &ex);
    CHECK_EQ(ex, 0);
    ln_worker_opts o;
    conf_worker_opts(&o);
    conf_bg *w = conf_bg_start(c->jobs, c->queue, next_handler, &hold, &o);
    wait_entered(&hold, 1);
    add_keep(c, "last", "{\"n\":2}", 0, a, &ex);
    CHECK_EQ(ex, 1);
    CONF_CHECK_STR(a, h);
    add_keep(c, "last", "{\"n\":3}", 0, b, &ex); /* the latest wins */
    CHECK_EQ(ex, 1);
    CONF_CHECK_STR(b, h);
    CHECK_EQ(conf_total(c, c->queue), 1);
    atomic_store(&hold.release, 1);
    wait_finished(c, 2);
    CHECK_EQ(conf_bg_join(w, NULL), 0);
    CHECK_EQ(conf_state(c, c->queue, h), holder_state);
    CHECK_EQ(conf_total(c, c->queue), 2);
    char ids[256];
    conf_list_ids(c, c->queue, LN_JOB_COMPLETED, 0, 10, ids, sizeof ids);
    char *next = strtok(ids, " ");
    if (next != NULL && strcmp(next, h) == 0) next = strtok(NULL, " ");
    CHECK(next != NULL);
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, next, &info), 0);
    CONF_CHECK_STR(info.name, "last");
    CONF_CHECK_STR(info.data, "{\"n\":3}");
    CONF_CHECK_STR(info.result, "{\"ok\":{\"n\":3}}");
    ln_job_info_clear(&info);
    conf_check_counts(c, c->queue);
    /* Nothing is left holding the id: the next add is a new job. */
    add_keep(c, "again", "{}", 0, a, &ex);
    CHECK_EQ(ex, 0);
}

void case_dedup_next_keep_last_completes(conf_ctx *c) {
    keep_last_then_finish(c, "first", LN_JOB_COMPLETED);
}

void case_dedup_next_keep_last_fails(conf_ctx *c) {
    keep_last_then_finish(c, "bad", LN_JOB_FAILED); /* attempts 1: final */
}

/* Not while active: a keep-last add while the holder waits is only
 * deduplicated (nothing kept); the TTL is ignored (held until finished). */
void case_dedup_next_keep_last_waiting(conf_ctx *c) {
    char h[LN_JOB_ID_MAX], a[LN_JOB_ID_MAX];
    int ex;
    add_keep(c, "first", "{\"n\":1}", 50, h, &ex);
    CHECK_EQ(ex, 0);
    add_keep(c, "last", "{\"n\":2}", 50, a, &ex);
    CHECK_EQ(ex, 1);
    ln_test_sleep_ms(120); /* past the TTL: still held */
    add_keep(c, "last", "{\"n\":3}", 50, a, &ex);
    CHECK_EQ(ex, 1);
    CONF_CHECK_STR(a, h);
    ln_worker_opts o;
    conf_worker_opts(&o);
    conf_run(c, c->queue, conf_handler_by_name, NULL, &o);
    CHECK_EQ(conf_total(c, c->queue), 1);
    CHECK_EQ(conf_state(c, c->queue, h), LN_JOB_COMPLETED);
}

/* A canceled running holder is a final failure too: the kept add is
 * added (and runs). */
void case_dedup_next_canceled_holder(conf_ctx *c) {
    char h[LN_JOB_ID_MAX], a[LN_JOB_ID_MAX];
    int ex;
    next_hold hold = {0};
    add_keep(c, "first", "{\"n\":1}", 0, h, &ex);
    ln_worker_opts o;
    conf_worker_opts(&o);
    conf_bg *w = conf_bg_start(c->jobs, c->queue, next_handler, &hold, &o);
    wait_entered(&hold, 1);
    add_keep(c, "last", "{\"n\":2}", 0, a, &ex);
    CHECK_EQ(ex, 1);
    CHECK_EQ(ln_jobs_cancel(c->jobs, c->queue, h), 0);
    CHECK_EQ(conf_state(c, c->queue, h), LN_JOB_FAILED);
    atomic_store(&hold.release, 1);
    wait_finished(c, 2);
    CHECK_EQ(conf_bg_join(w, NULL), 0);
    CHECK_EQ(conf_total(c, c->queue), 2);
    conf_check_counts(c, c->queue);
}

/* The stalled holder: a forked worker (100 ms lease) runs it and blocks
 * until killed; a worker's stalled check with max_stalled 0 fails it for
 * good, which adds the kept add, and that worker runs it. */
static int block_handler(ln_job *job, void *ctx) {
    (void)job;
    int *fds = ctx;
    if (write(fds[0], "s", 1) != 1) _exit(5);
    char b;
    if (read(fds[1], &b, 1) != 1) _exit(6);
    return 0;
}

void case_dedup_next_stalled_holder(conf_ctx *c) {
    char h[LN_JOB_ID_MAX], a[LN_JOB_ID_MAX];
    int ex, started[2], go[2];
    add_keep(c, "first", "{\"n\":1}", 0, h, &ex);
    CHECK_EQ(pipe(started), 0);
    CHECK_EQ(pipe(go), 0);
    fflush(NULL);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        alarm(30); /* never outlive a failed case */
        ln_jobs *jobs = NULL;
        if (ln_jobs_open(&jobs, c->url) != 0) _exit(2);
        int fds[2] = {started[1], go[0]};
        ln_worker_opts o;
        ln_worker_opts_init(&o);
        o.lease_ms = 100;
        o.max_jobs = 1;
        ln_worker *w;
        if (ln_worker_create(&w, jobs, c->queue, block_handler, fds, &o) != 0) _exit(3);
        _exit(ln_worker_run(w) != 0 ? 4 : 0);
    }
    char b;
    CHECK_EQ(read(started[0], &b, 1), 1); /* the holder runs */
    add_keep(c, "last", "{\"n\":2}", 0, a, &ex);
    CHECK_EQ(ex, 1);
    CONF_CHECK_STR(a, h);
    kill(pid, SIGKILL);
    CHECK_EQ(waitpid(pid, NULL, 0), pid);
    ln_worker_opts o;
    conf_worker_opts(&o);
    o.lease_ms = 10000;
    o.stalled_interval_ms = 20;
    o.max_stalled = 0;
    ln_worker_stats st = conf_run(c, c->queue, conf_handler_by_name, NULL, &o);
    CHECK_EQ(st.stalled_found, 1);
    CHECK_EQ(conf_state(c, c->queue, h), LN_JOB_FAILED);
    CHECK_EQ(conf_total(c, c->queue), 2);
    char ids[256];
    conf_list_ids(c, c->queue, LN_JOB_COMPLETED, 0, 10, ids, sizeof ids);
    char *next = strtok(ids, " ");
    CHECK(next != NULL);
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, next, &info), 0);
    CONF_CHECK_STR(info.data, "{\"n\":2}");
    ln_job_info_clear(&info);
    conf_check_counts(c, c->queue);
    close(started[0]), close(started[1]), close(go[0]), close(go[1]);
}

/* Reschedule: a deduplicated add while the holder is delayed moves its
 * run time to the add's delay from now (0: due now), keeping its id and
 * data; without reschedule it keeps its own delay. */
void case_dedup_next_reschedule(conf_ctx *c) {
    char h[LN_JOB_ID_MAX], a[LN_JOB_ID_MAX];
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.dedup_id = "rs";
    o.dedup_reschedule = 1;
    o.delay_ms = 60000;
    CHECK_EQ(ln_jobs_add(c->jobs, c->queue, "first", "{\"n\":1}", &o, h, sizeof h), 0);
    o.delay_ms = 600000; /* later: moved later */
    CHECK_EQ(ln_jobs_add(c->jobs, c->queue, "second", "{\"n\":2}", &o, a, sizeof a), 0);
    CONF_CHECK_STR(a, h);
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, h, &info), 0);
    CHECK_EQ(info.state, LN_JOB_DELAYED);
    CHECK(info.run_at_ms - info.created_ms > 300000);
    ln_job_info_clear(&info);
    o.delay_ms = 0; /* due now */
    CHECK_EQ(ln_jobs_add(c->jobs, c->queue, "third", "{\"n\":3}", &o, a, sizeof a), 0);
    CONF_CHECK_STR(a, h);
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    conf_run(c, c->queue, conf_handler_by_name, NULL, &wo);
    CHECK_EQ(conf_total(c, c->queue), 1);
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, h, &info), 0);
    CHECK_EQ(info.state, LN_JOB_COMPLETED);
    CONF_CHECK_STR(info.data, "{\"n\":1}");
    ln_job_info_clear(&info);
    /* Without reschedule the delayed holder keeps its time. */
    o.dedup_id = "rs2";
    o.dedup_reschedule = 0;
    o.delay_ms = 60000;
    CHECK_EQ(ln_jobs_add(c->jobs, c->queue, "first", NULL, &o, h, sizeof h), 0);
    o.delay_ms = 0;
    CHECK_EQ(ln_jobs_add(c->jobs, c->queue, "second", NULL, &o, a, sizeof a), 0);
    CONF_CHECK_STR(a, h);
    CHECK_EQ(conf_state(c, c->queue, h), LN_JOB_DELAYED);
}

/* The id of queue's completed job named name ("" when none). */
static void completed_named(conf_ctx *c, const char *name, char *out, size_t size) {
    char ids[256];
    out[0] = 0;
    conf_list_ids(c, c->queue, LN_JOB_COMPLETED, 0, 10, ids, sizeof ids);
    for (char *id = strtok(ids, " "); id != NULL; id = strtok(NULL, " ")) {
        ln_job_info info;
        CHECK_EQ(ln_jobs_get(c->jobs, c->queue, id, &info), 0);
        if (strcmp(info.name, name) == 0) snprintf(out, size, "%s", id);
        ln_job_info_clear(&info);
    }
}

/* The kept job gets the id its add was given (on Redis the counter value
 * the add took, BullMQ's jid), not one numbered when it is added: the
 * holder's id + 1 here, below a job added after the kept add. */
void case_dedup_next_kept_id(conf_ctx *c) {
    char h[LN_JOB_ID_MAX], a[LN_JOB_ID_MAX], x[LN_JOB_ID_MAX], k[LN_JOB_ID_MAX];
    int ex;
    next_hold hold = {0};
    add_keep(c, "first", "{\"n\":1}", 0, h, &ex);
    ln_worker_opts o;
    conf_worker_opts(&o);
    conf_bg *w = conf_bg_start(c->jobs, c->queue, next_handler, &hold, &o);
    wait_entered(&hold, 1);
    add_keep(c, "kept", "{\"n\":2}", 0, a, &ex);
    CHECK_EQ(ex, 1);
    CONF_CHECK_STR(a, h); /* the add returns the holder's id, as BullMQ's */
    CHECK_EQ(ln_jobs_add(c->jobs, c->queue, "plain", "{}", NULL, x, sizeof x), 0);
    atomic_store(&hold.release, 1);
    wait_finished(c, 3);
    CHECK_EQ(conf_bg_join(w, NULL), 0);
    completed_named(c, "kept", k, sizeof k);
    CHECK(k[0] != 0);
    CHECK_EQ(strtoll(k, NULL, 10), strtoll(h, NULL, 10) + 1);
    CHECK(strtoll(k, NULL, 10) < strtoll(x, NULL, 10));
    conf_check_counts(c, c->queue);
}

/* The new options are 0/1 and need a dedup_id. */
void case_dedup_next_bad_options(conf_ctx *c) {
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.dedup_keep_last_if_active = 1;
    SAYS(c->jobs, LN_EINVAL, ln_jobs_add(c->jobs, c->queue, "d", NULL, &o, NULL, 0));
    o.dedup_keep_last_if_active = 0;
    o.dedup_reschedule = 1;
    SAYS(c->jobs, LN_EINVAL, ln_jobs_add(c->jobs, c->queue, "d", NULL, &o, NULL, 0));
    o.dedup_id = "x";
    o.dedup_reschedule = 2;
    SAYS(c->jobs, LN_EINVAL, ln_jobs_add(c->jobs, c->queue, "d", NULL, &o, NULL, 0));
    o.dedup_reschedule = 0;
    o.dedup_keep_last_if_active = -1;
    SAYS(c->jobs, LN_EINVAL, ln_jobs_add(c->jobs, c->queue, "d", NULL, &o, NULL, 0));
    CHECK_EQ(conf_total(c, c->queue), 0);
}

/* Holds a run until released; the first attempt then fails, a later one
 * completes. */
static int hold_then(ln_job *job, void *ctx) {
    conf_hold *h = ctx;
    atomic_fetch_add(&h->entered, 1);
    int64_t end = conf_deadline(5000);
    while (!atomic_load(&h->release) && conf_now_ms() < end) ln_test_sleep_ms(1);
    if (ln_job_attempt(job) == 1 && strcmp(ln_job_name(job), "retried") == 0)
        return ln_job_fail(job, "once");
    return ln_job_set_result(job, "1");
}

/* A worker in the background whose first job is running in hold_then. */
static conf_bg *start_holding(conf_ctx *c, conf_hold *hold) {
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    conf_bg *w = conf_bg_start(c->jobs, c->queue, hold_then, hold, &wo);
    conf_hold_wait(hold, 1);
    return w;
}

static void add_kl(conf_ctx *c, const char *name, ln_job_opts *o, char *id) {
    o->dedup_id = "kl2";
    o->dedup_keep_last_if_active = 1;
    SAYS(c->jobs, 0, ln_jobs_add(c->jobs, c->queue, name, "{}", o, id, LN_JOB_ID_MAX));
}

/* The kept add keeps its own options when it becomes a job: a custom id,
 * a delay, a priority, its attempts; the holder removed by its retention
 * as it completes still adds it; the job added holds the id. */
void case_dedup_next_kept_options(conf_ctx *c) {
    char h[LN_JOB_ID_MAX], a[LN_JOB_ID_MAX];
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.remove_on_complete.mode = LN_KEEP_NONE;
    add_kl(c, "first", &o, h);
    conf_hold hold = {0};
    conf_bg *w = start_holding(c, &hold);
    ln_job_opts_init(&o);
    o.job_id = "nxt";
    o.delay_ms = 3600000;
    o.priority = 5;
    o.attempts = 3;
    add_kl(c, "kept", &o, a);
    CONF_CHECK_STR(a, h);
    atomic_store(&hold.release, 1);
    ln_job_info info;
    int64_t end = conf_deadline(5000); /* the kept job is delayed: stop the worker */
    while (ln_jobs_get(c->jobs, c->queue, "nxt", &info) != 0 && conf_now_ms() < end)
        ln_test_sleep_ms(2);
    ln_job_info_clear(&info);
    ln_worker_stop(conf_bg_worker(w));
    CHECK_EQ(conf_bg_join(w, NULL), 0);
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, h, &info), LN_ENOENT);
    SAYS(c->jobs, 0, ln_jobs_get(c->jobs, c->queue, "nxt", &info));
    CHECK_EQ(info.state, LN_JOB_DELAYED);
    CHECK_EQ(info.priority, 5);
    CHECK_EQ(info.attempts, 3);
    CONF_CHECK_STR(info.name, "kept");
    ln_job_info_clear(&info);
    CHECK_EQ(conf_total(c, c->queue), 1);
    conf_check_counts(c, c->queue);
    ln_job_opts_init(&o);
    add_kl(c, "later", &o, a); /* held by the kept job now */
    CONF_CHECK_STR(a, "nxt");
    CHECK_EQ(conf_total(c, c->queue), 1);
}

/* A holder whose run fails with attempts left is retried, not finished:
 * the kept add waits until the retry completes, then is added once. */
void case_dedup_next_retried_holder(conf_ctx *c) {
    char h[LN_JOB_ID_MAX], a[LN_JOB_ID_MAX];
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.attempts = 2;
    add_kl(c, "retried", &o, h);
    conf_hold hold = {0};
    conf_bg *w = start_holding(c, &hold);
    ln_job_opts_init(&o);
    add_kl(c, "kept", &o, a);
    CONF_CHECK_STR(a, h);
    atomic_store(&hold.release, 1);
    CHECK_EQ(conf_bg_join(w, NULL), 0);
    CHECK_EQ(atomic_load(&hold.entered), 3); /* holder twice, the kept job once */
    CHECK_EQ(conf_total(c, c->queue), 2);
    CHECK_EQ(conf_state(c, c->queue, h), LN_JOB_COMPLETED);
    conf_check_counts(c, c->queue);
}

/* Removing a job that carries the dedup id but no longer holds it (its
 * TTL ran out and a keep-last add took the id) leaves the next job kept
 * for the holder, as BullMQ's removal (it drops the next job only when the
 * key names the removed job). The SQLite store's trigger dropped it for
 * any unfinished job of that dedup id, so the holder's finish added
 * nothing there while Redis added it. */
void case_dedup_next_remove_other_job(conf_ctx *c) {
    char old[LN_JOB_ID_MAX], h[LN_JOB_ID_MAX], a[LN_JOB_ID_MAX];
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.dedup_id = "kl2";
    o.dedup_ttl_ms = 30;
    o.delay_ms = 3600000;
    SAYS(c->jobs, 0, ln_jobs_add(c->jobs, c->queue, "old", "{}", &o, old, sizeof old));
    ln_test_sleep_ms(60); /* its TTL is over: the id is free */
    ln_job_opts_init(&o);
    add_kl(c, "holder", &o, h);
    CHECK(strcmp(h, old) != 0);
    conf_hold hold = {0};
    conf_bg *w = start_holding(c, &hold);
    add_kl(c, "kept", &o, a);
    CONF_CHECK_STR(a, h);
    SAYS(c->jobs, 0, ln_jobs_remove(c->jobs, c->queue, old));
    atomic_store(&hold.release, 1);
    CHECK_EQ(conf_bg_join(w, NULL), 0);
    CHECK_EQ(atomic_load(&hold.entered), 2); /* the holder, then the kept job */
    CHECK_EQ(conf_total(c, c->queue), 2);
    conf_check_counts(c, c->queue);
}

/* Removing the holder itself (delayed for a retry after a failed run,
 * its next job kept) drops the next job, as BullMQ's removal: a later
 * holder's finish adds only what was kept for it. */
static void remove_holder(conf_ctx *c, int drain) {
    char h[LN_JOB_ID_MAX], a[LN_JOB_ID_MAX];
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.attempts = 2;
    o.backoff_ms = 3600000;
    add_kl(c, "retried", &o, h);
    conf_hold hold = {0};
    conf_bg *w = start_holding(c, &hold);
    ln_job_opts_init(&o);
    add_kl(c, "kept", &o, a);
    CONF_CHECK_STR(a, h);
    atomic_store(&hold.release, 1);
    conf_wait_state(c, c->queue, h, LN_JOB_DELAYED, 5000);
    ln_worker_stop(conf_bg_worker(w));
    CHECK_EQ(conf_bg_join(w, NULL), 0);
    if (drain)
        SAYS(c->jobs, 0, ln_jobs_drain(c->jobs, c->queue, NULL));
    else
        SAYS(c->jobs, 0, ln_jobs_remove(c->jobs, c->queue, h));
    CHECK_EQ(conf_total(c, c->queue), 0);
    add_kl(c, "fresh", &o, a); /* the id is free: a new holder */
    CHECK(strcmp(a, h) != 0);
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    (void)conf_run(c, c->queue, conf_handler_by_name, NULL, &wo);
    CHECK_EQ(conf_total(c, c->queue), 1); /* not the dropped "kept" */
    CHECK_EQ(conf_state(c, c->queue, a), LN_JOB_COMPLETED);
}

void case_dedup_next_remove_holder(conf_ctx *c) {
    remove_holder(c, 0);
}

void case_dedup_next_drain_holder(conf_ctx *c) {
    remove_holder(c, 1); /* the drain takes delayed jobs too */
}
