/* worker.c - a lane's worker threads: take items in batches, run them,
 * account for them, spin briefly, sleep, retire when idle.
 *
 * DESIGN
 * A worker holds its lane's mutex only to move items from the queue into
 * a local batch and to account for the batch it just ran; it never runs a
 * task, a queue op excepted, or any user code under the lock.
 *
 * Batching: with a backlog, a worker takes several items at once, never
 * more than its share (backlog / threads) nor LN_BATCH. It starts with
 * batches of 1 and doubles the size only while its tasks prove short
 * (<= LN_LONG_TASK_NS each on average); one long task sends it back to 1.
 * Items in a batch are invisible to other workers until they run, so a
 * batch of long tasks would make them wait while another thread is free;
 * short tasks, the case batching is for, cost 1 lock per batch. Tasks of
 * one lane therefore must not wait for each other by means outside lanes
 * (lanes' own waits refuse that with LN_EBUSY).
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
 * loop from paying a futex wake per task; then it sleeps on work_cv. A
 * surplus worker (more than min_threads alive) sleeps with a timeout and
 * exits after idle_timeout_ms without work.
 *
 * Wake-ups: pending_wakes counts signals sent and not yet consumed by a
 * waking worker; producers signal only while nidle > pending_wakes, so a
 * burst does not send one futex wake per item to a worker already waking.
 * A worker that wakes to a backlog passes the wake on (chain wake-up).
 * pending_wakes can only under-count what is really on its way (a timed-out
 * worker consumes one), which costs at most an extra signal, never a lost
 * wake-up: a sleeping worker with work queued always has a signal coming.
 *
 * Exit: an exiting worker moves itself from 'threads' to 'zombies' under the
 * mutex and does not touch the lane afterwards; zombies are joined by the
 * next spawn or by destroy, which waits for nthreads == 0 first.
 */
#include "pool.h"

#include <errno.h>
#include <sched.h>
#include <string.h>

#define LN_BATCH 32
#define LN_LONG_TASK_NS 20000u

static _Thread_local ln_pool *tl_pool;
static _Thread_local int tl_lane = -1;
_Thread_local uint64_t ln__tl_self_id LN_TLS_FAST;
_Thread_local unsigned ln__tl_submits LN_TLS_FAST;

uint64_t ln__self_id_assign(void) {
    static _Atomic uint64_t next_id = 1;
    /* relaxed: the ids only need to be distinct. */
    ln__tl_self_id = atomic_fetch_add_explicit(&next_id, 1, memory_order_relaxed);
    return ln__tl_self_id;
}

ln_pool *ln__current_pool(void) { return tl_pool; }
int ln__current_lane(void) { return tl_lane; }
void ln__set_current(ln_pool *pool, int lane) {
    tl_pool = pool;
    tl_lane = lane;
}

/* Cancel an item that will never run, telling its owner (no lane lock
 * needed; allowed under one by the lock order). */
void ln__item_cancel(ln_pool *pool, const ln_queue_item *it) {
    LN_UNUSED(pool);
    ln_group *g = ln__as_group(it->owner);
    if (g != NULL) {
        ln__group_finished(g, 1, 1);
        return;
    }
    ln_task *t = ln__as_task(it->owner);
    if (t != NULL) {
        ln__task_cancel_queued(t);
        ln__task_unref(t); /* the queue's reference */
    }
}

/* Run a batch. Returns how many items ran; the others were canceled (by
 * ln_task_cancel earlier, or now because the lane is stopping).
 * Timing: an item with a timestamp (enq_ns != 0, see ln__enq_stamp) gets
 * its wait and run recorded; 'now' is read once per timed task and reused
 * as the next task's start when that one is timed too.
 * *t_last: in, the end of the previous batch when this one follows it
 * directly (the take in between counts as busy), else 0; out, the end of
 * this one. One clock read per batch of untimed tasks. */
static unsigned run_batch(ln_thread *self, ln_lane *l, ln_queue_item *b,
                          unsigned n, uint64_t *t_last, uint64_t *elapsed_ns) {
    uint64_t t0 = *t_last != 0 ? *t_last : ln__now_ns(), t = t0;
    int t_fresh = 1; /* t is the end of the previous task (or t0) */
    unsigned ran = 0;
    ln_group *g = NULL; /* consecutive items of one group are reported once */
    uint64_t g_done = 0, g_canceled = 0;

    for (unsigned i = 0; i < n; i++) {
        ln_queue_item *it = &b[i];
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
    if (!t_fresh) t = ln__now_ns();
    *elapsed_ns = t - t0;
    *t_last = t;
    /* Single writer (this thread); relaxed: read only for statistics. */
    atomic_store_explicit(&self->busy_ns,
                          atomic_load_explicit(&self->busy_ns, memory_order_relaxed) +
                              (t - t0),
                          memory_order_relaxed);
    return ran;
}

/* 1 if either ring of a fixed lane has an item ready (relaxed peeks). */
static int rings_peek(ln_lane *l) {
    return ln__mpmc_peek(l->ring) || ln__spmc_peek(l->owned);
}

/* Spin up to spin_us waiting for work to show. No lock held. */
static void spin(ln_lane *l, unsigned spin_us) {
    uint64_t deadline = ln__now_ns() + (uint64_t)spin_us * 1000u;
    unsigned k = 0;
    /* relaxed: these only decide when to look again; taking is exact. */
    while (atomic_load_explicit(&l->hint, memory_order_relaxed) == 0 &&
           (l->ring == NULL || !rings_peek(l)) &&
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

/* Keep the highest queue depth seen. Several threads may race: CAS. */
void ln__lane_note_depth(ln_lane *l, size_t depth) {
    /* relaxed: a statistic. */
    uint64_t peak = atomic_load_explicit(&l->peak, memory_order_relaxed);
    while (depth > peak &&
           !atomic_compare_exchange_weak_explicit(&l->peak, &peak, depth, memory_order_relaxed,
                                                  memory_order_relaxed)) {
    }
}

/* Take up to batch_max items (never more than this worker's share of the
 * backlog): from the rings first -- the owner's and the shared one, which
 * goes first alternating with 'turn', so neither producer side can starve
 * the other -- then from the queue under the lock. */
static unsigned take(ln_lane *l, ln_queue_item *b, unsigned batch_max, unsigned turn) {
    /* relaxed: sizes only shape the batch; the pops are exact. A lone
     * worker has no one to leave a share for, and a ring's size reads
     * tail, the producers' hot line: it looks only when it has company. */
    size_t ring_n = 0;
    if (l->ring != NULL)
        ring_n = l->max_threads > 1 ? ln__mpmc_size(l->ring) + ln__spmc_size(l->owned)
                                    : batch_max;
    size_t queue_n = atomic_load_explicit(&l->hint, memory_order_relaxed);
    size_t share = (ring_n + queue_n) / (l->max_threads ? l->max_threads : 1);
    unsigned want = share > batch_max ? batch_max : (share ? (unsigned)share : 1);
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
    if (n == 0 && (l->ring == NULL || queue_n > 0)) {
        pthread_mutex_lock(&l->mu);
        if (!l->stopping) {
            while (n < want && l->qops->shift(l->q, &b[n]) == 1) n++;
            size_t left = l->qops->size(l->q);
            atomic_store_explicit(&l->hint, left, memory_order_relaxed); /* see pool.h */
            if (n > 0 && l->room_waiters > 0) pthread_cond_broadcast(&l->room_cv);
            /* Chain wake-up: more work than this worker takes. */
            if (left > 0 && atomic_load_explicit(&l->nidle, memory_order_relaxed) > l->pending_wakes) {
                l->pending_wakes++;
                pthread_cond_signal(&l->work_cv);
            }
        }
        pthread_mutex_unlock(&l->mu);
    } else if (n > 0 && atomic_load_explicit(&l->nidle, memory_order_relaxed) > 0 &&
               rings_peek(l)) {
        ln__lane_wake_one(l); /* chain wake-up on the lock-free path */
    }
    return n;
}

/* Sleep until woken (or the idle timeout, for a surplus thread). Returns 1
 * when the thread should exit, with mu held; else 0 with mu released. */
static int sleep_or_exit(ln_lane *l) {
    pthread_mutex_lock(&l->mu);
    if (l->stopping) return 1;
    /* Announce ourselves before the last look at the rings: the
     * counterpart of the submitter's publish, light barrier, read of nidle
     * (barrier.h). Lanes without rings take every submit under mu. */
    atomic_fetch_add_explicit(&l->nidle, 1, memory_order_seq_cst);
    if (l->ring != NULL) ln__barrier_heavy();
    if ((l->ring != NULL && (ln__mpmc_ready(l->ring) || ln__spmc_ready(l->owned))) ||
        l->qops->size(l->q) > 0) {
        atomic_fetch_sub_explicit(&l->nidle, 1, memory_order_relaxed);
        pthread_mutex_unlock(&l->mu);
        return 0;
    }
    int timed_out = 0;
    if (l->nthreads > l->min_threads) {
        uint64_t deadline = ln__now_ns() + (uint64_t)l->idle_timeout_ms * 1000000u;
        timed_out = ln__cond_timedwait_ns(&l->work_cv, &l->mu, deadline) == ETIMEDOUT;
    } else {
        pthread_cond_wait(&l->work_cv, &l->mu);
    }
    atomic_fetch_sub_explicit(&l->nidle, 1, memory_order_relaxed);
    if (l->pending_wakes > 0) l->pending_wakes--;
    if (l->stopping) return 1;
    /* Surplus threads (never on fixed lanes) retire after an idle timeout. */
    if (timed_out && l->qops->size(l->q) == 0 && l->nthreads > l->min_threads) return 1;
    pthread_mutex_unlock(&l->mu);
    return 0;
}

/* Sample the lane's timestamps (pool.h, sample_mask) while this worker
 * runs batches of short tasks; time every task again after a long one.
 * relaxed: a hint; written only when it changes, so submitters keep the
 * line shared. */
static void note_sampling(ln_lane *l, unsigned batch_max) {
    unsigned want = batch_max >= 8 ? LN_SAMPLE_MASK : 0;
    if (atomic_load_explicit(&l->sample_mask, memory_order_relaxed) != want)
        atomic_store_explicit(&l->sample_mask, want, memory_order_relaxed);
}

static void thread_exit(ln_thread *self, ln_lane *l) {
    /* Unlink from 'threads', fold statistics into the lane, become a zombie. */
    ln_thread **pp = &l->threads;
    while (*pp != self) pp = &(*pp)->next;
    *pp = self->next;
    ln__hist_merge(&l->retired_wait, &self->wait);
    ln__hist_merge(&l->retired_run, &self->run);
    l->retired_busy_ns += atomic_load_explicit(&self->busy_ns, memory_order_relaxed);
    l->retired_alive_ns += ln__now_ns() - self->born_ns;
    self->next = l->zombies;
    l->zombies = self;
    l->nthreads--;
    if (l->stopping) pthread_cond_broadcast(&l->idle_cv);
}

static void *worker_main(void *p) {
    ln_thread *self = p;
    ln_lane *l = self->lane;
    ln_pool *pool = l->pool;
    ln_queue_item batch[LN_BATCH];
    unsigned batch_max = 1; /* grows while tasks prove short; see DESIGN */
    unsigned turn = 0;      /* which ring take() looks at first */
    uint64_t t_last = 0;    /* see run_batch */
    int spun = 0;

    ln__set_current(pool, l->index);
    for (;;) {
        unsigned taken = 0;
        if (!atomic_load_explicit(&l->stop_hint, memory_order_relaxed))
            taken = take(l, batch, batch_max, turn++);
        if (taken > 0) {
            atomic_fetch_add_explicit(&l->nbusy, 1, memory_order_relaxed); /* statistic */
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
            pthread_mutex_lock(&l->mu);
            l->nspinning++;
            pthread_mutex_unlock(&l->mu);
            spin(l, pool->spin_us);
            pthread_mutex_lock(&l->mu);
            l->nspinning--;
            pthread_mutex_unlock(&l->mu);
            continue;
        }
        spun = 0;
        if (sleep_or_exit(l)) break; /* mu held */
    }
    thread_exit(self, l);
    pthread_mutex_unlock(&l->mu);
    return NULL;
}

void ln__lane_reap(ln_lane *l) {
    ln_thread *z = l->zombies;
    l->zombies = NULL;
    while (z != NULL) {
        ln_thread *next = z->next;
        /* The zombie released mu for the last time before we could take it
         * and touches nothing shared afterwards: joining under mu is safe. */
        pthread_join(z->tid, NULL);
        ln__free(z);
        z = next;
    }
}

int ln__lane_spawn(ln_lane *l) {
    ln__lane_reap(l);
    ln_thread *t = ln__calloc(1, sizeof *t);
    if (t == NULL) return LN_ENOMEM;
    t->lane = l;
    t->born_ns = ln__now_ns();
    atomic_init(&t->busy_ns, 0);
    /* The thread blocks on mu (held by our caller) until we return, so it
     * is linked before it first looks at the lane. */
    t->next = l->threads;
    l->threads = t;
    l->nthreads++;
    int rc = pthread_create(&t->tid, NULL, worker_main, t);
    if (rc != 0) {
        l->threads = t->next;
        l->nthreads--;
        ln__free(t);
        return rc == ENOMEM ? LN_ENOMEM : LN_EAGAIN;
    }
    return 0;
}
