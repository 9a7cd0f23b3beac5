/* schema.c - the tables the store shares with BullMQ 6.7's PostgreSQL
 * backend: check the migration ledger at open, and prepare a database
 * nobody prepared.
 *
 * DESIGN
 * BullMQ's migrator keeps a ledger, migration(version, name,
 * min_client_version, applied_at), and applies its migrations 1..11 in one
 * transaction under pg_advisory_xact_lock(1112493644, hashtext(schema)).
 * Its migration 1 holds only types, sequences, tables and indexes; the
 * later ones add its functions, which lanes does not call. So on a
 * database without a ledger lanes creates, under the same lock and in one
 * transaction, exactly migration 1's objects and its ledger row: a stock
 * BullMQ started later with migrate: true applies 2..11 on top. The
 * definitions below are lanes' own statements of the same columns, types,
 * defaults, keys and indexes (docs/internals/postgres.md "The tables").
 * A ledger beyond what BullMQ 6.7 knows (a version above 11, or a
 * min_client_version above 6) is refused, nothing written.
 */
#include "pg_int.h"

#include <stdio.h>
#include <string.h>

/* BullMQ's migrator lock: the constant spells BULL. */
#define PG_MIGRATE_LOCK "1112493644"

static const char *const migration_1[] = {
    "CREATE TABLE IF NOT EXISTS @meta (queue text NOT NULL, field text NOT NULL, value text, "
    "PRIMARY KEY (queue, field))",
    "CREATE TYPE @job_state AS ENUM ('waiting', 'active', 'completed', 'failed', 'delayed', "
    "'waiting-children')",
    "CREATE TYPE @dep_status AS ENUM ('pending', 'processed', 'ignored', 'failed')",
    "CREATE SEQUENCE @job_seq",
    "CREATE SEQUENCE @event_seq",
    "CREATE TABLE @job (queue text NOT NULL, id text NOT NULL, seq bigint NOT NULL, "
    "name text NOT NULL, state @job_state NOT NULL, "
    "data jsonb NOT NULL DEFAULT '{}'::jsonb, opts jsonb NOT NULL DEFAULT '{}'::jsonb, "
    "priority integer NOT NULL DEFAULT 0, delay_ms bigint NOT NULL DEFAULT 0, "
    "max_attempts integer NOT NULL DEFAULT 1, attempts_made integer NOT NULL DEFAULT 0, "
    "attempts_started integer NOT NULL DEFAULT 0, progress jsonb, return_value jsonb, "
    "failed_reason text, stacktrace jsonb, deferred_failure text, processed_by text, "
    "added_at_ms bigint NOT NULL, process_at_ms bigint, processed_at_ms bigint, "
    "finished_at_ms bigint, lock_token text, locked_until_ms bigint, "
    "stalled_count integer NOT NULL DEFAULT 0, dedup_id text, scheduler_id text, "
    "parent_queue text, parent_id text, parent_key text, "
    "pending_deps integer NOT NULL DEFAULT 0, stalled_marked boolean NOT NULL DEFAULT false, "
    "PRIMARY KEY (queue, id))",
    "CREATE INDEX job_ready_idx ON @job (queue, priority, seq) WHERE state = 'waiting'",
    "CREATE INDEX job_delayed_idx ON @job (queue, process_at_ms) WHERE state = 'delayed'",
    "CREATE INDEX job_active_idx ON @job (queue, locked_until_ms) WHERE state = 'active'",
    "CREATE INDEX job_finished_idx ON @job (queue, state, finished_at_ms) "
    "WHERE state IN ('completed', 'failed')",
    "CREATE INDEX job_waiting_children_idx ON @job (queue, seq) WHERE state = 'waiting-children'",
    "CREATE INDEX job_parent_idx ON @job (parent_queue, parent_id) WHERE parent_id IS NOT NULL",
    "CREATE INDEX job_scheduler_idx ON @job (queue, scheduler_id) WHERE scheduler_id IS NOT NULL",
    "CREATE TABLE @job_log (queue text NOT NULL, job_id text NOT NULL, idx bigint NOT NULL, "
    "row text NOT NULL, PRIMARY KEY (queue, job_id, idx), "
    "FOREIGN KEY (queue, job_id) REFERENCES @job (queue, id) ON DELETE CASCADE)",
    "CREATE TABLE @job_dependency (parent_queue text NOT NULL, parent_id text NOT NULL, "
    "child_queue text NOT NULL, child_id text NOT NULL, child_key text NOT NULL, "
    "status @dep_status NOT NULL DEFAULT 'pending', value jsonb, "
    "PRIMARY KEY (parent_queue, parent_id, child_key), "
    "FOREIGN KEY (parent_queue, parent_id) REFERENCES @job (queue, id) ON DELETE CASCADE)",
    "CREATE INDEX dep_parent_status_idx ON @job_dependency (parent_queue, parent_id, status)",
    "CREATE INDEX dep_child_idx ON @job_dependency (child_queue, child_id)",
    "CREATE TABLE @event (queue text NOT NULL, "
    "id bigint NOT NULL DEFAULT nextval('@event_seq'::regclass), event text NOT NULL, "
    "data jsonb NOT NULL DEFAULT '{}'::jsonb, created_at_ms bigint NOT NULL, "
    "PRIMARY KEY (queue, id))",
    "CREATE TABLE @metrics (queue text NOT NULL, kind text NOT NULL, "
    "count bigint NOT NULL DEFAULT 0, prev_ts bigint, prev_count bigint NOT NULL DEFAULT 0, "
    "data bigint[] NOT NULL DEFAULT '{}', PRIMARY KEY (queue, kind))",
    "CREATE TABLE @rate_limit (queue text NOT NULL, points bigint NOT NULL DEFAULT 0, "
    "expire_at_ms bigint NOT NULL, PRIMARY KEY (queue))",
    "CREATE TABLE @dedup (queue text NOT NULL, dedup_id text NOT NULL, job_id text NOT NULL, "
    "expire_at_ms bigint, PRIMARY KEY (queue, dedup_id))",
    "CREATE INDEX dedup_expire_idx ON @dedup (queue, expire_at_ms) "
    "WHERE expire_at_ms IS NOT NULL",
    "CREATE TABLE @scheduler (queue text NOT NULL, scheduler_id text NOT NULL, name text, "
    "next_run_ms bigint, pattern text, every_ms bigint, tz text, start_date_ms bigint, "
    "end_date_ms bigint, limit_count integer, iteration_count integer NOT NULL DEFAULT 0, "
    "template_data jsonb, template_opts jsonb, producer_id text, offset_ms bigint, "
    "PRIMARY KEY (queue, scheduler_id))",
    "CREATE INDEX scheduler_next_idx ON @scheduler (queue, next_run_ms)",
    "CREATE TABLE @dedup_next (queue text NOT NULL, dedup_id text NOT NULL, "
    "payload jsonb NOT NULL, PRIMARY KEY (queue, dedup_id))",
};

/* The ledger's highest version and min_client_version (0, 0 when it has
 * no row or does not exist). */
static int read_ledger(pg_be *be, int64_t *version, int64_t *client) {
    const char *p[1] = {be->qschema};
    int rc;
    PGresult *r = ln__pg_q(be, "SELECT to_regclass($1 || '.migration') IS NOT NULL", 1, p, &rc);
    if (r == NULL) return rc;
    int exists = PQgetvalue(r, 0, 0)[0] == 't';
    PQclear(r);
    *version = *client = 0;
    if (!exists) return 0;
    r = ln__pg_q(be,
                 "SELECT coalesce(max(version), 0), coalesce(max(min_client_version), 0) "
                 "FROM @migration",
                 0, NULL, &rc);
    if (r == NULL) return rc;
    *version = ln__pg_i64(r, 0, 0);
    *client = ln__pg_i64(r, 0, 1);
    PQclear(r);
    return 0;
}

static int refuse_newer(pg_be *be, int64_t version, int64_t client) {
    if (version <= PG_LEDGER_MAX && client <= PG_CLIENT_VERSION) return 0;
    return ln__jobs_be_err(&be->base, LN_ECORRUPT,
                           "postgres: schema \"%s\" is at BullMQ migration %lld (client version "
                           "%lld); this lanes knows BullMQ 6.7's migrations up to %d: upgrade "
                           "lanes",
                           be->schema, (long long)version, (long long)client, PG_LEDGER_MAX);
}

/* Under the migrator's lock: the schema, the ledger, migration 1. */
static int prepare_locked(pg_be *be) {
    const char *p[1] = {be->schema};
    int err =
        ln__pg_exec(be, "SELECT pg_advisory_xact_lock(" PG_MIGRATE_LOCK ", hashtext($1))", 1, p);
    if (err == 0) err = ln__pg_exec(be, "SET LOCAL lock_timeout = '60s'", 0, NULL);
    char sql[160];
    snprintf(sql, sizeof sql, "CREATE SCHEMA IF NOT EXISTS %s", be->qschema);
    if (err == 0) err = ln__pg_exec(be, sql, 0, NULL);
    if (err == 0)
        err = ln__pg_exec(be,
                          "CREATE TABLE IF NOT EXISTS @migration (version integer PRIMARY KEY, "
                          "name text NOT NULL, min_client_version integer NOT NULL, "
                          "applied_at timestamptz NOT NULL DEFAULT now())",
                          0, NULL);
    int64_t version = 0, client = 0;
    if (err == 0) err = read_ledger(be, &version, &client);
    if (err == 0) err = refuse_newer(be, version, client);
    if (err != 0 || version > 0) return err; /* another process prepared it */
    for (size_t i = 0; err == 0 && i < sizeof migration_1 / sizeof migration_1[0]; i++)
        err = ln__pg_exec(be, migration_1[i], 0, NULL);
    if (err == 0)
        err = ln__pg_exec(be,
                          "INSERT INTO @migration (version, name, min_client_version) "
                          "VALUES (1, '0001_schema', 6)",
                          0, NULL);
    return err;
}

int ln__pg_prepare(pg_be *be) {
    int64_t version = 0, client = 0;
    int err = read_ledger(be, &version, &client);
    if (err == 0) err = refuse_newer(be, version, client);
    if (err != 0 || version > 0) return err;
    err = ln__pg_begin(be);
    if (err == 0) err = prepare_locked(be);
    if (err == 0) return ln__pg_commit(be);
    ln__pg_rollback(be);
    size_t len = strlen(be->base.errmsg);
    snprintf(be->base.errmsg + len, sizeof be->base.errmsg - len,
             " (preparing schema \"%s\"; nothing was written)", be->schema);
    return err;
}
