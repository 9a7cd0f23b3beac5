/* conf_admin.c - administering queues: pause / resume, drain, clean,
 * retry of failed jobs (one and all), remove (refused while active), logs
 * of a missing job, one handle shared by threads, and a handle used after
 * fork(); a retried job goes back by its priority; retry, promote, remove
 * and cancel of a missing job or one in a state they do not take; the
 * counts after every administrative change, also in a paused queue. */
#include "conf.h"

#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

/* Run every job of queue to its end with the by-name handler. */
static void run_all(conf_ctx *c, const char *queue) {
    ln_worker_opts o;
    conf_worker_opts(&o);
    conf_run(c, queue, conf_handler_by_name, NULL, &o);
}

/* Paused: waiting and prioritized jobs report paused, in the order they
 * will run; delayed ones stay delayed; adding still works. */
void case_pause_resume_states(conf_ctx *c) {
    conf_add_id(c, c->queue, "a", 0, 0, 0);
    conf_add_id(c, c->queue, "b", 0, 0, 0);
    conf_add_id(c, c->queue, "c", 0, 1, 0);
    conf_add_id(c, c->queue, "d", 2, 0, 0);
    conf_add_id(c, c->queue, "e", 1, 0, 0);
    conf_add_id(c, c->queue, "f", 0, 0, 600000);
    CHECK_EQ(ln_jobs_pause(c->jobs, c->queue), 0);
    CHECK_EQ(ln_jobs_pause(c->jobs, c->queue), 0); /* twice is once */
    int paused = -1;
    CHECK_EQ(ln_jobs_is_paused(c->jobs, c->queue, &paused), 0);
    CHECK_EQ(paused, 1);
    ln_job_counts k;
    CHECK_EQ(ln_jobs_counts(c->jobs, c->queue, &k), 0);
    CHECK_EQ(k.paused, 5);
    CHECK_EQ(k.waiting + k.prioritized, 0);
    CHECK_EQ(k.delayed, 1);
    char ids[256];
    conf_list_ids(c, c->queue, LN_JOB_PAUSED, 0, 10, ids, sizeof ids);
    CONF_CHECK_STR(ids, "c a b e d ");
    conf_list_ids(c, c->queue, LN_JOB_WAITING, 0, 10, ids, sizeof ids);
    CONF_CHECK_STR(ids, "");
    conf_list_ids(c, c->queue, LN_JOB_PRIORITIZED, 0, 10, ids, sizeof ids);
    CONF_CHECK_STR(ids, "");
    CHECK_EQ(conf_state(c, c->queue, "a"), LN_JOB_PAUSED);
    CHECK_EQ(conf_state(c, c->queue, "e"), LN_JOB_PAUSED);
    CHECK_EQ(conf_state(c, c->queue, "f"), LN_JOB_DELAYED);
    conf_add_id(c, c->queue, "g", 0, 0, 0);
    CHECK_EQ(conf_state(c, c->queue, "g"), LN_JOB_PAUSED);
    conf_check_counts(c, c->queue);
    /* Another queue is not paused. */
    const char *q2 = conf_queue(c, "b");
    CHECK_EQ(ln_jobs_is_paused(c->jobs, q2, &paused), 0);
    CHECK_EQ(paused, 0);

    CHECK_EQ(ln_jobs_resume(c->jobs, c->queue), 0);
    CHECK_EQ(ln_jobs_resume(c->jobs, c->queue), 0);
    CHECK_EQ(ln_jobs_is_paused(c->jobs, c->queue, &paused), 0);
    CHECK_EQ(paused, 0);
    CHECK_EQ(ln_jobs_counts(c->jobs, c->queue, &k), 0);
    CHECK_EQ(k.paused, 0);
    CHECK_EQ(k.waiting, 4);
    CHECK_EQ(k.prioritized, 2);
    conf_list_ids(c, c->queue, LN_JOB_WAITING, 0, 10, ids, sizeof ids);
    CONF_CHECK_STR(ids, "c a b g ");
    CHECK_EQ(conf_state(c, c->queue, "a"), LN_JOB_WAITING);
    CHECK_EQ(conf_state(c, c->queue, "e"), LN_JOB_PRIORITIZED);
    conf_check_counts(c, c->queue);
}

/* A worker takes nothing from a paused queue, and starts when resumed. */
void case_pause_holds_workers(conf_ctx *c) {
    CHECK_EQ(ln_jobs_pause(c->jobs, c->queue), 0);
    char id[LN_JOB_ID_MAX];
    conf_add(c, c->queue, "ok", "1", NULL, id);
    ln_worker_opts o;
    conf_worker_opts(&o);
    o.exit_when_empty = 0;
    atomic_int runs = 0;
    conf_bg *b = conf_bg_start(c->jobs, c->queue, conf_handler_by_name, &runs, &o);
    ln_test_sleep_ms(60);
    ln_worker_stats st;
    ln_worker_get_stats(conf_bg_worker(b), &st);
    CHECK_EQ(st.taken, 0);
    CHECK_EQ(atomic_load(&runs), 0);
    CHECK_EQ(conf_state(c, c->queue, id), LN_JOB_PAUSED);
    CHECK_EQ(ln_jobs_resume(c->jobs, c->queue), 0);
    conf_wait_state(c, c->queue, id, LN_JOB_COMPLETED, 5000);
    ln_worker_stop(conf_bg_worker(b));
    CHECK_EQ(conf_bg_join(b, &st), 0);
    CHECK_EQ(st.completed, 1);
    CHECK_EQ(atomic_load(&runs), 1);
}

/* Drain removes waiting, prioritized and delayed jobs (paused ones too);
 * active and finished jobs stay. */
void case_drain_keeps_active_and_finished(conf_ctx *c) {
    char done_ok[LN_JOB_ID_MAX], done_bad[LN_JOB_ID_MAX], held[LN_JOB_ID_MAX];
    conf_add(c, c->queue, "ok", "{}", NULL, done_ok);
    conf_add(c, c->queue, "bad", "{}", NULL, done_bad);
    run_all(c, c->queue);
    conf_add(c, c->queue, "hold", "{}", NULL, held);
    conf_hold h = {0};
    ln_worker_opts o;
    conf_worker_opts(&o);
    conf_bg *b = conf_bg_start(c->jobs, c->queue, conf_hold_handler, &h, &o);
    conf_hold_wait(&h, 1);
    conf_add_id(c, c->queue, "w1", 0, 0, 0);
    conf_add_id(c, c->queue, "w2", 0, 1, 0);
    conf_add_id(c, c->queue, "p", 3, 0, 0);
    conf_add_id(c, c->queue, "d", 0, 0, 600000);
    /* The worker is busy with one job at a time: it takes none of these. */
    size_t removed = 99;
    CHECK_EQ(ln_jobs_drain(c->jobs, c->queue, &removed), 0);
    CHECK_EQ(removed, 4);
    ln_job_counts k;
    CHECK_EQ(ln_jobs_counts(c->jobs, c->queue, &k), 0);
    CHECK_EQ(k.waiting + k.prioritized + k.delayed + k.paused, 0);
    CHECK_EQ(k.active, 1);
    CHECK_EQ(k.completed, 1);
    CHECK_EQ(k.failed, 1);
    CHECK_EQ(conf_state(c, c->queue, "w1"), LN_ENOENT);
    CHECK_EQ(conf_state(c, c->queue, "d"), LN_ENOENT);
    CHECK_EQ(conf_state(c, c->queue, held), LN_JOB_ACTIVE);
    atomic_store(&h.release, 1);
    CHECK_EQ(conf_bg_join(b, NULL), 0);
    CHECK_EQ(conf_state(c, c->queue, held), LN_JOB_COMPLETED);
    CHECK_EQ(conf_state(c, c->queue, done_ok), LN_JOB_COMPLETED);
    CHECK_EQ(conf_state(c, c->queue, done_bad), LN_JOB_FAILED);

    /* A paused queue drains the same; removed may be NULL; nothing to
     * drain is 0. */
    conf_add_id(c, c->queue, "x", 0, 0, 0);
    CHECK_EQ(ln_jobs_pause(c->jobs, c->queue), 0);
    CHECK_EQ(ln_jobs_drain(c->jobs, c->queue, NULL), 0);
    CHECK_EQ(conf_state(c, c->queue, "x"), LN_ENOENT);
    CHECK_EQ(ln_jobs_drain(c->jobs, c->queue, &removed), 0);
    CHECK_EQ(removed, 0);
    conf_check_counts(c, c->queue);
}

/* Clean removes finished jobs by age, sparing the newest 'keep'. */
void case_clean_by_age_and_keep(conf_ctx *c) {
    for (int i = 0; i < 4; i++) conf_add(c, c->queue, "ok", "{}", NULL, NULL);
    for (int i = 0; i < 3; i++) conf_add(c, c->queue, "bad", "{}", NULL, NULL);
    run_all(c, c->queue);
    size_t removed = 99;
    /* Too young for an hour's age limit. */
    CHECK_EQ(ln_jobs_clean(c->jobs, c->queue, LN_JOB_COMPLETED, 3600000, 0, &removed), 0);
    CHECK_EQ(removed, 0);
    /* Keep the newest one of any age. */
    ln_job_info *infos;
    size_t n;
    CHECK_EQ(ln_jobs_list(c->jobs, c->queue, LN_JOB_COMPLETED, 0, 10, &infos, &n), 0);
    CHECK_EQ(n, 4);
    char newest[LN_JOB_ID_MAX];
    snprintf(newest, sizeof newest, "%s", infos[0].id);
    int64_t newest_ms = infos[0].finished_ms;
    ln_job_info_free_array(infos, n);
    CHECK_EQ(ln_jobs_clean(c->jobs, c->queue, LN_JOB_COMPLETED, -1, 1, &removed), 0);
    CHECK_EQ(removed, 3);
    CHECK_EQ(ln_jobs_list(c->jobs, c->queue, LN_JOB_COMPLETED, 0, 10, &infos, &n), 0);
    CHECK_EQ(n, 1);
    CHECK_EQ(infos[0].finished_ms, newest_ms);
    (void)newest; /* jobs that finished in the same ms may tie */
    ln_job_info_free_array(infos, n);
    /* Failed jobs are listed newest finished first too. */
    CHECK_EQ(ln_jobs_list(c->jobs, c->queue, LN_JOB_FAILED, 0, 10, &infos, &n), 0);
    CHECK_EQ(n, 3);
    for (size_t i = 1; i < n; i++) CHECK(infos[i - 1].finished_ms >= infos[i].finished_ms);
    CONF_CHECK_STR(infos[0].failed_reason, "nope");
    ln_job_info_free_array(infos, n);
    /* Failed jobs apart: a keep larger than the set removes none. */
    CHECK_EQ(ln_jobs_clean(c->jobs, c->queue, LN_JOB_FAILED, -1, 10, &removed), 0);
    CHECK_EQ(removed, 0);
    CHECK_EQ(ln_jobs_clean(c->jobs, c->queue, LN_JOB_FAILED, -1, 0, NULL), 0);
    ln_job_counts k;
    CHECK_EQ(ln_jobs_counts(c->jobs, c->queue, &k), 0);
    CHECK_EQ(k.failed, 0);
    CHECK_EQ(k.completed, 1);

    /* By age: a job finished well before the limit goes, a fresh one stays. */
    char old[LN_JOB_ID_MAX], young[LN_JOB_ID_MAX];
    const char *q2 = conf_queue(c, "age");
    conf_add(c, q2, "ok", "{}", NULL, old);
    run_all(c, q2);
    ln_test_sleep_ms(60);
    conf_add(c, q2, "ok", "{}", NULL, young);
    run_all(c, q2);
    CHECK_EQ(ln_jobs_clean(c->jobs, q2, LN_JOB_COMPLETED, 40, 0, &removed), 0);
    CHECK_EQ(removed, 1);
    CHECK_EQ(conf_state(c, q2, old), LN_ENOENT);
    CHECK_EQ(conf_state(c, q2, young), LN_JOB_COMPLETED);
    char **lines; /* its logs went with it */
    size_t nlines;
    CHECK_EQ(ln_jobs_logs(c->jobs, q2, old, &lines, &nlines), LN_ENOENT);
    conf_check_counts(c, c->queue);
    conf_check_counts(c, q2);
}

/* A failed job goes back to waiting with a fresh attempt budget; other
 * states are refused. */
void case_retry_failed_one_and_all(conf_ctx *c) {
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.attempts = 2;
    char f1[LN_JOB_ID_MAX], f2[LN_JOB_ID_MAX], f3[LN_JOB_ID_MAX];
    char ok[LN_JOB_ID_MAX], waiting[LN_JOB_ID_MAX];
    conf_add(c, c->queue, "bad", "{}", &o, f1);
    conf_add(c, c->queue, "bad", "{}", NULL, f2);
    conf_add(c, c->queue, "bad", "{}", NULL, f3);
    conf_add(c, c->queue, "ok", "{}", NULL, ok);
    run_all(c, c->queue);
    conf_add(c, c->queue, "ok", "{}", NULL, waiting);
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, f1, &info), 0);
    CHECK_EQ(info.state, LN_JOB_FAILED);
    CHECK_EQ(info.attempts_made, 2);
    ln_job_info_clear(&info);

    CHECK_EQ(ln_jobs_retry(c->jobs, c->queue, f1), 0);
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, f1, &info), 0);
    CHECK_EQ(info.state, LN_JOB_WAITING);
    CHECK_EQ(info.attempts_made, 0);
    CHECK_EQ(info.attempts, 2);
    CHECK_EQ(info.finished_ms, 0);
    ln_job_info_clear(&info);
    CHECK_EQ(ln_jobs_retry(c->jobs, c->queue, f1), LN_EINVAL); /* waiting */
    CHECK_EQ(ln_jobs_retry(c->jobs, c->queue, ok), LN_EINVAL); /* completed */
    CHECK_EQ(ln_jobs_retry(c->jobs, c->queue, waiting), LN_EINVAL);
    CHECK_EQ(ln_jobs_retry(c->jobs, c->queue, "no-such-job"), LN_ENOENT);

    size_t count = 99;
    CHECK_EQ(ln_jobs_retry_all(c->jobs, c->queue, &count), 0);
    CHECK_EQ(count, 2);
    CHECK_EQ(conf_state(c, c->queue, f2), LN_JOB_WAITING);
    CHECK_EQ(conf_state(c, c->queue, f3), LN_JOB_WAITING);
    CHECK_EQ(ln_jobs_retry_all(c->jobs, c->queue, &count), 0);
    CHECK_EQ(count, 0);
    CHECK_EQ(ln_jobs_retry_all(c->jobs, c->queue, NULL), 0);
    ln_job_counts k;
    CHECK_EQ(ln_jobs_counts(c->jobs, c->queue, &k), 0);
    CHECK_EQ(k.failed, 0);
    CHECK_EQ(k.waiting, 4);
    conf_check_counts(c, c->queue);

    /* The fresh budget is spent again: f1 runs twice more. */
    atomic_int runs = 0;
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    conf_run(c, c->queue, conf_handler_by_name, &runs, &wo);
    CHECK_EQ(atomic_load(&runs), 2 + 1 + 1 + 1);
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, f1, &info), 0);
    CHECK_EQ(info.state, LN_JOB_FAILED);
    CHECK_EQ(info.attempts_made, 2);
    ln_job_info_clear(&info);
}

/* Remove takes a job and its logs away in any state but active. */
void case_remove_any_state_but_active(conf_ctx *c) {
    conf_add_id(c, c->queue, "w", 0, 0, 0);
    conf_add_id(c, c->queue, "p", 4, 0, 0);
    conf_add_id(c, c->queue, "d", 0, 0, 600000);
    CHECK_EQ(ln_jobs_remove(c->jobs, c->queue, "w"), 0);
    CHECK_EQ(ln_jobs_remove(c->jobs, c->queue, "w"), LN_ENOENT);
    CHECK_EQ(ln_jobs_remove(c->jobs, c->queue, "p"), 0);
    CHECK_EQ(ln_jobs_remove(c->jobs, c->queue, "d"), 0);
    CHECK_EQ(conf_state(c, c->queue, "w"), LN_ENOENT);
    CHECK_EQ(conf_total(c, c->queue), 0);
    CHECK_EQ(ln_jobs_remove(c->jobs, c->queue, "never-added"), LN_ENOENT);

    /* An active job is refused; once finished it can go. */
    char held[LN_JOB_ID_MAX];
    conf_add(c, c->queue, "hold", "{}", NULL, held);
    conf_hold h = {0};
    ln_worker_opts o;
    conf_worker_opts(&o);
    conf_bg *b = conf_bg_start(c->jobs, c->queue, conf_hold_handler, &h, &o);
    conf_hold_wait(&h, 1);
    CHECK_EQ(ln_jobs_remove(c->jobs, c->queue, held), LN_EBUSY);
    CHECK_EQ(conf_state(c, c->queue, held), LN_JOB_ACTIVE);
    atomic_store(&h.release, 1);
    CHECK_EQ(conf_bg_join(b, NULL), 0);
    CHECK_EQ(conf_state(c, c->queue, held), LN_JOB_COMPLETED);
    CHECK_EQ(ln_jobs_remove(c->jobs, c->queue, held), 0);
    char **lines;
    size_t n;
    CHECK_EQ(ln_jobs_logs(c->jobs, c->queue, held, &lines, &n), LN_ENOENT);
    conf_check_counts(c, c->queue);
}

/* Logs: a job without any has none; a missing job is LN_ENOENT. */
void case_logs_empty_and_missing(conf_ctx *c) {
    char id[LN_JOB_ID_MAX];
    conf_add(c, c->queue, "n", "{}", NULL, id);
    char **lines = NULL;
    size_t n = 99;
    CHECK_EQ(ln_jobs_logs(c->jobs, c->queue, id, &lines, &n), 0);
    CHECK_EQ(n, 0);
    ln_jobs_free_lines(lines, n);
    CHECK_EQ(ln_jobs_logs(c->jobs, c->queue, "no-such-job", &lines, &n), LN_ENOENT);
    ln_jobs_free_lines(NULL, 0);
}

typedef struct adder {
    ln_jobs *jobs;
    const char *queue;
    char ids[100][LN_JOB_ID_MAX];
    int failed;
} adder;

static void *add_100(void *arg) {
    adder *a = arg;
    for (int i = 0; i < 100; i++) {
        if (ln_jobs_add(a->jobs, a->queue, "t", "{}", NULL, a->ids[i], LN_JOB_ID_MAX) != 0)
            a->failed++;
        ln_job_counts k;
        if (i % 25 == 0 && ln_jobs_counts(a->jobs, a->queue, &k) != 0) a->failed++;
    }
    return NULL;
}

static int cmp_id(const void *a, const void *b) {
    return strcmp(a, b);
}

/* One handle shared by threads: every add lands once, ids distinct. */
void case_one_handle_many_threads(conf_ctx *c) {
    static adder a[4];
    pthread_t t[4];
    for (int i = 0; i < 4; i++) {
        a[i].jobs = c->jobs;
        a[i].queue = c->queue;
        CHECK_EQ(pthread_create(&t[i], NULL, add_100, &a[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        CHECK_EQ(pthread_join(t[i], NULL), 0);
        CHECK_EQ(a[i].failed, 0);
    }
    CHECK_EQ(conf_total(c, c->queue), 400);
    static char ids[400][LN_JOB_ID_MAX];
    for (int i = 0; i < 400; i++) memcpy(ids[i], a[i / 100].ids[i % 100], LN_JOB_ID_MAX);
    qsort(ids, 400, LN_JOB_ID_MAX, cmp_id);
    for (int i = 1; i < 400; i++) CHECK(strcmp(ids[i], ids[i - 1]) != 0);
}

/* A handle used in a child after fork() refuses with LN_EFORK; the child
 * opens its own; the parent's keeps working. */
void case_handle_refused_after_fork(conf_ctx *c) {
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        int ok = ln_jobs_add(c->jobs, c->queue, "n", "{}", NULL, NULL, 0) == LN_EFORK;
        ok = ok && strstr(ln_jobs_errmsg(c->jobs), "fork") != NULL;
        ln_job_counts k;
        ok = ok && ln_jobs_counts(c->jobs, c->queue, &k) == LN_EFORK;
        ln_jobs_close(c->jobs); /* frees memory only */
        ln_jobs *mine = NULL;
        ok = ok && ln_jobs_open(&mine, c->url) == 0;
        ok = ok && ln_jobs_add(mine, c->queue, "child", "{}", NULL, NULL, 0) == 0;
        ln_jobs_close(mine);
        _exit(ok ? 0 : 1);
    }
    int status;
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    conf_add(c, c->queue, "parent", "{}", NULL, NULL);
    CHECK_EQ(conf_total(c, c->queue), 2);
}

/* A retried job goes back by its priority: prioritized with one, waiting
 * without (a job failed while delayed too); it runs in priority order. */
void case_spec_retry_keeps_priority(conf_ctx *c) {
    conf_add_id(c, c->queue, "p7", 7, 0, 0);
    conf_add_id(c, c->queue, "p2", 2, 0, 0);
    conf_add_id(c, c->queue, "d0", 0, 0, 600000);
    const char *ids[] = {"p7", "p2", "d0"};
    for (int i = 0; i < 3; i++) CHECK_EQ(ln_jobs_cancel(c->jobs, c->queue, ids[i]), 0);
    size_t n = 0;
    CHECK_EQ(ln_jobs_retry_all(c->jobs, c->queue, &n), 0);
    CHECK_EQ(n, 3);
    CHECK_EQ(conf_state(c, c->queue, "p7"), LN_JOB_PRIORITIZED);
    CHECK_EQ(conf_state(c, c->queue, "p2"), LN_JOB_PRIORITIZED);
    CHECK_EQ(conf_state(c, c->queue, "d0"), LN_JOB_WAITING);
    char got[64];
    conf_list_ids(c, c->queue, LN_JOB_PRIORITIZED, 0, 10, got, sizeof got);
    CONF_CHECK_STR(got, "p2 p7 ");
    conf_check_counts(c, c->queue);
}

/* retry, promote, remove and cancel of a missing job, and of a job in a
 * state they do not take; nothing changes. */
void case_spec_wrong_state_and_missing(conf_ctx *c) {
    char id[LN_JOB_ID_MAX];
    conf_add(c, c->queue, "n", "{}", NULL, id);
    SAYS(c->jobs, LN_EINVAL, ln_jobs_retry(c->jobs, c->queue, id));
    SAYS(c->jobs, LN_EINVAL, ln_jobs_promote(c->jobs, c->queue, id));
    SAYS(c->jobs, LN_ENOENT, ln_jobs_retry(c->jobs, c->queue, "nope-1"));
    SAYS(c->jobs, LN_ENOENT, ln_jobs_promote(c->jobs, c->queue, "nope-1"));
    SAYS(c->jobs, LN_ENOENT, ln_jobs_remove(c->jobs, c->queue, "nope-1"));
    SAYS(c->jobs, LN_ENOENT, ln_jobs_cancel(c->jobs, c->queue, "nope-1"));
    /* The same id in another queue is another job. */
    const char *q2 = conf_queue(c, "other");
    SAYS(c->jobs, LN_ENOENT, ln_jobs_remove(c->jobs, q2, id));
    SAYS(c->jobs, LN_ENOENT, ln_jobs_cancel(c->jobs, q2, id));
    ln_job_info info;
    SAYS(c->jobs, LN_ENOENT, ln_jobs_get(c->jobs, q2, id, &info));
    char **lines;
    size_t n;
    SAYS(c->jobs, LN_ENOENT, ln_jobs_logs(c->jobs, q2, id, &lines, &n));
    CHECK_EQ(conf_state(c, c->queue, id), LN_JOB_WAITING);
    size_t count = 99;
    CHECK_EQ(ln_jobs_retry_all(c->jobs, c->queue, &count), 0);
    CHECK_EQ(count, 0);
    CHECK_EQ(ln_jobs_retry_all(c->jobs, c->queue, NULL), 0);
    size_t removed = 99;
    CHECK_EQ(ln_jobs_clean(c->jobs, c->queue, LN_JOB_COMPLETED, -1, 0, &removed), 0);
    CHECK_EQ(removed, 0);
    /* A queue nobody used is not paused; resuming it is no error. */
    int paused = -1;
    CHECK_EQ(ln_jobs_is_paused(c->jobs, q2, &paused), 0);
    CHECK_EQ(paused, 0);
    CHECK_EQ(conf_total(c, q2), 0);
    CHECK_EQ(conf_total(c, c->queue), 1);
}

/* A removed job is gone with its logs, and the counts follow every
 * administrative state change. */
void case_spec_counts_follow_admin(conf_ctx *c) {
    conf_add_id(c, c->queue, "w", 0, 0, 0);
    conf_add_id(c, c->queue, "p", 5, 0, 0);
    conf_add_id(c, c->queue, "d", 0, 0, 600000);
    conf_add_id(c, c->queue, "d2", 0, 0, 600000);
    conf_check_counts(c, c->queue);
    CHECK_EQ(ln_jobs_remove(c->jobs, c->queue, "p"), 0);
    CHECK_EQ(conf_state(c, c->queue, "p"), LN_ENOENT);
    char **lines;
    size_t n;
    CHECK_EQ(ln_jobs_logs(c->jobs, c->queue, "p", &lines, &n), LN_ENOENT);
    conf_check_counts(c, c->queue);
    CHECK_EQ(ln_jobs_remove(c->jobs, c->queue, "d"), 0);
    conf_check_counts(c, c->queue);
    CHECK_EQ(ln_jobs_cancel(c->jobs, c->queue, "d2"), 0);
    CHECK_EQ(conf_state(c, c->queue, "d2"), LN_JOB_FAILED);
    conf_check_counts(c, c->queue);
    ln_job_counts k;
    CHECK_EQ(ln_jobs_counts(c->jobs, c->queue, &k), 0);
    CHECK_EQ(k.waiting, 1);
    CHECK_EQ(k.failed, 1);
    CHECK_EQ(k.delayed + k.prioritized, 0);
    CHECK_EQ(ln_jobs_retry(c->jobs, c->queue, "d2"), 0);
    CHECK_EQ(ln_jobs_counts(c->jobs, c->queue, &k), 0);
    CHECK_EQ(k.waiting, 2);
    CHECK_EQ(k.failed, 0);
    conf_check_counts(c, c->queue);
    /* Paged past the end: nothing, NULL. */
    ln_job_info *infos = (ln_job_info *)&k;
    CHECK_EQ(ln_jobs_list(c->jobs, c->queue, LN_JOB_WAITING, 2, 10, &infos, &n), 0);
    CHECK_EQ(n, 0);
    CHECK(infos == NULL);
    CHECK_EQ(ln_jobs_list(c->jobs, c->queue, LN_JOB_WAITING, 1, 10000, &infos, &n), 0);
    CHECK_EQ(n, 1);
    ln_job_info_free_array(infos, n);
}

/* A paused queue: a promoted, retried or canceled job goes where the
 * header says, and the counts follow. */
void case_spec_paused_queue_moves(conf_ctx *c) {
    conf_add_id(c, c->queue, "d", 0, 0, 600000);
    conf_add_id(c, c->queue, "dp", 4, 0, 600000);
    conf_add_id(c, c->queue, "w", 0, 0, 0);
    CHECK_EQ(ln_jobs_pause(c->jobs, c->queue), 0);
    CHECK_EQ(ln_jobs_promote(c->jobs, c->queue, "d"), 0);
    CHECK_EQ(conf_state(c, c->queue, "d"), LN_JOB_PAUSED);
    CHECK_EQ(ln_jobs_promote(c->jobs, c->queue, "dp"), 0);
    CHECK_EQ(conf_state(c, c->queue, "dp"), LN_JOB_PAUSED);
    conf_check_counts(c, c->queue);
    CHECK_EQ(ln_jobs_cancel(c->jobs, c->queue, "w"), 0);
    CHECK_EQ(conf_state(c, c->queue, "w"), LN_JOB_FAILED);
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, "w", &info), 0);
    CHECK_EQ(info.attempts_made, 0);
    CONF_CHECK_STR(info.failed_reason, LN_JOB_CANCELED_REASON);
    ln_job_info_clear(&info);
    conf_check_counts(c, c->queue);
    CHECK_EQ(ln_jobs_retry(c->jobs, c->queue, "w"), 0);
    CHECK_EQ(conf_state(c, c->queue, "w"), LN_JOB_PAUSED);
    conf_check_counts(c, c->queue);
    char ids[64];
    conf_list_ids(c, c->queue, LN_JOB_PAUSED, 0, 10, ids, sizeof ids);
    CONF_CHECK_STR(ids, "d w dp ");
    ln_job_counts k;
    CHECK_EQ(ln_jobs_counts(c->jobs, c->queue, &k), 0);
    CHECK_EQ(k.paused, 3);
    CHECK_EQ(k.waiting + k.prioritized + k.delayed + k.failed, 0);
    CHECK_EQ(ln_jobs_resume(c->jobs, c->queue), 0);
    CHECK_EQ(conf_state(c, c->queue, "dp"), LN_JOB_PRIORITIZED);
    conf_list_ids(c, c->queue, LN_JOB_WAITING, 0, 10, ids, sizeof ids);
    CONF_CHECK_STR(ids, "d w ");
    conf_check_counts(c, c->queue);
}
