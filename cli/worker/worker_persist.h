/* worker_persist.h - `lanes worker --exec-persistent CMD [ARG...]`: keep
 * one long-lived CMD per place of concurrency and hand it jobs over a
 * JSON-lines protocol on its stdin and stdout (docs/persistent.md). */
#ifndef CLI_WORKER_PERSIST_H
#define CLI_WORKER_PERSIST_H

#include "worker.h"

/* A job that was running when its handler died (or wrote a malformed
 * line) this many times on one worker fails instead of going back. */
#define CLI_PERSIST_KILLS_MAX 3
/* Backoff before restarting a handler that died: doubling, bounded. */
#define CLI_PERSIST_BACKOFF_MIN_MS 100
#define CLI_PERSIST_BACKOFF_MAX_MS 5000

typedef struct cli_persist cli_persist;

/* n handler places for CMD argv (not started until a job comes). url is
 * handed to CMD as LANES_STORE_URL (may be NULL); max_data bounds a
 * result; kill_after_ms is the wait from SIGTERM to SIGKILL; hist (may be
 * NULL) gets the run times. 0, or -1 when out of memory. */
int cli_persist_create(cli_persist **out, char **argv, const char *url, unsigned n, size_t max_data,
                       unsigned kill_after_ms, cli_whist *hist);
/* Stop the handlers (stdin closed, then SIGTERM, then SIGKILL) and free.
 * After the worker's last handler returned. NULL is a no-op. */
void cli_persist_destroy(cli_persist *p);
/* The ln_job_handler of --exec-persistent (arg: a cli_persist). */
int cli_persist_run(ln_job *job, void *arg);

#endif
