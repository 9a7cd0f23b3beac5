/* conf_review3.c - cases a review of the admin calls (<lanes/jobs_edit.h>),
 * the unprocessed-children removal and the kept dedup ids added: each
 * failed before its fix on at least one store. */
#include "conf_flowtree.h"

#include <pthread.h>

/* A dedup id held with a TTL by a job that completed and was removed at
 * once (remove_on_complete none) is still held until the TTL passes: an
 * add with it is deduplicated to that id on both stores, so the holder
 * read says that id too (Redis: the de: key still names it), and the
 * release says it was held. */
void case_review3_dedup_ttl_holder_gone(conf_ctx *c) {
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.dedup_id = "ttl";
    o.dedup_ttl_ms = 600000;
    o.remove_on_complete.mode = LN_KEEP_NONE;
    char a[LN_JOB_ID_MAX], b[LN_JOB_ID_MAX], got[LN_JOB_ID_MAX];
    conf_add(c, c->queue, "d", "{}", &o, a);
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    conf_run(c, c->queue, conf_handler_by_name, NULL, &wo);
    CHECK_EQ(conf_state(c, c->queue, a), LN_ENOENT); /* removed as it completed */
    conf_add(c, c->queue, "d", "{}", &o, b);
    CONF_CHECK_STR(b, a); /* still held: deduplicated, nothing added */
    CHECK_EQ(conf_total(c, c->queue), 0);
    SAYS(c->jobs, 0, ln_jobs_dedup_job(c->jobs, c->queue, "ttl", got, sizeof got));
    CONF_CHECK_STR(got, a);
    int removed = -1;
    SAYS(c->jobs, 0, ln_jobs_dedup_remove(c->jobs, c->queue, "ttl", &removed));
    CHECK_EQ(removed, 1);
    SAYS(c->jobs, LN_ENOENT, ln_jobs_dedup_job(c->jobs, c->queue, "ttl", got, sizeof got));
    conf_add(c, c->queue, "d", "{}", &o, b); /* released: a new job */
    CHECK(strcmp(a, b) != 0);
}

/* A flow parent waiting for its children takes a new priority as a
 * delayed job does (BullMQ's changePriority writes the field, and the
 * parent's release reads it): it stays in waiting-children and, once its
 * child completed, runs by it (behind w, of priority 3; by its old
 * priority 0 it would run first). */
void case_review3_priority_of_waiting_parent(conf_ctx *c) {
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
void case_review3_lifo_change_then_lifo_add(conf_ctx *c) {
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
