/* conf_review3.c - cases a review of the admin calls (<lanes/jobs_edit.h>),
 * the unprocessed-children removal and the kept dedup ids added: each
 * failed before its fix on at least one store. */
#include "conf.h"

/* A dedup id held with a TTL by a job that completed and was removed at
 * once (remove_on_complete none) is still held until the TTL passes: an
 * add with it is deduplicated to that id on both stores, so the holder
 * read says that id too (Redis: the de: key still names it), and the
 * release says it was held. */
static void case_review3_dedup_ttl_holder_gone(conf_ctx *c) {
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

const conf_case conf_review3_cases[] = {
    CONF_CASE(review3_dedup_ttl_holder_gone),
    {0},
};
