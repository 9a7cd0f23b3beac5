/* test_writepath_unit.c - pieces of examples/writepath: traceparent
 * parsing and formatting, spans written as OTLP/JSON lines read back with
 * their parent links, the request span and the trace id filter; and the
 * write statements on pooled connections (a refused write must leave its
 * connection without an open read snapshot). The HTTP behaviour is tested
 * end to end by test_writepath.sh. */
#include "testutil.h"

#include "db.h"
#include "spans.h"
#include "trace.h"
#include "writes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TEST(traceparent_round_trip) {
    const char *tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    wp_span_ctx c;
    char out[WP_TRACEPARENT_LEN + 1];
    CHECK_EQ(wp_traceparent_parse(tp, &c), 0);
    CHECK_EQ(c.flags, 1);
    CHECK_EQ(c.trace_id[0], 0x4b);
    CHECK_EQ(c.span_id[7], 0xb7);
    wp_traceparent_format(&c, out);
    CHECK(strcmp(out, tp) == 0);
}

TEST(traceparent_rejects_invalid) {
    static const char *bad[] = {
        "",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",      /* short */
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x", /* v00 + tail */
        "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",   /* upper case */
        "00-00000000000000000000000000000000-00f067aa0ba902b7-01",   /* zero trace */
        "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",   /* zero span */
        "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",   /* version ff */
        "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",   /* separator */
        "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",   /* not hex */
    };
    wp_span_ctx c;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK_EQ(wp_traceparent_parse(bad[i], &c), -1);
    CHECK_EQ(wp_traceparent_parse(NULL, &c), -1);
    /* A later version with more fields is read by its first 55 characters. */
    CHECK_EQ(
        wp_traceparent_parse("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra", &c),
        0);
}

TEST(new_traces_get_fresh_ids) {
    wp_trace a, b;
    wp_trace_begin(&a, NULL, NULL, 1);
    wp_trace_begin(&b, NULL, NULL, 1);
    wp_span *x = wp_span_start(&a, NULL, NULL, "x", WP_KIND_SERVER);
    wp_span *y = wp_span_start(&b, NULL, NULL, "y", WP_KIND_SERVER);
    CHECK(memcmp(x->ctx.trace_id, y->ctx.trace_id, 16) != 0);
    CHECK_EQ(a.recording, 0); /* no tracer: ids only */
    CHECK_EQ(x->ctx.flags, 0);
    wp_span *child = wp_span_start(&a, x, NULL, "c", WP_KIND_CLIENT);
    CHECK(memcmp(child->ctx.trace_id, x->ctx.trace_id, 16) == 0);
    CHECK(memcmp(child->parent_id, x->ctx.span_id, 8) == 0);
    CHECK(memcmp(child->ctx.span_id, x->ctx.span_id, 8) != 0);
}

/* A request in one "process" and its job in another, both appending to one
 * file, read back as one trace with the right parents. */
TEST(spans_round_trip_across_two_writers) {
    char path[] = "/tmp/writepath-unit-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);
    wp_tracer *app = NULL, *worker = NULL;
    CHECK_EQ(wp_tracer_open(&app, path, "writepath-app"), 0);
    CHECK_EQ(wp_tracer_open(&worker, path, "writepath-worker"), 0);

    wp_span_ctx incoming;
    CHECK_EQ(
        wp_traceparent_parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", &incoming),
        0);
    wp_trace req;
    wp_trace_begin(&req, app, &incoming, 1);
    CHECK_EQ(req.recording, 1);
    wp_span *root = wp_span_start(&req, NULL, &incoming, "POST /comment", WP_KIND_SERVER);
    wp_span *enq = wp_span_start(&req, root, NULL, "queue.add", WP_KIND_PRODUCER);
    wp_span_str(enq, "messaging.system", "lanes \"quoted\"");
    wp_span_end(enq);
    char tp[WP_TRACEPARENT_LEN + 1];
    wp_traceparent_format(&enq->ctx, tp);
    wp_span_end(root);
    CHECK_EQ(wp_trace_flush(&req, app), 0);

    wp_span_ctx carried;
    CHECK_EQ(wp_traceparent_parse(tp, &carried), 0);
    wp_trace job;
    wp_trace_begin(&job, worker, &carried, 1);
    wp_span *wj = wp_span_start(&job, NULL, &carried, "worker comment", WP_KIND_CONSUMER);
    wp_span *push = wp_span_start(&job, wj, NULL, "push.send", WP_KIND_CLIENT);
    wp_span_int(push, "push.recipients", 1);
    wp_span_end(push);
    wp_span_end(wj);
    CHECK_EQ(wp_trace_flush(&job, worker), 0);

    /* An unrelated, unsampled trace writes nothing. */
    wp_trace other;
    wp_span_ctx unsampled = incoming;
    unsampled.flags = 0;
    wp_trace_begin(&other, app, &unsampled, 1);
    wp_span_end(wp_span_start(&other, NULL, &unsampled, "POST /like", WP_KIND_SERVER));
    CHECK_EQ(wp_trace_flush(&other, app), 0);
    wp_tracer_close(app);
    wp_tracer_close(worker);

    wp_rspan *spans = NULL;
    size_t n = 0;
    CHECK_EQ(wp_spans_load(path, "4bf92f3577b34da6a3ce929d0e0e4736", &spans, &n), 0);
    CHECK_EQ(n, 4);
    const wp_rspan *r = wp_spans_root(spans, n);
    CHECK(r != NULL);
    CHECK(strcmp(r->name, "POST /comment") == 0);
    CHECK(strcmp(r->parent_id, "00f067aa0ba902b7") == 0);
    CHECK(strcmp(r->service, "writepath-app") == 0);
    const wp_rspan *w = NULL, *q = NULL;
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(spans[i].name, "worker comment")) w = &spans[i];
        if (!strcmp(spans[i].name, "queue.add")) q = &spans[i];
        if (i) CHECK(spans[i - 1].start_ns <= spans[i].start_ns);
    }
    CHECK(w && q);
    CHECK(strcmp(w->parent_id, q->span_id) == 0);
    CHECK(strcmp(w->service, "writepath-worker") == 0);
    CHECK_EQ(w->kind, WP_KIND_CONSUMER);
    CHECK(w->end_ns >= w->start_ns);
    wp_spans_free(spans, n);

    CHECK_EQ(wp_spans_load(path, "00000000000000000000000000000001", &spans, &n), 0);
    CHECK_EQ(n, 0);
    wp_spans_free(spans, n);
    unlink(path);
}

TEST(sampling_one_in_n) {
    char path[] = "/tmp/writepath-unit-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);
    wp_tracer *t = NULL;
    CHECK_EQ(wp_tracer_open(&t, path, "s"), 0);
    int recorded = 0;
    for (int i = 0; i < 4000; i++) {
        wp_trace tr;
        wp_trace_begin(&tr, t, NULL, 10);
        recorded += tr.recording;
    }
    /* about 400; a generous band, the sampler is random */
    CHECK(recorded > 200 && recorded < 600);
    wp_tracer_close(t);
    unlink(path);
}

/* A fresh data database in a temporary directory; path gets its name. */
static void fresh_db(char *dir, size_t dsize, char *path, size_t psize) {
    snprintf(dir, dsize, "/tmp/writepath-unit-XXXXXX");
    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, psize, "%s/data.db", dir);
    CHECK_EQ(wp_db_init(path), 0);
}

static void remove_dir(const char *dir) {
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK_EQ(system(cmd), 0);
}

/* A request for an unknown user or post runs the diagnosis SELECTs on its
 * pooled connection. If one of them is left stepped to a row, the
 * connection keeps its read snapshot: once another connection (the worker)
 * has written, the next write on it fails with SQLITE_BUSY_SNAPSHOT
 * (a 503 in the service). Every refused write must leave the connection as
 * it found it. */
TEST(refused_write_leaves_no_snapshot) {
    char dir[64], path[96];
    fresh_db(dir, sizeof dir, path, sizeof path);
    wp_conn *req = wp_conn_open(path), *other = wp_conn_open(path);
    CHECK(req && other);
    wp_trace tr;
    wp_trace_begin(&tr, NULL, NULL, 1);
    wp_span *root = wp_span_start(&tr, NULL, NULL, "t", WP_KIND_SERVER);
    const wp_write bad[] = {
        {.kind = WP_COMMENT, .post_id = 1, .user_id = 100000, .body = "x"},
        {.kind = WP_COMMENT, .post_id = 100000, .user_id = 5, .body = "x"},
        {.kind = WP_LIKE, .post_id = 1, .user_id = 100000},
        {.kind = WP_LIKE, .post_id = 3, .user_id = 7}, /* liked twice below */
    };
    const int expect[] = {WP_ENOUSER, WP_ENOPOST, WP_ENOUSER, WP_ALREADY};
    wp_write first = bad[3];
    CHECK_EQ(wp_write_insert(req, &tr, root, &first), WP_OK);
    for (int i = 0; i < 4; i++) {
        wp_write w = bad[i];
        CHECK_EQ(wp_write_insert(req, &tr, root, &w), expect[i]);
        CHECK_EQ(sqlite3_get_autocommit(req->db), 1);
        for (sqlite3_stmt *st = sqlite3_next_stmt(req->db, NULL); st;
             st = sqlite3_next_stmt(req->db, st))
            CHECK_EQ(sqlite3_stmt_busy(st), 0);
        /* Another connection writes (the worker counting a row)... */
        wp_write o = {.kind = WP_COMMENT, .post_id = 2, .user_id = 9, .body = "other"};
        CHECK_EQ(wp_write_insert(other, &tr, root, &o), WP_OK);
        int targets = 0;
        CHECK_EQ(wp_write_followups(other, &tr, root, &o, &targets), WP_OK);
        /* ...and the next valid write on the same connection succeeds. */
        wp_write ok = {.kind = WP_COMMENT, .post_id = 1, .user_id = 5, .body = "hi"};
        CHECK_EQ(wp_write_insert(req, &tr, root, &ok), WP_OK);
        CHECK_EQ(wp_write_followups(req, &tr, root, &ok, &targets), WP_OK);
    }
    wp_conn_close(req);
    wp_conn_close(other);
    remove_dir(dir);
}

int main(int argc, char **argv) {
    return ln_test_run(argc, argv,
                       (ln_test_case[]){TESTCASE(traceparent_round_trip),
                                        TESTCASE(traceparent_rejects_invalid),
                                        TESTCASE(new_traces_get_fresh_ids),
                                        TESTCASE(spans_round_trip_across_two_writers),
                                        TESTCASE(sampling_one_in_n),
                                        TESTCASE(refused_write_leaves_no_snapshot),
                                        {0}});
}
