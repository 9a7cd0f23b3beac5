/* conf_admin_job.c - administering one job (<lanes/jobs_edit.h>): its
 * priority (its place in the waiting / prioritized lines, a delayed job
 * staying delayed, a parent in waiting-children, an active or finished job
 * written with nothing moved, refused states) and the lifo flag it keeps or
 * takes, its delay (the due time, the "delayed" event), its data (byte for
 * byte, in any state), a deduplication id's holder (read, release),
 * promoting a job (its first due time kept) or every delayed job (a lifo
 * one goes to the back; threads sharing a handle), counting ready jobs by
 * priority and trimming a queue's events. Times are checked against bounds
 * of the local clock around the call, never exact values. */
#include "conf.h"
#include "conf_flowtree.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

static int64_t wall_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int priority_of(conf_ctx *c, const char *id) {
    ln_job_info i = conf_info(c, id);
    int p = i.priority;
    ln_job_info_clear(&i);
    return p;
}

/* Waiting and prioritized jobs move to the line of their new priority:
 * to its back, or with lifo to its front; counts follow. */
void case_edit_priority_moves(conf_ctx *c) {
    char ids[256];
    conf_add_id(c, c->queue, "a", 0, 0, 0);
    conf_add_id(c, c->queue, "b", 0, 0, 0);
    conf_add_id(c, c->queue, "c", 0, 0, 0);
    conf_add_id(c, c->queue, "d", 2, 0, 0);
    conf_add_id(c, c->queue, "e", 3, 0, 0);
    SAYS(c->jobs, 0, ln_jobs_change_priority(c->jobs, c->queue, "a", 1, 0));
    CHECK_EQ(priority_of(c, "a"), 1);
    conf_list_ids(c, c->queue, LN_JOB_PRIORITIZED, 0, 10, ids, sizeof ids);
    CONF_CHECK_STR(ids, "a d e ");
    ln_job_counts k;
    CHECK_EQ(ln_jobs_counts(c->jobs, c->queue, &k), 0);
    CHECK_EQ(k.waiting, 2);
    CHECK_EQ(k.prioritized, 3);
    conf_check_counts(c, c->queue);
    SAYS(c->jobs, 0, ln_jobs_change_priority(c->jobs, c->queue, "e", 0, 0));
    CHECK_EQ(priority_of(c, "e"), 0);
    conf_list_ids(c, c->queue, LN_JOB_WAITING, 0, 10, ids, sizeof ids);
    CONF_CHECK_STR(ids, "b c e ");
    SAYS(c->jobs, 0, ln_jobs_change_priority(c->jobs, c->queue, "e", 0, 1)); /* lifo */
    conf_list_ids(c, c->queue, LN_JOB_WAITING, 0, 10, ids, sizeof ids);
    CONF_CHECK_STR(ids, "e b c ");
    SAYS(c->jobs, 0, ln_jobs_change_priority(c->jobs, c->queue, "d", 1, 1));
    conf_list_ids(c, c->queue, LN_JOB_PRIORITIZED, 0, 10, ids, sizeof ids);
    CONF_CHECK_STR(ids, "d a ");
    CHECK_EQ(ln_jobs_counts(c->jobs, c->queue, &k), 0);
    CHECK_EQ(k.waiting, 3);
    CHECK_EQ(k.prioritized, 2);
    conf_check_counts(c, c->queue);
    /* and a worker runs them in that order */
    ln_worker_opts o;
    conf_worker_opts(&o);
    o.concurrency = 1;
    conf_run_order r = {.mu = PTHREAD_MUTEX_INITIALIZER};
    conf_run(c, c->queue, conf_record_run, &r, &o);
    CONF_CHECK_STR(r.ids, "e b c d a "); /* waiting first, as BullMQ's take */
}

/* With lifo the job runs first of its priority, also before the jobs of
 * that priority added with lifo. */
void case_edit_priority_lifo_first(conf_ctx *c) {
    conf_add_id(c, c->queue, "x", 1, 1, 0);
    conf_add_id(c, c->queue, "y", 1, 0, 0);
    conf_add_id(c, c->queue, "z", 0, 0, 0);
    SAYS(c->jobs, 0, ln_jobs_change_priority(c->jobs, c->queue, "z", 1, 1));
    char ids[128];
    conf_list_ids(c, c->queue, LN_JOB_PRIORITIZED, 0, 10, ids, sizeof ids);
    CONF_CHECK_STR(ids, "z x y ");
    conf_check_counts(c, c->queue);
}

/* A delayed job keeps its due time and gets the priority; a paused
 * queue's jobs move as when it runs. */
void case_edit_priority_delayed_paused(conf_ctx *c) {
    conf_add_id(c, c->queue, "late", 0, 0, 600000);
    ln_job_info before = conf_info(c, "late");
    SAYS(c->jobs, 0, ln_jobs_change_priority(c->jobs, c->queue, "late", 7, 0));
    ln_job_info after = conf_info(c, "late");
    CHECK_EQ(after.state, LN_JOB_DELAYED);
    CHECK_EQ(after.priority, 7);
    CHECK_EQ(after.run_at_ms, before.run_at_ms);
    ln_job_info_clear(&before);
    ln_job_info_clear(&after);
    SAYS(c->jobs, 0, ln_jobs_promote(c->jobs, c->queue, "late"));
    CHECK_EQ(conf_state(c, c->queue, "late"), LN_JOB_PRIORITIZED);

    conf_add_id(c, c->queue, "p1", 0, 0, 0);
    conf_add_id(c, c->queue, "p2", 0, 0, 0);
    CHECK_EQ(ln_jobs_pause(c->jobs, c->queue), 0);
    SAYS(c->jobs, 0, ln_jobs_change_priority(c->jobs, c->queue, "p2", 1, 0));
    char ids[128];
    conf_list_ids(c, c->queue, LN_JOB_PAUSED, 0, 10, ids, sizeof ids);
    CONF_CHECK_STR(ids, "p1 p2 late ");
    CHECK_EQ(ln_jobs_resume(c->jobs, c->queue), 0);
    conf_check_counts(c, c->queue);
}

/* No such job and bad arguments are refused. */
void case_edit_priority_refused(conf_ctx *c) {
    SAYS(c->jobs, LN_ENOENT, ln_jobs_change_priority(c->jobs, c->queue, "nope", 1, 0));
    conf_add_id(c, c->queue, "x", 0, 0, 0);
    SAYS(c->jobs, LN_EINVAL, ln_jobs_change_priority(c->jobs, c->queue, "x", -1, 0));
    SAYS(c->jobs, LN_EINVAL,
         ln_jobs_change_priority(c->jobs, c->queue, "x", LN_JOB_PRIORITY_MAX + 1, 0));
    SAYS(c->jobs, LN_EINVAL, ln_jobs_change_priority(c->jobs, c->queue, "x", 1, 2));
    SAYS(c->jobs, LN_EINVAL, ln_jobs_change_priority(c->jobs, c->queue, NULL, 1, 0));
    ln_worker_opts o;
    conf_worker_opts(&o);
    conf_run(c, c->queue, conf_handler_by_name, NULL, &o);
    /* a finished job takes it, nothing moves (conf_edit2.c) */
    SAYS(c->jobs, 0, ln_jobs_change_priority(c->jobs, c->queue, "x", 1, 0));
    CHECK_EQ(priority_of(c, "x"), 1);
    CHECK_EQ(conf_state(c, c->queue, "x"), LN_JOB_COMPLETED);
    conf_check_counts(c, c->queue);
}

/* The next "delayed" event of ev (within 3 s): job id, due in lo..hi. */
static void next_delayed(ln_jobs_events *ev, const char *id, int64_t lo, int64_t hi) {
    ln_job_event e;
    conf_next_named(ev, "delayed", &e);
    CONF_CHECK_STR(e.job_id, id);
    const char *d = strstr(e.fields, "\"delay\":\"");
    CHECK(d != NULL);
    long long due = d != NULL ? atoll(d + 9) : 0;
    CHECK(due >= lo && due <= hi);
    ln_job_event_clear(&e);
}

/* A delayed job is due delay ms from now, with a "delayed" event; 0 makes
 * it run; other states and bad delays are refused. */
void case_edit_delay(conf_ctx *c) {
    conf_add_id(c, c->queue, "d", 0, 0, 600000);
    ln_jobs_events *ev = NULL;
    CHECK_EQ(ln_jobs_events_open(c->jobs, c->queue, "$", &ev), 0);
    ln_jobs *all = conf_open_all_events(c); /* SQLite: per-job moves too */
    int64_t t0 = wall_ms();
    SAYS(all, 0, ln_jobs_change_delay(all, c->queue, "d", 3600000));
    ln_jobs_close(all);
    int64_t t1 = wall_ms();
    ln_job_info i = conf_info(c, "d");
    CHECK_EQ(i.state, LN_JOB_DELAYED);
    CHECK(i.run_at_ms >= t0 + 3600000 - 5000 && i.run_at_ms <= t1 + 3600000 + 5000);
    ln_job_info_clear(&i);
    next_delayed(ev, "d", t0 + 3600000 - 5000, t1 + 3600000 + 5000);
    ln_jobs_events_close(ev);
    SAYS(c->jobs, LN_EINVAL, ln_jobs_change_delay(c->jobs, c->queue, "d", -1));
    SAYS(c->jobs, LN_ENOENT, ln_jobs_change_delay(c->jobs, c->queue, "nope", 10));
    conf_add_id(c, c->queue, "w", 0, 0, 0);
    SAYS(c->jobs, LN_EINVAL, ln_jobs_change_delay(c->jobs, c->queue, "w", 10));
    CHECK_EQ(conf_state(c, c->queue, "w"), LN_JOB_WAITING);
    SAYS(c->jobs, 0, ln_jobs_change_delay(c->jobs, c->queue, "d", 0));
    ln_worker_opts o;
    conf_worker_opts(&o);
    conf_run(c, c->queue, conf_handler_by_name, NULL, &o);
    i = conf_info(c, "d");
    CHECK_EQ(i.state, LN_JOB_COMPLETED);
    CHECK_EQ(i.run_at_ms, i.created_ms + 600000); /* first due: the add's delay */
    ln_job_info_clear(&i);
    conf_check_counts(c, c->queue);
}

/* Any JSON text, byte for byte, in any state; bad data refused. */
void case_edit_data(conf_ctx *c) {
    static const char *const texts[] = {
        " [1, 2.50, \"\\u00e9\", -0, 1e400] ",
        "\"x\"",
        "null",
        "{\"a\":{\"b\":[]},\"a\":2}",
        "\"\\u0000 \\ud800\"",
        "100000000000000000000",
        "\t-12.5E+3\n",
    };
    conf_add_id(c, c->queue, "j", 0, 0, 0);
    for (size_t k = 0; k < sizeof texts / sizeof *texts; k++) {
        SAYS(c->jobs, 0, ln_jobs_update_data(c->jobs, c->queue, "j", texts[k]));
        ln_job_info i = conf_info(c, "j");
        CONF_CHECK_STR(i.data, texts[k]);
        ln_job_info_clear(&i);
    }
    SAYS(c->jobs, LN_EINVAL, ln_jobs_update_data(c->jobs, c->queue, "j", "{bad"));
    SAYS(c->jobs, LN_EINVAL, ln_jobs_update_data(c->jobs, c->queue, "j", NULL));
    SAYS(c->jobs, LN_ENOENT, ln_jobs_update_data(c->jobs, c->queue, "nope", "1"));
    ln_jobs_opts jo;
    ln_jobs_opts_init(&jo);
    jo.max_data_size = 8;
    ln_jobs *small = conf_open(c, &jo);
    SAYS(small, LN_EINVAL, ln_jobs_update_data(small, c->queue, "j", "[1,2,3,4,5]"));
    ln_jobs_close(small);
    ln_job_info i = conf_info(c, "j");
    CONF_CHECK_STR(i.data, "\t-12.5E+3\n");
    ln_job_info_clear(&i);
    ln_worker_opts o;
    conf_worker_opts(&o);
    conf_run(c, c->queue, conf_handler_by_name, NULL, &o);
    SAYS(c->jobs, 0, ln_jobs_update_data(c->jobs, c->queue, "j", "{\"after\":true}"));
    i = conf_info(c, "j");
    CHECK_EQ(i.state, LN_JOB_COMPLETED);
    CONF_CHECK_STR(i.data, "{\"after\":true}");
    ln_job_info_clear(&i);
}

static void add_deduped(conf_ctx *c, const char *deid, char *id) {
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.dedup_id = deid;
    conf_add(c, c->queue, "d", "{}", &o, id);
}

/* The holder of a dedup id, read and released; a release lets the next
 * add make a new job; a finished holder holds it no more. */
void case_edit_dedup(conf_ctx *c) {
    char a[LN_JOB_ID_MAX], b[LN_JOB_ID_MAX], got[LN_JOB_ID_MAX];
    add_deduped(c, "k1", a);
    SAYS(c->jobs, 0, ln_jobs_dedup_job(c->jobs, c->queue, "k1", got, sizeof got));
    CONF_CHECK_STR(got, a);
    SAYS(c->jobs, LN_ERANGE, ln_jobs_dedup_job(c->jobs, c->queue, "k1", got, strlen(a)));
    SAYS(c->jobs, LN_ENOENT, ln_jobs_dedup_job(c->jobs, c->queue, "k2", got, sizeof got));
    SAYS(c->jobs, LN_EINVAL, ln_jobs_dedup_job(c->jobs, c->queue, "", got, sizeof got));
    int removed = -1;
    SAYS(c->jobs, 0, ln_jobs_dedup_remove(c->jobs, c->queue, "k1", &removed));
    CHECK_EQ(removed, 1);
    SAYS(c->jobs, LN_ENOENT, ln_jobs_dedup_job(c->jobs, c->queue, "k1", got, sizeof got));
    SAYS(c->jobs, 0, ln_jobs_dedup_remove(c->jobs, c->queue, "k1", &removed));
    CHECK_EQ(removed, 0);
    CHECK_EQ(conf_state(c, c->queue, a), LN_JOB_WAITING); /* the holder stays */
    add_deduped(c, "k1", b);
    CHECK(strcmp(a, b) != 0);
    SAYS(c->jobs, 0, ln_jobs_dedup_job(c->jobs, c->queue, "k1", got, sizeof got));
    CONF_CHECK_STR(got, b);
    ln_worker_opts o;
    conf_worker_opts(&o);
    conf_run(c, c->queue, conf_handler_by_name, NULL, &o);
    SAYS(c->jobs, LN_ENOENT, ln_jobs_dedup_job(c->jobs, c->queue, "k1", got, sizeof got));
}

/* Every delayed job made ready, over more than one step, each by its
 * priority; the waiting ones and the count of what moved. */
void case_edit_promote_all(conf_ctx *c) {
    enum { N = LN_JOBS_PROMOTE_STEP + 5 };
    static ln_job_spec specs[N];
    ln_job_opts late, prio;
    ln_job_opts_init(&late);
    late.delay_ms = 600000;
    prio = late;
    prio.priority = 4;
    for (size_t i = 0; i < N; i++)
        specs[i] = (ln_job_spec){"n", "{}", i % 100 == 7 ? &prio : &late};
    SAYS(c->jobs, 0, ln_jobs_add_bulk(c->jobs, c->queue, specs, N, NULL, 0));
    conf_add_id(c, c->queue, "w", 0, 0, 0);
    size_t moved = 0;
    SAYS(c->jobs, 0, ln_jobs_promote_all(c->jobs, c->queue, &moved));
    CHECK_EQ(moved, N);
    ln_job_counts k;
    CHECK_EQ(ln_jobs_counts(c->jobs, c->queue, &k), 0);
    CHECK_EQ(k.delayed, 0);
    CHECK_EQ(k.prioritized, 10); /* i = 7, 107, ..., 907 */
    CHECK_EQ(k.waiting, N - 10 + 1);
    CHECK_EQ(conf_state(c, c->queue, "w"), LN_JOB_WAITING);
    SAYS(c->jobs, 0, ln_jobs_promote_all(c->jobs, c->queue, &moved));
    CHECK_EQ(moved, 0);
    SAYS(c->jobs, LN_EINVAL, ln_jobs_promote_all(c->jobs, "bad:queue", &moved));
    conf_check_counts(c, c->queue);
}

/* Ready jobs by priority: 0 the waiting ones (paused too), delayed and
 * active ones not counted; bad arguments refused. */
void case_edit_priority_counts(conf_ctx *c) {
    conf_add_id(c, c->queue, "a", 0, 0, 0);
    conf_add_id(c, c->queue, "b", 0, 0, 0);
    conf_add_id(c, c->queue, "c", 2, 0, 0);
    conf_add_id(c, c->queue, "d", 2, 0, 0);
    conf_add_id(c, c->queue, "e", 5, 0, 0);
    conf_add_id(c, c->queue, "f", 2, 0, 600000);
    CHECK_EQ(ln_jobs_pause(c->jobs, c->queue), 0);
    const int prio[] = {0, 1, 2, 5, 2, LN_JOB_PRIORITY_MAX};
    uint64_t n[6];
    SAYS(c->jobs, 0, ln_jobs_counts_per_priority(c->jobs, c->queue, prio, 6, n));
    CHECK_EQ(n[0], 2);
    CHECK_EQ(n[1], 0);
    CHECK_EQ(n[2], 2);
    CHECK_EQ(n[3], 1);
    CHECK_EQ(n[4], 2);
    CHECK_EQ(n[5], 0);
    const int bad[] = {-1};
    SAYS(c->jobs, LN_EINVAL, ln_jobs_counts_per_priority(c->jobs, c->queue, bad, 1, n));
    SAYS(c->jobs, LN_EINVAL, ln_jobs_counts_per_priority(c->jobs, c->queue, prio, 0, n));
    SAYS(c->jobs, LN_EINVAL, ln_jobs_counts_per_priority(c->jobs, c->queue, NULL, 1, n));
    CHECK_EQ(ln_jobs_resume(c->jobs, c->queue), 0);
}

/* Trimming keeps at least the newest max_len events (Redis: whole stream
 * nodes only, so maybe more) and removes older ones; another queue's stay. */
void case_edit_trim_events(conf_ctx *c) {
    enum { N = 300 };
    ln_jobs *all = conf_open_all_events(c);
    static ln_job_spec specs[N];
    for (size_t i = 0; i < N; i++) specs[i] = (ln_job_spec){"n", "{}", NULL};
    const char *other = conf_queue(c, "other");
    SAYS(all, 0, ln_jobs_add_bulk(all, c->queue, specs, N, NULL, 0));
    SAYS(all, 0, ln_jobs_add_bulk(all, other, specs, 3, NULL, 0));
    char last[48], last2[48], olast[48];
    size_t before = conf_count_events(c, c->queue, last);
    size_t obefore = conf_count_events(c, other, olast);
    CHECK(before >= N);
    size_t removed = 0;
    SAYS(all, 0, ln_jobs_trim_events(all, c->queue, 10, &removed));
    size_t after = conf_count_events(c, c->queue, last2);
    CHECK_EQ(after, before - removed);
    CHECK(after >= 10 && after < before);
    CONF_CHECK_STR(last2, last); /* the newest stay */
    CHECK_EQ(conf_count_events(c, other, olast), obefore);
    SAYS(all, 0, ln_jobs_trim_events(all, c->queue, 1000000, &removed));
    CHECK_EQ(removed, 0);
    SAYS(all, LN_EINVAL, ln_jobs_trim_events(all, NULL, 10, &removed));
    ln_jobs_close(all);
}

/* A flow parent waiting for its children takes a new priority as a
 * delayed job does (BullMQ's changePriority writes the field, and the
 * parent's release reads it): it stays in waiting-children and, once its
 * child completed, runs by it (behind w, of priority 3; by its old
 * priority 0 it would run first). */
void case_priority_of_waiting_parent(conf_ctx *c) {
    conf_add_id(c, c->queue, "w", 3, 0, 0);
    conf_tree t;
    const conf_tree_row rows[] = {{NULL, c->queue, "parent", "p"}, {"p", NULL, "k", "k"}};
    ln_flow_node *root = CONF_TREE_MAKE(&t, rows);
    SAYS(c->jobs, 0, ln_jobs_add_flow(c->jobs, root, NULL, 0, 0));
    SAYS(c->jobs, 0, ln_jobs_change_priority(c->jobs, c->queue, "p", 5, 0));
    ln_job_info i;
    SAYS(c->jobs, 0, ln_jobs_get(c->jobs, c->queue, "p", &i));
    CHECK_EQ(i.state, LN_JOB_WAITING_CHILDREN);
    CHECK_EQ(i.priority, 5);
    ln_job_info_clear(&i);
    conf_check_counts(c, c->queue);
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    wo.concurrency = 1;
    conf_run_order r = {.mu = PTHREAD_MUTEX_INITIALIZER};
    conf_run(c, c->queue, conf_record_run, &r, &wo);
    CONF_CHECK_STR(r.ids, "k w p ");
    conf_check_counts(c, c->queue);
}

/* A job moved to the front (lifo) runs after the lifo jobs added later,
 * as on Redis (RPUSH, a lower lifo score): there the order is that of
 * the calls. x goes to the front of a (lifo), then c is added lifo. */
void case_lifo_change_then_lifo_add(conf_ctx *c) {
    char ids[128];
    for (int p = 0; p <= 2; p += 2) {
        const char *q = conf_queue(c, p == 0 ? "w" : "p");
        ln_job_opts o;
        ln_job_opts_init(&o);
        o.priority = p;
        o.job_id = "x";
        conf_add(c, q, "n", "{}", &o, NULL);
        o.lifo = 1;
        o.job_id = "a";
        conf_add(c, q, "n", "{}", &o, NULL);
        SAYS(c->jobs, 0, ln_jobs_change_priority(c->jobs, q, "x", p, 1));
        o.job_id = "c";
        conf_add(c, q, "n", "{}", &o, NULL);
        SAYS(c->jobs, 0, ln_jobs_change_priority(c->jobs, q, "a", p, 1));
        o.job_id = "d";
        conf_add(c, q, "n", "{}", &o, NULL);
        conf_list_ids(c, q, p == 0 ? LN_JOB_WAITING : LN_JOB_PRIORITIZED, 0, 10, ids, sizeof ids);
        CONF_CHECK_STR(ids, "d a c x ");
        conf_check_counts(c, q);
    }
}

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

/* run_at_ms after a promote: the time the job was first due is kept. */
void case_spec_promote_keeps_run_at(conf_ctx *c) {
    conf_add_id(c, c->queue, "d", 0, 0, 600000);
    ln_job_info a, b;
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, "d", &a), 0);
    CHECK_EQ(a.run_at_ms, a.created_ms + 600000);
    CHECK_EQ(ln_jobs_promote(c->jobs, c->queue, "d"), 0);
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, "d", &b), 0);
    CHECK_EQ(b.state, LN_JOB_WAITING);
    if (b.run_at_ms != a.run_at_ms)
        fprintf(stderr, "run_at %lld -> %lld (created %lld)\n", (long long)a.run_at_ms,
                (long long)b.run_at_ms, (long long)a.created_ms);
    CHECK_EQ(b.run_at_ms, a.run_at_ms);
    ln_job_info_clear(&a);
    ln_job_info_clear(&b);
}
