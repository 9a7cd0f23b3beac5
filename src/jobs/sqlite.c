/* sqlite.c - the SQLite job store: URL, connection, schema and migrations,
 * the statement cache and error mapping. The ops are in sqlite_ops.c (add
 * and administration) and sqlite_work.c (the worker path).
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
 * Every write runs in BEGIN IMMEDIATE: a writer waits for the lock up front
 * (busy_wait below) instead of failing with SQLITE_BUSY when it upgrades.
 * Times come from SQLite's clock (julianday('now') in ms), read once per
 * transaction, so every process on the machine compares leases against the
 * same clock.
 * The database runs in WAL mode, synchronous=NORMAL by default (durable
 * across process crashes, the last commits may roll back on power loss) or
 * FULL with ?sync=full (the WAL is fsynced at every commit).
 *
 * Disk full: a reserve of disk space beside the database keeps finishing,
 * failing, cleaning and removing stored jobs possible on a full disk
 * (sqlite_reserve.c has the design).
 */
#include "sqlite_int.h"

#include "../internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#define NOW_SQL "CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER)"

/* Columns read into ln_job_info by sq_read_info (sqlite_ops.c), in order. */
#define INFO_COLS                                                                                  \
    "rid, cid, state, name, data, CASE WHEN state = 4 THEN "                                       \
    "COALESCE(result, 'null') ELSE result END, reason, progress, traceparent, "                    \
    "tracestate, priority, seq < 0, attempts, attempts_made, started, "                            \
    "stalled, backoff, backoff_ms, created_at, CASE WHEN state = 1 THEN "                          \
    "run_at ELSE created_at + delay END, started_at, "                                             \
    "finished_at, COALESCE((SELECT q.paused FROM lanes_queues q "                                  \
    "WHERE q.name = j.queue), 0)"

#define DONE_STMTS(st)                                                                             \
    "DELETE FROM lanes_jobs WHERE rid IN (SELECT rid FROM lanes_jobs "                             \
    "WHERE queue = ?1 AND state = " #st " ORDER BY finished_at DESC, rid DESC "                    \
    "LIMIT -1 OFFSET ?2) AND finished_at < ?3"

/* DONE_STMTS for at most ?4 jobs (clean on a full disk, one small
 * transaction at a time): the newest ?2 are skipped before the age filter,
 * as there, so each chunk deletes jobs the whole statement would have. */
#define CHUNK_STMTS(st)                                                                            \
    "DELETE FROM lanes_jobs WHERE rid IN (SELECT rid FROM (SELECT rid, "                           \
    "finished_at FROM lanes_jobs WHERE queue = ?1 AND state = " #st " ORDER "                      \
    "BY finished_at DESC, rid DESC LIMIT -1 OFFSET ?2) WHERE finished_at < "                       \
    "?3 LIMIT ?4)"

/* Jobs of queue ?1 in ln_job_state k; NULL (read as 0) if never any. */
#define COUNT_OF(k) "(SELECT n FROM lanes_counts WHERE queue = ?1 AND state = " #k ")"

static const char *const sql_text[S_COUNT_] = {
    [S_BEGIN_W] = "BEGIN IMMEDIATE",
    [S_BEGIN_R] = "BEGIN",
    [S_COMMIT] = "COMMIT",
    [S_ROLLBACK] = "ROLLBACK",
    [S_NOW] = "SELECT " NOW_SQL,
    [S_ADD] = "INSERT INTO lanes_jobs(queue, cid, name, data, state, priority, "
              "run_at, delay, attempts, backoff, backoff_ms, keep_c_mode, "
              "keep_c_val, keep_f_mode, keep_f_val, traceparent, tracestate, "
              "created_at, timeout_ms, deid) VALUES(?1, ?2, ?3, ?4, CASE WHEN ?5 > 0 "
              "THEN 1 ELSE 0 END, ?6, ?7 + ?5, ?5, ?8, ?9, ?10, ?11, ?12, ?13, ?14, "
              "?15, ?16, ?7, ?17, ?18) "
              "ON CONFLICT(queue, cid) WHERE cid IS NOT NULL DO NOTHING",
    [S_ADD_LIFO] = "UPDATE lanes_jobs SET seq = -rid WHERE rid = ?1",
    [S_COUNT] = "INSERT INTO lanes_counts(queue, state, n) VALUES(?1, ?2, ?3) "
                "ON CONFLICT(queue, state) DO UPDATE SET n = n + excluded.n",
    [S_GET_RID] = "SELECT " INFO_COLS " FROM lanes_jobs j WHERE rid = ?2 AND queue = ?1",
    [S_GET_CID] = "SELECT " INFO_COLS " FROM lanes_jobs j WHERE queue = ?1 AND cid = ?2",
    [S_RID_OF_CID] = "SELECT rid, state FROM lanes_jobs WHERE queue = ?1 AND "
                     "cid = ?2",
    [S_COUNTS] =
        "SELECT " COUNT_OF(0) ", " COUNT_OF(1) ", " COUNT_OF(2) ", " COUNT_OF(3) ", " COUNT_OF(
            4) ", " COUNT_OF(5) ", (SELECT "
                                "paused FROM lanes_queues WHERE name = ?1), " COUNT_OF(7),
    [S_LIST_WAITING] = "SELECT " INFO_COLS " FROM lanes_jobs j WHERE queue = "
                       "?1 AND state = 0 AND priority = 0 ORDER BY seq, rid "
                       "LIMIT ?2 OFFSET ?3",
    [S_LIST_PRIORITIZED] = "SELECT " INFO_COLS " FROM lanes_jobs j WHERE "
                           "queue = ?1 AND state = 0 AND priority > 0 ORDER "
                           "BY priority, seq, rid LIMIT ?2 OFFSET ?3",
    [S_LIST_READY] = "SELECT " INFO_COLS " FROM lanes_jobs j WHERE queue = ?1 "
                     "AND state = 0 ORDER BY priority, seq, rid LIMIT ?2 "
                     "OFFSET ?3",
    [S_LIST_DELAYED] = "SELECT " INFO_COLS " FROM lanes_jobs j WHERE queue = "
                       "?1 AND state = 1 ORDER BY run_at, rid LIMIT ?2 "
                       "OFFSET ?3",
    [S_LIST_ACTIVE] = "SELECT " INFO_COLS " FROM lanes_jobs j WHERE queue = "
                      "?1 AND state = 3 ORDER BY lease_until, rid LIMIT ?2 "
                      "OFFSET ?3",
    [S_LIST_COMPLETED] = "SELECT " INFO_COLS " FROM lanes_jobs j WHERE queue "
                         "= ?1 AND state = 4 ORDER BY finished_at DESC, rid "
                         "DESC LIMIT ?2 OFFSET ?3",
    [S_LIST_FAILED] = "SELECT " INFO_COLS " FROM lanes_jobs j WHERE queue = "
                      "?1 AND state = 5 ORDER BY finished_at DESC, rid DESC "
                      "LIMIT ?2 OFFSET ?3",
    [S_LOGS] = "SELECT line FROM lanes_logs WHERE rid = ?1 ORDER BY seq",
    [S_STATE_OF] = "SELECT rid, state FROM lanes_jobs WHERE rid = ?2 AND queue "
                   "= ?1",
    [S_RETRY_ONE] = "UPDATE lanes_jobs SET state = 0, attempts_made = 0, "
                    "reason = NULL, started_at = NULL, finished_at = NULL, "
                    "run_at = ?2 WHERE "
                    "rid = ?1 AND state = 5",
    [S_RETRY_ALL] = "UPDATE lanes_jobs SET state = 0, attempts_made = 0, "
                    "reason = NULL, started_at = NULL, finished_at = NULL, "
                    "run_at = ?2 WHERE "
                    "queue = ?1 AND state = 5",
    [S_REMOVE] = "DELETE FROM lanes_jobs WHERE rid = ?1 AND state <> 3",
    [S_CLEAN_COMPLETED] = DONE_STMTS(4),
    [S_CLEAN_FAILED] = DONE_STMTS(5),
    [S_CLEAN_CHUNK_C] = CHUNK_STMTS(4),
    [S_CLEAN_CHUNK_F] = CHUNK_STMTS(5),
    [S_PAUSE] = "INSERT INTO lanes_queues(name, paused) VALUES(?1, ?2) ON "
                "CONFLICT(name) DO UPDATE SET paused = excluded.paused",
    [S_IS_PAUSED] = "SELECT paused FROM lanes_queues WHERE name = ?1",
    [S_DRAIN_READY] = "DELETE FROM lanes_jobs WHERE queue = ?1 AND state = 0",
    [S_DRAIN_DELAYED] = "DELETE FROM lanes_jobs WHERE queue = ?1 AND state = 1",
    /* S_COMPLETE and S_TAKE: counted by their callers (sqlite_int.h). */
    /* A handler that set no result completes with the JSON null (jobs.h). */
    [S_COMPLETE] = "UPDATE lanes_jobs SET state = 4, result = COALESCE(?4, "
                   "'null'), finished_at = ?3, lease_until = NULL WHERE rid "
                   "= ?1 AND token = ?2 AND state = 3 AND deps = 0 RETURNING "
                   "keep_c_mode, keep_c_val, parent_rid, pflags",
    [S_RETRY_RUN] = "UPDATE lanes_jobs SET state = CASE WHEN ?4 > 0 THEN 1 "
                    "ELSE 0 END, run_at = ?3 + ?4, attempts_made = "
                    "attempts_made + 1, reason = ?5, lease_until = NULL "
                    "WHERE rid = ?1 AND token = ?2 AND state = 3",
    /* Deduplication (sqlite_dedup.c). */
    [S_DEDUP_GET] = "SELECT d.job_rid, d.expires_at, j.state, j.cid FROM "
                    "lanes_dedup d LEFT JOIN lanes_jobs j ON j.rid = d.job_rid "
                    "WHERE d.queue = ?1 AND d.id = ?2",
    [S_DEDUP_PUT] = "INSERT INTO lanes_dedup(queue, id, job_rid, expires_at) "
                    "VALUES(?1, ?2, ?3, ?4) ON CONFLICT(queue, id) DO UPDATE "
                    "SET job_rid = excluded.job_rid, expires_at = "
                    "excluded.expires_at",
    [S_DEDUP_PURGE] = "DELETE FROM lanes_dedup WHERE queue = ?1 AND id IN "
                      "(SELECT id FROM lanes_dedup WHERE queue = ?1 AND "
                      "expires_at <= ?2 LIMIT 16)",
    /* ln_job_delay_until: no attempt used, nothing else changes. */
    [S_DELAY_RUN] = "UPDATE lanes_jobs SET state = 1, run_at = ?3, "
                    "lease_until = NULL WHERE rid = ?1 AND token = ?2 AND "
                    "state = 3",
    [S_FAIL] = "UPDATE lanes_jobs SET state = 5, attempts_made = "
               "attempts_made + 1, reason = ?4, finished_at = ?3, "
               "lease_until = NULL WHERE rid = ?1 AND token = ?2 AND state "
               "= 3 RETURNING keep_f_mode, keep_f_val, parent_rid, pflags",
    [S_DELETE_RID] = "DELETE FROM lanes_jobs WHERE rid = ?1",
    /* Keep the newest ?2: delete the oldest (count + ?3 - ?2), where ?3 is
     * this transaction's completions not yet in lanes_counts. The counter
     * gives the excess in O(log n), so a finish costs O(log n + excess)
     * instead of walking the ?2 rows kept. */
    [S_TRIM_COUNT_C] = "DELETE FROM lanes_jobs WHERE rid IN (SELECT rid FROM "
                       "lanes_jobs WHERE queue = ?1 AND state = 4 ORDER BY "
                       "finished_at ASC, rid ASC LIMIT max(0, "
                       "COALESCE(" COUNT_OF(4) ", 0) + ?3 - ?2))",
    [S_TRIM_COUNT_F] = "DELETE FROM lanes_jobs WHERE rid IN (SELECT rid FROM "
                       "lanes_jobs WHERE queue = ?1 AND state = 5 ORDER BY "
                       "finished_at ASC, rid ASC LIMIT max(0, "
                       "COALESCE(" COUNT_OF(5) ", 0) + ?3 - ?2))",
    [S_TRIM_AGE_C] = "DELETE FROM lanes_jobs WHERE queue = ?1 AND state = 4 "
                     "AND finished_at <= ?2",
    [S_TRIM_AGE_F] = "DELETE FROM lanes_jobs WHERE queue = ?1 AND state = 5 "
                     "AND finished_at <= ?2",
    [S_RENEW] = "UPDATE lanes_jobs SET lease_until = ?3 WHERE rid = ?1 AND "
                "token = ?2 AND state = 3",
    [S_PROMOTE] = "UPDATE lanes_jobs SET state = 0 WHERE queue = ?1 AND "
                  "state = 1 AND run_at <= ?2",
    [S_TAKE] = "UPDATE lanes_jobs SET state = 3, token = token + 1, started = "
               "started + 1, started_at = ?2, lease_until = ?2 + ?3 WHERE "
               "rid IN (SELECT rid FROM lanes_jobs WHERE queue = ?1 AND state "
               "= 0 AND NOT EXISTS (SELECT 1 FROM lanes_queues q WHERE q.name "
               "= ?1 AND q.paused) ORDER BY priority, seq, rid LIMIT ?4) "
               "RETURNING rid, cid, name, data, token, started, "
               "attempts_made, attempts, backoff, backoff_ms, traceparent, "
               "tracestate, priority, seq, timeout_ms",
    /* Only from the index (no table row is read): checks S_TAKE. */
    [S_READY_ANY] = "SELECT EXISTS (SELECT 1 FROM lanes_jobs WHERE queue = ?1 "
                    "AND state = 0) AND NOT EXISTS (SELECT 1 FROM lanes_queues "
                    "q WHERE q.name = ?1 AND q.paused)",
    [S_NEXT_DUE] = "SELECT MIN(run_at) - ?2 FROM lanes_jobs WHERE queue = ?1 "
                   "AND state = 1",
    [S_HAS_WORK] = "SELECT NOT EXISTS (SELECT 1 FROM lanes_queues q WHERE "
                   "q.name = ?1 AND q.paused) AND (EXISTS (SELECT 1 FROM "
                   "lanes_jobs WHERE queue = ?1 AND state = 0) OR EXISTS "
                   "(SELECT 1 FROM lanes_jobs WHERE queue = ?1 AND state = 1 "
                   "AND run_at <= " NOW_SQL "))",
    [S_STALLED] = "UPDATE lanes_jobs SET stalled = stalled + 1, token = token + 1, "
                  "lease_until = NULL, state = CASE WHEN stalled + 1 > ?3 THEN 5 ELSE 0 "
                  "END, attempts_made = CASE WHEN stalled + 1 > ?3 THEN attempts_made "
                  "+ 1 ELSE attempts_made END, reason = CASE WHEN stalled + 1 > ?3 THEN "
                  "?4 ELSE reason END, finished_at = CASE WHEN stalled + 1 > ?3 THEN ?2 "
                  "ELSE finished_at END WHERE queue = ?1 AND state = 3 AND lease_until "
                  "< ?2 RETURNING rid, state, keep_f_mode, keep_f_val, cid, parent_rid, pflags",
    [S_RELEASE] = "UPDATE lanes_jobs SET state = 0, lease_until = NULL, "
                  "started = started - 1 WHERE rid = ?1 AND token = ?2 AND "
                  "state = 3",
    [S_PROGRESS] = "UPDATE lanes_jobs SET progress = ?3 WHERE rid = ?1 AND "
                   "token = ?2 AND state = 3",
    [S_LOG] = "INSERT INTO lanes_logs(rid, line) SELECT rid, ?3 FROM "
              "lanes_jobs WHERE rid = ?1 AND token = ?2 AND state = 3",
    /* Events: fields as a JSON object of strings (jobs.h), jobId apart. */
    [S_EVENT] = "INSERT INTO lanes_events(queue, name, job_id, fields, at) "
                "VALUES(?1, ?2, ?3, CASE WHEN ?4 IS NULL THEN NULL WHEN ?6 IS "
                "NULL THEN json_object(?4, ?5) ELSE json_object(?4, ?5, ?6, "
                "?7) END, ?8)",
    [S_EVENT_TRIM] = "DELETE FROM lanes_events WHERE seq IN (SELECT seq FROM "
                     "lanes_events WHERE seq <= ?1 ORDER BY seq LIMIT ?2)",
    [S_EVENT_PROMOTE] = "INSERT INTO lanes_events(queue, name, job_id, fields, "
                        "at) SELECT ?1, 'waiting', COALESCE(cid, rid), "
                        "'{\"prev\":\"delayed\"}', ?2 FROM lanes_jobs WHERE "
                        "queue = ?1 AND state = 1 AND run_at <= ?2 ORDER BY "
                        "run_at, rid",
    [S_EVENT_RETRY_ALL] = "INSERT INTO lanes_events(queue, name, job_id, "
                          "fields, at) SELECT ?1, 'waiting', COALESCE(cid, "
                          "rid), '{\"prev\":\"failed\"}', ?2 FROM lanes_jobs "
                          "WHERE queue = ?1 AND state = 5 ORDER BY "
                          "finished_at, rid",
    /* Rate limits and global concurrency (sqlite_limit.c). */
    [S_LIMIT_GET] = "SELECT max, duration, concurrency, win_count, win_until "
                    "FROM lanes_limits WHERE queue = ?1",
    [S_LIMIT_COUNT] = "INSERT INTO lanes_limits(queue, win_count, win_until) "
                      "VALUES(?1, ?2, ?3) ON CONFLICT(queue) DO UPDATE SET "
                      "win_count = excluded.win_count, win_until = excluded.win_until",
    [S_LIMIT_RATE] = "INSERT INTO lanes_limits(queue, max, duration) VALUES(?1, "
                     "?2, ?3) ON CONFLICT(queue) DO UPDATE SET max = "
                     "excluded.max, duration = excluded.duration",
    [S_LIMIT_CONC] = "INSERT INTO lanes_limits(queue, concurrency) VALUES(?1, "
                     "?2) ON CONFLICT(queue) DO UPDATE SET concurrency = "
                     "excluded.concurrency",
    [S_LIMIT_ACTIVE] = "SELECT n FROM lanes_counts WHERE queue = ?1 AND state = 3",
    /* Back to the front of its priority: a seq below every ready job's. */
    [S_LIMIT_REQUEUE] = "UPDATE lanes_jobs SET state = 0, lease_until = NULL, "
                        "seq = (SELECT min(0, coalesce(min(r.seq), 0)) - 1 FROM "
                        "lanes_jobs r WHERE r.queue = ?3 AND r.state = 0 AND "
                        "r.priority = lanes_jobs.priority) WHERE rid = ?1 AND "
                        "token = ?2 AND state = 3",
    /* Flows (sqlite_flow.c). */
    [S_LIST_WAITING_CHILDREN] = "SELECT " INFO_COLS " FROM lanes_jobs j WHERE "
                                "queue = ?1 AND state = 7 ORDER BY rid LIMIT ?2 "
                                "OFFSET ?3",
    [S_FLOW_SET] = "UPDATE lanes_jobs SET state = CASE WHEN ?2 > 0 THEN 7 ELSE "
                   "state END, deps = ?2, parent_rid = ?3, pflags = ?4 WHERE rid = ?1",
    [S_DEP_ADD] = "INSERT INTO lanes_deps(parent_rid, child_rid, child_key) "
                  "VALUES(?1, ?2, ?3)",
    [S_DEP_DONE] = "UPDATE lanes_deps SET status = ?3, value = ?4 WHERE "
                   "parent_rid = ?1 AND child_rid = ?2 AND status = 0",
    [S_FLOW_DEPS_DEC] = "UPDATE lanes_jobs SET deps = deps - 1 WHERE rid = ?1",
    /* Out of waiting-children (only) to ready, in its place by rid (older
     * than its children, so ahead of every job added after it), or delayed
     * by its own delay; ?3: even with deps left. */
    [S_FLOW_RELEASE] = "UPDATE lanes_jobs SET state = CASE WHEN delay > 0 THEN 1 "
                       "ELSE 0 END, run_at = ?2 + delay WHERE rid = ?1 AND "
                       "state = 7 AND (?3 OR deps = 0) RETURNING queue, cid, delay",
    [S_FLOW_FAIL_PARENT] = "UPDATE lanes_jobs SET state = 5, reason = ?2, "
                           "finished_at = ?3, attempts_made = attempts_made + 1, "
                           "lease_until = NULL WHERE rid = ?1 AND state IN (0, 1, 7) "
                           "RETURNING queue, cid, parent_rid, pflags, keep_f_mode, "
                           "keep_f_val",
    [S_FLOW_BLOCKED] = "SELECT deps, EXISTS (SELECT 1 FROM lanes_deps WHERE "
                       "parent_rid = ?1 AND status = 3), attempts_made, attempts, "
                       "backoff, backoff_ms FROM lanes_jobs WHERE rid = ?1 AND "
                       "token = ?2 AND state = 3 AND deps > 0",
    [S_FLOW_CHILDREN] = "SELECT child_key, status, value FROM lanes_deps WHERE "
                        "parent_rid = ?1 AND status <> 5 ORDER BY CASE status WHEN 0 THEN 4 ELSE "
                        "status END, child_key LIMIT ?2",
    [S_FLOW_PARENT] = "SELECT p.queue, p.cid, p.rid FROM lanes_jobs c JOIN "
                      "lanes_jobs p ON p.rid = c.parent_rid WHERE c.rid = ?1",
    [S_PENDING] = "SELECT EXISTS (SELECT 1 FROM lanes_jobs WHERE queue = ?1 "
                  "AND state = 0) OR EXISTS (SELECT 1 FROM lanes_jobs WHERE "
                  "queue = ?1 AND state = 1) OR EXISTS (SELECT 1 FROM "
                  "lanes_jobs WHERE queue = ?1 AND state = 3)",
    /* Metrics (sqlite_metrics.c): a type is LN_JOB_COMPLETED or _FAILED;
     * seq is the newest point's, and point i (0 = newest) has seq - i. */
    [S_METRICS_GET] = "SELECT count, prev_ts, prev_count, seq, npoints FROM "
                      "lanes_metrics WHERE queue = ?1 AND type = ?2",
    [S_METRICS_PUT] = "INSERT OR REPLACE INTO lanes_metrics(queue, type, count, "
                      "prev_ts, prev_count, seq, npoints) VALUES(?1, ?2, ?3, ?4, "
                      "?5, ?6, ?7)",
    /* The new points: ?4 at seq ?3, then zeros up to seq ?5. */
    [S_METRICS_PUSH] = "INSERT INTO lanes_metrics_data(queue, type, seq, n) "
                       "WITH RECURSIVE z(i) AS (SELECT ?3 UNION ALL SELECT i + 1 "
                       "FROM z WHERE i < ?5) SELECT ?1, ?2, i, CASE WHEN i = ?3 "
                       "THEN ?4 ELSE 0 END FROM z",
    [S_METRICS_TRIM] = "DELETE FROM lanes_metrics_data WHERE queue = ?1 AND "
                       "type = ?2 AND seq <= ?3",
    [S_METRICS_DATA] = "SELECT n FROM lanes_metrics_data WHERE queue = ?1 AND "
                       "type = ?2 AND seq BETWEEN ?3 AND ?4 ORDER BY seq DESC",
};

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
    /* 3 -> 4: deduplication ids (ln_job_opts.dedup_*; sqlite_dedup.c). A
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
    /* 4 -> 5: the events of every queue (sqlite_events.c), newest
     * LN_JOBS_EVENTS_KEEP kept. seq only grows: the newest row is never
     * trimmed, so max(seq) + 1 is never a number handed out before. */
    "CREATE TABLE lanes_events(seq INTEGER PRIMARY KEY, queue TEXT NOT NULL,"
    "  name TEXT NOT NULL, job_id TEXT, fields TEXT, at INTEGER NOT NULL);",
    /* 5 -> 6: the worker runs of each queue and their heartbeats
     * (sqlite_workers.c, ln_jobs_workers). AUTOINCREMENT: a run that
     * registers again never gets the id of another. */
    "CREATE TABLE lanes_workers(id INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  queue TEXT NOT NULL, name TEXT NOT NULL, host TEXT, pid INTEGER NOT NULL,"
    "  started_at INTEGER NOT NULL, seen_at INTEGER NOT NULL);"
    "CREATE INDEX lanes_workers_seen ON lanes_workers(queue, seen_at);",
    /* 6 -> 7: per-minute metrics of completed and failed jobs
     * (sqlite_metrics.c; jobs.h "Metrics"), BullMQ's metrics:<type> hash
     * (lanes_metrics: count, prevTS, prevCount, and where the points are)
     * and its metrics:<type>:data list (lanes_metrics_data). */
    "CREATE TABLE lanes_metrics(queue TEXT NOT NULL, type INTEGER NOT NULL,"
    "  count INTEGER NOT NULL, prev_ts INTEGER NOT NULL,"
    "  prev_count INTEGER NOT NULL, seq INTEGER NOT NULL,"
    "  npoints INTEGER NOT NULL, PRIMARY KEY(queue, type)) WITHOUT ROWID;"
    "CREATE TABLE lanes_metrics_data(queue TEXT NOT NULL, type INTEGER NOT NULL,"
    "  seq INTEGER NOT NULL, n INTEGER NOT NULL,"
    "  PRIMARY KEY(queue, type, seq)) WITHOUT ROWID;",
    /* 7 -> 8: job schedulers (sqlite_sched.c): the schedule, the
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
    /* 8 -> 9: rate limits and global concurrency (sqlite_limit.c): the
     * global limits (0 = none) and the current window's counter, one row
     * per queue that has any. */
    "CREATE TABLE lanes_limits(queue TEXT PRIMARY KEY NOT NULL,"
    "  max INTEGER NOT NULL DEFAULT 0, duration INTEGER NOT NULL DEFAULT 0,"
    "  concurrency INTEGER NOT NULL DEFAULT 0,"
    "  win_count INTEGER NOT NULL DEFAULT 0, win_until INTEGER NOT NULL DEFAULT 0)"
    "  WITHOUT ROWID;",
    /* 9 -> 10: flows (sqlite_flow.c). A parent sits in state 7
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
    "  run_at = " NOW_SQL " + delay WHERE rid = old.parent_rid AND state = 7"
    "  AND deps = 0; END;",
};

/* ---------------------------------------------------------------- errors */

static int map_rc(sqlite3 *db, int rc) {
    int sys = db != NULL ? sqlite3_system_errno(db) : 0;
    switch (rc & 0xff) {
    case SQLITE_FULL:
        return LN_ENOSPC;
    case SQLITE_NOMEM:
        return LN_ENOMEM;
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
        return LN_ECORRUPT;
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_AUTH:
        return LN_EACCES;
    case SQLITE_CANTOPEN:
        return sys == EACCES || sys == EPERM || sys == EROFS ? LN_EACCES : LN_EIO;
    case SQLITE_IOERR:
        return sys == ENOSPC ? LN_ENOSPC : LN_EIO;
    default:
        return LN_EBACKEND;
    }
}

int ln__sq_corrupt(sq_be *be, const char *what, long long rid) {
    char row[48] = "";
    if (rid != 0) snprintf(row, sizeof row, " (job row %lld)", rid);
    return ln__jobs_be_err(&be->base, LN_ECORRUPT,
                           "store is corrupt: %s%s; restore it from a copy "
                           "(PRAGMA integrity_check says more)",
                           what, row);
}

int ln__sq_err(sq_be *be, int rc, const char *what) {
    const char *msg = be->db != NULL ? sqlite3_errmsg(be->db) : sqlite3_errstr(rc);
    int sys = be->db != NULL ? sqlite3_system_errno(be->db) : 0;
    char ebuf[128];
    if (sys != 0 && (rc & 0xff) != SQLITE_BUSY)
        return ln__jobs_be_err(&be->base, map_rc(be->db, rc), "sqlite: %s: %s (%s)", what, msg,
                               strerror_r(sys, ebuf, sizeof ebuf));
    return ln__jobs_be_err(&be->base, map_rc(be->db, rc), "sqlite: %s: %s", what, msg);
}

/* ------------------------------------------------------------ statements */

const char *ln__sq_sql_text(sq_stmt id) {
    return id >= 0 && id < S_COUNT_ ? sql_text[id] : NULL;
}

sqlite3_stmt *ln__sq_stmt_get(sq_be *be, sq_stmt id) {
    sqlite3_stmt *s = be->st[id];
    if (s != NULL) {
        sqlite3_reset(s);
        sqlite3_clear_bindings(s);
        return s;
    }
    int rc = sqlite3_prepare_v3(be->db, sql_text[id], -1, SQLITE_PREPARE_PERSISTENT, &s, NULL);
    if (rc != SQLITE_OK) {
        ln__sq_err(be, rc, "prepare");
        return NULL;
    }
    be->st[id] = s;
    return s;
}

int ln__sq_run(sq_be *be, sqlite3_stmt *s, const char *what) {
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
    }
    if (rc != SQLITE_DONE) {
        rc = ln__sq_err(be, rc, what);
        sqlite3_reset(s);
        return rc;
    }
    sqlite3_reset(s);
    return 0;
}

int ln__sq_exec(sq_be *be, sq_stmt id) {
    sqlite3_stmt *s = ln__sq_stmt_get(be, id);
    if (s == NULL) return LN_EBACKEND;
    return ln__sq_run(be, s, sql_text[id]);
}

int ln__sq_begin_write(sq_be *be, int64_t *now_ms) {
    int err = ln__sq_exec(be, S_BEGIN_W);
    if (err != 0) return err;
    sqlite3_stmt *s = ln__sq_stmt_get(be, S_NOW);
    if (s == NULL || sqlite3_step(s) != SQLITE_ROW) {
        err = s != NULL ? ln__sq_err(be, sqlite3_errcode(be->db), "clock") : LN_EBACKEND;
        ln__sq_rollback(be);
        return err;
    }
    *now_ms = sqlite3_column_int64(s, 0);
    sqlite3_reset(s);
    return 0;
}

int ln__sq_count(sq_be *be, const char *queue, int state, int64_t delta) {
    if (delta == 0) return 0;
    sqlite3_stmt *s = ln__sq_stmt_get(be, S_COUNT);
    if (s == NULL) return LN_EBACKEND;
    sqlite3_bind_text(s, 1, queue, -1, SQLITE_STATIC);
    sqlite3_bind_int(s, 2, state);
    sqlite3_bind_int64(s, 3, delta);
    return ln__sq_run(be, s, "count jobs");
}

int ln__sq_commit(sq_be *be) {
    int err = ln__sq_exec(be, S_COMMIT);
    if (err != 0) ln__sq_rollback(be);
    return err;
}

void ln__sq_rollback(sq_be *be) {
    if (sqlite3_get_autocommit(be->db)) return;
    /* Keep the first error's text: ROLLBACK's own failure adds nothing. */
    char saved[LN__JOBS_ERRMSG_MAX];
    memcpy(saved, be->base.errmsg, sizeof saved);
    sqlite3_exec(be->db, "ROLLBACK", NULL, NULL, NULL);
    memcpy(be->base.errmsg, saved, sizeof saved);
}

int64_t ln__sq_numeric_id(const char *id) {
    int64_t v = 0;
    if (*id == '\0' || *id == '0') return 0;
    for (const char *p = id; *p; p++) {
        if (*p < '0' || *p > '9' || v > (INT64_MAX - 9) / 10) return 0;
        v = v * 10 + (*p - '0');
    }
    return v;
}

/* ------------------------------------------------------------- open/close */

static void sq_close(ln__jobs_be *b, int forked) {
    sq_be *be = (sq_be *)b;
    if (be->reserve_fd >= 0) close(be->reserve_fd);
    if (!forked) {
        for (int i = 0; i < S_COUNT_; i++) sqlite3_finalize(be->st[i]);
        sqlite3_close_v2(be->db);
    }
    /* After fork() the connection belongs to the parent: finalizing or
     * closing it here could checkpoint or unlink its WAL. It is leaked. */
    ln__free(be);
}

/* No wait_open / pipe_open: idle workers poll, and the front gives the
 * worker its synchronous pipe (store.c). Events: sqlite_events.c. */
static const ln__store_methods sq_methods = {
    .version = LN__STORE_METHODS_VERSION,
    .name = "sqlite",
    .close = sq_close,
    .add = ln__sq_add,
    .get = ln__sq_get,
    .counts = ln__sq_counts,
    .list = ln__sq_list,
    .logs = ln__sq_logs,
    .retry = ln__sq_retry,
    .remove = ln__sq_remove,
    .clean = ln__sq_clean,
    .pause = ln__sq_pause,
    .is_paused = ln__sq_is_paused,
    .drain = ln__sq_drain,
    .step = ln__sq_step,
    .recover_stalled = ln__sq_recover_stalled,
    .release = ln__sq_release,
    .progress = ln__sq_progress,
    .log = ln__sq_log,
    .pending = ln__sq_pending,
    .queues = ln__sq_queues,
    .promote = ln__sq_promote,
    .events_open = ln__sq_events_open,
    .workers = ln__sq_workers,
    .worker_beat = ln__sq_worker_beat,
    .metrics = ln__sq_metrics,
    .cancel = ln__sq_cancel,
    .cancel_poll = ln__sq_cancel_poll,
    .sched_upsert = ln__sq_sched_upsert,
    .sched_remove = ln__sq_sched_remove,
    .sched_get = ln__sq_sched_get,
    .sched_list = ln__sq_sched_list,
    .sched_taken = NULL, /* inside the take: ln__sq_sched_taken */
    .limits = ln__sq_limits,
    .add_flow = ln__sq_add_flow,
    .children = ln__sq_children,
};

/* Split "sqlite:PATH?k=v&k=v" into a path (ln__malloc'd) and settings. */
static int parse_url(sq_be *be, const char *url, char **path, unsigned *busy_ms) {
    const char *p = url + strlen("sqlite:");
    if (strncmp(p, "//", 2) == 0) p += 2; /* sqlite:///abs/path */
    const char *q = strchr(p, '?');
    size_t plen = q != NULL ? (size_t)(q - p) : strlen(p);
    if (plen == 0)
        return ln__jobs_be_err(&be->base, LN_EINVAL, "sqlite URL '%s' has no file path", url);
    while (q != NULL) {
        const char *k = q + 1;
        q = strchr(k, '&');
        size_t klen = q != NULL ? (size_t)(q - k) : strlen(k);
        char kv[64];
        if (klen >= sizeof kv)
            return ln__jobs_be_err(&be->base, LN_EINVAL, "sqlite URL parameter too long in '%s'",
                                   url);
        memcpy(kv, k, klen);
        kv[klen] = '\0';
        char *end;
        if (strcmp(kv, "sync=normal") == 0) {
            be->full_sync = 0;
        } else if (strcmp(kv, "sync=full") == 0) {
            be->full_sync = 1;
        } else if (strncmp(kv, "busy_timeout=", 13) == 0 && kv[13] != '\0' &&
                   strtoul(kv + 13, &end, 10) <= 3600000 && *end == '\0' && kv[13] != '-') {
            *busy_ms = (unsigned)strtoul(kv + 13, NULL, 10);
        } else if (strcmp(kv, "events=none") == 0 || strcmp(kv, "events=outcomes") == 0 ||
                   strcmp(kv, "events=all") == 0) {
            be->events = kv[7] == 'n'   ? SQ_EVENTS_NONE
                         : kv[7] == 'o' ? SQ_EVENTS_OUTCOMES
                                        : SQ_EVENTS_ALL;
        } else if (strncmp(kv, "reserve=", 8) == 0 && kv[8] >= '0' && kv[8] <= '9' &&
                   strtoll(kv + 8, &end, 10) <= (1LL << 40) && *end == '\0') {
            be->reserve_bytes = strtoll(kv + 8, NULL, 10);
        } else {
            return ln__jobs_be_err(&be->base, LN_EINVAL,
                                   "unknown or invalid sqlite URL parameter "
                                   "'%s' (known: sync=normal|full, "
                                   "busy_timeout=MS, reserve=BYTES, "
                                   "events=none|outcomes|all)",
                                   kv);
        }
    }
    *path = ln__malloc(plen + 1);
    if (*path == NULL) return LN_ENOMEM;
    memcpy(*path, p, plen);
    (*path)[plen] = '\0';
    return 0;
}

int ln__sq_pragma_int(sq_be *be, const char *sql, int64_t *out) {
    sqlite3_stmt *s;
    int rc = sqlite3_prepare_v2(be->db, sql, -1, &s, NULL);
    if (rc != SQLITE_OK) return ln__sq_err(be, rc, sql);
    rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) *out = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : ln__sq_err(be, rc, sql);
}

static int exec_sql(sq_be *be, const char *sql, const char *what) {
    int rc = sqlite3_exec(be->db, sql, NULL, NULL, NULL);
    return rc == SQLITE_OK ? 0 : ln__sq_err(be, rc, what);
}

/* Create or migrate the schema, all under one write lock (the check runs
 * again inside it: another process may have created the store since). */
static int migrate(sq_be *be) {
    int err = exec_sql(be, "BEGIN IMMEDIATE", "begin schema check");
    if (err != 0) return err;
    int64_t version = 0;
    if ((err = ln__sq_check_schema(be, &version)) != 0) goto fail;
    for (int64_t v = version; v < SQ_SCHEMA_VERSION; v++)
        if ((err = exec_sql(be, migrations[v], "schema migration")) != 0) goto fail;
    if (version < SQ_SCHEMA_VERSION) {
        char sql[128];
        snprintf(sql, sizeof sql, "PRAGMA user_version = %d; PRAGMA application_id = %d",
                 SQ_SCHEMA_VERSION, SQ_APPLICATION_ID);
        if ((err = exec_sql(be, sql, "schema version")) != 0) goto fail;
    }
    return exec_sql(be, "COMMIT", "commit schema");
fail:
    sqlite3_exec(be->db, "ROLLBACK", NULL, NULL, NULL);
    return err;
}

/* Waiting for a lock. SQLite calls this when another connection holds the
 * lock a statement needs (in WAL mode: the write lock, taken by BEGIN
 * IMMEDIATE), with count = 0, 1, 2, ... for the attempts of one wait; 1
 * means "try again", 0 gives up with SQLITE_BUSY. sqlite3_busy_timeout's
 * handler sleeps 1, 2, 5, 10, ... 100 ms between attempts: an add that
 * meets a worker's 100 us transaction would sleep >= 1 ms, and with it
 * every thread queued on the handle's mutex (a convoy the write-path
 * service measured as a tail of tens of ms). Here the sleeps start at 50 us
 * and double up to 2 ms: a writer notices a released lock within about the
 * time it has waited so far, and never more than 2 ms late. The total stays
 * bounded by busy_ms, measured from the first call of this wait. */
#define BUSY_FIRST_NS 50000u /* 50 us */
#define BUSY_MAX_NS 2000000u /* 2 ms */

static int busy_wait(void *arg, int count) {
    sq_be *be = arg;
    uint64_t now = ln__now_ns();
    if (count == 0) be->busy_since_ns = now;
    uint64_t waited = now - be->busy_since_ns;
    uint64_t limit = (uint64_t)be->busy_ms * 1000000u;
    if (waited >= limit) return 0;
    uint64_t step = count < 6 ? (uint64_t)BUSY_FIRST_NS << count : BUSY_MAX_NS;
    if (step > BUSY_MAX_NS) step = BUSY_MAX_NS;
    if (step > limit - waited) step = limit - waited;
    struct timespec ts = {0, (long)step};
    nanosleep(&ts, NULL); /* a signal only shortens one step */
    return 1;
}

static int open_db(sq_be *be, const char *path) {
    int rc = sqlite3_open_v2(path, &be->db,
                             SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX |
                                 SQLITE_OPEN_EXRESCODE,
                             NULL);
    if (rc != SQLITE_OK) {
        int err = ln__sq_open_denied(be, path);
        if (err != 0) return err;
        err = ln__sq_err(be, rc, "open");
        size_t len = strlen(be->base.errmsg);
        snprintf(be->base.errmsg + len, sizeof be->base.errmsg - len, " [%s]", path);
        return err;
    }
    sqlite3_busy_handler(be->db, busy_wait, be);
    sqlite3_extended_result_codes(be->db, 1);
    return 0;
}

/* journal_mode=WAL returns the mode in effect; anything else means the
 * file cannot do WAL (e.g. in-memory): refuse rather than run unsafely.
 * Switching a new file to WAL needs it to itself, and SQLite reports
 * "database is locked" at once, without the busy handler, while another
 * process is opening the same new file: retry for up to busy_ms. */
static int switch_to_wal(sq_be *be, const char *path) {
    sqlite3_stmt *s;
    int wal = 0, rc;
    uint64_t give_up = ln__now_ns() + (uint64_t)be->busy_ms * 1000000u;
    for (;;) {
        rc = sqlite3_prepare_v2(be->db, "PRAGMA journal_mode=WAL", -1, &s, NULL);
        if (rc == SQLITE_OK) {
            rc = sqlite3_step(s);
            wal = rc == SQLITE_ROW && strcmp((const char *)sqlite3_column_text(s, 0), "wal") == 0;
            sqlite3_finalize(s);
        }
        int busy = (rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED;
        if (!busy || ln__now_ns() >= give_up) break;
        struct timespec pause = {0, 1000000}; /* 1 ms */
        nanosleep(&pause, NULL);
    }
    if (rc != SQLITE_ROW) return ln__sq_err(be, rc, "journal_mode");
    if (!wal)
        return ln__jobs_be_err(&be->base, LN_EINVAL, "sqlite: '%s' cannot use WAL mode", path);
    return 0;
}

/* Everything after the open: checks, WAL, schema. */
static int setup(sq_be *be, const char *path) {
    /* Before anything writes, in one read transaction: one snapshot for
     * every check, while another process may be creating the store. */
    int64_t version;
    int err = exec_sql(be, "BEGIN", "begin store check");
    if (err == 0) err = ln__sq_check_schema(be, &version);
    if (err == 0) err = ln__sq_check_pages(be, path);
    sqlite3_exec(be->db, "COMMIT", NULL, NULL, NULL);
    if (err == 0) err = switch_to_wal(be, path);
    if (err == 0)
        err = exec_sql(be, be->full_sync ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL",
                       "synchronous");
    if (err == 0) err = migrate(be);
    return err;
}

static int configure(sq_be *be, const char *path, unsigned busy_ms) {
    be->busy_ms = busy_ms;
    int err = open_db(be, path);
    if (err == 0) err = setup(be, path);
    /* A store closed while its disk filled up may need room even to be
     * read (SQLite's PATH-shm): that is what the reserve is for. */
    if (err == LN_ENOSPC && ln__sq_reserve_free(path)) {
        sqlite3_close_v2(be->db);
        be->db = NULL;
        err = open_db(be, path);
        if (err == 0) err = setup(be, path);
    }
    if (err == 0) err = ln__sq_reserve_open(be, path);
    return err;
}

int ln__jobs_sqlite_open(ln__jobs_be **out, const char *url, const ln_jobs_opts *opts, char *errmsg,
                         size_t errmsg_size) {
    sq_be *be = ln__calloc(1, sizeof *be);
    if (be == NULL) {
        snprintf(errmsg, errmsg_size, "out of memory");
        return LN_ENOMEM;
    }
    be->base.methods = &sq_methods;
    be->reserve_fd = -1;
    be->reserve_bytes = -1; /* sized to the volume */
    be->events = SQ_EVENTS_OUTCOMES;
    char *path = NULL;
    unsigned busy_ms = opts->busy_timeout_ms;
    int err = parse_url(be, url, &path, &busy_ms);
    if (err == 0) err = configure(be, path, busy_ms);
    ln__free(path);
    if (err != 0) {
        snprintf(errmsg, errmsg_size, "%s", be->base.errmsg);
        sq_close(&be->base, 0);
        return err;
    }
    *out = &be->base;
    return 0;
}
