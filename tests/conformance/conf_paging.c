/* conf_paging.c - paging by cursor (ln_jobs_list_after): every row of a
 * listing carries a cursor; the pages after it walk the state in
 * ln_jobs_list's order, ties included, and the next page after a row
 * neither repeats nor skips rows when jobs before it leave or jobs are
 * added; bad cursors are refused. */
#include "conf.h"

/* The ids of state in queue, walked by cursor in pages of limit, each
 * followed by a space; the number of pages into *pages. */
static void walk(conf_ctx *c, const char *queue, int state, size_t limit, char *out, size_t size,
                 int *pages) {
    char cursor[512] = "";
    out[0] = '\0';
    *pages = 0;
    for (;;) {
        ln_job_info *infos = NULL;
        size_t n = 0;
        int rc = ln_jobs_list_after(c->jobs, queue, state, cursor, limit, &infos, &n);
        if (rc != 0) fprintf(stderr, "list_after: %s\n", ln_jobs_errmsg(c->jobs));
        CHECK_EQ(rc, 0);
        CHECK(n <= limit);
        if (n == 0) break;
        ++*pages;
        CHECK(*pages < 100);
        for (size_t i = 0; i < n; i++) {
            size_t len = strlen(out);
            snprintf(out + len, size - len, "%s ", infos[i].id);
            CHECK_EQ(infos[i].state, state);
            CHECK(infos[i].cursor != NULL && infos[i].cursor[0] != '\0');
        }
        CHECK(strlen(infos[n - 1].cursor) < sizeof cursor);
        snprintf(cursor, sizeof cursor, "%s", infos[n - 1].cursor);
        ln_job_info_free_array(infos, n);
    }
}

/* The walk by cursor in pages of 1, 2 and 3 lists what one offset page
 * of everything lists. */
static void check_walk(conf_ctx *c, const char *queue, int state, size_t expect) {
    char all[4096], got[4096];
    conf_list_ids(c, queue, state, 0, 10000, all, sizeof all);
    size_t words = 0;
    for (const char *p = all; *p; p++) words += *p == ' ';
    CHECK_EQ(words, expect);
    for (size_t limit = 1; limit <= 3; limit++) {
        int pages = 0;
        walk(c, queue, state, limit, got, sizeof got, &pages);
        if (strcmp(all, got) != 0)
            fprintf(stderr, "state %s, pages of %zu:\n  all  %s\n  walk %s\n",
                    ln_job_state_name(state), limit, all, got);
        CONF_CHECK_STR(got, all);
        CHECK_EQ((size_t)pages, (expect + limit - 1) / limit);
    }
}

static void add_ready(conf_ctx *c, const char *queue, int n, const char *prefix) {
    for (int i = 0; i < n; i++) {
        char id[32];
        snprintf(id, sizeof id, "%s%d", prefix, i);
        /* priorities 0, 1 and 2; every third job lifo: ties and both ends */
        conf_add_id(c, queue, id, i % 3 == 1 ? 1 + i % 2 : 0, i % 3 == 2, 0);
    }
}

/* Every state a cursor can walk, with ties in its ordering key. */
void case_paging_cursor_walks_every_state(conf_ctx *c) {
    const char *q = c->queue;
    add_ready(c, q, 10, "r");
    for (int i = 0; i < 7; i++) {
        char id[32];
        snprintf(id, sizeof id, "d%d", i);
        conf_add_id(c, q, id, 0, 0, 600000 + (i % 3) * 1000); /* equal delays */
    }
    check_walk(c, q, LN_JOB_WAITING, 7);
    check_walk(c, q, LN_JOB_PRIORITIZED, 3);
    check_walk(c, q, LN_JOB_DELAYED, 7);

    /* Finished jobs, many in the same millisecond. */
    const char *f = conf_queue(c, "fin");
    for (int i = 0; i < 8; i++) {
        char id[32];
        ln_job_opts o;
        ln_job_opts_init(&o);
        o.job_id = id;
        snprintf(id, sizeof id, "f%d", i);
        conf_add(c, f, i % 2 ? "bad" : "plain", "{}", &o, NULL);
    }
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    conf_run(c, f, conf_handler_by_name, NULL, &wo);
    check_walk(c, f, LN_JOB_COMPLETED, 4);
    check_walk(c, f, LN_JOB_FAILED, 4);

    const char *p = conf_queue(c, "paused");
    add_ready(c, p, 6, "p");
    CHECK_EQ(ln_jobs_pause(c->jobs, p), 0);
    check_walk(c, p, LN_JOB_PAUSED, 6);
}

/* The first page's ids (limit 3) of state, and its last row's cursor. */
static void first_page(conf_ctx *c, int state, char *ids, size_t size, char *cursor) {
    ln_job_info *infos = NULL;
    size_t n = 0;
    CHECK_EQ(ln_jobs_list_after(c->jobs, c->queue, state, NULL, 3, &infos, &n), 0);
    CHECK_EQ(n, 3);
    ids[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(ids);
        snprintf(ids + len, size - len, "%s ", infos[i].id);
    }
    snprintf(cursor, 512, "%s", infos[2].cursor);
    ln_job_info_free_array(infos, n);
}

static void next_page(conf_ctx *c, int state, const char *cursor, char *ids, size_t size) {
    ln_job_info *infos = NULL;
    size_t n = 0;
    CHECK_EQ(ln_jobs_list_after(c->jobs, c->queue, state, cursor, 3, &infos, &n), 0);
    ids[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(ids);
        snprintf(ids + len, size - len, "%s ", infos[i].id);
    }
    ln_job_info_free_array(infos, n);
}

/* The page after a row is the rows after it, though rows before it left
 * (an offset would skip one) and rows were added; when the row itself
 * left, the rows after its key. */
void case_paging_cursor_keeps_its_place(conf_ctx *c) {
    char ids[256], cursor[512];
    for (int i = 0; i < 10; i++) {
        char id[32];
        snprintf(id, sizeof id, "w%d", i);
        conf_add_id(c, c->queue, id, 0, 0, 0);
        snprintf(id, sizeof id, "d%d", i);
        conf_add_id(c, c->queue, id, 0, 0, 600000 + i * 1000);
    }
    first_page(c, LN_JOB_WAITING, ids, sizeof ids, cursor);
    CONF_CHECK_STR(ids, "w0 w1 w2 ");
    CHECK_EQ(ln_jobs_remove(c->jobs, c->queue, "w0"), 0);
    CHECK_EQ(ln_jobs_remove(c->jobs, c->queue, "w1"), 0);
    conf_add_id(c, c->queue, "w10", 0, 0, 0);
    next_page(c, LN_JOB_WAITING, cursor, ids, sizeof ids);
    CONF_CHECK_STR(ids, "w3 w4 w5 ");

    first_page(c, LN_JOB_DELAYED, ids, sizeof ids, cursor);
    CONF_CHECK_STR(ids, "d0 d1 d2 ");
    CHECK_EQ(ln_jobs_remove(c->jobs, c->queue, "d0"), 0);
    CHECK_EQ(ln_jobs_remove(c->jobs, c->queue, "d2"), 0); /* the cursor's own row */
    next_page(c, LN_JOB_DELAYED, cursor, ids, sizeof ids);
    CONF_CHECK_STR(ids, "d3 d4 d5 ");
}

/* A cursor this store did not make for the state is LN_EINVAL; NULL or
 * "" is the first page; a job read alone has no cursor. */
void case_paging_bad_cursor(conf_ctx *c) {
    char ids[256], cursor[512];
    for (int i = 0; i < 4; i++) {
        char id[32];
        snprintf(id, sizeof id, "b%d", i);
        conf_add_id(c, c->queue, id, 0, 0, 0);
    }
    first_page(c, LN_JOB_WAITING, ids, sizeof ids, cursor);
    ln_job_info *infos = NULL;
    size_t n = 0;
    const char *bad[] = {"x",      "s0",   "r0",        "s0.1.2",    "s0.a.b.c",
                         "r0.:b1", "r0.1", "s0.1.2.3x", "r0.1.5:b1", "r0.-1:b1"};
    for (size_t i = 0; i < CONF_NELEM(bad); i++)
        SAYS(c->jobs, LN_EINVAL,
             ln_jobs_list_after(c->jobs, c->queue, LN_JOB_WAITING, bad[i], 3, &infos, &n));
    /* Crafted positions: not finite, or a place past what a number holds. */
    const char *crafted[] = {"-nan", "nan", "1e400", "-1e400", "inf"};
    for (size_t i = 0; i < CONF_NELEM(crafted); i++) {
        char cur[64];
        snprintf(cur, sizeof cur, "r%d.%s:b1", LN_JOB_DELAYED, crafted[i]);
        SAYS(c->jobs, LN_EINVAL,
             ln_jobs_list_after(c->jobs, c->queue, LN_JOB_DELAYED, cur, 3, &infos, &n));
    }
    SAYS(c->jobs, LN_EINVAL,
         ln_jobs_list_after(c->jobs, c->queue, LN_JOB_WAITING, "r0.99999999999999999999:b1", 3,
                            &infos, &n));
    SAYS(c->jobs, LN_EINVAL,
         ln_jobs_list_after(c->jobs, c->queue, LN_JOB_DELAYED, cursor, 3, &infos, &n));
    SAYS(c->jobs, LN_EINVAL,
         ln_jobs_list_after(c->jobs, c->queue, LN_JOB_WAITING, cursor, 0, &infos, &n));
    CHECK_EQ(ln_jobs_list_after(c->jobs, c->queue, LN_JOB_WAITING, "", 10, &infos, &n), 0);
    CHECK_EQ(n, 4);
    ln_job_info_free_array(infos, n);
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, "b0", &info), 0);
    CHECK(info.cursor == NULL);
    ln_job_info_clear(&info);
}
