/* metrics.c - per-minute metrics of completed and failed jobs (jobs.h
 * "Metrics") in BullMQ's metrics table: a row per (queue, kind) with count,
 * prev_ts, prev_count and the points newest first in a bigint array. A
 * step counts its outcomes of one kind at once with ln_job_metrics_record
 * (model/metrics_record.c), in the step's transaction.
 */
#include "pg_int.h"

#include "internal.h"
#include "metrics.h"

#include <lanes/jobs_metrics.h>

#include <stdlib.h>
#include <string.h>

int ln__pg_metrics_count(pg_be *be, const char *queue, int completed, uint64_t n, unsigned max) {
    if (n == 0 || max == 0) return 0;
    const char *kind = completed ? "completed" : "failed";
    const char *p[2] = {queue, kind};
    int rc = ln__pg_exec(
        be, "INSERT INTO @metrics (queue, kind) VALUES ($1, $2) ON CONFLICT DO NOTHING", 2, p);
    PGresult *r = rc == 0 ? ln__pg_q(be,
                                     "SELECT count, coalesce(prev_ts, 0), prev_count, " PG_NOW
                                     " FROM @metrics WHERE queue = $1 AND kind = $2 FOR UPDATE",
                                     2, p, &rc)
                          : NULL;
    if (r == NULL) return rc;
    ln_job_metrics m;
    memset(&m, 0, sizeof m);
    m.count = (uint64_t)ln__pg_i64(r, 0, 0);
    m.prev_ts = ln__pg_i64(r, 0, 1);
    m.prev_count = (uint64_t)ln__pg_i64(r, 0, 2);
    int64_t now = ln__pg_i64(r, 0, 3);
    PQclear(r);
    uint64_t first = 0;
    unsigned pushed = ln_job_metrics_record(&m, n, now, max, &first);
    char c[24], ts[24], pc[24], np[24], f[24], mx[24];
    const char *q[8] = {queue,
                        kind,
                        ln__pg_itoa(c, (int64_t)m.count),
                        ln__pg_itoa(ts, m.prev_ts),
                        ln__pg_itoa(pc, (int64_t)m.prev_count),
                        ln__pg_itoa(np, pushed),
                        ln__pg_itoa(f, (int64_t)first),
                        ln__pg_itoa(mx, max)};
    return ln__pg_exec(be,
                       "UPDATE @metrics SET count = $3::bigint, prev_ts = $4::bigint, prev_count "
                       "= $5::bigint, data = CASE WHEN $6::int = 0 THEN data ELSE (array_fill(0::"
                       "bigint, ARRAY[$6::int - 1]) || $7::bigint || data)[1:$8::int] END "
                       "WHERE queue = $1 AND kind = $2",
                       8, q);
}

int ln__pg_metrics(ln__jobs_be *b, const char *queue, int type, int64_t start, int64_t end,
                   ln_job_metrics *out) {
    pg_be *be = pgbe(b);
    memset(out, 0, sizeof *out);
    const char *p[2] = {queue, type == LN_JOB_COMPLETED ? "completed" : "failed"};
    int rc;
    PGresult *r = ln__pg_q(be,
                           "SELECT count, coalesce(prev_ts, 0), prev_count, cardinality(data), "
                           "array_to_string(data, ',') FROM @metrics WHERE queue = $1 AND kind = "
                           "$2",
                           2, p, &rc);
    if (r == NULL) return rc;
    if (PQntuples(r) == 0) {
        PQclear(r);
        return 0;
    }
    out->count = (uint64_t)ln__pg_i64(r, 0, 0);
    out->prev_ts = ln__pg_i64(r, 0, 1);
    out->prev_count = (uint64_t)ln__pg_i64(r, 0, 2);
    out->npoints = (uint64_t)ln__pg_i64(r, 0, 3);
    uint64_t lo, hi;
    if (ln__metrics_range(out->npoints, start, end, &lo, &hi)) {
        out->data = ln__calloc((size_t)(hi - lo + 1), sizeof *out->data);
        if (out->data == NULL) {
            PQclear(r);
            return ln__pg_oom(be);
        }
        const char *s = PQgetvalue(r, 0, 4);
        for (uint64_t i = 0; *s && i <= hi; i++) {
            char *end_p;
            unsigned long long v = strtoull(s, &end_p, 10);
            if (i >= lo) out->data[out->ndata++] = (uint64_t)v;
            s = *end_p == ',' ? end_p + 1 : end_p;
        }
    }
    PQclear(r);
    return 0;
}
