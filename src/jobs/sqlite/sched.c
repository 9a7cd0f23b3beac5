/* sched.c - the SQLite store: job schedulers (table lanes_schedulers,
 * schema version 6). The same semantics as the Redis store (BullMQ 6.7's
 * addJobScheduler / updateJobScheduler): one pending iteration per
 * scheduler, job id "repeat:<id>:<ms>"; the next is made by the take of
 * the current one, in the take's transaction (ln__sq_sched_taken). Every
 * call reads and writes O(1) rows but for list (its page).
 * docs/internals/schedules.md. */
#include "sched_record.h"
#include "sqlite_int.h"

#include "internal.h"

#include <stdio.h>
#include <string.h>

#define BIND_TEXT(s, i, v) sqlite3_bind_text((s), (i), (v), -1, SQLITE_STATIC)
#define EVERY_SLOTS 32 /* slots an upsert walks over taken ids, as BullMQ */

#define SCHED_COLS                                                                                 \
    "id, name, data, every, pattern, tz, start_at, end_at, lim, offset_ms, ic, next_at, "          \
    "priority, attempts, cnt, backoff, backoff_ms, lifo, keep_c_mode, keep_c_val, "                \
    "keep_f_mode, keep_f_val, timeout_ms, backoff_jitter, backoff_type"

static int prep(sq_be *be, const char *sql, sqlite3_stmt **s) {
    int rc = sqlite3_prepare_v2(be->db, sql, -1, s, NULL);
    if (rc != SQLITE_OK) {
        *s = NULL;
        return ln__sq_err(be, rc, "scheduler statement");
    }
    return 0;
}

/* Rebuild a scheduler (as stored) from the columns of SCHED_COLS. */
static int row_sched(sqlite3_stmt *s, ln__sched_new *n, char *tz_buf, size_t tz_size) {
    memset(n, 0, sizeof *n);
    n->name = (const char *)sqlite3_column_text(s, 1);
    n->data = (const char *)sqlite3_column_text(s, 2);
    n->data_len = (size_t)sqlite3_column_bytes(s, 2);
    n->every = sqlite3_column_int64(s, 3);
    n->pattern = (const char *)sqlite3_column_text(s, 4);
    const char *tz = (const char *)sqlite3_column_text(s, 5);
    if (tz != NULL) {
        snprintf(tz_buf, tz_size, "%s", tz);
        n->tz = tz_buf;
    }
    n->start_ms = sqlite3_column_int64(s, 6);
    n->end_ms = sqlite3_column_int64(s, 7);
    n->limit = sqlite3_column_int64(s, 8);
    ln_job_opts_init(&n->opts);
    n->opts.priority = sqlite3_column_int(s, 12);
    n->opts.attempts = sqlite3_column_int(s, 13);
    n->opts.backoff = sqlite3_column_int(s, 15);
    n->opts.backoff_ms = sqlite3_column_int64(s, 16);
    n->opts.lifo = sqlite3_column_int(s, 17);
    n->opts.remove_on_complete.mode = sqlite3_column_int(s, 18);
    n->opts.remove_on_complete.value = sqlite3_column_int64(s, 19);
    n->opts.remove_on_fail.mode = sqlite3_column_int(s, 20);
    n->opts.remove_on_fail.value = sqlite3_column_int64(s, 21);
    n->opts.timeout_ms = sqlite3_column_int64(s, 22);
    n->opts.backoff_jitter = sqlite3_column_double(s, 23);
    n->opts.backoff_type = (const char *)sqlite3_column_text(s, 24); /* the row's */
    char msg[256];
    if (n->name == NULL || n->data == NULL) return -1;
    if (n->every <= 0 &&
        (n->pattern == NULL || ln__cron_parse(&n->cron, n->pattern, msg, sizeof msg) != 0))
        return -1;
    return 0;
}

/* Insert iteration job cid of scheduler n due at 'at', with its events and
 * counters, in the caller's transaction: the add's own insert and events.
 * *made 0 when cid exists. */
static int insert_iteration(sq_be *be, const char *queue, const ln__sched_new *n, const char *cid,
                            int64_t at, int64_t now, int *made) {
    ln__job_new j = {.name = n->name, .data = n->data, .data_len = n->data_len, .opts = n->opts};
    j.opts.job_id = cid;
    j.opts.delay_ms = at > now ? at - now : 0;
    /* The stored scheduler keeps no trace context: every iteration alike. */
    j.opts.traceparent = j.opts.tracestate = NULL;
    j.id = (char *)cid; /* (only read by the events) */
    int err = ln__sq_insert_job(be, queue, &j, now, "add (scheduler)");
    if (err < 0) return err;
    *made = err == 0;
    if (!*made) return ln__sq_event(be, queue, "duplicated", cid, NULL, NULL, NULL, NULL, now);
    if ((err = ln__sq_count(be, queue, ln__sq_new_state(&j.opts), 1)) != 0) return err;
    return ln__sq_add_events(be, queue, &j, now);
}

/* Job cid of queue: *state (-1 when there is none) and *rid. */
static int job_state(sq_be *be, const char *queue, const char *cid, int *state, int64_t *rid) {
    sqlite3_stmt *s = ln__sq_stmt_get(be, S_RID_OF_CID);
    if (s == NULL) return LN_EBACKEND;
    BIND_TEXT(s, 1, queue);
    BIND_TEXT(s, 2, cid);
    int rc = sqlite3_step(s);
    *state = -1;
    if (rc == SQLITE_ROW) {
        *rid = sqlite3_column_int64(s, 0);
        *state = sqlite3_column_int(s, 1);
    }
    sqlite3_reset(s);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : ln__sq_err(be, rc, "scheduler job");
}

/* Delete job cid if it is pending (ready or delayed); *removed. */
static int remove_pending(sq_be *be, const char *queue, const char *cid, int delayed_only,
                          int64_t now, int *removed) {
    int state;
    int64_t rid = 0;
    *removed = 0;
    int err = job_state(be, queue, cid, &state, &rid);
    if (err != 0 || !(state == ST_DELAYED || (state == ST_READY && !delayed_only))) return err;
    sqlite3_stmt *s = ln__sq_stmt_get(be, S_DELETE_RID);
    if (s == NULL) return LN_EBACKEND;
    sqlite3_bind_int64(s, 1, rid);
    if ((err = ln__sq_run(be, s, "remove (scheduler)")) != 0) return err;
    *removed = 1;
    return ln__sq_event(be, queue, "removed", cid, "prev",
                        state == ST_DELAYED ? "delayed" : "waiting", NULL, NULL, now);
}

/* ---------------------------------------------------------------- upsert */

/* The stored scheduler's every, next_at, offset and ic (*found 0: none). */
static int read_prev(sq_be *be, const char *queue, const char *id, int *found, int64_t *every,
                     int64_t *next_at, int64_t *offset, int64_t *ic) {
    sqlite3_stmt *s;
    int err = prep(be,
                   "SELECT every, next_at, offset_ms, ic FROM lanes_schedulers "
                   "WHERE queue = ?1 AND id = ?2",
                   &s);
    if (err != 0) return err;
    BIND_TEXT(s, 1, queue);
    BIND_TEXT(s, 2, id);
    int rc = sqlite3_step(s);
    *found = rc == SQLITE_ROW;
    if (*found) {
        *every = sqlite3_column_int64(s, 0);
        *next_at = sqlite3_column_int64(s, 1);
        *offset = sqlite3_column_int64(s, 2);
        *ic = sqlite3_column_int64(s, 3);
    }
    sqlite3_finalize(s);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : ln__sq_err(be, rc, "scheduler");
}

static int store_row(sq_be *be, const char *queue, const ln__sched_new *n, int64_t next_at,
                     int64_t offset, int64_t ic) {
    sqlite3_stmt *s;
    int err = prep(be,
                   "INSERT OR REPLACE INTO lanes_schedulers(queue, " SCHED_COLS ") VALUES(?1, ?2, "
                   "?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, 1, ?16, ?17, ?18, "
                   "?19, ?20, ?21, ?22, ?23, ?24, ?25)",
                   &s);
    if (err != 0) return err;
    const ln_job_opts *o = &n->opts;
    BIND_TEXT(s, 1, queue);
    BIND_TEXT(s, 2, n->id);
    BIND_TEXT(s, 3, n->name);
    sqlite3_bind_text(s, 4, n->data, (int)n->data_len, SQLITE_STATIC);
    sqlite3_bind_int64(s, 5, n->every);
    if (n->pattern != NULL) BIND_TEXT(s, 6, n->pattern);
    if (n->tz != NULL) BIND_TEXT(s, 7, n->tz);
    sqlite3_bind_int64(s, 8, n->start_ms);
    sqlite3_bind_int64(s, 9, n->end_ms);
    sqlite3_bind_int64(s, 10, n->limit);
    sqlite3_bind_int64(s, 11, offset);
    sqlite3_bind_int64(s, 12, ic);
    sqlite3_bind_int64(s, 13, next_at);
    sqlite3_bind_int(s, 14, o->priority);
    sqlite3_bind_int(s, 15, o->attempts);
    sqlite3_bind_int(s, 16, o->backoff);
    sqlite3_bind_int64(s, 17, o->backoff_ms);
    sqlite3_bind_int(s, 18, o->lifo);
    sqlite3_bind_int(s, 19, o->remove_on_complete.mode);
    sqlite3_bind_int64(s, 20, o->remove_on_complete.value);
    sqlite3_bind_int(s, 21, o->remove_on_fail.mode);
    sqlite3_bind_int64(s, 22, o->remove_on_fail.value);
    sqlite3_bind_int64(s, 23, o->timeout_ms);
    sqlite3_bind_double(s, 24, o->backoff_jitter);
    if (o->backoff_type != NULL) BIND_TEXT(s, 25, o->backoff_type);
    err = ln__sq_run(be, s, "store scheduler");
    sqlite3_finalize(s);
    return err;
}

/* For every: the first free slot from *at on (BullMQ walks up to 32). */
static int free_slot(sq_be *be, const char *queue, const ln__sched_new *n, int64_t *at,
                     char **cid) {
    for (int i = 0; i <= EVERY_SLOTS; i++) {
        int state;
        int64_t rid;
        if ((*cid = ln__sched_job_id(n->id, *at)) == NULL)
            return ln__jobs_be_err(&be->base, LN_ENOMEM, "out of memory");
        int err = job_state(be, queue, *cid, &state, &rid);
        if (err != 0 || state < 0) return err;
        ln__free(*cid);
        *cid = NULL;
        if (n->every <= 0 || i == EVERY_SLOTS) break;
        *at += n->every;
    }
    return ln__jobs_be_err(&be->base, LN_EEXIST,
                           "scheduler '%s': the job of its next iteration exists already", n->id);
}

static int upsert_once(sq_be *be, const char *queue, const ln__sched_new *n, char **job_id) {
    int64_t now, pevery = 0, pnext = 0, poffset = 0, ic = 1, next, offset;
    int found, removed = 0;
    char *cid = NULL;
    int err = ln__sq_begin_write(be, &now);
    if (err == 0) err = read_prev(be, queue, n->id, &found, &pevery, &pnext, &poffset, &ic);
    if (err != 0) goto out;
    if (!found) ic = 1;
    int64_t prev = found && n->every > 0 && pevery == n->every ? pnext : LN__CRON_NONE;
    err = ln__sched_new_next(n, 0, prev, now, 0, &next, &offset, be->base.errmsg,
                             sizeof be->base.errmsg);
    if (err != 0 || next == LN__CRON_NONE) goto out; /* done: nothing changes */
    if (found) {
        if ((cid = ln__sched_job_id(n->id, pnext)) == NULL) goto oom;
        err = remove_pending(be, queue, cid, 0, now, &removed);
        ln__free(cid);
        cid = NULL;
        if (err != 0) goto out;
    }
    if (removed && n->every > 0 && pevery == n->every) next = pnext; /* keeps its time */
    if (removed) offset = poffset;
    if (n->every <= 0) offset = 0;
    if ((err = free_slot(be, queue, n, &next, &cid)) != 0) goto out;
    int made = 0;
    if ((err = store_row(be, queue, n, next, offset, ic)) == 0)
        err = insert_iteration(be, queue, n, cid, next, now, &made);
    if (err == 0 && made) {
        *job_id = cid;
        cid = NULL;
    }
    goto out;
oom:
    err = ln__jobs_be_err(&be->base, LN_ENOMEM, "out of memory");
out:
    ln__free(cid);
    if (err == 0 && (err = ln__sq_commit(be)) == 0) return 0;
    ln__sq_rollback(be);
    ln__free(*job_id);
    *job_id = NULL;
    return err;
}

int ln__sq_sched_upsert(ln__jobs_be *b, const char *queue, const ln__sched_new *n, char **job_id) {
    sq_be *be = (sq_be *)b;
    *job_id = NULL;
    int err = ln__sq_reserve_check(be); /* like an add */
    return err != 0 ? err : upsert_once(be, queue, n, job_id);
}

/* ----------------------------------------------------- remove, get, list */

int ln__sq_sched_remove(ln__jobs_be *b, const char *queue, const char *id) {
    sq_be *be = (sq_be *)b;
    int64_t now, every, next_at, offset, ic;
    int found = 0, removed;
    sqlite3_stmt *s = NULL;
    int err = ln__sq_begin_write(be, &now);
    if (err != 0) return err;
    err = read_prev(be, queue, id, &found, &every, &next_at, &offset, &ic);
    if (err == 0 && !found)
        err = ln__jobs_be_err(b, LN_ENOENT, "queue '%s' has no scheduler '%s'", queue, id);
    if (err == 0) {
        char *cid = ln__sched_job_id(id, next_at);
        err = cid == NULL ? ln__jobs_be_err(b, LN_ENOMEM, "out of memory")
                          : remove_pending(be, queue, cid, 1, now, &removed);
        ln__free(cid);
    }
    if (err == 0 &&
        (err = prep(be, "DELETE FROM lanes_schedulers WHERE queue = ?1 AND id = ?2", &s)) == 0) {
        BIND_TEXT(s, 1, queue);
        BIND_TEXT(s, 2, id);
        err = ln__sq_run(be, s, "remove scheduler");
        sqlite3_finalize(s);
    }
    if (err == 0) return ln__sq_commit(be);
    ln__sq_rollback(be);
    return err;
}

static int fill_info(sqlite3_stmt *s, ln_job_scheduler *o) {
    memset(o, 0, sizeof *o);
    if (ln__sq_dup_text(s, 0, &o->id) || ln__sq_dup_text(s, 1, &o->name) ||
        ln__sq_dup_text(s, 2, &o->data) || ln__sq_dup_text(s, 4, &o->pattern) ||
        ln__sq_dup_text(s, 5, &o->tz)) {
        ln_job_scheduler_clear(o);
        return LN_ENOMEM;
    }
    o->every_ms = sqlite3_column_int64(s, 3);
    o->start_ms = sqlite3_column_int64(s, 6);
    o->end_ms = sqlite3_column_int64(s, 7);
    int64_t lim = sqlite3_column_int64(s, 8);
    o->limit = lim > 0 ? lim : 0;
    o->offset_ms = sqlite3_column_int64(s, 9);
    o->iterations = sqlite3_column_int64(s, 10);
    o->next_ms = sqlite3_column_int64(s, 11);
    o->priority = sqlite3_column_int(s, 12);
    o->attempts = sqlite3_column_int(s, 13);
    return 0;
}

int ln__sq_sched_get(ln__jobs_be *b, const char *queue, const char *id, ln_job_scheduler *out) {
    sq_be *be = (sq_be *)b;
    sqlite3_stmt *s;
    int err =
        prep(be, "SELECT " SCHED_COLS " FROM lanes_schedulers WHERE queue = ?1 AND id = ?2", &s);
    if (err != 0) return err;
    BIND_TEXT(s, 1, queue);
    BIND_TEXT(s, 2, id);
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW)
        err = fill_info(s, out) ? ln__jobs_be_err(b, LN_ENOMEM, "out of memory") : 0;
    else if (rc == SQLITE_DONE)
        err = ln__jobs_be_err(b, LN_ENOENT, "queue '%s' has no scheduler '%s'", queue, id);
    else
        err = ln__sq_err(be, rc, "scheduler");
    sqlite3_finalize(s);
    return err;
}

int ln__sq_sched_list(ln__jobs_be *b, const char *queue, size_t offset, size_t limit,
                      ln_job_scheduler **out, size_t *n) {
    sq_be *be = (sq_be *)b;
    sqlite3_stmt *s;
    *out = NULL;
    *n = 0;
    int err = prep(be,
                   "SELECT " SCHED_COLS " FROM lanes_schedulers WHERE queue = ?1 "
                   "ORDER BY next_at, id LIMIT ?2 OFFSET ?3",
                   &s);
    if (err != 0) return err;
    ln_job_scheduler *arr = ln__calloc(limit, sizeof *arr);
    if (arr == NULL) {
        sqlite3_finalize(s);
        return ln__jobs_be_err(b, LN_ENOMEM, "out of memory");
    }
    BIND_TEXT(s, 1, queue);
    sqlite3_bind_int64(s, 2, (int64_t)limit);
    sqlite3_bind_int64(s, 3, offset > INT64_MAX ? INT64_MAX : (int64_t)offset);
    int rc;
    size_t k = 0;
    while (err == 0 && k < limit && (rc = sqlite3_step(s)) == SQLITE_ROW)
        if (fill_info(s, &arr[k]) == 0)
            k++;
        else
            err = ln__jobs_be_err(b, LN_ENOMEM, "out of memory");
    if (err == 0 && k < limit && rc != SQLITE_DONE) err = ln__sq_err(be, rc, "schedulers");
    sqlite3_finalize(s);
    if (err != 0 || k == 0) {
        ln_job_scheduler_free_array(arr, k);
        return err;
    }
    *out = arr;
    *n = k;
    return 0;
}

/* --------------------------------------------------- the take's advance */

/* Taken job id is an iteration of scheduler sid: if it is the current one
 * (its time is next_at), make the next. */
static int advance(sq_be *be, const char *queue, const char *sid, int64_t ms, int64_t now) {
    sqlite3_stmt *s;
    int err =
        prep(be, "SELECT " SCHED_COLS " FROM lanes_schedulers WHERE queue = ?1 AND id = ?2", &s);
    if (err != 0) return err;
    BIND_TEXT(s, 1, queue);
    BIND_TEXT(s, 2, sid);
    int rc = sqlite3_step(s);
    ln__sched_new n;
    char tz[256], msg[256];
    int64_t next = LN__CRON_NONE, offset;
    if (rc == SQLITE_ROW && sqlite3_column_int64(s, 11) == ms &&
        row_sched(s, &n, tz, sizeof tz) == 0) {
        n.id = sid;
        int64_t off = sqlite3_column_int64(s, 9), count = sqlite3_column_int64(s, 14);
        if (ln__sched_new_next(&n, count, ms, now, off, &next, &offset, msg, sizeof msg) != 0)
            next = LN__CRON_NONE; /* as BullMQ: no next iteration */
    }
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) err = ln__sq_err(be, rc, "scheduler");
    char *cid = next != LN__CRON_NONE ? ln__sched_job_id(sid, next) : NULL;
    int made = 0;
    if (err == 0 && cid != NULL) err = insert_iteration(be, queue, &n, cid, next, now, &made);
    sqlite3_finalize(s); /* (n's strings were its columns) */
    ln__free(cid);
    if (err != 0 || !made) return err;
    if ((err = prep(be,
                    "UPDATE lanes_schedulers SET next_at = ?3, ic = ic + 1, cnt = cnt + 1 "
                    "WHERE queue = ?1 AND id = ?2",
                    &s)) != 0)
        return err;
    BIND_TEXT(s, 1, queue);
    BIND_TEXT(s, 2, sid);
    sqlite3_bind_int64(s, 3, next);
    err = ln__sq_run(be, s, "advance scheduler");
    sqlite3_finalize(s);
    return err;
}

/* 1 if id is the current iteration of a job scheduler of queue
 * ("repeat:<scheduler id>:<its next_at>", the id up to the last ':'),
 * which only its take may end (BullMQ refuses to remove one), 0 if not,
 * or a negative error. One primary-key lookup. */
int ln__sq_is_current_iteration(sq_be *be, const char *queue, const char *id) {
    const char *sid = id + 7, *colon = strrchr(id, ':');
    if (strncmp(id, "repeat:", 7) != 0 || colon <= sid) return 0;
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v2(
        be->db, "SELECT next_at FROM lanes_schedulers WHERE queue = ?1 AND id = ?2", -1, &s, NULL);
    if (rc != SQLITE_OK) return ln__sq_err(be, rc, "scheduler lookup");
    BIND_TEXT(s, 1, queue);
    sqlite3_bind_text(s, 2, sid, (int)(colon - sid), SQLITE_STATIC);
    char ms[24] = "";
    if ((rc = sqlite3_step(s)) == SQLITE_ROW)
        snprintf(ms, sizeof ms, "%lld", (long long)sqlite3_column_int64(s, 0));
    sqlite3_finalize(s);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) return ln__sq_err(be, rc, "scheduler lookup");
    return ms[0] != '\0' && strcmp(colon + 1, ms) == 0;
}

int ln__sq_sched_taken(sq_be *be, const char *queue, const ln__job_taken *taken, size_t n,
                       int64_t now) {
    int err = 0;
    for (size_t i = 0; i < n && err == 0; i++) {
        const char *sid;
        size_t len;
        int64_t ms;
        /* Only lanes writes this store's schedulers, whose ids are at most
         * LN__SCHED_ID_MAX bytes: a longer "repeat:" id is a custom job id
         * that names no scheduler (its job id itself is never cut). */
        char buf[LN__SCHED_ID_MAX + 1];
        if (!ln__sched_parse_job_id(taken[i].ref.id, &sid, &len, &ms) || len >= sizeof buf)
            continue;
        memcpy(buf, sid, len);
        buf[len] = '\0';
        err = advance(be, queue, buf, ms, now);
    }
    return err;
}
