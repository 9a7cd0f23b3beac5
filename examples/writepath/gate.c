/* gate.c - the accepting thread and the two daemons (see gate.h).
 *
 * DESIGN: 'open' and 'rejecting' count each daemon's connections: the
 * accepting thread adds 1 when it hands a connection over (and takes it
 * back if libmicrohttpd refuses it at once), and libmicrohttpd's
 * notify-connection callback takes 1 when a connection has closed. The
 * accepting thread is the only one that adds, so it never hands a daemon
 * more than its share, also in a burst of connects (libmicrohttpd reports
 * a connection added from another thread only later, from its own
 * thread, so counting its "started" reports would admit a whole burst).
 * A daemon must never reach its own connection limit: libmicrohttpd
 * 0.9.75 refusing a connection added from another thread can leave its
 * thread stuck on a mutex, and MHD_stop_daemon then never returns. So each
 * daemon's limit has WP_GATE_SLACK of room above its share, for the moment
 * between a close being reported and libmicrohttpd forgetting the
 * connection, and past both shares the gate closes the socket itself.
 *
 * Memory order: the counters guard no other data; only the accepting
 * thread raises them, so a value it reads is at most too high by closes
 * not yet seen (a connection refused early): relaxed operations suffice. 'stop' is the
 * write end of a pipe, so the accepting thread wakes in poll().
 */
#include "gate.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define WP_GATE_SLACK 64
#define WP_GATE_REJECT_IDLE_S 1u
#define WP_GATE_REJECT_MEMORY (16u * 1024) /* enough for headers up to ~12 KiB */

struct wp_gate {
    int listen_fd;
    int stop_pipe[2];
    uint16_t port;
    unsigned max_conns, reject_max;
    atomic_uint open;      /* the main daemon's connections */
    atomic_uint rejecting; /* the reject daemon's */
    struct MHD_Daemon *main, *reject;
    struct MHD_Response *overloaded;
    pthread_t thread;
    int started;
};

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_ctx,
                          enum MHD_ConnectionNotificationCode code) {
    atomic_uint *count = cls;
    (void)c;
    (void)socket_ctx;
    if (code == MHD_CONNECTION_NOTIFY_CLOSED)
        atomic_fetch_sub_explicit(count, 1, memory_order_relaxed);
}

/* Hand fd to d if fewer than max are counted in count; else close it.
 * libmicrohttpd closes fd itself when it refuses it. */
static void hand_over(struct MHD_Daemon *d, atomic_uint *count, unsigned max, int fd,
                      const struct sockaddr_storage *addr, socklen_t len) {
    if (atomic_load_explicit(count, memory_order_relaxed) >= max) {
        close(fd);
        return;
    }
    atomic_fetch_add_explicit(count, 1, memory_order_relaxed);
    if (MHD_add_connection(d, fd, (const struct sockaddr *)addr, len) != MHD_YES)
        atomic_fetch_sub_explicit(count, 1, memory_order_relaxed);
}

/* The reject daemon: answer at once, before any body (libmicrohttpd then
 * reads no more of the request and closes the connection after it). */
static enum MHD_Result on_reject(void *cls, struct MHD_Connection *conn, const char *url,
                                 const char *method, const char *version, const char *upload,
                                 size_t *upload_size, void **req_cls) {
    wp_gate *g = cls;
    (void)url, (void)method, (void)version, (void)upload, (void)upload_size, (void)req_cls;
    return MHD_queue_response(conn, MHD_HTTP_SERVICE_UNAVAILABLE, g->overloaded);
}

static void *accept_main(void *arg) {
    wp_gate *g = arg;
    struct pollfd fds[2] = {{.fd = g->listen_fd, .events = POLLIN},
                            {.fd = g->stop_pipe[0], .events = POLLIN}};
    for (;;) {
        if (poll(fds, 2, -1) < 0 && errno != EINTR) break;
        if (fds[1].revents) break;
        if (!(fds[0].revents & POLLIN)) continue;
        struct sockaddr_storage addr;
        socklen_t len = sizeof addr;
        int fd =
            accept4(g->listen_fd, (struct sockaddr *)&addr, &len, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0) {
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
                struct timespec ts = {0, 10 * 1000000L}; /* out of descriptors: let some close */
                nanosleep(&ts, NULL);
            }
            continue;
        }
        if (atomic_load_explicit(&g->open, memory_order_relaxed) < g->max_conns)
            hand_over(g->main, &g->open, g->max_conns, fd, &addr, len);
        else
            hand_over(g->reject, &g->rejecting, g->reject_max, fd, &addr, len);
    }
    return NULL;
}

static int listen_on(wp_gate *g, uint16_t port) {
    g->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
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

static int start_daemons(wp_gate *g, const wp_gate_opts *o) {
    static const char body[] =
        "{\"error\":\"overloaded\",\"message\":\"too many open connections; retry later\"}";
    g->overloaded =
        MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_PERSISTENT);
    if (!g->overloaded ||
        MHD_add_response_header(g->overloaded, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json") !=
            MHD_YES ||
        MHD_add_response_header(g->overloaded, MHD_HTTP_HEADER_RETRY_AFTER, "1") != MHD_YES ||
        MHD_add_response_header(g->overloaded, MHD_HTTP_HEADER_CONNECTION, "close") != MHD_YES)
        return -1;
    unsigned common = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_USE_NO_LISTEN_SOCKET |
                      MHD_USE_ITC | MHD_USE_ERROR_LOG;
    g->main = MHD_start_daemon(common | MHD_USE_THREAD_PER_CONNECTION, 0, NULL, NULL, o->access,
                               o->access_cls, MHD_OPTION_NOTIFY_COMPLETED, o->completed,
                               o->completed_cls, MHD_OPTION_NOTIFY_CONNECTION, on_connection,
                               &g->open, MHD_OPTION_CONNECTION_TIMEOUT, o->idle_timeout_s,
                               MHD_OPTION_CONNECTION_LIMIT, o->max_conns + WP_GATE_SLACK,
                               MHD_OPTION_CONNECTION_MEMORY_LIMIT, o->conn_memory, MHD_OPTION_END);
    g->reject = MHD_start_daemon(common, 0, NULL, NULL, on_reject, g, MHD_OPTION_NOTIFY_CONNECTION,
                                 on_connection, &g->rejecting, MHD_OPTION_CONNECTION_TIMEOUT,
                                 WP_GATE_REJECT_IDLE_S, MHD_OPTION_CONNECTION_LIMIT,
                                 o->reject_max + WP_GATE_SLACK, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
                                 (size_t)WP_GATE_REJECT_MEMORY, MHD_OPTION_END);
    return g->main && g->reject ? 0 : -1;
}

int wp_gate_start(wp_gate **out, const wp_gate_opts *o) {
    wp_gate *g = calloc(1, sizeof *g);
    if (!g) return -1;
    g->listen_fd = g->stop_pipe[0] = g->stop_pipe[1] = -1;
    g->max_conns = o->max_conns;
    g->reject_max = o->reject_max;
    atomic_init(&g->open, 0);
    atomic_init(&g->rejecting, 0);
    if (listen_on(g, o->port)) {
        fprintf(stderr, "writepath: cannot listen on 127.0.0.1:%u: %s\n", (unsigned)o->port,
                strerror(errno));
    } else if (pipe2(g->stop_pipe, O_CLOEXEC) || start_daemons(g, o)) {
        fprintf(stderr, "writepath: cannot start the HTTP daemons\n");
    } else if (pthread_create(&g->thread, NULL, accept_main, g) == 0) {
        g->started = 1;
        *out = g;
        return 0;
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
    if (g->main) MHD_stop_daemon(g->main); /* closes connections, joins their threads */
    if (g->reject) MHD_stop_daemon(g->reject);
    if (g->overloaded) MHD_destroy_response(g->overloaded);
    for (int i = 0; i < 2; i++)
        if (g->stop_pipe[i] >= 0) close(g->stop_pipe[i]);
    free(g);
}
