/* admin.c - queues as a whole on Redis: pausing one (pause.lua),
 * cleaning its finished jobs (clean.lua), draining it (drain.lua),
 * obliterating it (obliterate.lua), and the queue list: BullMQ keeps no
 * registry of queues, so they are found as dashboards such as Bull
 * Board's hosts find them, by their "<prefix>:<queue>:meta" hash (written
 * the first time a script touches a queue:
 * docs/internals/redis-layout.md), with SCAN in steps of COUNT 1000 keys
 * (never KEYS, which blocks the server). */
#include "redis_int.h"

#include "internal.h"
#include "redis_scripts.h"

#include <stdio.h>
#include <string.h>

#define SCAN_COUNT "1000"
#define CLEAN_BATCH 1000 /* jobs per clean.lua call */
/* Jobs one drain.lua call looks at (docs/internals/drain.md): as
 * CLEAN_BATCH, a call of a few milliseconds, and a million jobs in 1,000 calls. */
#define DRAIN_CHUNK 1000

/* prefix with SCAN's glob characters escaped, then ":*:meta". */
static int meta_pattern(const char *prefix, char *out, size_t size) {
    size_t j = 0;
    for (const char *p = prefix; *p != '\0'; p++) {
        if (j + 2 >= size) return -1;
        if (strchr("*?[]\\", *p) != NULL) out[j++] = '\\';
        out[j++] = *p;
    }
    int w = snprintf(out + j, size - j, ":*:meta");
    return w < 0 || (size_t)w >= size - j ? -1 : 0;
}

/* The queue of key "<prefix>:<queue>:meta" into q, or 0 if key is not
 * one (a custom job id "a:b:meta" makes "<prefix>:<queue>:a:b:meta"). */
static int queue_of(const char *key, size_t klen, size_t plen, char *q) {
    if (klen < plen + 7) return 0;
    size_t qlen = klen - plen - 1 - 5;
    if (qlen == 0 || qlen >= LN_JOB_QUEUE_MAX) return 0;
    const char *s = key + plen + 1;
    if (memchr(s, ':', qlen) != NULL || memchr(s, '\0', qlen) != NULL) return 0;
    memcpy(q, s, qlen);
    q[qlen] = '\0';
    return 1;
}

/* Add the queues named by the keys of one SCAN reply (no duplicates: SCAN
 * may return a key twice). 0 or LN_ENOMEM. */
static int add_keys(const redisReply *keys, size_t plen, size_t max, char **arr, size_t *len) {
    char q[LN_JOB_QUEUE_MAX];
    for (size_t i = 0; i < keys->elements && *len < max; i++) {
        const redisReply *k = keys->element[i];
        if (k->type != REDIS_REPLY_STRING || !queue_of(k->str, k->len, plen, q)) continue;
        int seen = 0;
        for (size_t j = 0; j < *len && !seen; j++) seen = strcmp(arr[j], q) == 0;
        if (seen) continue;
        size_t l = strlen(q) + 1;
        if ((arr[*len] = ln__malloc(l)) == NULL) return LN_ENOMEM;
        memcpy(arr[(*len)++], q, l);
    }
    return 0;
}

int ln__redis_queues(ln__jobs_be *be, size_t max, char ***names, size_t *n) {
    ln__redis_be *r = (ln__redis_be *)be; /* no queue: any node of a cluster */
    const char *prefix = r->cfg.prefix;
    char pattern[600], cursor[32] = "0";
    if (meta_pattern(prefix, pattern, sizeof pattern) != 0)
        return ln__jobs_be_err(be, LN_EINVAL, "redis key prefix too long");
    char **arr = ln__calloc(max > 0 ? max : 1, sizeof *arr);
    if (arr == NULL) return ln__jobs_be_err(be, LN_ENOMEM, "out of memory");
    size_t len = 0, plen = strlen(prefix);
    int rc = 0;
    do {
        const char *argv[] = {"SCAN", cursor, "MATCH", pattern, "COUNT", SCAN_COUNT};
        redisReply *rep = ln__redis_cmd(r, 6, argv, &rc);
        if (rep == NULL) break;
        if (rep->type != REDIS_REPLY_ARRAY || rep->elements != 2 ||
            rep->element[0]->type != REDIS_REPLY_STRING || rep->element[0]->len >= sizeof cursor ||
            rep->element[1]->type != REDIS_REPLY_ARRAY) {
            freeReplyObject(rep);
            rc = ln__jobs_be_err(be, LN_EBACKEND, "redis: unexpected reply to SCAN");
            break;
        }
        memcpy(cursor, rep->element[0]->str, rep->element[0]->len + 1);
        rc = add_keys(rep->element[1], plen, max, arr, &len);
        freeReplyObject(rep);
        if (rc != 0) rc = ln__jobs_be_err(be, rc, "out of memory");
    } while (rc == 0 && len < max && strcmp(cursor, "0") != 0);
    if (rc != 0 || len == 0) {
        ln_jobs_free_lines(arr, len);
        arr = NULL;
        len = 0;
    }
    *names = arr;
    *n = len;
    return rc;
}

int ln__redis_pause(ln__jobs_be *be, const char *queue, int paused) {
    ln__redis_be *r = ln__redis_at(be, queue);
    ln__redis_args a = {0};
    ln__redis_args_str(&a, paused ? "1" : "0");
    int64_t ignored = 0;
    return ln__redis_run_int(r, LN__RS_PAUSE, &a, &ignored);
}

int ln__redis_is_paused(ln__jobs_be *be, const char *queue, int *paused) {
    ln__redis_be *r = ln__redis_at(be, queue);
    int rc = 0;
    char meta[LN__REDIS_BASE_MAX + 8];
    snprintf(meta, sizeof meta, "%smeta", r->key);
    redisReply *rep = ln__redis_cmd(r, 3, (const char *[]){"HEXISTS", meta, "paused"}, &rc);
    if (!rep) return rc;
    *paused = rep->type == REDIS_REPLY_INTEGER && rep->integer == 1;
    freeReplyObject(rep);
    return 0;
}

int ln__redis_clean(ln__jobs_be *be, const char *queue, int state, int64_t age_ms, uint64_t keep,
                    size_t *removed) {
    ln__redis_be *r = ln__redis_at(be, queue);
    int rc = 0;
    *removed = 0;
    int64_t n = 0;
    do {
        ln__redis_args a = {0};
        ln__redis_args_str(&a, ln_job_state_name(state));
        ln__redis_args_i64(&a, age_ms < 0 ? -1 : age_ms);
        ln__redis_args_i64(&a, keep > INT64_MAX ? INT64_MAX : (int64_t)keep);
        ln__redis_args_i64(&a, CLEAN_BATCH);
        if ((rc = ln__redis_run_int(r, LN__RS_CLEAN, &a, &n)) < 0) return rc;
        *removed += (size_t)n;
    } while (n == CLEAN_BATCH);
    return 0;
}

/* Drain one key (drain.lua's ARGV[1]) in calls of DRAIN_CHUNK jobs, each
 * going on from where the last ended. It looks at most at as many jobs as
 * the key held at its first call, so jobs added meanwhile cannot keep it
 * going. prev: the last reply, whose anchor the next call gets. */
static int drain_key(ln__redis_be *r, const char *what, size_t *removed) {
    redisReply *prev = NULL;
    int64_t budget = -1; /* jobs still to look at; -1 before the first call */
    for (;;) {
        int64_t want = budget < 0 || budget > DRAIN_CHUNK ? DRAIN_CHUNK : budget;
        ln__redis_args a = {0};
        ln__redis_args_str(&a, what);
        ln__redis_args_i64(&a, want);
        ln__redis_args_mem(&a, prev ? prev->element[3]->str : "", prev ? prev->element[3]->len : 0);
        ln__redis_args_mem(&a, prev ? prev->element[4]->str : "", prev ? prev->element[4]->len : 0);
        int rc = 0;
        redisReply *rep = ln__redis_run(r, LN__RS_DRAIN, &a, &rc);
        ln__redis_args_free(&a);
        if (prev) freeReplyObject(prev);
        if (!rep) return rc;
        int ok = rep->type == REDIS_REPLY_ARRAY && rep->elements == 5;
        for (size_t i = 0; ok && i < 5; i++)
            ok = rep->element[i]->type == (i < 3 ? REDIS_REPLY_INTEGER : REDIS_REPLY_STRING);
        if (!ok) {
            freeReplyObject(rep);
            return ln__jobs_be_err(&r->base, LN_EBACKEND, "redis: unexpected reply to drain");
        }
        int64_t looked = rep->element[1]->integer;
        *removed += (size_t)rep->element[0]->integer;
        if (budget < 0) budget = rep->element[2]->integer;
        budget -= looked;
        prev = rep;
        if (looked < want || budget <= 0) break;
    }
    freeReplyObject(prev);
    return 0;
}

/* The keys in drain.lua's order: the last call ('delayed') ends the markers. */
int ln__redis_drain(ln__jobs_be *be, const char *queue, size_t *removed) {
    static const char *const keys[] = {"wait", "paused", "prioritized", "delayed"};
    ln__redis_be *r = ln__redis_at(be, queue);
    *removed = 0;
    for (size_t i = 0; i < LN_ARRAY_SIZE(keys); i++) {
        int rc = drain_key(r, keys[i], removed);
        if (rc) return rc;
    }
    return 0;
}

/* One obliterate.lua call (backend.h's obliterate step): at most
 * LN__OBLITERATE_STEP jobs and schedulers into *removed, *more (0: the
 * queue is gone) and *left (may be NULL: the jobs there were before it). */
int ln__redis_obliterate(ln__jobs_be *be, const char *queue, int force, int64_t *left,
                         size_t *removed, int *more) {
    ln__redis_be *r = ln__redis_at(be, queue);
    ln__redis_args a = {0};
    ln__redis_args_i64(&a, LN__OBLITERATE_STEP);
    ln__redis_args_str(&a, force ? "1" : "0");
    int rc = 0;
    redisReply *rep = ln__redis_run(r, LN__RS_OBLITERATE, &a, &rc);
    ln__redis_args_free(&a);
    if (!rep) return rc;
    int n = rep->type == REDIS_REPLY_ARRAY ? (int)rep->elements : 0;
    for (int i = 0; i < n; i++)
        if (rep->element[i]->type != REDIS_REPLY_INTEGER) n = 0;
    int64_t first = n > 0 ? rep->element[0]->integer : 0;
    if (n == 3 && first >= 0) {
        *removed += (size_t)first;
        *more = rep->element[1]->integer != 0;
        if (left != NULL) *left = rep->element[2]->integer;
    }
    freeReplyObject(rep);
    if (n == 1 && first == -1)
        return ln__jobs_be_err(be, LN_EBUSY, "queue '%s' was resumed while being obliterated",
                               queue);
    if (n == 1 && first == -2)
        return ln__jobs_be_err(be, LN_EBUSY,
                               "queue '%s' has active jobs: not obliterated (force removes them)",
                               queue);
    if (n != 3 || first < 0)
        return ln__jobs_be_err(be, LN_EBACKEND, "redis: unexpected reply to obliterate");
    return 0;
}
