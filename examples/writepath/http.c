/* http.c - one HTTP/1.1 connection over llhttp (see http.h).
 *
 * DESIGN: the connection's thread reads into a buffer and feeds it to
 * llhttp, whose callbacks do all the parsing; this file only copies what
 * the service needs (the request target, two header values, the body) into
 * bounded buffers and writes the answers. A request is answered inside
 * llhttp's on_message_complete callback, so pipelined requests are
 * answered in order with no buffering of their bytes. A rule broken in a
 * callback (head too large, a Transfer-Encoding, ...) records its refusal
 * in the connection and returns -1, which makes llhttp_execute stop with
 * an error; any other error of llhttp is mapped to a refusal by its code.
 * A refusal is answered through the same handler, and the connection is
 * then closed.
 *
 * Bounds: the head is counted in the callbacks (method, target, header
 * names and values, 4 bytes per header line); the raw bytes read while a
 * head is incomplete are bounded too (2 * WP_HTTP_HEAD_MAX after the read
 * that began it), since whitespace llhttp skips reaches no callback. The
 * body is at most its Content-Length, checked before any of it is read.
 * Everything lives in one allocation per connection.
 */
#include "http.h"

#include <llhttp.h>

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>

#define WP_HTTP_READ 16384
#define WP_HTTP_LINGER_MS 1000
#define WP_HTTP_NAME 16  /* the header names looked for are shorter */
#define WP_HTTP_VALUE 64 /* and the values kept */

enum { H_OTHER, H_TRACEPARENT, H_EXPECT };

struct wp_http_conn {
    int fd;
    const wp_http_opts *o;
    void *gconn;        /* the gate's record of this connection */
    int idle;           /* told set_idle so */
    long long deadline; /* of the request being read, or 0 */
    llhttp_t p;
    int in_message, in_head;
    size_t head;     /* head bytes counted in the callbacks */
    size_t head_raw; /* bytes read while the head was incomplete */
    int keep_alive, closing, answered, dead;
    int error; /* a refusal: status, code, message */
    const char *code, *msg;
    char msgbuf[160];
    char url[WP_HTTP_HEAD_MAX + 1];
    size_t url_len;
    char name[WP_HTTP_NAME], value[WP_HTTP_VALUE], tp[WP_HTTP_VALUE];
    size_t name_len, value_len;
    int which, has_tp, expect;
    char body[WP_HTTP_BODY_MAX];
    size_t body_len;
    char in[WP_HTTP_READ];
};

/* ------------------------------------------------------------ socket I/O */

/* Wait until fd has events or stop_fd is readable. 1 fd is ready, 0 timed
 * out, -1 stop or error. */
static int wait_fd(int fd, short events, int stop_fd, int ms) {
    struct pollfd f[2] = {{.fd = fd, .events = events}, {.fd = stop_fd, .events = POLLIN}};
    for (;;) {
        int n = poll(f, 2, ms);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return n;
        return f[0].revents ? 1 : -1;
    }
}

static int send_all(wp_http_conn *c, const char *b, size_t n, int more) {
    while (n) {
        ssize_t w = send(c->fd, b, n, MSG_NOSIGNAL | (more ? MSG_MORE : 0));
        if (w > 0) {
            b += w;
            n -= (size_t)w;
        } else if (w < 0 && errno == EINTR) {
        } else if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) &&
                   wait_fd(c->fd, POLLOUT, c->o->stop_fd, c->o->idle_ms) > 0) {
        } else {
            c->dead = 1;
            return -1;
        }
    }
    return 0;
}

static long long now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* After the last answer: send FIN, then read and drop what the client
 * still sends (the rest of a refused request) until it closes, for at most
 * WP_HTTP_LINGER_MS. Closing with unread bytes would send a reset, and the
 * client could lose the answer. */
static void linger(wp_http_conn *c) {
    shutdown(c->fd, SHUT_WR);
    long long end = now_ms() + WP_HTTP_LINGER_MS;
    for (long long left; (left = end - now_ms()) > 0;) {
        if (wait_fd(c->fd, POLLIN, c->o->stop_fd, (int)left) <= 0) return;
        ssize_t n = recv(c->fd, c->in, sizeof c->in, 0);
        if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) return;
    }
}

static const char *reason(int status) {
    static const struct {
        int status;
        const char *text;
    } reasons[] = {{100, "Continue"},
                   {201, "Created"},
                   {400, "Bad Request"},
                   {404, "Not Found"},
                   {405, "Method Not Allowed"},
                   {408, "Request Timeout"},
                   {409, "Conflict"},
                   {411, "Length Required"},
                   {413, "Content Too Large"},
                   {431, "Request Header Fields Too Large"},
                   {503, "Service Unavailable"},
                   {505, "HTTP Version Not Supported"}};
    for (size_t i = 0; i < sizeof reasons / sizeof reasons[0]; i++)
        if (reasons[i].status == status) return reasons[i].text;
    return status < 300 ? "OK" : status < 500 ? "Client Error" : "Server Error";
}

int wp_http_respond(wp_http_conn *c, int status, const char *json, size_t len,
                    const char *traceparent, const char *extra_headers) {
    char head[512];
    c->answered = 1;
    int n = snprintf(head, sizeof head,
                     "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\n"
                     "Content-Length: %zu\r\n%s%s%s%s%s\r\n",
                     status, reason(status), len, traceparent ? "traceparent: " : "",
                     traceparent ? traceparent : "", traceparent ? "\r\n" : "",
                     extra_headers ? extra_headers : "",
                     c->closing             ? "Connection: close\r\n"
                     : c->p.http_minor == 0 ? "Connection: keep-alive\r\n"
                                            : "");
    if (n < 0 || (size_t)n >= sizeof head) {
        c->dead = 1;
        return -1;
    }
    return send_all(c, head, (size_t)n, 1) || send_all(c, json, len, 0) ? -1 : 0;
}

/* ------------------------------------------------------------ callbacks */

static int refuse(wp_http_conn *c, int status, const char *code, const char *msg) {
    c->error = status;
    c->code = code;
    c->msg = msg;
    return -1;
}

static int count_head(wp_http_conn *c, size_t n) {
    c->head += n;
    if (c->head <= WP_HTTP_HEAD_MAX) return 0;
    return refuse(c, 431, "headers_too_large", "request line and headers larger than 8192 bytes");
}

static void append(char *buf, size_t cap, size_t *len, const char *at, size_t n) {
    if (*len < cap) memcpy(buf + *len, at, n < cap - *len ? n : cap - *len);
    *len += n;
}

static int on_message_begin(llhttp_t *p) {
    wp_http_conn *c = p->data;
    if (!c->deadline) c->deadline = now_ms() + c->o->request_ms; /* a pipelined request */
    c->in_message = c->in_head = 1;
    c->head = 12; /* the request line's spaces, version and CRLF */
    c->head_raw = c->url_len = c->name_len = c->value_len = c->body_len = 0;
    c->url[0] = '\0';
    c->which = c->has_tp = c->expect = 0;
    return 0;
}

static int on_method(llhttp_t *p, const char *at, size_t n) {
    (void)at;
    return count_head(p->data, n);
}

static int on_url(llhttp_t *p, const char *at, size_t n) {
    wp_http_conn *c = p->data;
    if (count_head(c, n)) return -1;
    /* url_len + n <= head <= WP_HTTP_HEAD_MAX: the buffer holds it */
    memcpy(c->url + c->url_len, at, n);
    c->url_len += n;
    c->url[c->url_len] = '\0';
    return 0;
}

static int on_header_field(llhttp_t *p, const char *at, size_t n) {
    wp_http_conn *c = p->data;
    append(c->name, sizeof c->name, &c->name_len, at, n);
    return count_head(c, n);
}

static int on_header_field_complete(llhttp_t *p) {
    wp_http_conn *c = p->data;
    c->which = c->name_len == 11 && !strncasecmp(c->name, "traceparent", 11) ? H_TRACEPARENT
               : c->name_len == 6 && !strncasecmp(c->name, "expect", 6)      ? H_EXPECT
                                                                             : H_OTHER;
    c->value_len = 0;
    return 0;
}

static int on_header_value(llhttp_t *p, const char *at, size_t n) {
    wp_http_conn *c = p->data;
    if (c->which != H_OTHER) append(c->value, sizeof c->value, &c->value_len, at, n);
    return count_head(c, n);
}

static int on_header_value_complete(llhttp_t *p) {
    wp_http_conn *c = p->data;
    if (c->which == H_TRACEPARENT && c->value_len < sizeof c->tp) {
        memcpy(c->tp, c->value, c->value_len);
        c->tp[c->value_len] = '\0';
        c->has_tp = 1;
    } else if (c->which == H_EXPECT) {
        c->expect = c->value_len == 12 && !strncasecmp(c->value, "100-continue", 12);
    }
    c->name_len = 0;
    c->which = H_OTHER;
    return count_head(c, 4); /* ": " and CRLF */
}

static int on_headers_complete(llhttp_t *p) {
    wp_http_conn *c = p->data;
    c->in_head = 0;
    c->keep_alive = llhttp_should_keep_alive(p);
    if (p->http_major != 1 || p->http_minor > 1)
        return refuse(c, 505, "version_not_supported", "use HTTP/1.1 or HTTP/1.0");
    if (p->flags & (F_TRANSFER_ENCODING | F_CHUNKED))
        return refuse(c, 411, "length_required",
                      "send the body with Content-Length (no Transfer-Encoding)");
    if (p->content_length > WP_HTTP_BODY_MAX) /* 0 without a Content-Length */
        return refuse(c, 413, "too_large", "request body larger than 16384 bytes");
    if (c->expect && p->content_length > 0) {
        static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
        if (send_all(c, cont, sizeof cont - 1, 0)) return -1;
    }
    return 0;
}

static int on_body(llhttp_t *p, const char *at, size_t n) {
    wp_http_conn *c = p->data;
    if (n > sizeof c->body - c->body_len) /* cannot be: Content-Length was checked */
        return refuse(c, 413, "too_large", "request body larger than 16384 bytes");
    memcpy(c->body + c->body_len, at, n);
    c->body_len += n;
    return 0;
}

static int stop_requested(const wp_http_conn *c) {
    struct pollfd f = {.fd = c->o->stop_fd, .events = POLLIN};
    return poll(&f, 1, 0) != 0;
}

/* Answer the request; after the last one of the connection, pause llhttp
 * so that wp_http_serve closes it. */
static int on_message_complete(llhttp_t *p) {
    wp_http_conn *c = p->data;
    c->in_message = 0;
    c->deadline = 0; /* read whole: the next request's starts with its first byte */
    c->closing = !c->keep_alive || stop_requested(c);
    c->answered = 0;
    wp_http_request q = {.method = llhttp_method_name((llhttp_method_t)p->method),
                         .url = c->url,
                         .traceparent = c->has_tp ? c->tp : NULL,
                         .body = c->body,
                         .body_len = c->body_len};
    c->o->handler(c->o->cls, c, &q);
    if (!c->answered) c->dead = 1; /* a handler that did not answer: drop it */
    return c->closing || c->dead ? HPE_PAUSED : 0;
}

static const llhttp_settings_t settings = {
    .on_message_begin = on_message_begin,
    .on_method = on_method,
    .on_url = on_url,
    .on_header_field = on_header_field,
    .on_header_field_complete = on_header_field_complete,
    .on_header_value = on_header_value,
    .on_header_value_complete = on_header_value_complete,
    .on_headers_complete = on_headers_complete,
    .on_body = on_body,
    .on_message_complete = on_message_complete,
};

/* ------------------------------------------------------------ the loop */

/* A request llhttp refused with e (no refusal recorded by a callback). */
static void map_error(wp_http_conn *c, llhttp_errno_t e) {
    if (e == HPE_INVALID_VERSION || e == HPE_PAUSED_H2_UPGRADE) {
        refuse(c, 505, "version_not_supported", "use HTTP/1.1 or HTTP/1.0");
    } else if (e == HPE_INVALID_TRANSFER_ENCODING || e == HPE_INVALID_CHUNK_SIZE) {
        refuse(c, 411, "length_required",
               "send the body with Content-Length (no Transfer-Encoding)");
    } else {
        const char *why = llhttp_get_error_reason(&c->p);
        snprintf(c->msgbuf, sizeof c->msgbuf, "malformed HTTP request: %s",
                 why && *why ? why : llhttp_errno_name(e));
        refuse(c, 400, "invalid_request", c->msgbuf);
    }
}

/* Answer the refusal recorded in c, then close. */
static void answer_refusal(wp_http_conn *c) {
    c->closing = 1;
    c->answered = 0;
    wp_http_request q = {.method = "",
                         .url = c->url,
                         .traceparent = c->has_tp ? c->tp : NULL,
                         .body = "",
                         .error = c->error,
                         .error_code = c->code,
                         .error_message = c->msg};
    c->o->handler(c->o->cls, c, &q);
    if (c->answered && !c->dead) linger(c);
}

/* Tell the gate the connection is idle or busy. 1: end it now. */
static int set_idle(wp_http_conn *c, int idle) {
    c->idle = idle;
    return c->o->set_idle ? c->o->set_idle(c->gconn, idle) : 0;
}

/* Wait for bytes: while a request is due (c->deadline), until its deadline
 * or idle_ms of silence, whichever comes first; else (idle keep-alive)
 * for idle_ms. 1 readable, 0 timed out (408 when a request was due), -1
 * stop, error or the gate took the place. */
static int wait_request(wp_http_conn *c) {
    int ms = c->o->idle_ms;
    if (c->deadline) {
        long long left = c->deadline - now_ms();
        if (left <= 0) return 0;
        if (left < ms) ms = (int)left;
    } else if (!c->idle && set_idle(c, 1)) {
        return -1;
    }
    return wait_fd(c->fd, POLLIN, c->o->stop_fd, ms);
}

static void serve_loop(wp_http_conn *c) {
    c->deadline = now_ms() + c->o->request_ms; /* the first request's */
    for (;;) {
        int r = wait_request(c);
        if (r == 0 && (c->in_message || c->deadline)) {
            refuse(c, 408, "request_timeout", "the request was not completed in time");
            answer_refusal(c);
            return;
        }
        if (r <= 0) return; /* idle, stopping, or the socket failed */
        ssize_t n = recv(c->fd, c->in, sizeof c->in, 0);
        if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
        if (n <= 0) return; /* the client closed (mid-request: no one to answer) */
        if (c->idle && set_idle(c, 0)) return; /* closed for a new connection meanwhile */
        if (!c->deadline) c->deadline = now_ms() + c->o->request_ms;
        if (c->in_head) c->head_raw += (size_t)n;
        llhttp_errno_t e = llhttp_execute(&c->p, c->in, (size_t)n);
        if (c->dead) return;
        if (e == HPE_OK && !(c->in_head && c->head_raw > 2 * WP_HTTP_HEAD_MAX)) continue;
        if ((e == HPE_PAUSED || e == HPE_PAUSED_UPGRADE) && !c->in_message) {
            linger(c); /* the last request was answered */
            return;
        }
        if (e == HPE_OK)
            refuse(c, 431, "headers_too_large", "request line and headers larger than 8192 bytes");
        else if (!c->error)
            map_error(c, e);
        answer_refusal(c);
        return;
    }
}

void wp_http_serve(int fd, const wp_http_opts *o, void *conn) {
    wp_http_conn *c = calloc(1, sizeof *c);
    if (!c) return;
    c->fd = fd;
    c->o = o;
    c->gconn = conn;
    llhttp_init(&c->p, HTTP_REQUEST, &settings);
    c->p.data = c;
    serve_loop(c);
    free(c);
}
