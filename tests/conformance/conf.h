/* conf.h - the conformance suite of the jobs contract (include/lanes/jobs.h):
 * one set of cases, run against every store URL, the way hiredis runs one
 * test body per connection type.
 *
 *   test_conformance STORE [CASE]
 *
 * STORE is "sqlite" (a fresh file in a temporary directory), "redis"
 * ($LANES_TEST_REDIS_URL with a key prefix of this run; exit 77 = skipped
 * when it is unset) or any store URL. CASE runs only the case of that name.
 *
 * Adding a case: write `void case_xxx(conf_ctx *c)` in the file of its
 * concept (a new conf_*.c is picked up by the build) and add the line
 * `CONF_CASE(xxx)` to that file's group in conf_list.h: the one
 * registration, which declares it, puts it in the runner's table and
 * counts it for CTest.
 * Each case runs in a forked child with a timeout and gets a handle on the
 * store (c->jobs, closed after it) and a queue no other case or run uses
 * (c->queue; conf_queue() makes more). The store may be shared with other
 * cases and earlier runs, so a case never assumes which ids the store
 * hands out: it uses the ids ln_jobs_add returns, or custom ids.
 *
 * Only the public API (lanes.h, lanes/jobs.h) and tests/testutil.h: what
 * a case checks is the contract, the same on every store.
 */
#ifndef LN_CONF_H
#define LN_CONF_H

#include "testutil.h"

#include <lanes.h>
#include <lanes/jobs.h>
#include <lanes/jobs_flows.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef struct conf_ctx {
    const char *store; /* "sqlite" or "redis": the kind of c->url */
    const char *url;   /* the store's URL, to open more handles */
    ln_jobs *jobs;     /* a handle for this case (closed after it) */
    const char *queue; /* a queue of this case alone */
    /* private to conf_queue() */
    char queues_[8][LN_JOB_QUEUE_MAX];
    int nqueues_;
} conf_ctx;

typedef struct conf_case {
    const char *name;
    void (*fn)(conf_ctx *c);
} conf_case;

#define CONF_NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* Every case of conf_list.h, declared: void case_<name>(conf_ctx *c). */
#define CONF_CASE(x) void case_##x(conf_ctx *c);
#include "conf_list.h"
#undef CONF_CASE

/* Strings equal (NULL equals only NULL); prints both on failure. */
#define CONF_CHECK_STR(a, b) conf_check_str(__FILE__, __LINE__, #a, (a), (b))
void conf_check_str(const char *file, int line, const char *expr, const char *a, const char *b);
/* s contains sub (s NULL fails). */
#define CONF_CHECK_HAS(s, sub) conf_check_has(__FILE__, __LINE__, #s, (s), (sub))
void conf_check_has(const char *file, int line, const char *expr, const char *s, const char *sub);

/* rc of call is want and, for an error, the handle says why. */
#define SAYS(jobs, want, call)                                                                     \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        if (rc_ != (want)) fprintf(stderr, "%s -> %d (%s)\n", #call, rc_, ln_jobs_errmsg(jobs));   \
        CHECK_EQ(rc_, (want));                                                                     \
        if ((want) < 0) CHECK(ln_jobs_errmsg(jobs)[0] != '\0');                                    \
    } while (0)

/* Another queue of this case: "<c->queue>-<suffix>" (up to 8 per case). */
const char *conf_queue(conf_ctx *c, const char *suffix);
/* c->url with one more URL parameter ("name=value") into buf. */
const char *conf_url_with(const conf_ctx *c, const char *param, char *buf, size_t size);
/* Another handle on the store (opts NULL = defaults); CHECKs success. */
ln_jobs *conf_open(const conf_ctx *c, const ln_jobs_opts *opts);
/* Another handle that writes every event (SQLite's default writes the
 * outcomes only: it is opened with ?events=all). */
ln_jobs *conf_open_all_events(conf_ctx *c);
/* The next event named name from ev (others skipped), CHECKed to come
 * within 3 s. */
void conf_next_named(ln_jobs_events *ev, const char *name, ln_job_event *e);

/* The events of queue from its oldest kept one: how many there are; the
 * newest's id into last (48 bytes) when last is not NULL. */
size_t conf_count_events(conf_ctx *c, const char *queue, char *last);
/* Upsert job scheduler id of c->queue (every every_ms, or the cron
 * pattern), its template a job "tick"; CHECKs success. The iteration's id
 * goes to job_id (LN_JOB_ID_MAX bytes). */
void conf_schedule(conf_ctx *c, const char *id, int64_t every_ms, const char *pattern,
                   char *job_id);

/* Add a job (CHECKs success, printing the store's message otherwise);
 * its id goes to id (LN_JOB_ID_MAX bytes) if not NULL. */
void conf_add(conf_ctx *c, const char *queue, const char *name, const char *data,
              const ln_job_opts *o, char *id);
/* A job with custom id 'id' and the given priority, lifo and delay. */
void conf_add_id(conf_ctx *c, const char *queue, const char *id, int priority, int lifo,
                 int64_t delay_ms);

/* The state of job id (LN_JOB_*), or the error code. */
int conf_state(conf_ctx *c, const char *queue, const char *id);
/* The ids (or names) of a page of ln_jobs_list, each followed by a space. */
void conf_list_ids(conf_ctx *c, const char *queue, int state, size_t offset, size_t limit,
                   char *out, size_t size);
void conf_list_names(conf_ctx *c, const char *queue, int state, char *out, size_t size);
/* The number of jobs of queue in any state. */
uint64_t conf_total(conf_ctx *c, const char *queue);
/* ln_jobs_counts agrees with what ln_jobs_list returns for every state. */
void conf_check_counts(conf_ctx *c, const char *queue);

/* Worker options for tests: exit_when_empty, short polls. */
void conf_worker_opts(ln_worker_opts *o);
/* Create a worker, run it to its end (CHECK 0), destroy it; its stats. */
ln_worker_stats conf_run(conf_ctx *c, const char *queue, ln_job_handler fn, void *ctx,
                         const ln_worker_opts *o);

/* A worker running on a thread of its own. */
typedef struct conf_bg conf_bg;
conf_bg *conf_bg_start(ln_jobs *jobs, const char *queue, ln_job_handler fn, void *ctx,
                       const ln_worker_opts *o);
ln_worker *conf_bg_worker(conf_bg *b);
/* 1 once ln_worker_run returned. */
int conf_bg_done(conf_bg *b);
/* Wait for the run to end (after ln_worker_stop, or by itself); returns
 * what ln_worker_run returned; *st (may be NULL) gets the stats. */
int conf_bg_join(conf_bg *b, ln_worker_stats *st);

/* A handler by job name: "bad" fails with reason "nope", "code" returns
 * LN_EIO without a reason, "plain" returns 0 without a result, any other
 * completes with result {"ok":<data>}. ctx, if not NULL, is an atomic_int
 * counting the runs. */
int conf_handler_by_name(ln_job *job, void *ctx);

/* A handler that holds its job until released: it counts itself in
 * 'entered', waits until 'release' is set or the job is canceled (then
 * counting 'canceled'), and completes with result {"held":1}. */
typedef struct conf_hold {
    atomic_int entered, release, canceled;
} conf_hold;
int conf_hold_handler(ln_job *job, void *ctx);
/* Wait until n handlers entered; CHECKs they do within a deadline. */
void conf_hold_wait(conf_hold *h, int n);

/* Milliseconds of a monotonic clock. */
int64_t conf_now_ms(void);
/* A deadline for polling, scaled up under sanitizers. */
int64_t conf_deadline(unsigned ms);
/* Poll (every 5 ms) until job id is in state; CHECKs it gets there. */
void conf_wait_state(conf_ctx *c, const char *queue, const char *id, int state,
                     unsigned timeout_ms);
/* Job id of c->queue as ln_jobs_get reads it (CHECKs success; clear it). */
ln_job_info conf_info(conf_ctx *c, const char *id);

/* The ids of the jobs conf_record_run ran, in run order, each followed by
 * a space; initialize with {.mu = PTHREAD_MUTEX_INITIALIZER}. */
typedef struct conf_run_order {
    pthread_mutex_t mu;
    char ids[256];
} conf_run_order;
/* A handler that completes its job after appending its id to the
 * conf_run_order ctx. */
int conf_record_run(ln_job *job, void *ctx);

/* A flow node of queue (NULL: its parent's) named name with custom id id;
 * o (kept by the caller) gets default options with that id. */
ln_flow_node conf_flow_node(const char *queue, const char *name, const char *id, ln_job_opts *o);

#endif
