/* reserve.c - the SQLite store: the disk-space reserve that keeps a
 * store usable on a full disk.
 *
 * DESIGN
 * (beanstalkd reserves room for a job's delete record; this is the same
 * idea.) Next to the database a file PATH-reserve is kept allocated:
 * ?reserve=BYTES, or by default min(4 MiB, 1/6 of the volume), at least
 * 64 KiB, so a 2 MiB volume keeps 340 KiB and anything from 24 MiB up
 * keeps 4 MiB. Its last eighth (at least 32 KiB) is the emergency part.
 * What may use which space:
 *  - adds refuse with LN_ENOSPC unless the reserve is whole, so they never
 *    eat it: the volume minus the reserve is theirs;
 *  - every write that finishes, fails or releases stored jobs (the
 *    worker's steps, stalled recovery, progress and logs, retry) that
 *    fails for lack of space frees the reserve down to the emergency part
 *    and runs once more (a failed write changed nothing). From then on
 *    (the reserve not whole) each such write is followed by a checkpoint,
 *    so SQLite reuses the WAL from its start instead of growing it, and
 *    journal_size_limit (one reserve) gives back what a WAL grew beyond
 *    that at its next reset; what is left goes to the data those writes
 *    add (results, reasons, logs). Deletes put pages on SQLite's free
 *    list, which those writes reuse;
 *  - a WAL must always be copyable: a page committed to the WAL that the
 *    database file has no room to grow for blocks every checkpoint, so
 *    the WAL can never restart and every later write, deletes too, needs
 *    new room. So while the reserve is not whole a write commits only if
 *    the volume has room for the growth it adds (twice it, plus a few
 *    pages: the WAL carries it first; ln__sq_room_commit), and when a
 *    checkpoint still finds no room (another process took it) writes
 *    that add wait until one does (ln__sq_room_gate);
 *  - the emergency part is only for the operations that free space
 *    (clean, remove, remove tree, drain, obliterate, trim events) and for
 *    releases (a worker stopping on a full disk gives its jobs back), and
 *    it is there every time, however often the reserve was used up:
 *    ln__sq_room_begin turns secure_delete to FAST (a build with
 *    secure_delete on writes every freed page once more, zeroed, into the
 *    WAL), checkpoints so the WAL restarts (freeing the emergency part
 *    first if the checkpoint needs it), and clean, drain, obliterate and
 *    trim then run in small transactions (32 jobs, 256 events, halved
 *    down to one when one does not fit), each followed by a checkpoint;
 *    an operation that still finds no room frees the emergency part and
 *    runs again. ln__sq_room_end then takes the emergency part back: a
 *    TRUNCATE checkpoint gives the WAL's room to the volume and the part
 *    is allocated from it. The WAL held at least what the operation took
 *    (a delete never grows the database), so the part comes back whole
 *    and the others find as much room free as the WAL had: they regrow
 *    it. Limits: another process may take that room in between (the
 *    part then comes back once room does), and a reader that keeps a
 *    checkpoint from finishing (a long read elsewhere) makes the WAL grow
 *    instead; the operation then fails with LN_ENOSPC and can be run
 *    again;
 *  - opening a store needs room too (SQLite's PATH-shm, the WAL): an open
 *    that fails for lack of space frees the reserve and tries again, so a
 *    store closed while its disk filled up opens again;
 *  - the WAL auto-checkpoint is sized to the reserve (reserve / page size
 *    pages): one checkpoint's worth of new pages always fits in it;
 *  - once twice the reserve is free again, the next add allocates it anew
 *    (and deletes zero freed pages again as configured).
 */
#include "sqlite_int.h"

#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#define RESERVE_MAX ((int64_t)4 << 20) /* SQLite's default checkpoint size */
#define RESERVE_MIN ((int64_t)64 << 10)

static void reserve_path(char *out, size_t size, const char *path) {
    snprintf(out, size, "%s-reserve", path);
}

/* Bytes the reserve file holds now (its size: it is only ever fallocated
 * whole or truncated to 0, and st_blocks would mislead on compressing file
 * systems). */
static int64_t reserve_held(sq_be *be) {
    struct stat st;
    return fstat(be->reserve_fd, &st) == 0 ? (int64_t)st.st_size : 0;
}

static uint64_t bytes_free(int fd) {
    struct statvfs vfs;
    return fstatvfs(fd, &vfs) == 0 ? (uint64_t)vfs.f_bavail * vfs.f_frsize : 0;
}

/* The reserve is whole again: deletes zero what they free as configured. */
static void room_back(sq_be *be) {
    char sql[64];
    snprintf(sql, sizeof sql, "PRAGMA secure_delete=%d", be->secure_delete);
    if (be->lean_delete && sqlite3_exec(be->db, sql, NULL, NULL, NULL) == SQLITE_OK)
        be->lean_delete = 0;
}

int ln__sq_reserve_check(sq_be *be) {
    if (be->reserve_fd < 0 || reserve_held(be) >= be->reserve_bytes) return 0;
    /* Take the reserve back only with as much room again to spare: right
     * after a worker freed it, the space is that worker's to use. */
    uint64_t avail = bytes_free(be->reserve_fd);
    int rc = ENOSPC;
    if (avail >= 2 * (uint64_t)be->reserve_bytes)
        rc = posix_fallocate(be->reserve_fd, 0, (off_t)be->reserve_bytes);
    if (rc == 0) {
        room_back(be);
        return 0;
    }
    if (rc != ENOSPC) {
        char ebuf[128];
        return ln__jobs_be_err(&be->base, LN_EIO, "cannot allocate the disk-space reserve: %s",
                               strerror_r(rc, ebuf, sizeof ebuf));
    }
    return ln__jobs_be_err(&be->base, LN_ENOSPC,
                           "disk full: %llu bytes free on the store's "
                           "volume; adds need %lld free (twice the %lld "
                           "bytes kept for finishing, cleaning and removing "
                           "stored jobs)",
                           (unsigned long long)avail, 2 * (long long)be->reserve_bytes,
                           (long long)be->reserve_bytes);
}

int ln__sq_add_full(sq_be *be) {
    char was[LN__JOBS_ERRMSG_MAX];
    snprintf(was, sizeof was, "%s", be->base.errmsg);
    if (be->reserve_fd < 0)
        return ln__jobs_be_err(&be->base, LN_ENOSPC, "disk full: no room for the add (%s)", was);
    return ln__jobs_be_err(&be->base, LN_ENOSPC,
                           "disk full: no room for the add (%llu bytes free "
                           "on the store's volume besides %lld of the %lld "
                           "kept for finishing, cleaning and removing stored "
                           "jobs; %s)",
                           (unsigned long long)bytes_free(be->reserve_fd),
                           (long long)reserve_held(be), (long long)be->reserve_bytes, was);
}

/* The emergency part of the reserve: only writes that free space or
 * release jobs may use it (ln__sq_room_end takes it back after each). */
static int64_t delete_floor(const sq_be *be) {
    int64_t floor = (be->reserve_bytes / 8) & ~(int64_t)4095;
    return floor > RESERVE_MIN / 2 ? floor : RESERVE_MIN / 2;
}

int ln__sq_reserve_release(sq_be *be, int for_delete) {
    int64_t keep = for_delete ? 0 : delete_floor(be);
    if (be->reserve_fd < 0 || reserve_held(be) <= keep) return 0;
    be->reserve_low = 1;
    return ftruncate(be->reserve_fd, keep) == 0;
}

int ln__sq_reserve_free(const char *path) {
    char rpath[4200];
    struct stat st;
    reserve_path(rpath, sizeof rpath, path);
    return stat(rpath, &st) == 0 && st.st_size > 0 && truncate(rpath, 0) == 0;
}

void ln__sq_relieve(sq_be *be) {
    be->reserve_low = be->reserve_fd >= 0 && reserve_held(be) < be->reserve_bytes;
    if (!be->reserve_low) {
        be->ckpt_behind = 0;
        return;
    }
    int rc = sqlite3_wal_checkpoint_v2(be->db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
    be->ckpt_behind = rc == SQLITE_FULL;
}

int ln__sq_retry_for_space(sq_be *be, int err, int for_delete) {
    if (err != LN_ENOSPC || !ln__sq_reserve_release(be, for_delete)) return 0;
    ln__sq_relieve(be);
    return 1;
}

int ln__sq_relieved(sq_be *be, int err) {
    if (err == 0) ln__sq_relieve(be);
    if (err != LN_ENOSPC || be->reserve_fd < 0) return err;
    /* The reserve was freed and its room is taken too (by the data the
     * finished jobs added: results, reasons, logs). */
    char was[LN__JOBS_ERRMSG_MAX];
    snprintf(was, sizeof was, "%s", be->base.errmsg);
    return ln__jobs_be_err(&be->base, LN_ENOSPC,
                           "disk full: the %lld bytes kept for finishing "
                           "stored jobs are used up (%lld more are kept for "
                           "cleaning, removing and releasing); clean or "
                           "remove finished jobs (their room is reused) or "
                           "free space on the volume (%s)",
                           (long long)(be->reserve_bytes - delete_floor(be)),
                           (long long)delete_floor(be), was);
}

int ln__sq_room_begin(sq_be *be) {
    if (be->reserve_fd < 0 || reserve_held(be) >= be->reserve_bytes) return 0;
    be->room_op = 1;
    /* secure_delete (on in many builds of SQLite) writes every page a
     * delete frees once more, zeroed, into the WAL: room a full disk does
     * not have. FAST zeroes what is written anyway. */
    if (!be->lean_delete &&
        sqlite3_exec(be->db, "PRAGMA secure_delete=FAST", NULL, NULL, NULL) == SQLITE_OK)
        be->lean_delete = 1;
    /* The emergency part goes first when the WAL holds pages the database
     * file has no room for yet: the checkpoint needs it. Then the WAL
     * restarts from its start and the delete reuses its room. */
    ln__sq_relieve(be);
    if (be->ckpt_behind && ln__sq_reserve_release(be, 1)) ln__sq_relieve(be);
    return 1;
}

int ln__sq_room_commit(sq_be *be) {
    if (!be->reserve_low || be->room_op || be->reserve_fd < 0) return 0;
    int64_t pages = 0, page = 0;
    sqlite3_file *f = NULL;
    sqlite3_int64 size = 0;
    if (ln__sq_pragma_int(be, "PRAGMA page_count", &pages) != 0 ||
        ln__sq_pragma_int(be, "PRAGMA page_size", &page) != 0 ||
        sqlite3_file_control(be->db, "main", SQLITE_FCNTL_FILE_POINTER, &f) != SQLITE_OK ||
        f == NULL || f->pMethods == NULL || f->pMethods->xFileSize(f, &size) != SQLITE_OK)
        return 0; /* the COMMIT and its checkpoint find out */
    int64_t grow = pages * page - (int64_t)size;
    uint64_t avail = bytes_free(be->reserve_fd);
    if (grow <= 0 || avail >= 2 * (uint64_t)grow + 4 * (uint64_t)page) return 0;
    return ln__jobs_be_err(&be->base, LN_ENOSPC,
                           "disk full: no room for the database to grow by %lld bytes (%llu "
                           "free; the WAL carries them too)",
                           (long long)grow, (unsigned long long)avail);
}

int ln__sq_room_gate(sq_be *be) {
    if (!be->ckpt_behind || be->room_op) return 0;
    ln__sq_relieve(be); /* room may have come back */
    if (!be->ckpt_behind) return 0;
    return ln__jobs_be_err(&be->base, LN_ENOSPC,
                           "disk full: the store's WAL cannot be copied into the database "
                           "(no room for it to grow)");
}

void ln__sq_room_end(sq_be *be) {
    int64_t want = delete_floor(be), held;
    be->room_op = 0;
    if (be->reserve_fd < 0 || (held = reserve_held(be)) >= want) return;
    /* The WAL's room goes back to the volume and the emergency part is
     * taken from it: those who wrote into the WAL before find as much room
     * free as the WAL had, so this takes nothing from them. */
    sqlite3_wal_checkpoint_v2(be->db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
    if (bytes_free(be->reserve_fd) >= (uint64_t)want &&
        posix_fallocate(be->reserve_fd, 0, (off_t)want) != 0)
        (void)!ftruncate(be->reserve_fd, held); /* whole or not at all */
}

/* The default size: min(4 MiB, 1/6 of the volume), at least 64 KiB. */
static int64_t default_size(int fd) {
    struct statvfs vfs;
    if (fstatvfs(fd, &vfs) != 0) return RESERVE_MAX;
    int64_t part = (int64_t)((uint64_t)vfs.f_blocks * vfs.f_frsize / 6);
    part &= ~(int64_t)4095;
    return part > RESERVE_MAX ? RESERVE_MAX : part < RESERVE_MIN ? RESERVE_MIN : part;
}

static int set_pragmas(sq_be *be) {
    /* One auto-checkpoint's worth of WAL must fit in the reserve.
     *
     * SQLite's automatic checkpoints stay on: they keep the WAL from
     * growing without a separate process. One runs inside the write that
     * commits the page past this threshold, after its COMMIT (the call
     * returns later, the job is already durable). It is PASSIVE: it never
     * waits for a lock and never calls busy_wait (sqlite3PagerCheckpoint
     * passes no busy handler for PASSIVE), it copies only what no reader
     * still needs and leaves the rest for the next one. So a checkpoint
     * never makes an add wait for another process and adds nothing to the
     * time spent waiting for locks, which busy_ms bounds; its own cost is
     * bounded by one threshold of pages (4 MiB by default) copied and
     * synced, once per that many pages written. journal_size_limit acts
     * only when the WAL restarts from its start (after a whole checkpoint):
     * it truncates a WAL that grew past one reserve back to it. */
    int64_t page = 4096;
    int err = ln__sq_pragma_int(be, "PRAGMA page_size", &page);
    if (err != 0) return err;
    int64_t pages = be->reserve_bytes / (page > 0 ? page : 4096);
    char sql[128];
    snprintf(sql, sizeof sql, "PRAGMA wal_autocheckpoint=%lld",
             (long long)(pages > 16 ? pages : 16));
    int rc = sqlite3_exec(be->db, sql, NULL, NULL, NULL);
    if (rc != SQLITE_OK) return ln__sq_err(be, rc, "wal_autocheckpoint");
    snprintf(sql, sizeof sql, "PRAGMA journal_size_limit=%lld", (long long)be->reserve_bytes);
    int64_t ignored, secure = 0;
    err = ln__sq_pragma_int(be, sql, &ignored);
    if (err == 0) err = ln__sq_pragma_int(be, "PRAGMA secure_delete", &secure);
    be->secure_delete = (int)secure;
    return err;
}

int ln__sq_reserve_open(sq_be *be, const char *path) {
    if (be->reserve_bytes == 0) return 0;
    char rpath[4200];
    reserve_path(rpath, sizeof rpath, path);
    be->reserve_fd = open(rpath, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (be->reserve_fd < 0) {
        int e = errno;
        char ebuf[128];
        int code = e == ENOSPC                               ? LN_ENOSPC
                   : e == EACCES || e == EPERM || e == EROFS ? LN_EACCES
                                                             : LN_EIO;
        return ln__jobs_be_err(&be->base, code, "cannot create %s: %s", rpath,
                               strerror_r(e, ebuf, sizeof ebuf));
    }
    if (be->reserve_bytes < 0) be->reserve_bytes = default_size(be->reserve_fd);
    ln__sq_reserve_check(be); /* a full disk here is no reason to refuse opening */
    return set_pragmas(be);
}
