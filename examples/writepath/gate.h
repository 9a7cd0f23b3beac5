/* gate.h - the service's front door: a listening socket on 127.0.0.1 whose
 * connections go to libmicrohttpd, at most max_conns at once.
 *
 * libmicrohttpd left alone stops accepting at its connection limit
 * (FD_SETSIZE - 4 = 1020 by default): a client past it waits unanswered in
 * the listen backlog until some idle connection times out. The gate
 * accepts every connection itself and hands it to one of two daemons:
 *
 *   main    thread per connection, poll() (no FD_SETSIZE bound), closes a
 *           connection idle for idle_timeout_s; gets a connection while
 *           fewer than max_conns are open.
 *   reject  one thread, poll(), answers every request on its connections
 *           at once with 503 and a JSON error ("overloaded"), closes
 *           after it and after 1 s idle; gets the connections past
 *           max_conns, up to reject_max at once. Past that (over
 *           a thousand idle connects within a second) a connection is
 *           closed at once: the client learns immediately, never waits.
 *
 * Thread rules: start and stop from one thread; the callbacks run on the
 * main daemon's connection threads (libmicrohttpd's rules).
 */
#ifndef WP_GATE_H
#define WP_GATE_H

#include <microhttpd.h>

#include <stdint.h>

/* Most connections the reject daemon holds at once (each one descriptor). */
#define WP_GATE_REJECT_MAX 1024

typedef struct wp_gate wp_gate;

typedef struct wp_gate_opts {
    uint16_t port; /* 0 = any free port */
    unsigned max_conns;
    unsigned reject_max; /* the reject daemon's connections, <= WP_GATE_REJECT_MAX */
    unsigned idle_timeout_s;
    size_t conn_memory; /* libmicrohttpd's per-connection memory limit */
    MHD_AccessHandlerCallback access;
    void *access_cls;
    MHD_RequestCompletedCallback completed;
    void *completed_cls;
} wp_gate_opts;

/* Listen and start both daemons and the accepting thread. 0, or -1 with
 * the reason printed. */
int wp_gate_start(wp_gate **out, const wp_gate_opts *o);
/* The port it listens on. */
uint16_t wp_gate_port(const wp_gate *g);
/* Stop accepting, close every connection (joining their threads), free.
 * NULL is a no-op. */
void wp_gate_stop(wp_gate *g);

#endif
