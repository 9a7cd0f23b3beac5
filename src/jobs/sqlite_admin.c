/* sqlite_admin.c - administration calls of the SQLite backend that came
 * with store methods version 4 (backend.h): the queue list and promoting a
 * delayed job. Their statements are prepared per call (both are rare admin
 * calls), so the statement cache of sqlite.c stays as it is. */
#include "sqlite_int.h"

#include "../internal.h"

#include <string.h>

/* Every queue that has a counter row (it held a job: lanes_counts, one row
 * per queue and state, its primary key an index on queue) or a pause flag
 * (lanes_queues). Both reads walk an index, never lanes_jobs. */
#define QUEUES_SQL                                                                                 \
    "SELECT queue FROM lanes_counts UNION SELECT name FROM lanes_queues "                          \
    "ORDER BY 1 LIMIT ?1"

static int collect_names(sq_be *be, sqlite3_stmt *s, size_t max, char ***names, size_t *n) {
    char **arr = ln__calloc(max > 0 ? max : 1, sizeof *arr);
    if (arr == NULL) return ln__jobs_be_err(&be->base, LN_ENOMEM, "out of memory");
    size_t len = 0;
    int rc;
    while (len < max && (rc = sqlite3_step(s)) == SQLITE_ROW) {
        const char *t = (const char *)sqlite3_column_text(s, 0);
        if (t == NULL) continue;
        size_t l = strlen(t);
        if ((arr[len] = ln__malloc(l + 1)) == NULL) {
            ln_jobs_free_lines(arr, len);
            return ln__jobs_be_err(&be->base, LN_ENOMEM, "out of memory");
        }
        memcpy(arr[len++], t, l + 1);
    }
    if (len < max && rc != SQLITE_DONE) {
        ln_jobs_free_lines(arr, len);
        return ln__sq_err(be, rc, "list queues");
    }
    if (len == 0) {
        ln__free(arr);
        arr = NULL;
    }
    *names = arr;
    *n = len;
    return 0;
}

int ln__sq_queues(ln__jobs_be *b, size_t max, char ***names, size_t *n) {
    sq_be *be = (sq_be *)b;
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v2(be->db, QUEUES_SQL, -1, &s, NULL);
    if (rc != SQLITE_OK) return ln__sq_err(be, rc, "list queues");
    sqlite3_bind_int64(s, 1, (sqlite3_int64)max);
    int err = collect_names(be, s, max, names, n);
    sqlite3_finalize(s);
    return err;
}

/* delayed -> ready (waiting or prioritized by its priority, which the
 * counter key reads: the trigger of schema version 2 moves the count),
 * keeping its seq, so it runs after the ready jobs added before it. */
static int promote_row(sq_be *be, int64_t rid, int64_t now) {
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v2(
        be->db, "UPDATE lanes_jobs SET state = 0, run_at = ?2 WHERE rid = ?1", -1, &s, NULL);
    if (rc != SQLITE_OK) return ln__sq_err(be, rc, "promote");
    sqlite3_bind_int64(s, 1, rid);
    sqlite3_bind_int64(s, 2, now);
    rc = sqlite3_step(s);
    sqlite3_finalize(s);
    return rc == SQLITE_DONE ? 0 : ln__sq_err(be, rc, "promote");
}

int ln__sq_promote(ln__jobs_be *b, const char *queue, const char *id) {
    sq_be *be = (sq_be *)b;
    int64_t now, rid = 0;
    int state = -1;
    int err = ln__sq_begin_write(be, &now);
    if (err != 0) return err;
    err = ln__sq_find_job(be, queue, id, &rid, &state);
    if (err == 0 && state != ST_DELAYED)
        err = ln__jobs_be_err(&be->base, LN_EINVAL, "job '%s' is not delayed (it is %s)", id,
                              state == ST_READY ? "waiting" : ln_job_state_name(state));
    if (err == 0) err = promote_row(be, rid, now);
    if (err != 0) {
        ln__sq_rollback(be);
        return err;
    }
    return ln__sq_commit(be);
}
