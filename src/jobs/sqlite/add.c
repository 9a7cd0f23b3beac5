/* sqlite_dedup.c - SQLite backend: deduplication ids at add (jobs.h
 * ln_job_opts.dedup_*), the same modes as BullMQ's on Redis. A row of
 * lanes_dedup holds (queue, id) for one job until expires_at, or, when
 * that is NULL, until the job completes, fails or is deleted (triggers of
 * schema 4). Each add with a dedup id does a bounded amount of work: one
 * primary-key lookup, at most one job deleted (replace), one upsert, and
 * at most 16 expired rows of the queue purged; keep-last and reschedule
 * (sqlite_dedup_next.c) add one row written or one job updated. */
#include "sqlite_int.h"

#include "internal.h"

#include <stdio.h>

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
