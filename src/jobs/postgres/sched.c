/* sched.c - job schedulers in BullMQ's scheduler table: one row per
 * (queue, scheduler id) with the schedule, the template (data and opts)
 * and the current iteration's time; the iteration is a job with id
 * "repeat:<scheduler id>:<ms>" and scheduler_id set. Next times are
 * computed in C (model/sched_record.c, cron.c) from the server's clock, as
 * the other stores do; docs/internals/schedules.md has the rules. An
 * upsert adds the first iteration through add.c (so its options are
 * BullMQ's and the template's data comes back byte for byte); the
 * template kept is that iteration's opts without its own fields, which
 * each later iteration copies.
 */
#include "pg_int.h"

#include "internal.h"
#include "sched_record.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int server_now(pg_be *be, int64_t *now) {
    int rc;
    PGresult *r = ln__pg_q(be, "SELECT " PG_NOW, 0, NULL, &rc);
    if (r == NULL) return rc;
    *now = ln__pg_i64(r, 0, 0);
    PQclear(r);
    return 0;
}

/* The fields of an iteration's opts that are not the template's. */
#define ITER_KEYS "'delay', 'jobId', 'repeatJobKey', 'repeat'"

/* The stored scheduler's every, next time, offset and count (*found 0:
 * none), locked for the upsert. */
static int read_prev(pg_be *be, const char *queue, const char *id, int *found, int64_t v[4]) {
    const char *p[2] = {queue, id};
    int rc;
    PGresult *r = ln__pg_q(be,
                           "SELECT coalesce(every_ms, 0), next_run_ms, coalesce(offset_ms, 0), "
                           "iteration_count FROM @scheduler WHERE queue = $1 AND scheduler_id = "
                           "$2 FOR UPDATE",
                           2, p, &rc);
    if (r == NULL) return rc;
    *found = PQntuples(r) > 0;
    for (int i = 0; i < 4; i++) v[i] = *found ? ln__pg_i64(r, 0, i) : 0;
    PQclear(r);
    return 0;
}

/* The pending (delayed or waiting) iteration at ms goes; *removed 1 if
 * there was one. */
static int remove_pending(pg_be *be, const char *queue, const char *sid, int64_t ms, int *removed) {
    char *cid = ln__sched_job_id(sid, ms);
    if (cid == NULL) return ln__pg_oom(be);
    const char *p[2] = {queue, cid};
    int rc;
    PGresult *r = ln__pg_q(be,
                           "WITH d AS (DELETE FROM @job WHERE queue = $1 AND id = $2 AND state IN "
                           "('delayed', 'waiting') RETURNING id, state) INSERT INTO @event "
                           "(queue, event, data, created_at_ms) SELECT $1, 'removed', "
                           "jsonb_build_object('jobId', id, 'prev', state::text), " PG_NOW
                           " FROM d RETURNING 1",
                           2, p, &rc);
    ln__free(cid);
    if (r == NULL) return rc;
    *removed = PQntuples(r) > 0;
    PQclear(r);
    return 0;
}

static int upsert_tx(pg_be *be, const char *queue, const ln__sched_new *s, char **job_id) {
    int64_t now = 0, next = LN__CRON_NONE, offset = 0, pv[4];
    int found = 0, removed = 0;
    int rc = server_now(be, &now);
    if (rc == 0) rc = read_prev(be, queue, s->id, &found, pv);
    if (rc != 0) return rc;
    int same_every = found && s->every > 0 && pv[0] == s->every;
    rc = ln__sched_new_next(s, 0, same_every ? pv[1] : LN__CRON_NONE, now, 0, &next, &offset,
                            be->base.errmsg, LN__JOBS_ERRMSG_MAX);
    if (rc != 0 || next == LN__CRON_NONE) return rc; /* makes none: nothing changes */
    if (found && (rc = remove_pending(be, queue, s->id, pv[1], &removed)) != 0) return rc;
    if (removed && same_every) next = pv[1]; /* keeps its time */
    if (removed) offset = pv[2];
    if (s->every <= 0) offset = 0;
    char *iter = ln__sched_job_id(s->id, next);
    if (iter == NULL) return ln__pg_oom(be);
    ln__job_new job = {.name = s->name, .data = s->data, .data_len = s->data_len, .opts = s->opts};
    job.opts.job_id = iter;
    job.opts.delay_ms = next > now ? next - now : 0;
    if (rc == 0) rc = ln__pg_add_one(be, queue, "", &job);
    if (rc == 0 && job.existed)
        rc = ln__jobs_be_err(&be->base, LN_EEXIST,
                             "scheduler '%s': the job of its next iteration exists already", s->id);
    ln__free(job.id);
    char nx[24], ev[24], st[24], en[24], lim[24], off[24];
    const char *q[11] = {queue,
                         s->id,
                         iter,
                         ln__pg_itoa(nx, next),
                         s->pattern,
                         s->every > 0 ? ln__pg_itoa(ev, s->every) : NULL,
                         s->tz,
                         s->start_ms > 0 ? ln__pg_itoa(st, s->start_ms) : NULL,
                         s->end_ms > 0 ? ln__pg_itoa(en, s->end_ms) : NULL,
                         s->limit >= 0 ? ln__pg_itoa(lim, s->limit) : NULL,
                         ln__pg_itoa(off, offset)};
    if (rc == 0)
        rc = ln__pg_exec(
            be,
            "WITH it AS (UPDATE @job SET scheduler_id = $2, opts = opts || jsonb_build_object("
            "'repeatJobKey', $2::text, 'repeat', jsonb_strip_nulls(jsonb_build_object('every', "
            "$6::bigint, 'pattern', $5::text, 'tz', $7::text, 'offset', $11::bigint))) WHERE "
            "queue = $1 AND id = $3 RETURNING name, data, opts) "
            "INSERT INTO @scheduler (queue, scheduler_id, name, next_run_ms, pattern, every_ms, "
            "tz, start_date_ms, end_date_ms, limit_count, iteration_count, template_data, "
            "template_opts, offset_ms) SELECT $1, $2, it.name, $4::bigint, $5, $6::bigint, $7, "
            "$8::bigint, $9::bigint, $10::int, 1, it.data, it.opts - ARRAY[" ITER_KEYS "], "
            "$11::bigint FROM it ON CONFLICT (queue, scheduler_id) DO UPDATE SET name = "
            "excluded.name, next_run_ms = excluded.next_run_ms, pattern = excluded.pattern, "
            "every_ms = excluded.every_ms, tz = excluded.tz, start_date_ms = "
            "excluded.start_date_ms, end_date_ms = excluded.end_date_ms, limit_count = "
            "excluded.limit_count, template_data = excluded.template_data, "
            "template_opts = excluded.template_opts, offset_ms = excluded.offset_ms",
            11, q);
    if (rc == 0) rc = ln__pg_touch_queue(be, queue);
    if (rc == 0) {
        *job_id = iter;
        return 0;
    }
    ln__free(iter);
    return rc;
}

int ln__pg_sched_upsert(ln__jobs_be *b, const char *queue, const ln__sched_new *s, char **job_id) {
    pg_be *be = pgbe(b);
    *job_id = NULL;
    int rc = ln__pg_begin(be);
    if (rc == 0) rc = upsert_tx(be, queue, s, job_id);
    if (rc == 0) rc = ln__pg_commit(be);
    if (rc == 0) return 0;
    ln__free(*job_id);
    *job_id = NULL;
    return ln__pg_fail(be, rc);
}

int ln__pg_sched_remove(ln__jobs_be *b, const char *queue, const char *id) {
    pg_be *be = pgbe(b);
    const char *p[2] = {queue, id};
    int rc = ln__pg_begin(be);
    PGresult *r = rc == 0 ? ln__pg_q(be,
                                     "DELETE FROM @scheduler WHERE queue = $1 AND scheduler_id = "
                                     "$2 RETURNING 1",
                                     2, p, &rc)
                          : NULL;
    if (r == NULL) return ln__pg_fail(be, rc);
    int found = PQntuples(r) > 0;
    PQclear(r);
    if (!found) return ln__pg_fail(be, ln__jobs_be_err(b, LN_ENOENT, "no scheduler '%s'", id));
    rc = ln__pg_exec(be,
                     "WITH d AS (DELETE FROM @job WHERE queue = $1 AND scheduler_id = $2 AND "
                     "state = 'delayed' RETURNING id) INSERT INTO @event (queue, event, data, "
                     "created_at_ms) SELECT $1, 'removed', jsonb_build_object('jobId', id, "
                     "'prev', 'delayed'), " PG_NOW " FROM d",
                     2, p);
    if (rc == 0) rc = ln__pg_commit(be);
    return rc == 0 ? 0 : ln__pg_fail(be, rc);
}

/* ---- Reading them */

#define SCHED_COLS                                                                                 \
    "scheduler_id, coalesce(name, ''), coalesce(CASE WHEN template_opts ? 'lanesData' AND "        \
    "(template_opts->>'lanesData')::jsonb = template_data THEN template_opts->>'lanesData' ELSE "  \
    "template_data::text END, '{}'), pattern, tz, coalesce(every_ms, 0), coalesce(offset_ms, 0), " \
    "coalesce(start_date_ms, 0), coalesce(end_date_ms, 0), greatest(coalesce(limit_count, 0), "    \
    "0), iteration_count, coalesce(next_run_ms, 0), coalesce((template_opts->>'priority')::int, "  \
    "0), greatest(coalesce((template_opts->>'attempts')::int, 1), 1)"

static int fill(pg_be *be, const PGresult *r, int i, ln_job_scheduler *o) {
    int oom = 0;
    memset(o, 0, sizeof *o);
    o->id = ln__pg_dup(r, i, 0, &oom);
    o->name = ln__pg_dup(r, i, 1, &oom);
    o->data = ln__pg_dup(r, i, 2, &oom);
    o->pattern = ln__pg_dup(r, i, 3, &oom);
    o->tz = ln__pg_dup(r, i, 4, &oom);
    o->every_ms = ln__pg_i64(r, i, 5);
    o->offset_ms = ln__pg_i64(r, i, 6);
    o->start_ms = ln__pg_i64(r, i, 7);
    o->end_ms = ln__pg_i64(r, i, 8);
    o->limit = ln__pg_i64(r, i, 9);
    o->iterations = ln__pg_i64(r, i, 10);
    o->next_ms = ln__pg_i64(r, i, 11);
    o->priority = (int)ln__pg_i64(r, i, 12);
    o->attempts = (int)ln__pg_i64(r, i, 13);
    if (!oom) return 0;
    ln_job_scheduler_clear(o);
    return ln__pg_oom(be);
}

int ln__pg_sched_get(ln__jobs_be *b, const char *queue, const char *id, ln_job_scheduler *out) {
    pg_be *be = pgbe(b);
    const char *p[2] = {queue, id};
    int rc;
    PGresult *r = ln__pg_q(be,
                           "SELECT " SCHED_COLS " FROM @scheduler WHERE queue = $1 AND "
                           "scheduler_id = $2",
                           2, p, &rc);
    if (r == NULL) return rc;
    rc = PQntuples(r) > 0 ? fill(be, r, 0, out)
                          : ln__jobs_be_err(b, LN_ENOENT, "no scheduler '%s'", id);
    PQclear(r);
    return rc;
}

int ln__pg_sched_list(ln__jobs_be *b, const char *queue, size_t offset, size_t limit,
                      ln_job_scheduler **out, size_t *n) {
    pg_be *be = pgbe(b);
    *out = NULL;
    *n = 0;
    char off[24], lim[24];
    const char *p[3] = {queue, ln__pg_itoa(off, offset > INT32_MAX ? INT32_MAX : (int64_t)offset),
                        ln__pg_itoa(lim, (int64_t)limit)};
    int rc;
    PGresult *r = ln__pg_q(be,
                           "SELECT " SCHED_COLS " FROM @scheduler WHERE queue = $1 ORDER BY "
                           "next_run_ms, scheduler_id OFFSET $2::bigint LIMIT $3::bigint",
                           3, p, &rc);
    if (r == NULL) return rc;
    int rows = PQntuples(r);
    ln_job_scheduler *arr = rows > 0 ? ln__calloc((size_t)rows, sizeof *arr) : NULL;
    rc = rows > 0 && arr == NULL ? ln__pg_oom(be) : 0;
    int k = 0;
    for (; rc == 0 && k < rows; k++)
        if ((rc = fill(be, r, k, &arr[k])) != 0) break;
    PQclear(r);
    if (rc != 0) {
        ln_job_scheduler_free_array(arr, (size_t)k);
        return rc;
    }
    *out = arr;
    *n = (size_t)rows;
    return 0;
}

/* ---- The worker took an iteration */

/* The scheduler's row as an ln__sched_new; 0, or -1 when it makes no next
 * iteration (no every and no valid pattern). */
static int row_sched(const PGresult *r, ln__sched_new *s) {
    memset(s, 0, sizeof *s);
    s->every = ln__pg_i64(r, 0, 0);
    s->pattern = PQgetisnull(r, 0, 1) ? NULL : PQgetvalue(r, 0, 1);
    s->tz = PQgetisnull(r, 0, 2) ? NULL : PQgetvalue(r, 0, 2);
    s->start_ms = ln__pg_i64(r, 0, 3);
    s->end_ms = ln__pg_i64(r, 0, 4);
    s->limit = PQgetisnull(r, 0, 5) ? -1 : ln__pg_i64(r, 0, 5);
    char err[256];
    if (s->every > 0) return 0;
    if (s->pattern == NULL || ln__cron_parse(&s->cron, s->pattern, err, sizeof err) != 0) return -1;
    return 0;
}

static int taken_tx(pg_be *be, const char *queue, const char *sid, int64_t ms) {
    char m[24];
    const char *p[3] = {queue, sid, ln__pg_itoa(m, ms)};
    int rc;
    PGresult *r =
        ln__pg_q(be,
                 "SELECT coalesce(every_ms, 0), pattern, tz, start_date_ms, end_date_ms, "
                 "limit_count, iteration_count, next_run_ms, coalesce(offset_ms, 0), " PG_NOW
                 " FROM @scheduler WHERE queue = $1 AND scheduler_id = $2 AND "
                 "next_run_ms = $3::bigint FOR UPDATE",
                 3, p, &rc);
    if (r == NULL) return rc;
    ln__sched_new s;
    int64_t next = LN__CRON_NONE, offset = 0;
    char err[256];
    if (PQntuples(r) > 0 && row_sched(r, &s) == 0 &&
        ln__sched_new_next(&s, ln__pg_i64(r, 0, 6), ln__pg_i64(r, 0, 7), ln__pg_i64(r, 0, 9),
                           ln__pg_i64(r, 0, 8), &next, &offset, err, sizeof err) != 0)
        next = LN__CRON_NONE; /* (cron-parser's throw: BullMQ makes none) */
    PQclear(r);
    if (next == LN__CRON_NONE) return 0; /* not current, or finished */
    char *iter = ln__sched_job_id(sid, next);
    if (iter == NULL) return ln__pg_oom(be);
    char nx[24], off[24];
    const char *q[5] = {queue, sid, iter, ln__pg_itoa(nx, next), ln__pg_itoa(off, offset)};
    rc = ln__pg_exec(
        be,
        "WITH s AS (UPDATE @scheduler SET next_run_ms = $4::bigint, iteration_count = "
        "iteration_count + 1, offset_ms = $5::bigint WHERE queue = $1 AND scheduler_id = $2 "
        "RETURNING name, template_data, template_opts, every_ms, pattern, tz) "
        "INSERT INTO @job (queue, id, seq, name, state, data, opts, priority, delay_ms, "
        "max_attempts, added_at_ms, process_at_ms, scheduler_id) SELECT $1, $3, "
        "CASE WHEN coalesce((s.template_opts->>'lifo')::boolean, false) THEN "
        "-nextval('@job_seq'::regclass) ELSE nextval('@job_seq'::regclass) END, "
        "coalesce(s.name, ''), CASE WHEN $4::bigint > " PG_NOW " THEN 'delayed' ELSE 'waiting' "
        "END::@job_state, coalesce(s.template_data, '{}'::jsonb), s.template_opts || "
        "jsonb_strip_nulls(jsonb_build_object('delay', greatest($4::bigint - " PG_NOW ", 0), "
        "'jobId', $3::text, 'repeatJobKey', $2::text, 'repeat', jsonb_strip_nulls("
        "jsonb_build_object('every', s.every_ms, 'pattern', s.pattern, 'tz', s.tz, 'offset', "
        "$5::bigint)))), coalesce((s.template_opts->>'priority')::int, 0), "
        "greatest($4::bigint - " PG_NOW
        ", 0), coalesce((s.template_opts->>'attempts')::int, 1), " PG_NOW
        ", $4::bigint, $2 FROM s ON CONFLICT (queue, id) DO NOTHING",
        5, q);
    ln__free(iter);
    return rc;
}

int ln__pg_sched_taken(ln__jobs_be *b, const char *queue, const char *job_id) {
    pg_be *be = pgbe(b);
    const char *sid;
    size_t len;
    int64_t ms;
    if (!ln__sched_parse_job_id(job_id, &sid, &len, &ms)) return 0;
    char *id = ln__malloc(len + 1);
    if (id == NULL) return ln__pg_oom(be);
    memcpy(id, sid, len);
    id[len] = '\0';
    int rc = ln__pg_begin(be);
    if (rc == 0) rc = taken_tx(be, queue, id, ms);
    if (rc == 0) rc = ln__pg_commit(be);
    ln__free(id);
    return rc == 0 ? 0 : ln__pg_fail(be, rc);
}
