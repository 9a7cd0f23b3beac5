/* sqlite_logs.c - a job's log lines from outside its run (jobs_edit.h
 * ln_jobs_add_log, ln_jobs_clear_logs; BullMQ's queue.addJobLog and
 * job.clearLogs) on the SQLite backend: rows of lanes_logs, walked by its
 * index (rid, seq), inside the edit method's write transaction. */
#include "sqlite_int.h"

#include "internal.h"

/* Every line of job rid older than its newest keep (keep > 0). */
#define TRIM_LOGS_SQL                                                                              \
    "DELETE FROM lanes_logs WHERE rid = ?1 AND seq < (SELECT seq FROM lanes_logs WHERE rid = ?1 "  \
    "ORDER BY seq DESC LIMIT 1 OFFSET ?2 - 1)"

int ln__sq_edit_logs(sq_be *be, int64_t rid, ln__jobs_edit *e) {
    int64_t keep = e->max > INT64_MAX ? INT64_MAX : (int64_t)e->max;
    int err = 0;
    if (e->op == LN__EDIT_ADD_LOG)
        err = ln__sq_run_once(be, "job logs", NULL,
                              "INSERT INTO lanes_logs(rid, line) VALUES(?1, ?2)", "id", rid,
                              e->data, e->data_len);
    if (err == 0 && keep > 0)
        err = ln__sq_run_once(be, "job logs", NULL, TRIM_LOGS_SQL, "ii", rid, keep);
    else if (err == 0 && e->op == LN__EDIT_CLEAR_LOGS)
        err = ln__sq_run_once(be, "job logs", NULL, "DELETE FROM lanes_logs WHERE rid = ?1", "i",
                              rid);
    int64_t n = 0;
    if (err == 0 && e->op == LN__EDIT_ADD_LOG)
        err = ln__sq_run_once(be, "job logs", &n, "SELECT count(*) FROM lanes_logs WHERE rid = ?1",
                              "i", rid);
    e->count = (size_t)n;
    return err;
}
