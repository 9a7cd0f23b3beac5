/* backoff.c - the SQLite store: a job's backoff jitter and custom
 * type (columns backoff_jitter, backoff_type of lanes_jobs, schema 12),
 * written after the insert only for the jobs that have them, so the add of
 * any other job runs the statements it always did.
 * docs/internals/backoff.md. */
#include "sqlite_int.h"

#include "internal.h"
#include "backoff.h"

#include <string.h>

int ln__sq_add_backoff(sq_be *be, const ln_job_opts *o) {
    if (!(o->backoff_jitter > 0) && o->backoff_type == NULL) return 0;
    sqlite3_stmt *s = ln__sq_stmt_get(be, S_ADD_BACKOFF);
    if (s == NULL) return LN_EBACKEND;
    sqlite3_bind_int64(s, 1, sqlite3_last_insert_rowid(be->db));
    sqlite3_bind_double(s, 2, o->backoff_jitter > 0 ? o->backoff_jitter : 0);
    if (o->backoff_type != NULL) sqlite3_bind_text(s, 3, o->backoff_type, -1, SQLITE_STATIC);
    return ln__sq_run(be, s, "add (backoff)");
}

int ln__sq_read_backoff(sq_be *be, sqlite3_stmt *s, int col, double *jitter, char **type) {
    *jitter = ln__backoff_clamp_jitter(sqlite3_column_double(s, col));
    *type = NULL;
    const char *t = (const char *)sqlite3_column_text(s, col + 1);
    if (t == NULL) return 0;
    if ((*type = ln__strdup(t)) == NULL)
        return ln__jobs_be_err(&be->base, LN_ENOMEM, "out of memory");
    return 0;
}
