/* test_pool_destroy_races.c - ln_pool_destroy racing the rest of the pool:
 * blocked LN_SUBMIT_WAIT submitters, pending completions, tasks queued on
 * every lane, cross-lane submits from workers and cancels from another
 * thread. Each case asserts that every accepted task gets exactly one
 * completion by the time destroy returns, and that nothing hangs. */
#include "pool_adversarial.h"

/* ---- 3. destroy with blocked LN_SUBMIT_WAIT submitters -------------------- */

typedef struct sub_ctx {
    ln_pool *pool;
    rec r;
    int rc;
    ln_task *t;
    int use_cb;
} sub_ctx;

static void *blocked_submitter(void *arg) {
    sub_ctx *s = arg;
    if (s->use_cb)
        s->rc = ln_submit_cb(s->pool, 0, rec_task, &s->r, rec_done, &s->t);
    else
        s->rc = ln_submit_ex(s->pool, 0, rec_task, &s->r, LN_SUBMIT_WAIT, &s->t);
    return NULL;
}

static void *open_later(void *arg) {
    ln_test_sleep_ms(50);
    gate_open(arg);
    return NULL;
}

TEST(destroy_with_blocked_submitters) {
    for (int round = 0; round < 5; round++) {
        ln_lane_opts l = {"b", 1, 1, 10, NULL, 2}; /* bounded: 2 waiting */
        ln_pool *p = make_pool(1, &l, LN_FULL_BLOCK, 0);
        gate g = GATE_INIT;
        CHECK_EQ(ln_submit(p, 0, gate_task, &g, NULL), 0);
        gate_wait_entered(&g, 1);
        enum { N = 8 };
        sub_ctx s[N];
        pthread_t th[N];
        memset(s, 0, sizeof s);
        for (int i = 0; i < N; i++) {
            s[i].pool = p;
            s[i].use_cb = i & 1;
            CHECK_EQ(pthread_create(&th[i], NULL, blocked_submitter, &s[i]), 0);
        }
        /* 2 go into the queue, N - 2 block: wait until they do. */
        for (;;) {
            pthread_mutex_lock(&p->lanes[0].mu);
            unsigned w = p->lanes[0].room_waiters;
            pthread_mutex_unlock(&p->lanes[0].mu);
            if (w == N - 2) break;
            ln_test_sleep_ms(1);
        }
        pthread_t opener;
        CHECK_EQ(pthread_create(&opener, NULL, open_later, &g), 0);
        ln_pool_destroy(p); /* runs pending completions itself */
        pthread_join(opener, NULL);
        int accepted = 0, shut = 0;
        for (int i = 0; i < N; i++) {
            pthread_join(th[i], NULL);
            if (s[i].rc == 0) {
                accepted++;
                int rc = ln_task_wait(s[i].t, NULL);
                CHECK(rc == 0 || rc == LN_ECANCELED);
                CHECK_EQ(atomic_load(&s[i].r.ran), rc == 0 ? 1 : 0);
                if (s[i].use_cb) {
                    CHECK_EQ(atomic_load(&s[i].r.completions), 1);
                    CHECK_EQ(atomic_load(&s[i].r.status), rc);
                }
                ln_task_release(s[i].t);
            } else {
                CHECK_EQ(s[i].rc, LN_ESHUTDOWN);
                CHECK_EQ(atomic_load(&s[i].r.ran), 0);
                CHECK_EQ(atomic_load(&s[i].r.completions), 0);
                shut++;
            }
        }
        CHECK_EQ(accepted, 2);
        CHECK_EQ(shut, N - 2);
    }
}

/* ---- 4. destroy while completions are pending ------------------------------ */

TEST(destroy_runs_pending_completions_once) {
    ln_lane_opts l[2] = {{"f", 2, 2, 10, NULL, 0}, {"g", 0, 3, 1, NULL, 0}};
    int n = (int)ln_test_scale(5000, 5);
    rec *r = calloc((size_t)n, sizeof *r);
    ln_pool *p = make_pool(2, l, LN_FULL_FAIL, 10);
    for (int i = 0; i < n; i++)
        CHECK_EQ(ln_submit_cb(p, i & 1, rec_task, &r[i], rec_done, NULL), 0);
    ln_pool_destroy(p);
    for (int i = 0; i < n; i++) {
        CHECK_EQ(atomic_load(&r[i].completions), 1);
        CHECK(atomic_load(&r[i].ran) <= 1);
        CHECK_EQ(atomic_load(&r[i].status), atomic_load(&r[i].ran) ? 0 : LN_ECANCELED);
    }
    free(r);
}

/* ---- 5. destroy cancels what is queued on every lane ------------------------
 * lanes.h: "tasks already running finish, queued tasks are canceled". With
 * a long task running on lane 0, the tasks queued on lane 1 when destroy is
 * called must not start (at most one, for the relaxed stop hint). */

static _Atomic int destroy_called;
static _Atomic int started_after_destroy;

static void *lane1_task(void *arg) {
    if (atomic_load(&destroy_called)) atomic_fetch_add(&started_after_destroy, 1);
    ln_test_sleep_ms((unsigned)(uintptr_t)arg);
    return NULL;
}

TEST(destroy_cancels_queued_on_all_lanes) {
    atomic_store(&destroy_called, 0);
    atomic_store(&started_after_destroy, 0);
    ln_lane_opts l[2] = {{"long", 1, 1, 10, NULL, 0}, {"short", 1, 1, 10, NULL, 0}};
    ln_pool *p = make_pool(2, l, LN_FULL_FAIL, 0);
    gate g = GATE_INIT;
    CHECK_EQ(ln_submit(p, 0, gate_task, &g, NULL), 0);
    gate_wait_entered(&g, 1);
    for (int i = 0; i < 40; i++)
        CHECK_EQ(ln_submit(p, 1, lane1_task, (void *)(uintptr_t)10, NULL), 0);
    ln_test_sleep_ms(5);
    pthread_t opener; /* the running lane-0 task ends 50 ms into destroy */
    CHECK_EQ(pthread_create(&opener, NULL, open_later, &g), 0);
    atomic_store(&destroy_called, 1);
    ln_pool_destroy(p);
    pthread_join(opener, NULL);
    int late = atomic_load(&started_after_destroy);
    if (late > 1)
        fprintf(stderr, "%d lane-1 tasks queued before destroy started during it\n", late);
    CHECK(late <= 1);
}

/* ---- 12. cross-lane submits from workers while the pool is destroyed ------
 * Workers of lane 1 submit ln_submit_cb tasks to lane 0 (a fixed lane with a
 * lock-free ring) in a loop while ln_pool_destroy runs. Every accepted task
 * must get exactly one completion by the time destroy returns. */

typedef struct xl_ctx {
    ln_pool *pool;
    _Atomic long accepted;
    _Atomic long completions;
    _Atomic int go;
} xl_ctx;

static void xl_done(void *arg, void *result, int status) {
    (void)result;
    (void)status;
    atomic_fetch_add(&((xl_ctx *)arg)->completions, 1);
}

static void *xl_task(void *arg) {
    xl_ctx *c = arg;
    atomic_store(&c->go, 1);
    for (long i = 0; i < 200000; i++) {
        int rc = ln_submit_cb(c->pool, 0, noop_task, c, xl_done, NULL);
        if (rc == 0)
            atomic_fetch_add(&c->accepted, 1);
        else if (rc == LN_ESHUTDOWN)
            break;
        /* Keep the target's ring from filling (a backlog would route
         * submits through the locked path, which checks 'stopping'). */
        if ((i & 7) == 0) sched_yield();
    }
    return NULL;
}

TEST(cross_lane_submit_during_destroy) {
    int rounds = (int)ln_test_scale(30, 3);
    for (int r = 0; r < rounds; r++) {
        ln_lane_opts l[2] = {{"target", 2, 2, 10, NULL, 0}, {"src", 6, 6, 10, NULL, 0}};
        xl_ctx c;
        memset(&c, 0, sizeof c);
        c.pool = make_pool(2, l, LN_FULL_FAIL, 0);
        for (int i = 0; i < 6; i++) CHECK_EQ(ln_submit(c.pool, 1, xl_task, &c, NULL), 0);
        while (!atomic_load(&c.go)) sched_yield();
        ln_test_sleep_ms(1);
        ln_pool_destroy(c.pool);
        CHECK_EQ(atomic_load(&c.completions), atomic_load(&c.accepted));
    }
}

/* ---- 13. cancel by another thread while the pool is destroyed ------------- */

typedef struct cd_ctx {
    ln_task **t;
    int n;
} cd_ctx;

static void *cancel_all(void *arg) {
    cd_ctx *c = arg;
    for (int i = 0; i < c->n; i++) (void)ln_task_cancel(c->t[i]);
    return NULL;
}

TEST(cancel_during_destroy) {
    int rounds = (int)ln_test_scale(150, 3);
    for (int round = 0; round < rounds; round++) {
        ln_lane_opts l = {"c", 1, 1, 10, NULL, 0};
        ln_pool *p = make_pool(1, &l, LN_FULL_FAIL, 0);
        gate gt = GATE_INIT;
        CHECK_EQ(ln_submit(p, 0, gate_task, &gt, NULL), 0);
        gate_wait_entered(&gt, 1);
        enum { N = 2000 };
        static rec r[N];
        static ln_task *t[N];
        memset(r, 0, sizeof r);
        for (int i = 0; i < N; i++)
            CHECK_EQ(ln_submit_cb(p, 0, rec_task, &r[i], rec_done, &t[i]), 0);
        cd_ctx c = {t, N};
        pthread_t th;
        CHECK_EQ(pthread_create(&th, NULL, cancel_all, &c), 0);
        gate_open(&gt);
        ln_pool_destroy(p); /* every completion must have run when this returns */
        int missing = 0;
        for (int i = 0; i < N; i++) missing += atomic_load(&r[i].completions) != 1;
        pthread_join(th, NULL);
        for (int i = 0; i < N; i++) ln_task_release(t[i]);
        CHECK_EQ(missing, 0);
    }
}

int main(int argc, char **argv) {
    return ln_test_run(argc, argv,
                       (ln_test_case[]){
                           TESTCASE(destroy_with_blocked_submitters),
                           TESTCASE(destroy_runs_pending_completions_once),
                           TESTCASE(destroy_cancels_queued_on_all_lanes),
                           TESTCASE(cross_lane_submit_during_destroy),
                           TESTCASE(cancel_during_destroy),
                           {0, 0},
                       });
}
