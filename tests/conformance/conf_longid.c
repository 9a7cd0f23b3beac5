/* conf_longid.c - job ids longer than LN_JOB_ID_MAX (jobs.h "Names" and
 * LN_JOB_CUSTOM_ID_MAX): a job with a 300- or 5000-byte custom id is
 * added, run (the handler sees the whole id), read, listed, logged,
 * retried, waited for, promoted and removed, and its events carry the
 * whole id; an id past the bound is refused with a message. Flows,
 * their failure reasons and cancels keep such ids whole too. */
#include "conf.h"

#include <stdlib.h>

/* A custom id of len bytes: "L-" and a pattern (not an integer, no ':'). */
static char *long_id(size_t len, char tag) {
    char *s = malloc(len + 1);
    CHECK(s != NULL);
    for (size_t i = 0; i < len; i++) s[i] = i < 2 ? "L-"[i] : (char)('a' + (i * 7 + tag) % 26);
    s[len] = '\0';
    return s;
}

typedef struct seen_id {
    char *id; /* what ln_job_id returned, copied */
    int runs;
} seen_id;

/* Records the id; fails the first run ("bad" data), completes later. */
static int id_handler(ln_job *job, void *ctx) {
    seen_id *s = ctx;
    free(s->id);
    s->id = strdup(ln_job_id(job));
    CHECK_EQ(ln_job_log(job, "hello from a long id"), 0);
    CHECK_EQ(ln_job_progress(job, "50"), 0);
    if (s->runs++ == 0) return ln_job_fail(job, "first run fails");
    return ln_job_set_result(job, "{\"done\":true}");
}

/* The next event of queue named name for job id (others skipped). */
static void next_event(ln_jobs_events *ev, const char *name, const char *id) {
    for (;;) {
        ln_job_event e;
        int rc = ln_jobs_events_next(ev, 5000, &e);
        if (rc != 0) fprintf(stderr, "events_next: %s\n", ln_jobs_events_errmsg(ev));
        CHECK_EQ(rc, 0);
        int match = strcmp(e.name, name) == 0 && strcmp(e.job_id, id) == 0;
        ln_job_event_clear(&e);
        if (match) return;
    }
}

static void one_long_id(conf_ctx *c, size_t len) {
    char *id = long_id(len, (char)len);
    ln_jobs_events *ev;
    CHECK_EQ(ln_jobs_events_open(c->jobs, c->queue, "$", &ev), 0);
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.job_id = id;
    char *out = malloc(len + 1);
    CHECK(out != NULL);
    CHECK_EQ(ln_jobs_add(c->jobs, c->queue, "n", "{}", &o, out, len + 1), 0);
    CONF_CHECK_STR(out, id);
    /* Again: the same job, reported as existing (its id in full). */
    memset(out, 0, len + 1);
    CHECK_EQ(ln_jobs_add(c->jobs, c->queue, "n", "{}", &o, out, len + 1), 0);
    CONF_CHECK_STR(out, id);
    seen_id s = {0};
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    conf_run(c, c->queue, id_handler, &s, &wo);
    CONF_CHECK_STR(s.id, id);
    CHECK_EQ(conf_state(c, c->queue, id), LN_JOB_FAILED);
    next_event(ev, "failed", id);
    CHECK_EQ(ln_jobs_retry(c->jobs, c->queue, id), 0);
    conf_run(c, c->queue, id_handler, &s, &wo);
    CHECK_EQ(s.runs, 2);
    CONF_CHECK_STR(s.id, id);
    next_event(ev, "completed", id);
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, id, &info), 0);
    CONF_CHECK_STR(info.id, id);
    CHECK_EQ(info.state, LN_JOB_COMPLETED);
    CONF_CHECK_STR(info.result, "{\"done\":true}");
    ln_job_info_clear(&info);
    CHECK_EQ(ln_jobs_wait(c->jobs, c->queue, id, 1000, &info), 0);
    CONF_CHECK_STR(info.id, id);
    ln_job_info_clear(&info);
    ln_job_info *infos;
    size_t n;
    CHECK_EQ(ln_jobs_list(c->jobs, c->queue, LN_JOB_COMPLETED, 0, 10, &infos, &n), 0);
    CHECK_EQ(n, 1);
    CONF_CHECK_STR(infos[0].id, id);
    ln_job_info_free_array(infos, n);
    char **lines;
    CHECK_EQ(ln_jobs_logs(c->jobs, c->queue, id, &lines, &n), 0);
    CHECK_EQ(n, 2);
    CONF_CHECK_STR(lines[0], "hello from a long id");
    ln_jobs_free_lines(lines, n);
    CHECK_EQ(ln_jobs_remove(c->jobs, c->queue, id), 0);
    next_event(ev, "removed", id);
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, id, &info), LN_ENOENT);
    ln_jobs_events_close(ev);
    free(s.id);
    free(out);
    free(id);
}

void case_longid_runs_and_is_administered(conf_ctx *c) {
    one_long_id(c, 300);
    one_long_id(c, 5000);
}

/* A delayed job with a long id is promoted; a long dedup id holds. */
void case_longid_promote_and_dedup(conf_ctx *c) {
    char *id = long_id(300, 'p'), *deid = long_id(5000, 'd');
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.job_id = id;
    o.delay_ms = 60000;
    o.dedup_id = deid;
    static char out[LN_JOB_CUSTOM_ID_MAX];
    CHECK_EQ(ln_jobs_add(c->jobs, c->queue, "n", "{}", &o, out, sizeof out), 0);
    CONF_CHECK_STR(out, id);
    CHECK_EQ(conf_state(c, c->queue, id), LN_JOB_DELAYED);
    /* Another add with the held dedup id: the holder's whole id. */
    ln_job_opts d;
    ln_job_opts_init(&d);
    d.dedup_id = deid;
    memset(out, 0, sizeof out);
    CHECK_EQ(ln_jobs_add(c->jobs, c->queue, "n", "{}", &d, out, sizeof out), 0);
    CONF_CHECK_STR(out, id);
    /* A buffer too small for the holder's id: LN_ERANGE, nothing added. */
    char small[LN_JOB_ID_MAX];
    CHECK_EQ(ln_jobs_add(c->jobs, c->queue, "n", "{}", &d, small, sizeof small), LN_ERANGE);
    CONF_CHECK_HAS(ln_jobs_errmsg(c->jobs), "id_size");
    CHECK_EQ(conf_total(c, c->queue), 1);
    CHECK_EQ(ln_jobs_promote(c->jobs, c->queue, id), 0);
    CHECK_EQ(conf_state(c, c->queue, id), LN_JOB_WAITING);
    free(id);
    free(deid);
}

/* Past LN_JOB_CUSTOM_ID_MAX - 1 bytes a custom or dedup id is refused;
 * a long custom id with a short id buffer is LN_ERANGE; nothing added. */
void case_longid_bounds(conf_ctx *c) {
    char *over = long_id(LN_JOB_CUSTOM_ID_MAX, 'o');
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.job_id = over;
    CHECK_EQ(ln_jobs_add(c->jobs, c->queue, "n", "{}", &o, NULL, 0), LN_EINVAL);
    CONF_CHECK_HAS(ln_jobs_errmsg(c->jobs), "job id is longer than 65535 bytes");
    ln_job_opts_init(&o);
    o.dedup_id = over;
    CHECK_EQ(ln_jobs_add(c->jobs, c->queue, "n", "{}", &o, NULL, 0), LN_EINVAL);
    CONF_CHECK_HAS(ln_jobs_errmsg(c->jobs), "dedup_id must be 1..65535 bytes");
    over[LN_JOB_CUSTOM_ID_MAX - 1] = '\0'; /* the longest allowed */
    ln_job_opts_init(&o);
    o.job_id = over;
    char small[LN_JOB_ID_MAX];
    CHECK_EQ(ln_jobs_add(c->jobs, c->queue, "n", "{}", &o, small, sizeof small), LN_ERANGE);
    CHECK_EQ(conf_total(c, c->queue), 0);
    CHECK_EQ(ln_jobs_add(c->jobs, c->queue, "n", "{}", &o, NULL, 0), 0);
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, over, &info), 0);
    CONF_CHECK_STR(info.id, over);
    ln_job_info_clear(&info);
    free(over);
}

/* ------------------------------------------------------------- flows */

#define FLOW_ID_LEN 300

/* What the handlers of a long-id flow saw. */
typedef struct flow_seen {
    const char *queue;
    char *kid[2];    /* the children's ids */
    int parent_runs; /* the parent read both children whole */
    int kids_whole;  /* children that read their parent's id whole */
    const char *parent;
} flow_seen;

/* key is "<queue>:<id>" after an optional "<prefix>:" (jobs.h). */
static int key_is(const char *key, const char *queue, const char *id) {
    size_t kl = strlen(key), ql = strlen(queue), il = strlen(id);
    if (kl < ql + il + 1) return 0;
    const char *at = key + kl - il - ql - 1;
    return (at == key || at[-1] == ':') && strncmp(at, queue, ql) == 0 && at[ql] == ':' &&
           strcmp(at + ql + 1, id) == 0;
}

static int long_flow_handler(ln_job *job, void *ctx) {
    flow_seen *s = ctx;
    ln_job_children rel;
    CHECK_EQ(ln_job_children_read(job, &rel), 0);
    if (strcmp(ln_job_name(job), "parent") == 0) {
        CHECK_EQ(rel.n, 2);
        for (size_t i = 0; i < rel.n; i++) {
            const ln_job_child *ch = &rel.children[i];
            CHECK_EQ(ch->status, LN_CHILD_PROCESSED);
            CONF_CHECK_STR(ch->id, s->kid[i]); /* sorted by key: kid[0] < kid[1] */
            CONF_CHECK_STR(ch->queue, s->queue);
            CHECK(key_is(ch->key, s->queue, s->kid[i]));
            CONF_CHECK_STR(ch->value, i == 0 ? "\"v0\"" : "\"v1\"");
        }
        s->parent_runs++;
        ln_job_children_clear(&rel);
        return ln_job_set_result(job, "\"parent done\"");
    }
    CONF_CHECK_STR(rel.parent_id, s->parent);
    CONF_CHECK_STR(rel.parent_queue, s->queue);
    CHECK(key_is(rel.parent_key, s->queue, s->parent));
    s->kids_whole++;
    int second = strcmp(ln_job_id(job), s->kid[1]) == 0;
    ln_job_children_clear(&rel);
    return ln_job_set_result(job, second ? "\"v1\"" : "\"v0\"");
}

/* Add root's flow of n nodes: every id comes back whole. */
static void add_long_flow(conf_ctx *c, const ln_flow_node *root, size_t n, const char **want) {
    char(*ids)[FLOW_ID_LEN + 1] = calloc(n, sizeof *ids);
    CHECK(ids != NULL);
    int rc = ln_jobs_add_flow(c->jobs, root, ids[0], n, sizeof ids[0]);
    if (rc != 0) fprintf(stderr, "add_flow: %s\n", ln_jobs_errmsg(c->jobs));
    CHECK_EQ(rc, 0);
    for (size_t i = 0; i < n; i++) CONF_CHECK_STR(ids[i], want[i]);
    free(ids);
}

/* A parent and two children with 300-byte ids: the children read the
 * parent's id whole, the parent reads both values by their whole keys and
 * completes; ln_jobs_children of a child gives the whole parent. */
void case_longid_flow(conf_ctx *c) {
    char *pid = long_id(FLOW_ID_LEN, 'P');
    flow_seen s = {c->queue, {long_id(FLOW_ID_LEN, 'A'), long_id(FLOW_ID_LEN, 'B')}, 0, 0, pid};
    /* The two differ first past byte 127 (they sort by key: kid[0] first). */
    memcpy(s.kid[1], s.kid[0], FLOW_ID_LEN);
    s.kid[0][250] = 'a';
    s.kid[1][250] = 'b';
    ln_job_opts po, ko[2];
    ln_flow_node kids[2] = {conf_flow_node(NULL, "k", s.kid[0], &ko[0]),
                            conf_flow_node(NULL, "k", s.kid[1], &ko[1])};
    ln_flow_node root = conf_flow_node(c->queue, "parent", pid, &po);
    root.children = kids;
    root.nchildren = 2;
    const char *want[] = {pid, s.kid[0], s.kid[1]};
    add_long_flow(c, &root, 3, want);
    CHECK_EQ(conf_state(c, c->queue, pid), LN_JOB_WAITING_CHILDREN);
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    conf_run(c, c->queue, long_flow_handler, &s, &wo);
    CHECK_EQ(s.kids_whole, 2);
    CHECK_EQ(s.parent_runs, 1);
    CHECK_EQ(conf_state(c, c->queue, pid), LN_JOB_COMPLETED);
    ln_job_children rel;
    CHECK_EQ(ln_jobs_children(c->jobs, c->queue, s.kid[1], &rel), 0);
    CONF_CHECK_STR(rel.parent_id, pid);
    CONF_CHECK_STR(rel.parent_queue, c->queue);
    CHECK(key_is(rel.parent_key, c->queue, pid));
    ln_job_children_clear(&rel);
    CHECK_EQ(ln_jobs_children(c->jobs, c->queue, pid, &rel), 0);
    CHECK_EQ(rel.n, 2);
    CONF_CHECK_STR(rel.children[0].id, s.kid[0]);
    CONF_CHECK_STR(rel.children[1].id, s.kid[1]);
    ln_job_children_clear(&rel);
    conf_check_counts(c, c->queue);
    free(s.kid[0]);
    free(s.kid[1]);
    free(pid);
}

/* job id of queue failed with reason "child <key of child> failed". */
static void check_child_failed(conf_ctx *c, const char *id, const char *child) {
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, id, &info), 0);
    CHECK_EQ(info.state, LN_JOB_FAILED);
    CHECK(info.failed_reason != NULL);
    const char *r = info.failed_reason;
    size_t n = strlen(r);
    if (strncmp(r, "child ", 6) != 0 || n < 6 + 7 || strcmp(r + n - 7, " failed") != 0) {
        fprintf(stderr, "reason: %s\n", r);
        CHECK(0);
    }
    char *key = malloc(n - 6 - 7 + 1);
    CHECK(key != NULL);
    memcpy(key, r + 6, n - 6 - 7);
    key[n - 6 - 7] = '\0';
    if (!key_is(key, c->queue, child)) fprintf(stderr, "reason: %s\n", r);
    CHECK(key_is(key, c->queue, child));
    free(key);
    ln_job_info_clear(&info);
}

/* fail_parent_on_failure over two levels of 300-byte ids: each parent's
 * reason names its failed child by its whole key. */
void case_longid_fail_parent(conf_ctx *c) {
    char *gid = long_id(FLOW_ID_LEN, 'G'), *pid = long_id(FLOW_ID_LEN, 'P'),
         *bid = long_id(FLOW_ID_LEN, 'X');
    ln_job_opts go, po, bo;
    ln_flow_node bad = conf_flow_node(NULL, "bad", bid, &bo);
    bad.fail_parent_on_failure = 1;
    ln_flow_node mid = conf_flow_node(NULL, "parent", pid, &po);
    mid.fail_parent_on_failure = 1;
    mid.children = &bad;
    mid.nchildren = 1;
    ln_flow_node root = conf_flow_node(c->queue, "parent", gid, &go);
    root.children = &mid;
    root.nchildren = 1;
    const char *want[] = {gid, pid, bid};
    add_long_flow(c, &root, 3, want);
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    conf_run(c, c->queue, conf_handler_by_name, NULL, &wo);
    CHECK_EQ(conf_state(c, c->queue, bid), LN_JOB_FAILED);
    check_child_failed(c, pid, bid);
    check_child_failed(c, gid, pid);
    conf_check_counts(c, c->queue);
    free(gid);
    free(pid);
    free(bid);
}

/* A parent with a 300-byte id that runs with a child pending
 * (continue_parent_on_failure) has its completion refused: the reason
 * holds its whole id. */
void case_longid_refused_completion(conf_ctx *c) {
    const char *other = conf_queue(c, "other");
    char *pid = long_id(FLOW_ID_LEN, 'R'), *bid = long_id(FLOW_ID_LEN, 'Y'),
         *kid = long_id(FLOW_ID_LEN, 'Z');
    ln_job_opts po, ko[2];
    ln_flow_node kids[2] = {conf_flow_node(NULL, "bad", bid, &ko[0]),
                            conf_flow_node(other, "k", kid, &ko[1])};
    kids[0].continue_parent_on_failure = 1;
    ln_flow_node root = conf_flow_node(c->queue, "plain", pid, &po);
    root.children = kids;
    root.nchildren = 2;
    const char *want[] = {pid, bid, kid};
    add_long_flow(c, &root, 3, want);
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    conf_run(c, c->queue, conf_handler_by_name, NULL, &wo);
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, pid, &info), 0);
    CHECK_EQ(info.state, LN_JOB_FAILED);
    char reason[FLOW_ID_LEN + 64];
    snprintf(reason, sizeof reason, "Job %s has pending dependencies. moveToFinished", pid);
    CONF_CHECK_STR(info.failed_reason, reason);
    ln_job_info_clear(&info);
    CHECK_EQ(conf_state(c, other, kid), LN_JOB_WAITING);
    conf_check_counts(c, c->queue);
    free(pid);
    free(bid);
    free(kid);
}

/* ------------------------------------------------------------ cancel */

static int cancel_loop(ln_job *job, void *ctx) {
    atomic_int *state = ctx; /* 1 entered, 2 saw the cancel */
    atomic_store(state, 1);
    int64_t end = conf_deadline(10000);
    while (!ln_job_canceled(job) && conf_now_ms() < end) ln_test_sleep_ms(2);
    if (ln_job_canceled(job)) atomic_store(state, 2);
    return ln_job_set_result(job, "\"late\"");
}

/* ln_jobs_cancel of a running job with a 300-byte id, from another
 * handle: the job fails "canceled" and its handler sees the cancel. */
void case_longid_cancel_running(conf_ctx *c) {
    char *id = long_id(FLOW_ID_LEN, 'C');
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.job_id = id;
    o.attempts = 3;
    CHECK_EQ(ln_jobs_add(c->jobs, c->queue, "loop", "{}", &o, NULL, 0), 0);
    atomic_int state = 0;
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    wo.lease_ms = 10000;
    conf_bg *b = conf_bg_start(c->jobs, c->queue, cancel_loop, &state, &wo);
    int64_t end = conf_deadline(5000);
    while (atomic_load(&state) == 0 && conf_now_ms() < end) ln_test_sleep_ms(1);
    CHECK_EQ(atomic_load(&state), 1);
    ln_jobs *other = conf_open(c, NULL);
    int rc = ln_jobs_cancel(other, c->queue, id);
    if (rc != 0) fprintf(stderr, "cancel: %s\n", ln_jobs_errmsg(other));
    CHECK_EQ(rc, 0);
    CHECK_EQ(conf_bg_join(b, NULL), 0);
    CHECK_EQ(atomic_load(&state), 2);
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(other, c->queue, id, &info), 0);
    CONF_CHECK_STR(info.id, id);
    CHECK_EQ(info.state, LN_JOB_FAILED);
    CONF_CHECK_STR(info.failed_reason, LN_JOB_CANCELED_REASON);
    CHECK_EQ(info.attempts_made, 1);
    ln_job_info_clear(&info);
    CHECK_EQ(ln_jobs_cancel(other, c->queue, id), LN_EINVAL);
    ln_jobs_close(other);
    conf_check_counts(c, c->queue);
    free(id);
}
