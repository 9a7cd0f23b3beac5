/* http.h - one HTTP/1.1 connection of the service, parsed by llhttp.
 *
 * wp_http_serve reads requests from a connected socket, lets llhttp parse
 * them and calls the handler once per request, also for every request the
 * HTTP layer refuses (then with 'error' set: the handler answers that
 * error, so every answer is the API's JSON). The handler answers with
 * wp_http_respond, exactly once. The rules enforced here, each answered
 * before any body is read:
 *
 *   400 invalid_request      llhttp refused the request (garbage request
 *                            line, bad header syntax, non-numeric or
 *                            duplicate Content-Length, ...)
 *   411 length_required      any Transfer-Encoding (chunked or not)
 *   413 too_large            Content-Length over WP_HTTP_BODY_MAX
 *   431 headers_too_large    request line and headers over WP_HTTP_HEAD_MAX
 *   505 version_not_supported  an HTTP version other than 1.0 and 1.1
 *   408 request_timeout      a request not read whole (head and body)
 *                            within request_ms, or begun and then idle
 *                            for idle_ms
 *
 * The request deadline (slowloris): a new connection must deliver its
 * whole first request within request_ms of being served, and a keep-alive
 * connection each further request within request_ms of its first byte.
 * Bytes that trickle in do not extend it (it is no per-read idle timer).
 * The time the handler takes does not count.
 *
 * After a refused request the connection is closed (after a short
 * lingering read, so that the client reads the answer rather than a
 * reset). Keep-alive as HTTP/1.1 and HTTP/1.0 say; an idle connection (a
 * request answered, no byte of the next one yet) is closed after idle_ms,
 * or earlier when the gate needs its place (set_idle); a readable stop_fd
 * ends the connection after the request in progress.
 */
#ifndef WP_HTTP_H
#define WP_HTTP_H

#include <stddef.h>

#define WP_HTTP_BODY_MAX 16384 /* bytes of request body accepted */
#define WP_HTTP_HEAD_MAX 8192  /* bytes of request line and headers accepted */

typedef struct wp_http_request {
    const char *method;      /* "POST", ...; "" when not parsed */
    const char *url;         /* the request target; "" when not parsed */
    const char *traceparent; /* the header's value, or NULL */
    const char *body;
    size_t body_len;
    /* 0, or the status of a request this layer refused, with the error
     * code and message of its JSON answer (valid during the call). */
    int error;
    const char *error_code, *error_message;
} wp_http_request;

typedef struct wp_http_conn wp_http_conn;

/* Called on the connection's thread; must call wp_http_respond once. */
typedef void (*wp_http_handler)(void *cls, wp_http_conn *c, const wp_http_request *q);

/* The connection (conn of wp_http_serve) became idle (1: waiting for the
 * next request, no byte of it read) or busy (0). Returns 1 when the
 * connection must end at once (the gate took its place), else 0. */
typedef int (*wp_http_set_idle)(void *conn, int idle);

typedef struct wp_http_opts {
    wp_http_handler handler;
    void *cls;
    int idle_ms;               /* close an idle connection after this long */
    int request_ms;            /* the deadline of a request's head and body (above) */
    int stop_fd;               /* readable: stop serving */
    wp_http_set_idle set_idle; /* may be NULL */
} wp_http_opts;

/* Answer the current request: status, the JSON body, the traceparent to
 * echo, and extra header lines ("Name: value\r\n"..., or NULL). 0, or -1
 * when the connection failed (it is then closed). */
int wp_http_respond(wp_http_conn *c, int status, const char *json, size_t len,
                    const char *traceparent, const char *extra_headers);

/* Serve the connected socket fd until the client closes it, it idles, a
 * request is refused or stop_fd becomes readable; fd is non-blocking and
 * stays open (the caller closes it). conn is passed to o->set_idle. */
void wp_http_serve(int fd, const wp_http_opts *o, void *conn);

#endif
