/* lane_thread.c - a lane's worker threads: take items in batches, run them,
 * account for them, spin briefly, sleep, retire when idle. What they do
 * under the lane's mutex is in lane.c.
 *
 * DESIGN
 * A worker holds its lane's mutex only to move items from the queue into
 * a local batch and to account for the batch it just ran; it never runs a
 * task, a queue op excepted, or any user code under the lock.
 *
 * Batching: with a backlog, a worker takes several items at once, never
 * more than its share (backlog / threads; on a growing lane backlog /
 * threads awake, as its sleepers are not coming) nor LN_BATCH. It starts with
 * batches of 1 and doubles the size only while its tasks prove short
 * (<= LN_LONG_TASK_NS each on average); one long task sends it back to 1.
 * Items in a batch are invisible to other workers until they run, so a
 * batch of long tasks would make them wait while another thread is free;
 * short tasks, the case batching is for, cost 1 lock per batch. Tasks of
 * one lane therefore must not wait for each other by means outside lanes
 * (lanes' own waits help instead: ln__help_wait, below).
 *
 * Fork-join (docs/internals/forkjoin.md): a worker of a fixed lane has a
 * deque (deque.h) that its group submits to its own lane go to. The loop
 * looks at its own deque (newest first) before the rings, except one turn
 * in 64, and steals the oldest item of another worker's deque of the same
 * lane when the rings and queue are empty. A wait inside a task runs
 * queued items of the waiter's own lane, one at a time, until it is over
 * (ln__help_wait).
 *
 * Timing (pool->timing == LN_TIMING_SAMPLED): a worker that runs batches
 * of 8 or more short tasks sets the lane's sample_mask, and submitters then
 * stamp 1 item in 16; an item without a stamp is not timed, so a stream of
 * tiny tasks costs one clock read per batch (busy time) instead of two per
 * task. One long task sends the batch size, and the mask, back to "every
 * task". LN_TIMING_ALL never samples.
 *
 * Idle: a worker first spins for spin_us reading the lane's relaxed 'hint'
 * (no lock, no syscall), which keeps a producer that submits in a tight
 * loop from paying a futex wake per task; then it sleeps on work_cv
 * (ln__lane_sleep). A surplus worker (more than min_threads alive) sleeps
 * with a timeout and exits after idle_timeout_ms without work. How sleeping
 * and waking fit together: docs/internals/wakeup.md.
 */
#include "lane.h"

#include "pool.h"
#include "group.h"
#include "submit.h"
#include "task.h"
#include "thread_local.h"

#include <sched.h>

#define LN_BATCH 32
#define LN_LONG_TASK_NS 20000u
/* A waiting worker with nothing to help with naps before it looks for work
 * again: first LN_HELP_NAP_MIN_NS, doubling after each nap without work up
 * to LN_HELP_NAP_MAX_NS (forkjoin.md). The end of the wait wakes it at once;
 * new work waits for the nap's end, so the first naps are short. */
#define LN_HELP_NAP_MIN_NS 20000u
#define LN_HELP_NAP_MAX_NS 500000u

/* How many helping waits are open on the calling worker's stack. The
 * worker itself is ln__tl_worker (thread_local.h). */
static _Thread_local unsigned tl_depth LN_TLS_FAST;

/* The rest of the worker loop's current batch: items taken but not yet
 * started. A helping wait runs them first (they are invisible to every
 * other worker, and a task may be waiting for one of them); run_batch
 * then skips them and counts them as run by their helpers. */
typedef struct batch_rest {
    ln_queue_item *b;
    unsigned next, n; /* b[next..n) not started */
    unsigned helped;  /* of b, run by helping waits */
} batch_rest;
static _Thread_local batch_rest *tl_rest LN_TLS_FAST;

/* Run a batch. Returns how many items ran; the others were canceled (by
 * ln_task_cancel earlier, or now because the lane is stopping).
 * Timing: an item with a timestamp (enq_ns != 0, see ln__enq_stamp) gets
 * its wait and run recorded; 'now' is read once per timed task and reused
 * as the next task's start when that one is timed too.
 * *t_last: in, the end of the previous batch when this one follows it
 * directly (the take in between counts as busy), else 0; out, the end of
 * this one. One clock read per batch of untimed tasks. */
static unsigned run_batch(ln__thread *self, ln__lane *l, ln_queue_item *b, unsigned n,
                          uint64_t *t_last, uint64_t *elapsed_ns) {
    /* A batch run inside a helping wait is inside the waiting task's own
     * busy time: not counted twice. */
    const int nested = tl_depth > 0;
    /* Only the loop's own batch is left for helpers; a nested run is one
     * item already taken. */
    batch_rest rest = {b, 0, n, 0};
    if (!nested) tl_rest = &rest;
    /* A nested run reads the clock only for a timed item: its busy time and
     * elapsed are not used (ln__help_wait). */
    uint64_t t0 = nested ? 0 : *t_last != 0 ? *t_last : ln__now_ns(), t = t0;
    int t_fresh = !nested; /* t is the end of the previous task (or t0) */
    unsigned ran = 0;
    ln_group *g = NULL; /* consecutive items of one group are reported once */
    uint64_t g_done = 0, g_canceled = 0;

    while (rest.next < rest.n) {
        ln_queue_item *it = &b[rest.next++];
        ln_group *ig = ln__as_group(it->owner);
        ln_task *task = ln__as_task(it->owner);
        if (ig != g) {
            if (g != NULL) ln__group_finished(g, g_done, g_canceled);
            g = ig;
            g_done = g_canceled = 0;
        }
        /* relaxed: a late view only means one more task runs before the
         * stop is noticed, which destroy allows ("what started runs"). */
        if (atomic_load_explicit(&l->stop_hint, memory_order_relaxed)) {
            if (ig != NULL) {
                g_done++;
                g_canceled++;
            } else if (task != NULL) {
                ln__task_cancel_queued(task);
                ln__task_unref(task);
            }
            continue;
        }
        if (task != NULL && !ln__task_start(task)) {
            ln__task_sync(task);  /* its canceller has finished posting */
            ln__task_unref(task); /* canceled while queued: a tombstone */
            continue;
        }
        const int timed = it->enq_ns != 0;
        if (timed) {
            if (!t_fresh) t = ln__now_ns();
            ln__hist_record(&self->wait, t > it->enq_ns ? t - it->enq_ns : 0);
        }
        void *result = it->fn(it->arg);
        if (timed) {
            uint64_t t2 = ln__now_ns();
            ln__hist_record(&self->run, t2 - t);
            t = t2;
        }
        t_fresh = timed;
        ran++;
        if (task != NULL) {
            ln__task_finish(task, result);
            ln__task_unref(task);
        } else if (ig != NULL) {
            g_done++;
        }
    }
    if (g != NULL) ln__group_finished(g, g_done, g_canceled);
    if (!t_fresh && !nested) t = ln__now_ns();
    *elapsed_ns = t - t0;
    *t_last = t;
    /* Single writer (this thread); relaxed: read only for statistics. */
    if (!nested)
        atomic_store_explicit(&self->busy_ns,
                              atomic_load_explicit(&self->busy_ns, memory_order_relaxed) + (t - t0),
                              memory_order_relaxed);
    if (nested) return ran;
    tl_rest = NULL;
    return ran + rest.helped;
}

/* 1 if either ring of a fixed lane has an item ready (relaxed peeks). */
static int rings_peek(ln__lane *l) {
    return ln__mpmc_peek(l->ring) || ln__spmc_peek(l->owned);
}

/* Spin up to spin_us waiting for work to show. No lock held. */
static void spin(ln__lane *l, unsigned spin_us) {
    uint64_t deadline = ln__now_ns() + (uint64_t)spin_us * 1000u;
    unsigned k = 0;
    /* relaxed: these only decide when to look again; taking is exact. */
    while (atomic_load_explicit(&l->hint, memory_order_relaxed) == 0 &&
           (l->ring == NULL || (!rings_peek(l) && !ln__lane_deques_peek(l))) &&
           !atomic_load_explicit(&l->stop_hint, memory_order_relaxed)) {
        if ((++k & 63) == 0) {
            if (ln__now_ns() >= deadline) return;
            sched_yield();
        }
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    }
}

/* Take up to batch_max items (never more than this worker's share of the
 * backlog): from the rings first -- the owner's and the shared one, which
 * goes first alternating with 'turn', so neither producer side can starve
 * the other -- then from the queue under the lock. */
static unsigned take(ln__lane *l, ln_queue_item *b, unsigned batch_max, unsigned turn) {
    /* relaxed: sizes only shape the batch; the pops are exact. A lone
     * worker has no one to leave a share for, and a ring's size reads
     * tail, the producers' hot line: it looks only when it has company. */
    size_t ring_n = 0;
    if (l->ring != NULL)
        ring_n = l->max_threads > 1 ? ln__mpmc_size(l->ring) + ln__spmc_size(l->owned) : batch_max;
    size_t queue_n = atomic_load_explicit(&l->hint, memory_order_relaxed);
    size_t share = (ring_n + queue_n) / (l->max_threads ? l->max_threads : 1);
    unsigned want = share > batch_max ? batch_max : (share ? (unsigned)share : 1);
    LN_ASSERT(want >= 1 && want <= LN_BATCH); /* fits the caller's batch */
    if (ring_n + queue_n > 0) ln__lane_note_depth(l, ring_n + queue_n);

    unsigned n = 0;
    if (l->ring != NULL) {
        if (turn & 1) {
            n = ln__spmc_pop(l->owned, b, want);
            if (n < want) n += ln__mpmc_pop(l->ring, b + n, want - n);
        } else {
            n = ln__mpmc_pop(l->ring, b, want);
            if (n < want) n += ln__spmc_pop(l->owned, b + n, want - n);
        }
    }
    if (n > 0) /* relaxed: a statistic and a hint; take_locked counts its own */
        atomic_fetch_add_explicit(&l->nbusy, 1, memory_order_relaxed);
    if (n == 0 && (l->ring == NULL || queue_n > 0)) {
        /* Without rings, take_locked works out the share under mu. */
        n = ln__lane_take_locked(l, b, l->ring == NULL ? batch_max : want);
    } else if (n > 0 && atomic_load_explicit(&l->nidle, memory_order_relaxed) > 0 &&
               rings_peek(l)) {
        ln__lane_wake_one(l); /* chain wake-up on the lock-free path */
    }
    return n;
}

/* ---- fork-join deques (deque.h, docs/internals/forkjoin.md) -------------- */

/* Steal the oldest item of another worker's deque of l, trying each once
 * from the caller's right-hand neighbour on. Passes a wake-up on when the
 * victim has more (as take() does for the rings). 1 if one was taken. */
static int steal(ln__thread *self, ln__lane *l, ln_queue_item *it) {
    unsigned n = l->ndeques;
    unsigned start = self->deque != NULL ? (unsigned)(self->deque - l->deques) + 1 : 0;
    for (unsigned k = 0; k < n; k++) {
        ln__deque *d = &l->deques[(start + k) % n];
        if (d == self->deque || !ln__deque_take(d, 0, it)) continue;
        /* relaxed: hints, as in take(). */
        if (ln__deque_size(d) > 0 && atomic_load_explicit(&l->nidle, memory_order_relaxed) > 0)
            ln__lane_wake_one(l);
        return 1;
    }
    return 0;
}

/* One item from the deques for the worker loop: the caller's own newest
 * (own_first), else a steal. Counts the caller in nbusy when it took. */
static unsigned take_deques(ln__thread *self, ln__lane *l, ln_queue_item *b, int own_first) {
    if (l->ndeques == 0) return 0;
    int got = own_first && self->deque != NULL && ln__deque_take(self->deque, 1, b);
    if (!got && !own_first) got = self->deque != NULL && ln__deque_take(self->deque, 1, b);
    if (!got && !own_first) got = steal(self, l, b);
    /* relaxed: a statistic and a hint, as in take(). */
    if (got) atomic_fetch_add_explicit(&l->nbusy, 1, memory_order_relaxed);
    return (unsigned)got;
}

int ln__lane_push_local(ln_pool *pool, int lane, ln_fn fn, void *arg, void *owner) {
    ln__thread *self = ln__tl_worker;
    if (self == NULL || self->deque == NULL || self->lane != &pool->lanes[lane]) return 0;
    ln__lane *l = self->lane;
    /* relaxed: as the rings' submitters; destroy purges the deques again
     * after every worker is joined (ln_pool_destroy). */
    if (atomic_load_explicit(&l->stop_hint, memory_order_relaxed)) return 0;
    /* Forks are short-lived and many: SAMPLED times 1 in 16 of them
     * always (lanes.h), not every one while the lane's batches are short
     * (a joining task never looks short). */
    uint64_t stamp = 0;
    if (pool->timing == LN_TIMING_ALL ||
        (pool->timing == LN_TIMING_SAMPLED && (ln__tl_submits++ & LN_SAMPLE_MASK) == 0))
        stamp = ln__now_ns();
    ln_queue_item it = {fn, arg, owner, stamp};
    if (ln__deque_push(self->deque, &it) != 0) return 0; /* no memory: the rings */
    ln__lane_after_lockfree_push(l);
    return 1;
}

/* ---- helping waits (forkjoin.md) ------------------------------------------ */

/* One queued item of the caller's lane for a helping wait: first the rest
 * of the worker loop's batch (2: at any depth, as it is at most LN_BATCH
 * items and each is taken once); then, below the depth bound, its own
 * deque's newest, the rings', the locked queue's, a steal; past it only an
 * item whose owner word is own, from any deque of the lane. */
static int help_take(ln__thread *self, ln__lane *l, void *own, ln_queue_item *it) {
    batch_rest *r = tl_rest;
    if (r != NULL && r->next < r->n) {
        *it = r->b[r->next++];
        return 2;
    }
    if (tl_depth < LN_HELP_DEPTH) {
        if (self->deque != NULL && ln__deque_take(self->deque, 1, it)) return 1;
        if (l->ring != NULL && (ln__spmc_pop(l->owned, it, 1) || ln__mpmc_pop(l->ring, it, 1)))
            return 1;
        /* relaxed: a hint (kept for every lane, lane.h); take_locked is
         * exact, and a stale 0 only delays the look by a nap. */
        if (atomic_load_explicit(&l->hint, memory_order_relaxed) > 0 &&
            ln__lane_take_locked(l, it, 1) == 1) {
            /* take_locked counted us in nbusy; the outer batch already had. */
            atomic_fetch_sub_explicit(&l->nbusy, 1, memory_order_relaxed);
            return 1;
        }
        return l->ndeques > 0 && steal(self, l, it);
    }
    if (own == NULL || l->ndeques == 0) return 0;
    unsigned n = l->ndeques;
    unsigned start = self->deque != NULL ? (unsigned)(self->deque - l->deques) : 0;
    for (unsigned k = 0; k < n; k++)
        if (ln__deque_take_owned(&l->deques[(start + k) % n], own, it)) return 1;
    return 0;
}

/* Spin up to spin_us for work to show in the lane, or the wait to end
 * (checked every 64 pauses: it may take a lock). No lanes lock held. */
static void help_spin(ln__lane *l, const ln__waiter *w, unsigned spin_us) {
    uint64_t deadline = ln__now_ns() + (uint64_t)spin_us * 1000u;
    for (unsigned k = 1;; k++) {
        /* relaxed: hints, as in spin(). */
        if (atomic_load_explicit(&l->hint, memory_order_relaxed) > 0) return;
        if (l->ring != NULL && (rings_peek(l) || ln__lane_deques_peek(l))) return;
        if ((k & 63) == 0) {
            if (w->done(w->ctx) || ln__now_ns() >= deadline) return;
            sched_yield();
        }
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    }
}

int ln__help_wait(const ln__waiter *w, uint64_t deadline_ns) {
    ln__thread *self = ln__tl_worker;
    LN_ASSERT(self != NULL); /* callers checked ln__current_pool() */
    ln__lane *l = self->lane;
    int spun = 0;
    uint64_t nap = LN_HELP_NAP_MIN_NS;
    /* Items run here and not yet accounted: one ln__lane_account (a
     * contended seq_cst add) per stretch of helping rather than per item;
     * flushed before every spin, nap and return, so a drain never waits
     * on a helper that is not running tasks. */
    uint64_t acc_taken = 0, acc_ran = 0;
    for (;;) {
        if (w->done(w->ctx)) {
            ln__lane_account(l, acc_taken, acc_ran);
            return 0;
        }
        ln_queue_item it;
        int from = help_take(self, l, w->own, &it);
        if (from != 0) {
            uint64_t t_last = 0, elapsed = 0;
            tl_depth++;
            unsigned ran = run_batch(self, l, &it, 1, &t_last, &elapsed);
            tl_depth--;
            if (from == 2) {
                tl_rest->helped += ran; /* the loop accounts for its batch */
            } else {
                acc_taken++;
                acc_ran += ran;
            }
            spun = 0;
            nap = LN_HELP_NAP_MIN_NS;
            continue;
        }
        ln__lane_account(l, acc_taken, acc_ran);
        acc_taken = acc_ran = 0;
        uint64_t now = ln__now_ns();
        if (deadline_ns != 0 && now >= deadline_ns) return LN_ETIMEDOUT;
        if (!spun && l->pool->spin_us > 0 && tl_depth < LN_HELP_DEPTH) {
            spun = 1; /* once between naps: what it saw may not be takeable */
            help_spin(l, w, l->pool->spin_us);
            continue;
        }
        spun = 0;
        uint64_t until = now + nap;
        if (deadline_ns != 0 && until > deadline_ns) until = deadline_ns;
        w->block(w->ctx, until);
        if (nap < LN_HELP_NAP_MAX_NS) nap *= 2;
    }
}

/* Sample the lane's timestamps (lane.h, sample_mask) while this worker
 * runs batches of short tasks; time every task again after a long one.
 * relaxed: a hint; written only when it changes, so submitters keep the
 * line shared. */
static void note_sampling(ln__lane *l, unsigned batch_max) {
    unsigned want = batch_max >= 8 ? LN_SAMPLE_MASK : 0;
    if (atomic_load_explicit(&l->sample_mask, memory_order_relaxed) != want)
        atomic_store_explicit(&l->sample_mask, want, memory_order_relaxed);
}

void *ln__lane_thread_main(void *p) {
    ln__thread *self = p;
    ln__lane *l = self->lane;
    ln_pool *pool = l->pool;
    ln_queue_item batch[LN_BATCH];
    unsigned batch_max = 1; /* grows while tasks prove short; see DESIGN */
    unsigned turn = 0;      /* which ring take() looks at first */
    uint64_t t_last = 0;    /* see run_batch */
    int spun = 0;

    ln__set_current(pool, l->index);
    ln__tl_worker = self;
    int leave = ln__lane_started(l, self);
    while (!leave) {
        unsigned taken = 0;
        if (!atomic_load_explicit(&l->stop_hint, memory_order_relaxed)) {
            /* The own deque's newest first, except one turn in 64 that
             * looks at the rings first, so a lane busy with fork-join
             * still gets to other submitters' tasks; then the rings and
             * queue; then a steal (forkjoin.md). */
            if ((turn & 63) != 63) taken = take_deques(self, l, batch, 1);
            if (taken == 0) taken = take(l, batch, batch_max, turn);
            if (taken == 0) taken = take_deques(self, l, batch, 0);
            turn++;
        }
        if (taken > 0) {
            /* take() and take_deques() counted this worker in nbusy. */
            uint64_t elapsed = 0;
            unsigned ran = run_batch(self, l, batch, taken, &t_last, &elapsed);
            atomic_fetch_sub_explicit(&l->nbusy, 1, memory_order_relaxed);
            ln__lane_account(l, taken, ran);
            if (ran > 0 && elapsed / ran <= LN_LONG_TASK_NS)
                batch_max = batch_max * 2 > LN_BATCH ? LN_BATCH : batch_max * 2;
            else if (ran > 0)
                batch_max = 1;
            if (pool->timing == LN_TIMING_SAMPLED) note_sampling(l, batch_max);
            spun = 0;
            continue;
        }
        t_last = 0; /* idle from here on */
        if (pool->spin_us > 0 && !spun &&
            !atomic_load_explicit(&l->stop_hint, memory_order_relaxed)) {
            spun = 1;
            ln__lane_set_spinning(l, 1);
            spin(l, pool->spin_us);
            ln__lane_set_spinning(l, 0);
            continue;
        }
        spun = 0;
        leave = ln__lane_sleep(l); /* 1: mu held */
    }
    ln__lane_thread_exit(l, self); /* releases mu */
    return NULL;
}
