/* store.c - the PostgreSQL store: open and close (the URL, the connection,
 * the server's version), the statement helpers, error mapping and the
 * method table. The schema preparation is in schema.c; each method in the
 * file of its concept, named as the other stores name theirs: add.c,
 * view.c, edit.c (the edit method, remove, promote), retry.c, cancel.c,
 * step.c (the worker's round trip and what runs beside it), stalled.c,
 * flow.c, flow_tree.c, flow_parent.c, sched.c, limit.c, events.c,
 * metrics.c, workers.c, admin.c (a queue as a whole, check).
 *
 * DESIGN
 * One libpq connection per handle, on the tables of BullMQ 6.7's PostgreSQL
 * backend in the schema the URL names (docs/internals/postgres.md). Every
 * method is one transaction of lanes' own statements (lanes calls no BullMQ
 * function, so it works on a database whose ledger is at any version from 1
 * to 11). Times come from the server's clock, read once per transaction.
 * A lost connection is reset once before the next statement; a statement
 * that failed with the connection is not repeated (its transaction rolled
 * back on the server).
 */
#include "pg_int.h"

#include "internal.h"

#include <ctype.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---------------------------------------------------------------- errors */

static int map_state(const char *st) {
    if (st == NULL) return LN_EBACKEND;
    if (strcmp(st, "53100") == 0) return LN_ENOSPC; /* disk_full */
    if (strcmp(st, "53200") == 0) return LN_ENOMEM; /* out_of_memory */
    if (strcmp(st, "42501") == 0) return LN_EACCES; /* insufficient_privilege */
    /* A job id that is not UTF-8 (another program's, on another store)
     * cannot be in a UTF-8 database: a lookup of it finds no job. */
    if (strcmp(st, "22021") == 0) return LN_ENOENT;    /* character_not_in_repertoire */
    if (strcmp(st, "25006") == 0) return LN_EACCES;    /* read_only_sql_transaction */
    if (strncmp(st, "08", 2) == 0) return LN_EBACKEND; /* connection exception */
    return LN_EBACKEND;
}

/* The first line of libpq's message (they end in newlines). */
static void one_line(char *dst, size_t cap, const char *msg) {
    snprintf(dst, cap, "%s", msg != NULL ? msg : "");
    for (char *p = dst; *p; p++)
        if (*p == '\n') {
            *p = '\0';
            break;
        }
}

int ln__pg_oom(pg_be *be) {
    return ln__jobs_be_err(&be->base, LN_ENOMEM, "out of memory");
}

/* ------------------------------------------------------------ statements */

/* sql with every '@' replaced by the quoted schema and a '.'. */
static const char *expand(pg_be *be, const char *sql) {
    size_t extra = 0, len = strlen(sql), ql = strlen(be->qschema);
    for (const char *p = sql; *p; p++) extra += *p == '@';
    size_t need = len + extra * (ql + 1) + 1;
    if (need > be->sql_cap) {
        char *s = ln__realloc(be->sql, need);
        if (s == NULL) return NULL;
        be->sql = s;
        be->sql_cap = need;
    }
    char *o = be->sql;
    for (const char *p = sql; *p; p++) {
        if (*p != '@') {
            *o++ = *p;
            continue;
        }
        memcpy(o, be->qschema, ql);
        o += ql;
        *o++ = '.';
    }
    *o = '\0';
    return be->sql;
}

/* A connection that went bad (server restart, a killed backend): one
 * reset, outside any transaction of ours (the server rolled it back). */
static int ensure_conn(pg_be *be) {
    if (PQstatus(be->conn) == CONNECTION_OK) return 0;
    PQreset(be->conn);
    if (PQstatus(be->conn) == CONNECTION_OK) return 0;
    char line[256];
    one_line(line, sizeof line, PQerrorMessage(be->conn));
    return ln__jobs_be_err(&be->base, LN_EBACKEND, "postgres: connection lost: %s", line);
}

PGresult *ln__pg_q(pg_be *be, const char *sql, int n, const char *const *params, int *rc) {
    *rc = ensure_conn(be);
    if (*rc != 0) return NULL;
    const char *text = expand(be, sql);
    if (text == NULL) {
        *rc = ln__pg_oom(be);
        return NULL;
    }
    PGresult *r = PQexecParams(be->conn, text, n, NULL, params, NULL, NULL, 0);
    ExecStatusType st = r != NULL ? PQresultStatus(r) : PGRES_FATAL_ERROR;
    if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) return r;
    char line[256];
    one_line(line, sizeof line, r != NULL ? PQresultErrorMessage(r) : PQerrorMessage(be->conn));
    if (line[0] == '\0') one_line(line, sizeof line, PQerrorMessage(be->conn));
    *rc = ln__jobs_be_err(
        &be->base, r != NULL ? map_state(PQresultErrorField(r, PG_DIAG_SQLSTATE)) : LN_EBACKEND,
        "postgres: %s", line);
    PQclear(r);
    return NULL;
}

int ln__pg_exec(pg_be *be, const char *sql, int n, const char *const *params) {
    int rc;
    PGresult *r = ln__pg_q(be, sql, n, params, &rc);
    PQclear(r);
    return r != NULL ? 0 : rc;
}

int ln__pg_begin(pg_be *be) {
    return ln__pg_exec(be, "BEGIN", 0, NULL);
}

int ln__pg_commit(pg_be *be) {
    return ln__pg_exec(be, "COMMIT", 0, NULL);
}

void ln__pg_rollback(pg_be *be) {
    if (PQstatus(be->conn) != CONNECTION_OK) return;
    if (PQtransactionStatus(be->conn) == PQTRANS_IDLE) return;
    PQclear(PQexec(be->conn, "ROLLBACK"));
}

int ln__pg_fail(pg_be *be, int rc) {
    ln__pg_rollback(be);
    return rc;
}

int64_t ln__pg_i64(const PGresult *r, int row, int col) {
    if (PQgetisnull(r, row, col)) return 0;
    return strtoll(PQgetvalue(r, row, col), NULL, 10);
}

char *ln__pg_dup(const PGresult *r, int row, int col, int *oom) {
    if (PQgetisnull(r, row, col)) return NULL;
    char *s = ln__strdup(PQgetvalue(r, row, col));
    if (s == NULL) *oom = 1;
    return s;
}

const char *ln__pg_itoa(char *buf, int64_t v) {
    snprintf(buf, 24, "%" PRId64, v);
    return buf;
}

/* ------------------------------------------------------------ the table */

static void pg_close(ln__jobs_be *b, int forked) {
    pg_be *be = pgbe(b);
    if (be->conn != NULL) {
        if (forked) {
            /* The parent owns the session: point our copy of its socket
             * at /dev/null, so that PQfinish's goodbye goes nowhere, and
             * free libpq's memory. */
            int fd = PQsocket(be->conn);
            int nul = fd >= 0 ? open("/dev/null", O_WRONLY | O_CLOEXEC) : -1;
            if (nul >= 0) {
                dup2(nul, fd);
                close(nul);
            } else if (fd >= 0) {
                close(fd);
            }
        }
        PQfinish(be->conn);
    }
    ln__free(be->conninfo);
    ln__free(be->sql);
    ln__free(be);
}

static const ln__store_methods pg_methods = {
    .version = LN__STORE_METHODS_VERSION,
    .name = "postgres",
    .close = pg_close,
    .check = ln__pg_check,
    .add = ln__pg_add,
    .get = ln__pg_get,
    .counts = ln__pg_counts,
    .list = ln__pg_list,
    .list_after = ln__pg_list_after,
    .logs = ln__pg_logs,
    .retry = ln__pg_retry,
    .remove = ln__pg_remove,
    .promote = ln__pg_promote,
    .cancel = ln__pg_cancel,
    .edit = ln__pg_edit,
    .step = ln__pg_step,
    .recover_stalled = ln__pg_recover_stalled,
    .release = ln__pg_release,
    .progress = ln__pg_progress,
    .log = ln__pg_log,
    .pending = ln__pg_pending,
    .wait_open = NULL, /* the worker polls */
    .pipe_open = NULL, /* the front's synchronous pipe */
    .cancel_poll = ln__pg_cancel_poll,
    .worker_beat = ln__pg_worker_beat,
    .workers = ln__pg_workers,
    .add_flow = ln__pg_add_flow,
    .children = ln__pg_children,
    .remove_tree = ln__pg_remove_tree,
    .wait_children = ln__pg_wait_children,
    .wait_child = ln__pg_wait_child,
    .remove_unprocessed = ln__pg_remove_unprocessed,
    .sched_upsert = ln__pg_sched_upsert,
    .sched_remove = ln__pg_sched_remove,
    .sched_get = ln__pg_sched_get,
    .sched_list = ln__pg_sched_list,
    .sched_taken = ln__pg_sched_taken,
    .limits = ln__pg_limits,
    .events_open = ln__pg_events_open,
    .metrics = ln__pg_metrics,
    .queues = ln__pg_queues,
    .pause = ln__pg_pause,
    .is_paused = ln__pg_is_paused,
    .clean = ln__pg_clean,
    .drain = ln__pg_drain,
    .obliterate = ln__pg_obliterate,
};

/* ------------------------------------------------------------------ open */

/* A schema name BullMQ takes: a letter or '_', then letters, digits, '_'
 * or '$', at most 63 bytes. */
static int plain_identifier(const char *s, size_t len) {
    if (len == 0 || len > 63) return 0;
    if (!(isalpha((unsigned char)s[0]) || s[0] == '_')) return 0;
    for (size_t i = 1; i < len; i++)
        if (!(isalnum((unsigned char)s[i]) || s[i] == '_' || s[i] == '$')) return 0;
    return 1;
}

/* Split the URL: lanes' own parameter (schema=NAME) out of the query, the
 * rest left for libpq. */
static int parse_url(pg_be *be, const char *url) {
    be->conninfo = ln__strdup(url);
    if (be->conninfo == NULL) return ln__pg_oom(be);
    snprintf(be->schema, sizeof be->schema, "bullmq");
    char *q = strchr(be->conninfo, '?');
    if (q != NULL) {
        /* Compacted in place: w (the kept text's end) never passes r (the
         * next parameter to read), as a kept parameter is written with its
         * '&' before it, where the one read before ended. */
        char *w = q + 1, *r = q + 1;
        int kept = 0;
        while (*r) {
            size_t plen = strcspn(r, "&");
            char *next = r + plen + (r[plen] == '&');
            if (plen > 7 && strncmp(r, "schema=", 7) == 0) {
                if (!plain_identifier(r + 7, plen - 7))
                    return ln__jobs_be_err(&be->base, LN_EINVAL,
                                           "'%s': schema must be a plain identifier (a letter "
                                           "or '_', then letters, digits, '_' or '$'; at most "
                                           "63 bytes)",
                                           url);
                memcpy(be->schema, r + 7, plen - 7);
                be->schema[plen - 7] = '\0';
            } else if (plen == 7 && strncmp(r, "schema=", 7) == 0) {
                return ln__jobs_be_err(&be->base, LN_EINVAL, "'%s': empty schema", url);
            } else if (plen > 0) {
                if (kept) *w++ = '&';
                memmove(w, r, plen);
                w += plen;
                kept = 1;
            }
            r = next;
        }
        *(kept ? w : q) = '\0'; /* nothing left: drop the '?' too */
    }
    snprintf(be->qschema, sizeof be->qschema, "\"%s\"", be->schema);
    return 0;
}

/* Connect and check the server. */
static int connect_db(pg_be *be, const char *url) {
    char *perr = NULL;
    PQconninfoOption *opts = PQconninfoParse(be->conninfo, &perr);
    if (opts == NULL) {
        char line[300];
        one_line(line, sizeof line, perr != NULL ? perr : "out of memory");
        PQfreemem(perr);
        return ln__jobs_be_err(&be->base, perr != NULL ? LN_EINVAL : LN_ENOMEM,
                               "'%s': bad PostgreSQL URL: %s", url, line);
    }
    PQconninfoFree(opts);
    be->conn = PQconnectdb(be->conninfo);
    if (be->conn == NULL) return ln__pg_oom(be);
    if (PQstatus(be->conn) != CONNECTION_OK) {
        char line[300];
        one_line(line, sizeof line, PQerrorMessage(be->conn));
        int code = strstr(line, "Connection refused") != NULL ? LN_ECONNREFUSED
                   : strstr(line, "password") != NULL         ? LN_EACCES
                   : strstr(line, "does not exist") != NULL   ? LN_ENOENT
                                                              : LN_EBACKEND;
        return ln__jobs_be_err(&be->base, code, "postgres: cannot connect to '%s': %s", url, line);
    }
    int v = PQserverVersion(be->conn);
    if (v < 130000)
        return ln__jobs_be_err(&be->base, LN_ENOTSUP,
                               "postgres: server version %d.%d is too old (13 or newer needed, "
                               "as BullMQ's PostgreSQL backend)",
                               v / 10000, v % 10000);
    return ln__pg_exec(be, "SET client_min_messages = warning", 0, NULL);
}

int ln__jobs_postgres_open(ln__jobs_be **out, const char *url, const ln_jobs_opts *opts,
                           char *errmsg, size_t errmsg_size) {
    (void)opts;
    pg_be *be = ln__calloc(1, sizeof *be);
    if (be == NULL) {
        snprintf(errmsg, errmsg_size, "out of memory");
        return LN_ENOMEM;
    }
    be->base.methods = &pg_methods;
    int err = parse_url(be, url);
    if (err == 0) err = connect_db(be, url);
    if (err == 0) err = ln__pg_prepare(be);
    if (err == 0) err = ln__pg_workers_prepare(be);
    if (err != 0) {
        snprintf(errmsg, errmsg_size, "%s", be->base.errmsg);
        pg_close(&be->base, 0);
        return err;
    }
    *out = &be->base;
    return 0;
}
