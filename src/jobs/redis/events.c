/* events.c - the Redis store's follower of a queue's events: the
 * stream <prefix>:<queue>:events that BullMQ's scripts and lanes' write
 * (docs/internals/redis-layout.md, "events"), read as BullMQ's QueueEvents
 * reads it, with XREAD BLOCK after the last id seen.
 *
 * DESIGN
 * The follower has a connection of its own (a blocked XREAD would hold up
 * any other command on it). Its cursor is a stream id: the one 'from'
 * names, or for "$" the id of the newest entry when it opens (XREVRANGE
 * COUNT 1; "0-0" for an empty stream), so entries written after the open
 * are never missed between two reads, as they would be by re-sending "$".
 * Each read asks for up to BATCH entries and keeps them; the cursor moves
 * to the last one read. A read blocks at most SLICE_MS (and less than the
 * connection's reply timeout), so a wait of any length is a series of
 * short commands: a dead server is noticed within a slice, and a lost
 * connection is re-made by the next read (conn.c's backoff).
 * An entry's fields are returned as one JSON object of strings (jansson
 * builds it); "event" is its name and "jobId" its job id.
 */
#include "redis_int.h"

#include "internal.h"
#include "utf8.h"

#include <jansson.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SLICE_MS 1000
#define BATCH 64
#define KEY_MAX 1024 /* prefix (< 256) + queue (< 256) + ":events" */

typedef struct redis_events {
    ln__jobs_events base;
    ln__redis_conn conn; /* its own connection; cfg borrowed */
    char key[KEY_MAX];
    char cursor[48];   /* the last id read */
    redisReply *batch; /* entries read, not yet returned: [head, count) */
    size_t head, count;
    redisReply **entries;
} redis_events;

static const ln__events_methods redis_events_methods;

static void drop_batch(redis_events *e) {
    if (e->batch) freeReplyObject(e->batch);
    e->batch = NULL;
    e->entries = NULL;
    e->head = e->count = 0;
}

static void ev_close(ln__jobs_events *b) {
    redis_events *e = (redis_events *)b;
    drop_batch(e);
    ln__redis_conn_free(&e->conn);
    ln__free(e);
}

/* The newest id of the stream into e->cursor ("0-0" when empty). */
static int newest(redis_events *e) {
    const char *argv[] = {"XREVRANGE", e->key, "+", "-", "COUNT", "1"};
    int rc = 0;
    redisReply *r = ln__redis_command(&e->conn, 6, argv, NULL, &rc);
    if (!r) return rc;
    snprintf(e->cursor, sizeof e->cursor, "0-0");
    if (r->type == REDIS_REPLY_ARRAY && r->elements == 1 &&
        r->element[0]->type == REDIS_REPLY_ARRAY && r->element[0]->elements >= 1 &&
        r->element[0]->element[0]->type == REDIS_REPLY_STRING)
        snprintf(e->cursor, sizeof e->cursor, "%s", r->element[0]->element[0]->str);
    freeReplyObject(r);
    return 0;
}

/* A stream id as 'from': "ms" or "ms-seq", digits. */
static int valid_id(const char *s) {
    int dash = 0, digits = 0;
    for (; *s; s++) {
        if (*s == '-' && !dash && digits) {
            dash = 1;
            digits = 0;
        } else if (*s >= '0' && *s <= '9') {
            digits++;
        } else {
            return 0;
        }
    }
    return digits > 0;
}

int ln__redis_events_open(ln__jobs_be *be, const char *queue, const char *from,
                          ln__jobs_events **out) {
    ln__redis_be *r = ln__redis_at(be, queue);
    const ln__redis_cfg *cfg = &r->cfg; /* the handle outlives the follower */
    const char *base = r->key;
    char *err = be->errmsg;
    size_t err_size = sizeof be->errmsg;
    if (from != NULL && strcmp(from, "$") != 0 && !valid_id(from)) {
        snprintf(err, err_size,
                 "from '%s': a Redis event id is a stream id (\"ms-seq\"), \"0\" or \"$\"", from);
        return LN_EINVAL;
    }
    redis_events *e = ln__calloc(1, sizeof *e);
    if (!e) {
        snprintf(err, err_size, "out of memory");
        return LN_ENOMEM;
    }
    e->base.methods = &redis_events_methods;
    e->conn.cfg = cfg;
    e->conn.err = e->base.errmsg;
    e->conn.err_size = sizeof e->base.errmsg;
    snprintf(e->key, sizeof e->key, "%sevents", base);
    ln__redis_route(&e->conn, base); /* Redis Cluster: the slot's owner */
    int rc = 0;
    if (from == NULL || strcmp(from, "$") == 0)
        rc = newest(e);
    else
        snprintf(e->cursor, sizeof e->cursor, "%s", from);
    if (rc) {
        snprintf(err, err_size, "%s", e->base.errmsg);
        ev_close(&e->base);
        return rc;
    }
    *out = &e->base;
    return 0;
}

/* One XREAD of up to BATCH entries after the cursor, blocking up to
 * block_ms (0: not at all). Keeps the entries in e->batch. */
static int read_some(redis_events *e, int64_t block_ms) {
    char count[16], block[24];
    snprintf(count, sizeof count, "%d", BATCH);
    snprintf(block, sizeof block, "%lld", (long long)block_ms);
    const char *argv[] = {"XREAD", "COUNT", count, "BLOCK", block, "STREAMS", e->key, e->cursor};
    const char *plain[] = {"XREAD", "COUNT", count, "STREAMS", e->key, e->cursor};
    int rc = 0;
    redisReply *r = block_ms > 0 ? ln__redis_command(&e->conn, 8, argv, NULL, &rc)
                                 : ln__redis_command(&e->conn, 6, plain, NULL, &rc);
    if (!r) return rc;
    /* nil: nothing within block_ms; else [[key, [entry, ...]]] */
    if (r->type == REDIS_REPLY_ARRAY && r->elements >= 1 &&
        r->element[0]->type == REDIS_REPLY_ARRAY && r->element[0]->elements == 2 &&
        r->element[0]->element[1]->type == REDIS_REPLY_ARRAY &&
        r->element[0]->element[1]->elements > 0) {
        e->batch = r;
        e->entries = r->element[0]->element[1]->element;
        e->count = r->element[0]->element[1]->elements;
        e->head = 0;
        return 0;
    }
    freeReplyObject(r);
    return 0;
}

/* Fill ev from entry x = [id, [field, value, ...]]. */
static int hand_out(redis_events *e, const redisReply *x, ln_job_event *ev) {
    if (x->type != REDIS_REPLY_ARRAY || x->elements != 2 ||
        x->element[0]->type != REDIS_REPLY_STRING)
        return 0; /* not an entry: skip it */
    const char *id = x->element[0]->str;
    snprintf(e->cursor, sizeof e->cursor, "%s", id);
    snprintf(ev->id, sizeof ev->id, "%s", id);
    ev->at_ms = strtoll(id, NULL, 10);
    json_t *obj = json_object();
    if (!obj) return LN_ENOMEM;
    const redisReply *f = x->element[1];
    for (size_t i = 0; f->type == REDIS_REPLY_ARRAY && i + 1 < f->elements; i += 2) {
        const redisReply *k = f->element[i], *v = f->element[i + 1];
        if (k->type != REDIS_REPLY_STRING || v->type != REDIS_REPLY_STRING) continue;
        if (strcmp(k->str, "event") == 0) {
            snprintf(ev->name, sizeof ev->name, "%s", v->str);
            continue;
        }
        if (strcmp(k->str, "jobId") == 0 && !ev->job_id && !(ev->job_id = ln__strdup(v->str))) {
            json_decref(obj);
            return LN_ENOMEM;
        }
        json_t *js = ln__json_string_lossy(v->str, v->len); /* stray bytes: U+FFFD */
        if (js == NULL) {
            json_decref(obj);
            return LN_ENOMEM;
        }
        json_object_set_new(obj, k->str, js);
    }
    char *text = json_dumps(obj, JSON_COMPACT);
    json_decref(obj);
    if (!text) return LN_ENOMEM;
    ev->fields = ln__strdup(text);
    free(text); /* jansson's allocator */
    return ev->fields ? 1 : LN_ENOMEM;
}

static int64_t mono_ms(void) {
    return (int64_t)(ln__now_ns() / 1000000u);
}

static int ev_next(ln__jobs_events *b, int64_t timeout_ms, ln_job_event *ev) {
    redis_events *e = (redis_events *)b;
    int64_t deadline = timeout_ms < 0 ? -1 : mono_ms() + timeout_ms;
    /* Below the reply timeout, so a blocked read is not taken for a dead
     * connection. */
    int64_t slice = SLICE_MS;
    if (e->conn.cfg->timeout_ms / 2 < slice) slice = e->conn.cfg->timeout_ms / 2;
    if (slice < 1) slice = 1;
    for (;;) {
        while (e->head < e->count) {
            const redisReply *x = e->entries[e->head++];
            int rc = hand_out(e, x, ev);
            if (e->head == e->count) drop_batch(e);
            if (rc < 0) return rc;
            if (rc == 1) return 0;
        }
        int64_t left = slice;
        if (deadline >= 0) {
            int64_t d = deadline - mono_ms();
            if (d < left) left = d < 0 ? 0 : d;
        }
        int rc = read_some(e, left);
        if (rc) return rc;
        if (e->count == 0 && deadline >= 0 && mono_ms() >= deadline) return LN_ETIMEDOUT;
    }
}

static const ln__events_methods redis_events_methods = {
    .version = LN__EVENTS_METHODS_VERSION,
    .next = ev_next,
    .close = ev_close,
};
