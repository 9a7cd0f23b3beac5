/* stalled.c - the SQLite store: a worker's jobs outside its step:
 * recovering stalled jobs (active with their lease expired) and releasing
 * the jobs of a worker that stops. Each is one write transaction that may
 * use the disk-space reserve (reserve.c). */
#include "sqlite_int.h"

#include "internal.h"

/* The events of one row of S_STALLED: stalled, then waiting or failed. */
static int stalled_events(sq_be *be, const char *queue, sqlite3_stmt *s, const char *reason,
                          int64_t now) {
    char num[24];
    const char *id = ln__sq_public_id(num, sizeof num, sqlite3_column_int64(s, 0),
                                      (const char *)sqlite3_column_text(s, 4));
    int err = ln__sq_event(be, queue, "stalled", id, NULL, NULL, NULL, NULL, now);
    if (err != 0) return err;
    if (sqlite3_column_int(s, 1) == ST_FAILED) {
        err = ln__sq_event(be, queue, "failed", id, "failedReason", reason, "prev", "active", now);
        if (err == 0 && sqlite3_column_int64(s, 5) > 0) /* a flow child */
            err = ln__sq_flow_child_done(be, queue, id, sqlite3_column_int64(s, 0),
                                         sqlite3_column_int64(s, 5), sqlite3_column_int(s, 6), 0,
                                         reason, now, NULL);
        return err;
    }
    return ln__sq_event(be, queue, "waiting", id, "prev", "active", NULL, NULL, now);
}

static int stalled_once(sq_be *be, const char *queue, unsigned max_stalled, const char *reason,
                        size_t *requeued, size_t *failed) {
    int64_t now;
    *requeued = *failed = 0;
    int err = ln__sq_begin_write(be, &now);
    if (err != 0) return err;
    sqlite3_stmt *s = ln__sq_stmt_get(be, S_STALLED);
    if (s == NULL) {
        ln__sq_rollback(be);
        return LN_EBACKEND;
    }
    sqlite3_bind_text(s, 1, queue, -1, SQLITE_STATIC);
    sqlite3_bind_int64(s, 2, now);
    sqlite3_bind_int64(s, 3, max_stalled);
    sqlite3_bind_text(s, 4, reason, -1, SQLITE_STATIC);
    /* Failed jobs whose retention must run once the UPDATE is finished. */
    struct keep {
        int64_t rid, value;
        int mode;
    } *keep = NULL;
    size_t nkeep = 0, cap = 0;
    int rc;
    /* RETURNING: the UPDATE is done at the first step, so the events may
     * be written between the steps. */
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if ((err = stalled_events(be, queue, s, reason, now)) != 0) break;
        if (sqlite3_column_int(s, 1) != ST_FAILED) {
            (*requeued)++;
            continue;
        }
        (*failed)++;
        if (sqlite3_column_int(s, 2) == LN_KEEP_ALL) continue;
        if (nkeep == cap) {
            size_t ncap = cap ? cap * 2 : 8;
            struct keep *p = ln__realloc(keep, ncap * sizeof *p);
            if (p == NULL) {
                err = ln__jobs_be_err(&be->base, LN_ENOMEM, "out of memory");
                break;
            }
            keep = p;
            cap = ncap;
        }
        keep[nkeep].rid = sqlite3_column_int64(s, 0);
        keep[nkeep].mode = sqlite3_column_int(s, 2);
        keep[nkeep].value = sqlite3_column_int64(s, 3);
        nkeep++;
    }
    if (err == 0 && rc != SQLITE_DONE) err = ln__sq_err(be, rc, "stalled");
    sqlite3_reset(s);
    for (size_t i = 0; i < nkeep && err == 0; i++)
        err = ln__sq_apply_keep(be, queue, keep[i].rid, ST_FAILED, keep[i].mode, keep[i].value, now,
                                0);
    ln__free(keep);
    if (err == 0) return ln__sq_commit(be);
    ln__sq_rollback(be);
    *requeued = *failed = 0;
    return err;
}

int ln__sq_recover_stalled(ln__jobs_be *b, const char *queue, unsigned max_stalled,
                           const char *reason, size_t *requeued, size_t *failed) {
    sq_be *be = (sq_be *)b;
    int err = stalled_once(be, queue, max_stalled, reason, requeued, failed);
    if (ln__sq_retry_for_space(be, err, 0))
        err = stalled_once(be, queue, max_stalled, reason, requeued, failed);
    return ln__sq_relieved(be, err);
}

static int release_once(sq_be *be, const char *queue, const ln__job_ref *refs, int *rcs, size_t n) {
    int64_t now;
    int err = ln__sq_begin_write(be, &now);
    if (err != 0) return err;
    for (size_t i = 0; i < n && err == 0; i++) {
        sqlite3_stmt *s = ln__sq_stmt_get(be, S_RELEASE);
        if (s == NULL) {
            err = LN_EBACKEND;
            break;
        }
        ln__sq_bind_ref(s, &refs[i]);
        if ((err = ln__sq_run(be, s, "release")) == 0)
            rcs[i] = sqlite3_changes(be->db) == 1 ? 0 : LN_ESTALE;
        if (err == 0 && rcs[i] == 0)
            err = ln__sq_event(be, queue, "waiting", refs[i].id, "prev", "active", NULL, NULL, now);
    }
    if (err == 0) return ln__sq_commit(be);
    ln__sq_rollback(be);
    return err;
}

int ln__sq_release(ln__jobs_be *b, const char *queue, const ln__job_ref *refs, int *rcs, size_t n) {
    sq_be *be = (sq_be *)b;
    /* A release adds no data: it may use the emergency part of the reserve
     * as a delete does, so a worker stopping on a full disk gives its jobs
     * back. */
    ln__sq_room_begin(be);
    int err = release_once(be, queue, refs, rcs, n);
    if (ln__sq_retry_for_space(be, err, 1)) err = release_once(be, queue, refs, rcs, n);
    err = ln__sq_relieved(be, err);
    ln__sq_room_end(be);
    return err;
}
