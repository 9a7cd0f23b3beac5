/* flow_tree.c - removing a job with its subtree of children, or only its
 * unprocessed children's subtrees (jobs_flows.h), on Redis: one
 * remove_tree.lua call, all or nothing, bounded by the caller's max
 * (docs/internals/flows.md). */
#include "redis_int.h"

#include "internal.h"
#include "redis_codes.h"
#include "redis_scripts.h"

#include <stdio.h>

/* remove_tree.lua: the subtree of id, or (pending_only) only its
 * unprocessed children's. */
static int remove_tree_mode(ln__jobs_be *be, const char *queue, const char *id, size_t max,
                            int pending_only, size_t *removed) {
    ln__redis_be *r = ln__redis_at(be, queue);
    char cap[24];
    snprintf(cap, sizeof cap, "%zu", max);
    const char *argv[] = {id, cap, pending_only ? "1" : "0"};
    int rc = 0;
    *removed = 0;
    redisReply *rep = ln__redis_eval(&r->conn, LN__RS_REMOVE_TREE, r->key, 3, argv, NULL, &rc);
    if (!rep) return ln__redis_public_rc(rc);
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
        err = ln__redis_remove_err(be, queue, id, res == 0 ? INT64_MIN : res);
    freeReplyObject(rep);
    return err;
}

int ln__redis_remove_tree(ln__jobs_be *be, const char *queue, const char *id, size_t max,
                          size_t *removed) {
    return remove_tree_mode(be, queue, id, max, 0, removed);
}

int ln__redis_remove_unprocessed(ln__jobs_be *be, const char *queue, const char *id, size_t max,
                                 size_t *removed) {
    return remove_tree_mode(be, queue, id, max, 1, removed);
}
