/* sqlite_ops.c - SQLite backend: adding jobs and administering queues
 * (get, counts, list, logs, remove, clean, pause, drain; retry is
 * sqlite_retry.c). */
#include "sqlite_int.h"

#include "internal.h"

#include <stdio.h>
#include <string.h>

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
            if (err == 0 && o->parent_queue != NULL) /* sqlite_dynflow.c */
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

/* The cached statement by_rid (a numeric id, lanes' own) or by_cid (a
 * caller's id) with the queue bound as ?1 and the id as ?2; NULL with the
 * handle's error set. */
sqlite3_stmt *ln__sq_stmt_by_id(sq_be *be, sq_stmt by_rid, sq_stmt by_cid, const char *queue,
                                const char *id) {
    int64_t num = ln__sq_numeric_id(id);
    sqlite3_stmt *s = ln__sq_stmt_get(be, num > 0 ? by_rid : by_cid);
    if (s == NULL) return NULL;
    BIND_TEXT(s, 1, queue);
    if (num > 0)
        sqlite3_bind_int64(s, 2, num);
    else
        BIND_TEXT(s, 2, id);
    return s;
}

int ln__sq_find_job(sq_be *be, const char *queue, const char *id, int64_t *rid, int *state) {
    sqlite3_stmt *s = ln__sq_stmt_by_id(be, S_STATE_OF, S_RID_OF_CID, queue, id);
    if (s == NULL) return LN_EBACKEND;
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        *rid = sqlite3_column_int64(s, 0);
        *state = sqlite3_column_int(s, 1);
        sqlite3_reset(s);
        return 0;
    }
    int err = rc == SQLITE_DONE
                  ? ln__jobs_be_err(&be->base, LN_ENOENT, "queue '%s' has no job '%s'", queue, id)
                  : ln__sq_err(be, rc, "find job");
    sqlite3_reset(s);
    return err;
}

static int dup_col(sqlite3_stmt *s, int col, char **out) {
    const unsigned char *t = sqlite3_column_text(s, col);
    if (t == NULL) {
        *out = NULL;
        return 0;
    }
    *out = ln__strdup((const char *)t);
    return *out != NULL ? 0 : LN_ENOMEM;
}

int ln__sq_read_info(sq_be *be, sqlite3_stmt *s, ln_job_info *info) {
    memset(info, 0, sizeof *info);
    info->priority = sqlite3_column_int(s, 10);
    switch (sqlite3_column_int(s, 2)) {
    case ST_READY:
        info->state = sqlite3_column_int(s, 22) ? LN_JOB_PAUSED
                      : info->priority > 0      ? LN_JOB_PRIORITIZED
                                                : LN_JOB_WAITING;
        break;
    case ST_DELAYED:
        info->state = LN_JOB_DELAYED;
        break;
    case ST_WAITING_CHILDREN:
        info->state = LN_JOB_WAITING_CHILDREN;
        break;
    case ST_ACTIVE:
        info->state = LN_JOB_ACTIVE;
        break;
    case ST_COMPLETED:
        info->state = LN_JOB_COMPLETED;
        break;
    case ST_FAILED:
        info->state = LN_JOB_FAILED;
        break;
    default: /* NULL or a state no lanes writes */
        return ln__sq_corrupt(be, "a job with no valid state", sqlite3_column_int64(s, 0));
    }
    if (sqlite3_column_type(s, 2) == SQLITE_NULL || sqlite3_column_type(s, 3) == SQLITE_NULL ||
        sqlite3_column_type(s, 4) == SQLITE_NULL) /* NOT NULL columns */
        return ln__sq_corrupt(be, "a job with no state, name or data", sqlite3_column_int64(s, 0));
    char **strs[] = {&info->name,     &info->data,        &info->result,    &info->failed_reason,
                     &info->progress, &info->traceparent, &info->tracestate};
    info->id = ln__sq_id_dup(sqlite3_column_int64(s, 0), (const char *)sqlite3_column_text(s, 1));
    for (int i = 0; i < 7; i++)
        if (info->id == NULL || dup_col(s, 3 + i, strs[i]) != 0) {
            ln_job_info_clear(info);
            return ln__jobs_be_err(&be->base, LN_ENOMEM, "out of memory");
        }
    info->lifo = sqlite3_column_int(s, 11);
    info->attempts = sqlite3_column_int(s, 12);
    info->attempts_made = sqlite3_column_int(s, 13);
    info->attempts_started = sqlite3_column_int(s, 14);
    info->stalled = sqlite3_column_int(s, 15);
    info->backoff = sqlite3_column_int(s, 16);
    info->backoff_ms = sqlite3_column_int64(s, 17);
    info->created_ms = sqlite3_column_int64(s, 18);
    info->run_at_ms = sqlite3_column_int64(s, 19);
    info->started_ms = sqlite3_column_int64(s, 20);
    info->finished_ms = sqlite3_column_int64(s, 21);
    return ln__sq_read_backoff(be, s, 23, &info->backoff_jitter, &info->backoff_type);
}

int ln__sq_get(ln__jobs_be *b, const char *queue, const char *id, ln_job_info *info) {
    sq_be *be = (sq_be *)b;
    sqlite3_stmt *s = ln__sq_stmt_by_id(be, S_GET_RID, S_GET_CID, queue, id);
    if (s == NULL) return LN_EBACKEND;
    int rc = sqlite3_step(s), err;
    if (rc == SQLITE_ROW)
        err = ln__sq_read_info(be, s, info);
    else if (rc == SQLITE_DONE)
        err = ln__jobs_be_err(&be->base, LN_ENOENT, "queue '%s' has no job '%s'", queue, id);
    else
        err = ln__sq_err(be, rc, "get");
    sqlite3_reset(s);
    return err;
}

/* S_COUNTS reads the counter of each ln_job_state 0..5 (columns 0..5, NULL
 * for a state the queue never had) and the paused flag (column 6). */
int ln__sq_counts(ln__jobs_be *b, const char *queue, ln_job_counts *c) {
    sq_be *be = (sq_be *)b;
    sqlite3_stmt *s = ln__sq_stmt_get(be, S_COUNTS);
    if (s == NULL) return LN_EBACKEND;
    BIND_TEXT(s, 1, queue);
    int rc = sqlite3_step(s);
    if (rc != SQLITE_ROW) {
        int err = ln__sq_err(be, rc, "counts");
        sqlite3_reset(s);
        return err;
    }
    memset(c, 0, sizeof *c);
    c->waiting = (uint64_t)sqlite3_column_int64(s, LN_JOB_WAITING);
    c->delayed = (uint64_t)sqlite3_column_int64(s, LN_JOB_DELAYED);
    c->prioritized = (uint64_t)sqlite3_column_int64(s, LN_JOB_PRIORITIZED);
    c->active = (uint64_t)sqlite3_column_int64(s, LN_JOB_ACTIVE);
    c->completed = (uint64_t)sqlite3_column_int64(s, LN_JOB_COMPLETED);
    c->failed = (uint64_t)sqlite3_column_int64(s, LN_JOB_FAILED);
    c->waiting_children = (uint64_t)sqlite3_column_int64(s, 7);
    if (sqlite3_column_int(s, 6)) {
        c->paused = c->waiting + c->prioritized;
        c->waiting = c->prioritized = 0;
    }
    sqlite3_reset(s);
    return 0;
}

int ln__sq_is_paused(ln__jobs_be *b, const char *queue, int *paused) {
    sq_be *be = (sq_be *)b;
    sqlite3_stmt *s = ln__sq_stmt_get(be, S_IS_PAUSED);
    if (s == NULL) return LN_EBACKEND;
    BIND_TEXT(s, 1, queue);
    int rc = sqlite3_step(s);
    *paused = rc == SQLITE_ROW && sqlite3_column_int(s, 0) != 0;
    int err = rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : ln__sq_err(be, rc, "paused");
    sqlite3_reset(s);
    return err;
}

int ln__sq_logs(ln__jobs_be *b, const char *queue, const char *id, char ***lines, size_t *n) {
    sq_be *be = (sq_be *)b;
    *lines = NULL;
    *n = 0;
    int64_t rid;
    int state;
    int err = ln__sq_exec(be, S_BEGIN_R);
    if (err != 0) return err;
    if ((err = ln__sq_find_job(be, queue, id, &rid, &state)) != 0) goto done;
    sqlite3_stmt *s = ln__sq_stmt_get(be, S_LOGS);
    if (s == NULL) {
        err = LN_EBACKEND;
        goto done;
    }
    sqlite3_bind_int64(s, 1, rid);
    char **arr = NULL;
    size_t cap = 0, len = 0;
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (len == cap) {
            size_t ncap = cap ? cap * 2 : 16;
            char **p = ln__realloc(arr, ncap * sizeof *arr);
            if (p == NULL) break;
            arr = p;
            cap = ncap;
        }
        if ((arr[len] = ln__strdup((const char *)sqlite3_column_text(s, 0))) == NULL) break;
        len++;
    }
    if (rc == SQLITE_ROW)
        err = ln__jobs_be_err(&be->base, LN_ENOMEM, "out of memory");
    else if (rc != SQLITE_DONE)
        err = ln__sq_err(be, rc, "logs");
    sqlite3_reset(s);
    if (err != 0) {
        ln_jobs_free_lines(arr, len);
    } else {
        *lines = arr;
        *n = len;
    }
done:
    ln__sq_exec(be, S_COMMIT);
    return err;
}

/* Delete job rid (not active) and free the deduplication id it holds (any
 * TTL); *priority gets its priority. what names the caller in an error. */
int ln__sq_remove_row(sq_be *be, const char *queue, int64_t rid, int *priority, const char *what) {
    sqlite3_stmt *s = ln__sq_stmt_get(be, S_REMOVE_DEDUP);
    if (s == NULL) return LN_EBACKEND;
    sqlite3_bind_int64(s, 1, rid);
    BIND_TEXT(s, 2, queue);
    int err = ln__sq_run(be, s, what);
    if (err != 0) return err;
    if ((s = ln__sq_stmt_get(be, S_REMOVE)) == NULL) return LN_EBACKEND;
    sqlite3_bind_int64(s, 1, rid);
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        *priority = sqlite3_column_int(s, 0);
        rc = sqlite3_step(s);
    }
    sqlite3_reset(s);
    return rc == SQLITE_DONE ? 0 : ln__sq_err(be, rc, what);
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

const char *ln__sq_prev_name(int state, int priority) {
    static const char *const prev[] = {[ST_READY] = "waiting",
                                       [ST_DELAYED] = "delayed",
                                       [ST_COMPLETED] = "completed",
                                       [ST_FAILED] = "failed",
                                       [ST_WAITING_CHILDREN] = "waiting-children"};
    if (state == ST_READY && priority > 0) return "prioritized"; /* as the Redis store's */
    return state >= 0 && state <= ST_WAITING_CHILDREN && prev[state] ? prev[state] : "unknown";
}

static int remove_once(sq_be *be, const char *queue, const char *id) {
    int64_t now, rid;
    int state;
    int err = ln__sq_begin_write(be, &now);
    if (err != 0) return err;
    if ((err = ln__sq_find_job(be, queue, id, &rid, &state)) != 0) goto fail;
    if (state == ST_ACTIVE) {
        err = ln__jobs_be_err(&be->base, LN_EBUSY, "job '%s' is active; a worker holds it", id);
        goto fail;
    }
    int iteration = ln__sq_is_current_iteration(be, queue, id);
    if (iteration != 0) {
        err = iteration < 0 ? iteration
                            : ln__jobs_be_err(&be->base, LN_EBUSY,
                                              "job '%s' is its job scheduler's current iteration: "
                                              "remove the scheduler instead",
                                              id);
        goto fail;
    }
    int priority = 0;
    if ((err = ln__sq_remove_row(be, queue, rid, &priority, "remove")) != 0) goto fail;
    err = ln__sq_event(be, queue, "removed", id, "prev", ln__sq_prev_name(state, priority), NULL,
                       NULL, now);
    if (err != 0) goto fail;
    return ln__sq_commit(be);
fail:
    ln__sq_rollback(be);
    return err;
}

int ln__sq_remove(ln__jobs_be *b, const char *queue, const char *id) {
    sq_be *be = (sq_be *)b;
    ln__sq_room_begin(be);
    int err = remove_once(be, queue, id);
    if (ln__sq_retry_for_space(be, err, 1)) err = remove_once(be, queue, id);
    err = ln__sq_relieved(be, err);
    ln__sq_room_end(be);
    return err;
}

/* clean_once and clean_chunked use this: begin a write and delete the
 * finished jobs of state that one clean statement takes (chunk 0: all of
 * them; else at most chunk). On success the transaction stays open with
 * *now and *n (jobs removed) set; on failure it is rolled back. */
static int clean_step(sq_be *be, const char *queue, int state, int64_t age_ms, uint64_t keep,
                      int chunk, int64_t *now, size_t *n) {
    int err = ln__sq_begin_write(be, now);
    if (err != 0) return err;
    int completed = state == LN_JOB_COMPLETED;
    int64_t kept = keep > INT64_MAX ? INT64_MAX : (int64_t)keep;
    int64_t cutoff = age_ms < 0 ? INT64_MAX : *now - age_ms;
    int64_t *parents = NULL; /* failed children's parents it may take */
    size_t np = 0;
    if (!completed &&
        (err = ln__sq_flow_clean_parents(be, queue, kept, cutoff, chunk, &parents, &np)) != 0) {
        ln__sq_rollback(be);
        return err;
    }
    /* first the deduplication ids of the jobs the delete takes */
    const sq_stmt ids[2] = {completed ? S_CLEAN_DEDUP_C : S_CLEAN_DEDUP_F,
                            chunk > 0 ? (completed ? S_CLEAN_CHUNK_C : S_CLEAN_CHUNK_F)
                                      : (completed ? S_CLEAN_COMPLETED : S_CLEAN_FAILED)};
    be->hard_queue = queue; /* its released parents go: no release event */
    for (int i = 0; i < 2; i++) {
        sqlite3_stmt *s = ln__sq_stmt_get(be, ids[i]);
        if (s == NULL) {
            err = LN_EBACKEND;
            break;
        }
        BIND_TEXT(s, 1, queue);
        sqlite3_bind_int64(s, 2, kept);
        sqlite3_bind_int64(s, 3, cutoff);
        if (chunk > 0 || i == 0) sqlite3_bind_int(s, 4, chunk > 0 ? chunk : -1);
        if ((err = ln__sq_run(be, s, i == 0 ? "clean (dedup)" : "clean")) != 0) break;
    }
    *n = (size_t)sqlite3_changes(be->db);
    if (err == 0) err = ln__sq_flow_clean_drop(be, queue, parents, np);
    be->hard_queue = NULL;
    ln__free(parents);
    if (err != 0) ln__sq_rollback(be);
    return err;
}

static int clean_once(sq_be *be, const char *queue, int state, int64_t age_ms, uint64_t keep,
                      size_t *removed) {
    int64_t now;
    size_t n;
    *removed = 0;
    int err = clean_step(be, queue, state, age_ms, keep, 0, &now, &n);
    if (err != 0) return err;
    char count[24];
    snprintf(count, sizeof count, "%zu", n);
    if ((err = ln__sq_event(be, queue, "cleaned", NULL, "count", count, NULL, NULL, now)) != 0) {
        ln__sq_rollback(be);
        return err;
    }
    *removed = n;
    return ln__sq_commit(be);
}

/* clean on a full disk: at most CLEAN_CHUNK jobs per transaction, each
 * followed by a checkpoint, so the WAL is reused and never needs more room
 * than one chunk's pages; a chunk too big for the room left is halved, down
 * to one job, after the emergency part of the reserve was freed. Not
 * atomic as a whole: each chunk is. */
#define CLEAN_CHUNK 32

static int clean_chunked(sq_be *be, const char *queue, int state, int64_t age_ms, uint64_t keep,
                         size_t *removed) {
    *removed = 0;
    int chunk = CLEAN_CHUNK;
    for (;;) {
        int64_t now;
        size_t n = 0;
        int err = clean_step(be, queue, state, age_ms, keep, chunk, &now, &n);
        if (err == 0) err = ln__sq_commit(be);
        if (err == LN_ENOSPC && ln__sq_retry_for_space(be, err, 1)) continue;
        if (err == LN_ENOSPC && chunk > 1) {
            chunk /= 2;
            continue;
        }
        if (err != 0) return err;
        *removed += n;
        ln__sq_relieve(be);
        if (n < (size_t)chunk) return 0;
    }
}

int ln__sq_clean(ln__jobs_be *b, const char *queue, int state, int64_t age_ms, uint64_t keep,
                 size_t *removed) {
    sq_be *be = (sq_be *)b;
    int err = LN_ENOSPC;
    if (!ln__sq_room_begin(be)) { /* a full disk: straight to small transactions */
        err = clean_once(be, queue, state, age_ms, keep, removed);
        if (ln__sq_retry_for_space(be, err, 1))
            err = clean_once(be, queue, state, age_ms, keep, removed);
    }
    if (err == LN_ENOSPC) /* too big a transaction for the room left */
        err = clean_chunked(be, queue, state, age_ms, keep, removed);
    err = ln__sq_relieved(be, err);
    ln__sq_room_end(be);
    return err;
}

int ln__sq_pause(ln__jobs_be *b, const char *queue, int paused) {
    sq_be *be = (sq_be *)b;
    int64_t now;
    int err = ln__sq_begin_write(be, &now);
    if (err != 0) return err;
    sqlite3_stmt *s = ln__sq_stmt_get(be, S_PAUSE);
    if (s == NULL) {
        ln__sq_rollback(be);
        return LN_EBACKEND;
    }
    BIND_TEXT(s, 1, queue);
    sqlite3_bind_int(s, 2, paused);
    if ((err = ln__sq_run(be, s, "pause")) != 0 ||
        (err = ln__sq_event(be, queue, paused ? "paused" : "resumed", NULL, NULL, NULL, NULL, NULL,
                            now)) != 0) {
        ln__sq_rollback(be);
        return err;
    }
    return ln__sq_commit(be);
}

/* Jobs one drain transaction looks at (docs/internals/drain.md): as a
 * Redis drain call, and a write lock held for milliseconds, not for as
 * long as a whole queue takes. */
#define DRAIN_CHUNK 1000

/* A drain walks each index (ready, then delayed jobs) down from its top,
 * DRAIN_CHUNK rows per transaction, each going on below the last row of
 * the one before (key; it starts above every row), so a spared job is
 * looked at once. It looks at most at as many rows as the index held at
 * the start (budget), so jobs added meanwhile cannot keep it going. */
typedef struct drain_walk {
    sq_stmt tie, rest; /* the window's statements (sqlite_sql.c) */
    int64_t key[3];
    int64_t budget;
    int64_t chunk; /* rows per transaction: DRAIN_CHUNK, fewer on a full disk */
} drain_walk;

typedef struct drain_row {
    int64_t rid;
    int64_t parent; /* the flow parent of the queue waiting for it, or 0 */
    int spared;     /* a job scheduler's current iteration: it stays */
} drain_row;

/* Delete a drained job rid (ready or delayed) as remove does. */
static int drain_job(sq_be *be, const char *queue, int64_t rid) {
    int priority;
    return ln__sq_remove_row(be, queue, rid, &priority, "drain");
}

/* Flow parent rid of the queue, once the delete of its last pending child
 * released it (the schema's trigger), goes too, and so on up its tree, as
 * BullMQ's drain removes it; it is not counted, as on Redis. At most
 * LN__PARENT_CLIMB_MAX of them: the parent above stays released (ready),
 * as on Redis, so a transaction's work stays bounded. */
static int drain_released(sq_be *be, const char *queue, int64_t rid) {
    for (int depth = 0; rid > 0 && depth < LN__PARENT_CLIMB_MAX; depth++) {
        sqlite3_stmt *s = ln__sq_stmt_get(be, S_DRAIN_RELEASED);
        if (s == NULL) return LN_EBACKEND;
        sqlite3_bind_int64(s, 1, rid);
        BIND_TEXT(s, 2, queue);
        int rc = sqlite3_step(s);
        if (rc == SQLITE_DONE) return 0; /* it waits for other children */
        if (rc != SQLITE_ROW) return ln__sq_err(be, rc, "drain");
        int64_t up = sqlite3_column_int64(s, 0); /* NULL reads 0 */
        sqlite3_reset(s);
        int err = drain_job(be, queue, rid);
        if (err != 0) return err;
        rid = up;
    }
    return 0;
}

/* The rows of window statement id (at most want) after rows[0..*n), *n
 * growing, and the key of the last into key. */
static int drain_rows(sq_be *be, const char *queue, sq_stmt id, const int64_t from[3], int64_t want,
                      drain_row *rows, size_t *n, int64_t key[3]) {
    sqlite3_stmt *s = ln__sq_stmt_get(be, id);
    if (s == NULL) return LN_EBACKEND;
    BIND_TEXT(s, 1, queue);
    for (int i = 0; i < 3; i++) sqlite3_bind_int64(s, 2 + i, from[i]);
    sqlite3_bind_int64(s, 5, want - (int64_t)*n);
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        LN_ASSERT(*n < (size_t)want);
        drain_row *r = &rows[(*n)++];
        r->rid = sqlite3_column_int64(s, 0);
        key[0] = sqlite3_column_int64(s, 1);
        key[1] = sqlite3_column_int64(s, 2);
        key[2] = r->rid;
        r->spared = sqlite3_column_int(s, 3);
        r->parent = sqlite3_column_int64(s, 4);
    }
    sqlite3_reset(s);
    return rc == SQLITE_DONE ? 0 : ln__sq_err(be, rc, "drain");
}

/* The next rows of walk w (at most want) into rows, *n of them, and the
 * key of the last into key: those of the cursor's key first. */
static int drain_window(sq_be *be, const char *queue, const drain_walk *w, int64_t want,
                        drain_row *rows, size_t *n, int64_t key[3]) {
    *n = 0;
    int err = drain_rows(be, queue, w->tie, w->key, want, rows, n, key);
    if (err == 0 && (int64_t)*n < want)
        err = drain_rows(be, queue, w->rest, w->key, want, rows, n, key);
    return err;
}

/* One transaction of walk w; *removed grows by the jobs it removed. On
 * failure nothing changed, w included, so the step may run again. *more:
 * 0 once the walk is over. */
static int drain_step(sq_be *be, const char *queue, drain_walk *w, drain_row *rows, size_t *removed,
                      int *more) {
    int64_t now, key[3];
    int err = ln__sq_begin_write(be, &now);
    if (err != 0) return err;
    int64_t want = w->budget < w->chunk ? w->budget : w->chunk;
    size_t n = 0, gone = 0;
    err = drain_window(be, queue, w, want, rows, &n, key);
    be->hard_queue = queue; /* its released parents go: no release event */
    for (size_t i = 0; err == 0 && i < n; i++) {
        if (rows[i].spared) continue;
        if ((err = drain_job(be, queue, rows[i].rid)) == 0)
            err = drain_released(be, queue, rows[i].parent);
        gone++;
    }
    be->hard_queue = NULL;
    if (err != 0) {
        ln__sq_rollback(be);
        return err;
    }
    if ((err = ln__sq_commit(be)) != 0) return err;
    *removed += gone;
    memcpy(w->key, key, sizeof key);
    w->budget -= (int64_t)n;
    *more = (int64_t)n == want && w->budget > 0;
    return 0;
}

/* The walks' budgets: the ready and the delayed jobs there now. */
static int drain_sizes(sq_be *be, const char *queue, drain_walk walks[2]) {
    sqlite3_stmt *s = ln__sq_stmt_get(be, S_DRAIN_SIZE);
    if (s == NULL) return LN_EBACKEND;
    BIND_TEXT(s, 1, queue);
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        walks[0].budget = sqlite3_column_int64(s, 0);
        walks[1].budget = sqlite3_column_int64(s, 1);
    }
    sqlite3_reset(s);
    return rc == SQLITE_ROW ? 0 : ln__sq_err(be, rc, "drain");
}

/* Not atomic as a whole (each transaction is): docs/internals/drain.md.
 * On a full disk the transactions are small (as clean_chunked's). */
int ln__sq_drain(ln__jobs_be *b, const char *queue, size_t *removed) {
    sq_be *be = (sq_be *)b;
    *removed = 0;
    drain_row *rows = ln__malloc(DRAIN_CHUNK * sizeof *rows);
    if (rows == NULL) return ln__jobs_be_err(b, LN_ENOMEM, "out of memory");
    int64_t chunk = ln__sq_room_begin(be) ? CLEAN_CHUNK : DRAIN_CHUNK;
    drain_walk walks[2] = {
        {S_DRAIN_READY_TIE, S_DRAIN_READY, {INT64_MAX, INT64_MAX, INT64_MAX}, 0, chunk},
        {S_DRAIN_DELAYED_TIE, S_DRAIN_DELAYED, {INT64_MAX, INT64_MAX, INT64_MAX}, 0, chunk}};
    int err = drain_sizes(be, queue, walks);
    for (size_t i = 0; err == 0 && i < LN_ARRAY_SIZE(walks); i++) {
        drain_walk *w = &walks[i];
        int more = w->budget > 0;
        while (err == 0 && more) {
            err = drain_step(be, queue, w, rows, removed, &more);
            if (err == LN_ENOSPC && ln__sq_retry_for_space(be, err, 1)) {
                err = 0; /* the step changed nothing: again, with more room */
            } else if (err == LN_ENOSPC && w->chunk > 1) {
                w->chunk /= 2;
                err = 0;
            } else {
                err = ln__sq_relieved(be, err);
            }
        }
    }
    ln__free(rows);
    ln__sq_room_end(be);
    return err;
}
