/* sqlite_logs.c - a job's log lines from outside its run (jobs_edit.h
 * ln_jobs_add_log, ln_jobs_clear_logs; BullMQ's queue.addJobLog and
 * job.clearLogs) on the SQLite backend: rows of lanes_logs, walked by its
 * index (rid, seq), inside the edit method's write transaction. */
#include "sqlite_int.h"

#include "../internal.h"

/* Every line of job rid older than its newest keep (keep > 0). */
#define TRIM_LOGS_SQL                                                                              \
    "DELETE FROM lanes_logs WHERE rid = ?1 AND seq < (SELECT seq FROM lanes_logs WHERE rid = ?1 "  \
    "ORDER BY seq DESC LIMIT 1 OFFSET ?2 - 1)"

/* Run sql with rid (?1), the keep count (?2) and the line (?3, if any);
 * with a row, its first column into *out. */
static int run(sq_be *be, const char *sql, int64_t rid, size_t keep, const ln__jobs_edit *e,
               int64_t *out) {
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v2(be->db, sql, -1, &s, NULL);
    if (rc != SQLITE_OK) return ln__sq_err(be, rc, "job logs");
    sqlite3_bind_int64(s, 1, rid);
    sqlite3_bind_int64(s, 2, keep > INT64_MAX ? INT64_MAX : (sqlite3_int64)keep);
    if (e != NULL) sqlite3_bind_text(s, 3, e->data, (int)e->data_len, SQLITE_STATIC);
    rc = sqlite3_step(s);
    if (rc == SQLITE_ROW && out != NULL) *out = sqlite3_column_int64(s, 0);
    if (rc == SQLITE_ROW) rc = sqlite3_step(s);
    sqlite3_finalize(s);
    return rc == SQLITE_DONE ? 0 : ln__sq_err(be, rc, "job logs");
}

int ln__sq_edit_logs(sq_be *be, int64_t rid, ln__jobs_edit *e) {
    int err = 0;
    if (e->op == LN__EDIT_ADD_LOG)
        err = run(be, "INSERT INTO lanes_logs(rid, line) VALUES(?1, ?3)", rid, 0, e, NULL);
    if (err == 0 && e->max > 0)
        err = run(be, TRIM_LOGS_SQL, rid, e->max, NULL, NULL);
    else if (err == 0 && e->op == LN__EDIT_CLEAR_LOGS)
        err = run(be, "DELETE FROM lanes_logs WHERE rid = ?1", rid, 0, NULL, NULL);
    int64_t n = 0;
    if (err == 0 && e->op == LN__EDIT_ADD_LOG)
        err = run(be, "SELECT count(*) FROM lanes_logs WHERE rid = ?1", rid, 0, NULL, &n);
    e->count = (size_t)n;
    return err;
}
