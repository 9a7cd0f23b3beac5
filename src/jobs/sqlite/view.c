/* sqlite_page.c - SQLite backend: pages of a listing, by offset
 * (ln_jobs_list) and by cursor (ln_jobs_list_after), and each row's
 * cursor.
 *
 * A cursor is "s<state>.<k1>.<k2>.<rid>": the row's ordering key in its
 * state's index (sqlite_schema.c), k1 = priority (ready rows), k2 = seq,
 * run_at, lease_until or finished_at, and rid, the row's tie-break. The
 * next page is the rows after that key: an index seek per branch of the
 * S_PAGE_* statements (the rows equal to the cursor's leading keys with a
 * larger rid, then those with larger keys), so its cost does not grow with
 * the page's depth as an OFFSET's does. */
#include "sqlite_int.h"

#include "internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

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
