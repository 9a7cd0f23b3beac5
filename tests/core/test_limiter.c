/* test_limiter.c - ln_limiter: exactly once, never more than concurrency in
 * flight, ln_done from any thread and from inside start, the trampoline,
 * failures, bounded pending (LN_EAGAIN and blocking), allocation failure. */
#include "testutil.h"

#include <lanes.h>

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

/* ---- a shared harness: per-op run counts and the in-flight maximum ---- */

typedef struct harness {
    ln_limiter *lim;
    atomic_int *runs;      /* runs[i]: how many times op i started */
    atomic_uint in_flight; /* started, ln_done not yet called */
    atomic_uint max_in_flight;
    atomic_long finished; /* ln_done calls made (counted just before) */
    int fail_odd;         /* ops with an odd index finish with an error */
    /* Deferred completion: tokens parked here, finished by other threads. */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    ln_done_token **parked;
    size_t *parked_idx;
    size_t nparked, cap;
    int closing;
} harness;

typedef struct op {
    harness *h;
    size_t index;
} op;

static void h_init(harness *h, size_t n, size_t park_cap) {
    memset(h, 0, sizeof(*h));
    h->runs = calloc(n ? n : 1, sizeof(*h->runs));
    pthread_mutex_init(&h->mu, NULL);
    pthread_cond_init(&h->cv, NULL);
    h->cap = park_cap;
    h->parked = calloc(park_cap ? park_cap : 1, sizeof(*h->parked));
    h->parked_idx = calloc(park_cap ? park_cap : 1, sizeof(*h->parked_idx));
    CHECK(h->runs && h->parked && h->parked_idx);
}

static void h_free(harness *h) {
    free(h->runs);
    free(h->parked);
    free(h->parked_idx);
    pthread_mutex_destroy(&h->mu);
    pthread_cond_destroy(&h->cv);
}

static void enter(harness *h, size_t index) {
    atomic_fetch_add(&h->runs[index], 1);
    unsigned now = atomic_fetch_add(&h->in_flight, 1) + 1;
    unsigned m = atomic_load(&h->max_in_flight);
    while (now > m && !atomic_compare_exchange_weak(&h->max_in_flight, &m, now)) {
    }
}

static void finish(harness *h, size_t index, ln_done_token *t) {
    atomic_fetch_sub(&h->in_flight, 1); /* before ln_done frees the rail */
    atomic_fetch_add(&h->finished, 1);
    ln_done(t, (h->fail_odd && (index & 1)) ? -1 : 0);
}

static void check_exactly_once(harness *h, size_t n) {
    for (size_t i = 0; i < n; i++) CHECK_EQ(atomic_load(&h->runs[i]), 1);
}

/* start: finish at once, on the calling thread, inside start. */
static void start_now(void *arg, ln_done_token *t) {
    op *o = arg;
    enter(o->h, o->index);
    finish(o->h, o->index, t);
}

/* start: park the token for a completer thread. */
static void start_park(void *arg, ln_done_token *t) {
    op *o = arg;
    harness *h = o->h;
    enter(h, o->index);
    pthread_mutex_lock(&h->mu);
    CHECK(h->nparked < h->cap);
    h->parked[h->nparked] = t;
    h->parked_idx[h->nparked] = o->index;
    h->nparked++;
    pthread_cond_signal(&h->cv);
    pthread_mutex_unlock(&h->mu);
}

/* Completer thread: finish parked operations in LIFO or FIFO order until
 * closing and nothing is parked. */
static void *completer(void *arg) {
    harness *h = arg;
    uint64_t rng = (uint64_t)(uintptr_t)&rng | 1;
    pthread_mutex_lock(&h->mu);
    for (;;) {
        while (h->nparked == 0 && !h->closing) pthread_cond_wait(&h->cv, &h->mu);
        if (h->nparked == 0) break;
        size_t k = ln_test_rand(&rng) % h->nparked; /* any parked op */
        ln_done_token *t = h->parked[k];
        size_t idx = h->parked_idx[k];
        h->nparked--;
        h->parked[k] = h->parked[h->nparked];
        h->parked_idx[k] = h->parked_idx[h->nparked];
        pthread_mutex_unlock(&h->mu);
        finish(h, idx, t); /* may start a queued op here, which parks */
        pthread_mutex_lock(&h->mu);
    }
    pthread_mutex_unlock(&h->mu);
    return NULL;
}

/* Finish every parked op from this thread (no completer). */
static void drain_parked_here(harness *h) {
    for (;;) {
        pthread_mutex_lock(&h->mu);
        if (h->nparked == 0) {
            pthread_mutex_unlock(&h->mu);
            return;
        }
        h->nparked--;
        ln_done_token *t = h->parked[h->nparked];
        size_t idx = h->parked_idx[h->nparked];
        pthread_mutex_unlock(&h->mu);
        finish(h, idx, t);
    }
}

/* ---- cases ------------------------------------------------------------ */

static void start_noop(void *arg, ln_done_token *t) {
    (void)arg;
    ln_done(t, 0);
}

TEST(bad_arguments) {
    ln_limiter *lim = (ln_limiter *)(uintptr_t)1;
    CHECK_EQ(ln_limiter_create(&lim, 0), LN_EINVAL);
    CHECK(lim == (ln_limiter *)(uintptr_t)1); /* untouched on error */
    CHECK_EQ(ln_limiter_create(NULL, 4), LN_EINVAL);
    CHECK_EQ(ln_limiter_create_ex(&lim, NULL), LN_EINVAL);
    ln_limiter_opts o;
    ln_limiter_opts_init(&o);
    CHECK_EQ(o.concurrency, 1);
    CHECK_EQ(o.max_pending, 0);
    CHECK_EQ(o.when_full, LN_FULL_FAIL);
    o.when_full = 7;
    CHECK_EQ(ln_limiter_create_ex(&lim, &o), LN_EINVAL);
    o.when_full = LN_FULL_FAIL;
    o.concurrency = 0;
    CHECK_EQ(ln_limiter_create_ex(&lim, &o), LN_EINVAL);

    CHECK_EQ(ln_limiter_create(&lim, 2), 0);
    CHECK_EQ(ln_limiter_submit(lim, NULL, NULL), LN_EINVAL);
    CHECK_EQ(ln_limiter_submit(NULL, start_noop, NULL), LN_EINVAL);
    CHECK_EQ(ln_limiter_wait(NULL), LN_EINVAL);
    CHECK_EQ(ln_limiter_failed(NULL), 0);
    ln_done(NULL, 0);                  /* ignored */
    CHECK_EQ(ln_limiter_wait(lim), 0); /* nothing submitted */
    ln_limiter_destroy(lim);
    ln_limiter_destroy(NULL);
}

TEST(done_inside_start) {
    const size_t n = (size_t)ln_test_scale(200000, 10);
    harness h;
    h_init(&h, n, 0);
    CHECK_EQ(ln_limiter_create(&h.lim, 3), 0);
    op *ops = calloc(n, sizeof(*ops));
    for (size_t i = 0; i < n; i++) {
        ops[i] = (op){&h, i};
        CHECK_EQ(ln_limiter_submit(h.lim, start_now, &ops[i]), 0);
    }
    CHECK_EQ(ln_limiter_wait(h.lim), 0);
    CHECK_EQ(ln_limiter_failed(h.lim), 0);
    check_exactly_once(&h, n);
    CHECK_EQ(atomic_load(&h.max_in_flight), 1); /* each finished at once */
    ln_limiter_destroy(h.lim);
    free(ops);
    h_free(&h);
}

/* Submitters on several threads, completions on several others in random
 * order: every op starts once, never more than C at a time, failures are
 * counted, and wait returns only after all. */
typedef struct submitter {
    harness *h;
    op *ops;
    size_t from, to;
    ln_start_fn start;
} submitter;

static void *submit_range(void *arg) {
    submitter *s = arg;
    for (size_t i = s->from; i < s->to; i++) {
        s->ops[i] = (op){s->h, i};
        CHECK_EQ(ln_limiter_submit(s->h->lim, s->start, &s->ops[i]), 0);
    }
    return NULL;
}

static void run_threaded(unsigned conc, size_t n, int fail_odd) {
    harness h;
    h_init(&h, n, conc);
    h.fail_odd = fail_odd;
    CHECK_EQ(ln_limiter_create(&h.lim, conc), 0);
    op *ops = calloc(n, sizeof(*ops));
    enum { NSUB = 3, NCOMP = 3 };
    pthread_t comp[NCOMP], sub[NSUB];
    submitter ss[NSUB];
    for (int i = 0; i < NCOMP; i++) pthread_create(&comp[i], NULL, completer, &h);
    for (int i = 0; i < NSUB; i++) {
        ss[i] = (submitter){&h, ops, n * (size_t)i / NSUB, n * (size_t)(i + 1) / NSUB, start_park};
        pthread_create(&sub[i], NULL, submit_range, &ss[i]);
    }
    for (int i = 0; i < NSUB; i++) pthread_join(sub[i], NULL);
    int rc = ln_limiter_wait(h.lim);
    CHECK_EQ(rc, fail_odd ? LN_EFAILED : 0);
    CHECK_EQ(ln_limiter_failed(h.lim), fail_odd ? n / 2 : 0);
    check_exactly_once(&h, n);
    CHECK(atomic_load(&h.max_in_flight) <= conc);
    CHECK(atomic_load(&h.max_in_flight) >= 1);
    CHECK_EQ(atomic_load(&h.in_flight), 0);
    pthread_mutex_lock(&h.mu);
    h.closing = 1;
    pthread_cond_broadcast(&h.cv);
    pthread_mutex_unlock(&h.mu);
    for (int i = 0; i < NCOMP; i++) pthread_join(comp[i], NULL);
    ln_limiter_destroy(h.lim);
    free(ops);
    h_free(&h);
}

TEST(done_from_other_threads) {
    run_threaded(4, (size_t)ln_test_scale(60000, 6), 0);
}
TEST(done_from_other_threads_c1) {
    run_threaded(1, (size_t)ln_test_scale(20000, 4), 0);
}
TEST(failures_counted) {
    run_threaded(8, (size_t)ln_test_scale(20000, 4), 1);
}

/* Rails really fill up: with completions held back, exactly C ops start,
 * the rest wait, and each ln_done starts exactly one more. */
TEST(rails_refill_one_per_done) {
    const unsigned conc = 5;
    const size_t n = 40;
    harness h;
    h_init(&h, n, n);
    CHECK_EQ(ln_limiter_create(&h.lim, conc), 0);
    op ops[40];
    for (size_t i = 0; i < n; i++) {
        ops[i] = (op){&h, i};
        CHECK_EQ(ln_limiter_submit(h.lim, start_park, &ops[i]), 0);
    }
    CHECK_EQ(h.nparked, conc);
    for (size_t done = 1; done <= n - conc; done++) {
        /* finish the oldest parked op; the oldest queued one starts */
        ln_done_token *t = h.parked[0];
        size_t idx = h.parked_idx[0];
        memmove(h.parked, h.parked + 1, (h.nparked - 1) * sizeof(*h.parked));
        memmove(h.parked_idx, h.parked_idx + 1, (h.nparked - 1) * sizeof(*h.parked_idx));
        h.nparked--;
        finish(&h, idx, t);
        CHECK_EQ(h.nparked, conc);
        CHECK_EQ(h.parked_idx[conc - 1], conc - 1 + done); /* FIFO */
    }
    drain_parked_here(&h);
    CHECK_EQ(ln_limiter_wait(h.lim), 0);
    check_exactly_once(&h, n);
    CHECK_EQ(atomic_load(&h.max_in_flight), conc);
    ln_limiter_destroy(h.lim);
    h_free(&h);
}

/* The trampoline: C ops hold their rails while a million immediately
 * finishing ops queue up; releasing the holders hands the rails down the
 * whole queue on this thread. Without the trampoline each hand-off would
 * nest inside the previous start (a million frames: a stack overflow); we
 * also check the stack depth directly. */
static uintptr_t stack_lo = UINTPTR_MAX, stack_hi;

static void start_now_depth(void *arg, ln_done_token *t) {
    uintptr_t here = (uintptr_t)&here;
    if (here < stack_lo) stack_lo = here;
    if (here > stack_hi) stack_hi = here;
    start_now(arg, t);
}

TEST(trampoline_bounded_stack) {
    const unsigned conc = 1000;
    const size_t nq = (size_t)ln_test_scale(1000000, 10);
    const size_t n = conc + nq;
    harness h;
    h_init(&h, n, conc);
    CHECK_EQ(ln_limiter_create(&h.lim, conc), 0);
    op *ops = calloc(n, sizeof(*ops));
    for (size_t i = 0; i < n; i++) {
        ops[i] = (op){&h, i};
        CHECK_EQ(ln_limiter_submit(h.lim, i < conc ? start_park : start_now_depth, &ops[i]), 0);
    }
    CHECK_EQ(h.nparked, conc);
    for (size_t i = 0; i < n; i++) CHECK_EQ(atomic_load(&h.runs[i]), i < conc);
    drain_parked_here(&h); /* the first ln_done runs the whole queue */
    CHECK_EQ(ln_limiter_wait(h.lim), 0);
    check_exactly_once(&h, n);
    CHECK(atomic_load(&h.max_in_flight) <= conc);
    CHECK(stack_hi - stack_lo < 64 * 1024);
    ln_limiter_destroy(h.lim);
    free(ops);
    h_free(&h);
}

/* Two limiters finishing each other's operations: every start of A
 * finishes the running op of B, whose queued successor starts (a frame of B
 * on top of A's) and finishes A's op, whose successor is owed to A's frame
 * further down the stack. The chain of frames keeps the stack flat; a
 * trampoline that looked only at the innermost frame would nest once per
 * operation. */
static ln_done_token *tok_a, *tok_b;
static long nested_a, nested_b;

static void hold_a(void *arg, ln_done_token *t) {
    (void)arg;
    tok_a = t;
}

static void hold_b(void *arg, ln_done_token *t) {
    (void)arg;
    tok_b = t;
}

static void op_a(void *arg, ln_done_token *t) {
    (void)arg;
    uintptr_t here = (uintptr_t)&here;
    if (here < stack_lo) stack_lo = here;
    if (here > stack_hi) stack_hi = here;
    nested_a++;
    ln_done_token *b = tok_b;
    tok_a = t;
    ln_done(b, 0); /* starts the next op_b right here */
}

static void op_b(void *arg, ln_done_token *t) {
    (void)arg;
    nested_b++;
    ln_done_token *a = tok_a;
    tok_b = t;
    ln_done(a, 0); /* A has queued ops: owed to A's frame below */
}

TEST(trampoline_across_limiters) {
    const long n = ln_test_scale(200000, 10);
    ln_limiter *a, *b;
    CHECK_EQ(ln_limiter_create(&a, 1), 0);
    CHECK_EQ(ln_limiter_create(&b, 1), 0);
    CHECK_EQ(ln_limiter_submit(a, hold_a, NULL), 0);
    CHECK_EQ(ln_limiter_submit(b, hold_b, NULL), 0);
    for (long i = 0; i < n; i++) {
        CHECK_EQ(ln_limiter_submit(a, op_a, NULL), 0);
        CHECK_EQ(ln_limiter_submit(b, op_b, NULL), 0);
    }
    CHECK_EQ(nested_a, 0);
    stack_lo = UINTPTR_MAX;
    stack_hi = 0;
    ln_done(tok_a, 0); /* release A's holder: the whole chain runs */
    CHECK_EQ(nested_a, n);
    CHECK_EQ(nested_b, n);
    ln_done(tok_b, 0); /* the last op_b: no op_a left to finish it */
    CHECK_EQ(ln_limiter_wait(a), 0);
    CHECK_EQ(ln_limiter_wait(b), 0);
    CHECK(stack_hi - stack_lo < 64 * 1024);
    ln_limiter_destroy(a);
    ln_limiter_destroy(b);
}

/* Bounded pending, failing: C running + max_pending queued, then EAGAIN;
 * a finished op makes room for exactly one more. */
TEST(bounded_pending_eagain) {
    harness h;
    h_init(&h, 16, 16);
    ln_limiter_opts o;
    ln_limiter_opts_init(&o);
    o.concurrency = 2;
    o.max_pending = 3;
    CHECK_EQ(ln_limiter_create_ex(&h.lim, &o), 0);
    op ops[16];
    for (size_t i = 0; i < 16; i++) ops[i] = (op){&h, i};
    for (size_t i = 0; i < 5; i++) CHECK_EQ(ln_limiter_submit(h.lim, start_park, &ops[i]), 0);
    CHECK_EQ(ln_limiter_submit(h.lim, start_park, &ops[5]), LN_EAGAIN);
    CHECK_EQ(ln_limiter_submit(h.lim, start_park, &ops[5]), LN_EAGAIN);
    CHECK_EQ(h.nparked, 2);
    h.nparked--;
    finish(&h, h.parked_idx[h.nparked], h.parked[h.nparked]); /* starts op 2 */
    CHECK_EQ(h.nparked, 2);
    CHECK_EQ(ln_limiter_submit(h.lim, start_park, &ops[5]), 0);
    CHECK_EQ(ln_limiter_submit(h.lim, start_park, &ops[6]), LN_EAGAIN);
    drain_parked_here(&h);
    CHECK_EQ(ln_limiter_wait(h.lim), 0);
    check_exactly_once(&h, 6);
    CHECK_EQ(atomic_load(&h.runs[6]), 0);
    ln_limiter_destroy(h.lim);
    h_free(&h);
}

/* Bounded pending, blocking: a single submitter races ahead of a
 * completer, blocks whenever C + max_pending ops are outstanding, and never
 * sees more outstanding than that. */
TEST(bounded_pending_blocks) {
    const size_t n = (size_t)ln_test_scale(3000, 3);
    harness h;
    h_init(&h, n, 4);
    ln_limiter_opts o;
    ln_limiter_opts_init(&o);
    o.concurrency = 2;
    o.max_pending = 2;
    o.when_full = LN_FULL_BLOCK;
    CHECK_EQ(ln_limiter_create_ex(&h.lim, &o), 0);
    op *ops = calloc(n, sizeof(*ops));
    pthread_t comp;
    pthread_create(&comp, NULL, completer, &h);
    long max_outstanding = 0;
    for (size_t i = 0; i < n; i++) {
        ops[i] = (op){&h, i};
        CHECK_EQ(ln_limiter_submit(h.lim, start_park, &ops[i]), 0);
        /* submitted minus finished never exceeds the limiter's own count */
        long outstanding = (long)(i + 1) - atomic_load(&h.finished);
        if (outstanding > max_outstanding) max_outstanding = outstanding;
    }
    CHECK_EQ(ln_limiter_wait(h.lim), 0);
    check_exactly_once(&h, n);
    CHECK(max_outstanding <= 2 + 2);
    CHECK(max_outstanding >= 3); /* the submitter did get ahead */
    CHECK(atomic_load(&h.max_in_flight) <= 2);
    pthread_mutex_lock(&h.mu);
    h.closing = 1;
    pthread_cond_broadcast(&h.cv);
    pthread_mutex_unlock(&h.mu);
    pthread_join(comp, NULL);
    ln_limiter_destroy(h.lim);
    free(ops);
    h_free(&h);
}

/* With concurrency 1 the limiter is a lock: what an op did before ln_done
 * (on a completer thread) happens before the next start (on another
 * thread). Plain, non-atomic counters: TSan reports a race if not. */
static long plain_starts, plain_dones;

static void start_plain(void *arg, ln_done_token *t) {
    CHECK_EQ(plain_starts, plain_dones); /* the previous op is done */
    plain_starts++;
    start_park(arg, t);
}

static void *completer_plain(void *arg) {
    harness *h = arg;
    pthread_mutex_lock(&h->mu);
    for (;;) {
        while (h->nparked == 0 && !h->closing) pthread_cond_wait(&h->cv, &h->mu);
        if (h->nparked == 0) break;
        ln_done_token *t = h->parked[--h->nparked];
        pthread_mutex_unlock(&h->mu);
        plain_dones++;
        ln_done(t, 0);
        pthread_mutex_lock(&h->mu);
    }
    pthread_mutex_unlock(&h->mu);
    return NULL;
}

TEST(concurrency_one_orders_ops) {
    const size_t n = (size_t)ln_test_scale(20000, 4);
    harness h;
    h_init(&h, n, 1);
    CHECK_EQ(ln_limiter_create(&h.lim, 1), 0);
    op *ops = calloc(n, sizeof(*ops));
    pthread_t comp, sub[2];
    pthread_create(&comp, NULL, completer_plain, &h);
    submitter ss[2] = {{&h, ops, 0, n / 2, start_plain}, {&h, ops, n / 2, n, start_plain}};
    for (int k = 0; k < 2; k++) pthread_create(&sub[k], NULL, submit_range, &ss[k]);
    for (int k = 0; k < 2; k++) pthread_join(sub[k], NULL);
    CHECK_EQ(ln_limiter_wait(h.lim), 0);
    check_exactly_once(&h, n);
    CHECK_EQ(plain_starts, (long)n);
    CHECK_EQ(plain_dones, (long)n);
    pthread_mutex_lock(&h.mu);
    h.closing = 1;
    pthread_cond_broadcast(&h.cv);
    pthread_mutex_unlock(&h.mu);
    pthread_join(comp, NULL);
    ln_limiter_destroy(h.lim);
    free(ops);
    h_free(&h);
}

/* wait returns while ops are still finishing on other threads, repeatedly;
 * the limiter is reusable after wait and destroy never frees under a
 * finisher (ASan/TSan would see it). */
TEST(wait_races_last_done) {
    const int rounds = (int)ln_test_scale(300, 10);
    for (int r = 0; r < rounds; r++) {
        harness h;
        h_init(&h, 8, 8);
        CHECK_EQ(ln_limiter_create(&h.lim, 4), 0);
        pthread_t comp[2];
        for (int i = 0; i < 2; i++) pthread_create(&comp[i], NULL, completer, &h);
        op ops[8];
        for (size_t i = 0; i < 8; i++) {
            ops[i] = (op){&h, i};
            CHECK_EQ(ln_limiter_submit(h.lim, start_park, &ops[i]), 0);
        }
        ln_limiter_destroy(h.lim); /* waits for all 8, then frees */
        check_exactly_once(&h, 8);
        pthread_mutex_lock(&h.mu);
        h.closing = 1;
        pthread_cond_broadcast(&h.cv);
        pthread_mutex_unlock(&h.mu);
        for (int i = 0; i < 2; i++) pthread_join(comp[i], NULL);
        h_free(&h);
    }
}

/* Allocation failure: create reports LN_ENOMEM and leaks nothing; a failed
 * growth of the pending ring makes that submit fail with LN_ENOMEM (op not
 * counted, not started) and leaves the limiter working. */
TEST(allocation_failure) {
    ln_limiter *lim = NULL;
    ln_test_alloc_install(1);
    CHECK_EQ(ln_limiter_create(&lim, 4), LN_ENOMEM);
    CHECK_EQ(ln_test_alloc_live(), 0);
    ln_test_alloc_uninstall();

    harness h;
    h_init(&h, 8, 8);
    ln_test_alloc_install(2); /* the limiter is allocation 1, the ring 2 */
    CHECK_EQ(ln_limiter_create(&h.lim, 2), 0);
    op ops[8];
    for (size_t i = 0; i < 8; i++) ops[i] = (op){&h, i};
    CHECK_EQ(ln_limiter_submit(h.lim, start_park, &ops[0]), 0);
    CHECK_EQ(ln_limiter_submit(h.lim, start_park, &ops[1]), 0);
    CHECK_EQ(ln_limiter_submit(h.lim, start_park, &ops[2]), LN_ENOMEM);
    CHECK_EQ(atomic_load(&h.runs[2]), 0);
    drain_parked_here(&h);
    CHECK_EQ(ln_limiter_wait(h.lim), 0);                       /* the failed op is not waited for */
    CHECK_EQ(ln_limiter_submit(h.lim, start_now, &ops[3]), 0); /* still works */
    CHECK_EQ(ln_limiter_wait(h.lim), 0);
    ln_limiter_destroy(h.lim);
    CHECK_EQ(ln_test_alloc_live(), 0);
    ln_test_alloc_uninstall();
    h_free(&h);
}

int main(int argc, char **argv) {
    return ln_test_run(argc, argv,
                       (ln_test_case[]){TESTCASE(bad_arguments),
                                        TESTCASE(done_inside_start),
                                        TESTCASE(done_from_other_threads),
                                        TESTCASE(done_from_other_threads_c1),
                                        TESTCASE(failures_counted),
                                        TESTCASE(rails_refill_one_per_done),
                                        TESTCASE(trampoline_bounded_stack),
                                        TESTCASE(trampoline_across_limiters),
                                        TESTCASE(bounded_pending_eagain),
                                        TESTCASE(bounded_pending_blocks),
                                        TESTCASE(concurrency_one_orders_ops),
                                        TESTCASE(wait_races_last_done),
                                        TESTCASE(allocation_failure),
                                        {0}});
}
