/* events.c - a follower of one queue's events: rows of BullMQ's event
 * table read by id on a connection of its own, oldest first, a batch at a
 * time. The ids come from the global event_seq, so a queue's ids have gaps
 * and only grow. Between looks the follower sleeps 5 ms, doubling to
 * 100 ms while nothing comes (no busy loop); a lost connection is reset at
 * the next look.
 *
 * A row's data is a jsonb object; a follower reports every field as a
 * string (a number's or an object's JSON text), as a Redis stream entry
 * holds them.
 */
#include "pg_int.h"

#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BATCH 64
#define SLEEP_MIN_MS 5
#define SLEEP_MAX_MS 100

typedef struct pg_events {
    ln__jobs_events base; /* must be first */
    pg_be *be;            /* borrowed: its read-only configuration */
    PGconn *conn;
    char *queue;
    int64_t after; /* the last id handed out */
    PGresult *rows;
    int next_row;
} pg_events;

static int ev_err(pg_events *e, int code, const char *what) {
    char line[256];
    snprintf(line, sizeof line, "%s", PQerrorMessage(e->conn));
    line[strcspn(line, "\n")] = '\0';
    snprintf(e->base.errmsg, sizeof e->base.errmsg, "postgres: %s: %s", what, line);
    return code;
}

/* Run sql on the follower's connection; sql has '@' for the schema. */
static PGresult *ev_q(pg_events *e, const char *sql, int n, const char *const *p, int *rc) {
    if (PQstatus(e->conn) != CONNECTION_OK) PQreset(e->conn);
    if (PQstatus(e->conn) != CONNECTION_OK) {
        *rc = ev_err(e, LN_EBACKEND, "events: connection lost");
        return NULL;
    }
    char text[1024];
    size_t o = 0;
    for (const char *s = sql; *s && o + 80 < sizeof text; s++) {
        if (*s != '@') {
            text[o++] = *s;
            continue;
        }
        o += (size_t)snprintf(text + o, sizeof text - o, "%s.", e->be->qschema);
    }
    text[o] = '\0';
    PGresult *r = PQexecParams(e->conn, text, n, NULL, p, NULL, NULL, 0);
    if (r != NULL && PQresultStatus(r) == PGRES_TUPLES_OK) return r;
    PQclear(r);
    *rc = ev_err(e, LN_EBACKEND, "events");
    return NULL;
}

static int fetch(pg_events *e) {
    char after[24];
    const char *p[2] = {e->queue, ln__pg_itoa(after, e->after)};
    int rc;
    PGresult *r = ev_q(e,
                       "SELECT id, event, coalesce(data->>'jobId', ''), '{' || coalesce((SELECT "
                       "string_agg(to_json(k)::text || ':' || to_json(CASE WHEN jsonb_typeof(v) = "
                       "'string' THEN v #>> '{}' ELSE v::text END)::text, ',') FROM "
                       "jsonb_each(data) AS x(k, v)), '') || '}', "
                       "created_at_ms FROM @event WHERE queue = $1 AND id > $2::bigint ORDER BY "
                       "id LIMIT 64",
                       2, p, &rc);
    if (r == NULL) return rc;
    PQclear(e->rows);
    e->rows = r;
    e->next_row = 0;
    return 0;
}

static int take_row(pg_events *e, ln_job_event *ev) {
    PGresult *r = e->rows;
    int i = e->next_row++;
    memset(ev, 0, sizeof *ev);
    snprintf(ev->id, sizeof ev->id, "%s", PQgetvalue(r, i, 0));
    snprintf(ev->name, sizeof ev->name, "%s", PQgetvalue(r, i, 1));
    ev->job_id = ln__strdup(PQgetvalue(r, i, 2));
    ev->fields = ln__strdup(PQgetvalue(r, i, 3));
    ev->at_ms = ln__pg_i64(r, i, 4);
    e->after = ln__pg_i64(r, i, 0);
    if (ev->job_id != NULL && ev->fields != NULL) return 0;
    ln__free(ev->job_id);
    ln__free(ev->fields);
    memset(ev, 0, sizeof *ev);
    snprintf(e->base.errmsg, sizeof e->base.errmsg, "out of memory");
    return LN_ENOMEM;
}

static int ev_next(ln__jobs_events *b, int64_t timeout_ms, ln_job_event *ev) {
    pg_events *e = (pg_events *)b;
    uint64_t start = ln__now_ns();
    int64_t sleep_ms = SLEEP_MIN_MS;
    for (;;) {
        if (e->rows != NULL && e->next_row < PQntuples(e->rows)) return take_row(e, ev);
        int rc = fetch(e);
        if (rc != 0) return rc;
        if (PQntuples(e->rows) > 0) continue;
        int64_t waited = (int64_t)((ln__now_ns() - start) / 1000000u);
        if (timeout_ms >= 0 && waited >= timeout_ms) return LN_ETIMEDOUT;
        int64_t nap = sleep_ms;
        if (timeout_ms >= 0 && nap > timeout_ms - waited) nap = timeout_ms - waited;
        struct timespec ts = {(time_t)(nap / 1000), (long)(nap % 1000) * 1000000L};
        nanosleep(&ts, NULL);
        sleep_ms = sleep_ms * 2 > SLEEP_MAX_MS ? SLEEP_MAX_MS : sleep_ms * 2;
    }
}

static void ev_close(ln__jobs_events *b) {
    pg_events *e = (pg_events *)b;
    if (e == NULL) return;
    PQclear(e->rows);
    if (e->conn != NULL) PQfinish(e->conn);
    ln__free(e->queue);
    ln__free(e);
}

static const ln__events_methods pg_events_methods = {
    .version = LN__EVENTS_METHODS_VERSION,
    .next = ev_next,
    .close = ev_close,
};

/* Where to start: "$" the queue's newest id now, "0" the start, else an
 * id this store gave. */
static int start_at(pg_events *e, const char *from) {
    if (from != NULL && strcmp(from, "$") != 0) {
        char *end;
        long long v = strtoll(from, &end, 10);
        if (*from == '\0' || *end != '\0' || v < 0)
            return ln__jobs_be_err(&e->be->base, LN_EINVAL,
                                   "bad event id '%.40s' (give \"$\", \"0\" or an event's id)",
                                   from);
        e->after = v;
        return 0;
    }
    const char *p[1] = {e->queue};
    int rc;
    PGresult *r = ev_q(e, "SELECT coalesce(max(id), 0) FROM @event WHERE queue = $1", 1, p, &rc);
    if (r == NULL) return ln__jobs_be_err(&e->be->base, rc, "%s", e->base.errmsg);
    e->after = ln__pg_i64(r, 0, 0);
    PQclear(r);
    return 0;
}

int ln__pg_events_open(ln__jobs_be *b, const char *queue, const char *from, ln__jobs_events **out) {
    pg_be *be = pgbe(b);
    pg_events *e = ln__calloc(1, sizeof *e);
    if (e == NULL || (e->queue = ln__strdup(queue)) == NULL) {
        ln__free(e);
        return ln__pg_oom(be);
    }
    e->base.methods = &pg_events_methods;
    e->be = be;
    e->conn = PQconnectdb(be->conninfo);
    int rc = 0;
    if (e->conn == NULL) {
        rc = ln__pg_oom(be);
    } else if (PQstatus(e->conn) != CONNECTION_OK) {
        char line[256];
        snprintf(line, sizeof line, "%s", PQerrorMessage(e->conn));
        line[strcspn(line, "\n")] = '\0';
        rc = ln__jobs_be_err(b, LN_EBACKEND, "postgres: events: cannot connect: %s", line);
    } else {
        rc = start_at(e, from);
    }
    if (rc != 0) {
        ev_close(&e->base);
        return rc;
    }
    *out = &e->base;
    return 0;
}
