/* file.c - the SQLite store: is the file at PATH one lanes may use?
 * Another application's database, a foreign or missing schema, a damaged
 * file, a directory that refuses a new store, a path that is no regular
 * file (a device, a FIFO, a directory): each is refused at open, before
 * anything is written, with an error that says which. */
#include "sqlite_int.h"

#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Tables each schema version has; a store claiming version v lacks none
 * of lanes_tables[0 .. lanes_ntables[v]). */
static const char *const lanes_tables[] = {"lanes_queues",  "lanes_jobs",    "lanes_logs",
                                           "lanes_counts",  "lanes_dedup",   "lanes_events",
                                           "lanes_workers", "lanes_metrics", "lanes_schedulers",
                                           "lanes_limits",  "lanes_deps",    "lanes_dedup_next"};
static const int lanes_ntables[SQ_SCHEMA_VERSION + 1] = {0,  3,  4,  4,  5,  6,  7,  8, 9,
                                                         10, 11, 11, 11, 12, 12, 12, 12};

/* Is this file a lanes store (or new and empty), so lanes may write to it?
 * Only reads: run before anything changes the file (the WAL switch, the
 * schema, the reserve), so a database lanes refuses is left as it was.
 * *version: its schema version. LN_ECORRUPT for a foreign database. */
int ln__sq_check_schema(sq_be *be, int64_t *version) {
    int64_t app = 0, lanes = 0, other = 0;
    int err;
    *version = 0;
    if ((err = ln__sq_pragma_int(be, "PRAGMA user_version", version)) != 0 ||
        (err = ln__sq_pragma_int(be, "PRAGMA application_id", &app)) != 0 ||
        (err = ln__sq_pragma_int(be,
                                 "SELECT count(*) FROM sqlite_master WHERE "
                                 "name LIKE 'lanes\\_%' ESCAPE '\\'",
                                 &lanes)) != 0 ||
        (err = ln__sq_pragma_int(be,
                                 "SELECT count(*) FROM sqlite_master WHERE "
                                 "name NOT LIKE 'lanes\\_%' ESCAPE '\\' AND "
                                 "name NOT LIKE 'sqlite\\_%' ESCAPE '\\'",
                                 &other)) != 0)
        return err;
    if (app != 0 && app != SQ_APPLICATION_ID)
        return ln__jobs_be_err(&be->base, LN_ECORRUPT, "not a lanes store: application_id is %lld",
                               (long long)app);
    if (*version > SQ_SCHEMA_VERSION)
        return ln__jobs_be_err(&be->base, LN_ECORRUPT,
                               "store has schema version %lld; this lanes "
                               "reads up to %d (upgrade lanes)",
                               (long long)*version, SQ_SCHEMA_VERSION);
    if (*version == 0 && lanes != 0)
        return ln__jobs_be_err(&be->base, LN_ECORRUPT,
                               "store has lanes_* tables but no schema version");
    if (*version == 0 && other != 0)
        return ln__jobs_be_err(&be->base, LN_ECORRUPT,
                               "not a lanes store: the database has %lld "
                               "tables or indexes of another application "
                               "and no lanes schema (lanes creates its store "
                               "only in a new or empty database; left "
                               "unchanged)",
                               (long long)other);
    for (int i = 0; i < lanes_ntables[*version]; i++) {
        char sql[128];
        int64_t n = 0;
        snprintf(sql, sizeof sql,
                 "SELECT count(*) FROM sqlite_master WHERE "
                 "type = 'table' AND name = '%s'",
                 lanes_tables[i]);
        if ((err = ln__sq_pragma_int(be, sql, &n)) != 0) return err;
        if (n == 0)
            return ln__jobs_be_err(&be->base, LN_ECORRUPT,
                                   "not a lanes store: user_version is %lld "
                                   "but table %s is missing (left unchanged)",
                                   (long long)*version, lanes_tables[i]);
    }
    return 0;
}

/* PRAGMA quick_check at open for files up to this size. It reads every
 * page (b-tree structure, cell bounds, NOT NULL columns; not whether each
 * index matches its table, which only integrity_check does), so its cost
 * grows with the file: about 4 ms per MiB (a 15 MB store of 64,000 jobs
 * took 70 ms to open with it, 12 ms without). Up to 1 MiB (about 4,000
 * jobs of ~150 bytes) every open checks, a few ms at most; a larger store
 * is opened at the same cost at any size: the open reads its header and
 * schema, each statement checks the pages it reads (SQLITE_CORRUPT, and
 * impossible states, are LN_ECORRUPT, which the worker treats as fatal),
 * and ln_jobs_check (`lanes jobs URL check`) reads the whole file. */
int64_t ln__sq_quick_check_max = (int64_t)1 << 20;

/* Run PRAGMA pragma (quick_check(1) or integrity_check(1)): 0 when it
 * says ok, else LN_ECORRUPT saying what it found (path: for the message,
 * may be NULL). */
static int run_check(sq_be *be, const char *pragma, const char *path) {
    sqlite3_stmt *s;
    int rc = sqlite3_prepare_v2(be->db, pragma, -1, &s, NULL);
    if (rc != SQLITE_OK) return ln__sq_err(be, rc, pragma);
    rc = sqlite3_step(s);
    int err = 0;
    if (rc != SQLITE_ROW) {
        err = ln__sq_err(be, rc, pragma);
        if (err != LN_ECORRUPT && (rc & 0xff) == SQLITE_IOERR)
            err = ln__jobs_be_err(&be->base, LN_ECORRUPT, "store is corrupt: %s", be->base.errmsg);
    } else {
        const char *r = (const char *)sqlite3_column_text(s, 0);
        const char *head = "*** in database main ***\n";
        if (r != NULL && strncmp(r, head, strlen(head)) == 0) r += strlen(head);
        if (r == NULL || strcmp(r, "ok") != 0)
            err = ln__jobs_be_err(&be->base, LN_ECORRUPT, "store is corrupt (%s: %s)%s%s%s", pragma,
                                  r != NULL ? r : "?", path != NULL ? " [" : "",
                                  path != NULL ? path : "", path != NULL ? "]" : "");
    }
    sqlite3_finalize(s);
    return err;
}

/* A damaged small file is LN_ECORRUPT at open rather than jobs that
 * silently never run. Read-only, before anything writes. */
int ln__sq_check_pages(sq_be *be, const char *path) {
    struct stat st;
    if (stat(path, &st) != 0 || st.st_size == 0 || (int64_t)st.st_size > ln__sq_quick_check_max)
        return 0;
    return run_check(be, "PRAGMA quick_check(1)", path);
}

int ln__sq_check(ln__jobs_be *b, int thorough) {
    sq_be *be = (sq_be *)b;
    int err = ln__sq_exec(be, S_BEGIN_R); /* one snapshot */
    if (err != 0) return err;
    err = run_check(be, thorough ? "PRAGMA integrity_check(1)" : "PRAGMA quick_check(1)", NULL);
    ln__sq_exec(be, S_COMMIT);
    return err;
}

/* The open of a new store failed: if its directory is there but refuses
 * new files (permissions, a read-only mount), say so with LN_EACCES.
 * SQLite retries a failed read-write open read-only, so the errno it
 * reports is that retry's ENOENT, not why the file could not be created.
 * 0 when that is not the cause. */
int ln__sq_open_denied(sq_be *be, const char *path) {
    struct stat st;
    if (stat(path, &st) == 0 || errno != ENOENT) return 0;
    char dir[4200];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash == dir)
        slash[1] = '\0';
    else if (slash != NULL)
        *slash = '\0';
    else
        snprintf(dir, sizeof dir, ".");
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || access(dir, W_OK | X_OK) == 0) return 0;
    int e = errno;
    if (e != EACCES && e != EPERM && e != EROFS) return 0;
    char ebuf[128];
    return ln__jobs_be_err(&be->base, LN_EACCES, "cannot create the store %s: directory %s: %s",
                           path, dir, strerror_r(e, ebuf, sizeof ebuf));
}

static const char *file_kind(mode_t m) {
    return S_ISDIR(m)    ? "a directory"
           : S_ISCHR(m)  ? "a character device"
           : S_ISBLK(m)  ? "a block device"
           : S_ISFIFO(m) ? "a FIFO"
           : S_ISSOCK(m) ? "a socket"
                         : "not a regular file";
}

/* A store is a regular file, or a path where none is yet. Anything else
 * (/dev/null, /dev/full, a FIFO, a directory) is LN_EINVAL before SQLite
 * opens it: SQLite would open a device and then create PATH-journal or
 * PATH-wal beside it (/dev/null-journal as root). A symbolic link counts
 * as what it points to. 0 when the path may be opened. */
int ln__sq_check_kind(sq_be *be, const char *path) {
    struct stat st;
    if (stat(path, &st) != 0 || S_ISREG(st.st_mode)) return 0; /* absent: a new store */
    return ln__jobs_be_err(&be->base, LN_EINVAL,
                           "sqlite: '%s' is %s, not a store file (give the path of a store "
                           "or of a new file; left unchanged)",
                           path, file_kind(st.st_mode));
}
