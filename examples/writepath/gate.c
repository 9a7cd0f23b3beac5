/* gate.c - the accepting thread and the connection threads (see gate.h).
 *
 * DESIGN: 'open' counts the served connections that hold a place, and
 * 'threads' the connection threads alive, both under 'mu'. Only the
 * accepting thread raises them (before it starts a thread), so a burst of
 * connects never gets more than max_conns places; each connection thread
 * lowers them as its last act, after which it touches nothing of the gate.
 * Stop waits until 'threads' is 0 and only then frees the gate and closes
 * the stop pipe the threads poll. The connection threads are detached:
 * nobody joins them, the count says when they are gone.
 *
 * Every served connection has a record in the list 'conns' (under 'mu')
 * with its socket and whether it is idle (a keep-alive connection between
 * requests, http.h's set_idle). When all places are taken, the accepting
 * thread takes the place of the connection idle the longest: it marks it
 * closed, shuts its socket down (its thread wakes, sees the end and
 * exits) and hands its place to the new connection at once. A connection
 * in the middle of a request, or a new one that has not sent its first
 * request yet, is never taken: those end by the request deadline
 * (http.h), so stalled or trickling clients hold a place for at most
 * request_ms. The record leaves the list before its socket is closed, so
 * the accepting thread never shuts down a descriptor number reused since.
 *
 * The rejected connections are the accepting thread's alone: a pollfd
 * each after the listening socket and the stop pipe, with a deadline. The
 * 503 goes out at accept (a fresh socket's send buffer takes it whole);
 * then FIN, and the client's bytes are read and dropped until it closes
 * or the deadline passes (closing with unread bytes would reset the
 * connection, and the client could lose the answer). 'stop' is the write
 * end of a pipe: written once, it stays readable, so every thread polling
 * it wakes.
 */
#include "gate.h"

#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define WP_GATE_REJECT_MS 1000      /* how long a rejected connection is kept */
#define WP_GATE_TIMEOUT_MAX_S 86400 /* a day: the most either timeout takes */
#define WP_GATE_ACCEPTS 64          /* connections accepted per wake-up */
#define WP_GATE_STACK (1 << 20)     /* a connection thread's stack: thousands of them */
#define WP_OVERLOADED                                                                              \
    "{\"error\":\"overloaded\",\"message\":\"too many open connections; retry later\"}"

struct wp_gate {
    int listen_fd;
    int stop_pipe[2];
    uint16_t port;
    wp_gate_opts o;
    wp_http_opts http; /* set before any connection thread starts */
    pthread_mutex_t mu;
    pthread_cond_t gone;    /* threads became 0 */
    unsigned open;          /* served connections holding a place; under mu */
    unsigned threads;       /* connection threads alive; under mu */
    struct conn_rec *conns; /* every served connection; under mu */
    pthread_t thread;
    int started;
    struct pollfd *fds;  /* listen, stop, then the rejected connections */
    long long *deadline; /* of fds[2 + i] */
    unsigned nreject;
    char overloaded[256];
    size_t overloaded_len;
};

/* A served connection (see DESIGN); fields but fd under g->mu. */
typedef struct conn_rec {
    wp_gate *g;
    int fd;
    int idle;   /* between requests: may give its place to a new one */
    int closed; /* its place was given away (it counts in threads only) */
    long long idle_since;
    struct conn_rec *prev, *next;
} conn_rec;

static long long now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ------------------------------------------------------------ served */

/* http.h's set_idle, on the connection's thread. */
static int conn_set_idle(void *arg, int idle) {
    conn_rec *r = arg;
    pthread_mutex_lock(&r->g->mu);
    r->idle = idle;
    if (idle) r->idle_since = now_ms();
    int closed = r->closed;
    pthread_mutex_unlock(&r->g->mu);
    return closed;
}

/* The connection is over: out of the list before its fd is closed, then
 * one thread less. After this nothing of g may be touched. */
static void conn_end(conn_rec *r) {
    wp_gate *g = r->g;
    pthread_mutex_lock(&g->mu);
    if (r->prev)
        r->prev->next = r->next;
    else
        g->conns = r->next;
    if (r->next) r->next->prev = r->prev;
    if (!r->closed) g->open--;
    pthread_mutex_unlock(&g->mu);
    close(r->fd);
    free(r);
    pthread_mutex_lock(&g->mu);
    assert(g->threads > 0);
    if (--g->threads == 0) pthread_cond_broadcast(&g->gone);
    pthread_mutex_unlock(&g->mu); /* the last use of g */
}

static void *conn_main(void *arg) {
    conn_rec *r = arg;
    wp_http_serve(r->fd, &r->g->http, r);
    conn_end(r);
    return NULL;
}

/* All places are taken: give the place of the connection idle the longest
 * to a new one (mu held). 1 done, 0 none is idle. */
static int take_idle_place(wp_gate *g) {
    conn_rec *oldest = NULL;
    for (conn_rec *r = g->conns; r; r = r->next)
        if (r->idle && !r->closed && (!oldest || r->idle_since < oldest->idle_since)) oldest = r;
    if (!oldest) return 0;
    oldest->closed = 1;
    g->open--;
    shutdown(oldest->fd, SHUT_RDWR); /* its thread wakes and ends */
    return 1;
}

/* Serve fd on a thread of its own if fewer than max_conns are open, or an
 * idle connection gives its place. 1 done (fd is the thread's, or
 * closed), 0 over the limit. */
static int serve(wp_gate *g, int fd) {
    conn_rec *r = calloc(1, sizeof *r);
    if (!r) {
        close(fd);
        return 1;
    }
    *r = (conn_rec){.g = g, .fd = fd};
    pthread_mutex_lock(&g->mu);
    int room = g->open < g->o.max_conns || take_idle_place(g);
    if (room) {
        g->open++;
        g->threads++;
        r->next = g->conns;
        if (g->conns) g->conns->prev = r;
        g->conns = r;
    }
    pthread_mutex_unlock(&g->mu);
    if (!room) {
        free(r);
        return 0;
    }
    pthread_attr_t attr;
    pthread_t t;
    int ok = pthread_attr_init(&attr) == 0;
    if (ok) {
        ok = pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED) == 0 &&
             pthread_attr_setstacksize(&attr, WP_GATE_STACK) == 0 &&
             pthread_create(&t, &attr, conn_main, r) == 0;
        pthread_attr_destroy(&attr);
    }
    if (!ok) conn_end(r); /* no thread: closed at once */
    return 1;
}

/* ------------------------------------------------------------ rejected */

static void reject(wp_gate *g, int fd) {
    ssize_t n = send(fd, g->overloaded, g->overloaded_len, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (g->nreject >= g->o.reject_max || n != (ssize_t)g->overloaded_len) {
        close(fd);
        return;
    }
    shutdown(fd, SHUT_WR);
    g->fds[2 + g->nreject] = (struct pollfd){.fd = fd, .events = POLLIN};
    g->deadline[g->nreject++] = now_ms() + WP_GATE_REJECT_MS;
}

/* Read and drop what the rejected clients sent; close those that closed
 * or whose time is up. */
static void sweep(wp_gate *g) {
    long long now = now_ms();
    char buf[4096];
    for (unsigned i = g->nreject; i-- > 0;) {
        struct pollfd *f = &g->fds[2 + i];
        int done = g->deadline[i] <= now;
        if (!done && f->revents) {
            ssize_t n = recv(f->fd, buf, sizeof buf, 0);
            done = n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR);
        }
        if (!done) continue;
        close(f->fd);
        g->nreject--; /* the last one (already swept) takes slot i */
        g->fds[2 + i] = g->fds[2 + g->nreject];
        g->deadline[i] = g->deadline[g->nreject];
    }
}

static int poll_timeout(const wp_gate *g) {
    if (!g->nreject) return -1;
    long long first = g->deadline[0];
    for (unsigned i = 1; i < g->nreject; i++)
        if (g->deadline[i] < first) first = g->deadline[i];
    long long ms = first - now_ms();
    return ms < 0 ? 0 : (int)ms + 1;
}

/* ------------------------------------------------------------ accepting */

static void accept_some(wp_gate *g) {
    for (int i = 0; i < WP_GATE_ACCEPTS; i++) {
        int fd = accept4(g->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0) {
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
                struct timespec ts = {0, 10 * 1000000L}; /* out of descriptors: let some close */
                nanosleep(&ts, NULL);
            }
            return;
        }
        if (!serve(g, fd)) reject(g, fd);
    }
}

static void *accept_main(void *arg) {
    wp_gate *g = arg;
    g->fds[0] = (struct pollfd){.fd = g->listen_fd, .events = POLLIN};
    g->fds[1] = (struct pollfd){.fd = g->stop_pipe[0], .events = POLLIN};
    for (;;) {
        int n = poll(g->fds, 2 + g->nreject, poll_timeout(g));
        if (n < 0 && errno != EINTR) break;
        if (n < 0) continue;
        if (g->fds[1].revents) break;
        sweep(g);
        if (g->fds[0].revents) accept_some(g);
    }
    for (unsigned i = 0; i < g->nreject; i++) close(g->fds[2 + i].fd);
    g->nreject = 0;
    return NULL;
}

static int listen_on(wp_gate *g, uint16_t port) {
    g->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (g->listen_fd < 0) return -1;
    int one = 1;
    setsockopt(g->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons(port)};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (bind(g->listen_fd, (struct sockaddr *)&addr, sizeof addr) ||
        listen(g->listen_fd, SOMAXCONN) ||
        getsockname(g->listen_fd, (struct sockaddr *)&addr, &len))
        return -1;
    g->port = ntohs(addr.sin_port);
    return 0;
}

int wp_gate_start(wp_gate **out, const wp_gate_opts *o) {
    if (o->idle_timeout_s < 1 || o->idle_timeout_s > WP_GATE_TIMEOUT_MAX_S ||
        o->request_timeout_s < 1 || o->request_timeout_s > WP_GATE_TIMEOUT_MAX_S) {
        fprintf(stderr, "writepath: the idle and request timeouts must be 1 to %d s\n",
                WP_GATE_TIMEOUT_MAX_S); /* in ms they fit an int */
        return -1;
    }
    wp_gate *g = calloc(1, sizeof *g);
    if (!g) return -1;
    g->listen_fd = g->stop_pipe[0] = g->stop_pipe[1] = -1;
    g->o = *o;
    if (g->o.reject_max > WP_GATE_REJECT_MAX) g->o.reject_max = WP_GATE_REJECT_MAX;
    pthread_mutex_init(&g->mu, NULL);
    pthread_cond_init(&g->gone, NULL);
    int n = snprintf(g->overloaded, sizeof g->overloaded,
                     "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
                     "Retry-After: 1\r\nConnection: close\r\nContent-Length: %zu\r\n\r\n%s",
                     sizeof WP_OVERLOADED - 1, WP_OVERLOADED);
    assert(n > 0 && (size_t)n < sizeof g->overloaded);
    g->overloaded_len = (size_t)n;
    g->fds = calloc(2 + (size_t)g->o.reject_max, sizeof *g->fds);
    g->deadline = calloc(1 + (size_t)g->o.reject_max, sizeof *g->deadline);
    if (!g->fds || !g->deadline) {
        fprintf(stderr, "writepath: out of memory\n");
    } else if (listen_on(g, o->port)) {
        fprintf(stderr, "writepath: cannot listen on 127.0.0.1:%u: %s\n", (unsigned)o->port,
                strerror(errno));
    } else if (pipe2(g->stop_pipe, O_CLOEXEC)) {
        fprintf(stderr, "writepath: cannot start: %s\n", strerror(errno));
    } else {
        g->http = (wp_http_opts){.handler = o->handler,
                                 .cls = o->cls,
                                 .idle_ms = (int)o->idle_timeout_s * 1000,
                                 .request_ms = (int)o->request_timeout_s * 1000,
                                 .stop_fd = g->stop_pipe[0],
                                 .set_idle = conn_set_idle};
        if (pthread_create(&g->thread, NULL, accept_main, g) == 0) {
            g->started = 1;
            *out = g;
            return 0;
        }
        fprintf(stderr, "writepath: cannot start the accepting thread\n");
    }
    wp_gate_stop(g);
    return -1;
}

uint16_t wp_gate_port(const wp_gate *g) {
    return g->port;
}

void wp_gate_stop(wp_gate *g) {
    if (!g) return;
    if (g->started) {
        char b = 1;
        while (write(g->stop_pipe[1], &b, 1) < 0 && errno == EINTR) {
        }
        pthread_join(g->thread, NULL);
    }
    if (g->listen_fd >= 0) close(g->listen_fd);
    pthread_mutex_lock(&g->mu); /* the connection threads see the stop pipe too */
    while (g->threads) pthread_cond_wait(&g->gone, &g->mu);
    pthread_mutex_unlock(&g->mu);
    for (int i = 0; i < 2; i++)
        if (g->stop_pipe[i] >= 0) close(g->stop_pipe[i]);
    pthread_mutex_destroy(&g->mu);
    pthread_cond_destroy(&g->gone);
    free(g->fds);
    free(g->deadline);
    free(g);
}
