/* outbox.h - the async mode's transactional outbox: the follow-up work of
 * a comment or like cannot be lost between the data database and the job
 * queue (two stores, no transaction spans both).
 *
 *   request   BEGIN; INSERT the comment or like; INSERT its outbox row;
 *             COMMIT (writes.h, wp_write_insert_outbox); wake the relay;
 *             answer. The request never touches the queue.
 *   relay     one thread of the service: reads the oldest outbox rows,
 *             adds their jobs in one ln_jobs_add_bulk -- job id "wp-TAG-N"
 *             for outbox row N, TAG the database's random instance tag (a
 *             queue may outlive its database) -- and only then deletes
 *             those rows, in one transaction. It runs when woken, at least
 *             once a second, at start (rows a killed process left), and a
 *             last time at stop.
 *   worker    runs the follow-ups; they are idempotent (writes.h).
 *
 * So an outbox row exists from the commit of its write until its job is
 * stored: a process killed at any point loses nothing. Killed between the
 * add and the delete, the next relay adds the same ids again; adding an id
 * that exists changes nothing, and if that job already finished and was
 * removed, it runs once more and changes nothing.
 *
 * Thread rules: wp_outbox_job_* are pure. wp_relay_notify from any thread;
 * wp_relay_drain only while the relay's thread is not running; the rest
 * from one thread. The relay's ln_jobs handle may be shared (ln_jobs
 * allows that).
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
/* Relay every outbox row there is now, batch by batch. Returns the rows
 * relayed, or -1 (printed; the rows stay for the next try). */
long wp_relay_drain(wp_relay *r);
/* Run the relay on a thread of its own. 0, or -1. */
int wp_relay_start(wp_relay *r);
/* A row was committed: wake the relay's thread. Any thread; cheap when
 * the relay is awake already. */
void wp_relay_notify(wp_relay *r);
/* Stop the thread (if started), drain once more, close. NULL is a no-op. */
void wp_relay_close(wp_relay *r);

#endif
