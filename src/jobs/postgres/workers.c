/* workers.c - the workers connected to a queue (jobs.h ln_jobs_workers)
 * on PostgreSQL: each ln_worker_run keeps a row of lanes' own table
 * lanes_workers in the store's schema (made at open, beside BullMQ's
 * tables, which BullMQ's migrations never touch): inserted when the run
 * starts, refreshed every LN_JOB_WORKER_BEAT_MS, deleted when it ends. A
 * listing shows the rows seen within LN_JOB_WORKER_WINDOW_MS, so a crashed
 * run drops out by itself, and a heartbeat deletes a few long-dead rows.
 * (Node workers are not listed yet: BullMQ's backend names its LISTEN
 * connections, which lanes does not read.)
 */
#include "pg_int.h"

#include "internal.h"

#include <lanes/jobs_workers.h>

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define PRUNE_MAX "16"
#define PRUNE_AFTER_MS (10 * LN_JOB_WORKER_WINDOW_MS)

int ln__pg_workers_prepare(pg_be *be) {
    const char *p[1] = {be->qschema};
    int rc;
    PGresult *r = ln__pg_q(be, "SELECT to_regclass($1 || '.lanes_workers') IS NOT NULL", 1, p, &rc);
    if (r == NULL) return rc;
    int exists = PQgetvalue(r, 0, 0)[0] == 't';
    PQclear(r);
    if (exists) return 0;
    const char *s[1] = {be->schema};
    rc = ln__pg_begin(be);
    if (rc == 0)
        rc = ln__pg_exec(be, "SELECT pg_advisory_xact_lock(1112493644, hashtext($1))", 1, s);
    if (rc == 0)
        rc = ln__pg_exec(be,
                         "CREATE TABLE IF NOT EXISTS @lanes_workers (id bigserial PRIMARY KEY, "
                         "queue text NOT NULL, name text NOT NULL, host text, pid bigint NOT "
                         "NULL, started_ms bigint NOT NULL, seen_ms bigint NOT NULL)",
                         0, NULL);
    if (rc == 0)
        rc = ln__pg_exec(be,
                         "CREATE INDEX IF NOT EXISTS lanes_workers_seen_idx ON @lanes_workers "
                         "(queue, seen_ms)",
                         0, NULL);
    if (rc == 0) rc = ln__pg_commit(be);
    return rc == 0 ? 0 : ln__pg_fail(be, rc);
}

static int beat_tx(pg_be *be, const char *queue, int64_t *id, int leaving) {
    char num[24], pid[24], name[40], host[256] = "";
    ln__pg_itoa(num, *id);
    if (leaving) {
        const char *p[1] = {num};
        *id = 0;
        return ln__pg_exec(be, "DELETE FROM @lanes_workers WHERE id = $1::bigint", 1, p);
    }
    const char *p[2] = {num, queue};
    int rc;
    PGresult *r = ln__pg_q(be,
                           "UPDATE @lanes_workers SET seen_ms = " PG_NOW " WHERE id = $1::bigint "
                           "AND queue = $2 RETURNING 1",
                           2, p, &rc);
    if (r == NULL) return rc;
    int found = PQntuples(r) > 0;
    PQclear(r);
    if (!found) { /* starts, or its row was pruned */
        if (gethostname(host, sizeof host) != 0) host[0] = '\0';
        host[sizeof host - 1] = '\0';
        snprintf(name, sizeof name, "lanes-%ld", (long)getpid());
        const char *q[4] = {queue, name, host[0] ? host : NULL, ln__pg_itoa(pid, getpid())};
        r = ln__pg_q(be,
                     "INSERT INTO @lanes_workers (queue, name, host, pid, started_ms, seen_ms) "
                     "VALUES ($1, $2, $3, $4::bigint, " PG_NOW ", " PG_NOW ") RETURNING id",
                     4, q, &rc);
        if (r == NULL) return rc;
        *id = ln__pg_i64(r, 0, 0);
        PQclear(r);
    }
    char after[24];
    const char *d[2] = {queue, ln__pg_itoa(after, PRUNE_AFTER_MS)};
    return ln__pg_exec(be,
                       "DELETE FROM @lanes_workers WHERE id IN (SELECT id FROM @lanes_workers "
                       "WHERE queue = $1 AND seen_ms < " PG_NOW " - $2::bigint LIMIT " PRUNE_MAX
                       ")",
                       2, d);
}

int ln__pg_worker_beat(ln__jobs_be *b, const char *queue, int64_t *id, int leaving) {
    pg_be *be = pgbe(b);
    int64_t before = *id;
    int rc = ln__pg_begin(be);
    if (rc == 0) rc = beat_tx(be, queue, id, leaving);
    if (rc == 0) rc = ln__pg_commit(be);
    if (rc == 0) return 0;
    *id = before;
    return ln__pg_fail(be, rc);
}

int ln__pg_workers(ln__jobs_be *b, const char *queue, size_t max, ln_worker_info **out, size_t *n) {
    pg_be *be = pgbe(b);
    *out = NULL;
    *n = 0;
    char win[24], lim[24];
    const char *p[3] = {queue, ln__pg_itoa(win, LN_JOB_WORKER_WINDOW_MS),
                        ln__pg_itoa(lim, (int64_t)max)};
    int rc;
    PGresult *r = ln__pg_q(be,
                           "SELECT id, name, host, pid, started_ms, seen_ms FROM @lanes_workers "
                           "WHERE queue = $1 AND seen_ms >= " PG_NOW " - $2::bigint ORDER BY "
                           "started_ms, id LIMIT $3::bigint",
                           3, p, &rc);
    if (r == NULL) return rc;
    int rows = PQntuples(r), oom = 0;
    ln_worker_info *arr = rows > 0 ? ln__calloc((size_t)rows, sizeof *arr) : NULL;
    oom = rows > 0 && arr == NULL;
    for (int i = 0; !oom && i < rows; i++) {
        arr[i].id = ln__pg_dup(r, i, 0, &oom);
        arr[i].name = ln__pg_dup(r, i, 1, &oom);
        arr[i].host = ln__pg_dup(r, i, 2, &oom);
        arr[i].pid = ln__pg_i64(r, i, 3);
        arr[i].kind = LN_WORKER_LANES;
        arr[i].started_ms = ln__pg_i64(r, i, 4);
        arr[i].seen_ms = ln__pg_i64(r, i, 5);
    }
    PQclear(r);
    *out = arr;
    *n = arr != NULL ? (size_t)rows : 0;
    return oom ? ln__pg_oom(be) : 0; /* the front frees what *out holds */
}
