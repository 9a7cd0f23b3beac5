/* sql.c - the SQLite store: the SQL of every statement the store
 * prepares once and reuses (sq_stmt in sqlite_int.h; the statement cache
 * is in store.c). */
#include "sqlite_int.h"

/* S_STALLED: the job of the row (of queue ?1) lapsed more than ?3 times
 * and is not repeatable, so it fails; a repeatable one goes back to ready
 * however often it stalled, as BullMQ's stalled check (its id
 * "repeat:<sid>:<digits>" and scheduler sid of the queue exists: the
 * shape the take's ln__sq_sched_taken reads; this store has no legacy
 * repeatable jobs). One primary-key lookup, past the limit only. */
#define STALL_TRIMMED "rtrim(lanes_jobs.cid, '0123456789')"
#define STALL_FAILS                                                                                \
    "(stalled + 1 > ?3 AND NOT (lanes_jobs.cid IS NOT NULL AND substr(lanes_jobs.cid, 1, 7) = "    \
    "'repeat:' AND length(" STALL_TRIMMED ") < length(lanes_jobs.cid) AND substr(" STALL_TRIMMED   \
    ", -1) = ':' AND EXISTS (SELECT 1 FROM lanes_schedulers s WHERE s.queue = ?1 "                 \
    "AND s.id = substr(" STALL_TRIMMED ", 8, length(" STALL_TRIMMED ") - 8))))"

/* Columns read into ln_job_info by ln__sq_read_info (view.c), in order. */
#define INFO_COLS                                                                                  \
    "rid, cid, state, name, data, CASE WHEN state = 4 THEN "                                       \
    "COALESCE(result, 'null') ELSE result END, reason, progress, traceparent, "                    \
    "tracestate, priority, lifo, attempts, attempts_made, started, "                               \
    "stalled, backoff, backoff_ms, created_at, CASE WHEN state = 1 THEN "                          \
    "run_at ELSE created_at + delay END, started_at, "                                             \
    "finished_at, COALESCE((SELECT q.paused FROM lanes_queues q "                                  \
    "WHERE q.name = j.queue), 0), backoff_jitter, backoff_type"

/* A listing's rows: INFO_COLS, then the ordering keys a cursor is made of
 * (columns 25..27; view.c), of queue ?1. */
#define LIST_FROM                                                                                  \
    "SELECT " INFO_COLS ", j.seq AS k_seq, j.run_at AS k_run, j.lease_until AS k_lease FROM "      \
    "lanes_jobs j WHERE queue = ?1 AND "

/* A job's place when it goes back in line: the front of its priority
 * with its lifo option (as its add placed it), else the back. */
#define SEQ_BY_LIFO "seq = CASE WHEN lifo THEN -rid ELSE 0 END"

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

/* A clean frees the deduplication id (held with a TTL: a finish freed
 * any other) of each job DONE_STMTS (?4 = -1) or CHUNK_STMTS (?4 = the
 * chunk) is about to delete, as BullMQ's clean removes the key that still
 * names the job: the queue's TTL rows by their index, each job by rowid. */
#define CLEAN_DEDUP(st)                                                                            \
    "DELETE FROM lanes_dedup WHERE queue = ?1 AND expires_at IS NOT NULL AND "                     \
    "job_rid IN (SELECT rid FROM (SELECT rid, finished_at FROM lanes_jobs WHERE "                  \
    "queue = ?1 AND state = " #st " ORDER BY finished_at DESC, rid DESC LIMIT -1 "                 \
    "OFFSET ?2) WHERE finished_at < ?3 LIMIT ?4) AND id = (SELECT deid FROM "                      \
    "lanes_jobs WHERE rid = lanes_dedup.job_rid)"

/* Jobs of queue ?1 in ln_job_state k; NULL (read as 0) if never any. */
#define COUNT_OF(k) "(SELECT n FROM lanes_counts WHERE queue = ?1 AND state = " #k ")"

static const char *const sql_text[S_COUNT_] = {
    [S_BEGIN_W] = "BEGIN IMMEDIATE",
    [S_BEGIN_R] = "BEGIN",
    [S_COMMIT] = "COMMIT",
    [S_ROLLBACK] = "ROLLBACK",
    [S_NOW] = "SELECT " SQ_NOW_SQL,
    [S_ADD] = "INSERT INTO lanes_jobs(queue, cid, name, data, state, priority, "
              "run_at, delay, attempts, backoff, backoff_ms, keep_c_mode, "
              "keep_c_val, keep_f_mode, keep_f_val, traceparent, tracestate, "
              "created_at, timeout_ms, deid) VALUES(?1, ?2, ?3, ?4, CASE WHEN ?5 > 0 "
              "THEN 1 ELSE 0 END, ?6, ?7 + ?5, ?5, ?8, ?9, ?10, ?11, ?12, ?13, ?14, "
              "?15, ?16, ?7, ?17, ?18) "
              "ON CONFLICT(queue, cid) WHERE cid IS NOT NULL DO NOTHING",
    [S_ADD_LIFO] = "UPDATE lanes_jobs SET seq = -rid, lifo = 1 WHERE rid = ?1",
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
    [S_LIST_WAITING] = LIST_FROM "state = 0 AND priority = 0 ORDER BY seq, rid "
                                 "LIMIT ?2 OFFSET ?3",
    [S_LIST_PRIORITIZED] = LIST_FROM "state = 0 AND priority > 0 ORDER BY priority, "
                                     "seq, rid LIMIT ?2 OFFSET ?3",
    [S_LIST_READY] = LIST_FROM "state = 0 ORDER BY priority, seq, rid LIMIT ?2 OFFSET ?3",
    [S_LIST_DELAYED] = LIST_FROM "state = 1 ORDER BY run_at, rid LIMIT ?2 OFFSET ?3",
    [S_LIST_ACTIVE] = LIST_FROM "state = 3 ORDER BY lease_until, rid LIMIT ?2 OFFSET ?3",
    [S_LIST_COMPLETED] = LIST_FROM "state = 4 ORDER BY finished_at DESC, rid DESC LIMIT "
                                   "?2 OFFSET ?3",
    [S_LIST_FAILED] = LIST_FROM "state = 5 ORDER BY finished_at DESC, rid DESC LIMIT ?2 "
                                "OFFSET ?3",
    /* Keyset pages (view.c): the rows after the cursor's key ?5
     * (priority), ?3 (seq, run_at, lease_until or finished_at), ?4 (rid),
     * one index range per branch of the UNION ALL, merged in order. */
    [S_PAGE_WAITING] = LIST_FROM "state = 0 AND priority = 0 AND seq = ?3 AND rid > ?4 "
                                 "UNION ALL " LIST_FROM "state = 0 AND priority = 0 AND "
                                 "seq > ?3 ORDER BY k_seq, rid LIMIT ?2",
    [S_PAGE_PRIORITIZED] = LIST_FROM "state = 0 AND priority > 0 AND priority = ?5 AND "
                                     "seq = ?3 AND rid > ?4 UNION ALL " LIST_FROM
                                     "state = 0 AND priority > 0 AND priority = ?5 AND seq > "
                                     "?3 UNION ALL " LIST_FROM "state = 0 AND priority > 0 "
                                     "AND priority > ?5 ORDER BY priority, k_seq, rid LIMIT ?2",
    [S_PAGE_READY] = LIST_FROM "state = 0 AND priority = ?5 AND seq = ?3 AND rid > ?4 UNION "
                               "ALL " LIST_FROM "state = 0 AND priority = ?5 AND seq > ?3 "
                               "UNION ALL " LIST_FROM "state = 0 AND priority > ?5 ORDER BY "
                               "priority, k_seq, rid LIMIT ?2",
    [S_PAGE_DELAYED] = LIST_FROM "state = 1 AND run_at = ?3 AND rid > ?4 UNION ALL " LIST_FROM
                                 "state = 1 AND run_at > ?3 ORDER BY k_run, rid LIMIT ?2",
    [S_PAGE_ACTIVE] = LIST_FROM "state = 3 AND lease_until = ?3 AND rid > ?4 UNION ALL " LIST_FROM
                                "state = 3 AND lease_until > ?3 ORDER BY k_lease, rid LIMIT ?2",
    [S_PAGE_COMPLETED] =
        LIST_FROM "state = 4 AND finished_at = ?3 AND rid < ?4 UNION ALL " LIST_FROM
                  "state = 4 AND finished_at < ?3 ORDER BY finished_at DESC, "
                  "rid DESC LIMIT ?2",
    [S_PAGE_FAILED] = LIST_FROM "state = 5 AND finished_at = ?3 AND rid < ?4 UNION ALL " LIST_FROM
                                "state = 5 AND finished_at < ?3 ORDER BY finished_at DESC, "
                                "rid DESC LIMIT ?2",
    [S_PAGE_WAITING_CHILDREN] = LIST_FROM "state = 7 AND rid > ?4 ORDER BY rid LIMIT ?2",
    [S_LOGS] = "SELECT line FROM lanes_logs WHERE rid = ?1 ORDER BY seq",
    [S_STATE_OF] = "SELECT rid, state FROM lanes_jobs WHERE rid = ?2 AND queue "
                   "= ?1",
    /* Retries: back in line by the job's lifo option (seq), as on Redis. */
    [S_RETRY_ONE] = "UPDATE lanes_jobs SET state = 0, attempts_made = 0, " SEQ_BY_LIFO ", "
                    "reason = CASE WHEN state = 5 THEN NULL ELSE reason END, result = CASE "
                    "WHEN state = 4 THEN NULL ELSE result END, started_at = NULL, "
                    "finished_at = NULL, run_at = ?2 WHERE rid = ?1 AND state = ?3",
    /* The next step of a retry of all: the oldest finished at or before ?2. */
    [S_RETRY_PICK_C] = "SELECT rid, COALESCE(cid, rid) FROM lanes_jobs WHERE queue = ?1 AND "
                       "state = 4 AND finished_at <= ?2 ORDER BY finished_at, rid LIMIT ?3",
    [S_RETRY_PICK_F] = "SELECT rid, COALESCE(cid, rid) FROM lanes_jobs WHERE queue = ?1 AND "
                       "state = 5 AND finished_at <= ?2 ORDER BY finished_at, rid LIMIT ?3",
    [S_REMOVE] = "DELETE FROM lanes_jobs WHERE rid = ?1 AND state <> 3 RETURNING priority",
    /* A removed or drained job frees its deduplication id whatever its
     * TTL (BullMQ's removal; a finish frees only a TTL-less one: the
     * lanes_dedup_finish trigger). */
    [S_REMOVE_DEDUP] = "DELETE FROM lanes_dedup WHERE queue = ?2 AND job_rid = ?1 AND id = "
                       "(SELECT deid FROM lanes_jobs WHERE rid = ?1)",
    [S_CLEAN_COMPLETED] = DONE_STMTS(4),
    [S_CLEAN_FAILED] = DONE_STMTS(5),
    [S_CLEAN_CHUNK_C] = CHUNK_STMTS(4),
    [S_CLEAN_CHUNK_F] = CHUNK_STMTS(5),
    [S_PAUSE] = "INSERT INTO lanes_queues(name, paused) VALUES(?1, ?2) ON "
                "CONFLICT(name) DO UPDATE SET paused = excluded.paused",
    [S_IS_PAUSED] = "SELECT paused FROM lanes_queues WHERE name = ?1",
/* The drain (admin.c drain_step): one window of the queue's ready or
 * delayed jobs, walked down its index from the cursor (?2, ?3, ?4: the key
 * of the last row of the window before; ?3 unused for delayed jobs), at
 * most ?5 rows. Each row says
 * whether it is a job scheduler's current iteration, which is spared
 * (jobs.h ln_jobs_drain; found by the scheduler's primary key: the id
 * between "repeat:" and the last ':'), and which flow parent of the queue
 * waits for it (state 7: one its delete may release). */
#define DRAIN_COLS(k1, k2)                                                                         \
    "SELECT rid, " k1 ", " k2 ", j.cid IS NOT NULL AND substr(j.cid, 1, 7) = 'repeat:' AND "       \
    "EXISTS (SELECT 1 FROM lanes_schedulers s WHERE s.queue = ?1 AND s.id = "                      \
    "substr(rtrim(j.cid, '0123456789'), 8, length(rtrim(j.cid, '0123456789')) - 8) AND "           \
    "'repeat:' || s.id || ':' || s.next_at = j.cid), (SELECT p.rid FROM lanes_jobs p WHERE "       \
    "p.rid = j.parent_rid AND p.state = 7 AND p.queue = ?1) FROM lanes_jobs j WHERE queue = ?1 "
    /* Each walk's window in two parts, as SQLite's index ranges do not
     * reach the rowid after a row value: the rows of the cursor's key
     * below its rid (_TIE), then those of lower keys. */
    [S_DRAIN_READY_TIE] = DRAIN_COLS("priority", "seq") "AND state = 0 AND priority = ?2 AND seq "
                                                        "= ?3 AND rid < ?4 ORDER BY rid DESC "
                                                        "LIMIT ?5",
    [S_DRAIN_READY] = DRAIN_COLS("priority", "seq") "AND state = 0 AND (priority, seq) < (?2, "
                                                    "?3) ORDER BY priority DESC, seq DESC, rid "
                                                    "DESC LIMIT ?5",
    [S_DRAIN_DELAYED_TIE] = DRAIN_COLS("run_at", "rid") "AND state = 1 AND run_at = ?2 AND rid < "
                                                        "?4 ORDER BY rid DESC LIMIT ?5",
    [S_DRAIN_DELAYED] = DRAIN_COLS("run_at", "rid") "AND state = 1 AND run_at < ?2 ORDER BY "
                                                    "run_at DESC, rid DESC LIMIT ?5",
#undef DRAIN_COLS
    /* How many jobs the drain's walks look at: those there at its start. */
    [S_DRAIN_SIZE] = "SELECT coalesce(" COUNT_OF(0) ", 0) + coalesce(" COUNT_OF(
        2) ", 0), coalesce(" COUNT_OF(1) ", 0)",
    /* Flow parent ?1 of queue ?2 if a drained child's delete released it
     * (the lanes_deps_child_gone trigger), with the parent of queue ?2 that
     * waits for it in turn (NULL if none). */
    [S_DRAIN_RELEASED] = "SELECT (SELECT g.rid FROM lanes_jobs g WHERE g.rid = p.parent_rid AND "
                         "g.state = 7 AND g.queue = ?2) FROM lanes_jobs p WHERE p.rid = ?1 AND "
                         "p.queue = ?2 AND p.state IN (0, 1)",
    [S_CLEAN_DEDUP_C] = CLEAN_DEDUP(4),
    [S_CLEAN_DEDUP_F] = CLEAN_DEDUP(5),
    /* The queue's waiting-children parents of the failed jobs a clean
     * takes (?2 keep, ?3 cutoff, ?4 chunk or -1), if it has any. */
    [S_CLEAN_PARENTS] = "SELECT p.rid FROM lanes_jobs p WHERE EXISTS (SELECT 1 FROM "
                        "lanes_jobs WHERE queue = ?1 AND state = 7) AND p.queue = ?1 AND "
                        "p.state = 7 AND p.rid IN (SELECT parent_rid FROM lanes_jobs WHERE "
                        "rid IN (SELECT rid FROM (SELECT rid, finished_at FROM lanes_jobs "
                        "WHERE queue = ?1 AND state = 5 ORDER BY finished_at DESC, rid DESC "
                        "LIMIT -1 OFFSET ?2) WHERE finished_at < ?3 LIMIT ?4) AND "
                        "parent_rid IS NOT NULL)",
    /* Was parent ?1 released (ready or delayed, no dependency left); its
     * parent, and is that one of queue ?2 and waiting for children. */
    [S_CLEAN_PARENT_UP] = "SELECT p.state IN (0, 1) AND p.deps = 0, g.rid, g.state = 7 AND "
                          "g.queue = ?2 FROM lanes_jobs p LEFT JOIN lanes_jobs g ON g.rid = "
                          "p.parent_rid WHERE p.rid = ?1",
    /* Before a retry (S_RETRY_ONE) of child ?1: its row in its parent's
     * dependencies is pending again, whatever the parent's state, as
     * BullMQ's retry moves it back into the parent's dependencies. A
     * completed child's row (1, processed) and a failure its parent
     * recorded (ignored or continued past: 2, which deps no longer counts;
     * fail-parent: 3, still counted) go back to 0; rdof's removed row (5)
     * stays. deps first, while the row still says whether it counted. */
    [S_RETRY_DEPS_INC] = "UPDATE lanes_jobs SET deps = deps + 1 WHERE rid = (SELECT "
                         "parent_rid FROM lanes_jobs WHERE rid = ?1) AND EXISTS (SELECT 1 "
                         "FROM lanes_deps WHERE parent_rid = lanes_jobs.rid AND child_rid = "
                         "?1 AND status IN (1, 2))",
    [S_RETRY_DEPS] = "UPDATE lanes_deps SET status = 0, value = NULL WHERE parent_rid = "
                     "(SELECT parent_rid FROM lanes_jobs WHERE rid = ?1) AND child_rid = ?1 "
                     "AND status IN (1, 2, 3)",
    /* S_COMPLETE and S_TAKE: counted by their callers (sqlite_int.h). */
    /* A handler that set no result completes with the JSON null (jobs.h). */
    [S_COMPLETE] = "UPDATE lanes_jobs SET state = 4, result = COALESCE(?4, "
                   "'null'), finished_at = ?3, lease_until = NULL WHERE rid "
                   "= ?1 AND token = ?2 AND state = 3 AND deps = 0 RETURNING "
                   "keep_c_mode, keep_c_val, parent_rid, pflags",
    [S_RETRY_RUN] = "UPDATE lanes_jobs SET state = CASE WHEN ?4 > 0 THEN 1 "
                    "ELSE 0 END, " SEQ_BY_LIFO ", run_at = ?3 + ?4, attempts_made = "
                    "attempts_made + 1, reason = ?5, lease_until = NULL "
                    "WHERE rid = ?1 AND token = ?2 AND state = 3",
    /* Deduplication (add.c). */
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
    /* Due jobs to the back of their line (seq 0), lifo or not, as on Redis. */
    [S_PROMOTE] = "UPDATE lanes_jobs SET state = 0, seq = 0 WHERE queue = ?1 AND "
                  "state = 1 AND run_at <= ?2",
    [S_TAKE] = "UPDATE lanes_jobs SET state = 3, token = token + 1, started = "
               "started + 1, started_at = ?2, lease_until = ?2 + ?3 WHERE "
               "rid IN (SELECT rid FROM lanes_jobs WHERE queue = ?1 AND state "
               "= 0 AND NOT EXISTS (SELECT 1 FROM lanes_queues q WHERE q.name "
               "= ?1 AND q.paused) ORDER BY priority, seq, rid LIMIT ?4) "
               "RETURNING rid, cid, name, data, token, started, "
               "attempts_made, attempts, backoff, backoff_ms, traceparent, "
               "tracestate, priority, seq, timeout_ms, backoff_jitter, backoff_type",
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
                   "AND run_at <= " SQ_NOW_SQL "))",
    /* Nothing ready, delayed or active, and not paused: 'drained'. From
     * the partial indexes only. */
    [S_DRAINED] = "SELECT NOT EXISTS (SELECT 1 FROM lanes_jobs WHERE queue = ?1 "
                  "AND state = 0) AND NOT EXISTS (SELECT 1 FROM lanes_jobs WHERE "
                  "queue = ?1 AND state = 1) AND NOT EXISTS (SELECT 1 FROM "
                  "lanes_jobs WHERE queue = ?1 AND state = 3) AND NOT EXISTS "
                  "(SELECT 1 FROM lanes_queues q WHERE q.name = ?1 AND q.paused)",
    [S_STALLED] = "UPDATE lanes_jobs SET stalled = stalled + 1, token = token + 1, "
                  "lease_until = NULL, state = CASE WHEN " STALL_FAILS " THEN 5 ELSE 0 "
                  "END, attempts_made = CASE WHEN " STALL_FAILS " THEN attempts_made "
                  "+ 1 ELSE attempts_made END, reason = CASE WHEN " STALL_FAILS " THEN "
                  "?4 ELSE reason END, finished_at = CASE WHEN " STALL_FAILS " THEN ?2 "
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
    /* Rate limits and global concurrency (limit.c). */
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
    /* Flows (flow.c). */
    [S_LIST_WAITING_CHILDREN] = LIST_FROM "state = 7 ORDER BY rid LIMIT ?2 OFFSET ?3",
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
                       "parent_rid = ?1 AND status = 3) FROM lanes_jobs WHERE rid = ?1 "
                       "AND token = ?2 AND state = 3 AND deps > 0",
    [S_FLOW_CHILDREN] = "SELECT child_key, status, value FROM lanes_deps WHERE "
                        "parent_rid = ?1 AND status <> 5 ORDER BY CASE status WHEN 0 THEN 4 ELSE "
                        "status END, child_key LIMIT ?2",
    [S_FLOW_PARENT] = "SELECT p.queue, p.cid, p.rid FROM lanes_jobs c JOIN "
                      "lanes_jobs p ON p.rid = c.parent_rid WHERE c.rid = ?1",
    [S_PENDING] = "SELECT EXISTS (SELECT 1 FROM lanes_jobs WHERE queue = ?1 "
                  "AND state = 0) OR EXISTS (SELECT 1 FROM lanes_jobs WHERE "
                  "queue = ?1 AND state = 1) OR EXISTS (SELECT 1 FROM "
                  "lanes_jobs WHERE queue = ?1 AND state = 3)",
    /* Metrics (metrics.c): a type is LN_JOB_COMPLETED or _FAILED;
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
    /* The backoff beyond type and delay (jobs.h "Backoff"), of a job just
     * inserted: only for the jobs that have one. */
    [S_ADD_BACKOFF] = "UPDATE lanes_jobs SET backoff_jitter = ?2, backoff_type = ?3 "
                      "WHERE rid = ?1",
};

const char *ln__sq_sql_text(sq_stmt id) {
    return id >= 0 && id < S_COUNT_ ? sql_text[id] : NULL;
}
