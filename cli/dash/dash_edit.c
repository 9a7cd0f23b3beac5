/* dash_edit.c - the edits of `lanes dash` over lanes/jobs_edit.h
 * (docs/dash.md): a job's priority, delay and data, promoting every
 * delayed job of a queue, the counts per priority of its prioritized jobs
 * (the priorities found by a bounded walk of the prioritized list), and
 * the job holding a deduplication id, with its release. Writes reach this
 * file only after dash_http.c checked the access rules, as every action. */
#include "cli_err.h"
#include "cli_num.h"
#include "dash.h"
#include "dash_reply.h"

#include <lanes.h>

#include <string.h>

/* ln_jobs_change_delay's limit: 100 years of 366 days. */
#define DELAY_MAX_MS (100LL * 366 * 24 * 3600 * 1000)
/* The longest holder id a dedup lookup shows (ids have no upper bound:
 * another program may store a long one). */
#define HOLDER_MAX 16384

static cli_dash_reply ok(json_t *body) {
    cli_dash_reply r = {200, body};
    return r;
}

/* Query argument name as a whole number in [0, max] into *v (dflt when
 * absent, if dflt >= 0): 0, or -1 when bad or missing. */
static int num_arg(const cli_dash_req *req, const char *name, long long dflt, long long max,
                   long long *v) {
    const char *s = req->arg(req->arg_ctx, name);
    if (s == NULL) {
        *v = dflt;
        return dflt >= 0 ? 0 : -1;
    }
    return cli_parse_ll(s, 0, max, v);
}

static cli_dash_reply done(const char *id, const char *act) {
    return ok(json_pack("{s:b,s:o,s:s}", "ok", 1, "id", cli_json_text(id), "action", act));
}

/* ---------------------------------------------------------- a job's edits */

/* POST .../jobs/ID/priority?priority=N&lifo=0|1 (ln_jobs_change_priority). */
static cli_dash_reply change_priority(cli_dash *d, const cli_dash_req *req, const char *queue,
                                      const char *id) {
    long long prio, lifo;
    if (num_arg(req, "priority", -1, LN_JOB_PRIORITY_MAX, &prio) != 0)
        return cli_dash_error(400, "bad_request", "priority must be a number 0..2097151");
    if (num_arg(req, "lifo", 0, 1, &lifo) != 0)
        return cli_dash_error(400, "bad_request", "lifo must be 0 or 1");
    int err = ln_jobs_change_priority(d->jobs, queue, id, (int)prio, (int)lifo);
    if (err != 0) return cli_dash_lib_error(d, err);
    return done(id, "priority");
}

/* POST .../jobs/ID/delay?delay_ms=N (ln_jobs_change_delay). */
static cli_dash_reply change_delay(cli_dash *d, const cli_dash_req *req, const char *queue,
                                   const char *id) {
    long long ms;
    if (num_arg(req, "delay_ms", -1, DELAY_MAX_MS, &ms) != 0)
        return cli_dash_error(400, "bad_request",
                              "delay_ms must be a number of ms from now, 0..100 years");
    int err = ln_jobs_change_delay(d->jobs, queue, id, ms);
    if (err != 0) return cli_dash_lib_error(d, err);
    return done(id, "delay");
}

/* POST .../jobs/ID/data with the JSON text as the body, stored byte for
 * byte (ln_jobs_update_data); the store's refusal of a text that is not
 * JSON, or too large, is a 400 with its message. */
static cli_dash_reply update_data(cli_dash *d, const cli_dash_req *req, const char *queue,
                                  const char *id) {
    if (req->body == NULL || memchr(req->body, '\0', req->body_len) != NULL)
        return cli_dash_error(400, "bad_request",
                              "the body must be the JSON text (a NUL byte is never JSON)");
    int err = ln_jobs_update_data(d->jobs, queue, id, req->body);
    if (err == LN_EINVAL) {
        const char *msg = ln_jobs_errmsg(d->jobs);
        return cli_dash_error(400, "bad_request", msg != NULL && *msg ? msg : "not JSON");
    }
    if (err != 0) return cli_dash_lib_error(d, err);
    return done(id, "data");
}

/* ------------------------------------------------------------ a queue's */

/* POST /api/queues/Q/promote-all (ln_jobs_promote_all). */
static cli_dash_reply promote_all(cli_dash *d, const char *queue) {
    size_t n = 0;
    int err = ln_jobs_promote_all(d->jobs, queue, &n);
    if (err != 0) return cli_dash_lib_error(d, err);
    return ok(json_pack("{s:b,s:I}", "ok", 1, "promoted", (json_int_t)n));
}

/* The walk that finds the priorities present: reads of one or two jobs of
 * the prioritized list (which runs, so lists, by priority), at most
 * CLI_DASH_PRIORITY_PROBES of them. */
typedef struct walk {
    cli_dash *d;
    const char *queue;
    int state;  /* the list walked: prioritized, or paused (below) */
    int probes; /* reads left */
    int err;    /* a store error, or 0 */
} walk;

/* The priorities of the prioritized jobs at offset .. offset + n - 1 (n 1
 * or 2) into prio (-1 past the end). 0, or -1 when out of reads or the
 * store failed (w->err). */
static int probe(walk *w, size_t offset, size_t n, int prio[2]) {
    prio[0] = prio[1] = -1;
    if (w->probes <= 0) return -1;
    w->probes--;
    ln_job_info *j = NULL;
    size_t got = 0;
    int err = ln_jobs_list(w->d->jobs, w->queue, w->state, offset, n, &j, &got);
    if (err != 0) {
        w->err = err;
        return -1;
    }
    for (size_t i = 0; i < got && i < 2; i++) prio[i] = j[i].priority;
    ln_job_info_free_array(j, got);
    return 0;
}

/* A job of priority q is after the block of priority p (q -1: the end). */
static int after(int q, int p) {
    return q < 0 || q > p;
}

/* The end of the block of priority p that starts at offset o: the offset
 * of the first job of a higher priority or of the end (> o), *next its
 * priority (-1: the end). hint, the store's count of p, is tried first:
 * exact on SQLite (one read of 2 jobs); on Redis a lifo job counts one
 * priority lower (jobs_edit.h), so a gallop up and a bisection find the
 * end. -1 when out of reads or the store failed. */
static long long block_end(walk *w, size_t o, int p, uint64_t hint, int *next) {
    int pr[2];
    size_t g = o + (hint > 0 ? (size_t)hint : 1), lo = o, hi;
    if (probe(w, g - 1, 2, pr) != 0) return -1;
    if (!after(pr[0], p) && after(pr[1], p)) {
        *next = pr[1];
        return (long long)g;
    }
    if (after(pr[0], p)) {
        if (g - 1 == o) { /* the list changed under the walk */
            *next = pr[1];
            return (long long)g;
        }
        hi = g - 1;
        *next = pr[0];
    } else {
        for (size_t step = g - o;; step *= 2) {
            lo = g;
            g = lo + step;
            if (probe(w, g, 1, pr) != 0) return -1;
            if (after(pr[0], p)) break;
        }
        hi = g;
        *next = pr[0];
    }
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (probe(w, mid, 1, pr) != 0) return -1;
        if (after(pr[0], p)) {
            hi = mid;
            *next = pr[0];
        } else {
            lo = mid;
        }
    }
    return (long long)hi;
}

/* GET /api/queues/Q/priorities: the counts of the prioritized jobs per
 * priority (ln_jobs_counts_per_priority), lowest first, for at most
 * CLI_DASH_PRIORITIES_MAX priorities found by the walk above. A store
 * that lists the ready jobs of a paused queue as paused (SQLite) lists
 * them in run order too, priority 0 first: that list is walked then, and
 * priority 0 (waiting, not prioritized) is left out of the answer. */
static cli_dash_reply priorities(cli_dash *d, const char *queue) {
    ln_job_counts k;
    int err = ln_jobs_counts(d->jobs, queue, &k);
    if (err != 0) return cli_dash_lib_error(d, err);
    walk w = {d, queue, k.prioritized == 0 && k.paused > 0 ? LN_JOB_PAUSED : LN_JOB_PRIORITIZED,
              CLI_DASH_PRIORITY_PROBES, 0};
    int pr[2];
    json_t *rows = json_array();
    int more = 0, p = probe(&w, 0, 1, pr) == 0 ? pr[0] : -2;
    size_t o = 0;
    while (p >= 0) {
        if (json_array_size(rows) == CLI_DASH_PRIORITIES_MAX) {
            more = 1;
            break;
        }
        uint64_t c = 0;
        err = ln_jobs_counts_per_priority(d->jobs, queue, &p, 1, &c);
        if (err != 0) {
            json_decref(rows);
            return cli_dash_lib_error(d, err);
        }
        if (p > 0)
            json_array_append_new(rows,
                                  json_pack("{s:i,s:I}", "priority", p, "count", (json_int_t)c));
        int next = -1;
        long long end = block_end(&w, o, p, c, &next);
        if (end < 0) {
            more = 1;
            break;
        }
        o = (size_t)end;
        p = next;
    }
    if (w.err != 0) {
        json_decref(rows);
        return cli_dash_lib_error(d, w.err);
    }
    return ok(json_pack("{s:o,s:o,s:b,s:i}", "queue", cli_json_text(queue), "priorities", rows,
                        "more", more || p == -2, "reads", CLI_DASH_PRIORITY_PROBES - w.probes));
}

/* ------------------------------------------------------------- dedup ids */

/* GET /api/queues/Q/dedup/DID: the job holding dedup id DID (job_id null:
 * none now), with its state ("missing": a key naming a job that is gone). */
static cli_dash_reply dedup_get(cli_dash *d, const char *queue, const char *did) {
    static char holder[HOLDER_MAX]; /* one thread: dash.h */
    int err = ln_jobs_dedup_job(d->jobs, queue, did, holder, sizeof holder);
    if (err == LN_ENOENT)
        return ok(json_pack("{s:o,s:o,s:n,s:n}", "queue", cli_json_text(queue), "dedup_id",
                            cli_json_text(did), "job_id", "state"));
    if (err != 0) return cli_dash_lib_error(d, err);
    ln_job_info info;
    const char *state = "missing";
    err = ln_jobs_get(d->jobs, queue, holder, &info);
    if (err == 0) state = ln_job_state_name(info.state);
    if (err == 0) ln_job_info_clear(&info);
    if (err != 0 && err != LN_ENOENT && err != LN_EINVAL) return cli_dash_lib_error(d, err);
    return ok(json_pack("{s:o,s:o,s:o,s:s}", "queue", cli_json_text(queue), "dedup_id",
                        cli_json_text(did), "job_id", cli_json_text(holder), "state", state));
}

/* POST /api/queues/Q/dedup/DID/remove (ln_jobs_dedup_remove): removed 1
 * if a job held it, 0 if none did. */
static cli_dash_reply dedup_remove(cli_dash *d, const char *queue, const char *did) {
    int removed = 0;
    int err = ln_jobs_dedup_remove(d->jobs, queue, did, &removed);
    if (err != 0) return cli_dash_lib_error(d, err);
    return ok(json_pack("{s:b,s:o,s:s,s:b}", "ok", 1, "id", cli_json_text(did), "action",
                        "dedup-remove", "removed", removed));
}

/* ---------------------------------------------------------------- routing */

static int is(const cli_dash_req *req, int nseg, const char *method, const char *seg2) {
    return req->nseg == nseg && strcmp(req->method, method) == 0 && strcmp(req->seg[2], seg2) == 0;
}

int cli_dash_edit(cli_dash *d, const cli_dash_req *req, cli_dash_reply *r) {
    char *const *s = req->seg;
    if (req->nseg < 3) return 0;
    if (is(req, 3, "POST", "promote-all")) {
        *r = promote_all(d, s[1]);
    } else if (is(req, 3, "GET", "priorities")) {
        *r = priorities(d, s[1]);
    } else if (is(req, 4, "GET", "dedup")) {
        *r = dedup_get(d, s[1], s[3]);
    } else if (is(req, 5, "POST", "dedup") && strcmp(s[4], "remove") == 0) {
        *r = dedup_remove(d, s[1], s[3]);
    } else if (is(req, 5, "POST", "jobs") && strcmp(s[4], "priority") == 0) {
        *r = change_priority(d, req, s[1], s[3]);
    } else if (is(req, 5, "POST", "jobs") && strcmp(s[4], "delay") == 0) {
        *r = change_delay(d, req, s[1], s[3]);
    } else if (is(req, 5, "POST", "jobs") && strcmp(s[4], "data") == 0) {
        *r = update_data(d, req, s[1], s[3]);
    } else {
        return 0;
    }
    return 1;
}
