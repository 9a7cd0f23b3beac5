/* view.c - the SQLite store: reading jobs: get, counts, a job's logs,
 * and pages of a listing by offset (list) and by cursor (list_after). Each
 * is one read; none takes the write lock. */
#include "sqlite_int.h"

#include "internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define BIND_TEXT(s, i, v) sqlite3_bind_text((s), (i), (v), -1, SQLITE_STATIC)

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
        if (info->id == NULL || ln__sq_dup_text(s, 3 + i, strs[i]) != 0) {
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

/* ---- Pages of a listing, by offset
 * (ln_jobs_list) and by cursor (ln_jobs_list_after), and each row's
 * cursor.
 *
 * A cursor is "s<state>.<k1>.<k2>.<rid>": the row's ordering key in its
 * state's index (schema.c), k1 = priority (ready rows), k2 = seq,
 * run_at, lease_until or finished_at, and rid, the row's tie-break. The
 * next page is the rows after that key: an index seek per branch of the
 * S_PAGE_* statements (the rows equal to the cursor's leading keys with a
 * larger rid, then those with larger keys), so its cost does not grow with
 * the page's depth as an OFFSET's does. */

#define COL_SEQ 25
#define COL_RUN_AT 26
#define COL_LEASE 27
#define COL_PRIORITY 10
#define COL_FINISHED 21

/* The second key of state's order (after priority for ready rows). */
static int key_col(int state) {
    switch (state) {
    case LN_JOB_DELAYED:
        return COL_RUN_AT;
    case LN_JOB_ACTIVE:
        return COL_LEASE;
    case LN_JOB_COMPLETED:
    case LN_JOB_FAILED:
        return COL_FINISHED;
    case LN_JOB_WAITING_CHILDREN:
        return -1;
    default:
        return COL_SEQ;
    }
}

/* The cursor of the row s is on, listed as state. NULL: out of memory. */
static char *make_cursor(sqlite3_stmt *s, int state) {
    int kc = key_col(state);
    int64_t k1 = state == LN_JOB_PRIORITIZED || state == LN_JOB_PAUSED
                     ? sqlite3_column_int64(s, COL_PRIORITY)
                     : 0;
    int64_t k2 = kc >= 0 ? sqlite3_column_int64(s, kc) : 0;
    char buf[96];
    snprintf(buf, sizeof buf, "s%d.%" PRId64 ".%" PRId64 ".%" PRId64, state, k1, k2,
             (int64_t)sqlite3_column_int64(s, 0));
    return ln__strdup(buf);
}

/* Parse a cursor of this store for state into k[0..2]. 0 or LN_EINVAL. */
static int parse_cursor(sq_be *be, const char *after, int state, int64_t k[3]) {
    int st = -1, used = 0;
    long long a, b, c;
    if (sscanf(after, "s%d.%lld.%lld.%lld%n", &st, &a, &b, &c, &used) != 4 || after[used] != '\0' ||
        after[0] != 's')
        return ln__jobs_be_err(&be->base, LN_EINVAL,
                               "bad cursor '%.64s' (give the cursor of a row a listing of this "
                               "SQLite store returned)",
                               after);
    if (st != state)
        return ln__jobs_be_err(&be->base, LN_EINVAL,
                               "cursor '%.64s' is from a listing of state %s, not %s", after,
                               ln_job_state_name(st), ln_job_state_name(state));
    k[0] = a;
    k[1] = b;
    k[2] = c;
    return 0;
}

/* Step s (bound) to its end, into *out / *n, each row with its cursor. */
static int read_rows(sq_be *be, sqlite3_stmt *s, int state, ln_job_info **out, size_t *n) {
    ln_job_info *arr = NULL;
    size_t cap = 0, len = 0;
    int rc, err = 0;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (len == cap) {
            size_t ncap = cap ? cap * 2 : 16;
            ln_job_info *p = ln__realloc(arr, ncap * sizeof *arr);
            if (p == NULL) {
                err = ln__jobs_be_err(&be->base, LN_ENOMEM, "out of memory");
                break;
            }
            arr = p;
            cap = ncap;
        }
        if ((err = ln__sq_read_info(be, s, &arr[len])) != 0) break;
        len++;
        if ((arr[len - 1].cursor = make_cursor(s, state)) == NULL) {
            err = ln__jobs_be_err(&be->base, LN_ENOMEM, "out of memory");
            break;
        }
    }
    if (err == 0 && rc != SQLITE_DONE) err = ln__sq_err(be, rc, "list");
    sqlite3_reset(s);
    if (err != 0) {
        ln_job_info_free_array(arr, len);
    } else {
        *out = arr; /* NULL when no row was read */
        *n = len;
    }
    return err;
}

/* One page: by offset (after NULL) or after a cursor. */
static int page(sq_be *be, const char *queue, int state, size_t offset, const char *after,
                size_t limit, ln_job_info **out, size_t *n) {
    static const sq_stmt by_offset[LN_JOB_NSTATES] = {
        [LN_JOB_WAITING] = S_LIST_WAITING,
        [LN_JOB_DELAYED] = S_LIST_DELAYED,
        [LN_JOB_PRIORITIZED] = S_LIST_PRIORITIZED,
        [LN_JOB_ACTIVE] = S_LIST_ACTIVE,
        [LN_JOB_COMPLETED] = S_LIST_COMPLETED,
        [LN_JOB_FAILED] = S_LIST_FAILED,
        [LN_JOB_PAUSED] = S_LIST_READY,
        [LN_JOB_WAITING_CHILDREN] = S_LIST_WAITING_CHILDREN,
    };
    *out = NULL;
    *n = 0;
    int64_t k[3] = {0, 0, 0};
    int err = after != NULL ? parse_cursor(be, after, state, k) : 0;
    if (err != 0) return err;
    if ((err = ln__sq_exec(be, S_BEGIN_R)) != 0) return err; /* one snapshot for flag and rows */
    int paused = 0;
    if ((err = ln__sq_is_paused(&be->base, queue, &paused)) != 0) goto done;
    int ready = state == LN_JOB_WAITING || state == LN_JOB_PRIORITIZED;
    if ((state == LN_JOB_PAUSED && !paused) || (ready && paused)) goto done;
    sqlite3_stmt *s =
        ln__sq_stmt_get(be, after != NULL ? (sq_stmt)(S_PAGE_WAITING + state) : by_offset[state]);
    if (s == NULL) {
        err = LN_EBACKEND;
        goto done;
    }
    sqlite3_bind_text(s, 1, queue, -1, SQLITE_STATIC);
    sqlite3_bind_int64(s, 2, (int64_t)limit);
    if (after != NULL) {
        sqlite3_bind_int64(s, 3, k[1]);
        sqlite3_bind_int64(s, 4, k[2]);
        sqlite3_bind_int64(s, 5, k[0]);
    } else {
        sqlite3_bind_int64(s, 3, offset > INT64_MAX ? INT64_MAX : (int64_t)offset);
    }
    err = read_rows(be, s, state, out, n);
done:
    ln__sq_exec(be, S_COMMIT);
    return err;
}

int ln__sq_list(ln__jobs_be *b, const char *queue, int state, size_t offset, size_t limit,
                ln_job_info **out, size_t *n) {
    return page((sq_be *)b, queue, state, offset, NULL, limit, out, n);
}

int ln__sq_list_after(ln__jobs_be *b, const char *queue, int state, const char *after, size_t limit,
                      ln_job_info **out, size_t *n) {
    return page((sq_be *)b, queue, state, 0, after, limit, out, n);
}
