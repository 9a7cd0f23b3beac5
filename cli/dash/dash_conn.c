/* dash_conn.c - the connection guard of `lanes dash` (dash_conn.h): what
 * keeps slow or stalled clients (slowloris) from locking the dashboard.
 *  - Deadline: a connection must send a whole request, head and body,
 *    within the deadline of its opening or of its previous answer (a
 *    keep-alive connection waits under the same rule). It is a deadline,
 *    not an idle timeout: a byte now and then does not reset it. A timer
 *    thread shuts down (shutdown(2)) each connection past it, and
 *    libmicrohttpd then closes it as one the client closed.
 *  - Room: past max connections, a new one makes room by closing the
 *    keep-alive connection idle longest, else the connection that has
 *    waited longest (at least EVICT_AFTER_MS) for its first request: a
 *    client that sends its request at once is served however many stalled
 *    connections come and go. With neither, the new one is marked and
 *    dash_http.c answers its request 503 and closes it; a marked one gets
 *    EVICT_AFTER_MS for its request, not the deadline. libmicrohttpd
 *    holds back connections past the slots (in the listen backlog), so
 *    the slots are twice max: room for the marked ones.
 *  - Answers: an answer (a client reading it slowly) has the deadline
 *    too, from the request's arrival: past it, the connection may be
 *    closed to make room (after the idle and the stalled ones), and past
 *    it plus ANSWER_ALLOWANCE_MS the timer closes it: a slow reader does
 *    not hold a slot for good.
 * A slot's file descriptor is only shut down under the mutex, and the
 * slot is freed under it by libmicrohttpd's "closed" notice, which comes
 * before the descriptor is closed: the timer never touches a descriptor
 * that was closed and reused. */
#include "dash_conn.h"

#include "dash.h"
#include "dash_reply.h"

#include <pthread.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>

#define TICK_MS 100
/* A connection still without its first request this long may be closed
 * to make room (a client that means to send one has sent it by then). */
#define EVICT_AFTER_MS 250
/* What an answer gets past the deadline before the timer closes it. */
#define ANSWER_ALLOWANCE_MS 30000

typedef struct conn_slot {
    int used;
    int fd;
    int64_t since_ms; /* the wait for a whole request (or its answer) began */
    int answering;    /* its request is in: being answered */
    int closing;      /* shut down by the guard */
    int over;         /* came while the server was full */
    unsigned served;  /* requests answered on it */
} conn_slot;

struct cli_dash_guard {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t timer;
    int stop;
    conn_slot *slots;
    size_t nslots;
    size_t live; /* used and not closing */
    size_t max;
    int64_t deadline_ms;
};

static void close_slot(cli_dash_guard *g, conn_slot *s) {
    shutdown(s->fd, SHUT_RDWR);
    s->closing = 1;
    g->live--;
}

static void *timer_main(void *arg) {
    cli_dash_guard *g = arg;
    pthread_mutex_lock(&g->mu);
    while (!g->stop) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        ts.tv_nsec += TICK_MS * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&g->cv, &g->mu, &ts);
        int64_t now = cli_dash_now_ms();
        for (size_t i = 0; i < g->nslots && !g->stop; i++) {
            conn_slot *s = &g->slots[i];
            int64_t limit = s->over ? EVICT_AFTER_MS : g->deadline_ms;
            if (s->answering) limit = g->deadline_ms + ANSWER_ALLOWANCE_MS;
            if (s->used && !s->closing && now - s->since_ms >= limit) close_slot(g, s);
        }
    }
    pthread_mutex_unlock(&g->mu);
    return NULL;
}

cli_dash_guard *cli_dash_guard_new(unsigned max, unsigned slots, unsigned deadline_s) {
    cli_dash_guard *g = calloc(1, sizeof *g);
    if (g == NULL) return NULL;
    g->slots = calloc(slots, sizeof *g->slots);
    g->nslots = slots;
    g->max = max;
    g->deadline_ms = (int64_t)deadline_s * 1000;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    int ok = g->slots != NULL && pthread_mutex_init(&g->mu, NULL) == 0;
    if (ok && pthread_cond_init(&g->cv, &ca) != 0) {
        pthread_mutex_destroy(&g->mu);
        ok = 0;
    }
    pthread_condattr_destroy(&ca);
    if (ok && pthread_create(&g->timer, NULL, timer_main, g) != 0) {
        pthread_cond_destroy(&g->cv);
        pthread_mutex_destroy(&g->mu);
        ok = 0;
    }
    if (!ok) {
        free(g->slots);
        free(g);
        return NULL;
    }
    return g;
}

void cli_dash_guard_free(cli_dash_guard *g) {
    if (g == NULL) return;
    pthread_mutex_lock(&g->mu);
    g->stop = 1;
    pthread_cond_signal(&g->cv);
    pthread_mutex_unlock(&g->mu);
    pthread_join(g->timer, NULL);
    pthread_cond_destroy(&g->cv);
    pthread_mutex_destroy(&g->mu);
    free(g->slots);
    free(g);
}

/* Room for one more: close the keep-alive connection idle longest, else
 * the one waiting longest (EVICT_AFTER_MS or more) for its first request,
 * else the one answering longest past the deadline. 0 if there was none. */
static int make_room(cli_dash_guard *g, int64_t now) {
    conn_slot *idle = NULL, *stalled = NULL, *slow = NULL;
    for (size_t i = 0; i < g->nslots; i++) {
        conn_slot *s = &g->slots[i];
        if (!s->used || s->closing || s->over) continue;
        conn_slot **best = s->answering ? &slow : s->served > 0 ? &idle : &stalled;
        if (*best == NULL || s->since_ms < (*best)->since_ms) *best = s;
    }
    if (idle == NULL && stalled != NULL && now - stalled->since_ms >= EVICT_AFTER_MS)
        idle = stalled;
    if (idle == NULL && slow != NULL && now - slow->since_ms >= g->deadline_ms) idle = slow;
    if (idle == NULL) return 0;
    close_slot(g, idle);
    return 1;
}

static void started(cli_dash_guard *g, struct MHD_Connection *conn, void **ctx) {
    const union MHD_ConnectionInfo *fd =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    conn_slot *s = NULL;
    for (size_t i = 0; i < g->nslots && s == NULL; i++)
        if (!g->slots[i].used) s = &g->slots[i];
    if (s == NULL || fd == NULL) return; /* *ctx stays NULL: answered 503 */
    int64_t now = cli_dash_now_ms();
    *s = (conn_slot){.used = 1, .fd = fd->connect_fd, .since_ms = now};
    g->live++;
    if (g->live > g->max && !make_room(g, now)) s->over = 1;
    *ctx = s;
}

void cli_dash_guard_notify(void *cls, struct MHD_Connection *conn, void **socket_context,
                           enum MHD_ConnectionNotificationCode code) {
    cli_dash_guard *g = cls;
    pthread_mutex_lock(&g->mu);
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        *socket_context = NULL;
        started(g, conn, socket_context);
    } else if (*socket_context != NULL) {
        conn_slot *s = *socket_context;
        if (!s->closing) g->live--;
        s->used = 0;
        *socket_context = NULL;
    }
    pthread_mutex_unlock(&g->mu);
}

static conn_slot *slot_of(struct MHD_Connection *conn) {
    const union MHD_ConnectionInfo *i =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return i != NULL ? i->socket_context : NULL;
}

int cli_dash_guard_over(struct MHD_Connection *conn) {
    conn_slot *s = slot_of(conn); /* over is set before any request: no lock */
    return s == NULL || s->over;
}

void cli_dash_guard_answering(cli_dash_guard *g, struct MHD_Connection *conn) {
    conn_slot *s = slot_of(conn);
    if (s == NULL) return;
    pthread_mutex_lock(&g->mu);
    s->answering = 1;
    s->since_ms = cli_dash_now_ms();
    pthread_mutex_unlock(&g->mu);
}

void cli_dash_guard_done(cli_dash_guard *g, struct MHD_Connection *conn) {
    conn_slot *s = slot_of(conn);
    if (s == NULL) return;
    pthread_mutex_lock(&g->mu);
    s->answering = 0;
    s->served++;
    s->since_ms = cli_dash_now_ms();
    pthread_mutex_unlock(&g->mu);
}
