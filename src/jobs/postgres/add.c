/* add.c - adding jobs: the queue's id sequence, the job row in BullMQ's
 * columns and options, the `added` and `waiting` / `delayed` events, one
 * `bullmq_jobs` notification per call; all in one transaction.
 *
 * DESIGN
 * Jobs without a custom id are numbered by the queue's own sequence,
 * bullmq_jid_<md5 of the queue name>, which BullMQ's backend uses too (so a
 * C add and a Node add never get the same number); the first add makes it,
 * under BullMQ's advisory lock for that. The order within a priority comes
 * from the global job_seq, negated for LIFO. Options are stored in BullMQ's
 * opts object with its long names (attempts, delay, priority, lifo, jobId,
 * backoff, removeOnComplete, removeOnFail), lanes' own beside them as on
 * Redis (tm: the trace context; lanesTimeout).
 */
#include "pg_int.h"

#include "internal.h"

#include <stdio.h>
#include <string.h>

/* One job: $1 queue, $2 id, $3 name, $4 data, $5 delay, $6 priority,
 * $7 attempts, $8 backoff type (null: none), $9 backoff ms, $10 jitter,
 * $11 lifo, $12..$15 removeOnComplete / removeOnFail (mode, value),
 * $16 traceparent, $17 tracestate, $18 timeout, $19 the custom id,
 * $20..$23 the deduplication id, its TTL, extend, replace; a flow's link
 * (flow.c): $24 a parent's child count (> 0: added waiting-children with
 * that many pending), $25 / $26 the parent's queue and id (null: none),
 * $27 the LN__FLOW_* failure bits. */
#define KEEP(m, v)                                                                                 \
    "CASE " m "::int WHEN 1 THEN 'true'::jsonb WHEN 4 THEN 'false'::jsonb WHEN 2 THEN "            \
    "to_jsonb(" v "::bigint) WHEN 3 THEN jsonb_build_object('age', " v "::float8 / 1000) END"
#define KEEP_C KEEP("$12", "$13")
#define KEEP_F KEEP("$14", "$15")
#define DEDUP_OPT                                                                                  \
    "CASE WHEN $20::text IS NOT NULL THEN jsonb_build_object('id', $20::text, 'ttl', CASE WHEN "   \
    "$21::bigint > 0 THEN $21::bigint END, 'extend', CASE WHEN $22::int = 1 THEN true END, "       \
    "'replace', CASE WHEN $23::int = 1 THEN true END) END"
#define FLOW_OPTS                                                                                  \
    "'parent', CASE WHEN $26::text IS NOT NULL THEN jsonb_build_object('id', $26::text, "          \
    "'queue', $25::text) END, "                                                                    \
    "'failParentOnFailure', CASE WHEN $27::int & 1 <> 0 THEN true END, "                           \
    "'continueParentOnFailure', CASE WHEN $27::int & 2 <> 0 THEN true END, "                       \
    "'ignoreDependencyOnFailure', CASE WHEN $27::int & 4 <> 0 THEN true END, "                     \
    "'removeDependencyOnFailure', CASE WHEN $27::int & 8 <> 0 THEN true END, "
static const char add_sql[] =
    "WITH ins AS (INSERT INTO @job (queue, id, seq, name, state, data, opts, priority, "
    "delay_ms, max_attempts, added_at_ms, process_at_ms, dedup_id, parent_queue, parent_id, "
    "parent_key, pending_deps) "
    "SELECT $1, $2, CASE WHEN $11::int = 1 THEN -nextval('@job_seq'::regclass) "
    "ELSE nextval('@job_seq'::regclass) END, $3, "
    "CASE WHEN $24::int > 0 THEN 'waiting-children' WHEN $5::bigint > 0 THEN 'delayed' "
    "ELSE 'waiting' END::@job_state, $4::text::jsonb, "
    "jsonb_strip_nulls(jsonb_build_object('attempts', $7::int, "
    "'delay', CASE WHEN $5::bigint > 0 THEN $5::bigint END, "
    "'priority', CASE WHEN $6::int > 0 THEN $6::int END, "
    "'lifo', CASE WHEN $11::int = 1 THEN true END, 'jobId', $19::text, "
    "'backoff', CASE WHEN $8::text IS NOT NULL THEN jsonb_build_object('type', $8::text, "
    "'delay', $9::bigint, 'jitter', $10::float8) END, "
    "'removeOnComplete', " KEEP_C ", 'removeOnFail', " KEEP_F ", "
    "'tm', CASE WHEN $16::text IS NOT NULL THEN jsonb_strip_nulls(jsonb_build_object("
    "'traceparent', $16::text, 'tracestate', $17::text))::text END, "
    "'lanesTimeout', CASE WHEN $18::bigint > 0 THEN $18::bigint END, "
    "'deduplication', " DEDUP_OPT ", " FLOW_OPTS
    "'lanesData', CASE WHEN $4::text::jsonb::text <> $4::text THEN $4::text END)), "
    "$6::int, $5::bigint, $7::int, " PG_NOW ", "
    "CASE WHEN $5::bigint > 0 AND $24::int = 0 THEN " PG_NOW " + $5::bigint END, $20::text, "
    "$25::text, $26::text, $25::text || ':' || $26::text, $24::int "
    "ON CONFLICT (queue, id) DO NOTHING RETURNING id, state, process_at_ms), "
    "ev AS (INSERT INTO @event (queue, event, data, created_at_ms) "
    "SELECT $1, e.event, e.data, " PG_NOW " FROM ins, LATERAL (VALUES "
    "(1, 'added', jsonb_build_object('jobId', ins.id, 'name', $3::text)), "
    "(2, ins.state::text, CASE WHEN ins.state = 'delayed' THEN "
    "jsonb_build_object('jobId', ins.id, 'delay', ins.process_at_ms) "
    "ELSE jsonb_build_object('jobId', ins.id) END)) AS e(k, event, data) ORDER BY e.k) "
    "SELECT count(*) FROM ins";

/* The name of the queue's id sequence, made if missing; into seq
 * ("schema".bullmq_jid_<md5>). */
int ln__pg_id_sequence(pg_be *be, const char *queue, char *seq, size_t cap) {
    const char *p[2] = {queue, be->qschema};
    int rc;
    PGresult *r = ln__pg_q(be,
                           "SELECT s, to_regclass($2 || '.' || s) IS NOT NULL "
                           "FROM (SELECT 'bullmq_jid_' || md5($1) AS s) x",
                           2, p, &rc);
    if (r == NULL) return rc;
    snprintf(seq, cap, "%s.%s", be->qschema, PQgetvalue(r, 0, 0)); /* hex digits */
    int exists = PQgetvalue(r, 0, 1)[0] == 't';
    PQclear(r);
    if (exists) return 0;
    rc = ln__pg_exec(be, "SELECT pg_advisory_xact_lock(hashtext('bullmq:jidseq:' || $1))", 1, p);
    if (rc != 0) return rc;
    char sql[200];
    snprintf(sql, sizeof sql, "CREATE SEQUENCE IF NOT EXISTS %s", seq);
    return ln__pg_exec(be, sql, 0, NULL);
}

static int next_id(pg_be *be, const char *seq, char *out) {
    const char *p[1] = {seq};
    int rc;
    PGresult *r = ln__pg_q(be, "SELECT nextval($1::regclass)", 1, p, &rc);
    if (r == NULL) return rc;
    snprintf(out, 24, "%s", PQgetvalue(r, 0, 0));
    PQclear(r);
    return 0;
}

/* Deduplication (jobs.h's dedup_*; BullMQ's deduplication option): under
 * BullMQ's advisory lock for the id, a live holder (a TTL not yet over, or
 * no TTL and a job still waiting, delayed, active or waiting for
 * children) means the add stores nothing and reports the holder (*held 1,
 * a `deduplicated` event; extend restarts the TTL), unless replace finds
 * the holder still delayed: it is removed and the new job takes the id
 * (its TTL kept). A custom id that exists wins (the add's insert reports
 * it). */
static int dedup_check(pg_be *be, const char *queue, ln__job_new *job, int *held) {
    const ln_job_opts *o = &job->opts;
    const char *p[3] = {queue, o->dedup_id, o->job_id};
    int rc = ln__pg_exec(be,
                         "SELECT pg_advisory_xact_lock(hashtext('bullmq:dedup:' || $1 || ':' || "
                         "$2))",
                         2, p);
    if (rc != 0) return rc;
    PGresult *r = ln__pg_q(
        be,
        "SELECT d.job_id, j.state::text, EXISTS (SELECT 1 FROM @job c WHERE c.queue = $1 AND "
        "c.id = $3::text) FROM @dedup d LEFT JOIN @job j ON j.queue = d.queue AND j.id = "
        "d.job_id WHERE d.queue = $1 AND d.dedup_id = $2 AND CASE WHEN d.expire_at_ms IS NULL "
        "THEN j.state IS NOT NULL AND j.state NOT IN ('completed', 'failed') ELSE "
        "d.expire_at_ms > " PG_NOW " END",
        3, p, &rc);
    if (r == NULL) return rc;
    if (PQntuples(r) == 0 || PQgetvalue(r, 0, 2)[0] == 't') { /* free, or the custom id wins */
        PQclear(r);
        return 0;
    }
    char *holder = ln__strdup(PQgetvalue(r, 0, 0));
    int delayed = strcmp(PQgetvalue(r, 0, 1), "delayed") == 0;
    int active = strcmp(PQgetvalue(r, 0, 1), "active") == 0;
    PQclear(r);
    if (holder == NULL) return ln__pg_oom(be);
    const char *q[4] = {queue, holder, o->dedup_id, NULL};
    if (o->dedup_replace && delayed) {
        rc = ln__pg_dedup_drop_next(be, queue, holder);
        if (rc == 0)
            rc = ln__pg_exec(
                be,
                "WITH d AS (DELETE FROM @job WHERE queue = $1 AND id = $2 RETURNING id) "
                "INSERT INTO @event (queue, event, data, created_at_ms) SELECT $1, "
                "'removed', jsonb_build_object('jobId', id, 'prev', 'delayed'), " PG_NOW " FROM d",
                2, q);
        ln__free(holder);
        return rc;
    }
    char ttl[24];
    q[3] = ln__pg_itoa(ttl, o->dedup_extend ? o->dedup_ttl_ms : 0);
    rc = ln__pg_exec(be,
                     "UPDATE @dedup SET expire_at_ms = " PG_NOW " + $4::bigint WHERE queue = $1 "
                     "AND dedup_id = $3 AND $4::bigint > 0 AND $2::text IS NOT NULL",
                     4, q);
    if (rc == 0 && o->dedup_keep_last_if_active && active)
        rc = ln__pg_dedup_keep(be, queue, job);
    else if (rc == 0 && o->dedup_reschedule && delayed)
        rc = ln__pg_dedup_reschedule(be, queue, holder, o->delay_ms);
    if (rc == 0)
        rc = ln__pg_exec(be,
                         "INSERT INTO @event (queue, event, data, created_at_ms) VALUES ($1, "
                         "'deduplicated', jsonb_build_object('jobId', $2::text, "
                         "'deduplicationId', $3::text), " PG_NOW ")",
                         3, q);
    ln__free(job->id);
    job->id = holder;
    job->existed = 1;
    *held = 1;
    return rc;
}

/* The jitter as JSON writes a number, whatever the locale. */
static void jitter_text(char *buf, size_t cap, double j) {
    snprintf(buf, cap, "%.17g", j);
    for (char *p = buf; *p; p++)
        if (*p == ',') *p = '.';
}

int ln__pg_add_one(pg_be *be, const char *queue, const char *seq, ln__job_new *job) {
    return ln__pg_add_linked(be, queue, seq, job, NULL);
}

int ln__pg_add_linked(pg_be *be, const char *queue, const char *seq, ln__job_new *job,
                      const ln__pg_link *link) {
    const ln_job_opts *o = &job->opts;
    char nkids[24], fbits[24];
    char num[24], delay[24], prio[24], att[24], bms[24], jit[40], rcm[24], rcv[24], rfm[24],
        rfv[24], tmo[24], dttl[24];
    if (o->dedup_id != NULL) {
        int held = 0;
        int rc = dedup_check(be, queue, job, &held);
        if (rc != 0 || held) return rc;
    }
    if (o->job_id == NULL) {
        int rc = next_id(be, seq, num);
        if (rc != 0) return rc;
    }
    const char *id = o->job_id != NULL ? o->job_id : num;
    int has_backoff = o->backoff != LN_BACKOFF_FIXED || o->backoff_ms != 0 || o->backoff_jitter > 0;
    const char *btype = !has_backoff                           ? NULL
                        : o->backoff == LN_BACKOFF_CUSTOM      ? o->backoff_type
                        : o->backoff == LN_BACKOFF_EXPONENTIAL ? "exponential"
                                                               : "fixed";
    jitter_text(jit, sizeof jit, o->backoff_jitter);
    const char *tp = o->traceparent != NULL && *o->traceparent ? o->traceparent : NULL;
    const char *ts = tp != NULL && o->tracestate != NULL && *o->tracestate ? o->tracestate : NULL;
    const char *p[27] = {queue,
                         id,
                         job->name,
                         job->data,
                         ln__pg_itoa(delay, o->delay_ms),
                         ln__pg_itoa(prio, o->priority),
                         ln__pg_itoa(att, o->attempts),
                         btype,
                         ln__pg_itoa(bms, o->backoff_ms),
                         o->backoff_jitter > 0 ? jit : NULL,
                         o->lifo ? "1" : "0",
                         ln__pg_itoa(rcm, o->remove_on_complete.mode),
                         ln__pg_itoa(rcv, o->remove_on_complete.value),
                         ln__pg_itoa(rfm, o->remove_on_fail.mode),
                         ln__pg_itoa(rfv, o->remove_on_fail.value),
                         tp,
                         ts,
                         ln__pg_itoa(tmo, o->timeout_ms),
                         o->job_id,
                         o->dedup_id,
                         ln__pg_itoa(dttl, o->dedup_ttl_ms),
                         o->dedup_extend ? "1" : "0",
                         o->dedup_replace ? "1" : "0",
                         ln__pg_itoa(nkids, link != NULL ? (int64_t)link->nchildren : 0),
                         link != NULL ? link->parent_queue : NULL,
                         link != NULL ? link->parent_id : NULL,
                         ln__pg_itoa(fbits, link != NULL ? link->on_fail : 0)};
    int rc;
    PGresult *r = ln__pg_q(be, add_sql, 27, p, &rc);
    if (r == NULL) return rc;
    job->existed = ln__pg_i64(r, 0, 0) == 0;
    PQclear(r);
    if (job->existed) { /* the custom id exists: BullMQ's 'duplicated' */
        const char *q[2] = {queue, id};
        rc = ln__pg_exec(be,
                         "INSERT INTO @event (queue, event, data, created_at_ms) VALUES ($1, "
                         "'duplicated', jsonb_build_object('jobId', $2::text), " PG_NOW ")",
                         2, q);
        if (rc != 0) return rc;
    }
    if (o->dedup_id != NULL && !job->existed) {
        /* keep-last holds the id without expiry */
        const char *q[4] = {queue, o->dedup_id, id, o->dedup_keep_last_if_active ? "0" : dttl};
        rc = ln__pg_exec(be,
                         "INSERT INTO @dedup (queue, dedup_id, job_id, expire_at_ms) VALUES ($1, "
                         "$2, $3, CASE WHEN $4::bigint > 0 THEN " PG_NOW " + $4::bigint END) "
                         "ON CONFLICT (queue, dedup_id) DO UPDATE SET job_id = excluded.job_id, "
                         "expire_at_ms = CASE WHEN @dedup.expire_at_ms > " PG_NOW " AND "
                         "excluded.expire_at_ms IS NOT NULL THEN @dedup.expire_at_ms ELSE "
                         "excluded.expire_at_ms END",
                         4, q);
        if (rc != 0) return rc;
    }
    ln__free(job->id);
    job->id = ln__strdup(id);
    return job->id != NULL ? 0 : ln__pg_oom(be);
}

int ln__pg_touch_queue(pg_be *be, const char *queue) {
    const char *p[1] = {queue};
    return ln__pg_exec(be,
                       "INSERT INTO @meta (queue, field, value) VALUES "
                       "($1, 'version', 'bullmq:6.7.0'), ($1, 'opts.maxLenEvents', '10000') "
                       "ON CONFLICT DO NOTHING",
                       1, p);
}

int ln__pg_notify_jobs(pg_be *be, const char *queue) {
    const char *p[1] = {queue};
    /* Both wake-ups in one round trip; bullmq_events as ln__pg_notify_events. */
    return ln__pg_exec(be,
                       "SELECT pg_notify('bullmq_jobs', $1), CASE WHEN "
                       "pg_try_advisory_xact_lock(hashtext('bullmq:evnotify:' || $1)) THEN "
                       "pg_notify('bullmq_events', $1) END",
                       1, p);
}

int ln__pg_notify_events(pg_be *be, const char *queue) {
    const char *p[1] = {queue};
    /* As BullMQ: only the writer that gets the queue's try-lock notifies;
     * the others skip, and a follower catches up by event id. */
    return ln__pg_exec(be,
                       "SELECT pg_notify('bullmq_events', $1) WHERE "
                       "pg_try_advisory_xact_lock(hashtext('bullmq:evnotify:' || $1))",
                       1, p);
}

int ln__pg_add(ln__jobs_be *b, const char *queue, ln__job_new *jobs, size_t n) {
    pg_be *be = pgbe(b);
    char seq[160] = "";
    int rc = ln__pg_begin(be);
    for (size_t i = 0; rc == 0 && i < n; i++)
        if (jobs[i].opts.job_id == NULL && seq[0] == '\0')
            rc = ln__pg_id_sequence(be, queue, seq, sizeof seq);
    if (rc == 0) rc = ln__pg_touch_queue(be, queue);
    int stored = 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        rc = jobs[i].opts.parent_id != NULL ? ln__pg_add_child(be, queue, seq, &jobs[i], i, n)
                                            : ln__pg_add_one(be, queue, seq, &jobs[i]);
        stored |= rc == 0 && !jobs[i].existed;
    }
    if (rc == 0 && stored) rc = ln__pg_notify_jobs(be, queue);
    if (rc == 0) rc = ln__pg_commit(be);
    if (rc != 0) ln__pg_rollback(be);
    return rc;
}
