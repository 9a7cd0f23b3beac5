/* outbox.h - the async mode's transactional outbox: the follow-up work of
 * a comment or like cannot be lost between the data database and the job
 * queue (two stores, no transaction spans both).
 *
 *   request   BEGIN; INSERT the comment or like; INSERT its outbox row;
 *             COMMIT (writes.h, wp_write_insert_outbox). Then it adds the
 *             job itself -- job id "wp-TAG-N" for outbox row N, TAG the
 *             database's instance tag -- and answers. A failed add undoes
 *             both rows in one transaction and answers 503.
 *   worker    its follow-up transaction deletes the outbox row first and
 *             does the work only if the row was there (writes.h).
 *   relay     adds a job for outbox rows (wp_relay_sweep): every row once
 *             at start, before the service listens, then periodically the
 *             rows older than a grace period. The job id comes from the
 *             row, and adding an id that exists changes nothing, so a row
 *             whose job is waiting or running costs one no-op add.
 *
 * So an outbox row exists from the commit of its write until the commit of
 * its follow-ups, and while it exists some job for it is stored or the next
 * sweep stores one: a process killed between the data commit and the job
 * add loses nothing. A job may run twice (a sweep racing a finishing job);
 * the follow-ups are idempotent.
 *
 * Thread rules: wp_outbox_job_* are pure. A relay's sweeps run on its own
 * thread (after wp_relay_start) or on the caller's (wp_relay_sweep before
 * the start); its ln_jobs handle is shared (ln_jobs allows that).
 */
#ifndef WP_OUTBOX_H
#define WP_OUTBOX_H

#include "writes.h"

#include <lanes/jobs.h>

#include <stddef.h>
#include <stdint.h>

#define WP_TAG_LEN 16    /* hex digits of a database's instance tag */
#define WP_JOB_ID_LEN 48 /* enough for "wp-" TAG "-" and a 64-bit id */
#define WP_JOB_DATA_LEN 192

/* The job id of outbox row n: "wp-TAG-n". */
void wp_outbox_job_id(const char *tag, int64_t n, char *buf, size_t size);
/* The job's data: {"kind","id","post_id","user_id","outbox"}. */
void wp_outbox_job_data(const wp_write *w, char *buf, size_t size);
/* The job's options: that id, the traceparent (may be NULL), 5 attempts
 * with exponential backoff from 100 ms, removed once completed. */
void wp_outbox_job_opts(ln_job_opts *o, const char *job_id, const char *traceparent);

/* This database's instance tag (WP_TAG_LEN hex digits + NUL) into tag.
 * 0, or -1 (printed). */
int wp_outbox_tag(wp_conn *c, char *tag);

typedef struct wp_relay wp_relay;

/* A relay of the outbox of db_path into queue on jobs (jobs must outlive
 * it). 0, or -1 (printed). */
int wp_relay_open(wp_relay **out, const char *db_path, ln_jobs *jobs, const char *queue);
/* Add a job for every outbox row created at least min_age_ms ago (0 = every
 * row), in batches. Returns the rows relayed, or -1 (printed). Only while
 * the relay's thread is not running. */
long wp_relay_sweep(wp_relay *r, unsigned min_age_ms);
/* Sweep rows older than min_age_ms every period_ms on a thread of its own,
 * at most a few batches a period. 0, or -1. */
int wp_relay_start(wp_relay *r, unsigned period_ms, unsigned min_age_ms);
/* Stop the thread (if started) and close. NULL is a no-op. */
void wp_relay_close(wp_relay *r);

#endif
