/* outbox.c - job ids, data and options of outbox rows, and the relay that
 * adds their jobs (see outbox.h).
 *
 * DESIGN: the relay owns one database connection and scratch space for one
 * batch (WP_RELAY_BATCH rows). A batch reads up to that many outbox rows
 * after 'cursor' in id order, resets the statement (no snapshot is kept
 * between batches), and adds their jobs with one ln_jobs_add_bulk; the
 * cursor then moves past the batch, and wraps to 0 after a short batch, so
 * the periodic sweep walks the whole outbox a few batches per period.
 *
 * Invariants: the connection, cursor and scratch are touched by one thread
 * at a time -- the caller of wp_relay_sweep before wp_relay_start, the
 * relay's thread after it. 'stop' is read and written under mu.
 */
#include "outbox.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WP_RELAY_BATCH 256
#define WP_RELAY_BATCHES_PER_PERIOD 4

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
    int64_t cursor;
    unsigned period_ms, min_age_ms;
    int started, stop, failing;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    /* one batch */
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
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->cv, NULL);
    if (!r->c || !r->queue || wp_outbox_tag(r->c, r->tag)) {
        wp_relay_close(r);
        return -1;
    }
    *out = r;
    return 0;
}

static int64_t now_ms(void) {
    return (int64_t)(wp_now_ns() / 1000000u);
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
    wp_outbox_job_id(r->tag, w.outbox, r->ids[i], sizeof r->ids[i]);
    wp_outbox_job_data(&w, r->data[i], sizeof r->data[i]);
    int has_tp = tp && strlen(tp) < sizeof r->tps[i];
    if (has_tp) memcpy(r->tps[i], tp, strlen(tp) + 1);
    wp_outbox_job_opts(&r->opts[i], r->ids[i], has_tp ? r->tps[i] : NULL);
    r->specs[i] =
        (ln_job_spec){.name = wp_kind_name(w.kind), .data_json = r->data[i], .opts = &r->opts[i]};
    r->cursor = w.outbox;
}

/* One batch after the cursor, rows created at or before max_created: the
 * rows relayed (< WP_RELAY_BATCH: the scan reached the end), or -1. On
 * failure the cursor stays, so the rows are tried again. */
static int relay_batch(wp_relay *r, int64_t max_created) {
    int64_t from = r->cursor;
    sqlite3_stmt *st = wp_stmt(r->c, WP_SQL_SCAN_OUTBOX);
    sqlite3_bind_int64(st, 1, from);
    sqlite3_bind_int64(st, 2, max_created);
    sqlite3_bind_int(st, 3, WP_RELAY_BATCH);
    int n = 0, rc = SQLITE_DONE;
    while (n < WP_RELAY_BATCH && (rc = sqlite3_step(st)) == SQLITE_ROW) take_row(r, st, n++);
    int failed = n < WP_RELAY_BATCH && rc != SQLITE_DONE;
    if (failed) fprintf(stderr, "writepath: outbox scan: %s\n", sqlite3_errmsg(r->c->db));
    sqlite3_reset(st);
    if (!failed && n > 0) {
        int e = ln_jobs_add_bulk(r->jobs, r->queue, r->specs, (size_t)n, NULL, 0);
        if (e) {
            if (!r->failing)
                fprintf(stderr, "writepath: outbox relay: add: %s: %s\n", ln_strerror(e),
                        ln_jobs_errmsg(r->jobs));
            failed = 1;
        }
    }
    if (failed) {
        r->cursor = from;
        r->failing = 1;
        return -1;
    }
    if (r->failing) fprintf(stderr, "writepath: outbox relay: adding again\n");
    r->failing = 0;
    return n;
}

long wp_relay_sweep(wp_relay *r, unsigned min_age_ms) {
    int64_t max_created = min_age_ms ? now_ms() - (int64_t)min_age_ms : INT64_MAX;
    long total = 0;
    int n;
    r->cursor = 0;
    do {
        n = relay_batch(r, max_created);
        if (n > 0) total += n;
    } while (n == WP_RELAY_BATCH);
    r->cursor = 0;
    return n < 0 ? -1 : total;
}

static void *relay_main(void *arg) {
    wp_relay *r = arg;
    pthread_mutex_lock(&r->mu);
    while (!r->stop) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        uint64_t ns = (uint64_t)until.tv_nsec + (uint64_t)r->period_ms * 1000000u;
        until.tv_sec += (time_t)(ns / 1000000000u);
        until.tv_nsec = (long)(ns % 1000000000u);
        while (!r->stop && pthread_cond_timedwait(&r->cv, &r->mu, &until) == 0) {
        }
        if (r->stop) break;
        pthread_mutex_unlock(&r->mu);
        int64_t max_created = now_ms() - (int64_t)r->min_age_ms;
        for (int i = 0; i < WP_RELAY_BATCHES_PER_PERIOD; i++) {
            int n = relay_batch(r, max_created);
            if (n < 0) break;
            if (n < WP_RELAY_BATCH) {
                r->cursor = 0; /* the end: the next period starts over */
                break;
            }
        }
        pthread_mutex_lock(&r->mu);
    }
    pthread_mutex_unlock(&r->mu);
    return NULL;
}

int wp_relay_start(wp_relay *r, unsigned period_ms, unsigned min_age_ms) {
    r->period_ms = period_ms ? period_ms : 1;
    r->min_age_ms = min_age_ms;
    if (pthread_create(&r->thread, NULL, relay_main, r)) return -1;
    r->started = 1;
    return 0;
}

void wp_relay_close(wp_relay *r) {
    if (!r) return;
    if (r->started) {
        pthread_mutex_lock(&r->mu);
        r->stop = 1;
        pthread_cond_signal(&r->cv);
        pthread_mutex_unlock(&r->mu);
        pthread_join(r->thread, NULL);
    }
    pthread_cond_destroy(&r->cv);
    pthread_mutex_destroy(&r->mu);
    wp_conn_close(r->c);
    free(r->queue);
    free(r);
}
