/* front.c - the backend-neutral front of the job queue: the handle,
 * opening a store by URL, adding jobs (validated here, stored by the
 * backend) and the administration calls. Every call checks its arguments
 * (validate.c: the same rules for every store), refuses to run in a forked
 * child, then runs one store method with the handle's mutex held
 * (docs/internals/backend.md). The worker's calls are in store.c. */
#include "front.h"

#include "internal.h"

#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_URL "sqlite:lanes.db"
#define LIST_LIMIT_MAX 10000
/* The longest store-numbered id ("9223372036854775807") plus NUL. */
#define NUMERIC_ID_SIZE 21

/* ------------------------------------------------------------ the handle */

int ln__jobs_enter(ln_jobs *jobs) {
    if (jobs == NULL) return LN_EINVAL;
    /* Before locking: in a child the mutex may have been copied while
     * another thread of the parent held it. pid never changes after open. */
    if (getpid() != jobs->pid) {
        snprintf(jobs->errmsg, sizeof jobs->errmsg,
                 "this handle was opened by process %ld; a child after "
                 "fork() must open its own",
                 (long)jobs->pid);
        return LN_EFORK;
    }
    pthread_mutex_lock(&jobs->mu);
    return 0;
}

int ln__jobs_leave(ln_jobs *jobs, int err) {
    ln__jobs_be *be = jobs->be;
    if (err < 0 && be->errmsg[0] != '\0')
        memcpy(jobs->errmsg, be->errmsg, sizeof jobs->errmsg);
    else if (err < 0 && jobs->errmsg[0] == '\0')
        snprintf(jobs->errmsg, sizeof jobs->errmsg, "%s", ln_strerror(err));
    be->errmsg[0] = '\0';
    pthread_mutex_unlock(&jobs->mu);
    return err;
}

int ln__jobs_err(ln_jobs *jobs, int code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(jobs->errmsg, sizeof jobs->errmsg, fmt, ap);
    va_end(ap);
    return code;
}

/* Enter, and fail with the validation message msg if code != 0. */
static int enter_checked(ln_jobs *jobs, int code, const char *msg) {
    int err = ln__jobs_enter(jobs);
    if (err != 0) return err;
    if (code != 0) {
        ln__jobs_err(jobs, code, "%s", msg);
        pthread_mutex_unlock(&jobs->mu);
    }
    return code;
}

void ln_jobs_opts_init(ln_jobs_opts *opts) {
    if (opts == NULL) return;
    memset(opts, 0, sizeof *opts);
    opts->max_data_size = LN_JOB_DATA_MAX_DEFAULT;
    opts->busy_timeout_ms = 30000;
}

int ln_jobs_open(ln_jobs **out, const char *url) {
    return ln_jobs_open_ex(out, url, NULL, NULL, 0);
}

int ln_jobs_open_ex(ln_jobs **out, const char *url, const ln_jobs_opts *opts, char *errmsg,
                    size_t errmsg_size) {
    char scratch[LN__JOBS_ERRMSG_MAX];
    if (errmsg == NULL || errmsg_size == 0) {
        errmsg = scratch;
        errmsg_size = sizeof scratch;
    }
    errmsg[0] = '\0';
    if (out == NULL) {
        snprintf(errmsg, errmsg_size, "out must not be NULL");
        return LN_EINVAL;
    }
    ln_jobs_opts o;
    ln_jobs_opts_init(&o);
    if (opts != NULL) o = *opts;
    if (o.max_data_size < 2 || o.max_data_size > (size_t)1 << 30) {
        snprintf(errmsg, errmsg_size, "max_data_size must be 2..2^30 bytes");
        return LN_EINVAL;
    }
    if (url == NULL) url = DEFAULT_URL;
    ln__jobs_be *be = NULL;
    int err;
    if (strncmp(url, "sqlite:", 7) == 0) {
        err = ln__jobs_sqlite_open(&be, url, &o, errmsg, errmsg_size);
    } else if (strncmp(url, "redis://", 8) == 0 || strncmp(url, "rediss://", 9) == 0 ||
               strncmp(url, "unix:", 5) == 0) {
#ifdef LN_HAVE_REDIS
        err = ln__jobs_redis_open(&be, url, &o, errmsg, errmsg_size);
#else
        snprintf(errmsg, errmsg_size, "'%s': built without Redis support (hiredis not found)", url);
        err = LN_ENOTSUP;
#endif
    } else if (strncmp(url, "postgres://", 11) == 0 || strncmp(url, "postgresql://", 13) == 0) {
#ifdef LN_HAVE_POSTGRES
        err = ln__jobs_postgres_open(&be, url, &o, errmsg, errmsg_size);
#else
        snprintf(errmsg, errmsg_size, "'%s': built without PostgreSQL support (libpq not found)",
                 url);
        err = LN_ENOTSUP;
#endif
    } else {
        snprintf(errmsg, errmsg_size,
                 "'%s': unknown store URL (use sqlite:PATH, "
                 "redis://HOST:PORT/DB or postgresql://HOST/DB)",
                 url);
        err = LN_EINVAL;
    }
    if (err != 0) return err;
    if (be->methods->version != LN__STORE_METHODS_VERSION) { /* a stale build */
        snprintf(errmsg, errmsg_size, "'%s': backend '%s' has store methods version %u, not %u",
                 url, be->methods->name, be->methods->version, LN__STORE_METHODS_VERSION);
        be->methods->close(be, 0);
        return LN_ENOTSUP;
    }
    ln_jobs *jobs = ln__calloc(1, sizeof *jobs);
    if (jobs == NULL || pthread_mutex_init(&jobs->mu, NULL) != 0) {
        ln__free(jobs);
        be->methods->close(be, 0);
        snprintf(errmsg, errmsg_size, "out of memory");
        return LN_ENOMEM;
    }
    jobs->be = be;
    jobs->pid = getpid();
    jobs->opts = o;
    memcpy(jobs->warning, be->warning, sizeof jobs->warning);
    *out = jobs;
    return 0;
}

void ln_jobs_close(ln_jobs *jobs) {
    if (jobs == NULL) return;
    int forked = getpid() != jobs->pid;
    jobs->be->methods->close(jobs->be, forked);
    if (!forked) pthread_mutex_destroy(&jobs->mu); /* see ln__jobs_enter */
    ln__free(jobs);
}

const char *ln_jobs_errmsg(const ln_jobs *jobs) {
    return jobs != NULL ? jobs->errmsg : "no handle";
}

const char *ln_jobs_warning(const ln_jobs *jobs) {
    return jobs != NULL && jobs->warning[0] != '\0' ? jobs->warning : NULL;
}

/* ----------------------------------------------------------------- adding */

/* Check spec i and fill nj. Returns 0 or a code with msg set. */
static int prepare_job(const ln_jobs *jobs, const ln_job_spec *spec, size_t i, size_t n,
                       size_t id_size, ln__job_new *nj, char *msg, size_t msgsize) {
    char what[48], err[LN__JOBS_ERRMSG_MAX - 48];
    if (n > 1)
        snprintf(what, sizeof what, "job %zu: ", i);
    else
        what[0] = '\0';
    int rc = ln__jobs_check_name(spec->name, LN_JOB_NAME_MAX, "job name", err, sizeof err);
    if (rc == 0) {
        if (spec->opts != NULL) {
            nj->opts = *spec->opts;
        } else {
            ln_job_opts_init(&nj->opts);
        }
        rc = ln__jobs_check_opts(&nj->opts, err, sizeof err);
    }
    if (rc == 0) {
        nj->name = spec->name;
        nj->data = spec->data_json != NULL ? spec->data_json : "{}";
        rc = ln__jobs_check_json(nj->data, jobs->opts.max_data_size, &nj->data_len, "data", err,
                                 sizeof err);
    }
    if (rc == 0 && id_size != 0) {
        size_t need = nj->opts.job_id != NULL ? strlen(nj->opts.job_id) + 1 : NUMERIC_ID_SIZE;
        if (need > id_size) {
            snprintf(err, sizeof err,
                     "id_size %zu is too small for the id "
                     "(%zu bytes needed)",
                     id_size, need);
            rc = LN_ERANGE;
        }
    }
    if (rc != 0) snprintf(msg, msgsize, "%s%s", what, err);
    return rc;
}

/* The ids of an add into ids. prepare_job checked that the new jobs' ids
 * fit; only the holder of a dedup_id (an existing job: nothing was added
 * for it) may have a longer one: LN_ERANGE, as jobs.h says. */
static int copy_ids(ln__jobs_be *be, const ln__job_new *nj, size_t n, char *ids, size_t id_size) {
    int err = 0;
    for (size_t i = 0; i < n; i++) {
        size_t need = strlen(nj[i].id) + 1;
        if (need <= id_size) {
            memcpy(ids + i * id_size, nj[i].id, need);
        } else if (err == 0) {
            ids[i * id_size] = '\0';
            err = ln__jobs_be_err(be, LN_ERANGE,
                                  "job %zu: id_size %zu is too small for the id of the job "
                                  "holding its dedup_id (%zu bytes needed); nothing was "
                                  "added for it",
                                  i, id_size, need);
        }
    }
    return err;
}

int ln_jobs_add_bulk(ln_jobs *jobs, const char *queue, const ln_job_spec *specs, size_t n,
                     char *ids, size_t id_size) {
    if (jobs == NULL) return LN_EINVAL;
    char msg[LN__JOBS_ERRMSG_MAX] = "";
    int code = ln__jobs_check_queue(queue, msg, sizeof msg);
    if (code == 0 && n > 0 && specs == NULL) {
        snprintf(msg, sizeof msg, "specs must not be NULL");
        code = LN_EINVAL;
    }
    if (code == 0 && ids != NULL && id_size == 0) {
        snprintf(msg, sizeof msg, "id_size must not be 0");
        code = LN_EINVAL;
    }
    if (code != 0) return enter_checked(jobs, code, msg);
    if (n == 0) {
        int err = ln__jobs_enter(jobs);
        return err != 0 ? err : ln__jobs_leave(jobs, 0);
    }
    ln__job_new one;
    ln__job_new *nj = &one;
    if (n == 1)
        memset(&one, 0, sizeof one);
    else if ((nj = ln__calloc(n, sizeof *nj)) == NULL)
        return enter_checked(jobs, LN_ENOMEM, "out of memory");
    /* Validate outside the lock: parsing JSON must not hold up the other
     * threads of the handle. */
    for (size_t i = 0; i < n && code == 0; i++)
        code =
            prepare_job(jobs, &specs[i], i, n, ids != NULL ? id_size : 0, &nj[i], msg, sizeof msg);
    int err = enter_checked(jobs, code, msg);
    if (err == 0) {
        err = jobs->be->methods->add(jobs->be, queue, nj, n);
        if (err == 0 && ids != NULL) {
            err = copy_ids(jobs->be, nj, n, ids, id_size);
        } else if (err == LN_EIO && ids != NULL && nj[0].unreplicated) {
            (void)copy_ids(jobs->be, nj, n, ids, id_size); /* stored: a retry would duplicate */
        }
        err = ln__jobs_leave(jobs, err);
    }
    for (size_t i = 0; i < n; i++) ln__free(nj[i].id);
    if (nj != &one) ln__free(nj);
    return err;
}

int ln_jobs_add(ln_jobs *jobs, const char *queue, const char *name, const char *data_json,
                const ln_job_opts *opts, char *id, size_t id_size) {
    ln_job_spec spec = {name, data_json, opts};
    return ln_jobs_add_bulk(jobs, queue, &spec, 1, id, id_size);
}

/* --------------------------------------------------------- administration */

/* Validate queue, then enter. */
static int enter_q(ln_jobs *jobs, const char *queue) {
    char msg[LN__JOBS_ERRMSG_MAX];
    int code = ln__jobs_check_queue(queue, msg, sizeof msg);
    return enter_checked(jobs, code, msg);
}

/* Validate queue and a job id (any id a job can have), then enter. */
static int enter_qid(ln_jobs *jobs, const char *queue, const char *id) {
    char msg[LN__JOBS_ERRMSG_MAX];
    int code = ln__jobs_check_queue(queue, msg, sizeof msg);
    /* no upper bound: another program may have stored a longer id */
    if (code == 0) code = ln__jobs_check_name(id, SIZE_MAX, "job id", msg, sizeof msg);
    return enter_checked(jobs, code, msg);
}

int ln_jobs_counts(ln_jobs *jobs, const char *queue, ln_job_counts *counts) {
    if (counts == NULL) return enter_checked(jobs, LN_EINVAL, "counts is NULL");
    int err = enter_q(jobs, queue);
    if (err != 0) return err;
    return ln__jobs_leave(jobs, jobs->be->methods->counts(jobs->be, queue, counts));
}

int ln_jobs_get(ln_jobs *jobs, const char *queue, const char *id, ln_job_info *info) {
    if (info == NULL) return enter_checked(jobs, LN_EINVAL, "info is NULL");
    memset(info, 0, sizeof *info);
    int err = enter_qid(jobs, queue, id);
    if (err != 0) return err;
    return ln__jobs_leave(jobs, jobs->be->methods->get(jobs->be, queue, id, info));
}

/* The checks a page of a listing makes, by offset or by cursor, and the
 * enter: 0 (entered), else the error (set). */
static int list_enter(ln_jobs *jobs, const char *queue, int state, size_t limit, ln_job_info **out,
                      size_t *n) {
    if (out == NULL || n == NULL)
        return enter_checked(jobs, LN_EINVAL, "out and n must not be NULL");
    *out = NULL;
    *n = 0;
    if (state < 0 || state >= LN_JOB_NSTATES)
        return enter_checked(jobs, LN_EINVAL, "unknown job state");
    if (limit < 1 || limit > LIST_LIMIT_MAX)
        return enter_checked(jobs, LN_EINVAL, "limit must be 1..10000");
    return enter_q(jobs, queue);
}

int ln_jobs_list(ln_jobs *jobs, const char *queue, int state, size_t offset, size_t limit,
                 ln_job_info **out, size_t *n) {
    int err = list_enter(jobs, queue, state, limit, out, n);
    if (err != 0) return err;
    return ln__jobs_leave(jobs,
                          jobs->be->methods->list(jobs->be, queue, state, offset, limit, out, n));
}

int ln_jobs_list_after(ln_jobs *jobs, const char *queue, int state, const char *after, size_t limit,
                       ln_job_info **out, size_t *n) {
    if (after == NULL || *after == '\0') return ln_jobs_list(jobs, queue, state, 0, limit, out, n);
    int err = list_enter(jobs, queue, state, limit, out, n);
    if (err != 0) return err;
    return ln__jobs_leave(
        jobs, jobs->be->methods->list_after(jobs->be, queue, state, after, limit, out, n));
}

int ln_jobs_check(ln_jobs *jobs, int thorough) {
    int err = ln__jobs_enter(jobs);
    if (err != 0) return err;
    return ln__jobs_leave(jobs, jobs->be->methods->check(jobs->be, thorough != 0));
}

int ln_jobs_logs(ln_jobs *jobs, const char *queue, const char *id, char ***lines, size_t *n) {
    if (lines == NULL || n == NULL)
        return enter_checked(jobs, LN_EINVAL, "lines and n must not be NULL");
    *lines = NULL;
    *n = 0;
    int err = enter_qid(jobs, queue, id);
    if (err != 0) return err;
    return ln__jobs_leave(jobs, jobs->be->methods->logs(jobs->be, queue, id, lines, n));
}

static int retry_state_ok(ln_jobs *jobs, int state) {
    if (state == LN_JOB_FAILED || state == LN_JOB_COMPLETED) return 0;
    return enter_checked(jobs, LN_EINVAL, "state must be LN_JOB_FAILED or LN_JOB_COMPLETED");
}

int ln_jobs_retry_finished(ln_jobs *jobs, const char *queue, const char *id, int state) {
    size_t count;
    int64_t bound = -1;
    int err = retry_state_ok(jobs, state);
    if (err == 0) err = enter_qid(jobs, queue, id);
    if (err != 0) return err;
    return ln__jobs_leave(jobs,
                          jobs->be->methods->retry(jobs->be, queue, id, state, &bound, &count));
}

int ln_jobs_retry(ln_jobs *jobs, const char *queue, const char *id) {
    return ln_jobs_retry_finished(jobs, queue, id, LN_JOB_FAILED);
}

/* Steps until one moves fewer than a step's worth. The bound (the first
 * step's clock when before_ms < 0) ends it: a job finishing meanwhile is
 * after it, so retried jobs that finish again are not taken again. */
int ln_jobs_retry_all_finished(ln_jobs *jobs, const char *queue, int state, int64_t before_ms,
                               size_t *count) {
    size_t total = 0, step = LN__RETRY_STEP;
    if (count != NULL) *count = 0;
    int err = retry_state_ok(jobs, state);
    if (err == 0) err = enter_q(jobs, queue);
    if (err != 0) return err;
    int64_t bound = before_ms < 0 ? -1 : before_ms;
    while (err == 0 && step == LN__RETRY_STEP) {
        err = jobs->be->methods->retry(jobs->be, queue, NULL, state, &bound, &step);
        if (err == 0) total += step;
        LN_ASSERT(err != 0 || (step <= LN__RETRY_STEP && bound >= 0));
    }
    if (count != NULL) *count = total; /* on error too: the steps done stay done */
    return ln__jobs_leave(jobs, err);
}

int ln_jobs_retry_all(ln_jobs *jobs, const char *queue, size_t *count) {
    return ln_jobs_retry_all_finished(jobs, queue, LN_JOB_FAILED, -1, count);
}

int ln_jobs_remove(ln_jobs *jobs, const char *queue, const char *id) {
    int err = enter_qid(jobs, queue, id);
    if (err != 0) return err;
    return ln__jobs_leave(jobs, jobs->be->methods->remove(jobs->be, queue, id));
}

int ln_jobs_remove_tree(ln_jobs *jobs, const char *queue, const char *id, size_t *removed) {
    size_t r = 0;
    if (removed != NULL) *removed = 0;
    int err = enter_qid(jobs, queue, id);
    if (err != 0) return err;
    if (jobs->be->methods->remove_tree == NULL)
        return ln__jobs_leave(jobs,
                              ln__jobs_err(jobs, LN_ENOTSUP, "the %s store cannot remove a tree",
                                           jobs->be->methods->name));
    err = jobs->be->methods->remove_tree(jobs->be, queue, id, LN_JOBS_REMOVE_TREE_MAX, &r);
    err = ln__jobs_leave(jobs, err);
    if (removed != NULL) *removed = err == 0 ? r : 0;
    return err;
}

int ln_jobs_clean(ln_jobs *jobs, const char *queue, int state, int64_t age_ms, uint64_t keep,
                  size_t *removed) {
    size_t r = 0;
    if (state != LN_JOB_COMPLETED && state != LN_JOB_FAILED)
        return enter_checked(jobs, LN_EINVAL, "clean removes completed or failed jobs only");
    int err = enter_q(jobs, queue);
    if (err != 0) return err;
    err = ln__jobs_leave(jobs, jobs->be->methods->clean(jobs->be, queue, state, age_ms, keep, &r));
    if (removed != NULL) *removed = err == 0 ? r : 0;
    return err;
}

static int set_paused(ln_jobs *jobs, const char *queue, int paused) {
    int err = enter_q(jobs, queue);
    if (err != 0) return err;
    return ln__jobs_leave(jobs, jobs->be->methods->pause(jobs->be, queue, paused));
}
int ln_jobs_pause(ln_jobs *jobs, const char *queue) {
    return set_paused(jobs, queue, 1);
}
int ln_jobs_resume(ln_jobs *jobs, const char *queue) {
    return set_paused(jobs, queue, 0);
}

int ln_jobs_is_paused(ln_jobs *jobs, const char *queue, int *paused) {
    if (paused == NULL) return enter_checked(jobs, LN_EINVAL, "paused is NULL");
    int err = enter_q(jobs, queue);
    if (err != 0) return err;
    return ln__jobs_leave(jobs, jobs->be->methods->is_paused(jobs->be, queue, paused));
}

int ln_jobs_drain(ln_jobs *jobs, const char *queue, size_t *removed) {
    size_t r = 0;
    int err = enter_q(jobs, queue);
    if (err != 0) return err;
    err = ln__jobs_leave(jobs, jobs->be->methods->drain(jobs->be, queue, &r));
    if (removed != NULL) *removed = r; /* on error too: the steps done stay done */
    return err;
}

/* Paused first, as BullMQ's, then the store's steps until the queue is
 * gone. Jobs added meanwhile go too, but at most 4 steps more than the
 * queue's size at the first step needs are made, so a producer faster
 * than the steps cannot keep it going (BullMQ's loop has no bound). */
int ln_jobs_obliterate(ln_jobs *jobs, const char *queue, int force, size_t *removed) {
    size_t r = 0;
    if (removed != NULL) *removed = 0;
    if (force != 0 && force != 1) return enter_checked(jobs, LN_EINVAL, "force must be 0 or 1");
    int err = enter_q(jobs, queue);
    if (err != 0) return err;
    ln__jobs_be *be = jobs->be;
    err = be->methods->pause(be, queue, 1);
    int64_t left = -1, max_steps = -1;
    int more = 1;
    for (int64_t steps = 0; err == 0 && more; steps++) {
        if (max_steps >= 0 && steps >= max_steps) {
            err = ln__jobs_be_err(be, LN_EBUSY,
                                  "queue '%s': jobs keep being added faster than obliterate "
                                  "removes them; %zu removed so far",
                                  queue, r);
            break;
        }
        err = be->methods->obliterate(be, queue, force, left < 0 ? &left : NULL, &r, &more);
        if (max_steps < 0 && left >= 0) max_steps = left / LN__OBLITERATE_STEP + 4;
    }
    if (removed != NULL) *removed = r; /* on error too: the steps done stay done */
    return ln__jobs_leave(jobs, err);
}

static int cmp_names(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int ln_jobs_queues(ln_jobs *jobs, char ***names, size_t *n) {
    if (names == NULL || n == NULL)
        return enter_checked(jobs, LN_EINVAL, "names and n must not be NULL");
    *names = NULL;
    *n = 0;
    int err = ln__jobs_enter(jobs);
    if (err != 0) return err;
    err = jobs->be->methods->queues(jobs->be, LN_JOB_QUEUES_MAX, names, n);
    if (err == 0 && *n > 1) qsort(*names, *n, sizeof **names, cmp_names);
    return ln__jobs_leave(jobs, err);
}

int ln_jobs_promote(ln_jobs *jobs, const char *queue, const char *id) {
    int err = enter_qid(jobs, queue, id);
    if (err != 0) return err;
    return ln__jobs_leave(jobs, jobs->be->methods->promote(jobs->be, queue, id));
}
