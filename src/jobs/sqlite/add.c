/* add.c - the SQLite store: adding jobs (the add method: one write
 * transaction for the batch; each job's insert, its events, its counter),
 * and deduplication at add (below). The flow add is flow.c, a job added to
 * an existing parent flow_parent.c, keep-last's next job dedup_next.c. */
#include "sqlite_int.h"

#include "internal.h"

#include <stdio.h>

#define BIND_TEXT(s, i, v) sqlite3_bind_text((s), (i), (v), -1, SQLITE_STATIC)

/* 1 if queue has a job with caller id cid (an add of it is a no-op that
 * deduplication does not see, as in BullMQ), else 0 (also on error: the
 * add's own statement then reports it). */
static int cid_exists(sq_be *be, const char *queue, const char *cid) {
    sqlite3_stmt *s = ln__sq_stmt_get(be, S_RID_OF_CID);
    if (s == NULL) return 0;
    BIND_TEXT(s, 1, queue);
    BIND_TEXT(s, 2, cid);
    int found = sqlite3_step(s) == SQLITE_ROW;
    sqlite3_reset(s);
    return found;
}

int ln__sq_new_state(const ln_job_opts *o) {
    return o->delay_ms > 0 ? LN_JOB_DELAYED : o->priority > 0 ? LN_JOB_PRIORITIZED : LN_JOB_WAITING;
}

int ln__sq_add_events(sq_be *be, const char *queue, const ln__job_new *j, int64_t now) {
    int err = ln__sq_event(be, queue, "added", j->id, "name", j->name, NULL, NULL, now);
    if (err != 0 || j->opts.delay_ms <= 0)
        return err != 0 ? err
                        : ln__sq_event(be, queue, "waiting", j->id, NULL, NULL, NULL, NULL, now);
    char due[24];
    snprintf(due, sizeof due, "%lld", (long long)(now + j->opts.delay_ms));
    return ln__sq_event(be, queue, "delayed", j->id, "delay", due, NULL, NULL, now);
}

int ln__sq_insert_job(sq_be *be, const char *queue, const ln__job_new *j, int64_t now,
                      const char *what) {
    const ln_job_opts *o = &j->opts;
    sqlite3_stmt *s = ln__sq_stmt_get(be, S_ADD);
    if (s == NULL) return LN_EBACKEND;
    BIND_TEXT(s, 1, queue);
    if (o->job_id != NULL) BIND_TEXT(s, 2, o->job_id);
    BIND_TEXT(s, 3, j->name);
    sqlite3_bind_text(s, 4, j->data, (int)j->data_len, SQLITE_STATIC);
    sqlite3_bind_int64(s, 5, o->delay_ms);
    sqlite3_bind_int(s, 6, o->priority);
    sqlite3_bind_int64(s, 7, now);
    sqlite3_bind_int(s, 8, o->attempts);
    sqlite3_bind_int(s, 9, o->backoff);
    sqlite3_bind_int64(s, 10, o->backoff_ms);
    sqlite3_bind_int(s, 11, o->remove_on_complete.mode);
    sqlite3_bind_int64(s, 12, o->remove_on_complete.value);
    sqlite3_bind_int(s, 13, o->remove_on_fail.mode);
    sqlite3_bind_int64(s, 14, o->remove_on_fail.value);
    if (o->traceparent != NULL) BIND_TEXT(s, 15, o->traceparent);
    /* jobs.h: a tracestate only with its traceparent; "" is none */
    if (o->traceparent != NULL && o->tracestate != NULL && o->tracestate[0])
        BIND_TEXT(s, 16, o->tracestate);
    sqlite3_bind_int64(s, 17, o->timeout_ms);
    if (o->dedup_id != NULL) BIND_TEXT(s, 18, o->dedup_id);
    int err = ln__sq_run(be, s, what);
    if (err != 0) return err;
    if (sqlite3_changes(be->db) == 0) return 1;
    if ((err = ln__sq_add_backoff(be, o)) != 0) return err; /* jitter, custom type */
    if (!o->lifo) return 0;
    /* (an UPDATE leaves sqlite3_last_insert_rowid as the insert set it) */
    if ((s = ln__sq_stmt_get(be, S_ADD_LIFO)) == NULL) return LN_EBACKEND;
    sqlite3_bind_int64(s, 1, sqlite3_last_insert_rowid(be->db));
    return ln__sq_run(be, s, what);
}

int ln__sq_add(ln__jobs_be *b, const char *queue, ln__job_new *jobs, size_t n) {
    sq_be *be = (sq_be *)b;
    int64_t now;
    int64_t added[3] = {0};             /* jobs inserted, by ln_job_state */
    int err = ln__sq_reserve_check(be); /* adds never use the space reserve */
    if (err != 0) return err;
    err = ln__sq_begin_write(be, &now);
    if (err != 0) return err;
    for (size_t i = 0; i < n; i++) {
        ln__job_new *j = &jobs[i];
        const ln_job_opts *o = &j->opts;
        int64_t dedup_expires = -1;
        if (o->dedup_id != NULL && (o->job_id == NULL || !cid_exists(be, queue, o->job_id))) {
            if ((err = ln__sq_dedup_check(be, queue, j, now, &dedup_expires)) < 0) goto fail;
            if (err == 1) continue;
        }
        if ((err = ln__sq_insert_job(be, queue, j, now, "add")) < 0) goto fail;
        if (err == 1) { /* the caller id exists */
            j->existed = 1;
            ln__free(j->id); /* set by a dedup check, or an earlier try */
            if ((j->id = ln__strdup(o->job_id)) == NULL) goto fail_nomem;
            err = ln__sq_event(be, queue, "duplicated", j->id, NULL, NULL, NULL, NULL, now);
            if (err == 0 && o->parent_queue != NULL) /* flow_parent.c */
                err = ln__sq_dynflow_link(be, queue, j, 0, i, n, now);
            if (err != 0) goto fail;
            continue;
        }
        int64_t rid = sqlite3_last_insert_rowid(be->db);
        if (o->dedup_id != NULL && (err = ln__sq_dedup_hold(be, queue, o, rid, dedup_expires)) != 0)
            goto fail;
        added[ln__sq_new_state(o)]++;
        j->existed = 0;
        ln__free(j->id); /* set by a dedup check, or an earlier try */
        if ((j->id = ln__sq_id_dup(rid, o->job_id)) == NULL) goto fail_nomem;
        if ((err = ln__sq_add_events(be, queue, j, now)) != 0) goto fail;
        if (o->parent_queue != NULL && (err = ln__sq_dynflow_link(be, queue, j, rid, i, n, now)))
            goto fail;
    }
    for (int k = 0; k < 3; k++) /* waiting, delayed, prioritized */
        if ((err = ln__sq_count(be, queue, k, added[k])) != 0) goto fail;
    err = ln__sq_commit(be);
    return err == LN_ENOSPC ? ln__sq_add_full(be) : err;
fail_nomem:
    err = ln__jobs_be_err(&be->base, LN_ENOMEM, "out of memory");
fail:
    ln__sq_rollback(be);
    return err == LN_ENOSPC ? ln__sq_add_full(be) : err;
}

/* ---- Deduplication ids at add (jobs.h
 * ln_job_opts.dedup_*), the same modes as BullMQ's on Redis. A row of
 * lanes_dedup holds (queue, id) for one job until expires_at, or, when
 * that is NULL, until the job completes, fails or is deleted (triggers of
 * schema 4). Each add with a dedup id does a bounded amount of work: one
 * primary-key lookup, at most one job deleted (replace), one upsert, and
 * at most 16 expired rows of the queue purged; keep-last and reschedule
 * (dedup_next.c) add one row written or one job updated. */

#define PURGE_MAX 16 /* expired rows removed per add (S_DEDUP_PURGE) */

int ln__sq_dedup_check(sq_be *be, const char *queue, ln__job_new *j, int64_t now,
                       int64_t *expires) {
    const ln_job_opts *o = &j->opts;
    sqlite3_stmt *s = ln__sq_stmt_get(be, S_DEDUP_PURGE);
    if (s == NULL) return LN_EBACKEND;
    sqlite3_bind_text(s, 1, queue, -1, SQLITE_STATIC);
    sqlite3_bind_int64(s, 2, now);
    int err = ln__sq_run(be, s, "dedup (expiry)");
    if (err != 0) return err;
    /* keep-last holds the id without expiry (BullMQ ignores its ttl) */
    *expires = o->dedup_ttl_ms > 0 && !o->dedup_keep_last_if_active ? now + o->dedup_ttl_ms : -1;
    if ((s = ln__sq_stmt_get(be, S_DEDUP_GET)) == NULL) return LN_EBACKEND;
    sqlite3_bind_text(s, 1, queue, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 2, o->dedup_id, -1, SQLITE_STATIC);
    int rc = sqlite3_step(s);
    if (rc == SQLITE_DONE) return ln__sq_run(be, s, "dedup"); /* free: 0 */
    if (rc != SQLITE_ROW) {
        err = ln__sq_err(be, rc, "dedup");
        sqlite3_reset(s);
        return err;
    }
    int64_t rid = sqlite3_column_int64(s, 0);
    int has_expiry = sqlite3_column_type(s, 1) != SQLITE_NULL;
    int64_t exp = sqlite3_column_int64(s, 1);
    int exists = sqlite3_column_type(s, 2) != SQLITE_NULL;
    int state = sqlite3_column_int(s, 2);
    ln__free(j->id); /* set by an earlier try of the add */
    j->id = ln__sq_id_dup(rid, (const char *)sqlite3_column_text(s, 3));
    sqlite3_reset(s);
    if (j->id == NULL) return ln__jobs_be_err(&be->base, LN_ENOMEM, "out of memory");
    if (has_expiry && exp <= now) return 0; /* expired: free */
    /* Without expiry but its job gone (stale): free, and a next job kept
     * for the gone holder is dropped. */
    if (!has_expiry && !exists) return ln__sq_dedup_drop_next(be, queue, o->dedup_id);
    int keep_next = o->dedup_keep_last_if_active && state == ST_ACTIVE;
    if (o->dedup_replace) {
        if (!exists || state != ST_DELAYED) {
            j->existed = 1; /* no longer pending: kept */
            if (keep_next && (err = ln__sq_dedup_store_next(be, queue, j)) != 0) return err;
            return 1;
        }
        if ((s = ln__sq_stmt_get(be, S_DELETE_RID)) == NULL) return LN_EBACKEND;
        sqlite3_bind_int64(s, 1, rid);
        if ((err = ln__sq_run(be, s, "dedup (replace)")) != 0) return err;
        if (!o->dedup_extend && has_expiry && !o->dedup_keep_last_if_active)
            *expires = exp; /* KEEPTTL */
        return ln__sq_dedup_drop_next(be, queue, o->dedup_id);
    }
    j->existed = 1;
    if (keep_next) {
        if ((err = ln__sq_dedup_store_next(be, queue, j)) != 0) return err;
        return 1;
    }
    if (o->dedup_reschedule && state == ST_DELAYED) { /* the holder's new delay */
        if ((err = ln__sq_dedup_reschedule(be, rid, o->delay_ms, now)) != 0) return err;
        char due[24];
        snprintf(due, sizeof due, "%lld", (long long)(now + o->delay_ms));
        if ((err = ln__sq_event(be, queue, "delayed", j->id, "delay", due, NULL, NULL, now)))
            return err;
    }
    /* debounce: the TTL starts again (keep-last: held without one) */
    if (o->dedup_extend && (err = ln__sq_dedup_hold(be, queue, o, rid, *expires)) != 0) return err;
    return 1;
}

int ln__sq_dedup_hold(sq_be *be, const char *queue, const ln_job_opts *o, int64_t rid,
                      int64_t expires) {
    sqlite3_stmt *s = ln__sq_stmt_get(be, S_DEDUP_PUT);
    if (s == NULL) return LN_EBACKEND;
    sqlite3_bind_text(s, 1, queue, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 2, o->dedup_id, -1, SQLITE_STATIC);
    sqlite3_bind_int64(s, 3, rid);
    if (expires >= 0) sqlite3_bind_int64(s, 4, expires);
    return ln__sq_run(be, s, "dedup (hold)");
}
