/* worker_idle.c - the idle phase of a worker run: when a round has nothing
 * left to do, sleep on the eventfd until the next timer, and, for a worker
 * that found its queue empty, until the store says there may be work
 * (blocking wait) or the polling backoff ends. Dispatcher only;
 * docs/internals/worker-loop.md "Idle workers".
 *
 * Waiting or polling is chosen once per run (ln__idle_open): a store with
 * a blocking wait gets wait_after_step / wait_sleep, one without gets
 * poll_after_step / poll_sleep, and the loop calls them through r->idle.
 * Every wait is bounded: WAIT_MAX_MS, the due time of the next delayed
 * job, and the armed wait's limit (no answer by then: the connection is
 * presumed dead and the worker takes a look anyway).
 */
#include "worker_int.h"

#include <poll.h>
#include <string.h>
#include <unistd.h>

#define WAIT_MAX_MS 5000 /* longest blocking wait (BullMQ: drainDelay 5 s) */
/* Longest sleep on a rate limit before looking again (BullMQ's
 * maximumRateLimitDelay): a limit cleared meanwhile is seen by then. */
#define LIMIT_SLEEP_MAX_MS 30000
#define NEVER UINT64_MAX

static uint64_t min_u64(uint64_t a, uint64_t b) {
    return a < b ? a : b;
}

static uint64_t ms_until(uint64_t now, uint64_t t) {
    return t <= now ? 0 : (t - now + 999999) / 1000000;
}

int ln__worker_sleep(ln_worker *w, uint64_t deadline, int fd) {
    uint64_t left = ms_until(ln__now_ns(), deadline);
    int ms = left > 3600000 ? 3600000 : (int)left;
    struct pollfd p[2] = {{.fd = w->efd, .events = POLLIN}, {.fd = fd, .events = POLLIN}};
    if (poll(p, fd >= 0 ? 2 : 1, ms) <= 0) return 0;
    if (p[0].revents) {
        uint64_t v;
        ssize_t r = read(w->efd, &v, sizeof v);
        (void)r; /* only resets the counter */
    }
    /* POLLHUP / POLLERR: the read reports the lost connection. */
    return fd >= 0 && p[1].revents != 0;
}

/* ---------------------------------------------------------- rate limit */

/* A step said the queue is rate limited for rd.limited ms: take nothing
 * and wait for nothing but the timers until then (want_now in
 * worker_run.c asks for no job while limit_until is set). */
static void note_limit(ln__run *r) {
    int64_t ms = r->rd.limited;
    if (ms <= 0) return;
    if (ms > LIMIT_SLEEP_MAX_MS) ms = LIMIT_SLEEP_MAX_MS;
    r->idle.limit_until = r->now + (uint64_t)ms * LN__MS;
}

/* ------------------------------------------------------------- polling */

static void poll_after_step(ln__run *r) {
    note_limit(r);
    if (r->rd.ntaken > 0) r->idle.idle_ms = 1;
}

static void poll_sleep(ln__run *r, uint64_t deadline) {
    ln__idle *id = &r->idle;
    const ln__round *rd = &r->rd;
    if (rd->received && rd->asked > rd->ntaken) {
        /* free slots but nothing to take: look again after the backoff */
        deadline = min_u64(deadline, r->now + id->idle_ms * LN__MS);
        if (rd->next_due >= 0)
            deadline = min_u64(deadline, r->now + (uint64_t)rd->next_due * LN__MS);
        unsigned poll_ms = r->w->opts.poll_ms;
        id->idle_ms = id->idle_ms * 2 > poll_ms ? poll_ms : id->idle_ms * 2;
    }
    (void)ln__worker_sleep(r->w, deadline, -1);
}

/* ------------------------------------------------------------- waiting */

static void wait_after_step(ln__run *r) {
    ln__idle *id = &r->idle;
    const ln__round *rd = &r->rd;
    note_limit(r);
    if (rd->asked > rd->ntaken) { /* seen empty: wait for a signal */
        int64_t due = rd->next_due;
        id->may_take = 0;
        id->due_at = due < 0 ? NEVER : r->now + (uint64_t)(due > 0 ? due : 1) * LN__MS;
    } else if (rd->asked > 0) { /* a later step found more after all */
        id->may_take = 1;
    }
}

/* Arm a wait until a signal, the due time or a cap. */
static void wait_arm(ln__run *r) {
    ln__idle *id = &r->idle;
    const ln_worker_opts *o = &r->w->opts;
    uint64_t block = WAIT_MAX_MS;
    /* Nothing signals "the queue became empty" (other workers' jobs
     * finishing): an exit_when_empty worker looks every poll_ms for that,
     * as without a wait. */
    if (o->exit_when_empty) block = min_u64(block, o->poll_ms);
    if (id->due_at != NEVER) block = min_u64(block, ms_until(r->now, id->due_at));
    int64_t limit_ms = 0;
    if (ln__wait_arm(id->wt, block > 0 ? (int64_t)block : 1, &id->fd, &limit_ms) == 0) {
        id->armed = 1;
        id->limit = r->now + (uint64_t)limit_ms * LN__MS;
    } else { /* unreachable: look again after poll_ms */
        id->due_at = min_u64(id->due_at, r->now + o->poll_ms * LN__MS);
    }
}

/* The armed wait's fd is readable, or its limit may have passed. */
static void wait_answer(ln__idle *id, int readable) {
    if (readable) {
        int64_t due_in = 0;
        int got = ln__wait_read(id->wt, &due_in);
        if (got == LN__WAIT_PENDING) return;
        id->armed = 0;
        if (got == LN__WAIT_WOKEN && due_in > 0) /* a delayed job, later */
            id->due_at = min_u64(id->due_at, ln__now_ns() + (uint64_t)due_in * LN__MS);
        else /* a job may be ready; or the wait ended: look anyway */
            id->may_take = 1;
    } else if (ln__now_ns() >= id->limit) { /* no answer: dead link */
        ln__wait_cancel(id->wt);
        id->armed = 0;
        id->may_take = 1;
    }
}

static void wait_sleep(ln__run *r, uint64_t deadline) {
    ln__idle *id = &r->idle;
    if (id->may_take || r->rd.no_take) { /* timers only */
        (void)ln__worker_sleep(r->w, deadline, -1);
        return;
    }
    if (!id->armed) wait_arm(r);
    if (!id->armed) {
        (void)ln__worker_sleep(r->w, min_u64(deadline, id->due_at), -1);
        return;
    }
    int readable = ln__worker_sleep(r->w, min_u64(deadline, id->limit), id->fd);
    wait_answer(id, readable);
}

/* ---------------------------------------------------------------- phase */

void ln__idle_open(ln__run *r) {
    ln__idle *id = &r->idle;
    memset(id, 0, sizeof *id);
    id->fd = -1;
    id->may_take = 1;
    id->due_at = NEVER;
    id->idle_ms = 1;
    /* Without a blocking wait (or without memory for one) the worker polls. */
    if (ln__store_wait_open(r->w->jobs, r->w->queue, &id->wt) != 0) id->wt = NULL;
    id->after_step = id->wt != NULL ? wait_after_step : poll_after_step;
    id->sleep = id->wt != NULL ? wait_sleep : poll_sleep;
}

void ln__idle_close(ln__run *r) {
    ln__wait_close(r->idle.wt);
    r->idle.wt = NULL;
}

void ln__idle_tick(ln__run *r) {
    ln__idle *id = &r->idle;
    if (!id->may_take && !id->armed && r->now >= id->due_at) id->may_take = 1;
    if (id->limit_until != 0 && r->now >= id->limit_until) { /* the limit's time is over */
        id->limit_until = 0;
        id->may_take = 1;
    }
}

void ln__idle_phase(ln__run *r) {
    ln_worker *w = r->w;
    const ln__round *rd = &r->rd;
    if (rd->received && rd->ntaken > 0 && rd->ntaken == rd->asked &&
        w->nslots < w->opts.concurrency)
        return; /* there may be more right away */
    /* A wake-up read while waiting for a reply leaves jobs on the finished
     * stack that wrote no new one: collect before sleeping. Acquire pairs
     * with the release push; that wake-up's read came after the push's
     * write (eventfd), so the load sees the push. */
    if (atomic_load_explicit(&w->finished, memory_order_acquire) != NULL) return;
    uint64_t deadline = r->now + 3600000ull * LN__MS;
    if (w->nslots > 0) deadline = min_u64(deadline, r->next_renew);
    deadline = min_u64(deadline, w->next_timeout);
    if (w->nslots > 0) deadline = min_u64(deadline, r->next_cancel); /* worker_cancel.c */
    if (!rd->no_take) deadline = min_u64(deadline, r->next_stall);
    if (rd->stopping && !r->released) deadline = min_u64(deadline, r->grace_end);
    deadline = min_u64(deadline, r->next_beat);     /* the heartbeat */
    if (r->idle.limit_until != 0 && !rd->no_take) { /* rate limited: timers only */
        (void)ln__worker_sleep(w, min_u64(deadline, r->idle.limit_until), -1);
        return;
    }
    r->idle.sleep(r, deadline);
}
