/* metrics.c - the SQLite store: per-minute metrics of completed and
 * failed jobs (jobs.h "Metrics"), BullMQ's metrics:<type> hash and
 * metrics:<type>:data list as two tables. A row of lanes_metrics holds
 * count, prev_ts, prev_count, the seq of the newest point and the number of
 * points; lanes_metrics_data holds the points by seq, so point i (0 = the
 * newest) has seq - i. A step counts all its outcomes of one type at once
 * with ln_job_metrics_record (model/metrics_record.c): one row read and written, and
 * on a minute change one push of at most max_points rows and one trim of
 * the rows past max_points (at most what an earlier, larger setting left:
 * LN_JOB_METRICS_POINTS_MAX). */
#include "sqlite_int.h"

#include "internal.h"
#include "metrics.h"

#include <string.h>

/* The stored row of (queue, type) into *m (zeros and *seq 0 when none). */
static int read_row(sq_be *be, const char *queue, int type, ln_job_metrics *m, int64_t *seq) {
    sqlite3_stmt *s = ln__sq_stmt_get(be, S_METRICS_GET);
    if (s == NULL) return LN_EBACKEND;
    sqlite3_bind_text(s, 1, queue, -1, SQLITE_STATIC);
    sqlite3_bind_int(s, 2, type);
    *seq = 0;
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        m->count = (uint64_t)sqlite3_column_int64(s, 0);
        m->prev_ts = sqlite3_column_int64(s, 1);
        m->prev_count = (uint64_t)sqlite3_column_int64(s, 2);
        *seq = sqlite3_column_int64(s, 3);
        m->npoints = (uint64_t)sqlite3_column_int64(s, 4);
        rc = sqlite3_step(s);
    }
    int err = rc == SQLITE_DONE ? 0 : ln__sq_err(be, rc, "metrics");
    sqlite3_reset(s);
    return err;
}

/* Push p points (first, then p - 1 zeros) after seq and trim to max. */
static int push_points(sq_be *be, const char *queue, int type, int64_t seq, unsigned p,
                       uint64_t first, unsigned max) {
    sqlite3_stmt *s = ln__sq_stmt_get(be, S_METRICS_PUSH);
    if (s == NULL) return LN_EBACKEND;
    sqlite3_bind_text(s, 1, queue, -1, SQLITE_STATIC);
    sqlite3_bind_int(s, 2, type);
    sqlite3_bind_int64(s, 3, seq + 1);
    sqlite3_bind_int64(s, 4, (sqlite3_int64)first);
    sqlite3_bind_int64(s, 5, seq + p);
    int err = ln__sq_run(be, s, "metrics (points)");
    if (err != 0) return err;
    if ((s = ln__sq_stmt_get(be, S_METRICS_TRIM)) == NULL) return LN_EBACKEND;
    sqlite3_bind_text(s, 1, queue, -1, SQLITE_STATIC);
    sqlite3_bind_int(s, 2, type);
    sqlite3_bind_int64(s, 3, seq + p - max);
    return ln__sq_run(be, s, "metrics (trim)");
}

/* Count n jobs of type finished at now. */
static int count_jobs(sq_be *be, const char *queue, int type, uint64_t n, int64_t now,
                      unsigned max) {
    ln_job_metrics m = {0};
    int64_t seq;
    int err = read_row(be, queue, type, &m, &seq);
    if (err != 0) return err;
    uint64_t first;
    unsigned p = ln_job_metrics_record(&m, n, now, max, &first);
    if (p > 0) {
        if ((err = push_points(be, queue, type, seq, p, first, max)) != 0) return err;
        seq += p;
        m.npoints = m.npoints + p < max ? m.npoints + p : max;
    }
    sqlite3_stmt *s = ln__sq_stmt_get(be, S_METRICS_PUT);
    if (s == NULL) return LN_EBACKEND;
    sqlite3_bind_text(s, 1, queue, -1, SQLITE_STATIC);
    sqlite3_bind_int(s, 2, type);
    sqlite3_bind_int64(s, 3, (sqlite3_int64)m.count);
    sqlite3_bind_int64(s, 4, m.prev_ts);
    sqlite3_bind_int64(s, 5, (sqlite3_int64)m.prev_count);
    sqlite3_bind_int64(s, 6, seq);
    sqlite3_bind_int64(s, 7, (sqlite3_int64)m.npoints);
    return ln__sq_run(be, s, "metrics");
}

int ln__sq_metrics_collect(sq_be *be, const char *queue, const ln__jobs_step *st, int64_t now) {
    uint64_t completed = 0, failed = 0;
    for (size_t i = 0; i < st->ndone; i++) {
        const ln__job_done *d = &st->done[i];
        if (d->rc != 0) continue;
        completed += d->kind == LN__DONE_COMPLETE;
        failed += d->kind == LN__DONE_FAIL;
    }
    unsigned max = st->metrics_max_points;
    int err = 0;
    if (completed > 0) err = count_jobs(be, queue, LN_JOB_COMPLETED, completed, now, max);
    if (err == 0 && failed > 0) err = count_jobs(be, queue, LN_JOB_FAILED, failed, now, max);
    return err;
}

int ln__sq_metrics(ln__jobs_be *b, const char *queue, int type, int64_t start, int64_t end,
                   ln_job_metrics *out) {
    sq_be *be = (sq_be *)b;
    int64_t seq;
    int err = ln__sq_exec(be, S_BEGIN_R);
    if (err != 0) return err;
    if ((err = read_row(be, queue, type, out, &seq)) != 0) goto done;
    uint64_t lo, hi;
    if (!ln__metrics_range(out->npoints, start, end, &lo, &hi)) goto done;
    if ((out->data = ln__malloc((size_t)(hi - lo + 1) * sizeof *out->data)) == NULL) {
        err = ln__jobs_be_err(b, LN_ENOMEM, "out of memory");
        goto done;
    }
    sqlite3_stmt *s = ln__sq_stmt_get(be, S_METRICS_DATA);
    if (s == NULL) {
        err = LN_EBACKEND;
        goto done;
    }
    sqlite3_bind_text(s, 1, queue, -1, SQLITE_STATIC);
    sqlite3_bind_int(s, 2, type);
    sqlite3_bind_int64(s, 3, seq - (int64_t)hi);
    sqlite3_bind_int64(s, 4, seq - (int64_t)lo);
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW && out->ndata < hi - lo + 1)
        out->data[out->ndata++] = (uint64_t)sqlite3_column_int64(s, 0);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) err = ln__sq_err(be, rc, "metrics (points)");
    sqlite3_reset(s);
done:
    ln__sq_rollback(be);
    return err;
}
