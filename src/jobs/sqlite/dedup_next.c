/* dedup_next.c - the SQLite store: deduplication's next job (jobs.h
 * ln_job_opts.dedup_keep_last_if_active; docs/internals/dedup-next.md).
 *
 * An add deduplicated while its holder runs is kept in lanes_dedup_next
 * (one row per (queue, id): the latest add, its options as JSON). When a
 * job holding the id finishes (state 4 or 5, on any path: a worker's
 * completion or failure, a cancel, a stalled job failed), this
 * connection's TEMP trigger marks the row due and, through the SQL
 * function lanes_dedup_due, sets be->dedup_due; the commit of that
 * transaction (ln__sq_commit) then adds the due rows as jobs and deletes
 * them. The trigger is TEMP so the file's schema names no function
 * (another program, e.g. the sqlite3 shell, can still update the table).
 * A finish of a job without a dedup id pays nothing but the trigger's
 * WHEN test; one with a dedup id one primary-key lookup. */
#include "sqlite_int.h"

#include "internal.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

static void due_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
    (void)argc;
    (void)argv;
    sq_be *be = sqlite3_user_data(ctx);
    be->dedup_due = 1;
    sqlite3_result_int(ctx, 1);
}

int ln__sq_dedup_next_open(sq_be *be) {
    int rc =
        sqlite3_create_function(be->db, "lanes_dedup_due", 0, SQLITE_UTF8, be, due_fn, NULL, NULL);
    if (rc != SQLITE_OK) return ln__sq_err(be, rc, "dedup function");
    return ln__sq_exec_sql(
        be,
        "CREATE TEMP TRIGGER IF NOT EXISTS lanes_dedup_next_due AFTER UPDATE OF state"
        "  ON main.lanes_jobs WHEN new.deid IS NOT NULL AND new.state IN (4, 5) BEGIN"
        "  UPDATE lanes_dedup_next SET due = lanes_dedup_due() WHERE queue = new.queue"
        "  AND id = new.deid; END;",
        "dedup trigger");
}

/* ---------------------------------------------------- the stored options */

#define KEEP(o, k) json_pack("[i,I]", (o)->k.mode, (json_int_t)(o)->k.value)

char *ln__sq_dedup_opts_json(const ln_job_opts *o) {
    json_t *t = json_pack("{s:I,s:i,s:i,s:i,s:I,s:f,s:i,s:o,s:o,s:I,s:I,s:b,s:b,s:b,s:b}", "delay",
                          (json_int_t)o->delay_ms, "priority", o->priority, "attempts", o->attempts,
                          "backoff", o->backoff, "backoff_ms", (json_int_t)o->backoff_ms, "jitter",
                          o->backoff_jitter, "lifo", o->lifo, "roc", KEEP(o, remove_on_complete),
                          "rof", KEEP(o, remove_on_fail), "timeout", (json_int_t)o->timeout_ms,
                          "ttl", (json_int_t)o->dedup_ttl_ms, "extend", o->dedup_extend, "replace",
                          o->dedup_replace, "keep", o->dedup_keep_last_if_active, "resched",
                          o->dedup_reschedule);
    if (t == NULL) return NULL;
    const char *strs[][2] = {{"cid", o->job_id},
                             {"btype", o->backoff_type},
                             {"tp", o->traceparent},
                             {"ts", o->tracestate}};
    for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++)
        if (strs[i][1] != NULL) json_object_set_new(t, strs[i][0], json_string(strs[i][1]));
    char *s = json_dumps(t, JSON_COMPACT);
    json_decref(t);
    return s;
}

static const char *str_of(json_t *t, const char *key) {
    return json_string_value(json_object_get(t, key));
}

static void keep_of(json_t *t, const char *key, ln_job_keep *k) {
    json_t *a = json_object_get(t, key);
    k->mode = (int)json_integer_value(json_array_get(a, 0));
    k->value = json_integer_value(json_array_get(a, 1));
}

/* opts from the JSON t (the strings point into t). */
static void opts_of(json_t *t, ln_job_opts *o, const char *deid) {
    ln_job_opts_init(o);
    o->delay_ms = json_integer_value(json_object_get(t, "delay"));
    o->priority = (int)json_integer_value(json_object_get(t, "priority"));
    o->attempts = (int)json_integer_value(json_object_get(t, "attempts"));
    o->backoff = (int)json_integer_value(json_object_get(t, "backoff"));
    o->backoff_ms = json_integer_value(json_object_get(t, "backoff_ms"));
    o->backoff_jitter = json_number_value(json_object_get(t, "jitter"));
    o->lifo = (int)json_integer_value(json_object_get(t, "lifo"));
    keep_of(t, "roc", &o->remove_on_complete);
    keep_of(t, "rof", &o->remove_on_fail);
    o->timeout_ms = json_integer_value(json_object_get(t, "timeout"));
    o->dedup_id = deid;
    o->dedup_ttl_ms = json_integer_value(json_object_get(t, "ttl"));
    o->dedup_extend = json_is_true(json_object_get(t, "extend"));
    o->dedup_replace = json_is_true(json_object_get(t, "replace"));
    o->dedup_keep_last_if_active = json_is_true(json_object_get(t, "keep"));
    o->dedup_reschedule = json_is_true(json_object_get(t, "resched"));
    o->job_id = str_of(t, "cid");
    o->backoff_type = str_of(t, "btype");
    o->traceparent = str_of(t, "tp");
    o->tracestate = str_of(t, "ts");
}

/* ------------------------------------------------------------ the requeue */

/* The job just inserted as rid takes the rid jid reserved for it at its
 * add (a LIFO job's seq follows its rid). */
static int take_jid(sq_be *be, int64_t rid, int64_t jid) {
    return ln__sq_run_once(be, "dedup next (id)", NULL,
                           "UPDATE lanes_jobs SET rid = ?1, seq = CASE WHEN seq < 0 "
                           "THEN -?1 ELSE seq END WHERE rid = ?2",
                           "ii", jid, rid);
}

/* Add the kept job j of queue as an add would (it now holds its dedup
 * id), as rid jid when its add reserved one (> 0); an existing custom id
 * is left as it is (the kept add is dropped). */
static int add_next(sq_be *be, const char *queue, ln__job_new *j, int64_t jid, int64_t now) {
    int err = ln__sq_insert_job(be, queue, j, now, "dedup next");
    if (err != 0) return err < 0 ? err : 0; /* 1: the custom id exists */
    int64_t rid = sqlite3_last_insert_rowid(be->db);
    if (jid > 0) {
        if ((err = take_jid(be, rid, jid)) != 0) return err;
        rid = jid;
    }
    const ln_job_opts *o = &j->opts;
    int64_t expires =
        o->dedup_ttl_ms > 0 && !o->dedup_keep_last_if_active ? now + o->dedup_ttl_ms : -1;
    if ((err = ln__sq_dedup_hold(be, queue, o, rid, expires)) != 0) return err;
    if ((err = ln__sq_count(be, queue, ln__sq_new_state(o), 1)) != 0) return err;
    if ((j->id = ln__sq_id_dup(rid, o->job_id)) == NULL)
        return ln__jobs_be_err(&be->base, LN_ENOMEM, "out of memory");
    err = ln__sq_add_events(be, queue, j, now);
    ln__free(j->id);
    j->id = NULL;
    return err;
}

/* One due row of s (queue, id, name, data, opts, jid): added, then
 * deleted. */
static int requeue_row(sq_be *be, sqlite3_stmt *s, int64_t now) {
    const char *queue = (const char *)sqlite3_column_text(s, 0);
    const char *deid = (const char *)sqlite3_column_text(s, 1);
    json_t *t = json_loads((const char *)sqlite3_column_text(s, 4), 0, NULL);
    if (t == NULL) return ln__jobs_be_err(&be->base, LN_EBACKEND, "dedup next: bad options");
    ln__job_new j = {0};
    j.name = (const char *)sqlite3_column_text(s, 2);
    j.data = (const char *)sqlite3_column_text(s, 3);
    j.data_len = (size_t)sqlite3_column_bytes(s, 3);
    opts_of(t, &j.opts, deid);
    int err = add_next(be, queue, &j, sqlite3_column_int64(s, 5), now);
    json_decref(t);
    return err != 0 ? err : ln__sq_dedup_drop_next(be, queue, deid);
}

int ln__sq_dedup_requeue(sq_be *be) {
    be->dedup_due = 0;
    sqlite3_stmt *now_s = ln__sq_stmt_get(be, S_NOW);
    if (now_s == NULL) return LN_EBACKEND;
    int rc = sqlite3_step(now_s);
    int64_t now = sqlite3_column_int64(now_s, 0);
    sqlite3_reset(now_s);
    if (rc != SQLITE_ROW) return ln__sq_err(be, rc, "clock");
    /* Each finish marked at most one row: bounded by this transaction's
     * finishes. One row a query, as each add changes the table. */
    int err = 0;
    while (err == 0) {
        sqlite3_stmt *s = NULL;
        rc = sqlite3_prepare_v2(be->db,
                                "SELECT queue, id, name, data, opts, jid FROM lanes_dedup_next "
                                "WHERE due = 1 LIMIT 1",
                                -1, &s, NULL);
        if (rc != SQLITE_OK) return ln__sq_err(be, rc, "dedup next");
        rc = sqlite3_step(s);
        if (rc == SQLITE_ROW)
            err = requeue_row(be, s, now);
        else if (rc != SQLITE_DONE)
            err = ln__sq_err(be, rc, "dedup next");
        sqlite3_finalize(s);
        if (rc != SQLITE_ROW) break;
    }
    return err;
}

/* ------------------------------------------------------------ at the add */

/* The id a kept add is given, as an add without a custom id is numbered
 * (on Redis the id counter's next value, BullMQ's jid): the next rid of
 * lanes_jobs' AUTOINCREMENT sequence, moved past it so no insert takes
 * it. 0: a custom id, or no sequence row yet (numbered when added). */
static int reserve_jid(sq_be *be, const ln_job_opts *o, int64_t *jid) {
    *jid = 0;
    if (o->job_id != NULL) return 0;
    return ln__sq_run_once(be, "dedup next (id)", jid,
                           "UPDATE sqlite_sequence SET seq = seq + 1 "
                           "WHERE name = 'lanes_jobs' RETURNING seq",
                           "");
}

int ln__sq_dedup_store_next(sq_be *be, const char *queue, const ln__job_new *j) {
    int64_t jid;
    int err = reserve_jid(be, &j->opts, &jid);
    if (err != 0) return err;
    char *opts = ln__sq_dedup_opts_json(&j->opts);
    if (opts == NULL) return ln__jobs_be_err(&be->base, LN_ENOMEM, "out of memory");
    err = ln__sq_run_once(
        be, "dedup next", NULL,
        "INSERT INTO lanes_dedup_next(queue, id, name, data, opts, due, jid) "
        "VALUES(?1, ?2, ?3, ?4, ?5, 0, ?6) ON CONFLICT(queue, id) DO UPDATE SET "
        "name = excluded.name, data = excluded.data, opts = excluded.opts, due = 0, "
        "jid = excluded.jid",
        "tttdtj", queue, j->opts.dedup_id, j->name, j->data, j->data_len, opts, jid);
    free(opts);
    if (err != 0) return err;
    /* the id loses its expiry while the holder runs */
    return ln__sq_run_once(be, "dedup next", NULL,
                           "UPDATE lanes_dedup SET expires_at = NULL WHERE queue = ?1 AND id = ?2",
                           "tt", queue, j->opts.dedup_id);
}

int ln__sq_dedup_drop_next(sq_be *be, const char *queue, const char *deid) {
    return ln__sq_run_once(be, "dedup next", NULL,
                           "DELETE FROM lanes_dedup_next WHERE queue = ?1 AND id = ?2", "tt", queue,
                           deid);
}

int ln__sq_dedup_reschedule(sq_be *be, int64_t rid, int64_t delay_ms, int64_t now) {
    return ln__sq_run_once(
        be, "dedup reschedule", NULL,
        "UPDATE lanes_jobs SET run_at = ?2, delay = ?3 WHERE rid = ?1 AND state = 1", "iii", rid,
        (int64_t)(now + delay_ms), delay_ms);
}
