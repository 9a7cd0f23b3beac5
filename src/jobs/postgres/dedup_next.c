/* dedup_next.c - deduplication's keep-last and reschedule
 * (docs/internals/dedup-next.md) in BullMQ's dedup and dedup_next tables:
 * an add deduplicated by an active holder with keep_last_if_active is kept
 * as the id's next job (a dedup_next row, the latest replacing an earlier
 * one, the key losing its expiry); when a job holding the id finalizes
 * (completes, fails for good, is canceled, fails as stalled) its key is
 * released and the kept add is added as an add would add it. Removing or
 * draining the holder drops its next job.
 *
 * The payload holds BullMQ's name, data and jobId, and under "lanes" the
 * add's options as lanes passed them, which the requeue reads back.
 */
#include "pg_int.h"

#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The options kept, in this order (payload->'lanes' is an array). */
enum {
    K_DELAY,
    K_PRIO,
    K_ATT,
    K_BACKOFF,
    K_BMS,
    K_JIT,
    K_BTYPE,
    K_LIFO,
    K_RCM,
    K_RCV,
    K_RFM,
    K_RFV,
    K_TP,
    K_TS,
    K_TMO,
    K_JOBID,
    K_TTL,
    K_EXT,
    K_REP,
    K_RESCHED,
    K_N
};

_Static_assert(K_N == 20, "ln__pg_dedup_release reads 20 options");

static void keep_text(char b[K_N][40], const char *v[K_N], const ln_job_opts *o) {
    int64_t n[K_N] = {[K_DELAY] = o->delay_ms,
                      [K_PRIO] = o->priority,
                      [K_ATT] = o->attempts,
                      [K_BACKOFF] = o->backoff,
                      [K_BMS] = o->backoff_ms,
                      [K_LIFO] = o->lifo,
                      [K_RCM] = o->remove_on_complete.mode,
                      [K_RCV] = o->remove_on_complete.value,
                      [K_RFM] = o->remove_on_fail.mode,
                      [K_RFV] = o->remove_on_fail.value,
                      [K_TMO] = o->timeout_ms,
                      [K_TTL] = o->dedup_ttl_ms,
                      [K_EXT] = o->dedup_extend,
                      [K_REP] = o->dedup_replace,
                      [K_RESCHED] = o->dedup_reschedule};
    for (int i = 0; i < K_N; i++) v[i] = ln__pg_itoa(b[i], n[i]);
    snprintf(b[K_JIT], sizeof b[K_JIT], "%.17g", o->backoff_jitter);
    for (char *p = b[K_JIT]; *p; p++)
        if (*p == ',') *p = '.';
    v[K_BTYPE] = o->backoff_type;
    v[K_TP] = o->traceparent;
    v[K_TS] = o->tracestate;
    v[K_JOBID] = o->job_id;
}

int ln__pg_dedup_keep(pg_be *be, const char *queue, const ln__job_new *job) {
    char b[K_N][40], seq[160], num[24];
    const char *v[K_N];
    keep_text(b, v, &job->opts);
    if (v[K_JOBID] == NULL) { /* the number this add gets, as BullMQ's jid */
        int rc = ln__pg_id_sequence(be, queue, seq, sizeof seq);
        const char *s1[1] = {seq};
        PGresult *r = rc == 0 ? ln__pg_q(be, "SELECT nextval($1::regclass)", 1, s1, &rc) : NULL;
        if (r == NULL) return rc;
        snprintf(num, sizeof num, "%s", PQgetvalue(r, 0, 0));
        PQclear(r);
        v[K_JOBID] = num;
    }
    const char *p[4 + K_N];
    p[0] = queue;
    p[1] = job->opts.dedup_id;
    p[2] = job->name;
    p[3] = job->data;
    memcpy(p + 4, v, sizeof v);
    char sql[1200];
    size_t o =
        (size_t)snprintf(sql, sizeof sql,
                         "INSERT INTO @dedup_next (queue, dedup_id, payload) VALUES ($1, $2, "
                         "jsonb_build_object('name', $3::text, 'data', $4::text, 'jobId', "
                         "$%d::text, 'lanes', jsonb_build_array(",
                         5 + K_JOBID);
    for (int i = 0; i < K_N; i++)
        o += (size_t)snprintf(sql + o, sizeof sql - o, "%s$%d::text", i ? ", " : "", 5 + i);
    snprintf(sql + o, sizeof sql - o,
             "))) ON CONFLICT (queue, dedup_id) DO UPDATE SET payload = excluded.payload");
    int rc = ln__pg_exec(be, sql, 4 + K_N, p);
    if (rc == 0)
        rc = ln__pg_exec(
            be, "UPDATE @dedup SET expire_at_ms = NULL WHERE queue = $1 AND dedup_id = $2", 2, p);
    return rc;
}

int ln__pg_dedup_reschedule(pg_be *be, const char *queue, const char *holder, int64_t delay_ms) {
    char d[24];
    const char *p[3] = {queue, holder, ln__pg_itoa(d, delay_ms)};
    return ln__pg_exec(be,
                       "WITH u AS (UPDATE @job SET process_at_ms = " PG_NOW " + $3::bigint WHERE "
                       "queue = $1 AND id = $2 AND state = 'delayed' RETURNING id, process_at_ms) "
                       "INSERT INTO @event (queue, event, data, created_at_ms) SELECT $1, "
                       "'delayed', jsonb_build_object('jobId', id, 'delay', process_at_ms), " PG_NOW
                       " FROM u",
                       3, p);
}

int ln__pg_dedup_drop_next(pg_be *be, const char *queue, const char *id) {
    const char *p[2] = {queue, id};
    return ln__pg_exec(be,
                       "DELETE FROM @dedup_next n USING @dedup d WHERE n.queue = $1 AND d.queue = "
                       "$1 AND d.job_id = $2 AND n.dedup_id = d.dedup_id",
                       2, p);
}

/* Add the kept job of one released id (payload row r, i). */
static int requeue(pg_be *be, const char *queue, const char *dedup_id, const PGresult *r, int i) {
    ln__job_new job;
    memset(&job, 0, sizeof job);
    ln_job_opts *o = &job.opts;
    ln_job_opts_init(o);
    const char *f[K_N];
    for (int k = 0; k < K_N; k++) f[k] = PQgetisnull(r, i, 3 + k) ? NULL : PQgetvalue(r, i, 3 + k);
    job.name = PQgetvalue(r, i, 1);
    job.data = PQgetvalue(r, i, 2);
    job.data_len = strlen(job.data);
    o->delay_ms = strtoll(f[K_DELAY], NULL, 10);
    o->priority = atoi(f[K_PRIO]);
    o->attempts = atoi(f[K_ATT]);
    o->backoff = atoi(f[K_BACKOFF]);
    o->backoff_ms = strtoll(f[K_BMS], NULL, 10);
    o->backoff_jitter = f[K_JIT] != NULL ? strtod(f[K_JIT], NULL) : 0;
    o->backoff_type = f[K_BTYPE];
    o->lifo = atoi(f[K_LIFO]);
    o->remove_on_complete = (ln_job_keep){atoi(f[K_RCM]), strtoll(f[K_RCV], NULL, 10)};
    o->remove_on_fail = (ln_job_keep){atoi(f[K_RFM]), strtoll(f[K_RFV], NULL, 10)};
    o->traceparent = f[K_TP];
    o->tracestate = f[K_TS];
    o->timeout_ms = strtoll(f[K_TMO], NULL, 10);
    o->job_id = f[K_JOBID];
    o->dedup_id = dedup_id;
    o->dedup_ttl_ms = 0; /* held without expiry while a next job may come */
    o->dedup_keep_last_if_active = 1;
    o->dedup_replace = atoi(f[K_REP]);
    o->dedup_reschedule = atoi(f[K_RESCHED]);
    char seq[160] = "";
    int rc = o->job_id == NULL ? ln__pg_id_sequence(be, queue, seq, sizeof seq) : 0;
    if (rc == 0) rc = ln__pg_add_one(be, queue, seq, &job);
    if (rc == 0 && !job.existed) rc = ln__pg_notify_jobs(be, queue);
    ln__free(job.id);
    return rc;
}

int ln__pg_dedup_release(pg_be *be, const char *queue, const char *id) {
    const char *p[2] = {queue, id};
    int rc;
    PGresult *r =
        ln__pg_q(be,
                 "WITH d AS (DELETE FROM @dedup WHERE queue = $1 AND job_id = $2 AND "
                 "expire_at_ms IS NULL RETURNING dedup_id), "
                 "n AS (DELETE FROM @dedup_next x USING d WHERE x.queue = $1 AND "
                 "x.dedup_id = d.dedup_id RETURNING x.dedup_id, x.payload) "
                 "SELECT dedup_id, payload->>'name', payload->>'data', "
                 "e.* FROM n, LATERAL (SELECT "
                 "(payload->'lanes'->>0), (payload->'lanes'->>1), (payload->'lanes'->>2), "
                 "(payload->'lanes'->>3), (payload->'lanes'->>4), (payload->'lanes'->>5), "
                 "(payload->'lanes'->>6), (payload->'lanes'->>7), (payload->'lanes'->>8), "
                 "(payload->'lanes'->>9), (payload->'lanes'->>10), "
                 "(payload->'lanes'->>11), (payload->'lanes'->>12), "
                 "(payload->'lanes'->>13), (payload->'lanes'->>14), "
                 "(payload->'lanes'->>15), (payload->'lanes'->>16), "
                 "(payload->'lanes'->>17), (payload->'lanes'->>18), "
                 "(payload->'lanes'->>19)) e WHERE payload ? 'lanes'",
                 2, p, &rc);
    if (r == NULL) return rc;
    rc = 0;
    for (int i = 0; rc == 0 && i < PQntuples(r); i++)
        rc = requeue(be, queue, PQgetvalue(r, i, 0), r, i);
    PQclear(r);
    return rc;
}
