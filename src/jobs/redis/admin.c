/* redis_admin.c - administration calls of the Redis backend: removing a
 * job alone (remove.lua) or with its subtree (remove_tree.lua, store
 * methods version 14), draining a queue (drain.lua), obliterating one
 * (obliterate.lua, version 19), and the queue list (version 4, backend.h): BullMQ
 * keeps no registry of queues, so they are
 * found as dashboards such as Bull Board's hosts find them, by their
 * "<prefix>:<queue>:meta" hash (written the first time a script touches a
 * queue: docs/internals/redis-layout.md), with SCAN in steps of COUNT
 * 1000 keys (never KEYS, which blocks the server). */
#include "redis_admin.h"

#include "internal.h"
#include "redis_codes.h"
#include "redis_scripts.h"

#include <stdio.h>
#include <string.h>

#define SCAN_COUNT "1000"
/* Jobs one drain.lua call looks at (docs/internals/drain.md): as clean's
 * BATCH, a call of a few milliseconds, and a million jobs in 1,000 calls. */
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

int ln__redis_queues(ln__redis_conn *c, const char *prefix, ln__jobs_be *be, size_t max,
                     char ***names, size_t *n) {
    char pattern[600], cursor[32] = "0";
    if (meta_pattern(prefix, pattern, sizeof pattern) != 0)
        return ln__jobs_be_err(be, LN_EINVAL, "redis key prefix too long");
    char **arr = ln__calloc(max > 0 ? max : 1, sizeof *arr);
    if (arr == NULL) return ln__jobs_be_err(be, LN_ENOMEM, "out of memory");
    size_t len = 0, plen = strlen(prefix);
    int rc = 0;
    do {
        const char *argv[] = {"SCAN", cursor, "MATCH", pattern, "COUNT", SCAN_COUNT};
        redisReply *rep = ln__redis_command(c, 6, argv, NULL, &rc);
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

/* Once open, a lost or unreachable server is LN_EBACKEND (redis.c). */
static int public_rc(int rc) {
    return ln__redis_conn_lost(rc) ? LN_EBACKEND : rc;
}

/* The other errors remove.lua and remove_tree.lua share, for job id. */
static int remove_err(ln__jobs_be *be, const char *queue, const char *id, int64_t res) {
    if (res == LN__RC_JOB_NOT_EXIST)
        return ln__jobs_be_err(be, LN_ENOENT, "queue '%s' has no job '%s'", queue, id);
    if (res == LN__RC_SCHEDULED)
        return ln__jobs_be_err(be, LN_EBUSY,
                               "job '%s' is its job scheduler's current iteration: remove the "
                               "scheduler instead",
                               id);
    return ln__jobs_be_err(be, LN_EBACKEND, "redis: remove returned %lld", (long long)res);
}

int ln__redis_remove(ln__redis_conn *c, const char *base, ln__jobs_be *be, const char *queue,
                     const char *id) {
    int rc = 0;
    redisReply *rep = ln__redis_eval(c, LN__RS_REMOVE, base, 1, &id, NULL, &rc);
    if (!rep) return public_rc(rc);
    int64_t res = rep->type == REDIS_REPLY_INTEGER ? rep->integer : INT64_MIN;
    freeReplyObject(rep);
    if (res == 0) return 0;
    if (res == LN__RC_LOCKED)
        return ln__jobs_be_err(be, LN_EBUSY, "job '%s' is active (a worker holds its lock)", id);
    return remove_err(be, queue, id, res);
}

/* remove_tree.lua: the subtree of id, or (pending_only) only its
 * unprocessed children's. */
static int remove_tree_mode(ln__redis_conn *c, const char *base, ln__jobs_be *be, const char *queue,
                            const char *id, size_t max, int pending_only, size_t *removed) {
    char cap[24];
    snprintf(cap, sizeof cap, "%zu", max);
    const char *argv[] = {id, cap, pending_only ? "1" : "0"};
    int rc = 0;
    *removed = 0;
    redisReply *rep = ln__redis_eval(c, LN__RS_REMOVE_TREE, base, 3, argv, NULL, &rc);
    if (!rep) return public_rc(rc);
    if (rep->type != REDIS_REPLY_ARRAY || rep->elements < 1 ||
        rep->element[0]->type != REDIS_REPLY_INTEGER) {
        freeReplyObject(rep);
        return ln__jobs_be_err(be, LN_EBACKEND, "redis: unexpected reply to remove_tree");
    }
    int64_t res = rep->element[0]->integer;
    int err = 0;
    if (res == 0 && rep->elements == 2 && rep->element[1]->type == REDIS_REPLY_INTEGER)
        *removed = (size_t)rep->element[1]->integer;
    else if (res == LN__RC_LOCKED && rep->elements == 2 &&
             rep->element[1]->type == REDIS_REPLY_STRING)
        err = ln__jobs_be_err(be, LN_EBUSY,
                              "job %s of the tree under '%s' is active (a worker holds its lock)",
                              rep->element[1]->str, id);
    else if (res == LN__RC_TREE_TOO_BIG)
        err = ln__jobs_be_err(be, LN_ETOOBIG,
                              "the tree of job '%s' has more than %zu entries (its jobs and the "
                              "children their parents record): remove its subtrees first",
                              id, max);
    else
        err = remove_err(be, queue, id, res == 0 ? INT64_MIN : res);
    freeReplyObject(rep);
    return err;
}

int ln__redis_remove_tree(ln__redis_conn *c, const char *base, ln__jobs_be *be, const char *queue,
                          const char *id, size_t max, size_t *removed) {
    return remove_tree_mode(c, base, be, queue, id, max, 0, removed);
}

int ln__redis_remove_unprocessed(ln__redis_conn *c, const char *base, ln__jobs_be *be,
                                 const char *queue, const char *id, size_t max, size_t *removed) {
    return remove_tree_mode(c, base, be, queue, id, max, 1, removed);
}

/* Drain one key (drain.lua's ARGV[1]) in calls of DRAIN_CHUNK jobs, each
 * going on from where the last ended. It looks at most at as many jobs as
 * the key held at its first call, so jobs added meanwhile cannot keep it
 * going. prev: the last reply, whose anchor the next call gets. */
static int drain_key(ln__redis_conn *c, const char *base, ln__jobs_be *be, const char *what,
                     size_t *removed) {
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
        redisReply *rep =
            a.oom ? NULL : ln__redis_eval(c, LN__RS_DRAIN, base, (int)a.n, a.v, a.len, &rc);
        if (a.oom) rc = ln__jobs_be_err(be, LN_ENOMEM, "out of memory");
        ln__redis_args_free(&a);
        if (prev) freeReplyObject(prev);
        if (!rep) return public_rc(rc);
        int ok = rep->type == REDIS_REPLY_ARRAY && rep->elements == 5;
        for (size_t i = 0; ok && i < 5; i++)
            ok = rep->element[i]->type == (i < 3 ? REDIS_REPLY_INTEGER : REDIS_REPLY_STRING);
        if (!ok) {
            freeReplyObject(rep);
            return ln__jobs_be_err(be, LN_EBACKEND, "redis: unexpected reply to drain");
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
int ln__redis_drain(ln__redis_conn *c, const char *base, ln__jobs_be *be, size_t *removed) {
    static const char *const keys[] = {"wait", "paused", "prioritized", "delayed"};
    *removed = 0;
    for (size_t i = 0; i < LN_ARRAY_SIZE(keys); i++) {
        int rc = drain_key(c, base, be, keys[i], removed);
        if (rc) return rc;
    }
    return 0;
}

/* One obliterate.lua call (backend.h's obliterate step): at most
 * LN__OBLITERATE_STEP jobs and schedulers into *removed, *more (0: the
 * queue is gone) and *left (may be NULL: the jobs there were before it). */
int ln__redis_obliterate(ln__redis_conn *c, const char *base, ln__jobs_be *be, const char *queue,
                         int force, int64_t *left, size_t *removed, int *more) {
    ln__redis_args a = {0};
    ln__redis_args_i64(&a, LN__OBLITERATE_STEP);
    ln__redis_args_str(&a, force ? "1" : "0");
    int rc = 0;
    redisReply *rep =
        a.oom ? NULL : ln__redis_eval(c, LN__RS_OBLITERATE, base, (int)a.n, a.v, a.len, &rc);
    if (a.oom) rc = ln__jobs_be_err(be, LN_ENOMEM, "out of memory");
    ln__redis_args_free(&a);
    if (!rep) return public_rc(rc);
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
