/* outbox.c - job ids, data and options of outbox rows, and the relay that
 * adds their jobs (see outbox.h).
 *
 * DESIGN: the relay owns one database connection and scratch space for one
 * batch (WP_RELAY_BATCH rows). A batch reads the oldest outbox rows (and
 * resets the statement: no snapshot is kept between batches), adds their
 * jobs with one ln_jobs_add_bulk, and then deletes exactly the rows it
 * read, by id, in one transaction. A row is deleted only after its job was
 * stored; a failure anywhere leaves the rows for the next batch.
 *
 * Wake-up: a request sets 'pending' after its commit and signals cv only
 * if 'pending' was clear. The thread clears 'pending' before it drains, so
 * a row committed during a drain sets it again and gets another pass; the
 * thread sleeps only after seeing 'pending' clear under mu, and a
 * notifier signals under mu, so no wake-up is lost. It also wakes once a
 * second (rows from another process, a queue that was down).
 *
 * Invariants: the connection and scratch are touched by one thread at a
 * time -- the caller of wp_relay_drain before wp_relay_start and after the
 * thread stopped, the relay's thread between. 'stop' is read and written
 * under mu. Memory order: 'pending' only says "look again"; the rows
 * themselves are ordered by SQLite's locks, so acq_rel suffices.
 */
#include "outbox.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WP_RELAY_BATCH 256
#define WP_RELAY_IDLE_MS 1000 /* longest sleep without a wake-up */
#define WP_RELAY_RETRY_MS 100 /* pause after a failed batch */

void wp_outbox_job_id(const char *tag, int64_t n, char *buf, size_t size) {
    snprintf(buf, size, "wp-%s-%lld", tag, (long long)n);
}

void wp_outbox_job_data(const wp_write *w, char *buf, size_t size) {
    snprintf(buf, size,
             "{\"kind\":\"%s\",\"id\":%lld,\"post_id\":%lld,\"user_id\":%lld,\"outbox\":%lld}",
             wp_kind_name(w->kind), (long long)w->id, (long long)w->post_id, (long long)w->user_id,
             (long long)w->outbox);
}

void wp_outbox_job_opts(ln_job_opts *o, const char *job_id, const char *traceparent) {
    ln_job_opts_init(o);
    o->job_id = job_id;
    o->traceparent = traceparent;
    o->attempts = 5; /* a follow-up that met a busy database runs again */
    o->backoff = LN_BACKOFF_EXPONENTIAL;
    o->backoff_ms = 100;
    o->remove_on_complete.mode = LN_KEEP_NONE;
}

int wp_outbox_tag(wp_conn *c, char *tag) {
    sqlite3_stmt *st = wp_stmt(c, WP_SQL_INSTANCE);
    int rc = -1;
    if (sqlite3_step(st) == SQLITE_ROW) {
        const unsigned char *v = sqlite3_column_text(st, 0);
        if (v && strlen((const char *)v) == WP_TAG_LEN) {
            memcpy(tag, v, WP_TAG_LEN + 1);
            rc = 0;
        }
    }
    if (rc)
        fprintf(stderr, "writepath: no instance tag in the database: %s\n", sqlite3_errmsg(c->db));
    sqlite3_reset(st);
    return rc;
}

struct wp_relay {
    wp_conn *c;
    ln_jobs *jobs;
    char *queue;
    char tag[WP_TAG_LEN + 1];
    atomic_int pending;
    int started, stop, failing;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    /* one batch */
    int64_t rows[WP_RELAY_BATCH];
    ln_job_spec specs[WP_RELAY_BATCH];
    ln_job_opts opts[WP_RELAY_BATCH];
    char ids[WP_RELAY_BATCH][WP_JOB_ID_LEN];
    char data[WP_RELAY_BATCH][WP_JOB_DATA_LEN];
    char tps[WP_RELAY_BATCH][64];
};

int wp_relay_open(wp_relay **out, const char *db_path, ln_jobs *jobs, const char *queue) {
    wp_relay *r = calloc(1, sizeof *r);
    if (!r) return -1;
    r->c = wp_conn_open(db_path);
    r->queue = strdup(queue);
    r->jobs = jobs;
    atomic_init(&r->pending, 0);
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->cv, NULL);
    if (!r->c || !r->queue || wp_outbox_tag(r->c, r->tag)) {
        wp_relay_close(r);
        return -1;
    }
    *out = r;
    return 0;
}

/* Read one outbox row of the scan into batch slot i. */
static void take_row(wp_relay *r, sqlite3_stmt *st, int i) {
    const char *kind = (const char *)sqlite3_column_text(st, 1);
    const char *tp = (const char *)sqlite3_column_text(st, 5);
    wp_write w = {.kind = kind && !strcmp(kind, "like") ? WP_LIKE : WP_COMMENT,
                  .id = sqlite3_column_int64(st, 2),
                  .post_id = sqlite3_column_int64(st, 3),
                  .user_id = sqlite3_column_int64(st, 4),
                  .outbox = sqlite3_column_int64(st, 0)};
    r->rows[i] = w.outbox;
    wp_outbox_job_id(r->tag, w.outbox, r->ids[i], sizeof r->ids[i]);
    wp_outbox_job_data(&w, r->data[i], sizeof r->data[i]);
    int has_tp = tp && strlen(tp) < sizeof r->tps[i];
    if (has_tp) memcpy(r->tps[i], tp, strlen(tp) + 1);
    wp_outbox_job_opts(&r->opts[i], r->ids[i], has_tp ? r->tps[i] : NULL);
    r->specs[i] =
        (ln_job_spec){.name = wp_kind_name(w.kind), .data_json = r->data[i], .opts = &r->opts[i]};
}

static int step_done(wp_conn *c, wp_stmt_id id) {
    sqlite3_stmt *st = wp_stmt(c, id);
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

/* Delete the n rows of the batch (their jobs are stored). 0 or -1. */
static int delete_rows(wp_relay *r, int n) {
    if (step_done(r->c, WP_SQL_BEGIN)) return -1;
    for (int i = 0; i < n; i++) {
        sqlite3_stmt *st = wp_stmt(r->c, WP_SQL_DELETE_OUTBOX);
        sqlite3_bind_int64(st, 1, r->rows[i]);
        int rc = sqlite3_step(st);
        sqlite3_reset(st);
        if (rc != SQLITE_DONE) {
            step_done(r->c, WP_SQL_ROLLBACK);
            return -1;
        }
    }
    if (step_done(r->c, WP_SQL_COMMIT) == 0) return 0;
    step_done(r->c, WP_SQL_ROLLBACK);
    return -1;
}

/* One batch: the rows relayed (< WP_RELAY_BATCH: the outbox is empty now),
 * or -1 (printed once per run of failures). */
static int relay_batch(wp_relay *r) {
    sqlite3_stmt *st = wp_stmt(r->c, WP_SQL_SCAN_OUTBOX);
    sqlite3_bind_int(st, 1, WP_RELAY_BATCH);
    int n = 0, rc = SQLITE_DONE;
    while (n < WP_RELAY_BATCH && (rc = sqlite3_step(st)) == SQLITE_ROW) take_row(r, st, n++);
    sqlite3_reset(st);
    const char *what = NULL, *why = NULL;
    if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
        what = "scan", why = sqlite3_errmsg(r->c->db);
    } else if (n > 0) {
        int e = ln_jobs_add_bulk(r->jobs, r->queue, r->specs, (size_t)n, NULL, 0);
        if (e)
            what = ln_strerror(e), why = ln_jobs_errmsg(r->jobs);
        else if (delete_rows(r, n))
            what = "delete", why = sqlite3_errmsg(r->c->db);
    }
    if (what) {
        if (!r->failing) fprintf(stderr, "writepath: outbox relay: %s: %s\n", what, why);
        r->failing = 1;
        return -1;
    }
    if (r->failing) fprintf(stderr, "writepath: outbox relay: working again\n");
    r->failing = 0;
    return n;
}

long wp_relay_drain(wp_relay *r) {
    long total = 0;
    int n;
    do {
        n = relay_batch(r);
        if (n > 0) total += n;
    } while (n == WP_RELAY_BATCH);
    return n < 0 ? -1 : total;
}

/* Wait on cv until 'until' ms from now, a stop, or (unless after_failure)
 * a pending row. Called and returns with mu held. */
static void relay_wait(wp_relay *r, unsigned ms, int after_failure) {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    uint64_t ns = (uint64_t)until.tv_nsec + (uint64_t)ms * 1000000u;
    until.tv_sec += (time_t)(ns / 1000000000u);
    until.tv_nsec = (long)(ns % 1000000000u);
    while (!r->stop && (after_failure || !atomic_load_explicit(&r->pending, memory_order_acquire)))
        if (pthread_cond_timedwait(&r->cv, &r->mu, &until) != 0) break;
}

static void *relay_main(void *arg) {
    wp_relay *r = arg;
    int failed = 0;
    pthread_mutex_lock(&r->mu);
    for (;;) {
        relay_wait(r, failed ? WP_RELAY_RETRY_MS : WP_RELAY_IDLE_MS, failed);
        if (r->stop) break;
        pthread_mutex_unlock(&r->mu);
        atomic_store_explicit(&r->pending, 0, memory_order_release);
        failed = wp_relay_drain(r) < 0;
        pthread_mutex_lock(&r->mu);
    }
    pthread_mutex_unlock(&r->mu);
    return NULL;
}

int wp_relay_start(wp_relay *r) {
    if (pthread_create(&r->thread, NULL, relay_main, r)) return -1;
    r->started = 1;
    return 0;
}

void wp_relay_notify(wp_relay *r) {
    if (atomic_exchange_explicit(&r->pending, 1, memory_order_acq_rel)) return; /* awake */
    pthread_mutex_lock(&r->mu);
    pthread_cond_signal(&r->cv);
    pthread_mutex_unlock(&r->mu);
}

void wp_relay_close(wp_relay *r) {
    if (!r) return;
    if (r->started) {
        pthread_mutex_lock(&r->mu);
        r->stop = 1;
        pthread_cond_signal(&r->cv);
        pthread_mutex_unlock(&r->mu);
        pthread_join(r->thread, NULL);
        wp_relay_drain(r); /* what the last requests committed */
    }
    pthread_cond_destroy(&r->cv);
    pthread_mutex_destroy(&r->mu);
    wp_conn_close(r->c);
    free(r->queue);
    free(r);
}
