/* writes.h - the work of one comment or like, split where the two modes
 * split it (docs/writepath.md):
 *
 *   wp_write_insert     the core INSERT            request path in both modes
 *   wp_write_followups  mark the row counted, count UPDATE, notify-targets
 *                       SELECT, notification INSERTs, in one transaction
 *   wp_write_push       the simulated push call (a 30 ms sleep)
 *
 * naive runs all three before answering; async runs the insert together
 * with an outbox row in one transaction (wp_write_insert_outbox) and
 * answers; the outbox relay turns the row into a job (outbox.h) and the
 * worker runs the other two. Both modes run the same statements, async
 * with the outbox row's INSERT added. Each statement gets a span (a child
 * of 'parent').
 *
 * The follow-ups are idempotent: they only count a row whose 'counted' flag
 * they flip from 0 to 1 in the same transaction, and notifications are
 * unique per (kind, source, user), so a job delivered twice changes nothing
 * the second time.
 *
 * Thread rules: the caller owns conn and trace for the duration of a call.
 */
#ifndef WP_WRITES_H
#define WP_WRITES_H

#include "db.h"
#include "trace.h"

#include <stdint.h>

typedef enum wp_kind { WP_COMMENT, WP_LIKE } wp_kind;

/* Outcomes. */
enum {
    WP_OK = 0,
    WP_ALREADY = 1,  /* like: the user already likes the post; nothing written */
    WP_ENOPOST = -1, /* no such post; nothing written */
    WP_ENOUSER = -2, /* no such user; nothing written */
    WP_EDB = -3      /* database error (busy beyond the timeout, I/O) */
};

typedef struct wp_write {
    wp_kind kind;
    int64_t post_id, user_id;
    const char *body; /* comment text (comments only) */
    int64_t id;       /* out: comment id, or the like's rowid */
    int64_t outbox;   /* out: its outbox row id (async), 0 = none */
} wp_write;

/* The kind's name: "comment" or "like" (static). */
const char *wp_kind_name(wp_kind kind);

/* INSERT the comment or like (counted = 0). WP_OK with w->id set,
 * WP_ALREADY, WP_ENOPOST, WP_ENOUSER or WP_EDB. */
int wp_write_insert(wp_conn *c, wp_trace *tr, const wp_span *parent, wp_write *w);

/* The same INSERT and, in the same transaction, its outbox row (kind, row,
 * post, user, traceparent, now): both commit or neither does. WP_OK with
 * w->id and w->outbox set, or as wp_write_insert. traceparent may be NULL. */
int wp_write_insert_outbox(wp_conn *c, wp_trace *tr, const wp_span *parent, wp_write *w,
                           const char *traceparent);

/* The follow-up transaction for the row w->id (w->kind, post, user).
 * *targets: how many users are to be notified (0 when the row was already
 * counted by an earlier delivery). WP_OK or WP_EDB (rolled back). */
int wp_write_followups(wp_conn *c, wp_trace *tr, const wp_span *parent, const wp_write *w,
                       int *targets);

/* The simulated push to the notified users: one call of push_ms. */
void wp_write_push(wp_trace *tr, const wp_span *parent, unsigned push_ms, int targets);

#endif
