/* conf_edit2.c - more of <lanes/jobs_edit.h>, where the stores once
 * disagreed: the lifo flag a job reports after a change of priority with
 * (or without) lifo, where a promoted lifo job goes, and a change of
 * priority of an active or finished job (written, nothing moved). */
#include "conf.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

static int lifo_of(conf_ctx *c, const char *id) {
    ln_job_info i = conf_info(c, id);
    int l = i.lifo;
    ln_job_info_clear(&i);
    return l;
}

/* lifo places the job, it does not change the job's own lifo option
 * (BullMQ's changePriority leaves opts): a job added without lifo still
 * reports 0 after a lifo move to the front, one added with lifo still 1
 * after a move to the back. */
void case_edit2_priority_keeps_lifo(conf_ctx *c) {
    conf_add_id(c, c->queue, "a", 0, 0, 0);
    conf_add_id(c, c->queue, "n", 0, 0, 0);
    conf_add_id(c, c->queue, "l", 0, 1, 0);
    SAYS(c->jobs, 0, ln_jobs_change_priority(c->jobs, c->queue, "n", 0, 1));
    CHECK_EQ(lifo_of(c, "n"), 0);
    char ids[128];
    conf_list_ids(c, c->queue, LN_JOB_WAITING, 0, 10, ids, sizeof ids);
    CONF_CHECK_STR(ids, "n l a ");
    SAYS(c->jobs, 0, ln_jobs_change_priority(c->jobs, c->queue, "l", 2, 0));
    CHECK_EQ(lifo_of(c, "l"), 1);
    CHECK_EQ(conf_state(c, c->queue, "l"), LN_JOB_PRIORITIZED);
    SAYS(c->jobs, 0, ln_jobs_change_priority(c->jobs, c->queue, "a", 2, 1));
    CHECK_EQ(lifo_of(c, "a"), 0);
    conf_list_ids(c, c->queue, LN_JOB_PRIORITIZED, 0, 10, ids, sizeof ids);
    CONF_CHECK_STR(ids, "a l ");
    conf_check_counts(c, c->queue);
}

/* A delayed job added with lifo goes to the back of its line when it is
 * promoted (ln_jobs_promote, ln_jobs_promote_all, or a worker's promotion
 * of a due job), as BullMQ's promote and promoteJobs place every job
 * whatever its lifo option; the option itself stays. */
void case_edit2_promote_lifo_back(conf_ctx *c) {
    conf_add_id(c, c->queue, "w1", 0, 0, 0);
    conf_add_id(c, c->queue, "w2", 0, 0, 0);
    conf_add_id(c, c->queue, "p1", 3, 0, 0);
    conf_add_id(c, c->queue, "d1", 0, 1, 600000);
    conf_add_id(c, c->queue, "d2", 3, 1, 600000);
    conf_add_id(c, c->queue, "d3", 0, 1, 600000);
    SAYS(c->jobs, 0, ln_jobs_promote(c->jobs, c->queue, "d1"));
    char ids[128];
    conf_list_ids(c, c->queue, LN_JOB_WAITING, 0, 10, ids, sizeof ids);
    CONF_CHECK_STR(ids, "w1 w2 d1 ");
    CHECK_EQ(lifo_of(c, "d1"), 1);
    size_t moved = 0;
    SAYS(c->jobs, 0, ln_jobs_change_delay(c->jobs, c->queue, "d3", 3600000));
    SAYS(c->jobs, 0, ln_jobs_promote_all(c->jobs, c->queue, &moved));
    CHECK_EQ(moved, 2);
    conf_list_ids(c, c->queue, LN_JOB_PRIORITIZED, 0, 10, ids, sizeof ids);
    CONF_CHECK_STR(ids, "p1 d2 ");
    conf_list_ids(c, c->queue, LN_JOB_WAITING, 0, 10, ids, sizeof ids);
    CONF_CHECK_STR(ids, "w1 w2 d1 d3 ");
    CHECK_EQ(lifo_of(c, "d2"), 1);
    conf_check_counts(c, c->queue);
}

/* The same for a worker's own promotion of a due job: it runs after the
 * jobs waiting before it was due. */
void case_edit2_due_lifo_back(conf_ctx *c) {
    conf_add_id(c, c->queue, "w1", 0, 0, 0);
    conf_add_id(c, c->queue, "w2", 0, 0, 0);
    conf_add_id(c, c->queue, "d", 0, 1, 600000);
    SAYS(c->jobs, 0, ln_jobs_change_delay(c->jobs, c->queue, "d", 0));
    ln_worker_opts o;
    conf_worker_opts(&o);
    o.concurrency = 1;
    conf_run_order r = {.mu = PTHREAD_MUTEX_INITIALIZER};
    conf_run(c, c->queue, conf_record_run, &r, &o);
    CONF_CHECK_STR(r.ids, "w1 w2 d ");
}

static int record_then_by_name(ln_job *job, void *ctx) {
    conf_record_run(job, ctx);
    return conf_handler_by_name(job, NULL);
}

/* A retry places a job by its own lifo option, not by where a lifo
 * change of priority put it (BullMQ's retries read opts.lifo): a job
 * added without lifo and moved to the front goes to the back when its
 * failed run is retried (by the worker, or by ln_jobs_retry). */
void case_edit2_retry_by_own_lifo(conf_ctx *c) {
    /* (w before n: "the back" on SQLite is by the order jobs were added) */
    conf_add_id(c, c->queue, "w", 0, 0, 0);
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.job_id = "n";
    o.attempts = 2;
    conf_add(c, c->queue, "bad", "{}", &o, NULL);
    SAYS(c->jobs, 0, ln_jobs_change_priority(c->jobs, c->queue, "n", 0, 1));
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    wo.concurrency = 1;
    conf_run_order r = {.mu = PTHREAD_MUTEX_INITIALIZER};
    conf_run(c, c->queue, record_then_by_name, &r, &wo);
    CONF_CHECK_STR(r.ids, "n w n ");

    conf_add_id(c, c->queue, "w2", 0, 0, 600000); /* kept from the worker */
    o.job_id = "f";
    o.attempts = 1;
    conf_add(c, c->queue, "bad", "{}", &o, NULL);
    SAYS(c->jobs, 0, ln_jobs_change_priority(c->jobs, c->queue, "f", 0, 1));
    wo.max_jobs = 1;
    conf_run(c, c->queue, conf_handler_by_name, NULL, &wo);
    CHECK_EQ(conf_state(c, c->queue, "f"), LN_JOB_FAILED);
    SAYS(c->jobs, 0, ln_jobs_promote(c->jobs, c->queue, "w2"));
    SAYS(c->jobs, 0, ln_jobs_retry(c->jobs, c->queue, "f"));
    char ids[64];
    conf_list_ids(c, c->queue, LN_JOB_WAITING, 0, 10, ids, sizeof ids);
    CONF_CHECK_STR(ids, "w2 f ");
    conf_check_counts(c, c->queue);
}

/* An active or finished job takes a new priority as BullMQ's
 * changePriority gives it (the field written, nothing moved): it reads
 * it when it is ready again (a retry). A job that does not exist is
 * still LN_ENOENT. */
void case_edit2_priority_any_state(conf_ctx *c) {
    conf_add_id(c, c->queue, "x", 0, 0, 0);
    conf_hold h = {0};
    ln_worker_opts o;
    conf_worker_opts(&o);
    o.concurrency = 1;
    conf_bg *bg = conf_bg_start(c->jobs, c->queue, conf_hold_handler, &h, &o);
    conf_hold_wait(&h, 1);
    SAYS(c->jobs, 0, ln_jobs_change_priority(c->jobs, c->queue, "x", 5, 1));
    ln_job_info i = conf_info(c, "x");
    CHECK_EQ(i.state, LN_JOB_ACTIVE);
    CHECK_EQ(i.priority, 5);
    CHECK_EQ(i.lifo, 0);
    ln_job_info_clear(&i);
    atomic_store(&h.release, 1);
    CHECK_EQ(conf_bg_join(bg, NULL), 0);
    SAYS(c->jobs, 0, ln_jobs_change_priority(c->jobs, c->queue, "x", 7, 0));
    i = conf_info(c, "x");
    CHECK_EQ(i.state, LN_JOB_COMPLETED);
    CHECK_EQ(i.priority, 7);
    ln_job_info_clear(&i);

    ln_job_opts fo;
    ln_job_opts_init(&fo);
    fo.job_id = "f";
    conf_add(c, c->queue, "bad", "{}", &fo, NULL);
    conf_run(c, c->queue, conf_handler_by_name, NULL, &o);
    CHECK_EQ(conf_state(c, c->queue, "f"), LN_JOB_FAILED);
    SAYS(c->jobs, 0, ln_jobs_change_priority(c->jobs, c->queue, "f", 9, 0));
    CHECK_EQ(conf_state(c, c->queue, "f"), LN_JOB_FAILED);
    SAYS(c->jobs, 0, ln_jobs_retry(c->jobs, c->queue, "f"));
    i = conf_info(c, "f");
    CHECK_EQ(i.state, LN_JOB_PRIORITIZED);
    CHECK_EQ(i.priority, 9);
    ln_job_info_clear(&i);
    SAYS(c->jobs, LN_ENOENT, ln_jobs_change_priority(c->jobs, c->queue, "nope", 1, 0));
    conf_check_counts(c, c->queue);
}

/* Another thread of the same handle adds delayed jobs while promote_all
 * runs its steps: it holds the handle's mutex for each step, not across
 * them, so adds may get in between (before, none could until the last
 * step was done; the mutex is not fair, so whether one does is not
 * checked), and every job is either promoted (counted once in *promoted)
 * or still delayed, none lost or counted twice. */
typedef struct promote_run {
    conf_ctx *c;
    size_t promoted;
    int rc;
    atomic_int started, done;
} promote_run;

static void *promote_thread(void *arg) {
    promote_run *p = arg;
    atomic_store(&p->started, 1);
    p->rc = ln_jobs_promote_all(p->c->jobs, p->c->queue, &p->promoted);
    atomic_store(&p->done, 1);
    return NULL;
}

void case_edit2_promote_all_shared_handle(conf_ctx *c) {
    enum { N = 4 * LN_JOBS_PROMOTE_STEP + 10, MAX_ADDS = 5000 };
    static ln_job_spec specs[N];
    ln_job_opts late;
    ln_job_opts_init(&late);
    late.delay_ms = 600000;
    for (size_t i = 0; i < N; i++) specs[i] = (ln_job_spec){"n", "{}", &late};
    SAYS(c->jobs, 0, ln_jobs_add_bulk(c->jobs, c->queue, specs, N, NULL, 0));
    promote_run p = {.c = c};
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, promote_thread, &p), 0);
    while (!atomic_load(&p.started)) sched_yield();
    int adds = 0;
    while (adds < MAX_ADDS && (adds == 0 || !atomic_load(&p.done))) {
        CHECK_EQ(ln_jobs_add(c->jobs, c->queue, "m", "{}", &late, NULL, 0), 0);
        adds++;
    }
    CHECK_EQ(pthread_join(t, NULL), 0);
    CHECK_EQ(p.rc, 0);
    ln_job_counts k;
    CHECK_EQ(ln_jobs_counts(c->jobs, c->queue, &k), 0);
    CHECK(p.promoted >= N && p.promoted <= (size_t)(N + adds));
    CHECK_EQ(k.waiting, p.promoted);
    CHECK_EQ(k.delayed, N + adds - p.promoted);
    conf_check_counts(c, c->queue);
}
