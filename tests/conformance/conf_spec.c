/* conf_spec.c - the behaviours of jobs.h (and the headers it includes)
 * that no concept file exercised, case by case: what the administering
 * calls return for a job in the wrong state or a missing one, the events
 * and counts a state change leaves, the argument checks of the calls made
 * from a handler and of events, waits, children and schedulers. */
#include "conf.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>

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

/* The events of the administering calls, with BullMQ's fields. */
void case_spec_admin_events(conf_ctx *c) {
    ln_jobs *jobs = conf_open_all_events(c);
    ln_jobs_events *ev;
    CHECK_EQ(ln_jobs_events_open(jobs, c->queue, "$", &ev), 0);
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.job_id = "e1";
    CHECK_EQ(ln_jobs_add(jobs, c->queue, "n", "{}", &o, NULL, 0), 0);
    CHECK_EQ(ln_jobs_add(jobs, c->queue, "n", "{}", &o, NULL, 0), 0); /* duplicated */
    CHECK_EQ(ln_jobs_pause(jobs, c->queue), 0);
    CHECK_EQ(ln_jobs_resume(jobs, c->queue), 0);
    CHECK_EQ(ln_jobs_remove(jobs, c->queue, "e1"), 0);
    ln_job_event e;
    conf_next_named(ev, "duplicated", &e);
    CONF_CHECK_STR(e.job_id, "e1");
    ln_job_event_clear(&e);
    conf_next_named(ev, "paused", &e);
    ln_job_event_clear(&e);
    conf_next_named(ev, "resumed", &e);
    ln_job_event_clear(&e);
    conf_next_named(ev, "removed", &e);
    CONF_CHECK_STR(e.job_id, "e1");
    CONF_CHECK_HAS(e.fields, "\"prev\":\"waiting\"");
    ln_job_event_clear(&e);
    ln_jobs_events_close(ev);
    ln_jobs_close(jobs);
}

/* The follower's and the wait's own argument checks and time limits. */
void case_spec_events_and_wait_args(conf_ctx *c) {
    ln_jobs_events *ev = NULL;
    SAYS(c->jobs, LN_EINVAL, ln_jobs_events_open(c->jobs, c->queue, "$", NULL));
    SAYS(c->jobs, LN_EINVAL, ln_jobs_events_open(c->jobs, "", "$", &ev));
    SAYS(c->jobs, LN_EINVAL, ln_jobs_events_open(c->jobs, NULL, "$", &ev));
    CHECK_EQ(ln_jobs_events_open(NULL, c->queue, "$", &ev), LN_EINVAL);
    CHECK(ev == NULL);
    CHECK_EQ(ln_jobs_events_open(c->jobs, c->queue, NULL, &ev), 0);
    ln_job_event e;
    CHECK_EQ(ln_jobs_events_next(ev, 0, &e), LN_ETIMEDOUT);
    CHECK_EQ(ln_jobs_events_next(ev, 0, NULL), LN_EINVAL);
    CHECK_EQ(ln_jobs_events_next(NULL, 0, &e), LN_EINVAL);
    ln_jobs_events_close(ev);
    ln_jobs_events_close(NULL);
    ln_job_event_clear(NULL);
    char id[LN_JOB_ID_MAX];
    conf_add(c, c->queue, "n", "{}", NULL, id);
    ln_job_info info;
    int64_t t0 = conf_now_ms();
    SAYS(c->jobs, LN_ETIMEDOUT, ln_jobs_wait(c->jobs, c->queue, id, 0, &info));
    SAYS(c->jobs, LN_ETIMEDOUT, ln_jobs_wait(c->jobs, c->queue, id, 50, &info));
    CHECK(conf_now_ms() - t0 < 2000);
    SAYS(c->jobs, LN_ENOENT, ln_jobs_wait(c->jobs, c->queue, "nope-2", 0, &info));
    SAYS(c->jobs, LN_EINVAL, ln_jobs_wait(c->jobs, c->queue, id, 0, NULL));
    SAYS(c->jobs, LN_EINVAL, ln_jobs_wait(c->jobs, c->queue, "", 0, &info));
    SAYS(c->jobs, LN_EINVAL, ln_jobs_wait(c->jobs, c->queue, NULL, 0, &info));
    SAYS(c->jobs, LN_EINVAL, ln_jobs_wait(c->jobs, "", id, 0, &info));
    CHECK_EQ(ln_jobs_wait(NULL, c->queue, id, 0, &info), LN_EINVAL);
}

/* ln_jobs_children and the scheduler reads: missing, NULL, bounds. */
void case_spec_children_and_sched_args(conf_ctx *c) {
    char id[LN_JOB_ID_MAX];
    conf_add(c, c->queue, "n", "{}", NULL, id);
    ln_job_children ch;
    SAYS(c->jobs, LN_ENOENT, ln_jobs_children(c->jobs, c->queue, "nope-3", &ch));
    SAYS(c->jobs, LN_EINVAL, ln_jobs_children(c->jobs, c->queue, id, NULL));
    SAYS(c->jobs, LN_EINVAL, ln_jobs_children(c->jobs, c->queue, "", &ch));
    SAYS(c->jobs, LN_EINVAL, ln_jobs_children(c->jobs, "", id, &ch));
    CHECK_EQ(ln_jobs_children(c->jobs, c->queue, id, &ch), 0);
    CHECK(ch.parent_key == NULL);
    CHECK_EQ(ch.n, 0);
    ln_job_children_clear(&ch);
    ln_job_children_clear(NULL);
    ln_job_scheduler s, *ss = NULL;
    size_t n = 0;
    SAYS(c->jobs, LN_ENOENT, ln_jobs_scheduler_get(c->jobs, c->queue, "nope", &s));
    SAYS(c->jobs, LN_ENOENT, ln_jobs_unschedule(c->jobs, c->queue, "nope"));
    SAYS(c->jobs, LN_EINVAL, ln_jobs_scheduler_get(c->jobs, c->queue, "nope", NULL));
    SAYS(c->jobs, LN_EINVAL, ln_jobs_scheduler_list(c->jobs, c->queue, 0, 0, &ss, &n));
    SAYS(c->jobs, LN_EINVAL, ln_jobs_scheduler_list(c->jobs, c->queue, 0, 1001, &ss, &n));
    SAYS(c->jobs, LN_EINVAL, ln_jobs_scheduler_list(c->jobs, c->queue, 0, 1, NULL, &n));
    SAYS(c->jobs, LN_EINVAL, ln_jobs_scheduler_list(c->jobs, c->queue, 0, 1, &ss, NULL));
    CHECK_EQ(ln_jobs_scheduler_list(c->jobs, c->queue, 0, 1000, &ss, &n), 0);
    CHECK_EQ(n, 0);
    CHECK(ss == NULL);
    ln_job_scheduler_clear(NULL);
    ln_job_scheduler_free_array(NULL, 0);
    int64_t ttl = -1;
    SAYS(c->jobs, LN_EINVAL, ln_jobs_rate_limit_ttl(c->jobs, c->queue, 0, NULL));
    SAYS(c->jobs, LN_EINVAL, ln_jobs_rate_limit_ttl(c->jobs, c->queue, -1, &ttl));
    CHECK_EQ(ln_jobs_rate_limit_ttl(c->jobs, c->queue, 0, &ttl), 0);
    CHECK_EQ(ttl, 0);
}

/* The argument checks of the calls a handler makes. */
typedef struct spec_rcs {
    int delay_neg, rl_neg, rl_big, log_big, log_null, result_ok;
} spec_rcs;

static int spec_handler_calls(ln_job *job, void *ctx) {
    spec_rcs *r = ctx;
    r->delay_neg = ln_job_delay_until(job, -1);
    r->rl_neg = ln_job_rate_limited(job, -1);
    r->rl_big = ln_job_rate_limited(job, (int64_t)1 << 31);
    char *big = malloc(64 * 1024 + 2);
    CHECK(big != NULL);
    memset(big, 'l', 64 * 1024 + 1);
    big[64 * 1024 + 1] = '\0';
    r->log_big = ln_job_log(job, big);
    big[64 * 1024] = '\0'; /* 64 KiB: the longest line */
    r->result_ok = ln_job_log(job, big);
    free(big);
    r->log_null = ln_job_log(job, NULL);
    return ln_job_fail(job, NULL);
}

void case_spec_handler_arg_checks(conf_ctx *c) {
    char id[LN_JOB_ID_MAX];
    conf_add(c, c->queue, "n", "{}", NULL, id);
    spec_rcs r;
    memset(&r, 0x55, sizeof r);
    ln_worker_opts o;
    conf_worker_opts(&o);
    conf_run(c, c->queue, spec_handler_calls, &r, &o);
    CHECK_EQ(r.delay_neg, LN_EINVAL);
    CHECK_EQ(r.rl_neg, LN_EINVAL);
    CHECK_EQ(r.rl_big, LN_EINVAL);
    CHECK_EQ(r.log_big, LN_EINVAL);
    CHECK_EQ(r.result_ok, 0);
    CHECK_EQ(r.log_null, LN_EINVAL);
    CHECK_EQ(ln_job_delay_until(NULL, 5), LN_EINVAL);
    CHECK_EQ(ln_job_rate_limited(NULL, 5), LN_EINVAL);
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, id, &info), 0);
    CHECK_EQ(info.state, LN_JOB_FAILED);
    CONF_CHECK_STR(info.failed_reason, "failed");
    CHECK_EQ(info.attempts_made, 1);
    ln_job_info_clear(&info);
    char **lines;
    size_t n;
    CHECK_EQ(ln_jobs_logs(c->jobs, c->queue, id, &lines, &n), 0);
    CHECK_EQ(n, 1);
    CHECK_EQ(strlen(lines[0]), 64 * 1024);
    ln_jobs_free_lines(lines, n);
}

/* Adds: data NULL is "{}", an empty batch, a bad job of a batch named by
 * its index. */
void case_spec_add_defaults_and_bulk_index(conf_ctx *c) {
    char id[LN_JOB_ID_MAX];
    CHECK_EQ(ln_jobs_add(c->jobs, c->queue, "n", NULL, NULL, id, sizeof id), 0);
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, id, &info), 0);
    CONF_CHECK_STR(info.data, "{}");
    CONF_CHECK_STR(info.name, "n");
    CHECK_EQ(info.attempts, 1);
    CHECK_EQ(info.priority, 0);
    ln_job_info_clear(&info);
    CHECK_EQ(ln_jobs_add(c->jobs, c->queue, "n", "{}", NULL, NULL, 0), 0); /* id NULL */
    CHECK_EQ(ln_jobs_add_bulk(c->jobs, c->queue, NULL, 0, NULL, 0), 0);
    ln_job_spec specs[3] = {{"a", NULL, NULL}, {"b", "[1]", NULL}, {"c", "{oops", NULL}};
    SAYS(c->jobs, LN_EINVAL, ln_jobs_add_bulk(c->jobs, c->queue, specs, 3, NULL, 0));
    CONF_CHECK_HAS(ln_jobs_errmsg(c->jobs), "2");
    specs[2].data_json = "3";
    specs[1].name = "";
    SAYS(c->jobs, LN_EINVAL, ln_jobs_add_bulk(c->jobs, c->queue, specs, 3, NULL, 0));
    CONF_CHECK_HAS(ln_jobs_errmsg(c->jobs), "1");
    CHECK_EQ(conf_total(c, c->queue), 2);
    specs[1].name = "b";
    char ids[3][LN_JOB_ID_MAX];
    CHECK_EQ(ln_jobs_add_bulk(c->jobs, c->queue, specs, 3, ids[0], LN_JOB_ID_MAX), 0);
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, ids[0], &info), 0);
    CONF_CHECK_STR(info.data, "{}");
    ln_job_info_clear(&info);
    CHECK_EQ(conf_total(c, c->queue), 5);
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

/* A queue that held a job is listed after its jobs are gone. */
void case_spec_queues_after_removal(conf_ctx *c) {
    char id[LN_JOB_ID_MAX];
    conf_add(c, c->queue, "n", "{}", NULL, id);
    CHECK_EQ(ln_jobs_remove(c->jobs, c->queue, id), 0);
    char **names = NULL;
    size_t n = 0;
    CHECK_EQ(ln_jobs_queues(c->jobs, &names, &n), 0);
    int found = 0;
    for (size_t i = 0; i < n; i++) found |= strcmp(names[i], c->queue) == 0;
    ln_jobs_free_lines(names, n);
    CHECK(found);
    CHECK_EQ(ln_jobs_queues(c->jobs, &names, NULL), LN_EINVAL);
    CHECK_EQ(ln_jobs_queues(NULL, &names, &n), LN_EINVAL);
}

/* "cleaned" {count} and "progress" {jobId, data}, written by a handle of
 * the default events= too. */
static int spec_progress_handler(ln_job *job, void *ctx) {
    (void)ctx;
    CHECK_EQ(ln_job_progress(job, "{\"p\":50}"), 0);
    return 0;
}

void case_spec_cleaned_and_progress_events(conf_ctx *c) {
    ln_jobs_events *ev;
    CHECK_EQ(ln_jobs_events_open(c->jobs, c->queue, "$", &ev), 0);
    char id[LN_JOB_ID_MAX];
    conf_add(c, c->queue, "n", "{}", NULL, id);
    conf_add(c, c->queue, "n", "{}", NULL, NULL);
    ln_worker_opts o;
    conf_worker_opts(&o);
    conf_run(c, c->queue, spec_progress_handler, NULL, &o);
    size_t removed = 0;
    CHECK_EQ(ln_jobs_clean(c->jobs, c->queue, LN_JOB_COMPLETED, -1, 1, &removed), 0);
    CHECK_EQ(removed, 1);
    ln_job_event e;
    conf_next_named(ev, "progress", &e);
    CONF_CHECK_STR(e.job_id, id);
    CONF_CHECK_HAS(e.fields, "\"data\":\"{\\\"p\\\":50}\"");
    ln_job_event_clear(&e);
    conf_next_named(ev, "cleaned", &e);
    CONF_CHECK_HAS(e.fields, "\"count\":\"1\"");
    ln_job_event_clear(&e);
    ln_jobs_events_close(ev);
}

/* ln_jobs_schedule's LN_ERANGE stores nothing, as an add's. */
void case_spec_schedule_erange_stores_nothing(conf_ctx *c) {
    ln_job_schedule s;
    ln_job_schedule_init(&s);
    s.every_ms = 60000;
    char small[4];
    SAYS(c->jobs, LN_ERANGE,
         ln_jobs_schedule(c->jobs, c->queue, "s1", &s, "n", NULL, NULL, small, sizeof small));
    ln_job_scheduler got;
    int rc = ln_jobs_scheduler_get(c->jobs, c->queue, "s1", &got);
    if (rc == 0) ln_job_scheduler_clear(&got);
    CHECK_EQ(rc, LN_ENOENT);
    CHECK_EQ(conf_total(c, c->queue), 0);
}

/* Metrics: a range with start after end is no point. */
void case_spec_metrics_empty_range(conf_ctx *c) {
    ln_job_metrics m;
    CHECK_EQ(ln_jobs_metrics(c->jobs, c->queue, LN_JOB_COMPLETED, 5, 2, &m), 0);
    CHECK_EQ(m.ndata, 0);
    CHECK(m.data == NULL);
    CHECK_EQ(m.count, 0);
    ln_job_metrics_clear(&m);
    ln_job_metrics_clear(NULL);
}

/* LN_KEEP_COUNT 0 keeps none: the job goes as it finishes. */
void case_spec_keep_count_zero(conf_ctx *c) {
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.remove_on_complete = (ln_job_keep){LN_KEEP_COUNT, 0};
    o.remove_on_fail = (ln_job_keep){LN_KEEP_COUNT, 0};
    char id1[LN_JOB_ID_MAX], id2[LN_JOB_ID_MAX];
    conf_add(c, c->queue, "ok", "1", &o, id1);
    conf_add(c, c->queue, "bad", "1", &o, id2);
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    conf_run(c, c->queue, conf_handler_by_name, NULL, &wo);
    CHECK_EQ(conf_state(c, c->queue, id1), LN_ENOENT);
    CHECK_EQ(conf_state(c, c->queue, id2), LN_ENOENT);
    CHECK_EQ(conf_total(c, c->queue), 0);
}
