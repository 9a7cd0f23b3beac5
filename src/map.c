/* map.c - ln_map: rolling concurrency over n items on a pool lane.
 *
 * DESIGN
 * ln_map submits R = min(concurrency, n, the lane's max_threads) "rail"
 * tasks to the lane (more could never run at once). Each rail loops: claim
 * the next indices with one fetch_add on a shared counter, run fn on each,
 * claim again, until the counter passes n or the map is stopped. A rail
 * that finishes therefore refills itself at once with the lowest indices
 * nobody has claimed -- the in-order greedy schedule of a promise pool --
 * without a submit, a queue or a lock per item. At most R calls of fn are
 * in flight because only R rails exist.
 *
 * Claim sizes adapt to the cost of an item (guided self-scheduling, as
 * OpenMP's "guided"). A rail claims one index at a time and doubles its
 * claim, up to CLAIM_MAX, only while a whole claim ran in under
 * CLAIM_FAST_NS; a claim that took longer sends it back to one. Items that
 * take microseconds or more -- what a pool is for -- thus always run in
 * exact in-order greedy fashion, while a million no-op items pay a fraction
 * of a contended fetch_add each, and each rail writes codes[] on cache
 * lines of its own instead of fighting the other rails for every line. A
 * claim never exceeds what is left / (4 R), so the tail is shared out
 * finely, and at most CLAIM_MAX items can wait behind a slow one.
 *
 * Per item the hot path is two relaxed loads (the stop flags), the call and
 * the code store; one clock read and one fetch_add per claim. Everything a
 * rail counts (ran, failed, skipped, first failure) stays in locals and is
 * added to the shared totals once, when the rail exits.
 *
 * Stopping (stop_on_error after a failure, or ln_map_stop_trigger) is a flag
 * each rail reads before every item: items already started finish; a rail
 * marks the rest of its claim LN_MAP_NOT_RUN ("skipped") and exits. After
 * every rail is done, ln_map marks the never-claimed tail [min(next, n), n)
 * too. Rails that never start (the pool was destroyed meanwhile and
 * canceled them) simply leave more of that tail.
 *
 * The caller waits for each rail's task handle (ln_task_wait); that wait is
 * also what publishes the rails' plain writes (codes[]) and relaxed counters
 * to the caller. max_in_flight counts rails, not calls: a rail is in flight
 * from its first claimed item to its exit (per-call counting would cost two
 * contended atomics per item). It never exceeds R, and the number of calls
 * in flight never exceeds it.
 */
#include "thread_local.h" /* ln__current_pool / ln__current_lane: the EBUSY guard */

#include <stdatomic.h>
#include <stdbool.h>

enum { CLAIM_MAX = 64 };    /* indices per claim, at most */
#define CLAIM_FAST_NS 2000u /* a claim faster than this may grow */

struct ln_map_stop {
    atomic_int triggered;
};

typedef struct map_run {
    /* Read-only while rails run. */
    ln_map_fn fn;
    void *ctx;
    size_t n;
    int *codes;
    void (*on_start)(size_t index, void *ctx);
    void (*on_finish)(size_t index, int code, void *ctx);
    atomic_int *ext_stop; /* &stop->triggered, or NULL */
    bool stop_on_error;
    size_t rails;

    /* The claim counter: written by every rail for every item. */
    char pad0_[LN_CACHE_LINE];
    atomic_size_t next;
    char pad1_[LN_CACHE_LINE];

    /* Rarely written. */
    atomic_int halted;                  /* stop_on_error saw a failure */
    atomic_size_t first_failed;         /* lowest failing index, SIZE_MAX if none */
    atomic_size_t ran, failed, skipped; /* added once per rail */
    atomic_uint active, max_active;
} map_run;

_Static_assert(LN_LINES_APART(map_run, rails, next), "the claim counter shares a read-only line");
_Static_assert(LN_LINES_APART(map_run, next, halted), "the claim counter shares a line");

void ln_map_opts_init(ln_map_opts *opts) {
    if (opts == NULL) return;
    opts->lane = LN_LANE_CPU;
    opts->concurrency = 0;
    opts->stop_on_error = 0;
    opts->on_start = NULL;
    opts->on_finish = NULL;
    opts->stop = NULL;
}

/* ---- stop handles ------------------------------------------------------ */

int ln_map_stop_create(ln_map_stop **out) {
    if (out == NULL) return LN_EINVAL;
    ln_map_stop *s = ln__malloc(sizeof(*s));
    if (s == NULL) return LN_ENOMEM;
    atomic_init(&s->triggered, 0);
    *out = s;
    return 0;
}

void ln_map_stop_trigger(ln_map_stop *stop) {
    /* relaxed: a request, not a publication; rails poll it before every
     * item, and nothing else is read because of it. */
    if (stop != NULL) atomic_store_explicit(&stop->triggered, 1, memory_order_relaxed);
}

void ln_map_stop_destroy(ln_map_stop *stop) {
    ln__free(stop);
}

/* ---- rails -------------------------------------------------------------- */

static bool stopped(const map_run *r) {
    /* relaxed (both): see ln_map_stop_trigger; promptness is all we need. */
    if (atomic_load_explicit(&r->halted, memory_order_relaxed)) return true;
    return r->ext_stop != NULL && atomic_load_explicit(r->ext_stop, memory_order_relaxed);
}

/* Lower first_failed to index (a CAS minimum; failures are the slow path).
 * relaxed: ln_task_wait publishes the final value to the caller. */
static void record_failure(map_run *r, size_t index) {
    size_t cur = atomic_load_explicit(&r->first_failed, memory_order_relaxed);
    while (index < cur &&
           !atomic_compare_exchange_weak_explicit(&r->first_failed, &cur, index,
                                                  memory_order_relaxed, memory_order_relaxed)) {
    }
    if (r->stop_on_error) atomic_store_explicit(&r->halted, 1, memory_order_relaxed);
}

static void note_active(map_run *r) {
    /* relaxed: a statistic, published by ln_task_wait like the rest. */
    unsigned now = atomic_fetch_add_explicit(&r->active, 1, memory_order_relaxed) + 1;
    unsigned max = atomic_load_explicit(&r->max_active, memory_order_relaxed);
    while (now > max &&
           !atomic_compare_exchange_weak_explicit(&r->max_active, &max, now, memory_order_relaxed,
                                                  memory_order_relaxed)) {
    }
}

/* The size of a rail's next claim (see DESIGN). */
static size_t next_claim(const map_run *r, size_t claim, uint64_t took_ns, size_t claimed_to) {
    if (took_ns >= CLAIM_FAST_NS) return 1;
    size_t left = claimed_to < r->n ? r->n - claimed_to : 0;
    size_t cap = left / (4 * r->rails);
    claim = claim < CLAIM_MAX ? claim * 2 : CLAIM_MAX;
    if (claim > cap) claim = cap;
    return claim > 0 ? claim : 1;
}

static void *rail(void *arg) {
    map_run *r = arg;
    size_t ran = 0, failed = 0, skipped = 0, claim = 1;
    bool in_flight = false;
    uint64_t t = 0;
    while (!stopped(r)) {
        /* relaxed: the claim only has to be unique, which the counter's
         * single modification order guarantees; the inputs were published by
         * the submit of this rail, the outputs are by ln_task_wait. */
        size_t i = atomic_fetch_add_explicit(&r->next, claim, memory_order_relaxed);
        if (i >= r->n) break;
        size_t end = r->n - i > claim ? i + claim : r->n;
        if (!in_flight) {
            in_flight = true;
            note_active(r);
            t = ln__now_ns();
        }
        for (size_t first = i; i < end; i++) {
            if (i != first && stopped(r)) break; /* first: checked above */
            if (r->on_start != NULL) r->on_start(i, r->ctx);
            int code = r->fn(i, r->ctx);
            if (r->codes != NULL) r->codes[i] = code;
            ran++;
            if (code != 0) {
                failed++;
                record_failure(r, i);
            }
            if (r->on_finish != NULL) r->on_finish(i, code, r->ctx);
        }
        if (i < end) { /* stopped inside the claim */
            skipped += end - i;
            if (r->codes != NULL)
                for (; i < end; i++) r->codes[i] = LN_MAP_NOT_RUN;
            break;
        }
        uint64_t now = ln__now_ns();
        claim = next_claim(r, claim, now - t, end);
        t = now;
    }
    if (in_flight) atomic_fetch_sub_explicit(&r->active, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&r->ran, ran, memory_order_relaxed);
    atomic_fetch_add_explicit(&r->failed, failed, memory_order_relaxed);
    atomic_fetch_add_explicit(&r->skipped, skipped, memory_order_relaxed);
    return NULL;
}

/* ---- ln_map ------------------------------------------------------------- */

static void result_empty(ln_map_result *res) {
    res->ran = res->failed = res->not_run = 0;
    res->first_failed = (size_t)-1;
    res->max_in_flight = 0;
}

/* The lane's max_threads: what concurrency 0 means, and the most rails
 * that can ever run at once (more would only queue and find nothing left). */
static unsigned lane_threads(ln_pool *pool, int lane) {
    ln_lane_stats st;
    if (ln_pool_stats(pool, lane, &st) != 0) return 1;
    return st.max_threads > 0 ? st.max_threads : 1;
}

int ln_map(ln_pool *pool, size_t n, ln_map_fn fn, void *ctx, const ln_map_opts *opts,
           ln_map_result *result) {
    ln_map_opts defaults;
    if (opts == NULL) {
        ln_map_opts_init(&defaults);
        opts = &defaults;
    }
    if (pool == NULL || fn == NULL) return LN_EINVAL;
    if (opts->lane < 0 || opts->lane >= ln_pool_lanes(pool)) return LN_EINVAL;
    if (result != NULL) result_empty(result);
    if (n == 0) return 0;
    /* The claim counter runs past n by up to CLAIM_MAX per rail; keep it
     * from wrapping around. */
    if (n > SIZE_MAX / 2) return LN_ERANGE;
    /* The rails would queue behind this very call on its own lane. */
    if (ln__current_pool() == pool && ln__current_lane() == opts->lane) return LN_EBUSY;

    unsigned threads = lane_threads(pool, opts->lane);
    unsigned conc = opts->concurrency && opts->concurrency < threads ? opts->concurrency : threads;
    size_t nrails = conc < n ? conc : n;
    ln_task **tasks = ln__malloc(nrails * sizeof(*tasks));
    if (tasks == NULL) return LN_ENOMEM;

    map_run run = {
        .fn = fn,
        .ctx = ctx,
        .n = n,
        .codes = result != NULL ? result->codes : NULL,
        .on_start = opts->on_start,
        .on_finish = opts->on_finish,
        .ext_stop = opts->stop != NULL ? &opts->stop->triggered : NULL,
        .stop_on_error = opts->stop_on_error != 0,
        .rails = nrails,
    };
    atomic_init(&run.next, 0);
    atomic_init(&run.halted, 0);
    atomic_init(&run.first_failed, (size_t)-1);
    atomic_init(&run.ran, 0);
    atomic_init(&run.failed, 0);
    atomic_init(&run.skipped, 0);
    atomic_init(&run.active, 0);
    atomic_init(&run.max_active, 0);

    /* A rail that cannot be submitted (bounded lane full, no memory) only
     * lowers the concurrency: the rails already running do every item. With
     * no rail at all, nothing ran and the error is the answer. */
    size_t started = 0;
    int rc = 0;
    while (started < nrails && (rc = ln_submit(pool, opts->lane, rail, &run, &tasks[started])) == 0)
        started++;
    if (started == 0) {
        ln__free(tasks);
        return rc;
    }
    for (size_t k = 0; k < started; k++) {
        ln_task_wait(tasks[k], NULL); /* 0, or LN_ECANCELED: it never ran */
        ln_task_release(tasks[k]);
    }
    ln__free(tasks);

    size_t claimed = atomic_load_explicit(&run.next, memory_order_relaxed);
    if (claimed > n) claimed = n;
    size_t ran = atomic_load_explicit(&run.ran, memory_order_relaxed);
    size_t failed = atomic_load_explicit(&run.failed, memory_order_relaxed);
    size_t not_run = atomic_load_explicit(&run.skipped, memory_order_relaxed) + (n - claimed);
    if (run.codes != NULL)
        for (size_t i = claimed; i < n; i++) run.codes[i] = LN_MAP_NOT_RUN;
    if (result != NULL) {
        result->ran = ran;
        result->failed = failed;
        result->not_run = not_run;
        result->first_failed = atomic_load_explicit(&run.first_failed, memory_order_relaxed);
        result->max_in_flight = atomic_load_explicit(&run.max_active, memory_order_relaxed);
    }
    if (failed > 0) return LN_EFAILED;
    return not_run > 0 ? LN_ECANCELED : 0;
}
