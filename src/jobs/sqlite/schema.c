/* schema.c - the SQLite store: the schema and its migrations, and
 * creating or migrating a store at open.
 *
 * DESIGN
 * One table holds every job (lanes_jobs), keyed by an AUTOINCREMENT rowid
 * that doubles as the public id of store-numbered jobs, so ids are never
 * reused; caller ids live in 'cid' under a partial unique index. Each hot
 * path has its own partial index (ready jobs by priority and order, delayed
 * by due time, active by lease expiry, completed/failed by finish time), so
 * add, take, complete, renew, promote and stalled recovery are each an
 * O(log n) index operation. Counts are not counted: lanes_counts keeps one
 * row per (queue, state) with the number of jobs in it, changed in the
 * same transaction as the jobs it counts, so ln_jobs_counts is six
 * primary-key lookups. Triggers count state changes and deletes, whatever
 * the statement; the three hot moves are counted by their code instead,
 * once per transaction rather than once per job: adds (a trigger per
 * inserted row cost batched adds a third of their rate), takes and
 * completions (sqlite_int.h has the exact rule).
 */
#include "sqlite_int.h"

#include <stdio.h>

/* A trigger's counter change: add d to the counter of row r's key. */
#define COUNT_BY(r, d)                                                                             \
    "INSERT INTO lanes_counts(queue, state, n) VALUES(" r                                          \
    "queue, " SQ_COUNT_KEY(r) ", " d ") ON CONFLICT(queue, state) DO UPDATE SET n = "              \
                              "n + excluded.n"

/* Migrations: steps[v] takes a store from user_version v to v + 1. All
 * steps a store needs run in one transaction with the version bump. */
static const char *const migrations[SQ_SCHEMA_VERSION] = {
    /* 0 -> 1: the initial schema. */
    "CREATE TABLE lanes_queues(name TEXT PRIMARY KEY NOT NULL, "
    "  paused INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID;"
    "CREATE TABLE lanes_jobs("
    "  rid INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  queue TEXT NOT NULL, cid TEXT, name TEXT NOT NULL, data TEXT NOT NULL,"
    "  state INTEGER NOT NULL, priority INTEGER NOT NULL DEFAULT 0,"
    "  seq INTEGER NOT NULL DEFAULT 0, run_at INTEGER NOT NULL,"
    "  delay INTEGER NOT NULL DEFAULT 0, attempts INTEGER NOT NULL DEFAULT 1,"
    "  attempts_made INTEGER NOT NULL DEFAULT 0,"
    "  started INTEGER NOT NULL DEFAULT 0, stalled INTEGER NOT NULL DEFAULT 0,"
    "  backoff INTEGER NOT NULL DEFAULT 0, backoff_ms INTEGER NOT NULL DEFAULT 0,"
    "  token INTEGER NOT NULL DEFAULT 0, lease_until INTEGER,"
    "  keep_c_mode INTEGER NOT NULL DEFAULT 0, keep_c_val INTEGER NOT NULL DEFAULT 0,"
    "  keep_f_mode INTEGER NOT NULL DEFAULT 0, keep_f_val INTEGER NOT NULL DEFAULT 0,"
    "  created_at INTEGER NOT NULL, started_at INTEGER, finished_at INTEGER,"
    "  progress TEXT, result TEXT, reason TEXT, traceparent TEXT, tracestate TEXT);"
    "CREATE UNIQUE INDEX lanes_jobs_cid ON lanes_jobs(queue, cid) "
    "  WHERE cid IS NOT NULL;"
    "CREATE INDEX lanes_jobs_ready ON lanes_jobs(queue, priority, seq) "
    "  WHERE state = 0;"
    "CREATE INDEX lanes_jobs_delayed ON lanes_jobs(queue, run_at) WHERE state = 1;"
    "CREATE INDEX lanes_jobs_active ON lanes_jobs(queue, lease_until) "
    "  WHERE state = 3;"
    "CREATE INDEX lanes_jobs_completed ON lanes_jobs(queue, finished_at) "
    "  WHERE state = 4;"
    "CREATE INDEX lanes_jobs_failed ON lanes_jobs(queue, finished_at) "
    "  WHERE state = 5;"
    "CREATE TABLE lanes_logs(seq INTEGER PRIMARY KEY, rid INTEGER NOT NULL,"
    "  line TEXT NOT NULL);"
    "CREATE INDEX lanes_logs_rid ON lanes_logs(rid, seq);"
    "CREATE TRIGGER lanes_jobs_gone AFTER DELETE ON lanes_jobs BEGIN "
    "  DELETE FROM lanes_logs WHERE rid = old.rid; END;",
    /* 1 -> 2: job counters per (queue, state), counted once from the jobs
     * present (the only full scan, at upgrade time), then kept as
     * sqlite_int.h says. Every change is an upsert adding +-1 (or +-k), so
     * the changes of one transaction may come in any order. Rows whose n
     * falls to 0 stay: one row per queue and state ever used. */
    "CREATE TABLE lanes_counts(queue TEXT NOT NULL, state INTEGER NOT NULL,"
    "  n INTEGER NOT NULL, PRIMARY KEY(queue, state)) WITHOUT ROWID;"
    "INSERT INTO lanes_counts(queue, state, n) SELECT queue, " SQ_COUNT_KEY(
        "") "  , count(*) FROM lanes_jobs GROUP BY 1, 2;"
            "CREATE TRIGGER lanes_jobs_count_move AFTER UPDATE OF state ON lanes_jobs "
            "  WHEN new.state <> old.state AND NOT (old.state = 0 AND new.state = 3)"
            "  AND NOT (old.state = 3 AND new.state = 4) BEGIN " COUNT_BY(
                "old.",
                "-1") ";" COUNT_BY("new.",
                                   "1") "; END;"
                                        "CREATE TRIGGER lanes_jobs_count_delete AFTER DELETE ON "
                                        "lanes_jobs BEGIN " COUNT_BY("old.", "-1") "; END;",
    /* 2 -> 3: a job's own run timeout (ln_job_opts.timeout_ms; 0 = the
     * worker's). */
    "ALTER TABLE lanes_jobs ADD COLUMN timeout_ms INTEGER NOT NULL DEFAULT 0;",
    /* 3 -> 4: deduplication ids (ln_job_opts.dedup_*; add.c). A
     * row holds id for job_rid until expires_at (NULL: until the job
     * completes, fails or is deleted, which the triggers see through the
     * job's deid). */
    "CREATE TABLE lanes_dedup(queue TEXT NOT NULL, id TEXT NOT NULL,"
    "  job_rid INTEGER NOT NULL, expires_at INTEGER,"
    "  PRIMARY KEY(queue, id)) WITHOUT ROWID;"
    "CREATE INDEX lanes_dedup_expiry ON lanes_dedup(queue, expires_at)"
    "  WHERE expires_at IS NOT NULL;"
    "ALTER TABLE lanes_jobs ADD COLUMN deid TEXT;"
    "CREATE TRIGGER lanes_dedup_finish AFTER UPDATE OF state ON lanes_jobs"
    "  WHEN new.deid IS NOT NULL AND new.state >= 4 BEGIN "
    "  DELETE FROM lanes_dedup WHERE queue = new.queue AND id = new.deid"
    "  AND job_rid = new.rid AND expires_at IS NULL; END;"
    "CREATE TRIGGER lanes_dedup_gone AFTER DELETE ON lanes_jobs"
    "  WHEN old.deid IS NOT NULL BEGIN "
    "  DELETE FROM lanes_dedup WHERE queue = old.queue AND id = old.deid"
    "  AND job_rid = old.rid AND expires_at IS NULL; END;",
    /* 4 -> 5: the events of every queue (events.c), newest
     * LN_JOBS_EVENTS_KEEP kept. seq only grows: the newest row is never
     * trimmed, so max(seq) + 1 is never a number handed out before. */
    "CREATE TABLE lanes_events(seq INTEGER PRIMARY KEY, queue TEXT NOT NULL,"
    "  name TEXT NOT NULL, job_id TEXT, fields TEXT, at INTEGER NOT NULL);",
    /* 5 -> 6: the worker runs of each queue and their heartbeats
     * (workers.c, ln_jobs_workers). AUTOINCREMENT: a run that
     * registers again never gets the id of another. */
    "CREATE TABLE lanes_workers(id INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  queue TEXT NOT NULL, name TEXT NOT NULL, host TEXT, pid INTEGER NOT NULL,"
    "  started_at INTEGER NOT NULL, seen_at INTEGER NOT NULL);"
    "CREATE INDEX lanes_workers_seen ON lanes_workers(queue, seen_at);",
    /* 6 -> 7: per-minute metrics of completed and failed jobs
     * (metrics.c; jobs.h "Metrics"), BullMQ's metrics:<type> hash
     * (lanes_metrics: count, prevTS, prevCount, and where the points are)
     * and its metrics:<type>:data list (lanes_metrics_data). */
    "CREATE TABLE lanes_metrics(queue TEXT NOT NULL, type INTEGER NOT NULL,"
    "  count INTEGER NOT NULL, prev_ts INTEGER NOT NULL,"
    "  prev_count INTEGER NOT NULL, seq INTEGER NOT NULL,"
    "  npoints INTEGER NOT NULL, PRIMARY KEY(queue, type)) WITHOUT ROWID;"
    "CREATE TABLE lanes_metrics_data(queue TEXT NOT NULL, type INTEGER NOT NULL,"
    "  seq INTEGER NOT NULL, n INTEGER NOT NULL,"
    "  PRIMARY KEY(queue, type, seq)) WITHOUT ROWID;",
    /* 7 -> 8: job schedulers (sched.c): the schedule, the
     * template (name, data, options), the iteration count ic, the time
     * next_at and number cnt of the current iteration, whose job is
     * "repeat:<id>:<next_at>". lim -1 = no limit. */
    "CREATE TABLE lanes_schedulers(queue TEXT NOT NULL, id TEXT NOT NULL,"
    "  name TEXT NOT NULL, data TEXT NOT NULL, every INTEGER NOT NULL DEFAULT 0,"
    "  pattern TEXT, tz TEXT, start_at INTEGER NOT NULL DEFAULT 0,"
    "  end_at INTEGER NOT NULL DEFAULT 0, lim INTEGER NOT NULL DEFAULT -1,"
    "  offset_ms INTEGER NOT NULL DEFAULT 0, ic INTEGER NOT NULL DEFAULT 1,"
    "  next_at INTEGER NOT NULL, cnt INTEGER NOT NULL DEFAULT 1,"
    "  priority INTEGER NOT NULL DEFAULT 0, attempts INTEGER NOT NULL DEFAULT 1,"
    "  backoff INTEGER NOT NULL DEFAULT 0, backoff_ms INTEGER NOT NULL DEFAULT 0,"
    "  lifo INTEGER NOT NULL DEFAULT 0, keep_c_mode INTEGER NOT NULL DEFAULT 0,"
    "  keep_c_val INTEGER NOT NULL DEFAULT 0, keep_f_mode INTEGER NOT NULL DEFAULT 0,"
    "  keep_f_val INTEGER NOT NULL DEFAULT 0, timeout_ms INTEGER NOT NULL DEFAULT 0,"
    "  PRIMARY KEY(queue, id)) WITHOUT ROWID;"
    "CREATE INDEX lanes_schedulers_next ON lanes_schedulers(queue, next_at);",
    /* 8 -> 9: rate limits and global concurrency (limit.c): the
     * global limits (0 = none) and the current window's counter, one row
     * per queue that has any. */
    "CREATE TABLE lanes_limits(queue TEXT PRIMARY KEY NOT NULL,"
    "  max INTEGER NOT NULL DEFAULT 0, duration INTEGER NOT NULL DEFAULT 0,"
    "  concurrency INTEGER NOT NULL DEFAULT 0,"
    "  win_count INTEGER NOT NULL DEFAULT 0, win_until INTEGER NOT NULL DEFAULT 0)"
    "  WITHOUT ROWID;",
    /* 9 -> 10: flows (flow.c). A parent sits in state 7
     * (waiting-children) with deps = its pending children plus those that
     * failed with fail-parent (a completion needs deps = 0), and pflags
     * bit 16 (SQ_FLOW_PARENT: so deleting other jobs costs nothing here);
     * a child has parent_rid and its failure options (pflags, the
     * LN__FLOW_* bits). lanes_deps: one row per
     * (parent, child), status 0 pending, 1 processed (value = result), 2
     * failed (value = reason), 3 unsuccessful, 5 removed (rdof, not
     * shown). A parent's rows go with it; a pending child deleted stops
     * being a dependency, and releases a parent it was the last one of. */
    "ALTER TABLE lanes_jobs ADD COLUMN parent_rid INTEGER;"
    "ALTER TABLE lanes_jobs ADD COLUMN pflags INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE lanes_jobs ADD COLUMN deps INTEGER NOT NULL DEFAULT 0;"
    "CREATE INDEX lanes_jobs_wchildren ON lanes_jobs(queue, rid) WHERE state = 7;"
    "CREATE TABLE lanes_deps(parent_rid INTEGER NOT NULL, child_rid INTEGER NOT NULL,"
    "  child_key TEXT NOT NULL, status INTEGER NOT NULL DEFAULT 0, value TEXT,"
    "  PRIMARY KEY(parent_rid, child_rid)) WITHOUT ROWID;"
    "CREATE TRIGGER lanes_deps_parent_gone AFTER DELETE ON lanes_jobs"
    "  WHEN old.pflags >= 16 BEGIN "
    "  DELETE FROM lanes_deps WHERE parent_rid = old.rid; END;"
    "CREATE TRIGGER lanes_deps_child_gone AFTER DELETE ON lanes_jobs"
    "  WHEN old.parent_rid IS NOT NULL AND old.state < 4 BEGIN "
    "  UPDATE lanes_jobs SET deps = deps - 1 WHERE rid = old.parent_rid AND"
    "  EXISTS (SELECT 1 FROM lanes_deps WHERE parent_rid = old.parent_rid AND"
    "  child_rid = old.rid AND status = 0);"
    "  DELETE FROM lanes_deps WHERE parent_rid = old.parent_rid AND"
    "  child_rid = old.rid AND status = 0;"
    "  UPDATE lanes_jobs SET state = CASE WHEN delay > 0 THEN 1 ELSE 0 END,"
    "  run_at = " SQ_NOW_SQL " + delay WHERE rid = old.parent_rid AND state = 7"
    "  AND deps = 0; END;",
    /* 10 -> 11: a pending child deleted in any state but completed (a
     * completed child is never pending) stops being a dependency: also
     * one that failed with no failure option, which its parent still
     * waits for (removed or cleaned, as BullMQ's removeJob), and a
     * waiting-children parent that is itself a child. The rows it reads
     * are the same: the lanes_deps row by its key, the parent by rowid. */
    "DROP TRIGGER lanes_deps_child_gone;"
    "CREATE TRIGGER lanes_deps_child_gone AFTER DELETE ON lanes_jobs"
    "  WHEN old.parent_rid IS NOT NULL AND old.state <> 4 BEGIN "
    "  UPDATE lanes_jobs SET deps = deps - 1 WHERE rid = old.parent_rid AND"
    "  EXISTS (SELECT 1 FROM lanes_deps WHERE parent_rid = old.parent_rid AND"
    "  child_rid = old.rid AND status = 0);"
    "  DELETE FROM lanes_deps WHERE parent_rid = old.parent_rid AND"
    "  child_rid = old.rid AND status = 0;"
    "  UPDATE lanes_jobs SET state = CASE WHEN delay > 0 THEN 1 ELSE 0 END,"
    "  run_at = " SQ_NOW_SQL " + delay WHERE rid = old.parent_rid AND state = 7"
    "  AND deps = 0; END;",
    /* 11 -> 12: backoff jitter (0 = none) and a custom backoff type's name
     * (NULL for fixed/exponential), of jobs and of schedulers' templates
     * (jobs.h "Backoff"; docs/internals/backoff.md). */
    "ALTER TABLE lanes_jobs ADD COLUMN backoff_jitter REAL NOT NULL DEFAULT 0;"
    "ALTER TABLE lanes_jobs ADD COLUMN backoff_type TEXT;"
    "ALTER TABLE lanes_schedulers ADD COLUMN backoff_jitter REAL NOT NULL DEFAULT 0;"
    "ALTER TABLE lanes_schedulers ADD COLUMN backoff_type TEXT;",
    /* 12 -> 13: deduplication's next job (ln_job_opts.dedup_keep_last_if_
     * active; dedup_next.c): per (queue, id) the latest add kept
     * while the holder ran, its options as JSON; due once a job holding id
     * finished (set by each connection's TEMP trigger, then added at that
     * commit). A holder deleted before it finished drops it. */
    "CREATE TABLE lanes_dedup_next(queue TEXT NOT NULL, id TEXT NOT NULL,"
    "  name TEXT NOT NULL, data TEXT NOT NULL, opts TEXT NOT NULL,"
    "  due INTEGER NOT NULL DEFAULT 0, PRIMARY KEY(queue, id)) WITHOUT ROWID;"
    "CREATE INDEX lanes_dedup_next_due ON lanes_dedup_next(due) WHERE due = 1;"
    "CREATE TRIGGER lanes_dedup_next_gone AFTER DELETE ON lanes_jobs"
    "  WHEN old.deid IS NOT NULL AND old.state < 4 BEGIN "
    "  DELETE FROM lanes_dedup_next WHERE queue = old.queue AND id = old.deid"
    "  AND due = 0; END;",
    /* 13 -> 14: an unfinished job deleted drops its dedup id's next job
     * unless another job holds the id (BullMQ's removal drops it only
     * when the key names the removed job): removing a job that carries
     * the id without holding it (its TTL ran out, a keep-last holder took
     * the id and runs) keeps the holder's next job. (A removal frees the
     * id before it deletes the job: no row left is the job's own.) */
    "DROP TRIGGER lanes_dedup_next_gone;"
    "CREATE TRIGGER lanes_dedup_next_gone AFTER DELETE ON lanes_jobs"
    "  WHEN old.deid IS NOT NULL AND old.state < 4 BEGIN "
    "  DELETE FROM lanes_dedup_next WHERE queue = old.queue AND id = old.deid"
    "  AND due = 0 AND NOT EXISTS (SELECT 1 FROM lanes_dedup d WHERE d.queue = old.queue"
    "  AND d.id = old.deid AND d.job_rid <> old.rid); END;",
    /* 14 -> 15: the id a kept add was given (dedup_next.c): a rid
     * reserved at the add (the lanes_jobs AUTOINCREMENT sequence moved
     * past it), the kept job's rid when it is added; NULL: a custom id. */
    "ALTER TABLE lanes_dedup_next ADD COLUMN jid INTEGER;",
    /* 15 -> 16: a job's lifo option (ln_job_info.lifo) of its own, where
     * it was read from its place (seq < 0), which a change of priority
     * or a promotion moves without changing the option (edit.c);
     * the jobs stored before take it from their place. */
    "ALTER TABLE lanes_jobs ADD COLUMN lifo INTEGER NOT NULL DEFAULT 0;"
    "UPDATE lanes_jobs SET lifo = 1 WHERE seq < 0;",
};

/* Create or migrate the schema, all under one write lock (the check runs
 * again inside it: another process may have created the store since). */
int ln__sq_migrate(sq_be *be) {
    int err = ln__sq_exec_sql(be, "BEGIN IMMEDIATE", "begin schema check");
    if (err != 0) return err;
    int64_t version = 0;
    if ((err = ln__sq_check_schema(be, &version)) != 0) goto fail;
    for (int64_t v = version; v < SQ_SCHEMA_VERSION; v++)
        if ((err = ln__sq_exec_sql(be, migrations[v], "schema migration")) != 0) goto fail;
    if (version < SQ_SCHEMA_VERSION) {
        char sql[128];
        snprintf(sql, sizeof sql, "PRAGMA user_version = %d; PRAGMA application_id = %d",
                 SQ_SCHEMA_VERSION, SQ_APPLICATION_ID);
        if ((err = ln__sq_exec_sql(be, sql, "schema version")) != 0) goto fail;
    }
    return ln__sq_exec_sql(be, "COMMIT", "commit schema");
fail:
    sqlite3_exec(be->db, "ROLLBACK", NULL, NULL, NULL);
    return err;
}
