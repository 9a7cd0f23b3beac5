/* gate.h - the service's front door: a listening socket on 127.0.0.1, a
 * thread per served connection (http.h), at most max_conns at once.
 *
 * The accepting thread accepts every connection itself, so no client
 * waits unanswered in the listen backlog:
 *
 *   served    while fewer than max_conns are open, a connection gets its
 *             own thread running wp_http_serve (keep-alive, closed after
 *             idle_timeout_s idle), so a request that waits (for a pooled
 *             database connection, for the push) blocks only its own
 *             connection; each request must arrive whole (head and body)
 *             within request_timeout_s (http.h), so a stalled or
 *             trickling client holds its place for that long at most;
 *   idle      when max_conns are open and one of them is an idle
 *             keep-alive connection (between requests), the one idle the
 *             longest is closed and the new connection is served in its
 *             place;
 *   rejected  past max_conns with none idle, up to reject_max at once, the accepting
 *             thread answers at once with 503 and a JSON error
 *             ("overloaded", Retry-After: 1), sends FIN and reads what the
 *             client still sends until it closes, for at most 1 s;
 *   closed    past both (over a thousand connects within a second) a
 *             connection gets the same 503 and is closed at once, without
 *             the lingering read: the client learns at once, never waits.
 *
 * Thread rules: start and stop from one thread; the handler runs on the
 * connections' threads, several at once.
 */
#ifndef WP_GATE_H
#define WP_GATE_H

#include "http.h"

#include <stdint.h>

/* Most connections answered 503 at once (each one descriptor). */
#define WP_GATE_REJECT_MAX 1024

typedef struct wp_gate wp_gate;

typedef struct wp_gate_opts {
    uint16_t port; /* 0 = any free port */
    unsigned max_conns;
    unsigned reject_max; /* connections being answered 503, <= WP_GATE_REJECT_MAX */
    unsigned idle_timeout_s;
    unsigned request_timeout_s; /* the deadline of a request's head and body */
    wp_http_handler handler;
    void *cls;
} wp_gate_opts;

/* Listen and start the accepting thread. 0, or -1 with the reason printed. */
int wp_gate_start(wp_gate **out, const wp_gate_opts *o);
/* The port it listens on. */
uint16_t wp_gate_port(const wp_gate *g);
/* Stop accepting, end every connection (each finishes the request it is
 * answering), wait for their threads, free. NULL is a no-op. */
void wp_gate_stop(wp_gate *g);

#endif
